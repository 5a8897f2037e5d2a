"""Second derivatives through the einsum-based products (einsum, tensordot, inner, outer, kron)
and through sort and partition: the Hessian of each against central finite differences of its
gradient."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import autodiff as ad


def square_einsum(x: Any) -> Any:
    return np.sum(np.einsum("ij,jk->ik", x, x) ** 2)


def diagonal_cubed(x: Any) -> Any:
    return np.sum(np.einsum("ii->i", x) ** 3)


def tensordot_squared(x: Any) -> Any:
    return np.sum(np.tensordot(x, x, axes=([1], [0])) ** 2)


def inner_squared(x: Any) -> Any:
    return np.sum(np.inner(x, x) ** 2)


def outer_squared(x: Any) -> Any:
    return np.sum(np.outer(x, np.tanh(x)) ** 2)


def kron_squared(x: Any) -> Any:
    return np.sum(np.kron(x, x[:2]) ** 2)


def weighted_sort(x: Any) -> Any:
    return np.sum(np.sort(x * x, axis=0) * np.arange(9.0).reshape(3, 3))


def partition_cubed(x: Any) -> Any:
    return np.sum(np.partition(x, 1, axis=None)[:2] ** 3)


@pytest.mark.parametrize(
    "fn",
    [
        square_einsum,
        diagonal_cubed,
        tensordot_squared,
        inner_squared,
        outer_squared,
        kron_squared,
        weighted_sort,
        partition_cubed,
    ],
)
def test_hessian_matches_finite_differences(fn: Callable[[Any], Any]) -> None:
    x = np.random.default_rng(0).standard_normal((3, 3))
    hessian = ad.hessian(fn)(x)
    grad = ad.grad(fn)
    numeric = np.zeros(hessian.shape)
    for index in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[index] = 1e-5
        numeric[(..., *index)] = (grad(x + step) - grad(x - step)) / 2e-5
    np.testing.assert_allclose(hessian, numeric, rtol=1e-6, atol=1e-6)


# np.einsum broadcasts a label of length 1 against a longer one (issue 15, item 8); the
# gradient's own gradients (einsum_vjp_backward and its backward) sum along it too.
BROADCAST_EINSUMS = [
    ("mnd,mdo->mno", (1, 3, 2), (4, 2, 5)),
    ("mij,mjk->ik", (1, 2, 3), (4, 1, 2)),
    ("ij,ij->i", (1, 3), (4, 1)),
]


@pytest.mark.parametrize(("subscripts", "shape_x", "shape_y"), BROADCAST_EINSUMS)
def test_hessian_of_a_broadcasting_einsum_matches_finite_differences(
    subscripts: str, shape_x: tuple[int, ...], shape_y: tuple[int, ...]
) -> None:
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal(shape_x), rng.standard_normal(shape_y)

    def fn(x: Any, y: Any) -> Any:
        return np.sum(np.sin(np.einsum(subscripts, x, y)))

    for wrt in (0, 1):
        hessian = ad.hessian(fn, argnums=wrt)(x, y)
        grad = ad.grad(fn, argnums=wrt)
        args = [x, y]
        numeric = np.zeros(hessian.shape)
        for index in np.ndindex(args[wrt].shape):
            step = np.zeros_like(args[wrt])
            step[index] = 1e-5
            up = [a + step if k == wrt else a for k, a in enumerate(args)]
            down = [a - step if k == wrt else a for k, a in enumerate(args)]
            numeric[(..., *index)] = (grad(*up) - grad(*down)) / 2e-5
        np.testing.assert_allclose(hessian, numeric, rtol=1e-6, atol=1e-6)
