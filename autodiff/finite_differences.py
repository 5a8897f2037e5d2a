"""``gradcheck``: a function's `vjp` compared against central finite differences of the plain
function."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from autodiff.cotangents import vjp
from autodiff.errors import DifferentiationError
from autodiff.grad import _as_script
from autodiff.tracebacks import api_boundary


@dataclass(frozen=True, slots=True)
class GradcheckResult:
    """The outcome of `gradcheck`: the worst element over all differentiated arguments."""

    ok: bool
    argument: int
    index: tuple[int, ...]
    analytic: float
    numeric: float

    def __str__(self) -> str:
        verdict = "gradients match" if self.ok else "gradients differ"
        return (
            f"{verdict}; worst element: argument {self.argument} at {self.index}: "
            f"analytic {self.analytic!r}, finite differences {self.numeric!r}"
        )


@api_boundary
def gradcheck(
    fn: Callable[..., Any],
    *args: Any,
    eps: float = 1e-6,
    rtol: float | None = None,
    atol: float | None = None,
    raise_on_failure: bool = True,
) -> GradcheckResult:
    """Compare ``vjp(fn)`` against central finite differences, for a random cotangent, on
    every floating-point argument; report the worst element (and raise if it is off).

    The finite differences run the plain function with float32 arguments widened to float64,
    so that ``eps`` means the same for every dtype. The tolerances default to rtol=1e-5,
    atol=1e-8, or to rtol=1e-3, atol=1e-5 when an argument is float32 (the gradient is only
    computed that precisely). Every evaluation gets fresh copies of the arguments, so a
    function that writes its arguments is checked at the point given, and the caller's
    arguments are left as they were.

    >>> ad.gradcheck(loss, w, x, y)
    """
    low_precision = any(_is_low_precision(argument) for argument in args)
    rtol = rtol if rtol is not None else (1e-3 if low_precision else 1e-5)
    atol = atol if atol is not None else (1e-5 if low_precision else 1e-8)
    # Every run, compiled or plain, gets fresh copies: a function that writes its arguments
    # (``x[x > 1] = 1.0``) must not change the point the next run is evaluated at.
    args = tuple(copy.deepcopy(argument) for argument in args)
    out, vjp_fn = vjp(fn, *copy.deepcopy(args))
    rng = np.random.default_rng(0)
    outputs = out if isinstance(out, tuple) else (out,)
    cotangents = [rng.standard_normal(np.shape(o)) for o in outputs]
    analytic = vjp_fn(tuple(cotangents) if isinstance(out, tuple) else cotangents[0])
    plain = _as_script(fn).fn
    wide = [_widened(argument) for argument in args]

    def projected(values: list[Any]) -> float:
        result = plain(*copy.deepcopy(values))
        results = result if isinstance(result, tuple) else (result,)
        return float(
            sum(np.sum(c * np.asarray(r)) for c, r in zip(cotangents, results, strict=True))
        )

    worst = GradcheckResult(True, -1, (), 0.0, 0.0)
    worst_excess = -np.inf
    for position, (argument, grad_value) in enumerate(zip(wide, analytic, strict=True)):
        if grad_value is None:
            continue
        base = np.array(argument, dtype=np.float64)
        for index in np.ndindex(base.shape):
            shifted = [list(wide), list(wide)]
            for sign, values in zip((1.0, -1.0), shifted, strict=True):
                bumped = base.copy()
                bumped[index] += sign * eps
                values[position] = float(bumped) if isinstance(argument, float) else bumped
            numeric = (projected(shifted[0]) - projected(shifted[1])) / (2 * eps)
            value = float(np.asarray(grad_value)[index])
            excess = abs(value - numeric) - (atol + rtol * abs(numeric))
            if excess > worst_excess:
                worst_excess = excess
                worst = GradcheckResult(excess <= 0, position, index, value, numeric)
    if raise_on_failure and not worst.ok:
        raise DifferentiationError(str(worst))
    return worst


def _is_low_precision(value: Any) -> bool:
    return isinstance(value, np.ndarray | np.generic) and value.dtype in (np.float16, np.float32)


def _widened(value: Any) -> Any:
    """``value``, as float64 if it is a float32 (or float16) array or NumPy scalar."""
    return value.astype(np.float64) if _is_low_precision(value) else value
