"""Gradients at non-smooth points follow documented conventions (docs/conventions.md): the
values here are the contract, each named after the system whose choice it matches."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import autodiff as ad


def absolute(x):
    return np.sum(np.abs(x))


def test_abs_at_zero_has_gradient_zero() -> None:
    # sign(x), as PyTorch, TensorFlow and HIPS autograd (JAX picks +1 at 0).
    grad = ad.grad(absolute)(np.array([-2.0, 0.0, 3.0, -0.0]))
    np.testing.assert_array_equal(grad, [-1.0, 0.0, 1.0, 0.0])


def elementwise_max(x, y):
    return np.sum(np.maximum(x, y))


def elementwise_min(x, y):
    return np.sum(np.minimum(x, y))


def relu(x):
    return np.sum(np.maximum(x, 0.0))


@pytest.mark.parametrize(
    ("fn", "to_x", "to_y"),
    [
        (elementwise_max, [0.0, 0.5, 1.0], [1.0, 0.5, 0.0]),
        (elementwise_min, [1.0, 0.5, 0.0], [0.0, 0.5, 1.0]),
    ],
    ids=["maximum", "minimum"],
)
def test_maximum_and_minimum_split_ties_in_half(
    fn: Any, to_x: list[float], to_y: list[float]
) -> None:
    # As JAX, PyTorch and HIPS autograd.
    dx, dy = ad.grad(fn, argnums=(0, 1))(np.array([1.0, 2.0, 3.0]), np.full(3, 2.0))
    np.testing.assert_array_equal(dx, to_x)
    np.testing.assert_array_equal(dy, to_y)


def test_maximum_with_zero_at_zero_is_one_half() -> None:
    # np.maximum(x, 0) is maximum: 1/2 at 0 (a relu written so, in JAX too).
    np.testing.assert_array_equal(ad.grad(relu)(np.array([-1.0, 0.0, 1.0])), [0.0, 0.5, 1.0])


def largest(x):
    return np.max(x)


def smallest(x):
    return np.min(x)


def row_maxima(x):
    return np.sum(x.max(axis=1))


def column_minima(x):
    return np.sum(np.amin(x, axis=0))


def test_max_and_min_reductions_split_ties_evenly() -> None:
    # Among all the maxima (minima), evenly: JAX's reduce_max, HIPS autograd, torch.amax.
    np.testing.assert_array_equal(
        ad.grad(largest)(np.array([1.0, 3.0, 3.0, 2.0])), [0.0, 0.5, 0.5, 0.0]
    )
    np.testing.assert_allclose(
        ad.grad(smallest)(np.array([1.0, 1.0, 1.0, 2.0])), [1 / 3, 1 / 3, 1 / 3, 0.0]
    )
    x = np.array([[1.0, 3.0, 3.0], [5.0, 5.0, 5.0]])
    np.testing.assert_allclose(ad.grad(row_maxima)(x), [[0.0, 0.5, 0.5], [1 / 3, 1 / 3, 1 / 3]])
    x = np.array([[1.0, 0.0], [1.0, 2.0]])
    np.testing.assert_array_equal(ad.grad(column_minima)(x), [[0.5, 1.0], [0.5, 0.0]])


def weighted_sort(x, w):
    return np.sum(np.sort(x) * w)


def weighted_stable_sort(x, w):
    return np.sum(np.sort(x, kind="stable") * w)


def test_sort_routes_each_output_gradient_to_the_input_argsort_puts_there() -> None:
    # Position i of the result gets its gradient back to x[np.argsort(x, kind)[i]]: with
    # kind="stable" (jnp.sort is stable) tied inputs take the gradients of the tied outputs in
    # their original order; other kinds order ties as NumPy's argsort does. The gradients of a
    # group of ties always add up to the same total.
    x = np.tile([2.0, 1.0, 2.0, 0.0, 2.0], 8)
    w = np.arange(40.0)
    stable = ad.grad(weighted_stable_sort)(x, w)
    np.testing.assert_array_equal(stable[x == 2.0], np.arange(16.0, 40.0))
    expected = np.empty_like(x)
    expected[np.argsort(x, kind="stable")] = w
    np.testing.assert_array_equal(stable, expected)
    default = ad.grad(weighted_sort)(x, w)
    expected[np.argsort(x)] = w
    np.testing.assert_array_equal(default, expected)
    for value in (0.0, 1.0, 2.0):
        assert default[x == value].sum() == stable[x == value].sum()


def root(x):
    return np.sum(np.sqrt(x))


def root_unused(x):
    return np.sum(0.0 * np.sqrt(x))


def test_sqrt_at_zero_is_infinite() -> None:
    # 1 / (2 sqrt(x)): inf at 0, and a zero cotangent times it is nan (0 / 0), as in JAX and
    # PyTorch.
    with np.errstate(divide="ignore", invalid="ignore"):
        np.testing.assert_array_equal(ad.grad(root)(np.array([0.0, 4.0])), [np.inf, 0.25])
        np.testing.assert_array_equal(ad.grad(root_unused)(np.array([0.0, 4.0])), [np.nan, 0.0])


def clipped(x):
    return np.sum(np.clip(x, -1.0, 1.0))


def norm(x):
    return np.linalg.norm(x)


def signs(x):
    return np.sum(np.sign(x) + np.floor(x))


def test_clip_at_a_bound_passes_the_gradient_to_x() -> None:
    # As PyTorch's clamp: x gets the gradient where a_min <= x <= a_max.
    x = np.array([-2.0, -1.0, 0.0, 1.0, 2.0])
    np.testing.assert_array_equal(ad.grad(clipped)(x), [0.0, 1.0, 1.0, 1.0, 0.0])


def test_norm_at_zero_and_piecewise_constants() -> None:
    # The norm at 0: 0, as PyTorch (the subgradient of least norm); sign and floor: 0.
    np.testing.assert_array_equal(ad.grad(norm)(np.zeros(3)), np.zeros(3))
    np.testing.assert_array_equal(ad.grad(signs)(np.array([-1.0, 0.0, 2.0])), np.zeros(3))
