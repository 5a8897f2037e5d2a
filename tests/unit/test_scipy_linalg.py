"""``scipy.linalg`` in user code: every function found under each import alias, its forward
SciPy's, its gradient against central differences at first and second order, stacks of matrices,
float32 kept, what is refused (located), and three uses written as a JAX user writes them: a
Gaussian process's marginal likelihood through ``cho_factor``/``cho_solve``, a linear ODE's
matrix-exponential solution fitted to data, and whitening by a triangular solve. The formulas
are checked one node at a time in `tests/unit/test_formulas.py` (`tests/scipy_linalg_samples.py`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import autodiff as ad

pytest.importorskip("scipy")
import scipy
import scipy.linalg as sla
from scipy.linalg import cho_factor, cho_solve, expm, lu_factor, lu_solve, solve_triangular

RNG = np.random.default_rng(11)
M = RNG.standard_normal((3, 3))
WELL = M + 3.0 * np.eye(3)
SPD = M @ M.T + np.eye(3)
B = RNG.standard_normal((3, 2))
STACK = RNG.standard_normal((2, 3, 3)) + 3.0 * np.eye(3)
SPD_STACK = STACK @ np.swapaxes(STACK, -1, -2)


def triangular(a, b):
    return np.sum(np.sin(solve_triangular(a, b, trans="T", lower=True)))


def triangular_unit(a, b):
    x = sla.solve_triangular(a, b, trans=2, unit_diagonal=True, check_finite=False)
    return np.sum(x**2)


def upper_cholesky(a):
    return np.sum(np.cos(sla.cholesky(a)))  # SciPy's default: the upper factor


def lower_cholesky(a):
    return np.sum(np.cos(scipy.linalg.cholesky(a, lower=True)))


def cholesky_pair(a, b):
    c, lower = cho_factor(a)
    return np.sum(np.sin(c)) + np.sum(cho_solve((c, lower), b) ** 2)


def lower_cholesky_pair(a, b):
    factor = cho_factor(a, lower=True)
    return np.sum(cho_solve(factor, b[:, 0]) * b[:, 1])


def lu_pair(a, b):
    lu, piv = lu_factor(a)
    return np.sum(np.sin(lu)) + np.sum(lu_solve((lu, piv), b) ** 2)


def lu_transposed(a, b):
    return np.sum(np.tanh(sla.lu_solve(sla.lu_factor(a), b, trans=1)))


def exponential(a):
    return np.sum(np.sin(expm(a)))


def square_root(a):
    return np.sum(sla.sqrtm(a) ** 2 * np.arange(9.0).reshape(3, 3))


def sylvester(a, b):
    return np.sum(np.tanh(sla.solve_sylvester(a, b.T @ b + 3.0 * np.eye(2), b)))


def determinant(a):
    return sla.det(a) ** 2 + sla.det(a * 0.5)


def inverse(a):
    return np.sum(np.sin(sla.inv(a)))


def general_solve(a, b):
    return np.sum(np.sin(sla.solve(a, b))) + np.sum(sla.solve(a, b[:, 0], transposed=True))


def symmetric_solve(a, b):
    upper = sla.solve(a, b, assume_a="sym")
    lower = sla.solve(a, b, assume_a="pos", lower=True)
    return np.sum(np.sin(upper)) + np.sum(lower**2)


def structured_solve(a, b):
    x = sla.solve(a, b, assume_a="upper triangular") + sla.solve(a, b, assume_a="diagonal")
    return np.sum(np.sin(x)) + np.sum(sla.solve(a, b, assume_a="tridiagonal", transposed=True))


# (loss, arguments): the symmetric ones get a full matrix, so that the triangle SciPy leaves
# unread is checked to get no gradient.
LOSSES: list[tuple[Callable[..., Any], tuple[np.ndarray, ...]]] = [
    (triangular, (WELL, B)),
    (triangular_unit, (WELL, B[:, 0])),
    (upper_cholesky, (SPD + np.triu(M, 1) * 0.1,)),
    (lower_cholesky, (SPD,)),
    (cholesky_pair, (SPD + np.tril(M, -1) * 0.1, B)),
    (lower_cholesky_pair, (SPD, B)),
    (lu_pair, (M, B)),
    (lu_transposed, (M, B)),
    (exponential, (M * 0.5,)),
    (square_root, (SPD,)),
    (sylvester, (WELL, B)),
    (determinant, (M,)),
    (inverse, (WELL,)),
    (general_solve, (M, B)),
    (symmetric_solve, (SPD + np.triu(M, 1) * 0.1, B)),
    (structured_solve, (WELL, B)),
]
IDS = [fn.__name__ for fn, _ in LOSSES]


@pytest.mark.parametrize(("fn", "args"), LOSSES, ids=IDS)
def test_forward_equals_scipy_and_gradient_matches_central_differences(
    fn: Callable[..., Any], args: tuple[np.ndarray, ...]
) -> None:
    np.testing.assert_allclose(ad.script(fn)(*args), fn(*args), rtol=1e-12)
    assert ad.gradcheck(fn, *args).ok


@pytest.mark.parametrize(("fn", "args"), LOSSES, ids=IDS)
def test_second_order_matches_central_differences_of_the_gradient(
    fn: Callable[..., Any], args: tuple[np.ndarray, ...]
) -> None:
    gradient = ad.grad(fn, argnums=tuple(range(len(args))))
    assert ad.gradcheck(gradient, *args, rtol=1e-5, atol=1e-6).ok


@pytest.mark.parametrize(("fn", "args"), LOSSES, ids=IDS)
def test_float32_gradients_stay_float32(
    fn: Callable[..., Any], args: tuple[np.ndarray, ...]
) -> None:
    narrow = ad.grad(fn)(*(a.astype(np.float32) for a in args))
    assert narrow.dtype == np.float32
    np.testing.assert_allclose(narrow, ad.grad(fn)(*args), rtol=2e-3, atol=2e-3)


def stacked(a, s, b):
    x = solve_triangular(a, b, lower=True) + sla.solve(a, b) + lu_solve(lu_factor(a), b)
    y = cho_solve(cho_factor(s), b) + sla.solve(s, b, assume_a="pos")
    return np.sum(np.sin(x) + y) + np.sum(expm(a * 0.2) + sla.sqrtm(s)) + np.sum(sla.det(a))


def test_stacks_of_matrices_broadcast_as_scipy_does() -> None:
    """SciPy 1.15 and later take stacks: here a stack against one matrix of columns (their
    gradient summed back) and a stack of vectors."""
    args = (STACK, SPD_STACK, B)
    np.testing.assert_allclose(ad.script(stacked)(*args), stacked(*args), rtol=1e-12)
    assert ad.gradcheck(stacked, *args).ok
    assert ad.gradcheck(ad.grad(stacked, argnums=(0, 1, 2)), *args, rtol=1e-5, atol=1e-6).ok

    def vectors(a, b):
        return np.sum(solve_triangular(a, b) ** 2) + np.sum(sla.solve(a, b) ** 2)

    assert ad.gradcheck(vectors, STACK, B[:, 0]).ok


def test_cho_factor_returns_scipys_pair() -> None:
    def pair(a):
        return cho_factor(a, lower=True)

    c, lower = ad.script(pair)(SPD_STACK)
    expected_c, expected_lower = cho_factor(SPD_STACK, lower=True)
    np.testing.assert_array_equal(c, expected_c)
    np.testing.assert_array_equal(lower, expected_lower)
    assert ad.script(pair)(SPD)[1] is True


def gp_negative_log_marginal_likelihood(log_length, log_noise, x, y):
    """A Gaussian process with a squared-exponential kernel: 1/2 y^T K^-1 y + 1/2 log det K."""
    d2 = (x[:, None] - x[None, :]) ** 2
    k = np.exp(-0.5 * d2 / np.exp(2.0 * log_length)) + np.exp(2.0 * log_noise) * np.eye(len(x))
    factor, lower = cho_factor(k, lower=True)
    alpha = cho_solve((factor, lower), y)
    return 0.5 * y @ alpha + np.sum(np.log(np.diag(factor))) + 0.5 * len(x) * np.log(2 * np.pi)


def test_gaussian_process_marginal_likelihood() -> None:
    x = np.linspace(0.0, 3.0, 8)
    y = np.sin(2.0 * x) + 0.1 * RNG.standard_normal(8)
    args = (np.array(-0.3), np.array(-1.5), x, y)
    scipy_stats = pytest.importorskip("scipy.stats")
    k = np.exp(-0.5 * (x[:, None] - x[None, :]) ** 2 / np.exp(-0.6)) + np.exp(-3.0) * np.eye(8)
    expected = -scipy_stats.multivariate_normal(np.zeros(8), k).logpdf(y)
    np.testing.assert_allclose(ad.script(gp_negative_log_marginal_likelihood)(*args), expected)
    assert ad.gradcheck(gp_negative_log_marginal_likelihood, *args).ok
    assert ad.gradcheck(ad.grad(gp_negative_log_marginal_likelihood, (0, 1)), *args).ok
    hessian = ad.hessian(gp_negative_log_marginal_likelihood, argnums=(0, 1))(*args)
    np.testing.assert_allclose(hessian[0][1], hessian[1][0], rtol=1e-10)


def ode_misfit(a, x0, times, observed):
    """x(t) = expm(A t) x0, the solution of x' = A x, against observations: one stack of
    exponentials, one per time."""
    predicted = expm(a * times[:, None, None]) @ x0
    return np.sum((predicted - observed) ** 2)


def test_matrix_exponential_ode_fit_recovers_the_generator() -> None:
    true_a = np.array([[-0.5, 1.0], [-1.0, -0.5]])
    x0 = np.array([1.0, 0.0])
    times = np.linspace(0.2, 2.0, 6)
    observed = np.stack([sla.expm(true_a * t) @ x0 for t in times])
    start = true_a + 0.05 * RNG.standard_normal((2, 2))
    assert ad.gradcheck(ode_misfit, start, x0, times, observed).ok
    assert ad.gradcheck(ad.grad(ode_misfit), start, x0, times, observed, rtol=1e-5).ok
    # A few steps of gradient descent lower the misfit, and the gradient
    # vanishes at the generator that made the data.
    value_and_grad = ad.value_and_grad(ode_misfit)
    a, first = start, value_and_grad(start, x0, times, observed)[0]
    for _ in range(20):
        a = a - 0.05 * value_and_grad(a, x0, times, observed)[1]
    assert value_and_grad(a, x0, times, observed)[0] < first
    np.testing.assert_allclose(ad.grad(ode_misfit)(true_a, x0, times, observed), 0, atol=1e-10)


def whitened_misfit(log_scales, residuals, correlation):
    """Residuals whitened by the Cholesky factor of their covariance: |L^-1 r|^2."""
    scales = np.exp(log_scales)
    covariance = correlation * scales[:, None] * scales[None, :]
    factor = sla.cholesky(covariance, lower=True)
    white = solve_triangular(factor, residuals, lower=True)
    return 0.5 * np.sum(white**2) + np.sum(np.log(np.diag(factor)))


def test_triangular_solve_whitening() -> None:
    residuals = RNG.standard_normal((3, 5))
    correlation = np.array([[1.0, 0.3, 0.1], [0.3, 1.0, 0.2], [0.1, 0.2, 1.0]])
    log_scales = np.array([0.1, -0.2, 0.3])
    args = (log_scales, residuals, correlation)
    covariance = correlation * np.outer(np.exp(log_scales), np.exp(log_scales))
    quadratic = np.sum(residuals * np.linalg.solve(covariance, residuals))
    expected = 0.5 * quadratic + 0.5 * np.linalg.slogdet(covariance)[1]
    np.testing.assert_allclose(ad.script(whitened_misfit)(*args), expected, rtol=1e-12)
    assert ad.gradcheck(whitened_misfit, *args).ok
    assert ad.gradcheck(ad.grad(whitened_misfit, argnums=(0, 1)), *args, rtol=1e-5).ok


def complex_solve(a, b):
    return np.sum(np.abs(solve_triangular(a, b)))


def banded(a, b):
    return np.sum(sla.solve(a, b, assume_a="banded"))


def lettered(a, b):
    return np.sum(lu_solve(lu_factor(a), b, trans="T"))


def overwritten(a):
    return np.sum(sla.inv(a, overwrite_a=True))


def structured_inverse(a):
    return np.sum(sla.inv(a, assume_a="pos"))


def negative_root(a):
    return np.sum(sla.sqrtm(a))


def unlisted(a):
    return np.sum(sla.logm(a))


@pytest.mark.parametrize(
    ("fn", "args", "message"),
    [
        (complex_solve, (WELL + 1j, B), r"solve_triangular of a complex matrix is not supported"),
        (banded, (WELL, B), r"assume_a='banded'\) is not supported"),
        (lettered, (WELL, B), r"lu_solve: trans must be 0, 1 or 2"),
        (overwritten, (WELL,), r"argument 'overwrite_a' of scipy.linalg.inv is not supported"),
        (structured_inverse, (WELL,), r"argument 'assume_a' of scipy.linalg.inv is not supported"),
        (negative_root, (-SPD,), r"square root of this real matrix is complex"),
        (unlisted, (WELL,), r"logm"),
    ],
    ids=lambda v: getattr(v, "__name__", None),
)
def test_refusals_are_located(fn: Callable[..., Any], args: tuple[Any, ...], message: str) -> None:
    with pytest.raises(ad.AutodiffError, match=message) as caught:
        ad.grad(fn)(*args)
    assert "test_scipy_linalg.py" in str(caught.value)


def test_gradients_agree_with_jax_where_installed() -> None:
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jsl = pytest.importorskip("jax.scipy.linalg")
    jnp = jax.numpy

    def theirs(a, s, b):
        x = jsl.solve_triangular(a, b, trans="T", lower=True) + jsl.solve(a, b)
        x = x + jsl.lu_solve(jsl.lu_factor(a), b) + jsl.cho_solve(jsl.cho_factor(s), b)
        y = jnp.sum(jsl.expm(a * 0.3)) + jnp.sum(jsl.cholesky(s)) + jsl.det(a)
        return jnp.sum(jnp.sin(x)) + y

    def ours(a, s, b):
        x = solve_triangular(a, b, trans="T", lower=True) + sla.solve(a, b)
        x = x + lu_solve(lu_factor(a), b) + cho_solve(cho_factor(s), b)
        y = np.sum(expm(a * 0.3)) + np.sum(sla.cholesky(s)) + sla.det(a)
        return np.sum(np.sin(x)) + y

    args = (WELL, SPD, B)
    grad_a, grad_s, grad_b = ad.grad(ours, argnums=(0, 1, 2))(*args)
    their_a, their_s, their_b = (np.asarray(g) for g in jax.grad(theirs, (0, 1, 2))(*args))
    np.testing.assert_allclose(grad_a, their_a, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(grad_b, their_b, rtol=1e-7, atol=1e-9)
    # JAX symmetrises a matrix it factors, where SciPy reads one triangle: each entry off the
    # diagonal stands for the two JAX spreads its gradient over, so the symmetric sums agree.
    np.testing.assert_allclose(grad_s + grad_s.T, their_s + their_s.T, rtol=1e-7, atol=1e-9)


def test_scipy_linalg_without_scipy_is_a_located_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import frontend.calls

    monkeypatch.setattr(frontend.calls, "scipy_installed", lambda: False)

    def needs_scipy(a):  # compiled here for the first time: no cached graph
        return np.sum(sla.expm(a))

    with pytest.raises(ad.ScriptError) as caught:
        ad.grad(needs_scipy)(M)
    message = str(caught.value)
    assert "scipy.linalg.expm needs SciPy, which is not installed" in message
    assert "test_scipy_linalg.py" in message


def test_pivots_make_scipys_permutation() -> None:
    """The formulas' P of ``lu_factor``'s pivots is ``scipy.linalg.lu``'s, matrix by matrix."""
    from ir.ops.scipy_linalg import lu_permutation

    stack = RNG.standard_normal((4, 5, 5))
    permutations = lu_permutation(lu_factor(stack)[1], stack)
    for a, p in zip(stack, permutations, strict=True):
        np.testing.assert_array_equal(p, sla.lu(a)[0])
