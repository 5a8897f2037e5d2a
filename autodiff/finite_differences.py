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
    analytic: float | complex
    numeric: float | complex

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
    every floating-point argument; report the worst element (and raise if it is off). A
    complex argument moves along its real and its imaginary part, and its gradient is
    ``dL/dRe - 1j * dL/dIm`` (Note [Complex gradients] in `autodiff.formulas`); a complex
    result takes a complex cotangent ``c``, the loss being ``Re(sum(c * result))``.

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
    cotangents = [_cotangent(rng, o) for o in outputs]
    analytic = vjp_fn(tuple(cotangents) if isinstance(out, tuple) else cotangents[0])
    plain = _as_script(fn).fn
    wide = [_widened(argument) for argument in args]

    def projected(values: list[Any]) -> float:
        result = plain(*copy.deepcopy(values))
        results = result if isinstance(result, tuple) else (result,)
        return float(
            sum(
                np.real(np.sum(c * np.asarray(r))) for c, r in zip(cotangents, results, strict=True)
            )
        )

    worst = GradcheckResult(True, -1, (), 0.0, 0.0)
    worst_excess = -np.inf
    for position, (argument, grad_value) in enumerate(zip(wide, analytic, strict=True)):
        if grad_value is None:
            continue
        is_complex = np.iscomplexobj(argument)
        base = np.array(argument, dtype=np.complex128 if is_complex else np.float64)
        scalar = _python_number(argument)
        for index in np.ndindex(base.shape):
            numeric: float | complex = 0.0
            for direction in (1.0, 1j) if is_complex else (1.0,):
                shifted = [list(wide), list(wide)]
                for sign, values in zip((1.0, -1.0), shifted, strict=True):
                    bumped = base.copy()
                    step: Any = sign * eps * direction
                    bumped[index] += step
                    values[position] = scalar(bumped) if scalar is not None else bumped
                slope = (projected(shifted[0]) - projected(shifted[1])) / (2 * eps)
                numeric += slope * np.conj(direction)  # dL/dRe - 1j * dL/dIm
            numeric = complex(numeric) if is_complex else float(np.real(numeric))
            value = np.asarray(grad_value)[index].item()
            excess = abs(value - numeric) - (atol + rtol * abs(numeric))
            if excess > worst_excess:
                worst_excess = excess
                worst = GradcheckResult(excess <= 0, position, index, value, numeric)
    if raise_on_failure and not worst.ok:
        raise DifferentiationError(str(worst))
    return worst


_LOW_PRECISION: dict[np.dtype[Any], type[np.generic]] = {
    np.dtype(np.float16): np.float64,
    np.dtype(np.float32): np.float64,
    np.dtype(np.complex64): np.complex128,
}


def _is_low_precision(value: Any) -> bool:
    return isinstance(value, np.ndarray | np.generic) and value.dtype in _LOW_PRECISION


def _widened(value: Any) -> Any:
    """``value``, as float64 (complex128) if it is a float32 or float16 (complex64) array or
    NumPy scalar."""
    return value.astype(_LOW_PRECISION[value.dtype]) if _is_low_precision(value) else value


def _python_number(argument: Any) -> Callable[[Any], Any] | None:
    """``float`` or ``complex`` for a Python number argument (a moved copy is passed as one)."""
    if isinstance(argument, np.generic):
        return None
    if isinstance(argument, float):
        return float
    if isinstance(argument, complex):
        return complex
    return None


def _cotangent(rng: np.random.Generator, output: Any) -> Any:
    """A random cotangent of one result: complex for a complex one."""
    cotangent = rng.standard_normal(np.shape(output))
    if np.iscomplexobj(output):
        cotangent = cotangent + 1j * rng.standard_normal(np.shape(output))
    return cotangent
