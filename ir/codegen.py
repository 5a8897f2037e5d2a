"""Run a graph as generated Python: one function per graph, a local variable per value, kernels
and constants bound at compile time (torch.fx's code generation), with the interpreter's
semantics and error reports.

``executable(graph)`` is the one place that picks how graphs run: `CompiledGraph` (this module)
in every mode, observed or not, however deeply the graph nests; the reference `Executable` of
`ir.interpreter` only when the environment variable ``AUTODIFF_EXECUTOR=interpreter`` asks for
the test oracle. Both take ``(*args)`` and return a list with one item per graph output.

# Note [Observed code]
# With an observer (anomaly mode, the profiler: Note [Observers] in `ir.interpreter`), each
# kernel node is emitted as ``y = _observe(_node, aten_tanh, (x,))``: the node and the kernel
# are bound like any constant, the observer returns the kernel's result, and its own located
# errors (AutodiffError) pass through, while a kernel's error is reported as usual. Typed
# calls, inline tuple forms and the memory plan are left out, so the observer sees every
# kernel call the interpreter would make, with the same arguments, and no value is written
# in place behind its back. Structural nodes are not observed; the kernel nodes in their
# blocks and in called graphs are.

# Note [Generated code]
# `CompiledGraph` prints the graph as the source of one Python function and compiles it once.
#
#     def _make(aten_mul, aten_tanh, _AZ):           # what the function reads, bound once
#         def f(_args):
#             x, w = _args
#             _args.clear()                           # the caller's list lets go of the arguments
#             h = aten_mul(x, w)
#             del x, w                                # after their last use
#             y = aten_tanh(h)
#             return [h, y]
#         return f
#
# - Every value is a local; every kernel, non-literal constant and helper is a closure variable
#   of the factory ``_make``, so running a node is a call with no dictionary look-up. Constants
#   that Python spells exactly (ints, bools, None, finite floats, strings) are literals.
# - Tuple and list construction, unpacking and indexing are written inline (``(a, b)``,
#   ``a, b = t``, ``t[i]``) when the operator's kernel is prim's own.
# - prim::If is ``if``/``else``; prim::Loop a ``while`` over the counter (the body's %i) that
#   runs while ``go and i < max_trip_count`` and rebinds the carried values from the body's
#   results; prim::GradOf an ``if`` that yields AUTOGRAD_ZERO when every input is the
#   sentinel (Note [GradOf semantics] in `ir.interpreter`); prim::Reverse binds None.
# - prim::Native binds its block's parameters to its operands and runs the block in place, as
#   if inlined; or, when the native tier compiled the region (``natives``), calls the
#   compiled function with the operands: ``a, b = _native(x, w)``.
# - Liveness is the interpreter's (Note [Freeing values]): each value is dropped after its
#   last use in its block, a use in a nested block counting as a use by the owning node; on
#   top of that a loop's carried initial values that its body never reads are dropped before
#   the loop runs, and the arguments are dropped too, since ``_args`` is emptied. A kernel
#   node's result takes the name of a value of the same hint that the node reads for the last
#   time (``y = sin(y)``), which drops the old value as a ``del`` after the node would; other
#   values get a ``del``. Fewer statements make Python's compile of a long chain faster.
# - Typed calls (Note [Typed calls] in `ir.typed_calls`): where the node's types prove it gives
#   the kernel's result bit for bit, a node is spelled more cheaply than ``kernel(args)``. A
#   Python number next to float64 tensors is a bound 0-d float64 array (``_c``); sum, mean,
#   max, min and prod of an ndarray call the ufunc's ``reduce``; sum_to_size, _unreduce and
#   the matmul gradients are written out when their shapes are known; select, slice and
#   transpose are subscripts; prim:: arithmetic and comparisons are Python operators.
# - Memory plan: an elementwise ufunc whose result has at least `INPLACE_MIN_SIZE` elements
#   writes it into an operand that dies at the node (``y = aten_tanh(b, out=b)``) when that
#   operand is private to the block: computed here by a call returning a new array, read only
#   by ufuncs and reductions of the same block, of the result's dtype and shape. Arguments
#   (unless the caller gives them away: ``owned``), constants, views, values held by lists,
#   tuples or tapes, values read in a nested block, and returned values are never written
#   to. The liveness above decides "dies at the node".
# - Errors: every line that runs a node is recorded. When the function raises, the traceback's
#   line in the generated frame names the node, and the error is reported as the interpreter
#   reports it (`node_error`): no try block per node, so the fast path pays nothing for it.
#   The source is registered with `linecache`, so tracebacks show the generated lines.
# - Emitting is one walk over the graph plus a liveness pass per block: linear in the number
#   of nodes (times block nesting depth). Deep nests: Note [Lifted blocks].

# Note [Lifted blocks]
# Python refuses more than 20 nested loops or 100 indentation levels in one function. A
# prim::If, prim::Loop or prim::GradOf whose blocks would go past 18 loops or 90 levels is
# called where it stands, and written as a function of its own in ``_make``:
#
#     def f(_args):                                   def _loop(x, w):
#         ...                                             _go = True
#         y = _loop(x, w)                                 y_1 = x
#         del x, w                                        ... the node as always, at indent 2
#                                                         return (y_1,)
#
# - It takes the values the node reads from outside (its operands and what its blocks read;
#   constants are literals or closure variables already) under the caller's names for them,
#   and returns the node's results. One ``_make``, one source: bindings, names and line
#   numbers are shared, so the failing line still names its node.
# - Liveness is the interpreter's: a value read inside the node lives until the node
#   finishes, and the caller frees it after the call (so the early drop of carried values a
#   loop's body never reads is not done for a lifted loop); the lifted function frees what
#   its blocks compute as any block does.
# - The memory plan never writes into a parameter: a value the node or its blocks read has
#   a reader (the node, or one in a nested block) that keeps it from being private (Note
#   [Typed calls]); what the lifted blocks compute is theirs to write into.
# - Errors: the caller's frame calls the lifted one directly, so the innermost of the
#   consecutive frames of the generated source holds the failing node's line.
# - Observers: lifted blocks are emitted like any other, with the same observer.
# - A lifted function is written after the one that calls it, not in the middle of it, so
#   emitting recurses no deeper than one function nests, whatever the depth of the graph.
"""

from __future__ import annotations

import builtins
import itertools
import keyword
import linecache
import math
import operator
import os
import re
import unicodedata
import weakref
from collections import deque
from collections.abc import Collection, Mapping, Sequence
from types import TracebackType
from typing import Any, Protocol

import numpy as np

from ir.analysis import last_uses, values_read_in_blocks
from ir.errors import AutodiffError, InterpreterError
from ir.graph import Block, Graph, Node, Value
from ir.interpreter import (
    STATIC_KINDS,
    Executable,
    Observer,
    compile_error,
    node_error,
)
from ir.ops import AUTOGRAD_ZERO, OPS, OpDef, prim
from ir.printer import HEX_ABOVE_BITS
from ir.typed_calls import TypedCalls

__all__ = [
    "EXECUTOR_VARIABLE",
    "CompiledGraph",
    "Runnable",
    "executable",
]

EXECUTOR_VARIABLE = "AUTODIFF_EXECUTOR"
"""``codegen`` (the default) or ``interpreter``: which executor `executable` builds."""

# Python's compiler refuses more than 20 nested loops and 100 indentation levels in a function:
# a node whose blocks would go deeper becomes a function of its own (Note [Lifted blocks]).
_MAX_LOOP_DEPTH = 18
_MAX_INDENT = 90


class Runnable(Protocol):
    """What `executable` returns: ``runnable(*args) -> [outputs...]``."""

    graph: Graph

    def __call__(self, *args: Any) -> list[Any]: ...

    def run(self, args: list[Any]) -> list[Any]:
        """Run on ``args``, emptying the list so each argument dies after its last use."""
        ...


def executable(
    graph: Graph,
    ops: Mapping[str, OpDef] = OPS,
    functions: Mapping[str, Graph] | None = None,
    *,
    observer: Observer | None = None,
    executor: str | None = None,
    owned: Collection[int] = (),
) -> Runnable:
    """``graph`` compiled for repeated runs, by the executor ``executor`` names (by default the
    one ``AUTODIFF_EXECUTOR`` names, else ``codegen``). An ``observer`` (anomaly mode, the
    profiler: Note [Observers] in `ir.interpreter`) watches each kernel node: an option of
    the generated code (Note [Observed code]), not another executor. Generated code may write
    into the arguments at the positions ``owned`` (see `CompiledGraph`); the interpreter never
    writes into a value. This is the one place that chooses."""
    choice = executor or os.environ.get(EXECUTOR_VARIABLE) or "codegen"
    if choice == "interpreter":
        return Executable(graph, ops, functions, observer=observer)
    if choice != "codegen":
        raise InterpreterError(
            f"unknown executor {choice!r} (from {EXECUTOR_VARIABLE}): "
            "expected 'codegen' or 'interpreter'"
        )
    return CompiledGraph(graph, ops, functions, owned=owned, observer=observer)


class CompiledGraph:
    """``graph`` as a generated Python function: ``CompiledGraph(g)(x, w) -> [outputs...]``.
    Like `Executable`, a snapshot of the graph when it was built. See Note [Generated code].

    The arguments at the positions ``owned`` are the caller's to give away: new arrays that
    nothing else holds once the call starts, which the memory plan may write into when they
    die, as it does values computed in the graph (Note [Typed calls], ownership). A caller
    passes them only with that guarantee; by default no argument is ever written to.

    ``natives`` maps prim::Native nodes of the graph to the functions the native tier compiled
    for them (``fn(*operands) -> tuple of results``); a region without one runs its block."""

    def __init__(
        self,
        graph: Graph,
        ops: Mapping[str, OpDef] = OPS,
        functions: Mapping[str, Graph] | None = None,
        *,
        owned: Collection[int] = (),
        observer: Observer | None = None,
        natives: Mapping[Node, Any] | None = None,
    ) -> None:
        self.graph = graph
        self.owned = frozenset(owned)
        self.observer = observer
        emitter = _Emitter(ops, functions or {}, observer, natives or {})
        emitter.graph(graph, self.owned)
        self.private_outputs = emitter.calls.private_outputs(graph)
        """The positions of outputs that are new arrays only the returned list holds: a
        caller that drops every other reference may hand them to a graph that owns them."""
        self.source, self.line_nodes = emitter.source()
        self.arity = len(graph.inputs)
        self.filename = f"<generated graph @{graph.name or 'graph'} #{next(_COUNTER)}>"
        lines = self.source.splitlines(keepends=True)
        linecache.cache[self.filename] = (len(self.source), None, lines, self.filename)
        weakref.finalize(self, linecache.cache.pop, self.filename, None)
        namespace: dict[str, Any] = {"__builtins__": builtins}
        exec(compile(self.source, self.filename, "exec"), namespace)
        self.function = namespace["_make"](*emitter.bindings.values())

    def __call__(self, *args: Any) -> list[Any]:
        return self.run(list(args))

    def run(self, args: list[Any]) -> list[Any]:
        """Run on ``args``, a list the generated code empties on entry, so that each argument
        is freed after its last use rather than when the call returns (as `Executable.run`)."""
        if len(args) != self.arity:
            name = f"graph @{self.graph.name}" if self.graph.name else "the graph"
            raise InterpreterError(f"{name} takes {self.arity} arguments, got {len(args)}")
        try:
            results: list[Any] = self.function(args)
        except Exception as exc:
            error = self.error_for(exc)
            if error is None:
                raise
            raise error from exc
        return results

    def error_for(self, exc: Exception) -> AutodiffError | None:
        """The error the interpreter would raise for ``exc``, or None to let it through."""
        traceback: TracebackType | None = exc.__traceback__
        while traceback is not None and not self.generated(traceback):
            traceback = traceback.tb_next
        if traceback is None:
            return None
        # The graph's function calls its lifted blocks directly (Note [Lifted blocks]): the
        # failing node's line is in the innermost of the frames that follow one another.
        while traceback.tb_next is not None and self.generated(traceback.tb_next):
            traceback = traceback.tb_next
        found = self.line_nodes.get(traceback.tb_lineno)
        if found is None:
            return None
        node, calls_python = found
        if calls_python and isinstance(exc, AutodiffError):
            return None
        return node_error(node, exc)

    def generated(self, traceback: TracebackType) -> bool:
        """Whether ``traceback``'s frame runs this graph's code (its function or a lifted one)."""
        return traceback.tb_frame.f_code.co_filename == self.filename


_COUNTER = itertools.count()

# Operators written inline (``(a, b)``, ``a, b = t``, ``t[i]``) when their kernel is prim's own.
_INLINE: dict[str, Any] = {
    "prim::TupleConstruct": prim.make_tuple,
    "prim::ListConstruct": prim.make_list,
    "prim::TupleUnpack": prim.unpack,
    "prim::ListUnpack": prim.unpack,
    "prim::TupleIndex": operator.getitem,
    "prim::ListIndex": prim.list_index,
}


class _GraphCallee:
    """Graph @name of the module, compiled on its first call (so recursive graphs compile)."""

    __slots__ = ("compiled", "functions", "graph", "observer", "ops")

    def __init__(
        self,
        graph: Graph,
        ops: Mapping[str, OpDef],
        functions: Mapping[str, Graph],
        observer: Observer | None,
    ) -> None:
        self.graph, self.ops, self.functions = graph, ops, functions
        self.observer = observer
        self.compiled: Runnable | None = None

    def __call__(self, *args: Any) -> list[Any]:
        if self.compiled is None:
            self.compiled = executable(
                self.graph, self.ops, self.functions, executor="codegen", observer=self.observer
            )
        return self.compiled(*args)


def _call_value(callee: Any, count: int, *args: Any) -> Sequence[Any]:
    """prim::CallFunction without a callee attribute: call the graph, executable or Python
    callable ``callee``; its results as a sequence of ``count`` items. A graph runs as
    generated code, compiled for the call as the interpreter's ``run_graph`` compiles it (with
    the default operators, no module and no observer, so that both run the same program)."""
    if isinstance(callee, Graph):
        return CompiledGraph(callee)(*args)
    if isinstance(callee, Executable | CompiledGraph):
        return callee(*args)
    result = callee(*args)
    return (result,) if count == 1 else result if count else ()


_BLOCK_KINDS = frozenset({"prim::If", "prim::Loop", "prim::GradOf", "prim::Native"})


def _defined_within(node: Node) -> set[Value]:
    """The values defined in ``node``'s blocks, at any depth: their parameters and results."""
    defined: set[Value] = set()
    pending = list(node.blocks)
    while pending:
        block = pending.pop()
        defined.update(block.inputs)
        for inner in block.nodes():
            defined.update(inner.outputs)
            pending.extend(inner.blocks)
    return defined


def _literal(value: Any) -> str | None:
    """Python source that evaluates to ``value`` exactly, for the few types that have it."""
    kind = type(value)
    if kind is int and value.bit_length() > HEX_ABOVE_BITS:
        return hex(value)  # Python writes at most 4300 decimal digits
    if value is None or kind is bool or kind is int or kind is str:
        return repr(value)
    if kind is float and math.isfinite(value):
        return repr(value)
    return None


def _identifier(hint: str) -> str:
    """A Python identifier for a value named ``hint``, spelled as Python reads it: Python
    NFKC-normalises identifiers, so ``ﬁ`` would be the variable ``fi`` (and two values named
    ``%fi`` and ``%ﬁ`` one variable), and ``½`` (NFKC: 1, fraction slash, 2) no identifier at
    all. The name is normalised first, so the namer's uniqueness check sees what Python will
    see."""
    name = unicodedata.normalize("NFKC", hint)
    name = "".join(char if f"_{char}".isidentifier() else "_" for char in name) or "v"
    if not name.isidentifier() or unicodedata.normalize("NFKC", name) != name:
        name = re.sub(r"[^0-9A-Za-z_]", "_", name)  # only ASCII then: it always is both
    if not name[0].isidentifier():
        name = f"v{name}"
    return f"{name}_" if keyword.iskeyword(name) else name


def _tuple_target(names: Sequence[str]) -> str:
    return f"{names[0]}," if len(names) == 1 else ", ".join(names)


def _assignment(targets: Sequence[str], values: Sequence[str]) -> str:
    """``a, b = x, y`` (``a = x`` for one)."""
    if len(targets) == 1:
        return f"{targets[0]} = {values[0]}"
    return f"{', '.join(targets)} = {', '.join(values)}"


class _Function:
    """One ``def`` of the generated source: its lines, and which of them run which node."""

    __slots__ = ("lines", "nodes")

    def __init__(self) -> None:
        self.lines: list[str] = []
        # index in `lines` -> (node, calls Python code whose own errors pass through)
        self.nodes: dict[int, tuple[Node, bool]] = {}


class _Emitter:
    """Writes one graph's function and its lifted blocks (Note [Lifted blocks]): their lines,
    the closure bindings, and which line runs which node."""

    def __init__(
        self,
        ops: Mapping[str, OpDef],
        functions: Mapping[str, Graph],
        observer: Observer | None = None,
        natives: Mapping[Node, Any] | None = None,
    ) -> None:
        self.ops = ops
        self.functions = functions
        self.observer = observer
        self.natives = natives or {}
        self.functions_out: list[_Function] = []  # the graph's function, then lifted blocks
        self.current = _Function()  # the one being written
        self.name = ""  # the graph's function, which ``_make`` returns
        # lifted nodes whose functions are still to write: (name, parameters, node)
        self.pending: deque[tuple[str, list[str], Node]] = deque()
        self.bindings: dict[str, Any] = {}  # closure name -> object, in _make's parameter order
        self.bound_ids: dict[int, str] = {}  # id(object) -> closure name (kernels, helpers)
        self.used: set[str] = set()
        self.counts: dict[str, int] = {}
        self.expr: dict[Value, str] = {}  # how the code spells each value
        self.loop_depth = 0
        self.azero = self.bind(AUTOGRAD_ZERO, "_AZ")
        self.calls = TypedCalls(ops, self.bind)

    # -- names -----------------------------------------------------------------------------

    def fresh(self, hint: str) -> str:
        base = _identifier(hint)
        name = base
        while name in self.used or hasattr(builtins, name):
            count = self.counts.get(base, 0) + 1
            self.counts[base] = count
            name = f"{base}_{count}"
        self.used.add(name)
        return name

    def bind(self, obj: Any, hint: str, *, shared: bool = True) -> str:
        """A closure variable holding ``obj`` (one per object when ``shared``)."""
        if shared and id(obj) in self.bound_ids:
            return self.bound_ids[id(obj)]
        name = self.fresh(hint)
        self.bindings[name] = obj
        if shared:
            self.bound_ids[id(obj)] = name
        return name

    def define(self, value: Value) -> str:
        name = self.fresh(value.name_hint or "v")
        self.expr[value] = name
        return name

    # -- lines -----------------------------------------------------------------------------

    def emit(self, indent: int, text: str, node: Node | None = None, calls: bool = False) -> None:
        lines = self.current.lines
        lines.append("    " * indent + text)
        if node is not None:
            self.current.nodes[len(lines) - 1] = (node, calls)

    def free(self, indent: int, values: Sequence[Value]) -> None:
        if values:
            self.emit(indent, "del " + ", ".join(self.expr[v] for v in values))

    def source(self) -> tuple[str, dict[int, tuple[Node, bool]]]:
        """The source of ``_make``, and which of its line numbers runs which node."""
        lines = [f"def _make({', '.join(self.bindings)}):"]
        line_nodes: dict[int, tuple[Node, bool]] = {}
        for function in self.functions_out:
            for index, found in function.nodes.items():
                line_nodes[len(lines) + index + 1] = found
            lines.extend(function.lines)
        lines.append(f"    return {self.name}")
        return "\n".join(lines) + "\n", line_nodes

    # -- graph and blocks ------------------------------------------------------------------

    def graph(self, graph: Graph, owned: frozenset[int] = frozenset()) -> None:
        self.functions_out.append(self.current)
        self.name = self.fresh(graph.name or "graph")
        args = self.fresh("_args")
        self.emit(1, f"def {self.name}({args}):")
        params = [self.define(v) for v in graph.inputs]
        self.calls.own([v for i, v in enumerate(graph.inputs) if i in owned])
        self.emit(2, f"{_tuple_target(params) if params else '[]'} = {args}")
        self.emit(2, f"{args}.clear()")
        results, _ = self.block(graph.block, 2, frozenset())
        copied = [
            f"{expr}.copy()"
            if value.node.kind == "prim::Constant"
            and isinstance(value.node.attr("value"), np.ndarray)
            else expr
            for value, expr in zip(graph.outputs, results, strict=True)
        ]
        self.emit(2, f"return [{', '.join(copied)}]")
        # Written one after another, not one inside the other's emission, so that emitting
        # recurses no deeper than one function nests however deep the graph does.
        while self.pending:
            self.lifted_function(*self.pending.popleft())

    def block(
        self, block: Block, indent: int, keep: frozenset[Value]
    ) -> tuple[list[str], list[Value]]:
        """Emit ``block``'s nodes, never freeing ``keep``; returns how its results are spelled
        and the values whose last use is the return, which the caller frees after copying the
        results out."""
        nodes = list(block.nodes())
        last_use = last_uses(block, nodes)
        frees: list[list[Value]] = [[] for _ in range(len(nodes) + 2)]  # entry, nodes, exit
        for position, node in enumerate([block.param_node, *nodes]):
            if node.kind in STATIC_KINDS:
                continue
            for value in node.outputs:
                if value not in keep:
                    frees[last_use.get(value, position)].append(value)
        self.free(indent, frees[0])
        for position, node in enumerate(nodes, start=1):
            self.node(node, indent, frees[position])
        return [self.expr[v] for v in block.outputs], frees[-1]

    def nested(self, block: Block, indent: int, outputs: Sequence[str]) -> None:
        """A block whose results become ``outputs`` (If, GradOf)."""
        start = len(self.current.lines)
        results, exit_frees = self.block(block, indent, frozenset())
        if outputs:
            self.emit(indent, _assignment(outputs, results))
        self.free(indent, exit_frees)
        if len(self.current.lines) == start:
            self.emit(indent, "pass")

    def too_deep(self, node: Node, indent: int) -> bool:
        """Whether ``node``'s blocks, written here, would nest deeper than Python compiles."""
        if not node.blocks:
            return False
        loops = self.loop_depth + (node.kind == "prim::Loop")
        return indent + 1 > _MAX_INDENT or loops > _MAX_LOOP_DEPTH

    def lifted(self, node: Node, indent: int) -> None:
        """``node`` (an If, Loop or GradOf) as a call to a function of its own, written once
        the current one is done: Note [Lifted blocks]."""
        defined_inside = _defined_within(node)
        reads: dict[str, None] = {}  # names of the outer values read, in order, once each
        for value in [*node.inputs, *values_read_in_blocks(node)]:
            if value not in defined_inside and value.node.kind not in STATIC_KINDS:
                reads[self.expr[value]] = None
        name = self.fresh(f"_{node.kind.removeprefix('prim::').lower()}")
        outs = [self.define(v) for v in node.outputs]
        call = f"{name}({', '.join(reads)})"
        self.emit(indent, f"{_tuple_target(outs)} = {call}" if outs else call)
        self.pending.append((name, list(reads), node))

    def lifted_function(self, name: str, params: list[str], node: Node) -> None:
        """The function ``lifted`` calls: ``node`` at the top level of a ``def`` of its own.
        Its results get names of this function; the caller's stay for the other functions
        that read them."""
        self.current, self.loop_depth = _Function(), 0
        self.functions_out.append(self.current)
        callers_names = {v: self.expr[v] for v in node.outputs}
        self.emit(1, f"def {name}({', '.join(params)}):")
        self.structural(node, 2, [])
        outs = [self.expr[v] for v in node.outputs]
        self.emit(2, f"return ({_tuple_target(outs)})" if outs else "return ()")
        self.expr.update(callers_names)

    # -- nodes -----------------------------------------------------------------------------

    def node(self, node: Node, indent: int, frees: list[Value]) -> None:
        op = self.ops.get(node.kind)
        if op is None:
            raise compile_error(node, f"unknown operator {node.kind}")
        if op.kernel is not None:
            frees = self.kernel(node, op, indent, frees)
        elif node.kind == "prim::Constant":
            value = node.attr("value")
            literal = _literal(value)
            self.expr[node.output] = (
                literal
                if literal is not None
                else self.bind(value, node.output.name_hint or "const", shared=False)
            )
        elif node.kind == "prim::AutogradZero":
            self.expr[node.output] = self.azero
        elif node.kind == "prim::Reverse":
            if node.outputs:
                names = [self.define(v) for v in node.outputs]
                self.emit(indent, " = ".join([*names, "None"]))
        elif node.kind in _BLOCK_KINDS:
            if self.too_deep(node, indent):
                self.lifted(node, indent)
            else:
                frees = self.structural(node, indent, frees)
        elif node.kind == "prim::CallFunction":
            self.call_function(node, indent)
        else:
            raise compile_error(
                node, f"{node.kind} has no kernel and the interpreter cannot run it"
            )
        self.free(indent, frees)

    def structural(self, node: Node, indent: int, frees: list[Value]) -> list[Value]:
        """Emit an If, Loop, GradOf or Native in place; returns the frees left for after it."""
        if node.kind == "prim::If":
            self.if_(node, indent)
        elif node.kind == "prim::Loop":
            frees = self.loop(node, indent, frees)
        elif node.kind == "prim::Native":
            self.native(node, indent)
        else:
            self.grad_of(node, indent)
        return frees

    def kernel(self, node: Node, op: OpDef, indent: int, frees: list[Value]) -> list[Value]:
        """Emit a node that calls its kernel (or its inline form); returns the frees left."""
        args = [self.expr[v] for v in node.inputs]
        if self.observer is not None:
            return self.observed(node, op, args, indent, frees)
        buffer = self.calls.buffer(node, frees)  # See Note [Typed calls] in ir.typed_calls
        frees = self.reuse_names(node, frees)
        inline = _INLINE.get(node.kind)
        if inline is not None and inline is op.kernel and node.outputs:
            self.inline(node, args, indent)
            return frees
        outs = [self.expr[v] for v in node.outputs]
        typed = self.calls.call(node, op, args, buffer)
        if typed is not None:
            self.emit(indent, f"{outs[0]} = {typed.expr}", node)
            if typed.then is not None:
                self.emit(indent, typed.then.format(out=outs[0]), node)
            if typed.fresh:
                self.calls.fresh.add(node.output)
            return frees
        name = self.bind(op.kernel, node.kind.replace("::", "_"))
        call = f"{name}({', '.join(args)})"
        if len(outs) == 1 and op.num_outputs == 1:
            self.emit(indent, f"{outs[0]} = {call}", node)
        elif outs:
            self.emit(indent, f"{_tuple_target(outs)} = {call}", node)
        else:
            self.emit(indent, call, node)
        return frees

    def observed(
        self, node: Node, op: OpDef, args: list[str], indent: int, frees: list[Value]
    ) -> list[Value]:
        """A kernel node run through the observer: Note [Observed code]."""
        observe = self.bind(self.observer, "_observe")
        kernel = self.bind(op.kernel, node.kind.replace("::", "_"))
        seen = self.bind(node, "_node", shared=False)
        call = f"{observe}({seen}, {kernel}, ({_tuple_target(args) if args else ''}))"
        outs = [self.define(v) for v in node.outputs]
        if len(outs) == 1 and op.num_outputs == 1:
            self.emit(indent, f"{outs[0]} = {call}", node, calls=True)
        elif outs:
            self.emit(indent, f"{_tuple_target(outs)} = {call}", node, calls=True)
        else:
            self.emit(indent, call, node, calls=True)
        return frees

    def reuse_names(self, node: Node, frees: list[Value]) -> list[Value]:
        """Name ``node``'s results, each after a value of the same name hint that this node
        reads for the last time, if there is one: binding the result drops the old value just
        when a ``del`` after the node would, without a statement of its own. Returns the frees
        still to ``del``."""
        dying = [v for v in frees if v.node is not node]
        for value in node.outputs:
            old = next((v for v in dying if v.name_hint == value.name_hint), None)
            if old is None:
                self.define(value)
                continue
            dying.remove(old)
            frees = [v for v in frees if v is not old]
            self.expr[value] = self.expr[old]
        return frees

    def inline(self, node: Node, args: list[str], indent: int) -> None:
        kind = node.kind
        outs = [self.expr[v] for v in node.outputs]
        if kind == "prim::TupleConstruct":
            text = f"{outs[0]} = ({_tuple_target(args)})" if args else f"{outs[0]} = ()"
        elif kind == "prim::ListConstruct":
            text = f"{outs[0]} = [{', '.join(args)}]"
        elif kind in ("prim::TupleIndex", "prim::ListIndex"):
            text = f"{outs[0]} = {args[0]}[{args[1]}]"
        else:  # an unpack with at least one result
            text = f"{_tuple_target(outs)} = {args[0]}"
        self.emit(indent, text, node)

    def if_(self, node: Node, indent: int) -> None:
        outs = [self.define(v) for v in node.outputs]
        self.emit(indent, f"if {self.expr[node.inputs[0]]}:", node)
        self.nested(node.blocks[0], indent + 1, outs)
        self.emit(indent, "else:")
        self.nested(node.blocks[1], indent + 1, outs)

    def loop(self, node: Node, indent: int, frees: list[Value]) -> list[Value]:
        """Emit the loop; returns the frees left for after it."""
        body = node.blocks[0]
        carried = node.inputs[2:]
        if len(body.inputs) != 1 + len(carried):
            raise compile_error(node, "prim::Loop body must take (%i, carried values...)")
        self.loop_depth += 1
        trip = self.expr[node.inputs[0]]
        go = self.fresh("_go")
        condition = self.expr[node.inputs[1]]
        self.emit(
            indent, f"{go} = {condition if condition == 'True' else f'bool({condition})'}", node
        )
        outs = [self.define(v) for v in node.outputs]
        if outs:
            self.emit(indent, _assignment(outs, [self.expr[v] for v in carried]), node)
        # Carried values the body never reads die before it runs: only `outs` holds them.
        read_inside = set(values_read_in_blocks(node))
        trip_value = node.inputs[0]
        early = [v for v in frees if v in carried and v is not trip_value and v not in read_inside]
        self.free(indent, early)
        counter_value = body.inputs[0]
        counter = self.define(counter_value)
        self.emit(indent, f"{counter} = 0")
        self.emit(indent, f"while {go} and {counter} < {trip}:", node)
        params = [self.define(v) for v in body.inputs[1:]]
        if params:
            self.emit(indent + 1, _assignment(params, outs), node)
            self.emit(indent + 1, f"del {', '.join(outs)}")
        results, exit_frees = self.block(body, indent + 1, frozenset([counter_value]))
        if results[0] != "True":  # a for loop's condition stays as it was
            self.emit(indent + 1, f"{go} = bool({results[0]})", node)
        if outs:
            self.emit(indent + 1, _assignment(outs, results[1:]), node)
        self.free(indent + 1, exit_frees)
        self.emit(indent + 1, f"{counter} += 1")
        self.loop_depth -= 1
        return [v for v in frees if v not in early]

    def native(self, node: Node, indent: int) -> None:
        """A region: a call of its compiled function, or its block run in place."""
        args = [self.expr[v] for v in node.inputs]
        compiled = self.natives.get(node)
        if compiled is not None:
            call = f"{self.bind(compiled, '_native', shared=False)}({', '.join(args)})"
            outs = [self.define(v) for v in node.outputs]
            # Its own located errors (a region run as Python) pass through: calls=True.
            text = f"{_tuple_target(outs)} = {call}" if outs else call
            self.emit(indent, text, node, calls=True)
            return
        body = node.blocks[0]
        params = [self.define(v) for v in body.inputs]
        if params:
            self.emit(indent, _assignment(params, args), node)
        self.nested(body, indent, [self.define(v) for v in node.outputs])

    def grad_of(self, node: Node, indent: int) -> None:
        # See Note [GradOf semantics] in ir.interpreter
        grads = [self.expr[v] for v in node.inputs]
        outs = [self.define(v) for v in node.outputs]
        zeros = f"{' = '.join(outs)} = {self.azero}" if outs else "pass"
        if not grads:
            self.emit(indent, zeros)
            return
        self.emit(indent, "if " + " and ".join(f"{g} is {self.azero}" for g in grads) + ":")
        self.emit(indent + 1, zeros)
        self.emit(indent, "else:")
        self.nested(node.blocks[0], indent + 1, outs)

    def call_function(self, node: Node, indent: int) -> None:
        outs = [self.define(v) for v in node.outputs]
        if "callee" in node.attrs:
            name = node.attrs["callee"]
            callee = self.functions.get(name)
            if callee is None:
                raise compile_error(
                    node,
                    f"no graph @{name} to call: pass the module's graphs, or run the inline pass",
                )
            graph_callee = _GraphCallee(callee, self.ops, self.functions, self.observer)
            helper = self.bind(graph_callee, name, shared=False)
            call = f"{helper}({', '.join(self.expr[v] for v in node.inputs)})"
            self.emit(indent, f"{_tuple_target(outs)} = {call}" if outs else call)
            return
        helper = self.bind(_call_value, "_call")
        args = ", ".join(
            [self.expr[v] for v in node.inputs[:1]]
            + [str(len(outs))]
            + [self.expr[v] for v in node.inputs[1:]]
        )
        target = _tuple_target(outs) if outs else "[]"
        self.emit(indent, f"{target} = {helper}({args})", node, calls=True)
