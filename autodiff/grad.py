"""The gradient API: ``grad`` and ``value_and_grad`` (`GradFunction`), the compiled gradients per
call signature they share with ``vjp`` (`autodiff.cotangents`), and ``differentiate``.

# Note [Gradient cache]
# A GradFunction compiles one CompiledGradient per (signature key, argnums): the key has each
# argument's kind, dtype, shape and strides, as for plain calls (Note [Specialisation
# cache]); the values of int and bool arguments are not in it, since loops and branches on
# them are differentiated as they run (Note [Control-flow derivatives] in
# `autodiff.control_flow`). Only a compilation that succeeded is stored, so an error leaves
# nothing behind. The names whose taps are
# retained or hooked are in the key as well: a gradient with none of them has no hook
# operator in ``df`` (Note [Taps] in `autodiff.taps`), one with some has.
#
# A hit should cost little more than running ``f`` and ``df`` (the call overhead column of
# ``python -m benchmarks``), so what a signature fixes is worked out once, when it is
# compiled: the zeros that stand in for gradients ``df`` leaves as AUTOGRAD_ZERO
# (`CompiledGradient.grad_zeros`, from the arguments it was compiled for), each argument's
# dtype and shape, where each gradient sits among ``df``'s outputs, and ``argnums``, checked.
# A GradFunction without taps keeps, next to ``cache``, a hit path per signature key
# (`GradFunction.hits`): a closure that runs ``f``, seeds ``df`` with a copy of ones made once,
# runs it, and returns the gradients as they come when they already have their argument's
# dtype and shape: no binding, no `Saved`, no dict per call. Its ``df`` is the owning one,
# which may write into f's private temporaries as they die, since the hit path hands them
# over and keeps no reference (Note [Owned temporaries] in `autodiff.runtime`); for a 0-d
# loss of the dtype and type it was built for, it runs instead the owning ``df`` with that
# seed folded in as a constant, and passes no seed (Note [Seeded df] there). A call takes
# it when its arguments come by position, one per parameter, their key (computed on the
# arguments as given: Note [Specialisation cache]) is in ``hits``, and no node hook or
# saved-value hook is on (Note [Instrumented runs]). Every other call goes the general way
# (`general_call`: binding, `compiled_for`, `CompiledGradient.forward` and ``backward`` with a
# `Saved`, tap hooks), which raises the errors, and stores a hit path only once it has
# succeeded.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from autodiff import instrument
from autodiff.cache import CompilationCache
from autodiff.errors import DifferentiationError
from autodiff.gradient import Gradient
from autodiff.higher_order import (
    complex_output_message,
    gradient_graph,
)
from autodiff.pipeline import (
    OutputTree,
    differentiate_typed,
    output_tree,
)
from autodiff.runtime import CompiledGradient, Saved, ZeroSpec
from autodiff.script import ScriptFunction
from autodiff.specialize import (
    argument_type,
    numpy_scalar_positions,
    signature_key,
    strided_inputs,
    typed_graph,
    unknown_layouts,
)
from autodiff.taps import Hook, HookRun, check_names, normalise_hooks, repeated_names, tap_sites
from ir.graph import Graph
from ir.interpreter import AUTOGRAD_ZERO
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


def _check_declared_types(scripted: ScriptFunction, types: Sequence[Type]) -> None:
    """Arguments for ``int``/``float``/``bool`` parameters must be Python numbers."""
    declared = scripted.declared_types()
    # not strict: a scripted call passing too many arguments is refused after this check
    for name, parameter_type, ty in zip(
        scripted.signature.parameters, declared, types, strict=False
    ):
        scripted.check_declared(name, parameter_type, ty)


@dataclass(frozen=True, slots=True)
class CompiledFunction:
    """A function's compiled gradient for one call signature. When the function returns
    tuples, the values in them are the gradient's outputs, one vjp each (`flatten_outputs`)."""

    runtime: CompiledGradient
    tree: OutputTree
    repeats: Mapping[str, bool] = field(default_factory=dict)
    """Per retained or hooked tap name, whether it may be computed more than once."""

    def forward(self, values: Sequence[Any]) -> tuple[list[Any], Saved]:
        return self.runtime.forward(values)

    def result(self, outputs: list[Any]) -> Any:
        """The outputs of a forward run nested as the plain function returns them."""
        leaves = iter(outputs)

        def build(tree: OutputTree) -> Any:
            return next(leaves) if tree is None else type(tree)(build(t) for t in tree)

        return build(self.tree)

    def flatten(self, cotangent: Any, qualname: str) -> list[Any]:
        """The leaves of a cotangent nested like the result (None stands for zeros)."""

        def leaves(tree: OutputTree, part: Any) -> list[Any]:
            if tree is None:
                return [part]
            if part is None:
                return [leaf for t in tree for leaf in leaves(t, None)]
            if not (isinstance(part, tuple | list) and len(part) == len(tree)):
                raise DifferentiationError(
                    f"the cotangent must nest like the result of {qualname}(), which has "
                    f"{_describe(tree)} where the cotangent has {_describe(part)}"
                )
            return [leaf for t, p in zip(tree, part, strict=True) for leaf in leaves(t, p)]

        return leaves(self.tree, cotangent)


class _Differentiated:
    """A scripted function together with compiled gradients per call signature."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.scripted = _as_script(fn)
        # Bounded, and counting compilations for the RecompileWarning: Note [Cache bounds]
        self.cache: CompilationCache[CompiledFunction] = CompilationCache(
            f"the gradient of {self.scripted.qualname}()", counts=True
        )

    @property
    def qualname(self) -> str:
        return self.scripted.qualname

    def compiled_for(
        self, values: Sequence[Any], wrt: tuple[int, ...], taps: frozenset[str] = frozenset()
    ) -> CompiledFunction:
        """The compiled gradient for these arguments w.r.t. the parameters ``wrt``, handing
        the gradients of the ``taps`` named to hooks. See Note [Gradient cache]."""
        signature = (signature_key(values), wrt, taps)
        compiled = self.cache.lookup(signature)
        if compiled is None:
            names = list(self.scripted.signature.parameters)
            types = [
                argument_type(self.qualname, name, value)
                for name, value in zip(names, values, strict=True)
            ]
            declared = self.scripted.declared_types()
            for name, parameter_type, ty in zip(names, declared, types, strict=True):
                self.scripted.check_declared(name, parameter_type, ty)
            for index in wrt:
                self.check_differentiable(names, index, types)
            layouts = strided_inputs(values)
            parsed = self.scripted.parsed_for(types, layouts)
            typed = typed_graph(parsed, types, numpy_scalar_positions(values), layouts)
            sites = tap_sites(typed) if taps else {}
            check_names(self.qualname, sites, sorted(taps))
            gradient = differentiate_typed(typed, wrt, taps).gradient
            compiled = CompiledFunction(
                CompiledGradient(gradient, values),
                output_tree(typed, [output.ty for output in parsed.outputs]),
                repeated_names(sites, taps),
            )
            self.cache.store(signature, compiled)
        return compiled

    def check_differentiable(self, names: list[str], index: int, types: list[Type]) -> None:
        ty = types[index]
        if not can_hold_gradient(ty) or (isinstance(ty, TensorType) and ty.dtype is None):
            raise DifferentiationError(
                f"cannot differentiate {self.qualname}() with respect to argument "
                f"'{names[index]}' of type {ty}: only floating-point arrays and Python floats "
                "have gradients"
            )


def _describe(part: Any) -> str:
    if isinstance(part, tuple | list):
        return f"a {type(part).__name__} of {len(part)}"
    return f"shape {_shape_of(part)}"


def _shape_of(value: Any) -> tuple[int, ...]:
    return tuple(np.shape(value))


def _check_scalar(qualname: str, value: Any) -> None:
    needs = f"grad requires {qualname}() to return a scalar (a 0-d or one-element array)"
    if isinstance(value, tuple | list):
        raise DifferentiationError(
            f"{needs}, but it returned {_describe(value)}; "
            "with has_aux=True it may return a pair (value, aux)"
        )
    if np.size(value) != 1:
        raise DifferentiationError(
            f"{needs}, but it returned shape {_shape_of(value)}; use ad.vjp for non-scalar outputs"
        )


def _seed_maker(
    qualname: str, value: Any
) -> tuple[Callable[[Any], Any], Callable[[Any], bool], np.ndarray[Any, Any]]:
    """``seed(v)``: ones like ``np.asarray(v)``, the vjp that seeds the backward run, checked
    to be of one element (`_check_scalar`); ``usual(v)``: whether ``v`` has ``value``'s type,
    dtype and shape, so that ``seed(v)`` is a copy of the third result, ones made once."""
    kind = type(value)
    ones = np.ones_like(np.asarray(value))
    copy = ones.copy

    def other(v: Any) -> Any:
        _check_scalar(qualname, v)
        return np.ones_like(np.asarray(v))

    def never(v: Any) -> bool:
        return False

    if kind in (float, int, bool):

        def number_usual(v: Any) -> bool:
            return type(v) is kind

        def number_seed(v: Any) -> Any:
            return copy() if type(v) is kind else other(v)

        return number_seed, number_usual, ones
    if kind is np.ndarray or issubclass(kind, np.generic):
        dtype, shape = value.dtype, value.shape

        def array_usual(v: Any) -> bool:
            return type(v) is kind and v.dtype is dtype and v.shape == shape

        def array_seed(v: Any) -> Any:
            if type(v) is kind and v.dtype is dtype and v.shape == shape:
                return copy()
            return other(v)

        return array_seed, array_usual, ones
    return other, never, ones


def _cast_like(grad: Any, argument: Any) -> Any:
    """A gradient with the shape and dtype of its argument: a NumPy scalar of its dtype for a
    NumPy scalar, a float for a Python float."""
    if isinstance(argument, np.generic):
        return np.asarray(grad, dtype=argument.dtype)[()]
    if isinstance(argument, float):
        return float(np.asarray(grad))
    array = np.asarray(argument)
    return np.asarray(grad, dtype=array.dtype).reshape(array.shape)


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
    result = []
    for index in wrt:
        grad = by_input.get(index)
        if grad is None:
            grad = np.zeros(np.shape(values[index]))
        result.append(_cast_like(grad, values[index]))
    return result


class GradFunction(_Differentiated):
    """What ``ad.grad`` and ``ad.value_and_grad`` return.

    >>> dloss = ad.grad(loss, argnums=(0, 1))
    >>> dw, db = dloss(w, b, x, y)
    """

    def __init__(
        self,
        fn: Callable[..., Any],
        argnums: Argnums,
        has_aux: bool,
        with_value: bool,
        retain: str | Sequence[str] = (),
        hooks: Mapping[str, Hook | Sequence[Hook]] | None = None,
    ) -> None:
        super().__init__(fn)
        self.argnums = argnums
        self.has_aux = has_aux
        self.with_value = with_value
        self.retain = (retain,) if isinstance(retain, str) else tuple(dict.fromkeys(retain))
        self.hooks = normalise_hooks(hooks)
        self.taps = frozenset(self.retain) | frozenset(self.hooks)
        self.hits: CompilationCache[Callable[[Sequence[Any]], Any]] = CompilationCache(
            f"the gradient of {self.qualname}()"
        )
        """Per signature key, the hit path of what ``cache`` holds for it; none with taps.
        See Note [Gradient cache]; bounded as ``cache`` is (Note [Cache bounds])."""
        # Not updating __dict__: the function may be another GradFunction (``grad(grad(f))``).
        functools.update_wrapper(self, self.scripted.fn, updated=())

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not kwargs and len(args) == self.scripted.positional_arity:
            hits = self.hits
            key = signature_key(args)
            hit = hits.get(key)
            # Node hooks and saved-value hooks are handled the general way; their lists are
            # read directly, a truth test each (Note [Instrumented runs]).
            if hit is not None and not (instrument._NODE_HOOKS or instrument._SAVED_HOOKS):
                if len(hits) > 1:  # most recently used: Note [Cache bounds]
                    hits.move_to_end(key)
                return hit(args)
        return self.general_call(args, kwargs)

    def general_call(self, args: Sequence[Any], kwargs: dict[str, Any]) -> Any:
        """A call the general way (Note [Gradient cache]); it stores the hit path it can."""
        values = self.scripted.runtime_values(args, kwargs)
        wrt = self.positions(len(values))
        _check_passed(self.scripted, wrt, args, kwargs)
        compiled = self.compiled_for(values, wrt, self.taps)
        outputs, saved = compiled.forward(values)
        value, aux = self.split_aux(compiled.result(outputs))
        _check_scalar(self.qualname, value)
        if np.iscomplexobj(value):
            loss = compiled.runtime.gradient.f.outputs[0]
            raise DifferentiationError(
                complex_output_message(self.qualname, np.result_type(value).name),
                loss.node.source_range,
            )
        seeds: list[Any] = [np.ones_like(np.asarray(value))]
        seeds.extend(None for _ in outputs[1:])
        retained: dict[str, Any] = {}
        if self.taps:
            run = HookRun(self.hooks, {name: compiled.repeats[name] for name in self.retain})
            with run.active():
                grads = _gradients(compiled.runtime, saved, seeds, values, wrt)
            retained = run.retained()
        else:
            grads = _gradients(compiled.runtime, saved, seeds, values, wrt)
            key = signature_key(values)
            if key not in self.hits:
                self.hits.store(key, self.hit_path(compiled, values, wrt, value))
        grad: Any = grads[0] if isinstance(self.argnums, int) else tuple(grads)
        if self.with_value:
            result: Any = ((value, aux) if self.has_aux else value), grad
        else:
            result = (grad, aux) if self.has_aux else grad
        # With ``retain``: the usual result paired with name -> gradient (Note [Taps]).
        return (result, retained) if self.retain else result

    def hit_path(
        self, compiled: CompiledFunction, values: Sequence[Any], wrt: tuple[int, ...], value: Any
    ) -> Callable[[Sequence[Any]], Any]:
        """What a hit on the signature of ``values`` runs: `general_call` without the generic
        machinery, for arguments with the kinds, dtypes and shapes of ``values``, given that
        ``value`` was the function's value for them. See Note [Gradient cache]."""
        runtime = compiled.runtime
        gradient = runtime.gradient
        run_f = runtime.f.run
        # df owns f's private temporaries, compiled on the first hit: Note [Owned
        # temporaries] in autodiff.runtime
        run_df: Callable[[list[Any]], list[Any]] | None = None
        real_outputs = gradient.f_real_outputs
        vjps = gradient.df_input_vjps
        only_seed = vjps == (0,)  # one vjp, the seed's: no zeros to make for other outputs
        captured_inputs = gradient.df_input_captured_inputs
        captured_outputs = gradient.df_input_captured_outputs
        tree, has_aux, with_value = compiled.tree, self.has_aux, self.with_value
        several = not isinstance(self.argnums, int)
        qualname, result_of = self.qualname, compiled.result  # no reference to self: no cycle
        seed_for, usual, ones = _seed_maker(qualname, value)
        # df with the seed folded in, for a usual value: Note [Seeded df] in autodiff.runtime.
        # Compiled on the first hit, with the owning df.
        seeded_at = vjps.index(0) if 0 in vjps and ones.shape == () else None
        run_seeded: Callable[[list[Any]], list[Any]] | None = None
        slots = {index: slot for slot, index in enumerate(gradient.df_output_vjps)}
        zeros = runtime.grad_zeros
        if zeros is None:
            zeros = [ZeroSpec.of(values[i]) for i in gradient.df_output_vjps]
        # Per gradient returned: where df puts it (None: nowhere, it is zero), the zeros that
        # stand in for AUTOGRAD_ZERO, and the dtype and shape of its argument when an array.
        plan: list[tuple[int, int | None, ZeroSpec, tuple[Any, Any] | None]] = []
        for index in wrt:
            slot = slots.get(index)
            argument = values[index]
            like = (argument.dtype, argument.shape) if type(argument) is np.ndarray else None
            zero = ZeroSpec.of(argument) if slot is None else zeros[slot]  # unused if None
            plan.append((index, slot, zero, like))

        def hit(args: Sequence[Any]) -> Any:
            nonlocal run_df, run_seeded
            outputs = run_f(list(args))
            if tree is None and not has_aux:
                value = outputs[0]
                aux = None
            else:
                value, aux = _split_aux(qualname, has_aux, result_of(outputs))
            if run_df is None:
                run_df = runtime.owning_df().run
                if seeded_at is not None:
                    seeded = runtime.seeded_df(seeded_at, ones)
                    run_seeded = None if seeded is None else seeded.run
            if run_seeded is not None and usual(value):
                # The seed is the seeded df's constant: no vjp input for output 0.
                if only_seed:
                    inputs = []
                else:
                    inputs = [ZeroSpec.of(outputs[i]).zeros() for i in vjps if i != 0]
                inputs += [args[i] for i in captured_inputs]
                inputs += [outputs[i] for i in captured_outputs]
                del outputs[real_outputs:]  # temporaries live on in ``inputs`` only
                (raw,) = run_seeded(inputs)
            else:
                seed = seed_for(value)
                if only_seed:
                    inputs = [seed]
                else:
                    inputs = [seed if i == 0 else ZeroSpec.of(outputs[i]).zeros() for i in vjps]
                inputs += [args[i] for i in captured_inputs]
                inputs += [outputs[i] for i in captured_outputs]
                del outputs[real_outputs:], seed  # temporaries live on in ``inputs`` only
                (raw,) = run_df(inputs)
            grads = []
            for index, slot, zero, like in plan:
                if slot is None:
                    grad = np.zeros(np.shape(args[index]))
                else:
                    grad = raw[slot]
                    if grad is AUTOGRAD_ZERO:
                        grad = zero.zeros()
                if not (
                    like is not None
                    and type(grad) is np.ndarray
                    and grad.dtype is like[0]
                    and grad.shape == like[1]
                ):
                    grad = _cast_like(grad, args[index])
                grads.append(grad)
            grad_result: Any = tuple(grads) if several else grads[0]
            if with_value:
                return ((value, aux) if has_aux else value), grad_result
            return (grad_result, aux) if has_aux else grad_result

        return hit

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
        _check_declared_types(self.scripted, types)
        if strided_inputs is None:  # a scripted caller's values: any layout
            strided_inputs = unknown_layouts(types)
        return gradient_graph(
            self.scripted.parsed_for(types, strided_inputs),
            types,
            self.positions(len(types)),
            several=not isinstance(self.argnums, int),
            strided_inputs=strided_inputs,
            with_value=self.with_value,
        )

    def positions(self, count: int) -> tuple[int, ...]:
        """``argnums`` as parameter positions (negative ones count from the end)."""
        return _positions(self.qualname, self.argnums, count)

    def split_aux(self, result: Any) -> tuple[Any, Any]:
        """The value to differentiate and the auxiliary data, from what the function returned."""
        return _split_aux(self.qualname, self.has_aux, result)


def _split_aux(qualname: str, has_aux: bool, result: Any) -> tuple[Any, Any]:
    if not has_aux:
        return result, None
    if not (isinstance(result, tuple) and len(result) == 2):
        raise DifferentiationError(f"has_aux=True needs {qualname}() to return a pair (value, aux)")
    return result[0], result[1]


def grad(
    fn: Callable[..., Any],
    argnums: Argnums = 0,
    has_aux: bool = False,
    *,
    retain: str | Sequence[str] = (),
    hooks: Mapping[str, Hook | Sequence[Hook]] | None = None,
) -> GradFunction:
    """The gradient of a scalar-valued function w.r.t. the arguments at ``argnums``.

    ``retain`` names values the function marks with ``ad.tap(value, name)``: the call then
    returns ``(gradient, retained)``, ``retained`` mapping each name to d output / d value
    (after its hooks; a list in forward order for a name tapped in a loop or more than once;
    None when no gradient reached it). ``hooks`` maps names to a callable or a list of them,
    run in order on the value's gradient while the backward runs; a non-None result replaces
    the gradient that flows on to earlier operations. See Note [Taps] in `autodiff.taps`.

    >>> ad.grad(lambda_free_loss)(w, x, y)          # d loss / d w
    >>> ad.grad(loss, argnums=(0, 2))(w, x, y)      # (d loss / d w, d loss / d y)
    >>> dw, retained = ad.grad(loss, retain=("h",))(w, x, y)   # retained["h"]: d loss / d h
    >>> ad.grad(loss, hooks={"h": lambda g: np.clip(g, -1, 1)})(w, x, y)
    """
    return GradFunction(fn, argnums, has_aux, with_value=False, retain=retain, hooks=hooks)


def value_and_grad(
    fn: Callable[..., Any],
    argnums: Argnums = 0,
    has_aux: bool = False,
    *,
    retain: str | Sequence[str] = (),
    hooks: Mapping[str, Hook | Sequence[Hook]] | None = None,
) -> GradFunction:
    """Like `grad`, but returns ``(value, gradient)`` from one forward pass; with ``retain``,
    ``((value, gradient), retained)``.

    >>> value, dw = ad.value_and_grad(loss)(w, x, y)
    >>> (value, dw), retained = ad.value_and_grad(loss, retain="h")(w, x, y)
    """
    return GradFunction(fn, argnums, has_aux, with_value=True, retain=retain, hooks=hooks)


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
