"""The gradient call: what one ``grad``/``value_and_grad`` call with one signature runs, built
once per compilation unit (Note [Compilation units] in `autodiff.unit`), and the checks and
seeds of the loss it shares with the general way of calling.

# Note [Gradient calls]
# A call of ``grad``/``value_and_grad`` should cost little more than running ``f`` and
# ``df`` (the call overhead column of ``python -m benchmarks``), so what a signature fixes is
# worked out once, when its `GradientCall` is built: the zeros that stand in for gradients
# ``df`` leaves as AUTOGRAD_ZERO, each argument's dtype and shape, where each gradient sits
# among ``df``'s outputs, and the seed, folded into ``df`` or made from ones kept. A call runs
# ``f``, hands ``df`` the only references to f's temporaries (dropping its own first), and
# returns the gradients as they come when they already have their argument's dtype and shape:
# no binding, no `Saved`, no dict per call. The first call with a signature builds it after
# binding and checking the arguments (`GradFunction.general_call`) and runs it; later calls
# whose arguments come by position, one per parameter, find it by their key (computed on the
# arguments as given) in the unit and run it directly. The checks of the loss (a scalar, not
# complex, a pair with has_aux) are part of it, so both ways raise the same errors. Taps,
# node hooks and saved-value hooks take `CompiledGradient.forward` and ``backward`` instead
# (Note [Instrumented runs] in `autodiff.instrument`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from autodiff.backend_calls import backend_gradient_call
from autodiff.errors import DifferentiationError
from autodiff.gradient import Gradient
from autodiff.higher_order import complex_output_message
from autodiff.runtime import CompiledGradient, ZeroSpec
from autodiff.specialize import PythonComplex
from autodiff.tiering import NativeMode, NativeTier, tiered
from ir.codegen import executable
from ir.interpreter import AUTOGRAD_ZERO
from ir.source import SourceRange
from ir.types import FLOAT, TensorType, Type

if TYPE_CHECKING:
    from autodiff.unit import CompiledFunction


def loss_seed(gradient: Gradient) -> np.ndarray[Any, Any] | None:
    """The vjp every ``grad`` call passes for output 0 of ``gradient``'s ``f``, when its type
    fixes it: ones of a 0-d real floating-point loss's dtype (as ``np.ones_like`` of it makes
    them); else None. See Note [Seeded df] in `autodiff.runtime`."""
    dtype = _real_dtype(gradient)
    return None if dtype is None else np.ones((), dtype)


def _loss_dtype(ty: Type) -> np.dtype[Any] | None:
    """The dtype of a 0-d real floating-point loss of type ``ty``, else None."""
    if ty == FLOAT:
        return np.dtype(np.float64)
    if isinstance(ty, TensorType) and ty.dtype is not None and ty.shape == ():
        dtype = np.dtype(ty.dtype)
        return dtype if dtype.kind == "f" else None
    return None


def loss_site(gradient: Gradient) -> SourceRange | None:
    """Where the function computes its first output, the loss, for errors about it."""
    return gradient.f.outputs[0].node.source_range if gradient.f_real_outputs else None


def describe(part: Any) -> str:
    """A value's nesting or shape, for messages: ``a tuple of 2``, ``shape (3,)``."""
    if isinstance(part, tuple | list | dict):
        return f"a {type(part).__name__} of {len(part)}"
    return f"shape {tuple(np.shape(part))}"


def check_loss(qualname: str, value: Any, site: SourceRange | None) -> None:
    """What ``grad`` requires of the value it differentiates: one element, real."""
    needs = f"grad requires {qualname}() to return a scalar (a 0-d or one-element array)"
    if isinstance(value, tuple | list | dict):
        raise DifferentiationError(
            f"{needs}, but it returned {describe(value)}; "
            "with has_aux=True it may return a pair (value, aux)"
        )
    if np.size(value) != 1:
        raise DifferentiationError(
            f"{needs}, but it returned shape {tuple(np.shape(value))}; use ad.vjp for "
            "non-scalar outputs",
            site,
        )
    if np.iscomplexobj(value):
        raise DifferentiationError(
            complex_output_message(qualname, np.result_type(value).name), site
        )


def check_seed(qualname: str, value: Any, seed: np.ndarray[Any, Any]) -> None:
    """A loss of the dtype and shape its folded seed was made for (Note [Seeded df] in
    `autodiff.runtime`); any other is a compiler bug, refused rather than differentiated with
    a seed of another dtype."""
    array = np.asarray(value)
    if array.dtype != seed.dtype or array.shape != seed.shape:
        raise DifferentiationError(
            f"internal error: {qualname}() returned a loss of dtype {array.dtype} and shape "
            f"{array.shape}, but its gradient was compiled for dtype {seed.dtype} and shape "
            f"{seed.shape}; please report this"
        )


def split_aux(qualname: str, has_aux: bool, result: Any) -> tuple[Any, Any]:
    """The value to differentiate and the auxiliary data, from what the function returned."""
    if not has_aux:
        return result, None
    if not (isinstance(result, tuple) and len(result) == 2):
        raise DifferentiationError(f"has_aux=True needs {qualname}() to return a pair (value, aux)")
    return result[0], result[1]


def cast_like(grad: Any, argument: Any) -> Any:
    """A gradient with the shape and dtype of its argument: a NumPy scalar of its dtype for a
    NumPy scalar, a float for a Python float, a complex for a Python complex."""
    if isinstance(argument, PythonComplex):
        return complex(np.asarray(grad))
    if isinstance(argument, np.generic):
        return np.asarray(grad, dtype=argument.dtype)[()]
    if isinstance(argument, float):
        return float(np.asarray(grad))
    array = np.asarray(argument)
    return np.asarray(grad, dtype=array.dtype).reshape(array.shape)


def _seed_maker(
    qualname: str, dtype: np.dtype[Any] | None, site: SourceRange | None
) -> tuple[Callable[[Any], bool], Callable[[Any], Any]]:
    """``usual(v)``: whether ``v`` is a 0-d loss of ``dtype``, a real floating-point one;
    ``seed(v)``: ones like ``np.asarray(v)``, the vjp that seeds ``df``, a copy of ones made
    once for a usual ``v``, else made after `check_loss`."""
    ones = None if dtype is None else np.ones((), dtype)
    python_float = dtype is not None and dtype == np.float64

    def usual(v: Any) -> bool:
        kind = type(v)
        if kind is float:
            return python_float
        # ``is``: a dtype equal to but not the one of the loss's type takes the checks
        return (
            (kind is np.ndarray or isinstance(v, np.generic))
            and v.dtype is dtype
            and (v.shape == ())
        )

    def seed(v: Any) -> Any:
        if ones is not None and usual(v):
            return ones.copy()
        check_loss(qualname, v, site)
        return np.ones_like(np.asarray(v))

    return usual, seed


GradientCall = Callable[[Sequence[Any]], Any]
"""What a ``grad``/``value_and_grad`` call with one signature runs (`gradient_call`)."""
Run = Callable[[list[Any]], list[Any]]
"""How a call runs ``f`` or ``df``: `Runnable.run` of one tier or the other."""


def gradient_call(
    compiled: CompiledFunction,
    values: Sequence[Any],
    wrt: tuple[int, ...],
    qualname: str,
    *,
    has_aux: bool,
    with_value: bool,
    several: bool,
    shape_gradients: Callable[[list[Any]], Any] | None = None,
    compute: bool = False,
    native: NativeMode = "off",
    install: Callable[[GradientCall], None] | None = None,
) -> GradientCall:
    """One call of ``grad``/``value_and_grad`` for arguments with the signature of ``values``,
    built once: it runs ``f``, checks and seeds the loss, runs ``df`` and shapes the gradients
    like their arguments (``shape_gradients`` puts them in their arguments' structures, for
    container arguments). A closure, whose variables are the cheapest reads a call can make.
    See Note [Gradient calls]. With ``native`` not ``off``, the call may move to the native
    tier, and hands ``install`` the call to store once it settles (Note [Tiering] in
    `autodiff.tiering`).

    >>> call = gradient_call(compiled, values, (0,), "loss", has_aux=False, with_value=True,
    ...                      several=False)
    >>> value, dx = call(values)
    """
    runtime = compiled.runtime
    if compiled.backend is not None:  # Note [Array backends] in ir.backends
        return backend_gradient_call(
            compiled,
            compiled.backend,
            wrt,
            qualname,
            has_aux,
            with_value,
            several,
            shape_gradients,
            compute,
        )
    gradient = runtime.gradient
    real_outputs = gradient.f_real_outputs
    folded = runtime.seeded_at is not None
    seed = runtime.seed
    # The vjps df takes, by output: the loss's is the seed (none when folded in), the others
    # (aux, other tuple leaves) zeros shaped like the run's outputs.
    vjps = tuple(i for i in gradient.df_input_vjps if not (i == 0 and folded))
    only_seed = vjps == (0,)
    captured_inputs = gradient.df_input_captured_inputs
    captured_outputs = gradient.df_input_captured_outputs
    simple = compiled.tree is None and not has_aux
    result_of = compiled.result
    site = loss_site(gradient)
    usual, seed_for = _seed_maker(qualname, _real_dtype(gradient), site)
    slots = {index: slot for slot, index in enumerate(gradient.df_output_vjps)}
    zeros = runtime.grad_zeros
    if zeros is None:
        zeros = [ZeroSpec.of(values[i]) for i in gradient.df_output_vjps]
    # Per gradient returned: where df puts it (None: nowhere, it is zero), the zeros that stand
    # in for AUTOGRAD_ZERO, and the dtype and shape of its argument when an array.
    plan: list[tuple[int, int | None, ZeroSpec, tuple[Any, Any] | None]] = []
    for index in wrt:
        slot = slots.get(index)
        argument = values[index]
        like = (argument.dtype, argument.shape) if type(argument) is np.ndarray else None
        zero = ZeroSpec.of(argument) if slot is None else zeros[slot]
        plan.append((index, slot, zero, like))

    def finish(args: Sequence[Any], value: Any, aux: Any, raw: Sequence[Any]) -> Any:
        """The call's result from the loss, the aux data and ``df``'s gradients."""
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
                grad = cast_like(grad, args[index])
            grads.append(grad)
        if shape_gradients is not None:
            grad_result: Any = shape_gradients(grads)
        else:
            grad_result = tuple(grads) if several else grads[0]
        if with_value:
            return ((value, aux) if has_aux else value), grad_result
        return (grad_result, aux) if has_aux else grad_result

    def make(run_f: Run, run_df: Run) -> GradientCall:
        """The call running ``f`` and ``df`` by these functions (one tier or the other)."""

        def call(args: Sequence[Any]) -> Any:
            outputs = run_f(list(args))
            if simple:
                value, aux = outputs[0], None
            else:
                value, aux = split_aux(qualname, has_aux, result_of(outputs))
            if folded:
                if not usual(value):
                    check_loss(qualname, value, site)
                    assert seed is not None
                    check_seed(qualname, value, seed)
                inputs = [ZeroSpec.of(outputs[i]).zeros() for i in vjps]
            elif only_seed:
                inputs = [seed_for(value)]
            else:
                made = seed_for(value)
                inputs = [made if i == 0 else ZeroSpec.of(outputs[i]).zeros() for i in vjps]
            inputs += [args[i] for i in captured_inputs]
            inputs += [outputs[i] for i in captured_outputs]
            del outputs[real_outputs:]  # temporaries live on in ``inputs`` only
            (raw,) = run_df(inputs)  # df owns them: Note [Owned temporaries]
            return finish(args, value, aux, raw)

        return call

    def make_joined(run_joined: Run) -> GradientCall:
        """The call running ``f`` and ``df`` joined into one graph: Note [Joined f and df] in
        `autodiff.gradient`."""

        def call(args: Sequence[Any]) -> Any:
            outputs = run_joined(list(args))
            raw = outputs.pop()
            if simple:
                value, aux = outputs[0], None
            else:
                value, aux = split_aux(qualname, has_aux, result_of(outputs))
            if not usual(value):
                check_loss(qualname, value, site)
                assert seed is not None
                check_seed(qualname, value, seed)
            return finish(args, value, aux, raw)

        return call

    numpy_call = make(runtime.f.run, runtime.df.run)
    if install is None:
        return numpy_call

    def make_native(tier: NativeTier) -> GradientCall | None:
        return native_call(runtime, tier, make, make_joined)

    return tiered(native, runtime.native_tier, numpy_call, make_native, install)


def _real_dtype(gradient: Gradient) -> np.dtype[Any] | None:
    """The dtype of a 0-d real floating-point loss, for the ones a seed copies, else None."""
    return _loss_dtype(gradient.f.outputs[0].ty) if gradient.f_real_outputs else None


def native_call(
    runtime: CompiledGradient,
    tier: NativeTier,
    make: Callable[[Run, Run], GradientCall],
    make_joined: Callable[[Run], GradientCall],
) -> GradientCall | None:
    """The gradient call on the native tier: ``f`` and ``df`` joined into one graph (Note
    [Joined f and df] in `autodiff.gradient`) or each native where `tier` has them, else the
    NumPy tier's; a NumPy ``df`` after a native ``f`` owns nothing (Note [Tiering] in
    `autodiff.tiering`). None when nothing is native."""
    assert tier.runnables is not None
    if len(tier.runnables) == 1:
        (joined,) = tier.runnables
        return None if joined is None else make_joined(joined.run)
    f_native, df_native = tier.runnables
    if f_native is None and df_native is None:
        return None
    f = f_native or runtime.f
    if df_native is not None:
        df = df_native
    elif f_native is not None:
        df = executable(runtime.df_graph)
    else:
        df = runtime.df
    return make(f.run, df.run)
