"""ScriptFunction: a Python function compiled to a graph, specialised per call signature and run
by the executor `ir.codegen.executable` picks, with the plain function's observable behaviour.

# Note [Specialisation cache]
# Each call binds its arguments as Python would, turns lists into arrays, and looks its
# signature key up among the function's compilation units (Note [Compilation units] in
# `autodiff.unit`). A unit without a plain executable yet specialises the parsed graph to the
# arguments' types (and, for functionalisation, the strides of those not C-contiguous),
# cleans it up with the one pipeline gradients use too (Note [One specialisation pipeline]
# in `autodiff.specialize`), and compiles it with `ir.codegen.executable`.
#
# A hit is the common call, so it takes a short way: arguments given by position, one per
# parameter, are keyed as they come (`signature_key` gives a value that would be converted or
# rejected a key nothing is stored under), and the executable found runs them with no binding
# or conversion. Any other call, and every miss, goes the long way, which raises the errors.

# Note [Python numbers for unannotated parameters]
# An unannotated parameter is a Tensor in ``graph``, so ``b * b`` there is ``aten::mul``, which
# gives a NumPy scalar. Given a Python number, the plain function computes with Python's rules
# (``b * b`` is a float), so the function is compiled again with that parameter typed as the
# number's type, as a called function is (Note [Specialised callees] in `frontend.compile`),
# and that graph is the one specialised: a float parameter does Python arithmetic and becomes
# a 0-d array only where a NumPy function takes it (Note [Python numbers as arrays] in
# `frontend.calls`). Gradients flow as for an annotated ``float``. The signature key already
# tells a Python number from an array, so each kind has its own executable.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
from collections.abc import Callable, Sequence
from types import CellType, FunctionType
from typing import Any

import numpy as np

from autodiff.cache import CompilationCache
from autodiff.specialize import (
    ArgumentError,
    SignatureKey,
    argument_type,
    bind_arguments,
    numpy_scalar_positions,
    runtime_value,
    signature_key,
    strided_inputs,
    typed_graph,
)
from autodiff.unit import CompilationUnit
from frontend.compile import FreeVariable, compile_with_free_variables, forget_stale
from ir.codegen import Runnable, executable
from ir.errors import ShapeError
from ir.graph import Graph
from ir.types import BOOL, FLOAT, INT, TensorType, Type
from passes.registry import run_module_passes

_SCALAR_TYPES = (INT, FLOAT, BOOL)


class ScriptFunction:
    """What ``ad.script(fn)`` returns: callable like ``fn``, with its IR at hand.

    ``graph`` is the function as parsed, helpers inlined; ``graph_for(*args)`` is the graph
    specialised to those arguments, the one a call with them runs. See Note [Specialisation
    cache].
    """

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn
        self.signature = inspect.signature(fn)
        # A gradient or a Jacobian (Note [Gradient graphs] in autodiff.higher_order): its graph
        # is built per argument types and layouts (`parsed_for`); the one for the declared
        # types, when asked.
        self.graph_of: Callable[..., Graph] | None = getattr(fn, "__autodiff_graph__", None)
        self._graph: Graph | None = None
        self.free: tuple[FreeVariable, ...] = ()
        """The global and closure arrays the function reads, its graph's inputs after the
        parameters, read again at each call (Note [Free variables] in `frontend.compile`)."""
        self.read_once: tuple[tuple[dict[str, Any] | None, CellType | None, str, object], ...]
        """(module globals, cell, name, object) per variable read at compile time, checked at
        each call (Note [Values read once] in `frontend.compile`)."""
        self.arity = len(self.signature.parameters)
        """How many parameters the function has; its graph has `free` inputs more."""
        self._compile()
        # Bounded, and counting compilations for the RecompileWarning: Note [Cache bounds]
        self.cache: CompilationCache[CompilationUnit] = CompilationCache(
            f"{self.qualname}()", counts=True
        )
        """The compilation units per signature key: Note [Compilation units]."""
        # How many arguments a call given by position only may pass for the short way of
        # Note [Specialisation cache]: one per parameter, when every parameter may be given
        # by position (else -1: such a call always binds).
        parameters = self.signature.parameters.values()
        by_position = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        self.positional_arity = (
            len(parameters) if all(p.kind in by_position for p in parameters) else -1
        )
        self.parsed: CompilationCache[Graph] = CompilationCache(f"{self.qualname}()")
        # A gradient's __dict__ (its own cache) stays its own.
        functools.update_wrapper(self, fn, updated=() if self.graph_of else ("__dict__",))

    def _compile(self) -> None:
        """Parse and emit the function (a gradient's graph is built per types instead)."""
        self.read_once = ()
        if self.graph_of is None:
            compiled = compile_with_free_variables(self.fn)
            run_module_passes(compiled.module, [("inline", {"entry_only": True})])
            self._graph = next(iter(compiled.module.values()))
            self.free = compiled.free
            self.read_once = tuple(
                (r.variable.namespace, r.variable.cell, r.variable.name, r.value)
                for r in compiled.read_once
            )
        self.input_names = [*self.signature.parameters, *(v.name for v in self.free)]
        inner = getattr(self.fn, "scripted", None) if self.graph_of is not None else None
        self.inner = inner if isinstance(inner, ScriptFunction) else None
        """For a gradient or a Jacobian, the function it differentiates."""
        self.guarded = bool(self.read_once) or self.inner is not None
        """Whether a call must first check `stale` (Note [Values read once])."""

    def stale(self) -> bool:
        """Whether a variable read at compile time holds another object now, or, for a
        gradient or a Jacobian, the function it differentiates is stale (Note [Values read
        once] in `frontend.compile`)."""
        for namespace, cell, name, value in self.read_once:
            if cell is None:
                assert namespace is not None
                if namespace.get(name, _MISSING) is not value:
                    return True
            else:
                try:
                    if cell.cell_contents is not value:
                        return True
                except ValueError:  # the cell was emptied
                    return True
        return self.inner is not None and self.inner.stale()

    def refresh(self) -> None:
        """Compile again, from the variables' values now, dropping every compilation made from
        the old ones (Note [Values read once] in `frontend.compile`)."""
        forget_stale()
        if self.inner is not None and self.inner.stale():
            self.inner.refresh()
        self._graph = None
        self._compile()
        self.cache.clear()
        self.parsed.clear()

    @property
    def graph(self) -> Graph:
        """The function as parsed, helpers inlined; for a gradient or a Jacobian, its graph
        for the declared parameter types."""
        if self._graph is None:
            assert self.graph_of is not None
            self._graph = self.graph_of(None)
        return self._graph

    @property
    def __autodiff_source__(self) -> Callable[..., Any]:
        """The plain function, compiled in its place when scripted code calls this one.
        See Note [Calling compiled functions] in `frontend.calls`."""
        return self.fn

    @property
    def qualname(self) -> str:
        return str(getattr(self.fn, "__qualname__", None) or self.graph.name)

    def declared_types(self) -> list[Type]:
        """The parameters' declared types; a gradient's or a Jacobian's checks its own when
        its graph is built for argument types (`parsed_for`)."""
        if self.graph_of is not None:
            return [TensorType() for _ in self.signature.parameters]
        return [v.ty for v in self.graph.inputs]

    def __repr__(self) -> str:
        return f"<ScriptFunction {self.qualname}>"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.guarded and self.stale():
            self.refresh()
        found = None
        given: Sequence[Any] = args
        if not kwargs and len(args) == self.positional_arity:  # Note [Specialisation cache]
            if self.free:
                given = self.with_free(args)
            cache = self.cache
            key = signature_key(given)
            unit = cache.get(key)
            if unit is not None:
                found = unit.executable
                if len(cache) > 1:  # most recently used: Note [Cache bounds]
                    cache.move_to_end(key)
        if found is not None:
            results = found.run(list(given))
        else:
            values = self.runtime_values(args, kwargs)
            results = self.executable_for(values).run(values)
        if len(results) == 1:
            return results[0]
        return tuple(results) if results else None

    def graph_for(self, *args: Any, **kwargs: Any) -> Graph:
        """The specialised graph a call with these arguments runs."""
        if self.guarded and self.stale():
            self.refresh()
        return self.executable_for(self.runtime_values(args, kwargs)).graph

    def graph_for_types(
        self, types: Sequence[Type], number_inputs: str = "", strided_inputs: str = ""
    ) -> Graph:
        """The graph specialised to parameter types given directly (one per parameter, then one
        per global array it reads: `free`); the parameters at ``number_inputs`` are given NumPy
        scalars (`numpy_scalar_positions`), those in ``strided_inputs`` arrays with those
        strides (`strided_inputs`)."""
        names = self.input_names
        if len(types) != len(names):
            raise ArgumentError(
                f"{self.qualname}() takes {len(names)} parameter types, got {len(types)}"
            )
        for name, declared, ty in zip(names, self.declared_types(), types, strict=True):
            self.check_declared(name, declared, ty)
        try:
            parsed = self.parsed_for(types, strided_inputs)
            return typed_graph(
                parsed, list(types), number_inputs, strided_inputs, lower_tuples=False
            )
        except ShapeError as error:
            arguments = ", ".join(f"{n}: {t}" for n, t in zip(names, types, strict=True))
            error.add_note_line(f"in {self.qualname}({arguments})")
            raise

    def parsed_for(self, types: Sequence[Type], strided_inputs: str = "") -> Graph:
        """The parsed graph to specialise to ``types``: ``graph``, or where an unannotated
        parameter gets a Python number, the function compiled with that parameter typed so
        (Note [Python numbers for unannotated parameters]); for a gradient or a Jacobian, its
        graph built for ``types`` and the arrays' layouts (``strided_inputs``: the function it
        differentiates decides reshapes by them, Note [Views] in `ir.ops.views`)."""
        if self.graph_of is not None:
            key = (tuple(types), strided_inputs)
            built = self.parsed.lookup(key)
            if built is None:
                built = self.graph_of(types, strided_inputs)
                self.parsed.store(key, built)
            return built
        numbers = tuple(
            ty if ty in _SCALAR_TYPES and declared.ty == TensorType() else TensorType()
            for declared, ty in zip(self.graph.inputs[: self.arity], types, strict=False)
        )
        if all(ty == TensorType() for ty in numbers) or not isinstance(self.fn, FunctionType):
            return self.graph
        graph = self.parsed.lookup(numbers)
        if graph is None:
            compiled = compile_with_free_variables(self.fn, argument_types=numbers)
            module, free = compiled.module, compiled.free
            if len(free) != len(self.free) or not all(
                a.same_as(b) for a, b in zip(free, self.free, strict=True)
            ):
                raise ArgumentError(
                    f"{self.qualname}() reads other global arrays when given Python numbers "
                    "than when compiled: pass the arrays it reads as arguments"
                )
            run_module_passes(module, [("inline", {"entry_only": True})])
            graph = next(iter(module.values()))
            graph.name = self.graph.name
            self.parsed.store(numbers, graph)
        return graph

    def runtime_values(self, args: Sequence[Any], kwargs: dict[str, Any]) -> list[Any]:
        """The arguments bound to the parameters in order, as the interpreter receives them,
        then the global arrays the function reads (Note [Free variables])."""
        bound = bind_arguments(self.qualname, self.signature, args, kwargs)
        values = [
            runtime_value(self.qualname, name, value)
            for name, value in zip(self.signature.parameters, bound, strict=True)
        ]
        for variable in self.free:
            value = variable.read()
            if type(value) is not np.ndarray:
                runtime_value(self.qualname, variable.name, value)  # refuses np.matrix, ...
                raise ArgumentError(
                    f"'{variable.name}', which {self.qualname}() reads, was an array when it "
                    f"was compiled and is now {_kind(value)}: keep it an array, or pass it as "
                    "an argument"
                )
            values.append(value)
        return values

    def with_free(self, args: Sequence[Any]) -> list[Any]:
        """``args`` followed by the current values of the global arrays the function reads,
        as a call by position passes them (Note [Free variables])."""
        return [*args, *(variable.read() for variable in self.free)]

    def executable_for(self, values: Sequence[Any]) -> Runnable:
        """The plain call's executable for these runtime values, compiled on first use."""
        key, unit = self.unit_for(values)
        if unit.executable is None:
            graph = self.graph_for_types(unit.types, unit.number_inputs, unit.strided_inputs)
            unit.executable = executable(graph)
            self.keep(key, unit)
        return unit.executable

    def unit_for(self, values: Sequence[Any]) -> tuple[SignatureKey, CompilationUnit]:
        """The signature key of these runtime values and its compilation unit: the cached one,
        or a new one (with the arguments checked and typed) for `keep` to store once something
        compiled for it. See Note [Compilation units] in `autodiff.unit`."""
        key = signature_key(values)
        unit = self.cache.lookup(key)
        if unit is None:
            names = self.input_names
            types = [
                argument_type(self.qualname, name, value)
                for name, value in zip(names, values, strict=True)
            ]
            for name, declared, ty in zip(names, self.declared_types(), types, strict=True):
                self.check_declared(name, declared, ty)
            unit = CompilationUnit(types, numpy_scalar_positions(values), strided_inputs(values))
        return key, unit

    def keep(self, key: SignatureKey, unit: CompilationUnit, what: str | None = None) -> None:
        """Store ``unit`` under ``key`` unless it is there; ``what`` names what was compiled
        for the `RecompileWarning` (Note [Cache bounds])."""
        if self.cache.get(key) is not unit:
            self.cache.store(key, unit, what)

    def check_declared(self, name: str, declared: Type, given: Type) -> None:
        """An argument for an ``int``/``float``/``bool`` parameter must be a Python number."""
        if declared in _SCALAR_TYPES and isinstance(given, TensorType):
            raise ArgumentError(
                f"argument '{name}' of {self.qualname}() is annotated {declared}, "
                f"got an array of type {given}"
            )


_MISSING = object()


def _kind(value: Any) -> str:
    kind = type(value).__name__
    return f"an {kind}" if kind[:1] in "aeiou" else f"a {kind}"


_SCRIPTED_ATTRIBUTE = "__autodiff_scripted__"


def scripted_for(fn: Callable[..., Any]) -> ScriptFunction:
    """``fn`` as a ScriptFunction: itself if it is one, else the one kept on ``fn`` (made on
    first use), so that calls like ``ad.vjp(f, x)`` in a loop compile once per signature. It is
    kept as an attribute of ``fn``, not in a table of ours: it refers to ``fn``, so a table
    would keep every function alive; on ``fn`` it goes when ``fn`` does. A callable that
    takes no attributes (a bound method) is scripted anew each time."""
    if isinstance(fn, ScriptFunction):
        return fn
    attributes = getattr(fn, "__dict__", None)
    found = attributes.get(_SCRIPTED_ATTRIBUTE) if isinstance(attributes, dict) else None
    if not isinstance(found, ScriptFunction) or found.fn is not fn:
        found = ScriptFunction(fn)
        with contextlib.suppress(AttributeError, TypeError):
            setattr(fn, _SCRIPTED_ATTRIBUTE, found)
    return found
