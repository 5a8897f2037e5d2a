"""Scripting a Python function: its source, parsed and emitted, together with every Python
function it calls, as a module ``{key: Graph}`` whose first graph is the function's own.

Note [Specialised callees]
A called function is compiled for the argument types of its call: an unannotated parameter
takes the type of the argument (a Python int stays an int, so ``n * 2`` in the callee is Python
arithmetic, and an omitted ``bias=None`` is NoneType, so ``if bias is None`` is decided at
compile time); arrays and values of unknown type give Tensor, annotated parameters keep their
annotation. Each (function, parameter types) is compiled once per process and cached on the
function object; its key is the function's ``__qualname__`` (``f~2`` for a second live function
of the same name), followed by ``[int,Tensor]`` for a specialisation other than the declared one.

Note [Compiling without recursion]
Compiling a function needs its callees' result types, but compiling callees from inside the
emitter would recurse once per call depth. Instead, the emitter's call hook raises `_Suspend`
at the first callee that is not compiled yet; the caller is set aside on a work stack, the
callee compiled, and the caller emitted again from the start. A function is therefore emitted
at most once more per callee it waits for, and a chain of a thousand nested helpers needs no
Python recursion. A callee that is already on the stack is a recursive call, unrolled while
compiling or refused at the call: Note [Recursion while compiling] in `frontend.recursion`.

Note [Free variables]
A module global or a closure variable that holds an array, read by name in the function
compiled (``X`` in ``def loss(w): return np.mean((X @ w - y) ** 2)``), is not baked into the
graph: it becomes a hidden input, after the parameters, one per variable in the order the
function first reads them (`FreeVariable`). Each call reads the variables again, where they
live (the module's dict, the closure's cell), so rebinding ``X = new_data`` or writing into
``X`` between calls is seen by the next call, as by the plain function, and the signature key
covers their kinds, dtypes and shapes as it does the arguments'. A write into one inside the
function is a write into that array. Gradients are taken with respect to parameters only.
A function called from the compiled one, at any depth, reads them the same way: its graph
takes them as inputs after its parameters, and each caller passes its own hidden input for
the same variable (`FreeVariable.same_as`), so the function compiled has one hidden input per
variable read anywhere below it. Containers of arrays, attributes of ``self`` and values a
partial fixes are read so too: Note [Reading objects from outside] in `frontend.objects`.

Note [Values read once]
Everything else a function reads from its module or closure by name (a number, a function it
calls, a module) is read when it is compiled: numbers become constants, calls are compiled
and inlined. Each such read is recorded (`ReadOnce`, the caller's including its callees'),
and a call of the compiled function first checks that every variable still holds the very
object it held (an identity test per name, a few tens of nanoseconds): ``SCALE = 3.0`` or a
helper defined again between two calls makes the next call compile again
(`ScriptFunction.refresh` in `autodiff.script`, after `forget_stale`), rather than run
with the old value, as JAX's tracing would.
"""

from __future__ import annotations

import ast
import builtins
import functools
import inspect
import textwrap
import typing
import weakref
from collections import ChainMap
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import FunctionType, MethodType
from typing import Any

import numpy as np

from frontend import syntax
from frontend.emit import declared_type, emit_function
from frontend.errors import ScriptError
from frontend.lambdas import lambda_definition
from frontend.lists import builds_list
from frontend.objects import (
    NO_OWNER,
    KnownObject,
    fingerprint,
    fixed_slots,
    full_types,
    unwrap_callable,
)
from frontend.objects import (
    FreeVariable as FreeVariable,
)
from frontend.parse import parse_source
from frontend.recursion import (
    RECURSION_LIMIT,
    Known,
    depends_on_run_time,
    too_deep,
    unknown,
)
from frontend.trees import KnownString, Tree, map_leaves
from ir.collector import gc_paused
from ir.graph import Graph, Value
from ir.source import SourceRange
from ir.types import (
    ANY,
    GENERATOR,
    TENSOR,
    ListType,
    NamedType,
    OptionalType,
    TensorType,
    TupleType,
    Type,
)

Signature = tuple[Type, ...]


@dataclass(frozen=True, slots=True, eq=False)
class ReadOnce:
    """A global or closure variable read once, when compiling (a number, a function, a
    module), and what it held then (Note [Values read once])."""

    variable: FreeVariable
    value: object
    # For a container of arrays and numbers: its `fingerprint`, compared instead of identity
    # (Note [Reading objects from outside] in `frontend.objects`).
    shape: object = None

    @property
    def key(self) -> tuple[object, ...]:
        """The variable read: its name, where it lives, and the path from there."""
        return self.variable.key

    def changed(self) -> bool:
        """Whether the variable holds another object now (or is gone); for a container,
        whether its structure or numbers changed."""
        try:
            now = self.variable.read()
        except (ScriptError, ValueError):  # deleted, or an empty cell
            return True
        if self.shape is not None:
            return fingerprint(now) != self.shape
        return now is not self.value

    @property
    def plain(self) -> bool:
        """Whether it is a name checked by identity alone (`ScriptFunction.stale`'s fast
        way)."""
        return self.shape is None and not self.variable.path and self.variable.owner is NO_OWNER


@dataclass(eq=False, slots=True)
class _Compiled:
    key: str
    graph: Graph
    result: Type  # its output's type, a Tree for a container (frontend.trees)
    callees: list[_Compiled]  # direct callees, in order of first call
    free: tuple[FreeVariable, ...] = ()  # its hidden inputs, after the parameters
    read_once: tuple[ReadOnce, ...] = ()  # what it and its callees read at compile time


@dataclass(eq=False, slots=True)
class _Entry:
    """Everything known about one function object."""

    fdef: syntax.FunctionDef
    namespace: ChainMap[str, Any]
    name: str  # unique among live functions; the key of the declared specialisation
    declared: Signature
    annotated: tuple[bool, ...]
    compiled: dict[Signature, _Compiled] = field(default_factory=dict)
    keys: dict[Signature, str] = field(default_factory=dict)
    recursive: bool = False  # specialised on constant arguments: Note [Recursion while compiling]

    def specialise(self, arguments: Sequence[Type]) -> Signature:
        """The parameter types for a call with these argument types (Note [Specialised
        callees]); a recursive function's constant arguments keep their values."""
        return tuple(
            _specialised(declared, annotated, argument, self.recursive)
            for declared, annotated, argument in zip(
                self.declared, self.annotated, arguments, strict=True
            )
        )

    def key(self, signature: Signature) -> str:
        found = self.keys.get(signature)
        if found is None:
            if signature == self.declared:
                found = self.name
            else:
                text = ",".join(str(t) for t in signature).replace(" ", "")
                if any(c in text for c in "(){}'\"=:"):  # not for graph names: a number
                    text = str(len(self.keys) + 1)
                found = f"{self.name}[{text}]"
            self.keys[signature] = found
        return found


_ENTRIES: weakref.WeakKeyDictionary[FunctionType, _Entry] = weakref.WeakKeyDictionary()
# Ends the key a function is kept under when compiled with an input per leaf of its container
# parameters (`emit_function`'s ``leaf_inputs``).
_LEAF_INPUTS = NamedType("leaf inputs")
_NAMES: dict[str, weakref.ref[FunctionType]] = {}


class _Recursive(Exception):
    """Raised through the emitter when ``fn`` is found to call itself with the parameter types
    it is being compiled for: it is compiled again, specialised on values (Note [Recursion
    while compiling] in `frontend.recursion`)."""

    def __init__(self, fn: FunctionType) -> None:
        super().__init__(fn.__qualname__)
        self.fn = fn


class _Suspend(Exception):
    """Raised through the emitter when a callee must be compiled first (Note [Compiling
    without recursion])."""

    def __init__(self, fn: FunctionType, signature: Signature, call: SourceRange) -> None:
        super().__init__(fn.__qualname__)
        self.fn = fn
        self.signature = signature
        self.call = call


@dataclass(frozen=True, slots=True)
class _Task:
    fn: FunctionType
    signature: Signature | None  # None: as declared
    call: SourceRange | None  # the call that asked for it


def compile_function(
    fn: Callable[..., Any], *, argument_types: Sequence[Type] | None = None
) -> dict[str, Graph]:
    """``fn`` and the Python functions it calls, each as a Graph: ``{key: Graph}``, ``fn``'s
    own graph first. The graphs are fresh copies: passes may change them freely.

    ``fn``'s parameters are typed by their annotations, or, given ``argument_types`` (one per
    parameter), specialised to them as a called function is (Note [Specialised callees]):
    ``NoneType`` for an argument that is None makes ``if bias is None`` a compile-time choice.
    The global and closure arrays ``fn`` reads are inputs after its parameters
    (`compile_with_free_variables` says which).
    """
    return compile_with_free_variables(fn, argument_types=argument_types).module


@dataclass(frozen=True, slots=True)
class CompiledModule:
    """What `compile_with_free_variables` gives: the module, the global and closure arrays the
    function's graph reads as inputs after its parameters (Note [Free variables]), and what it
    and its callees read once, at compile time (Note [Values read once])."""

    module: dict[str, Graph]
    free: tuple[FreeVariable, ...]
    read_once: tuple[ReadOnce, ...]
    result: Type
    """The type of the function's result: a `Tree` when it returns a container that is not
    a plain tuple (Note [Containers known while compiling] in `frontend.trees`)."""

    def stale(self) -> bool:
        """Whether something read at compile time holds another object now."""
        return any(read.changed() for read in self.read_once)


def compile_with_free_variables(
    fn: Callable[..., Any],
    *,
    argument_types: Sequence[Type] | None = None,
    keep_ranks: bool = False,
) -> CompiledModule:
    """`compile_function`, with what it read from outside (`CompiledModule`); with
    ``keep_ranks``, array parameters keep the rank ``argument_types`` give them (Note [Array
    kinds] in `autodiff.script`)."""
    if isinstance(fn, MethodType | functools.partial):
        # Note [Reading objects from outside] in frontend.objects
        func, prefix, keywords = unwrap_callable(fn)
        slots = fixed_slots(func, prefix, keywords, None)
        if argument_types is None:
            entry = _entry(func, None)
            argument_types = [t for t, k in zip(entry.declared, slots, strict=True) if k is None]
        with gc_paused():
            return _module(func, full_types(slots, argument_types), keep_ranks)
    if not isinstance(fn, FunctionType):
        raise ScriptError(_not_a_function(fn), doc="functions")
    with gc_paused():  # Note [Compile-time cost] in autodiff.pipeline
        return _module(fn, argument_types, keep_ranks)


def _not_a_function(fn: object) -> str:
    """Why ``fn`` cannot be scripted, and what to write instead."""
    if hasattr(fn, "__autodiff_checkpoint__"):  # Note [Checkpoints] in autodiff.checkpoints
        return (
            f"cannot script {fn!r}: ad.checkpoint marks the calls a differentiated function "
            "makes; differentiate the function itself, or one that calls the checkpointed one"
        )
    return (
        f"cannot script {fn!r}: only functions defined with 'def' in Python source (or their "
        "bound methods and functools.partial) can be scripted"
    )


def _module(
    fn: FunctionType, argument_types: Sequence[Type] | None, keep_ranks: bool = False
) -> CompiledModule:
    signature = None
    if argument_types is not None:
        signature = _entry(fn, None).specialise(argument_types)
        if keep_ranks:
            signature = tuple(
                _leaf_type(given) if isinstance(given, TensorType) and given.shape else ty
                for ty, given in zip(signature, argument_types, strict=True)
            )
    root = _compile(fn, signature)
    module: dict[str, Graph] = {}
    seen: set[str] = set()
    pending = [root]
    while pending:  # depth first, callees in call order
        compiled = pending.pop()
        if compiled.key in seen:
            continue
        seen.add(compiled.key)
        module[compiled.key] = compiled.graph.copy()
        pending.extend(reversed(compiled.callees))
    return CompiledModule(module, root.free, root.read_once, root.result)


def _compile(fn: FunctionType, signature: Signature | None) -> _Compiled:
    stack = [_Task(fn, signature, None)]
    result: _Compiled | None = None
    while stack:
        task = stack[-1]
        entry = _entry(task.fn, task.call)
        signature = task.signature if task.signature is not None else entry.declared
        # Compiled as the function called, with one input per leaf of a container parameter
        # and none for a string, the graph is not the one a caller inlines: Note [Containers
        # known while compiling] and Note [Strings known while compiling] in frontend.trees.
        leaves = len(stack) == 1 and any(isinstance(t, Tree | KnownString) for t in signature)
        cached = (*signature, _LEAF_INPUTS) if leaves else signature
        done = entry.compiled.get(cached)
        if done is None:
            try:
                done = _emit(entry, task.fn, signature, stack, len(stack) == 1)
            except _Suspend as suspended:
                stack.append(_Task(suspended.fn, suspended.signature, suspended.call))
                continue
            except _Recursive as found:  # start again: what compiled so far is kept
                _entry(found.fn, None).recursive = True
                del stack[1:]
                continue
            except ScriptError as error:
                for caller in reversed(stack[1:]):
                    assert caller.call is not None
                    error.add_note_line(f"in '{caller.fn.__qualname__}', called at {caller.call}")
                raise
            entry.compiled[cached] = done
        result = done
        stack.pop()
    assert result is not None
    return result


def _emit(
    entry: _Entry,
    fn: FunctionType,
    signature: Signature,
    in_progress: Sequence[_Task],
    is_root: bool,
) -> _Compiled:
    """``fn``'s graph for ``signature``; ``is_root`` when it is the function compiled, not a
    callee (its container parameters are one input per leaf). The global arrays it and its
    callees read are hidden inputs (Note [Free variables])."""
    callees: dict[str, _Compiled] = {}
    free: list[FreeVariable] = []
    inputs: list[Value] = []  # the hidden input of each of `free`
    hidden: dict[str, list[Value]] = {}  # per callee key: what calls of it pass after the args
    returns_list: dict[str, bool] = {}  # per callee key: whether it returns a list it built
    read_once: dict[tuple[object, ...], ReadOnce] = {}
    graphs: list[Graph] = []
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or (), strict=True))

    def variable(name: str) -> FreeVariable:
        cell = cells.get(name)
        return FreeVariable(name, cell, None if cell is not None else fn.__globals__)

    def free_array(found: FreeVariable, r: SourceRange) -> Value:
        for known, value in zip(free, inputs, strict=True):
            if known.same_as(found):
                return value
        free.append(found)
        is_generator = isinstance(found.read(), np.random.Generator | np.random.RandomState)
        value = graphs[0].add_input(GENERATOR if is_generator else TENSOR, found.hint)
        inputs.append(value)
        return value

    def record_read_once(found: FreeVariable, obj: object, shape: object) -> None:
        read = ReadOnce(found, obj, shape)
        read_once.setdefault(read.key, read)

    def call_hook(
        callee: Callable[..., Any], args: Sequence[Type], call: SourceRange
    ) -> tuple[str, Type]:
        assert isinstance(callee, FunctionType)
        try:
            callee_entry = _entry(callee, call)
        except ScriptError as error:
            error.add_note_line(f"in '{callee.__qualname__}', called at {call}")
            raise
        callee_signature = callee_entry.specialise(args)
        found = callee_entry.compiled.get(callee_signature)
        if found is not None:
            # the callee's free variables, read by the caller and passed on
            hidden[found.key] = [free_array(v, call) for v in found.free]
            outputs = found.graph.outputs
            returns_list[found.key] = bool(outputs) and builds_list(outputs[0])
            callees.setdefault(found.key, found)
            for read in found.read_once:
                read_once.setdefault(read.key, read)
            return found.key, found.result
        levels = [t for t in in_progress if t.fn is callee]
        if levels:  # Note [Recursion while compiling] in frontend.recursion
            if not callee_entry.recursive:
                raise _Recursive(callee)
            if any(_signature_of(t) == callee_signature for t in levels):
                raise depends_on_run_time(callee.__qualname__, call)
            if len(levels) >= RECURSION_LIMIT:
                raise too_deep(callee.__qualname__, call)
        raise _Suspend(callee, callee_signature, call)

    key = entry.key(signature)
    results: list[Type] = []
    graph, _ = emit_function(
        entry.fdef,
        entry.namespace,
        graph_name=key,
        param_types=signature,
        call_hook=call_hook,
        free_array=free_array,
        read_once=record_read_once,
        variable_of=variable,
        hidden_arguments=lambda key: hidden.get(key, []),
        returns_list=lambda key: returns_list.get(key, False),
        on_graph=graphs.append,
        leaf_inputs=is_root,
        on_result=results.append,
    )
    return _Compiled(
        key, graph, results[0], list(callees.values()), tuple(free), tuple(read_once.values())
    )


def _entry(fn: FunctionType, call: SourceRange | None) -> _Entry:
    entry = _ENTRIES.get(fn)
    if entry is None:
        fdef = _parse(fn, call)
        namespace = ChainMap(_closure(fn), fn.__globals__)
        declared = tuple(declared_type(p, namespace) for p in fdef.params)
        annotated = tuple(_constrains(p.annotation, namespace) for p in fdef.params)
        entry = _Entry(fdef, namespace, _unique_name(fn), declared, annotated)
        _ENTRIES[fn] = entry
    return entry


def _constrains(annotation: syntax.Expr | None, namespace: Mapping[str, Any]) -> bool:
    """Whether an annotation fixes a parameter's type (Note [Specialised callees]): ``Any`` and
    ``object`` do not, and leave the parameter to take its argument's type."""
    if annotation is None:
        return False
    name = None
    if isinstance(annotation, syntax.Name):
        name = annotation.id
    elif isinstance(annotation, syntax.Constant) and isinstance(annotation.value, str):
        name = annotation.value
    elif isinstance(annotation, syntax.Attribute):  # typing.Any
        return annotation.attr != "Any"
    found = namespace.get(name, getattr(builtins, name, None)) if name is not None else None
    return found is not typing.Any and found is not object and name != "Any"


def _parse(fn: FunctionType, call: SourceRange | None) -> syntax.FunctionDef:
    code = fn.__code__
    where = call or SourceRange.location(code.co_filename, code.co_firstlineno, 1)
    if fn.__name__ == "<lambda>":
        return lambda_definition(fn, where)  # Note [Lambdas compiled] in frontend.lambdas
    try:
        lines, first_line = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        raise ScriptError(
            f"cannot find the source code of '{fn.__qualname__}': functions typed at the "
            "interactive prompt or made by exec() cannot be scripted",
            where,
            doc="functions",
        ) from None
    filename = inspect.getsourcefile(fn) or code.co_filename
    skipped = _decorator_lines(lines)
    module = parse_source("".join(lines[skipped:]), filename, first_line + skipped)
    fdef = module.functions[0]
    if fdef.name != fn.__name__:
        raise ScriptError(
            f"the source found for '{fn.__qualname__}' does not define it", where, doc="functions"
        )
    return fdef


def _decorator_lines(lines: list[str]) -> int:
    """How many lines of decorators precede the ``def``. Decorators run in Python, not in the
    compiled code, so they are skipped rather than held to the scripted subset (a decorator
    may well take a lambda). Python's own parser finds where the ``def`` starts."""
    if not lines or not lines[0].lstrip().startswith("@"):
        return 0  # the source inspect finds starts at the first decorator, if any
    try:
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except SyntaxError:  # our parser reports it, with its location
        return 0
    node = tree.body[0] if tree.body else None
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.decorator_list:
        return node.lineno - 1
    return 0


def _closure(fn: FunctionType) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or (), strict=True):
        try:
            values[name] = cell.cell_contents
        except ValueError:  # a free variable not assigned yet
            continue
    return values


def _unique_name(fn: FunctionType) -> str:
    name = fn.__qualname__
    number = 1
    while True:
        holder = _NAMES.get(name)
        if holder is None or holder() is None or holder() is fn:
            _NAMES[name] = weakref.ref(fn)
            return name
        number += 1
        name = f"{fn.__qualname__}~{number}"


def _signature_of(task: _Task) -> Signature:
    return task.signature if task.signature is not None else _entry(task.fn, None).declared


def _specialised(declared: Type, annotated: bool, argument: Type, recursive: bool) -> Type:
    """One parameter's type in `_Entry.specialise`."""
    if isinstance(argument, Known):
        if recursive and (not annotated or argument.ty == declared):
            return argument
        argument = unknown(argument)
    if annotated and not isinstance(argument, Tree | KnownObject | KnownString):
        return declared
    if recursive and isinstance(argument, TensorType):  # isinstance(t, np.ndarray) per level
        return _leaf_type(argument)
    return _parameter_type(argument)


def _parameter_type(argument: Type) -> Type:
    if isinstance(argument, Tree):  # the leaves of a container keep their rank
        return map_leaves(argument, _leaf_type)
    if isinstance(argument, TensorType) or argument is ANY:
        return TENSOR
    if isinstance(argument, TupleType):
        return TupleType(tuple(_parameter_type(t) for t in argument.elems))
    if isinstance(argument, ListType):
        return ListType(_parameter_type(argument.elem))
    if isinstance(argument, OptionalType):
        return OptionalType(_parameter_type(argument.elem))
    return argument


def _leaf_type(argument: Type) -> Type:
    if isinstance(argument, TensorType) and argument.shape:
        return TensorType(None, (None,) * len(argument.shape))
    return _parameter_type(argument)


def forget_stale() -> None:
    """Drop every function compiled from something read at compile time that holds another
    object now, with what its entry read (its closure's values), so that the next compile
    reads them again (Note [Values read once]). A caller's reads include its callees'."""
    for fn, entry in list(_ENTRIES.items()):
        if any(read.changed() for done in entry.compiled.values() for read in done.read_once):
            del _ENTRIES[fn]
