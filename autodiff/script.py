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

# Note [Compiling for containers]
# ``ad.script`` compiles the function for its declared parameter types, arrays unless
# annotated, so that bad code is reported at once. A function meant to take a list or a dict
# (``for W, b in params``, ``params["W"]``) uses a parameter as a container there, which an
# array cannot be: that error (`ContainerUseError`) is held back rather than raised, and the
# function is compiled per container structure when called (Note [Pytree arguments] in
# `autodiff.pytrees`). A call with arrays raises the held-back error then, as it was found.
# The global arrays and the values read once are then known from the first compilation for
# containers, which the others must agree with.

# Note [Array kinds]
# Compiled as declared, an array parameter is a Tensor of unknown rank, which may be an
# ndarray or, given a 0-d value, a NumPy scalar: ``isinstance(x, np.ndarray)`` cannot be
# decided there, and that error is held back as a container use is. A call with arrays then
# compiles the function for its arguments' ranks (`array_kind`): an n-d array is an ndarray, so
# the test is decided; of a 0-d argument (a NumPy scalar or a 0-d array, which the signature
# key tells apart but the type does not) the held-back error is raised.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import inspect
from collections import OrderedDict
from collections.abc import Callable, Sequence
from types import CellType, FunctionType, MethodType
from typing import Any

import numpy as np

from autodiff.cache import CompilationCache
from autodiff.pytrees import (
    CONTAINER_TYPES,
    PyTreeSpec,
    checked_leaves,
    flatten,
    is_pytree,
    leaf_names,
    parameter_types,
)
from autodiff.specialize import (
    GENERATORS,
    ArgumentError,
    PythonComplex,
    SignatureKey,
    argument_type,
    bind_arguments,
    numpy_scalar_positions,
    runtime_value,
    signature_key,
    strided_inputs,
    typed_graph,
)
from autodiff.structures import Structure, structure_of
from autodiff.tiering import native_mode, tiered_runnable
from autodiff.tracebacks import api_boundary, shorten
from autodiff.unit import CompilationUnit
from frontend.compile import (
    CompiledModule,
    FreeVariable,
    ReadOnce,
    compile_with_free_variables,
    forget_stale,
)
from frontend.errors import ContainerUseError, ScriptError
from frontend.objects import call_signature
from frontend.trees import KnownString, Tree, needs_rebuild, rebuild
from ir.backends import backend_of, backend_ops, check_supported
from ir.codegen import Runnable, executable
from ir.errors import AutodiffError, ShapeError
from ir.graph import Graph
from ir.types import BOOL, FLOAT, GENERATOR, INT, TensorType, Type
from passes.registry import run_module_passes

_SCALAR_TYPES = (INT, FLOAT, BOOL)
# Argument types an unannotated parameter is compiled for, rather than an array: Python
# numbers (Note [Python numbers for unannotated parameters]) and random generators (Note
# [Random draws] in `ir.ops.random`).
_SPECIALISED = (*_SCALAR_TYPES, GENERATOR)


class ScriptFunction:
    """What ``ad.script(fn)`` returns: callable like ``fn``, with its IR at hand.

    ``graph`` is the function as parsed, helpers inlined; ``graph_for(*args)`` is the graph
    specialised to those arguments, the one a call with them runs. See Note [Specialisation
    cache].
    """

    @api_boundary
    def __init__(self, fn: Callable[..., Any]) -> None:
        # an object that is no function but has one to compile in its place (``ad.custom_vjp``)
        fn = getattr(fn, "__autodiff_twin__", fn)
        self.fn = fn
        self.signature = call_signature(fn)  # a partial's fixed keywords are not parameters
        # A gradient or a Jacobian (Note [Gradient graphs] in autodiff.higher_order): its graph
        # is built per argument types and layouts (`parsed_for`); the one for the declared
        # types, when asked.
        self.graph_of: Callable[..., Graph] | None = getattr(fn, "__autodiff_graph__", None)
        self._graph: Graph | None = None
        self.free: tuple[FreeVariable, ...] = ()
        # the containers' structure of the last call with some: `fast_key`
        self.last_structure: Structure | None = None
        """The global and closure arrays the function reads, its graph's inputs after the
        parameters, read again at each call (Note [Free variables] in `frontend.compile`)."""
        self.read_once: tuple[tuple[dict[str, Any] | None, CellType | None, str, object], ...]
        """(module globals, cell, name, object) per variable read at compile time, checked at
        each call (Note [Values read once] in `frontend.compile`)."""
        self.arity = len(self.signature.parameters)
        """How many parameters the function has; its graph has `free` inputs more."""
        kinds = [p.kind for p in self.signature.parameters.values()]
        self.variadic = frozenset(
            i for i, kind in enumerate(kinds) if kind in (kind.VAR_POSITIONAL, kind.VAR_KEYWORD)
        )
        """The positions of ``*args`` and ``**kwargs``: always pytrees (Note [Pytree
        arguments] in `autodiff.pytrees`)."""
        self.star = next(
            (i for i, kind in enumerate(kinds) if kind == inspect.Parameter.VAR_POSITIONAL), None
        )
        """The position of ``*args``, if any: `ad.grad`'s ``argnums`` then count the arguments
        given by position, as JAX's do."""
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
        self.results: dict[tuple[Type, ...], Type] = {}
        """The result type per parameter types compiled for in `parsed`."""
        self.native: bool | None = None
        """Plain calls on the native tier: True from the first call, False never, None as
        ``AUTODIFF_NATIVE`` says (Note [Tiering] in `autodiff.tiering`)."""
        # A gradient's __dict__ (its own cache) stays its own.
        functools.update_wrapper(self, fn, updated=() if self.graph_of else ("__dict__",))

    def _compile(self) -> None:
        """Parse and emit the function (a gradient's graph is built per types instead). An
        error that only says a parameter is used as a container is held back: Note [Compiling
        for containers]."""
        self.read_once = ()
        self.guards: tuple[ReadOnce, ...] = ()
        self.held_back: ScriptError | None = None
        self.declared_result: Type | None = None
        """The result's type as compiled for the declared parameter types."""
        if self.graph_of is None:
            try:
                compiled = compile_with_free_variables(self.fn)
            except ScriptError as error:
                # Compiled for no extra arguments, ``args[0]`` of ``*args`` is out of range:
                # every call compiles for its own (Note [Variadic parameters] in
                # frontend.signatures).
                if not (isinstance(error, ContainerUseError) or self.variadic):
                    raise
                self.held_back = error
            else:
                run_module_passes(compiled.module, [("inline", {"entry_only": True})])
                self._graph = next(iter(compiled.module.values()))
                self.declared_result = compiled.result
                self.adopt(compiled)
        self.guard()

    def adopt(self, compiled: CompiledModule) -> None:
        """Take the global arrays and the values read once of ``compiled`` as the function's."""
        self.free = compiled.free
        self.read_once = tuple(
            (r.variable.namespace, r.variable.cell, r.variable.name, r.value)
            for r in compiled.read_once
            if r.plain
        )
        # attributes, items and containers: Note [Reading objects from outside] in
        # frontend.objects
        self.guards = tuple(r for r in compiled.read_once if not r.plain)
        self.guard()

    def guard(self) -> None:
        """Name the graph's inputs, and decide whether calls check `stale` first."""
        inner = getattr(self.fn, "scripted", None) if self.graph_of is not None else None
        self.inner = inner if isinstance(inner, ScriptFunction) else None
        """For a gradient or a Jacobian, the function it differentiates."""
        if self.inner is not None:  # its graph reads what the function does
            self.free = self.inner.free
        self.input_names = [*self.signature.parameters, *(v.name for v in self.free)]
        self.guarded = bool(self.read_once or self.guards) or self.inner is not None
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
        if any(guard.changed() for guard in self.guards):
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
        self.results.clear()

    @property
    @api_boundary
    def graph(self) -> Graph:
        """The function as parsed, helpers inlined; for a gradient or a Jacobian, its graph
        for the declared parameter types."""
        if self._graph is None and self.held_back is not None:
            raise self.held_back.with_traceback(None)
        if self._graph is None:
            assert self.graph_of is not None
            self._graph = self.graph_of(None)
        return self._graph

    @property
    def __autodiff_source__(self) -> Callable[..., Any]:
        """The plain function, compiled in its place when scripted code calls this one.
        See Note [Calling compiled functions] in `frontend.function_calls`."""
        return self.fn

    @property
    def qualname(self) -> str:
        """The function's name in messages: a partial's is its function's. Not the graph's,
        which may not be built yet (Note [Compiling for containers])."""
        fn = self.fn
        while isinstance(fn, functools.partial):
            fn = fn.func
        return str(getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or fn)

    def declared_types(self) -> list[Type]:
        """The parameters' declared types; a gradient's or a Jacobian's checks its own when
        its graph is built for argument types (`parsed_for`)."""
        if self.graph_of is not None:  # and the global arrays it reads
            return [TensorType() for _ in self.input_names]
        if self._graph is None and self.held_back is not None:  # Note [Compiling for containers]
            return [TensorType() for _ in self.input_names]
        return [v.ty for v in self.graph.inputs]

    def __repr__(self) -> str:
        return f"<ScriptFunction {self.qualname}>"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        try:  # a boundary: Note [Traceback filtering] in autodiff.tracebacks
            if self.guarded and self.stale():
                self.refresh()
            found = None
            unit = None
            given: Sequence[Any] = args
            if not kwargs and len(args) == self.positional_arity:  # Note [Specialisation cache]
                key, given = self.fast_key(args)
                cache = self.cache
                unit = cache.get(key)
                if unit is not None:
                    found = unit.executable
                    if len(cache) > 1:  # most recently used: Note [Cache bounds]
                        cache.move_to_end(key)
                elif self.positional_arity > 0 and any(
                    a is None or isinstance(a, CONTAINER_TYPES) for a in args
                ):
                    key, given = self.tree_key(args)  # Note [Pytree arguments]
                    unit = cache.get(key)
                    if unit is not None:
                        found = unit.executable
            if found is not None:
                results = found.run(list(given))
            else:
                values, spec = self.runtime_call(args, kwargs)
                key, unit = self.unit_for(values, spec)
                results = self.executable_of(key, unit).run(values)
            assert unit is not None
            result = results[0] if len(results) == 1 else tuple(results) if results else None
            return result if unit.rebuild is None else rebuild(result, unit.rebuild)
        except AutodiffError as error:
            shorten(error)
            raise

    def fast_key(self, args: Sequence[Any]) -> tuple[SignatureKey, Sequence[Any]]:
        """The signature key and runtime values of a call by position, as a cache hit takes
        them: through the structure of the last call with containers when the arguments have
        it (Note [Structure-specialised flattening] in `autodiff.structures`), else as they
        are."""
        structure = self.last_structure
        if structure is not None:
            leaves = structure.leaves(args)
            if leaves is not None:
                if self.free:
                    leaves = self.with_free(leaves)
                return (structure, *signature_key(leaves)), leaves
        given = self.with_free(args) if self.free else args
        return signature_key(given), given

    def tree_key(self, args: Sequence[Any]) -> tuple[SignatureKey, list[Any]]:
        """The signature key and runtime values of a call by position with container
        arguments, taken as they come (Note [Pytree arguments] in `autodiff.pytrees`): a key
        that nothing is stored under when an argument would be converted or refused."""
        leaves, spec = flatten(tuple(args))
        if self.free:
            leaves = self.with_free(leaves)
        structure = structure_of(spec)
        self.last_structure = structure
        return (structure, *signature_key(leaves)), leaves

    @api_boundary
    def graph_for(self, *args: Any, **kwargs: Any) -> Graph:
        """The specialised graph a call with these arguments runs."""
        if self.guarded and self.stale():
            self.refresh()
        values, spec = self.runtime_call(args, kwargs)
        key, unit = self.unit_for(values, spec)
        return self.executable_of(key, unit).graph

    @api_boundary
    def graph_for_types(
        self,
        types: Sequence[Type],
        number_inputs: str = "",
        strided_inputs: str = "",
        parameters: Sequence[Type] | None = None,
        leaf_names: Sequence[str] = (),
    ) -> Graph:
        """The graph specialised to parameter types given directly (one per parameter, then one
        per global array it reads: `free`); the parameters at ``number_inputs`` are given NumPy
        scalars (`numpy_scalar_positions`), those in ``strided_inputs`` arrays with those
        strides (`strided_inputs`). With container arguments, ``types`` has one type per leaf
        (named ``leaf_names`` in messages) and ``parameters`` the parameters' types
        (`autodiff.pytrees.parameter_types`)."""
        names = self.input_names
        if parameters is None:
            if len(types) != len(names):
                raise ArgumentError(
                    f"{self.qualname}() takes {len(names)} parameter types, got {len(types)}"
                )
            for name, declared, ty in zip(names, self.declared_types(), types, strict=True):
                self.check_declared(name, declared, ty)
        else:
            names = list(leaf_names) or [f"%{i}" for i in range(len(types))]
        try:
            parsed = self.parsed_for(types, strided_inputs, parameters)
            return typed_graph(
                parsed, list(types), number_inputs, strided_inputs, lower_tuples=False
            )
        except ShapeError as error:
            described = [f"{n}: {t}" for n, t in zip(names, types, strict=True)]
            # strings are no inputs: Note [Strings known while compiling] in frontend.trees
            described += [
                f"{n}={t}"
                for n, t in zip(self.signature.parameters, parameters or (), strict=False)
                if isinstance(t, KnownString)
            ]
            error.add_note_line(f"in {self.qualname}({', '.join(described)})")
            raise

    def parsed_for(
        self,
        types: Sequence[Type],
        strided_inputs: str = "",
        parameters: Sequence[Type] | None = None,
    ) -> Graph:
        """The parsed graph to specialise to ``types``: ``graph``, or where an unannotated
        parameter gets a Python number, the function compiled with that parameter typed so
        (Note [Python numbers for unannotated parameters]); for a gradient or a Jacobian, its
        graph built for ``types`` and the arrays' layouts (``strided_inputs``: the function it
        differentiates decides reshapes by them, Note [Views] in `ir.ops.views`). With
        container arguments, ``parameters`` are the parameters' types, `Tree`s among them
        (Note [Pytree arguments] in `autodiff.pytrees`)."""
        if parameters is not None:
            return self.compiled_for(tuple(parameters))
        if self.graph_of is not None:
            key = (tuple(types), strided_inputs)
            built = self.parsed.lookup(key)
            if built is None:
                built = self.graph_of(types, strided_inputs)
                self.parsed.store(key, built)
            return built
        numbers = self.kinds_compiled_for(types)
        return self.graph if numbers is None else self.compiled_for(numbers)

    def kinds_compiled_for(self, types: Sequence[Type]) -> tuple[Type, ...] | None:
        """The parameter types the function is compiled again for, for arguments of ``types``
        (no containers among them), or None when the declared compilation serves."""
        numbers = tuple(
            ty if ty in _SPECIALISED and declared == TensorType() else self.array_kind(ty)
            for declared, ty in zip(self.declared_types()[: self.arity], types, strict=False)
        )
        if all(ty == TensorType() for ty in numbers) or not _compiles(self.fn):
            return None
        return numbers

    def array_kind(self, ty: Type) -> Type:
        """What the function is compiled for, for an array argument of type ``ty``: a Tensor,
        or, when compiling for arrays as declared was held back, a Tensor of its rank, so that
        ``isinstance(x, np.ndarray)`` of an n-d array is decided (Note [Array kinds])."""
        if self.held_back is None or not isinstance(ty, TensorType) or not ty.shape:
            return TensorType()
        return TensorType(None, (None,) * len(ty.shape))

    def compiled_for(self, parameters: tuple[Type, ...]) -> Graph:
        """The function compiled again for these parameter types (Python numbers, containers),
        helpers inlined; its result's type is kept for `result_for`."""
        graph = self.parsed.lookup(parameters)
        if graph is None:
            if self.graph_of is not None or not _compiles(self.fn):
                raise ArgumentError(
                    f"{self.qualname}() takes arrays and numbers only, not lists, tuples or "
                    "dicts of them"
                )
            compiled = compile_with_free_variables(
                self.fn, argument_types=parameters, keep_ranks=self.held_back is not None
            )
            module, free = compiled.module, compiled.free
            if self.held_back is not None and not self.results:
                self.adopt(compiled)  # the first compilation: Note [Compiling for containers]
            if len(free) != len(self.free) or not all(
                a.same_as(b) for a, b in zip(free, self.free, strict=True)
            ):
                raise ArgumentError(
                    f"{self.qualname}() reads other global arrays for these argument kinds "
                    "than when compiled: pass the arrays it reads as arguments"
                )
            run_module_passes(module, [("inline", {"entry_only": True})])
            graph = next(iter(module.values()))
            if self._graph is not None:
                graph.name = self.graph.name
            self.parsed.store(parameters, graph)
            self.results[parameters] = compiled.result
        return graph

    def result_for(
        self, parameters: Sequence[Type] | None, types: Sequence[Type] = ()
    ) -> Type | None:
        """The type of the result for these parameter types (`parsed_for`; for arguments of
        ``types`` when none is a container), a `Tree` when it holds containers that must be
        rebuilt (Note [Containers known while compiling] in `frontend.trees`), else None: a
        dict returned for array arguments comes back a dict, not the tuple the graph gives."""
        if parameters is None:
            if self.graph_of is not None:
                return None
            parameters = self.kinds_compiled_for(types)
            if parameters is None:
                result = self.declared_result
                return result if result is not None and needs_rebuild(result) else None
        self.compiled_for(tuple(parameters))
        result = self.results.get(tuple(parameters))
        return result if result is not None and needs_rebuild(result) else None

    def runtime_values(self, args: Sequence[Any], kwargs: dict[str, Any]) -> list[Any]:
        """The arguments bound to the parameters in order, as the interpreter receives them,
        then the global arrays the function reads (Note [Free variables]); container
        arguments give their leaves (`runtime_call`)."""
        return self.runtime_call(args, kwargs)[0]

    def runtime_call(
        self, args: Sequence[Any], kwargs: dict[str, Any]
    ) -> tuple[list[Any], PyTreeSpec | None]:
        """`runtime_values`, and the structure of the parameters when some argument is a
        container: Note [Pytree arguments] in `autodiff.pytrees`."""
        bound = bind_arguments(self.qualname, self.signature, args, kwargs)
        names = list(self.signature.parameters)
        trees = [i in self.variadic or is_pytree(value) for i, value in enumerate(bound)]
        if any(trees):
            parameters = [
                value if tree else runtime_value(self.qualname, name, value)
                for name, value, tree in zip(names, bound, trees, strict=True)
            ]
            for name, value, tree in zip(names, parameters, trees, strict=True):
                if tree:
                    checked_leaves(self.qualname, name, value)
            values, spec = flatten(tuple(parameters))
            # A complex leaf is a 0-d complex128 array: Note [Python complex numbers] in ir.types
            values = [PythonComplex(v) if type(v) is complex else v for v in values]
            if self.held_back is not None and not self.results:
                # Which global arrays it reads is known once it compiles: Note [Compiling
                # for containers].
                leaf_types = [argument_type(self.qualname, "", value) for value in values]
                self.compiled_for(self.parameter_types(spec, leaf_types))
        else:
            values = [
                runtime_value(self.qualname, name, value)
                for name, value in zip(names, bound, strict=True)
            ]
            spec = None
            if self.held_back is not None and not self.results:
                # compiled for these kinds (numbers, generators) first, or the held-back error
                types = [
                    argument_type(self.qualname, n, v) for n, v in zip(names, values, strict=True)
                ]
                self.parsed_for(types)
        return self.checked_free(values), spec

    def checked_free(self, values: list[Any]) -> list[Any]:
        """``values`` followed by the global arrays the function reads, checked to be arrays
        still."""
        for variable in self.free:
            value = variable.read()
            if type(value) is not np.ndarray and not isinstance(value, GENERATORS):
                runtime_value(self.qualname, variable.name, value)  # refuses np.matrix, ...
                raise ArgumentError(
                    f"'{variable.name}', which {self.qualname}() reads, was an array when it "
                    f"was compiled and is now {_kind(value)}: keep it an array, or pass it as "
                    "an argument"
                )
            values.append(value)
        return values

    def with_free_types(self, types: Sequence[Type]) -> list[Type]:
        """The parameters' ``types``, followed by those of the global arrays the function reads
        when they are not among them (a scripted caller gives the parameters' only): arrays of
        any shape, or generators."""
        if len(types) >= len(self.input_names) or not self.free:
            return list(types)
        kinds = [isinstance(variable.read(), GENERATORS) for variable in self.free]
        return [*types, *(GENERATOR if g else TensorType() for g in kinds)]

    def with_free(self, args: Sequence[Any]) -> list[Any]:
        """``args`` followed by the current values of the global arrays the function reads,
        as a call by position passes them (Note [Free variables])."""
        return [*args, *(variable.read() for variable in self.free)]

    def executable_for(self, values: Sequence[Any]) -> Runnable:
        """The plain call's executable for these runtime values (no container arguments),
        compiled on first use."""
        key, unit = self.unit_for(values)
        return self.executable_of(key, unit)

    def executable_of(self, key: SignatureKey, unit: CompilationUnit) -> Runnable:
        """The plain call's executable of ``unit``, compiled on first use."""
        if unit.executable is None:
            graph = self.graph_for_types(
                unit.types, unit.number_inputs, unit.strided_inputs, unit.parameters, unit.names
            )
            if unit.backend is None:
                unit.executable = tiered_runnable(executable(graph), unit, native_mode(self.native))
            else:  # Note [Array backends] in ir.backends
                ops = backend_ops(unit.backend)
                check_supported(graph, unit.backend, ops)
                unit.executable = executable(graph, ops)
            self.keep(key, unit)
        return unit.executable

    def unit_for(
        self, values: Sequence[Any], spec: PyTreeSpec | None = None
    ) -> tuple[SignatureKey, CompilationUnit]:
        """The signature key of these runtime values and its compilation unit: the cached one,
        or a new one (with the arguments checked and typed) for `keep` to store once something
        compiled for it. ``spec`` is the parameters' structure when some argument is a
        container (Note [Pytree arguments] in `autodiff.pytrees`). See Note [Compilation
        units] in `autodiff.unit`."""
        key = (
            signature_key(values) if spec is None else (structure_of(spec), *signature_key(values))
        )
        unit = self.cache.lookup(key)
        if unit is None:
            names = self.input_names
            if spec is not None:
                params = list(self.signature.parameters)
                names = [*leaf_names(spec, params), *(v.name for v in self.free)]
            types = [
                argument_type(self.qualname, name, value)
                for name, value in zip(names, values, strict=True)
            ]
            parameters = None
            if spec is None:
                for name, declared, ty in zip(names, self.declared_types(), types, strict=True):
                    self.check_declared(name, declared, ty)
            else:
                parameters = self.parameter_types(spec, types[: spec.num_leaves])
            unit = CompilationUnit(
                types, numpy_scalar_positions(values), strided_inputs(values), parameters, spec
            )
            unit.names = names
            unit.rebuild = self.result_for(parameters, types[: self.arity])
            unit.backend = backend_of(values)
        return key, unit

    def parameter_types(self, spec: PyTreeSpec, leaf_types: Sequence[Type]) -> tuple[Type, ...]:
        """`autodiff.pytrees.parameter_types`, with ``**kwargs`` a dict as in Python (it is
        flattened as an ``OrderedDict`` to keep the order of its keys)."""
        types = list(parameter_types(spec, leaf_types))
        for position in self.variadic:
            tree = types[position]
            if isinstance(tree, Tree) and tree.kind is OrderedDict:
                types[position] = dataclasses.replace(tree, kind=dict)
        return tuple(types)

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


def _compiles(fn: object) -> bool:
    """Whether ``fn`` is compiled from source per argument types: a Python function, or a
    bound method or partial of one (Note [Reading objects from outside] in `frontend.objects`)."""
    return isinstance(fn, FunctionType | MethodType | functools.partial)


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
    if not isinstance(found, ScriptFunction) or found.fn is not getattr(
        fn, "__autodiff_twin__", fn
    ):
        found = ScriptFunction(fn)
        with contextlib.suppress(AttributeError, TypeError):
            setattr(fn, _SCRIPTED_ATTRIBUTE, found)
    return found
