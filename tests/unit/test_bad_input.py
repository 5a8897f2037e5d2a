"""Bad input gives a clear error or the right (empty) answer, never a wrong number or a
traceback (issue 15, item 13): gradients of means, variances and deviations over empty arrays
are empty, as in JAX and PyTorch; ``grad`` of a complex loss is refused where the loss is
computed; a Jacobian or Hessian with respect to a complex argument is refused, naming it, unless
``holomorphic=True``, as in JAX; ``np.matrix`` and masked-array arguments are refused at the
call, by name."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import autodiff as ad

# ---- empty arrays -------------------------------------------------------------------------------


def mean_of_all(x):
    return np.mean(x)


def mean_over_rows(x):
    return np.sum(np.mean(x, axis=0))


def mean_over_columns(x):
    return np.sum(np.mean(x, axis=1, keepdims=True))


def variance(x):
    return np.var(x)


def variance_over_rows(x):
    return np.sum(np.var(x, axis=0))


def deviation_over_columns(x):
    return np.sum(np.std(x, axis=1, ddof=1))


EMPTY_CASES = [
    (mean_of_all, (0,)),
    (mean_of_all, (0, 3)),
    (mean_over_rows, (0, 3)),
    (mean_over_rows, (3, 0)),
    (mean_over_columns, (0, 3)),
    (mean_over_columns, (3, 0)),
    (variance, (0,)),
    (variance_over_rows, (3, 0)),
    (variance_over_rows, (0, 2)),
    (deviation_over_columns, (2, 0)),
    (deviation_over_columns, (0, 2)),
]


@pytest.mark.parametrize(("fn", "shape"), EMPTY_CASES)
def test_gradient_over_an_empty_array_is_empty(
    fn: Callable[..., Any], shape: tuple[int, ...]
) -> None:
    x = np.zeros(shape)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's "mean of empty slice"
        expected = fn(x)
        value, grad = ad.value_and_grad(fn)(x)
    np.testing.assert_array_equal(value, expected)  # nan where NumPy gives nan
    assert grad.shape == shape
    assert grad.dtype == x.dtype


def test_empty_mean_warns_as_numpy_does() -> None:
    with pytest.warns(RuntimeWarning):
        ad.grad(mean_of_all)(np.zeros(0))


def test_jax_gives_the_empty_gradient_too() -> None:
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    assert jax.grad(jax.numpy.mean)(np.zeros(0)).shape == (0,)
    assert ad.grad(mean_of_all)(np.zeros(0)).shape == (0,)


# ---- complex losses -----------------------------------------------------------------------------

Z = np.array([1.0 + 2.0j, 3.0 - 1.0j])


def complex_square_sum(z):
    return np.sum(z * z)


def complex_loss_with_aux(z):
    return np.sum(z * z), np.abs(z)


def modulus_sum(z):
    return np.sum(np.abs(z) ** 2)


@pytest.mark.parametrize(
    "make",
    [
        lambda: ad.grad(complex_square_sum),
        lambda: ad.value_and_grad(complex_square_sum),
        lambda: ad.grad(complex_loss_with_aux, has_aux=True),
    ],
)
def test_grad_of_a_complex_loss_is_refused_where_it_is_computed(make: Callable[[], Any]) -> None:
    differentiated = make()
    for _ in range(2):  # the second call would be a cache hit: refused as well
        with pytest.raises(ad.DifferentiationError, match="grad requires real-valued outputs") as e:
            differentiated(Z)
        message = str(e.value)
        assert "complex128" in message
        assert "test_bad_input.py:" in message
        assert "np.sum(z * z)" in message


def test_grad_of_grad_of_a_complex_loss_is_refused() -> None:
    with pytest.raises(ad.DifferentiationError, match="grad requires real-valued outputs"):
        ad.grad(ad.grad(complex_square_sum))(Z)


def test_real_loss_of_a_complex_argument_still_differentiates() -> None:
    # Note [Complex gradients]: dL/dRe z - 1j dL/dIm z, which is 2 conj(z) here, as in JAX
    np.testing.assert_allclose(ad.grad(modulus_sum)(Z), 2 * np.conj(Z), rtol=1e-14)


def test_vjp_of_a_complex_result_is_still_allowed() -> None:
    out, vjp_fn = ad.vjp(complex_square_sum, Z)
    assert out == pytest.approx(np.sum(Z * Z))
    assert vjp_fn(1.0 + 0.0j)[0].shape == Z.shape


# ---- Jacobians of complex arguments: Note [Complex Jacobians] in `autodiff.jacobians` ---------


def complex_square(z):
    return z * z


def scaled_by_complex(x, z):
    return x * z


def holomorphic_mix(z):
    return np.sin(z) * z[::-1] + np.exp(z) @ np.ones((2, 2)) + z**3


@pytest.mark.parametrize(
    ("make", "args", "what"),
    [
        (lambda: ad.jacobian(complex_square), (Z,), "jacobian of complex_square()"),
        (lambda: ad.jacobian(modulus_sum), (Z,), "jacobian of modulus_sum()"),
        (lambda: ad.hessian(modulus_sum), (Z,), "hessian of modulus_sum()"),
        (lambda: ad.hessian(modulus_sum, argnums=(0,)), (Z,), "hessian of modulus_sum()"),
        (lambda: ad.jacobian(ad.jacobian(modulus_sum)), (Z,), "jacobian of"),
    ],
)
def test_jacobian_of_a_complex_argument_is_refused_naming_it(
    make: Callable[[], Any], args: tuple[Any, ...], what: str
) -> None:
    # Each row would be the derivative of the real part alone, and not say so.
    with pytest.raises(ad.DifferentiationError, match="holomorphic=True") as caught:
        make()(*args)
    message = str(caught.value)
    assert what in message
    assert "argument 'z'" in message
    assert "complex128" in message


def test_vjp_of_a_jacobian_of_a_complex_argument_is_refused() -> None:
    with pytest.raises(ad.DifferentiationError, match="argument 'z'"):
        ad.vjp(ad.jacobian(modulus_sum), Z)


def test_jacobian_of_a_complex_result_is_refused() -> None:
    # Differentiated with respect to the real x only: the rows would drop d Im / d x.
    with pytest.raises(ad.DifferentiationError, match=r"needs a real result, but .* complex128"):
        ad.jacobian(scaled_by_complex)(np.ones(2), Z)


def test_jacobian_of_a_complex_argument_not_differentiated_is_allowed() -> None:
    np.testing.assert_allclose(
        ad.jacobian(scaled_by_complex, argnums=0)(np.ones(2), np.abs(Z)), np.diag(np.abs(Z))
    )


def test_holomorphic_jacobian_is_the_complex_derivative() -> None:
    np.testing.assert_allclose(
        ad.jacobian(complex_square, holomorphic=True)(Z), np.diag(2 * Z), rtol=1e-14
    )
    with pytest.raises(ad.DifferentiationError, match=r"needs complex arguments, .* float64"):
        ad.jacobian(complex_square, holomorphic=True)(Z.real)
    with pytest.raises(ad.DifferentiationError, match=r"needs a complex result, .* float64"):
        ad.jacobian(modulus_sum, holomorphic=True)(Z)
    with pytest.raises(ad.DifferentiationError, match="cannot be differentiated again"):
        ad.jacobian(ad.jacobian(complex_square, holomorphic=True), holomorphic=True)(Z)


def test_holomorphic_jacobian_matches_jax() -> None:
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy

    def jax_mix(z: Any) -> Any:
        return jnp.sin(z) * z[::-1] + jnp.exp(z) @ jnp.ones((2, 2)) + z**3

    expected = jax.jacrev(jax_mix, holomorphic=True)(jnp.asarray(Z))
    actual = ad.jacobian(holomorphic_mix, holomorphic=True)(Z)
    np.testing.assert_allclose(actual, np.asarray(expected), rtol=1e-12)
    with pytest.raises(TypeError, match="holomorphic=True"):  # JAX refuses as we do
        jax.jacrev(jax_mix)(jnp.asarray(Z))


# ---- np.matrix and masked arrays ----------------------------------------------------------------


def elementwise_square_sum(a):
    return np.sum(a * a)


def vector_square(a):
    return a * a


with warnings.catch_warnings():
    warnings.simplefilter("ignore", PendingDeprecationWarning)  # NumPy discourages np.matrix
    MATRIX = np.matrix([[1.0, 2.0], [3.0, 4.0]])
MASKED = np.ma.masked_array([1.0, 2.0, 3.0], mask=[0, 1, 0])

CALLS: list[tuple[str, Callable[[Any], Any]]] = [
    ("script", lambda a: ad.script(elementwise_square_sum)(a)),
    ("grad", lambda a: ad.grad(elementwise_square_sum)(a)),
    ("value_and_grad", lambda a: ad.value_and_grad(elementwise_square_sum)(a)),
    ("vjp", lambda a: ad.vjp(vector_square, a)),
    ("jacobian", lambda a: ad.jacobian(vector_square)(a)),
    ("hessian", lambda a: ad.hessian(elementwise_square_sum)(a)),
    ("gradcheck", lambda a: ad.gradcheck(elementwise_square_sum, a)),
]


@pytest.mark.parametrize(("name", "call"), CALLS, ids=[name for name, _ in CALLS])
@pytest.mark.parametrize(
    ("argument", "kind"),
    [(MATRIX, "numpy.matrix"), (MASKED, "MaskedArray")],
    ids=["matrix", "masked"],
)
def test_matrix_and_masked_arguments_are_refused_by_name(
    name: str, call: Callable[[Any], Any], argument: Any, kind: str
) -> None:
    with pytest.raises(ad.ArgumentError, match=rf"argument 'a' of \w+\(\) is a [\w.]*{kind}"):
        call(argument)


def test_a_matrix_after_a_plain_array_of_its_shape_is_still_refused() -> None:
    # The second call must not be a cache hit on the plain array's compiled code.
    scripted = ad.script(elementwise_square_sum)
    dscripted = ad.grad(elementwise_square_sum)
    plain = np.asarray(MATRIX)
    assert scripted(plain) == 30.0
    np.testing.assert_allclose(dscripted(plain), 2 * plain)
    with pytest.raises(ad.ArgumentError, match=r"numpy\.matrix"):
        scripted(MATRIX)
    with pytest.raises(ad.ArgumentError, match=r"numpy\.matrix"):
        dscripted(MATRIX)
