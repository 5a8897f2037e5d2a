"""NumPy forms added for issue 19 (linspace, row_stack, column_stack, append, select, angle,
the complex-type tests, ``%`` of Python floats, masks, r_ and c_, real_if_close), end to end
through `ad.grad` and `ad.hessian` (`tests.numpy_form_checks`)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import autodiff as ad
from tests.numpy_form_checks import central_differences, check

RNG = np.random.default_rng(19)
X = RNG.standard_normal(3)
Y = RNG.standard_normal(3)
M = RNG.standard_normal((3, 4))
N = RNG.standard_normal((3, 4))

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


# ---- np.angle and the complex-type tests -----------------------------------------------------


# ``unit`` is 1j as an array (complex literals are not in the language yet).
def angle_of_complex(x, y, unit):
    return np.sum(np.angle(x + unit * y) * np.arange(1.0, 4.0))


def angle_in_degrees(x, y, unit):
    return np.sum(np.angle(x * y + unit * y**2, deg=True) ** 2)


def angle_of_reals(x, y, unit):
    return np.sum(np.angle(x) * y + x * y)


@pytest.mark.parametrize("fn", [angle_of_complex, angle_in_degrees, angle_of_reals])
def test_angle(fn: Callable[..., Any]) -> None:
    check(fn, X, Y + 2.0, np.array(1j), wrt=(0, 1))


def angle_of_complex_argument(z):
    return np.sum(np.angle(z) ** 2)


def test_angle_of_a_complex_argument_follows_the_convention() -> None:
    """Note [Complex gradients]: the gradient is dL/dRe z - 1j dL/dIm z."""
    z = X + 1j * (Y + 2.0)
    grad = ad.grad(angle_of_complex_argument)(z)
    along_real = central_differences(
        lambda x: angle_of_complex_argument(x + 1j * z.imag), (z.real,), 0
    )
    along_imag = central_differences(
        lambda y: angle_of_complex_argument(z.real + 1j * y), (z.imag,), 0
    )
    np.testing.assert_allclose(grad, along_real - 1j * along_imag, rtol=1e-6)


def complex_tests(x, z):
    kept = np.where(np.iscomplex(z), x, 2.0 * x) + np.where(np.isreal(z), x**2, 0.0)
    flags = np.iscomplexobj(z) + 2 * np.isrealobj(x) + 4 * np.iscomplexobj(x)
    return np.sum(kept) * flags


def test_complex_type_tests_are_not_differentiable_operators() -> None:
    z = np.array([1.0 + 0j, 2.0 + 1j, -1j])
    check(complex_tests, X, z)
    flags = ad.script(complex_tests)(X, z) / np.sum(complex_tests(X, z) / 3.0)
    np.testing.assert_allclose(flags, 3.0)


# ---- % of Python floats ----------------------------------------------------------------------


def float_remainder(s, t):
    return (s * s % t) * t + s % 0.7


def float_remainder_in_arrays(x, s):
    return np.sum(np.sin(x) * (s % 0.3)) + (3.0 * s) % s**2


@pytest.mark.parametrize(
    ("fn", "args"),
    [
        (float_remainder, (1.9, 0.8)),
        (float_remainder, (-1.3, 0.45)),
        (float_remainder_in_arrays, (X, 1.1)),
    ],
)
def test_remainder_of_python_floats(fn: Callable[..., Any], args: Any) -> None:
    check(fn, *args, wrt=(0, 1))


# ---- masks: &, |, ^, ~, np.any, np.all -------------------------------------------------------


def combined_masks(x):
    mask = (x > 0) & ~(x > 1) | (x < -0.5) ^ (x > 0.2)
    mask &= x < 2.0
    mask |= x < -3.0
    mask ^= x > 1.9
    return np.sum(np.where(mask, x**2, 3.0 * x)) + np.any(mask) + np.all(mask, axis=0).sum()


def mask_methods_and_functions(x):
    mask = np.bitwise_and(x > 0, np.invert(x > 1))
    other = np.bitwise_or(x < -1, np.bitwise_xor(x > 0.5, np.bitwise_not(x < 0)))
    counted = mask.any() * 1.0 + other.all(axis=1, keepdims=True)
    return np.sum(np.where(mask | other, x, x**3) * counted)


@pytest.mark.parametrize("fn", [combined_masks, mask_methods_and_functions])
def test_masks_are_combined_without_gradient(fn: Callable[..., Any]) -> None:
    check(fn, M * 2.0)


def python_ints_and_bools(n: int, flag: bool):
    return (n & 6) + (n | 1) + (n ^ 3) + ~n + (flag & (n > 2)) + (flag | False) + (flag ^ True)


def test_bitwise_operators_of_python_ints_and_bools() -> None:
    for n, flag in [(5, True), (2, False), (-7, True)]:
        assert ad.script(python_ints_and_bools)(n, flag) == python_ints_and_bools(n, flag)


def shifted(n: int):
    return n << 1


def bitwise_of_floats(s: float):
    return s & 1


@pytest.mark.parametrize(
    ("fn", "arg", "message"),
    [
        (shifted, 3, "operator '<<' is not supported"),
        (bitwise_of_floats, 1.5, "unsupported operand type(s) for &: 'float'"),
    ],
)
def test_shifts_and_bitwise_floats_are_refused(
    fn: Callable[..., Any], arg: Any, message: str
) -> None:
    with pytest.raises(ad.AutodiffError, match=re.escape(message)):
        ad.script(fn)(arg)


# ---- np.select -------------------------------------------------------------------------------


def select_first_true(x, y):
    chosen = np.select([x > 0, x < -0.5], [x * y, np.sin(y)], default=0.5)
    return np.sum(chosen**2 * np.arange(1.0, 4.0))


def select_broadcast_choices(m, x):
    chosen = np.select((m > 0.5, m < 0), (m**2, x), x[0] * 2.0)
    return np.sum(np.cos(chosen) * m)


def select_float_default(x, s):
    return np.sum(np.select([x > 0.2], [x**3], s * s) ** 2)


@pytest.mark.parametrize(
    ("fn", "args"),
    [
        (select_first_true, (X, Y)),
        (select_broadcast_choices, (M, X[:1].repeat(4))),
        (select_float_default, (X, 0.7)),
    ],
)
def test_select(fn: Callable[..., Any], args: Any) -> None:
    check(fn, *args, wrt=(0, 1))


# ---- np.r_ and np.c_ -------------------------------------------------------------------------


def r_of_vectors(x, y):
    return np.sum(np.sin(np.r_[x, y * x, np.sum(y)[None]]) ** 2)


def r_of_matrices(m, n):
    return np.sum(np.r_[m, n[:1] * m[1:2]] ** 3)


def c_of_vectors_and_matrix(m, x):
    return np.sum(np.tanh(np.c_[m, x, m[:, 0] * x]) ** 2)


def c_of_three_d(m, n):
    return np.sum(np.c_[m[:, :, None], (m * n)[:, :, None]] ** 3)


@pytest.mark.parametrize(
    ("fn", "args"),
    [
        (r_of_vectors, (X, Y)),
        (r_of_matrices, (M, N)),
        (c_of_vectors_and_matrix, (M, X)),
        (c_of_three_d, (M, N)),
    ],
)
def test_index_concatenations(fn: Callable[..., Any], args: Any) -> None:
    check(fn, *args, wrt=(0, 1))


def r_of_a_range(x):
    return np.r_[0:3, x]


def test_r_of_a_range_is_refused() -> None:
    with pytest.raises(ad.AutodiffError, match=re.escape("np.r_ of a range or a directive")):
        ad.script(r_of_a_range)(X)


# ---- np.real_if_close ------------------------------------------------------------------------


def real_if_close_of_reals(x):
    return np.sum(np.real_if_close(x * x) ** 2)


def real_if_close_of_complex(z):
    return np.real_if_close(z)


def test_real_if_close_of_a_real_array_is_a_copy() -> None:
    check(real_if_close_of_reals, X)


def test_real_if_close_of_a_complex_array_is_refused() -> None:
    with pytest.raises(ad.AutodiffError, match="depends on the values"):
        ad.script(real_if_close_of_complex)(X + 0j)


def sign_and_infinity_tests(x):
    kept = np.where(np.signbit(x) | np.isposinf(x * 1e308 * 10), x**2, x)
    return np.sum(np.where(np.isneginf(x * 1e308 * 10), 0.0, kept))


def test_sign_and_infinity_tests_are_not_differentiable_operators() -> None:
    with np.errstate(over="ignore"):
        check(sign_and_infinity_tests, np.array([0.3, -1.2, 2.0]))


# ---- JAX, where installed: an optional cross-check --------------------------------------------


def test_gradients_agree_with_jax() -> None:
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    jax.config.update("jax_enable_x64", True)
    twins = [
        (
            linspace_of_arrays,
            lambda a, b: jnp.sum(
                jnp.cos(jnp.linspace(a, b, 3, axis=1)) * jnp.arange(9.0).reshape(3, 3)
            ),
        ),
        (
            select_first_true,
            lambda x, y: jnp.sum(
                jnp.select([x > 0, x < -0.5], [x * y, jnp.sin(y)], default=0.5) ** 2
                * jnp.arange(1.0, 4.0)
            ),
        ),
    ]
    for ours, theirs in twins:
        for i in range(2):
            expected = jax.grad(theirs, argnums=i)(X, Y)
            np.testing.assert_allclose(ad.grad(ours, argnums=i)(X, Y), expected, rtol=1e-9)
