"""Gradients at non-smooth points follow documented conventions (docs/conventions.md): the
values here are the contract, each named after the system whose choice it matches."""

from __future__ import annotations

from pathlib import Path
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


# ---- points where the derivative exists though the formula divides by 0 --------------------


def power_float_zero(x):
    return np.sum(np.power(x, 0.0))


def power_int_zero(x):
    return np.sum(x**0)


def power_broadcast_zeros(x, y):
    return np.sum(np.power(x, y))


def power_one(x):
    return np.sum(x**1)


def power_two(x):
    return np.sum(x**2)


def power_one_and_a_half(x):
    return np.sum(x**1.5)


@pytest.mark.parametrize("fn", [power_float_zero, power_int_zero], ids=["0.0", "int-0"])
def test_power_zero_at_zero_has_gradient_zero(fn: Any) -> None:
    # x ** 0 is 1 everywhere: gradient and second derivative 0 at 0 too (was nan), as JAX.
    x = np.array([0.0, -0.0, 2.0, -3.0])
    np.testing.assert_array_equal(ad.grad(fn)(x), np.zeros(4))
    np.testing.assert_array_equal(ad.hessian(fn)(x), np.zeros((4, 4)))


def test_power_by_broadcast_zeros_at_zero() -> None:
    x, y = np.array([0.0, 1.5, -2.0]), np.zeros((2, 3))
    dx, dy = ad.grad(power_broadcast_zeros, argnums=(0, 1))(x, y)
    np.testing.assert_array_equal(dx, np.zeros(3))
    # The exponent's gradient, x ** y * log(x), only where log(x) is real (0 at x = 0).
    np.testing.assert_allclose(dy, np.tile([0.0, np.log(1.5), 0.0], (2, 1)))


def test_powers_at_zero_as_jax_defines_them() -> None:
    x = np.array([0.0, 2.0])
    np.testing.assert_array_equal(ad.grad(power_one)(x), [1.0, 1.0])
    np.testing.assert_array_equal(ad.grad(power_two)(x), [0.0, 4.0])
    np.testing.assert_array_equal(ad.grad(power_one_and_a_half)(x), [0.0, 1.5 * np.sqrt(2.0)])
    with np.errstate(divide="ignore"):
        assert ad.hessian(power_one_and_a_half)(x)[0, 0] == np.inf  # infinite, as sqrt's
    # 0 ** y w.r.t. y: 0.
    dy = ad.grad(power_broadcast_zeros, argnums=1)(np.zeros(3), np.array([0.0, 1.0, 2.0]))
    np.testing.assert_array_equal(dy, np.zeros(3))


def test_powers_at_zero_match_jax() -> None:
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    # JAX gives 0 for an int exponent 0 and nan for a float 0.0 (jax 0.10): the derivative is 0
    # either way, so only the int exponents are compared.
    x = np.array([0.0, 2.0, -1.0])
    for fn, exponent in [(power_int_zero, 0), (power_two, 2)]:
        expected = jax.grad(lambda q, e=exponent: jnp.sum(q**e))(jnp.asarray(x))
        np.testing.assert_array_equal(ad.grad(fn)(x), np.asarray(expected))
        second = jax.hessian(lambda q, e=exponent: jnp.sum(q**e))(jnp.asarray(x))
        np.testing.assert_array_equal(ad.hessian(fn)(x), np.asarray(second))


def deviation(x):
    return np.std(x)


def row_deviations(x):
    return np.sum(np.std(x, axis=1, ddof=1))


def variance(x):
    return np.var(x)


def test_std_of_equal_values_has_gradient_zero() -> None:
    # std is a scaled norm of x - mean(x): the norm's rule, the least-norm subgradient 0 (was
    # nan), and second derivative 0.
    x = np.full(4, 0.5)
    np.testing.assert_array_equal(ad.grad(deviation)(x), np.zeros(4))
    np.testing.assert_array_equal(ad.hessian(deviation)(x), np.zeros((4, 4)))


def test_std_with_axis_and_ddof_at_equal_rows() -> None:
    x = np.array([[1.0, 1.0, 1.0], [1.0, 2.0, 4.0]])
    grad = ad.grad(row_deviations)(x)
    np.testing.assert_array_equal(grad[0], np.zeros(3))
    centred = x[1] - x[1].mean()
    np.testing.assert_allclose(grad[1], centred / (2 * np.std(x[1], ddof=1)))
    hessian = np.asarray(ad.hessian(row_deviations)(x))
    assert not np.isnan(hessian).any()
    np.testing.assert_array_equal(hessian[0, :, 0, :], np.zeros((3, 3)))


def test_var_of_equal_values_is_smooth() -> None:
    # No convention needed: gradient 0, second derivative 2/n (I - 1/n).
    x = np.full(4, 0.5)
    np.testing.assert_array_equal(ad.grad(variance)(x), np.zeros(4))
    np.testing.assert_allclose(ad.hessian(variance)(x), 2 / 4 * (np.eye(4) - 1 / 4))


def test_the_document_states_these_conventions() -> None:
    text = (Path(__file__).parents[2] / "docs" / "conventions.md").read_text()
    for row in ("`np.std(x, axis=…, ddof=…)`", "`x ** 0`", "`x ** p` at `x = 0`", "# Complex"):
        assert row in text, row
