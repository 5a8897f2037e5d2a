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
