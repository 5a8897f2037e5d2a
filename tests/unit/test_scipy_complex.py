"""SciPy's functions of complex values (Note [Complex SciPy operands] in `ir.ops.scipy_special`).

Those SciPy computes for complex values and whose formula carries over (erf, gamma, xlogy,
the Bessel functions of real order, logsumexp and its sign, softmax...) are complex-capable
operators: the tables of `tests/unit/test_complex_gradients.py` and
`tests/unit/test_complex_operators.py` check every sample of `tests/scipy_samples.py` made
complex, at first and second order. Here:
every other SciPy operator refuses complex operands with a located error, and user functions
of complex values are differentiated twice.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import autodiff as ad
from ir.errors import AutodiffError
from ir.ops import OPS
from tests.scipy_samples import SCIPY_REAL_ONLY
from tests.unit.test_complex_gradients import check_complex_gradient, numeric_gradient

pytest.importorskip("scipy")
import scipy.special as sp
from scipy.special import logsumexp

REFUSED = sorted(SCIPY_REAL_ONLY)
"""The operators whose complex operands the test below checks are refused."""

Z = np.array([0.7 + 0.3j, 1.2 - 0.4j, 0.9 + 0.1j])


def _function(op: str) -> Callable[..., Any]:
    """The SciPy function user code calls for ``op`` (its first spelling)."""
    module, _, name = OPS[op].spellings[0].name.rpartition(".")
    if module.startswith("scipy.stats."):  # a method of a module-level distribution
        package, _, distribution = module.rpartition(".")
        return getattr(getattr(importlib.import_module(package), distribution), name)
    return getattr(importlib.import_module(module), name)


def _loss_of(op: str) -> Callable[..., Any]:
    """A loss of one complex argument that calls ``op`` on it, as user code would."""
    function = _function(op)
    arguments = [argument.name for argument in OPS[op].schema.arguments]
    if arguments in (["self"], ["self", "loc", "scale"]):

        def unary(z):
            return np.sum(np.abs(function(z)))

        return unary
    if arguments == ["self", "other"]:

        def binary(z):
            return np.sum(np.abs(function(z, z + 1.0)))

        return binary
    if arguments == ["order", "self"]:

        def of_order(z):
            return np.sum(np.abs(function(1, z)))

        return of_order
    if arguments == ["self", "d"]:

        def of_dimension(z):
            return np.sum(np.abs(function(z + 2.0, 2)))

        return of_dimension
    if arguments[0] == "self" and op.startswith("aten::stats_"):
        # A distribution's method: its parameters without defaults (t's df, gamma's a,
        # dirichlet's alpha) as real numbers, the complex value as the point.
        required = [a.name for a in OPS[op].schema.arguments[1:] if not a.has_default]
        parameters = tuple(np.full(Z.shape, 2.0) if name == "alpha" else 2.0 for name in required)

        def distribution(z):
            return np.sum(np.abs(function(z, *parameters)))

        return distribution
    raise AssertionError(f"{op}: no loss written for the arguments {arguments}")


@pytest.mark.parametrize("op", REFUSED)
def test_complex_operands_are_refused_with_a_located_error(op: str) -> None:
    with pytest.raises(AutodiffError) as caught:
        ad.grad(_loss_of(op))(Z)
    message = str(caught.value)
    assert "of a complex value is not supported" in message, message
    assert "test_scipy_complex.py:" in message
    assert "^" in message


NO_COMPLEX_LOOP = sorted(
    op for op, why in SCIPY_REAL_ONLY.items() if why.startswith("SciPy computes it for real")
)


@pytest.mark.parametrize("op", NO_COMPLEX_LOOP)
def test_scipy_refuses_the_functions_listed_as_real_only(op: str) -> None:
    with pytest.raises(TypeError):
        _loss_of(op)(Z)


def test_digamma_itself_takes_complex_values() -> None:
    """Only its derivative is refused: the forward is SciPy's."""

    def digamma_sum(z):
        return np.sum(sp.digamma(z))

    np.testing.assert_allclose(ad.script(digamma_sum)(Z), digamma_sum(Z), rtol=1e-14)


# ---- user functions of complex values -----------------------------------------------------------


def log_partition(z, w):
    return np.abs(logsumexp(z, b=w)) ** 2 + np.sum(np.abs(sp.softmax(z)) ** 2)


def error_functions(z):
    return np.sum(np.abs(sp.erf(z) * sp.erfc(0.5 * z)) ** 2 + np.real(sp.log_ndtr(z)))


def gamma_and_entropy(z):
    return np.sum(np.abs(sp.gamma(z)) + np.imag(sp.xlogy(z, z + 2.0) + sp.xlog1py(z, z)))


def bessel(z):
    return np.sum(
        np.abs(sp.jv(1.5, z) + sp.yv(0.5, z) + sp.iv(2.0, z)) ** 2 + np.real(sp.ive(1, z))
    )


def log_probabilities(z):
    return np.sum(np.abs(sp.log_softmax(z * z)) ** 2)


def magnitude_and_phase(z):
    # the log of |sum(w exp(z))| and the phase of the sum: both move with z
    log_magnitude, phase = logsumexp(z, b=np.array([1.0, -0.5, 2.0]), return_sign=True)
    return log_magnitude**2 + np.real(phase) + 3.0 * np.imag(phase) ** 3


FIRST_ORDER = [
    log_partition,
    error_functions,
    gamma_and_entropy,
    bessel,
    log_probabilities,
    magnitude_and_phase,
]
SECOND_ORDER = [error_functions, bessel, log_probabilities, magnitude_and_phase]


def _arguments(fn: Callable[..., Any]) -> tuple[Any, ...]:
    return (Z, Z[::-1] * 0.5 + 1.0) if fn is log_partition else (Z,)


@pytest.mark.parametrize("fn", FIRST_ORDER, ids=[f.__name__ for f in FIRST_ORDER])
def test_forward_equals_scipy_and_gradient_matches_central_differences(
    fn: Callable[..., Any],
) -> None:
    args = _arguments(fn)
    np.testing.assert_allclose(ad.script(fn)(*args), fn(*args), rtol=1e-12)
    check_complex_gradient(fn, *args, argnums=tuple(range(len(args))), rtol=1e-6)


@pytest.mark.parametrize("fn", SECOND_ORDER, ids=[f.__name__ for f in SECOND_ORDER])
def test_gradient_of_the_complex_gradient(fn: Callable[..., Any]) -> None:
    """``vjp(grad(f))`` for a complex ``v`` is the gradient of ``Re(sum(v * grad(f)(z)))``."""
    v = np.array([0.3 - 1.1j, -0.7 + 0.2j, 1.4 + 0.5j])
    gradient = ad.grad(fn)
    _, vjp_fn = ad.vjp(gradient, Z)
    (got,) = vjp_fn(v)

    def projected(z):
        return float(np.real(np.sum(v * gradient(z))))

    np.testing.assert_allclose(got, numeric_gradient(projected, (Z,), 0), rtol=1e-6, atol=1e-7)


def gamma_magnitude(z):
    return np.sum(np.abs(sp.gamma(z)))


def test_second_derivative_of_gamma_of_a_complex_value_is_a_located_error() -> None:
    """gamma's derivative calls digamma, whose derivative SciPy has no complex loop for."""
    gradient = ad.grad(gamma_magnitude)
    with pytest.raises(AutodiffError) as caught:
        ad.vjp(gradient, Z)[1](Z)
    message = str(caught.value)
    assert "scipy.special.polygamma of a complex value is not supported" in message, message
    assert "test_scipy_complex.py:" in message
