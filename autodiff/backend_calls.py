"""``grad``/``value_and_grad`` calls on Dask, CuPy or Array API arrays (Note [Array backends]
in `ir.backends`): ``f`` and ``df`` run with the backend's kernels, the seed and the zeros
are the backend's, and nothing is converted to NumPy.

# Note [Lazy gradients]
# On Dask, ``f`` and ``df`` build one task graph: the value and every gradient are lazy Dask
# arrays (a gradient w.r.t. a NumPy weight vector too, since ``df`` computes it from Dask
# data), and ``df`` reads what ``f`` saved as the same lazy values, so nothing runs until the
# caller asks. ``dask.compute(value, grads)`` then computes them together, reading the data
# once where Dask's scheduler can share the tasks; ``ad.value_and_grad(f, compute=True)`` does
# exactly that. A condition on Dask data (``if np.sum(x) > 0``) is computed when the branch is
# taken, as ``bool`` of a Dask array is in plain Dask. The loss's seed is a 0-d array of ones
# from the namespace (NumPy's for Dask, which mixes with it), never folded into ``df``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from autodiff.gradient import Gradient
from ir.backends import DASK, Backend, backend_ops, check_supported, dtype_name
from ir.interpreter import AUTOGRAD_ZERO
from ir.ops import OpDef

if TYPE_CHECKING:
    from autodiff.gradient_call import GradientCall
    from autodiff.unit import CompiledFunction


def backend_kernels(
    gradient: Gradient, backend: Backend, values: Sequence[Any]
) -> Mapping[str, OpDef]:
    """The operator table ``gradient``'s ``f`` and ``df`` run with on ``backend``, after
    refusing, located, any operator of theirs it has no kernel for."""
    ops = backend_ops(backend)
    check_supported(gradient.f, backend, ops)
    check_supported(gradient.df, backend, ops)
    return ops


def _zeros_like(xp: Any, argument: Any) -> Any:
    if isinstance(argument, float):
        return 0.0
    return xp.zeros(tuple(argument.shape), dtype=argument.dtype)


def backend_cast_like(xp: Any, grad: Any, argument: Any) -> Any:
    """The gradient of ``argument`` from ``df`` on a backend with namespace ``xp``: zeros for
    none (None or AUTOGRAD_ZERO), else in the argument's dtype, never through NumPy (a
    Python float's gradient stays a 0-d array: ``float`` of it would compute it)."""
    if grad is None or grad is AUTOGRAD_ZERO:
        return _zeros_like(xp, argument)
    if (
        hasattr(argument, "dtype")
        and hasattr(grad, "dtype")
        and dtype_name(grad.dtype) != dtype_name(argument.dtype)
    ):
        return xp.astype(grad, getattr(xp, dtype_name(argument.dtype)))
    return grad


def backend_gradient_call(
    compiled: CompiledFunction,
    backend: Backend,
    wrt: tuple[int, ...],
    qualname: str,
    has_aux: bool,
    with_value: bool,
    several: bool,
    shape_gradients: Callable[[list[Any]], Any] | None,
    compute: bool = False,
) -> GradientCall:
    """`autodiff.gradient_call.gradient_call` for a backend: no folded seed, no owned temporaries,
    no cast through NumPy. See Note [Lazy gradients]."""
    from autodiff.gradient_call import check_loss, loss_site, split_aux

    runtime = compiled.runtime
    gradient = runtime.gradient
    real_outputs = gradient.f_real_outputs
    slots = {index: slot for slot, index in enumerate(gradient.df_output_vjps)}
    site = loss_site(gradient)
    xp = backend.namespace()

    def call(args: Sequence[Any]) -> Any:
        outputs = runtime.f(*args)
        value, aux = split_aux(qualname, has_aux, compiled.result(outputs[:real_outputs]))
        if not hasattr(value, "shape") or math.prod(value.shape) != 1:
            check_loss(qualname, value, site)  # np.size of a Dask array would warn
        loss = outputs[0]
        seed = xp.ones(tuple(np.shape(loss)), dtype=_dtype_of(xp, loss))
        vjps = [seed if i == 0 else _zeros_like(xp, outputs[i]) for i in gradient.df_input_vjps]
        inputs = [
            *vjps,
            *(args[i] for i in gradient.df_input_captured_inputs),
            *(outputs[i] for i in gradient.df_input_captured_outputs),
        ]
        (raw,) = runtime.df(*inputs)
        grads = []
        for index in wrt:
            slot = slots.get(index)
            grads.append(backend_cast_like(xp, None if slot is None else raw[slot], args[index]))
        grad_result: Any
        if shape_gradients is not None:
            grad_result = shape_gradients(grads)
        else:
            grad_result = tuple(grads) if several else grads[0]
        result = (
            (((value, aux) if has_aux else value), grad_result)
            if with_value
            else ((grad_result, aux) if has_aux else grad_result)
        )
        return _computed(result) if compute and backend is DASK else result

    return call


def _computed(result: Any) -> Any:
    """``result`` with its Dask arrays computed in one pass: Note [Lazy gradients]."""
    import dask

    (computed,) = dask.compute(result)  # type: ignore[attr-defined,no-untyped-call]
    return computed


def _dtype_of(xp: Any, loss: Any) -> Any:
    if isinstance(loss, float):
        return xp.float64
    return loss.dtype
