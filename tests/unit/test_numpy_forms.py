"""NumPy forms added for issue 19 (linspace, row_stack, column_stack, append, select, angle,
the complex-type tests, ``%`` of Python floats, the axes of cross, ...), end to end through
`ad.grad` and `ad.hessian`: each loss equals NumPy's value, its gradient equals central
differences, and its Hessian equals central differences of the gradient."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import autodiff as ad

RNG = np.random.default_rng(19)
X = RNG.standard_normal(3)
Y = RNG.standard_normal(3)
M = RNG.standard_normal((3, 4))
N = RNG.standard_normal((3, 4))
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


# ---- np.linspace --------------------------------------------------------------------------


def linspace_of_floats(start, stop):
    return np.sum(np.sin(np.linspace(start, stop, 5)) ** 2)


def linspace_without_endpoint(start, stop):
    return np.sum(np.linspace(start, stop, 4, endpoint=False) ** 3)


def linspace_of_arrays(start, stop):
    return np.sum(np.cos(np.linspace(start, stop, 3, axis=1)) * np.arange(9.0).reshape(3, 3))


def linspace_broadcast(start, stop):
    return np.sum(np.linspace(start, stop, 4, axis=-1) ** 2 * start[:, None])


def linspace_one_sample(start, stop):
    return np.sum(np.linspace(start, stop, 1) ** 2) + stop**2


@pytest.mark.parametrize(
    ("fn", "args"),
    [
        (linspace_of_floats, (0.3, 1.7)),
        (linspace_without_endpoint, (0.3, 1.7)),
        (linspace_of_arrays, (X, Y)),
        (linspace_broadcast, (X, 2.5)),
        (linspace_one_sample, (0.4, 1.1)),
    ],
)
def test_linspace_is_differentiable_in_its_bounds(fn: Callable[..., Any], args: Any) -> None:
    check(fn, *args, wrt=(0, 1))


def linspace_float32(start, stop):
    return np.linspace(start, stop, 3, dtype=np.float32)


def test_linspace_keeps_its_dtype() -> None:
    out = ad.script(linspace_float32)(np.float32(0.5), np.float32(2.0))
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, np.linspace(0.5, 2.0, 3, dtype=np.float32))


# ---- np.row_stack, np.column_stack, np.append ------------------------------------------------


def row_stack_of_vectors(x, y):
    return np.sum(np.sin(np.row_stack((x, y * x))) * np.arange(6.0).reshape(2, 3))


def column_stack_of_vectors(x, y):
    return np.sum(np.column_stack((x, y * x)) ** 3 * np.arange(6.0).reshape(3, 2))


def column_stack_of_matrix_and_vector(m, x):
    return np.sum(np.tanh(np.column_stack([m, x, m[:, 1] * x])) ** 2)


def column_stack_of_zero_d(x, y):
    return np.sum(np.column_stack((np.sum(x * y), np.sum(y**2))) ** 2)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize(
    ("fn", "args"),
    [
        pytest.param(
            row_stack_of_vectors,
            (X, Y),
            marks=pytest.mark.skipif(not hasattr(np, "row_stack"), reason="NumPy without it"),
        ),
        (column_stack_of_vectors, (X, Y)),
        (column_stack_of_matrix_and_vector, (M, X)),
        (column_stack_of_zero_d, (X, Y)),
    ],
)
def test_row_and_column_stacks(fn: Callable[..., Any], args: Any) -> None:
    check(fn, *args, wrt=(0, 1))


def append_flattened(m, x):
    return np.sum(np.sin(np.append(m, x * 2.0)) * np.arange(15.0))


def append_along_rows(m, n):
    return np.sum(np.append(m, n[:1] * m[:1], axis=0) ** 3)


def append_a_float(x, s):
    return np.sum(np.append(x, s * s) ** 3)


@pytest.mark.parametrize(
    ("fn", "args"),
    [(append_flattened, (M, X)), (append_along_rows, (M, N)), (append_a_float, (X, 0.8))],
)
def test_append(fn: Callable[..., Any], args: Any) -> None:
    check(fn, *args, wrt=(0, 1))
