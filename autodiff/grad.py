"""The gradient API: ``grad`` and ``value_and_grad`` (`GradFunction`), and ``differentiate``.
What they compile per call signature lives in the function's compilation units (Note
[Compilation units] in `autodiff.unit`), shared with ``vjp`` (`autodiff.cotangents`); a call
runs the unit's `GradientCall` (Note [Gradient calls] there).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any

import numpy as np

from autodiff import instrument
from autodiff.backend_calls import backend_cast_like
from autodiff.cache import CompilationCache
from autodiff.errors import DifferentiationError
from autodiff.gradient import Gradient
from autodiff.gradient_call import (
    cast_like,
    check_loss,
    check_seed,
    gradient_call,
    loss_site,
    split_aux,
)
from autodiff.higher_order import gradient_graph
from autodiff.pipeline import differentiate_typed
from autodiff.pytrees import CONTAINER_TYPES, PyTreeSpec, argument_parts, gradient_shaper
from autodiff.runtime import CompiledGradient, Saved
from autodiff.script import ScriptFunction
from autodiff.specialize import ArgumentError, unknown_layouts
from autodiff.taps import Hook, HookRun, normalise_hooks
from autodiff.tiering import native_mode
from autodiff.tracebacks import api_boundary, shorten
from autodiff.unit import CompilationUnit, CompiledFunction, compiled_gradient
from ir.errors import AutodiffError
from ir.graph import Graph
from ir.types import TensorType, Type
from passes.requires_grad import can_hold_gradient

Argnums = int | tuple[int, ...]


def _as_script(fn: Callable[..., Any]) -> ScriptFunction:
    return fn if isinstance(fn, ScriptFunction) else ScriptFunction(fn)


def _argnum_tuple(argnums: Argnums) -> tuple[int, ...]:
    found = tuple(argnums) if isinstance(argnums, tuple | list) else (argnums,)
    if not all(isinstance(i, int) and not isinstance(i, bool) for i in found):
        raise DifferentiationError(f"argnums must be an int or a tuple of ints, got {argnums!r}")
    return found


def _positions(qualname: str, argnums: Argnums, count: int) -> tuple[int, ...]:
    """``argnums`` as positions among ``count`` arguments (negative ones count from the end)."""
    positions = []
    for index in _argnum_tuple(argnums):
        if not -count <= index < count:
            raise DifferentiationError(
                f"argnums {index} is out of range: {qualname}() has {count} parameters"
            )
        positions.append(index % count)
    return tuple(positions)


def _check_passed(
    scripted: ScriptFunction, positions: Sequence[int], args: Sequence[Any], keywords: Any = ()
) -> None:
    """Every parameter at ``positions`` was given a value, by position or by keyword: one left
    to its default is not an argument to differentiate with respect to (JAX's rule)."""
    names = list(scripted.signature.parameters)
    for position in positions:
        if position >= len(args) and names[position] not in keywords:
            raise DifferentiationError(
                f"argnums {position} points at parameter '{names[position]}' of "
                f"{scripted.qualname}(), which was not passed (it takes its default value); "
                "pass it to differentiate with respect to it"
            )


def _check_no_strings(
    scripted: ScriptFunction, spec: PyTreeSpec, positions: Sequence[int | tuple[int, int]]
) -> None:
    """An argument to differentiate with respect to is no string: a string is known while
    compiling and has no gradient (Note [Strings known while compiling] in `frontend.trees`)."""
    names = list(scripted.signature.parameters)
    for position, (part, _) in zip(positions, argument_parts(spec, positions), strict=True):
        name = names[position] if isinstance(position, int) else names[position[0]]
        if not isinstance(position, int):
            name += f"[{position[1]}]"
        if part.type is str:
            raise ArgumentError(
                f"argument '{name}' of {scripted.qualname}() is a string, known while "
                "compiling, which has no gradient: leave it out of argnums"
            )
        pending = [(part, name)]
        while pending:  # a string inside: no gradient for it (JAX refuses it too)
            node, path = pending.pop()
            if node.type is str:
                raise ArgumentError(
                    f"argument '{path}' of {scripted.qualname}() is a string, which has no "
                    "gradient: pass it as an argument of its own, left out of argnums"
                )
            for key, child in zip(node.entries(), node.children(), strict=True):
                pending.append((child, f"{path}[{key!r}]"))


def _check_declared_types(scripted: ScriptFunction, types: Sequence[Type]) -> None:
    """Arguments for ``int``/``float``/``bool`` parameters must be Python numbers."""
    declared = scripted.declared_types()
    # not strict: a scripted call passing too many arguments is refused after this check
    for name, parameter_type, ty in zip(
        scripted.signature.parameters, declared, types, strict=False
    ):
        scripted.check_declared(name, parameter_type, ty)


def _gradients(
    compiled: CompiledGradient,
    saved: Saved,
    seeds: list[Any],
    values: Sequence[Any],
    wrt: tuple[int, ...],
    *,
    retain: bool = False,
) -> list[Any]:
    """The gradients of the arguments at ``wrt`` for these vjps, shaped like the arguments."""
    raw = compiled.backward(saved, seeds, retain=retain)
    by_input = dict(zip(compiled.gradient.df_output_vjps, raw, strict=True))
    xp = compiled.namespace
    result = []
    for index in wrt:
        grad = by_input.get(index)
        if xp is not None:  # Note [Array backends] in ir.backends
            result.append(backend_cast_like(xp, grad, values[index]))
            continue
        if grad is None:
            grad = np.zeros(np.shape(values[index]))
        result.append(cast_like(grad, values[index]))
    return result


class GradFunction:
    """What ``ad.grad`` and ``ad.value_and_grad`` return.

    >>> dloss = ad.grad(loss, argnums=(0, 1))
    >>> dw, db = dloss(w, b, x, y)
    """

    @api_boundary
    def __init__(
        self,
        fn: Callable[..., Any],
        argnums: Argnums,
        has_aux: bool,
        with_value: bool,
        retain: str | Sequence[str] = (),
        hooks: Mapping[str, Hook | Sequence[Hook]] | None = None,
        compute: bool = False,
        native: bool | None = None,
    ) -> None:
        self.scripted = _as_script(fn)
        self.compute = compute
        self.native = native
        """True: run on the native tier from the first call; False: never; None: as
        ``AUTODIFF_NATIVE`` says (Note [Tiering] in `autodiff.tiering`)."""
        """On Dask arguments, compute the value and gradients together before returning them
        (Note [Lazy gradients] in `autodiff.backend_calls`)."""
        self.argnums = argnums
        self.has_aux = has_aux
        self.with_value = with_value
        self.retain = (retain,) if isinstance(retain, str) else tuple(dict.fromkeys(retain))
        self.hooks = normalise_hooks(hooks)
        self.taps = frozenset(self.retain) | frozenset(self.hooks)
        self.call_key: Hashable = None
        """What this gradient's `GradientCall` is stored under in a unit (None: it has none,
        its calls take forward and backward: taps, or argnums not ints)."""
        if not self.taps:
            try:
                argnum_key = _argnum_tuple(argnums)
            except DifferentiationError:  # raised at each call
                pass
            else:
                self.call_key = (
                    argnum_key,
                    isinstance(argnums, int),
                    has_aux,
                    with_value,
                    compute,
                    native,
                )
        # Not updating __dict__: the function may be another GradFunction (``grad(grad(f))``).
        functools.update_wrapper(self, self.scripted.fn, updated=())

    @property
    def qualname(self) -> str:
        return self.scripted.qualname

    @property
    def cache(self) -> CompilationCache[CompilationUnit]:
        """The compilation units of the function, per signature key (Note [Compilation
        units] in `autodiff.unit`)."""
        return self.scripted.cache

    def compiled_gradients(self) -> list[CompiledFunction]:
        """Every gradient compiled for the function so far, oldest signature first: for
        looking at what a call ran (``compiled.runtime.gradient.df``, its generated code).

        >>> (compiled,) = dloss.compiled_gradients()
        """
        return [compiled for unit in self.cache.values() for compiled in unit.gradients.values()]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        try:  # a boundary: Note [Traceback filtering] in autodiff.tracebacks
            scripted = self.scripted
            if scripted.guarded and scripted.stale():  # Note [Values read once] in frontend.compile
                scripted.refresh()
            if not kwargs and len(args) == scripted.positional_arity:
                # with the global arrays it reads: Note [Free variables] in frontend.compile
                key, values = scripted.fast_key(args)
                units = scripted.cache
                unit = units.get(key)
                if unit is None and any(a is None or isinstance(a, CONTAINER_TYPES) for a in args):
                    key, values = scripted.tree_key(args)  # Note [Pytree arguments]
                    unit = units.get(key)
                # Node hooks and saved-value hooks are handled the general way; their lists are
                # read directly, a truth test each (Note [Instrumented runs]).
                if unit is not None and not (instrument._NODE_HOOKS or instrument._SAVED_HOOKS):
                    call = unit.calls.get(self.call_key)
                    if call is not None:
                        if len(units) > 1:  # most recently used: Note [Cache bounds]
                            units.move_to_end(key)
                        return call(values)
            return self.general_call(args, kwargs)
        except AutodiffError as error:
            shorten(error)
            raise

    @api_boundary
    def gradient_for(self, *args: Any, **kwargs: Any) -> Gradient:
        """The `Gradient` a call with these arguments runs: its forward graph ``f`` and its
        backward graph ``df``, specialised to the arguments' shapes and dtypes.

        >>> gradient = ad.grad(loss).gradient_for(w, x, y)
        >>> print(gradient.df)
        """
        values, spec, wrt, _, _ = self.bind(args, kwargs)
        _, compiled = compiled_gradient(
            self.scripted, values, wrt, self.taps, seeded=not self.taps, spec=spec
        )
        return compiled.runtime.gradient

    def bind(
        self, args: Sequence[Any], kwargs: dict[str, Any]
    ) -> tuple[
        list[Any], PyTreeSpec | None, tuple[int, ...], Callable[[Sequence[Any]], Any] | None, bool
    ]:
        """The arguments bound and checked: the leaf values, their tree (None: no
        containers), the positions differentiated, what shapes the gradients, and whether
        ``argnums`` asked for several."""
        values, spec = self.scripted.runtime_call(args, kwargs)
        star = self.scripted.star
        positions: tuple[int | tuple[int, int], ...]
        if star is None:
            positions = self.positions(self.scripted.arity)
            _check_passed(self.scripted, positions, args, kwargs)
        else:  # JAX's argnums count the arguments given by position, past *args too
            positions = tuple(
                p if p < star else (star, p - star) for p in self.positions(len(args))
            )
        several = not isinstance(self.argnums, int)
        wrt: tuple[int, ...] = ()
        shape = None
        if spec is not None:  # Note [Pytree arguments] in autodiff.pytrees
            _check_no_strings(self.scripted, spec, positions)
            wrt, shape = gradient_shaper(spec, positions, several)
        else:
            wrt = tuple(p for p in positions if isinstance(p, int))
        return values, spec, wrt, shape, several

    def general_call(self, args: Sequence[Any], kwargs: dict[str, Any]) -> Any:
        """A call with its arguments bound and checked, which builds and keeps the unit's
        call (`autodiff.gradient_call.gradient_call`, Note [Gradient calls] there)."""
        values, spec, wrt, shape, several = self.bind(args, kwargs)
        if self.call_key is None or instrument._NODE_HOOKS or instrument._SAVED_HOOKS:
            return self.forward_backward(values, wrt, spec, shape)
        unit, compiled = compiled_gradient(self.scripted, values, wrt, seeded=True, spec=spec)
        call = unit.calls.get(self.call_key)
        if call is None:
            calls, key = unit.calls, self.call_key

            def install(settled: Callable[[Sequence[Any]], Any]) -> None:
                calls[key] = settled  # Note [Tiering] in autodiff.tiering

            call = gradient_call(
                compiled,
                values,
                wrt,
                self.qualname,
                has_aux=self.has_aux,
                with_value=self.with_value,
                several=several,
                shape_gradients=shape,
                compute=self.compute,
                native=native_mode(self.native),
                install=install,
            )
            result = call(values)
            unit.calls[self.call_key] = call  # once it has succeeded
            return result
        return call(values)

    def forward_backward(
        self,
        values: list[Any],
        wrt: tuple[int, ...],
        spec: PyTreeSpec | None = None,
        shape: Callable[[Sequence[Any]], Any] | None = None,
    ) -> Any:
        """A call through `CompiledGradient.forward` and ``backward``, with a `Saved`: for
        taps, and while node hooks or saved-value hooks are on (Note [Instrumented runs])."""
        _, compiled = compiled_gradient(
            self.scripted, values, wrt, self.taps, seeded=not self.taps, spec=spec
        )
        outputs, saved = compiled.forward(values)
        value, aux = split_aux(self.qualname, self.has_aux, compiled.result(outputs))
        runtime = compiled.runtime
        check_loss(self.qualname, value, loss_site(runtime.gradient))
        if runtime.seed is None:
            seeds: list[Any] = [np.ones_like(np.asarray(value))]
        else:  # folded into df: Note [Seeded df] in autodiff.runtime
            check_seed(self.qualname, value, runtime.seed)
            seeds = [None]
        seeds.extend(None for _ in outputs[1:])
        retained: dict[str, Any] = {}
        if self.taps:
            run = HookRun(self.hooks, {name: compiled.repeats[name] for name in self.retain})
            with run.active():
                grads = _gradients(runtime, saved, seeds, values, wrt)
            retained = run.retained()
        else:
            grads = _gradients(runtime, saved, seeds, values, wrt)
        if shape is not None:
            grad: Any = shape(grads)
        else:
            grad = grads[0] if isinstance(self.argnums, int) else tuple(grads)
        if self.with_value:
            result: Any = ((value, aux) if self.has_aux else value), grad
        else:
            result = (grad, aux) if self.has_aux else grad
        # With ``retain``: the usual result paired with name -> gradient (Note [Taps]).
        return (result, retained) if self.retain else result

    @api_boundary
    def compiled_for(
        self,
        values: Sequence[Any],
        wrt: tuple[int, ...],
        taps: frozenset[str] = frozenset(),
        *,
        seeded: bool = False,
    ) -> CompiledFunction:
        """The compiled gradient for these runtime values w.r.t. the parameters ``wrt``,
        handing the gradients of the ``taps`` named to hooks; ``seeded``: the one calls run,
        with the loss's seed folded in (Note [Seeded df] in `autodiff.runtime`)."""
        return compiled_gradient(self.scripted, values, wrt, taps, seeded=seeded)[1]

    def __autodiff_graph__(
        self, argument_types: Sequence[Type] | None, strided_inputs: str | None = None
    ) -> Graph:
        """The graph of this gradient for arguments of these types (None: the parameters'
        declared types) and layouts (`autodiff.specialize.strided_inputs`; None: not known),
        which scripted callers inline and `grad` differentiates again. See Note [Gradient graphs] in
        `autodiff.higher_order`."""
        if self.has_aux or self.taps:
            what = "has_aux=True" if self.has_aux else "retain= or hooks="
            raise DifferentiationError(
                f"the gradient of {self.qualname}() with {what} cannot be differentiated "
                "again or called from scripted code"
            )
        types = self.scripted.declared_types() if argument_types is None else argument_types
        types = self.scripted.with_free_types(types)  # Note [Free variables] in frontend.compile
        _check_declared_types(self.scripted, types)
        if strided_inputs is None:  # a scripted caller's values: any layout
            strided_inputs = unknown_layouts(types)
        return gradient_graph(
            self.scripted.parsed_for(types, strided_inputs),
            types,
            self.positions(self.scripted.arity),
            several=not isinstance(self.argnums, int),
            strided_inputs=strided_inputs,
            with_value=self.with_value,
        )

    def positions(self, count: int) -> tuple[int, ...]:
        """``argnums`` as parameter positions (negative ones count from the end)."""
        return _positions(self.qualname, self.argnums, count)


@api_boundary
def grad(
    fn: Callable[..., Any],
    argnums: Argnums = 0,
    has_aux: bool = False,
    *,
    retain: str | Sequence[str] = (),
    hooks: Mapping[str, Hook | Sequence[Hook]] | None = None,
    compute: bool = False,
    native: bool | None = None,
) -> GradFunction:
    """The gradient of a scalar-valued function w.r.t. the arguments at ``argnums``.
    On Dask arrays it is lazy unless ``compute=True`` (as `value_and_grad`).

    ``retain`` names values the function marks with ``ad.tap(value, name)``: the call then
    returns ``(gradient, retained)``, ``retained`` mapping each name to d output / d value
    (after its hooks; a list in forward order for a name tapped in a loop or more than once;
    None when no gradient reached it). ``hooks`` maps names to a callable or a list of them,
    run in order on the value's gradient while the backward runs; a non-None result replaces
    the gradient that flows on to earlier operations. See Note [Taps] in `autodiff.taps`.
    ``native=True`` compiles the gradient with numba on the first call and runs it natively
    (``False``: never; None: as ``AUTODIFF_NATIVE`` says, by default once repeated calls show
    it is faster): Note [Tiering] in `autodiff.tiering`.

    >>> ad.grad(lambda_free_loss)(w, x, y)          # d loss / d w
    >>> ad.grad(loss, argnums=(0, 2))(w, x, y)      # (d loss / d w, d loss / d y)
    >>> dw, retained = ad.grad(loss, retain=("h",))(w, x, y)   # retained["h"]: d loss / d h
    >>> ad.grad(loss, hooks={"h": lambda g: np.clip(g, -1, 1)})(w, x, y)
    """
    return GradFunction(
        fn,
        argnums,
        has_aux,
        with_value=False,
        retain=retain,
        hooks=hooks,
        compute=compute,
        native=native,
    )


@api_boundary
def value_and_grad(
    fn: Callable[..., Any],
    argnums: Argnums = 0,
    has_aux: bool = False,
    *,
    retain: str | Sequence[str] = (),
    hooks: Mapping[str, Hook | Sequence[Hook]] | None = None,
    compute: bool = False,
    native: bool | None = None,
) -> GradFunction:
    """Like `grad`, but returns ``(value, gradient)`` from one forward pass; with ``retain``,
    ``((value, gradient), retained)``. On Dask arrays both are lazy; ``compute=True``
    computes them together, as ``dask.compute(value, gradient)`` does (Note [Lazy
    gradients] in `autodiff.backend_calls`).

    >>> value, dw = ad.value_and_grad(loss)(w, x, y)
    >>> (value, dw), retained = ad.value_and_grad(loss, retain="h")(w, x, y)
    >>> value, dw = ad.value_and_grad(loss, compute=True)(w, dask_x, dask_y)  # NumPy results
    >>> value, dw = ad.value_and_grad(euler, native=True)(theta, x0)  # numba, from call 1
    """
    return GradFunction(
        fn,
        argnums,
        has_aux,
        with_value=True,
        retain=retain,
        hooks=hooks,
        compute=compute,
        native=native,
    )


@api_boundary
def differentiate(graph: Graph) -> Gradient:
    """Differentiate a typed graph w.r.t. its inputs typed ``requires_grad=1`` (or, when no
    input says, every input that can hold a gradient) and split it into ``f`` and ``df``.

    >>> gradient = ad.differentiate(scripted.graph_for(x, y))
    >>> print(gradient.df)
    """
    flags = [v.ty.requires_grad if isinstance(v.ty, TensorType) else None for v in graph.inputs]
    if any(flag is not None for flag in flags):
        wrt = tuple(i for i, flag in enumerate(flags) if flag)
    else:
        wrt = tuple(i for i, v in enumerate(graph.inputs) if can_hold_gradient(v.ty))
    return differentiate_typed(graph, wrt).gradient
