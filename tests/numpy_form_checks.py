"""End-to-end checks of an operator's NumPy form (`tests/unit/test_numpy_forms.py` and
`tests/unit/test_numpy_forms_linalg.py`): a loss's value against NumPy, its gradient against
central differences, and its Hessian against central differences of the gradient."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import autodiff as ad

EPS = 1e-5


def _step(args: tuple[Any, ...], i: int, index: tuple[int, ...], delta: float) -> tuple[Any, ...]:
    moved = list(args)
    if isinstance(args[i], float):
        moved[i] = args[i] + delta
    else:
        array = np.array(args[i], dtype=float)
        array[index] += delta
        moved[i] = array
    return tuple(moved)


def central_differences(fn: Callable[..., Any], args: tuple[Any, ...], i: int) -> Any:
    """d fn / d args[i], fn's value of any shape: shape ``fn.shape + args[i].shape``."""
    shape = np.shape(args[i])
    columns = []
    for index in np.ndindex(*shape):
        plus = np.asarray(fn(*_step(args, i, index, EPS)))
        minus = np.asarray(fn(*_step(args, i, index, -EPS)))
        columns.append((plus - minus) / (2 * EPS))
    stacked = np.stack(columns, axis=-1)
    return stacked.reshape(stacked.shape[:-1] + shape)


def check(fn: Callable[..., Any], *args: Any, wrt: tuple[int, ...] = (0,)) -> None:
    """fn's value, gradient and Hessian with respect to each of ``wrt``, against NumPy."""
    for i in wrt:
        value, grad = ad.value_and_grad(fn, argnums=i)(*args)
        np.testing.assert_allclose(value, fn(*args), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(grad, central_differences(fn, args, i), rtol=1e-6, atol=1e-7)
        hessian = ad.hessian(fn, argnums=i)(*args)
        numeric = central_differences(ad.grad(fn, argnums=i), args, i)
        np.testing.assert_allclose(hessian, numeric, rtol=1e-5, atol=1e-6)
