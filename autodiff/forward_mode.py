"""Forward mode, JAX's names: ``jvp``, ``linearize``, ``jacfwd`` and ``hvp`` (forward over
reverse), each running the compiled graph of `autodiff.jvp_graphs` (Note [Forward mode by
transposition] there), compiled once per call signature."""

from __future__ import annotations

import copy
import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from autodiff.errors import DifferentiationError
from autodiff.grad import Argnums, _check_declared_types, _positions, grad
from autodiff.gradient_call import describe
from autodiff.jvp_graphs import jacfwd_graph, jvp_graph, refuse_draws
from autodiff.pipeline import OutputTree
from autodiff.pytrees import PyTreeSpec, argument_parts, is_pytree
from autodiff.script import ScriptFunction, scripted_for
from autodiff.specialize import ArgumentError, typed_graph, unknown_layouts
from autodiff.tracebacks import api_boundary
from frontend.trees import rebuild
from ir.backends import (
    Backend,
    backend_of,
    backend_ops,
    check_supported,
    dtype_name,
    is_backend_array,
)
from ir.codegen import Runnable, executable
from ir.graph import Graph
from ir.types import FLOAT, Type
from passes.functionalize import WRITE_BACK
from passes.requires_grad import can_hold_gradient


@dataclass(frozen=True, slots=True)
class CompiledJvp:
    """A function's forward-mode graph for one call signature and set of tangents, compiled."""

    graph: Graph
    runnable: Runnable
    tree: OutputTree
    result_types: tuple[Type, ...]
    rebuild: Type | None
    writes: bool
    """Whether it writes to an argument (a run changes what the next one reads)."""
    loops: bool
    """Whether it has a loop (Note [Batched columns])."""

    def run(self, values: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
        """The results and their tangents for these runtime values and tangent leaves."""
        return self([*values, *tangents])

    def __call__(self, inputs: Sequence[Any]) -> tuple[Any, Any]:
        """As `run`, given the graph's inputs in one list: the way a unit's calls are called
        (Note [Compilation units] in `autodiff.unit`), which keep it."""
        outputs = self.runnable.run(list(inputs))
        width = len(self.result_types)
        # A Python float result and its tangent are floats (0-d arrays in the graph).
        as_returned = [
            float(value) if ty == FLOAT else value
            for value, ty in zip(outputs, self.result_types * 2, strict=True)
        ]
        return self.shaped(as_returned[:width]), self.shaped(as_returned[width:])

    def shaped(self, leaves: list[Any]) -> Any:
        """The results as the function returns them (`autodiff.unit.CompiledFunction.result`)."""
        found = iter(leaves)

        def build(tree: OutputTree) -> Any:
            if tree is None:
                return next(found)
            return type(tree)(build(part) for part in tree)

        result = build(self.tree)
        return result if self.rebuild is None else rebuild(result, self.rebuild)


def backend_executable(graph: Graph, backend: Backend | None) -> Runnable:
    """What runs forward-mode ``graph``: NumPy's kernels, or on a backend its own, after
    refusing, located, an operator it lacks (Note [Array backends] in `ir.backends`)."""
    if backend is None:
        return executable(graph)
    ops = backend_ops(backend)
    check_supported(graph, backend, ops)
    return executable(graph, ops)


def _shape(value: Any) -> tuple[Any, ...]:
    """A value's shape, a backend array's without converting it to NumPy."""
    return tuple(value.shape) if is_backend_array(value) else tuple(np.shape(value))


def _dtype(value: Any) -> np.dtype[Any]:
    """A value's dtype as NumPy's, a backend array's from its dtype's name."""
    return np.dtype(dtype_name(value.dtype)) if is_backend_array(value) else np.result_type(value)


def _is_complex(value: Any) -> bool:
    return _dtype(value).kind == "c" if is_backend_array(value) else np.iscomplexobj(value)


def _check_tangent(qualname: str, name: str, primal: Any, tangent: Any) -> Any:
    """``tangent`` checked against its ``primal`` (shape and dtype, as JAX checks them) and
    made an array."""
    if isinstance(tangent, list | tuple | dict):
        tangent = np.asarray(tangent)
    on_backend = is_backend_array(tangent)
    if not (on_backend or isinstance(tangent, np.ndarray | np.generic | float | int)) or isinstance(
        tangent, bool
    ):
        raise ArgumentError(
            f"the tangent of argument '{name}' of {qualname}() must be an array or a float, "
            f"not {describe(tangent)}"
        )
    if _shape(tangent) != _shape(primal):
        raise ArgumentError(
            f"the tangent of argument '{name}' of {qualname}() has shape {_shape(tangent)}, "
            f"but the argument has shape {_shape(primal)}"
        )
    primal_dtype, tangent_dtype = _dtype(primal), _dtype(tangent)
    if on_backend:  # as it is: np.asarray would compute a Dask tangent
        if tangent_dtype != primal_dtype:
            raise ArgumentError(
                f"the tangent of argument '{name}' of {qualname}() is {tangent_dtype}, but "
                f"the argument is {primal_dtype}: give it the argument's dtype"
            )
        return tangent
    if isinstance(primal, float) and tangent_dtype == np.float64:
        return float(tangent)
    if tangent_dtype != primal_dtype:
        raise ArgumentError(
            f"the tangent of argument '{name}' of {qualname}() is {tangent_dtype}, but the "
            f"argument is {primal_dtype}: give it the argument's dtype"
        )
    return np.asarray(tangent)


def _bind(
    scripted: ScriptFunction, primals: Sequence[Any], tangents: Sequence[Any]
) -> tuple[list[Any], list[Any], CompiledJvp]:
    """The runtime values of ``primals``, the tangents of the leaves differentiated, and the
    compiled forward-mode graph for them, kept in the function's compilation unit."""
    qualname = scripted.qualname
    if not isinstance(primals, tuple | list) or not isinstance(tangents, tuple | list):
        raise ArgumentError(
            f"jvp takes the primals and the tangents of {qualname}() as two tuples, got "
            f"{describe(primals)} and {describe(tangents)}"
        )
    if len(primals) != len(tangents):
        raise ArgumentError(
            f"jvp of {qualname}() got {len(primals)} primals and {len(tangents)} tangents: "
            "give one tangent per primal (None for none)"
        )
    if scripted.guarded and scripted.stale():  # Note [Values read once] in frontend.compile
        scripted.refresh()
    values, spec = scripted.runtime_call(tuple(primals), {})
    key, unit = scripted.unit_for(values, spec)
    names = unit.names or scripted.input_names
    wrt: list[int] = []
    given: list[Any] = []
    for i, tangent in _tangent_leaves(scripted, spec, tangents):
        if not can_hold_gradient(unit.types[i]):
            raise ArgumentError(
                f"argument '{names[i]}' of {qualname}() is of type {unit.types[i]}, which has "
                "no tangent: pass None as its tangent"
            )
        if _is_complex(values[i]) or _is_complex(tangent):
            raise ArgumentError(
                f"forward mode of {qualname}() with respect to the complex argument "
                f"'{names[i]}' is not supported: pass its real and imaginary parts as two "
                "real arguments"
            )
        given.append(_check_tangent(qualname, names[i], values[i], tangent))
        wrt.append(i)
    call_key = ("jvp", tuple(wrt))
    compiled = unit.calls.get(call_key)
    if not isinstance(compiled, CompiledJvp):
        parsed = scripted.parsed_for(unit.types, unit.strided_inputs, unit.parameters)
        built = jvp_graph(
            parsed,
            unit.types,
            wrt,
            number_inputs=unit.number_inputs,
            strided_inputs=unit.strided_inputs,
        )
        compiled = CompiledJvp(
            built.graph,
            backend_executable(built.graph, unit.backend),
            built.tree,
            built.result_types,
            unit.rebuild,
            any(n.kind == WRITE_BACK for n in built.graph.nodes()),
            any(n.kind == "prim::Loop" for n in built.graph.all_nodes()),
        )
        unit.calls[call_key] = compiled
        scripted.keep(key, unit, "jvp")
    return values, given, compiled


def _tangent_leaves(
    scripted: ScriptFunction, spec: PyTreeSpec | None, tangents: Sequence[Any]
) -> list[tuple[int, Any]]:
    """(position among the runtime values, tangent) per leaf given a tangent, in order: a
    tangent of a container argument is flattened up to the argument's structure (None for a
    whole argument or for one leaf holds it fixed)."""
    if spec is None:
        return [(i, t) for i, t in enumerate(tangents) if t is not None]
    # past *args, an argument is an item of it (Note [Variadic parameters])
    star = scripted.star if scripted.star is not None else len(tangents)
    positions = [i if i < star else (star, i - star) for i in range(len(tangents))]
    parameters = list(scripted.signature.parameters)
    found: list[tuple[int, Any]] = []
    parts = argument_parts(spec, positions)
    for position, (child, part), tangent in zip(positions, parts, tangents, strict=True):
        if tangent is None:
            continue
        try:
            leaves = child.flatten_up_to(tangent)
        except ValueError as error:
            name = (
                parameters[position]
                if isinstance(position, int)
                else f"{parameters[position[0]]}[{position[1]}]"
            )
            raise ArgumentError(
                f"the tangent of argument '{name}' of {scripted.qualname}() does not have the "
                f"structure of the argument: {error}"
            ) from None
        found.extend((i, t) for i, t in zip(part, leaves, strict=True) if t is not None)
    return found


@api_boundary
def jvp(fn: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    """``(fn(*primals), J v)``: the result and its directional derivative along ``tangents``
    (one per primal, of its structure, shape and dtype; None for an argument held fixed), in
    one run of a compiled forward-mode graph (Note [Forward mode by transposition] in
    `autodiff.jvp_graphs`). Every result must be a real floating-point array or float.

    >>> y, dy = ad.jvp(f, (x, w), (v, np.zeros_like(w)))
    >>> y, dy = ad.jvp(loss, (params, x), (dparams, None))   # pytrees as JAX takes them
    """
    scripted = scripted_for(fn)
    values, given, compiled = _bind(scripted, primals, tangents)
    return compiled.run(values, given)


@api_boundary
def linearize(fn: Callable[..., Any], *primals: Any) -> tuple[Any, Callable[..., Any]]:
    """``(fn(*primals), f_jvp)`` with ``f_jvp(*tangents) == jvp(fn, primals, tangents)[1]``.
    Each call of ``f_jvp`` runs the compiled JVP again on copies of the primals taken now (it
    does not keep the linear map apart from the function, as JAX's does).

    >>> y, f_jvp = ad.linearize(f, x)
    >>> dy = f_jvp(v)
    """
    kept = copy.deepcopy(primals)
    out = scripted_for(fn)(*primals)

    @api_boundary
    def f_jvp(*tangents: Any) -> Any:
        return jvp(fn, copy.deepcopy(kept), tangents)[1]

    return out, f_jvp


# Note [Batched columns]
# ``jacfwd`` of a function of n inputs needs n JVPs. Two ways run them: a loop over one
# compiled JVP graph, n runs of the function and its tangent; or one graph with the n tangent
# passes inlined (`jacfwd_graph`), where CSE leaves one forward pass for all of them. The
# second is about 3 times faster on a straight-line function of 8 inputs (`python -m
# benchmarks --only forward`) but its graph, and its compile time (about 10 ms a column),
# grows with n, and a loop in the function is repeated per column, not shared. So a call with
# at most BATCHED_COLUMNS columns and no loop in its JVP graph runs the one graph, and others
# the loop of JVPs.
BATCHED_COLUMNS = 16


class JacfwdFunction:
    """What ``ad.jacfwd`` returns: callable like the function, returning its Jacobian, a JVP
    per element of the argument (Note [Batched columns]); and, as a Jacobian is, a graph that
    can be differentiated again (Note [Forward Jacobian graphs] in `autodiff.jvp_graphs`)."""

    @api_boundary
    def __init__(self, fn: Callable[..., Any], argnums: Argnums) -> None:
        self.fn = fn
        self.scripted = scripted_for(fn)
        self.argnums = argnums
        functools.update_wrapper(self, self.scripted.fn, updated=())

    @api_boundary
    def __call__(self, *args: Any) -> Any:
        qualname = self.scripted.qualname
        names = list(self.scripted.signature.parameters)
        positions = _positions(qualname, self.argnums, len(args))
        for position in positions:
            if is_pytree(args[position]):
                raise DifferentiationError(
                    f"the jacfwd of {qualname}() with respect to '{names[position]}', a list, "
                    "tuple or dict of arrays, is not supported yet: pass one array (ad.flatten "
                    "makes one vector of them)"
                )
        if self.batched(args, positions):
            return self.run_batched(args, positions)
        jacobians = []
        for number, position in enumerate(positions):
            last = number == len(positions) - 1
            jacobians.append(self.jacobian(args, position, last))
        return jacobians[0] if isinstance(self.argnums, int) else tuple(jacobians)

    def batched(self, args: Sequence[Any], positions: Sequence[int]) -> bool:
        """Whether to run the Jacobian as one graph (Note [Forward Jacobian graphs]), whose
        columns share one forward pass, rather than one compiled JVP per column: for few
        columns (the graph grows with them) and no loop (which CSE does not share, so the
        graph would repeat it per column). See Note [Batched columns]."""
        if sum(max(np.size(args[p]), 1) for p in positions) > BATCHED_COLUMNS:
            return False
        tangents: list[Any] = [None for _ in args]
        tangents[positions[0]] = np.zeros(np.shape(args[positions[0]]))
        if isinstance(args[positions[0]], float):
            tangents[positions[0]] = 0.0
        elif isinstance(args[positions[0]], np.ndarray | np.generic):
            tangents[positions[0]] = np.zeros_like(args[positions[0]])
        return not _bind(self.scripted, args, tangents)[2].loops

    def run_batched(self, args: Sequence[Any], positions: Sequence[int]) -> Any:
        """The Jacobian by one compiled `jacfwd_graph`, kept among the calls of the function's
        compilation unit, so that ``ad.jacfwd(f)(x)`` made anew each time compiles once."""
        scripted = self.scripted
        values, spec = scripted.runtime_call(tuple(args), {})
        key, unit = scripted.unit_for(values, spec)
        several = not isinstance(self.argnums, int)
        call_key = ("jacfwd", tuple(positions), several)
        compiled = unit.calls.get(call_key)
        if compiled is None:
            graph = typed_graph(
                jacfwd_graph(
                    scripted.parsed_for(unit.types, unit.strided_inputs),
                    unit.types,
                    positions,
                    several=several,
                    strided_inputs=unit.strided_inputs,
                ),
                unit.types,
                unit.number_inputs,
                unit.strided_inputs,
            )
            runnable = backend_executable(graph, unit.backend)

            def compiled(inputs: Sequence[Any]) -> Any:
                outputs = runnable.run(list(inputs))
                return outputs[0] if len(outputs) == 1 else tuple(outputs)

            unit.calls[call_key] = compiled
            scripted.keep(key, unit, "jacfwd")
        return compiled(values)

    def jacobian(self, args: Sequence[Any], position: int, last: bool) -> Any:
        """The Jacobian w.r.t. the argument at ``position``: one JVP per element, along the
        unit vectors; the runs before the last one get copies of the arguments, so that what
        the function writes to is written once, as a call would."""
        backend = backend_of(args)
        argument = args[position]
        if not is_backend_array(argument):
            argument = np.asarray(argument)
        shape = tuple(argument.shape)
        dtype = np.dtype(dtype_name(argument.dtype))
        dtype = dtype if dtype.kind == "f" else np.dtype(np.float64)
        size = math.prod(shape)
        count = max(size, 1)  # an empty argument: one run, for the result's shape

        def basis(index: int) -> Any:
            found = np.zeros(shape, dtype)
            if size:
                found.flat[index] = 1
            if backend is not None and is_backend_array(argument):  # the primal's library
                return backend.namespace().asarray(found)
            return found

        tangents: list[Any] = [None for _ in args]
        tangents[position] = basis(0)
        values, _, compiled = _bind(self.scripted, args, tangents)
        refuse_draws(self.qualname, compiled.graph)
        columns = []
        for index in range(count):
            run_values = values
            if compiled.writes and not (last and index == count - 1):
                run_values = copy.deepcopy(values)
            direction = basis(index)
            out, tangent = compiled.run(
                run_values, [float(direction) if isinstance(args[position], float) else direction]
            )
            if isinstance(out, tuple | list | dict):
                raise DifferentiationError(
                    f"jacfwd needs {self.scripted.qualname}() to return one array, it returned "
                    f"{describe(out)}"
                )
            columns.append(tangent if backend is not None else np.asarray(tangent))
        out_shape = tuple(np.shape(out))
        if backend is not None:  # Note [Array backends] in ir.backends
            xp = backend.namespace()
            if not size:
                return xp.zeros(out_shape + shape, dtype=xp.float64)
            return xp.reshape(xp.stack(columns, axis=-1), out_shape + shape)
        if not size:
            return np.zeros(out_shape + shape)
        return np.stack(columns, axis=-1).reshape(out_shape + shape)

    def __autodiff_graph__(
        self, argument_types: Sequence[Type] | None, strided_inputs: str | None = None
    ) -> Graph:
        """The graph of this Jacobian for arguments of these types and layouts, which `jvp`,
        `jacfwd`, `jacobian` and `grad` differentiate again and scripted code inlines. See
        Note [Forward Jacobian graphs] in `autodiff.jvp_graphs`."""
        scripted = self.scripted
        types = scripted.declared_types() if argument_types is None else argument_types
        types = scripted.with_free_types(types)  # Note [Free variables] in frontend.compile
        _check_declared_types(scripted, types)
        if strided_inputs is None:  # a scripted caller's values: any layout
            strided_inputs = unknown_layouts(types)
        return jacfwd_graph(
            scripted.parsed_for(types, strided_inputs),
            types,
            _positions(self.qualname, self.argnums, scripted.arity),
            several=not isinstance(self.argnums, int),
            strided_inputs=strided_inputs,
        )

    @property
    def qualname(self) -> str:
        return self.scripted.qualname


@api_boundary
def jacfwd(fn: Callable[..., Any], argnums: Argnums = 0) -> JacfwdFunction:
    """The Jacobian by forward mode, shape ``result.shape + argument.shape`` as JAX's
    ``jacfwd``: one compiled JVP per element of the argument, so it beats `jacobian` (one VJP
    per element of the result) for tall Jacobians. Real arguments and results only.

    >>> ad.jacfwd(f)(x)                         # f: (3,) -> (1000,): 3 JVPs
    >>> ad.jacfwd(ad.grad(loss))(w, x, y)       # the Hessian, forward over reverse
    """
    return JacfwdFunction(fn, argnums)


class HvpFunction:
    """What ``ad.hvp`` returns: ``hvp(f)(*args, v)`` is the Hessian of scalar ``f`` w.r.t. the
    argument at ``argnums`` times ``v``, without forming the Hessian."""

    @api_boundary
    def __init__(self, fn: Callable[..., Any], argnums: int) -> None:
        self.gradient = grad(fn, argnums)
        self.argnums = argnums
        functools.update_wrapper(self, self.gradient.scripted.fn, updated=())

    @api_boundary
    def __call__(self, *args_and_vector: Any) -> Any:
        *args, vector = args_and_vector
        qualname = self.gradient.qualname
        position = _positions(qualname, self.argnums, len(args))[0]
        containers = [i for i, arg in enumerate(args) if is_pytree(arg)]
        if containers:
            name = list(self.gradient.scripted.signature.parameters)[containers[0]]
            raise DifferentiationError(
                f"hvp of {qualname}() with argument '{name}' a list, tuple or dict is not "
                "supported yet (its gradient is not a graph for containers): pass arrays "
                "(ad.flatten makes one vector of them)"
            )
        tangents: list[Any] = [None for _ in args]
        tangents[position] = vector
        return jvp(self.gradient, tuple(args), tuple(tangents))[1]


@api_boundary
def hvp(fn: Callable[..., Any], argnums: int = 0) -> HvpFunction:
    """Hessian-vector products, forward over reverse: ``hvp(f)(*args, v)`` is the JVP of
    ``grad(f, argnums)`` along ``v`` (a vector shaped like that argument), at the cost of a few
    gradients.

    >>> ad.hvp(loss)(w, x, y, v)                 # == ad.hessian(loss)(w, x, y) @ v
    """
    return HvpFunction(fn, argnums)
