"""``scipy.stats.multivariate_normal`` and ``scipy.stats.dirichlet`` in user code: forward equal
to SciPy, results squeezed as SciPy's, gradients against central differences on every entry of
``cov`` (SciPy reads its lower triangle only) at first and second order, the Dirichlet's
categories on the first axis, the cdf's gradient refused, and the losses these are written
for: a Gaussian-process marginal likelihood, a Dirichlet prior over softmax weights."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import autodiff as ad

pytest.importorskip("scipy")
import scipy
import scipy.stats as st
from scipy.stats import dirichlet, multivariate_normal

RNG = np.random.default_rng(11)
_M = RNG.normal(size=(3, 3))
COV = _M @ _M.T + 3.0 * np.eye(3)
LOPSIDED = COV + np.triu(RNG.normal(size=(3, 3)), 1)  # only the lower triangle is read
X = RNG.normal(size=(6, 3))
MEAN = RNG.normal(size=3)
ALPHA = RNG.uniform(1.5, 3.0, 4)
LOGITS = RNG.normal(size=(4, 5))


def test_scipy_reads_the_lower_triangle_of_cov() -> None:
    """What the gradient's shape relies on: changing the upper triangle changes nothing."""
    np.testing.assert_array_equal(
        multivariate_normal.logpdf(X, MEAN, LOPSIDED),
        multivariate_normal.logpdf(X, MEAN, np.tril(LOPSIDED) + np.tril(LOPSIDED, -1).T),
    )


def gaussian_methods(x, mean, cov):
    return np.sum(multivariate_normal.logpdf(x, mean, cov)) + np.sum(
        st.multivariate_normal.pdf(x, mean=mean, cov=cov) * 100.0
    )


def test_every_entry_of_cov_matches_central_differences() -> None:
    np.testing.assert_allclose(
        ad.script(gaussian_methods)(X, MEAN, LOPSIDED), gaussian_methods(X, MEAN, LOPSIDED)
    )
    assert ad.gradcheck(gaussian_methods, X, MEAN, LOPSIDED).ok
    d_cov = ad.grad(gaussian_methods, argnums=2)(X, MEAN, LOPSIDED)
    np.testing.assert_array_equal(np.triu(d_cov, 1), 0.0)
    assert ad.gradcheck(ad.grad(gaussian_methods, argnums=(0, 1, 2)), X, MEAN, LOPSIDED).ok


@pytest.mark.parametrize(
    ("x", "mean", "cov"),
    [
        (X[0], MEAN, COV),  # one point: a scalar result
        (RNG.normal(size=(2, 1, 4, 3)), MEAN, COV),  # batch axes, squeezed
        (X, MEAN, np.diag(COV)),  # a vector: the diagonal
        (X, MEAN, 1.7),  # a scalar: 1.7 * I
        (RNG.normal(size=5), np.array([0.3]), 0.8),  # 1-d: five points of dimension 1
    ],
    ids=["point", "batch", "diagonal", "scalar-cov", "dim-1"],
)
def test_forms_of_the_parameters(x: Any, mean: Any, cov: Any) -> None:
    def loss(x, mean, cov):
        return multivariate_normal.logpdf(x, mean, cov)

    got = ad.script(loss)(x, mean, cov)
    want = multivariate_normal.logpdf(x, mean, cov)
    assert np.shape(got) == np.shape(want)
    np.testing.assert_allclose(got, want, rtol=1e-12)

    def total(x, mean, cov):
        return np.sum(loss(x, mean, cov))

    assert ad.gradcheck(total, x, mean, cov).ok
    assert ad.gradcheck(ad.grad(total, argnums=(0, 1, 2)), x, mean, cov).ok


def test_the_default_mean() -> None:
    """``mean`` left out, or None: zeros of the dimension ``cov`` names."""

    def loss(x, cov):
        return np.sum(
            multivariate_normal.logpdf(x, cov=cov) + st.multivariate_normal.pdf(x, None, cov)
        )

    np.testing.assert_allclose(ad.script(loss)(X, LOPSIDED), loss(X, LOPSIDED))
    assert ad.gradcheck(loss, X, LOPSIDED).ok
    assert ad.gradcheck(ad.grad(loss, argnums=(0, 1)), X, LOPSIDED).ok


def test_float32_gradients_stay_float32() -> None:
    narrow = [a.astype(np.float32) for a in (X, MEAN, COV)]
    grads = ad.grad(gaussian_methods, argnums=(0, 1, 2))(*narrow)
    wide = ad.grad(gaussian_methods, argnums=(0, 1, 2))(X, MEAN, COV)
    for low, exact in zip(grads, wide, strict=True):
        assert low.dtype == np.float32
        np.testing.assert_allclose(low, exact, rtol=1e-3, atol=1e-4)


def test_the_cdf_runs_and_its_gradient_is_refused_where_called() -> None:
    cov = COV[:2, :2]

    def probability(x):
        return np.sum(multivariate_normal.cdf(x, MEAN[:2], cov))

    np.testing.assert_allclose(ad.script(probability)(X[:, :2]), probability(X[:, :2]))
    with pytest.raises(ad.DifferentiationError) as info:
        ad.grad(probability)(X[:, :2])
    message = str(info.value)
    assert "multivariate_normal.cdf is not implemented" in message
    assert "test_scipy_stats_more.py" in message


# ---- a Gaussian process: the marginal likelihood of its hyperparameters -------------------------

INPUTS = np.linspace(0.0, 5.0, 12)
TARGETS = np.sin(INPUTS) + 0.1 * RNG.normal(size=12)


def gp_negative_marginal_likelihood(log_params, inputs, targets):
    amplitude, length, noise = np.exp(log_params[0]), np.exp(log_params[1]), np.exp(log_params[2])
    distances = inputs[:, None] - inputs[None, :]
    kernel = amplitude**2 * np.exp(-0.5 * distances**2 / length**2)
    kernel = kernel + noise**2 * np.eye(inputs.shape[0])
    return -multivariate_normal.logpdf(targets, np.zeros(inputs.shape[0]), kernel)


def test_gaussian_process_marginal_likelihood() -> None:
    log_params = np.log(np.array([1.2, 0.9, 0.3]))
    assert ad.gradcheck(gp_negative_marginal_likelihood, log_params, INPUTS, TARGETS).ok
    hessian = ad.hessian(gp_negative_marginal_likelihood)(log_params, INPUTS, TARGETS)
    np.testing.assert_allclose(hessian, hessian.T, rtol=1e-8)
    assert ad.gradcheck(ad.grad(gp_negative_marginal_likelihood), log_params, INPUTS, TARGETS).ok


# ---- Dirichlet ----------------------------------------------------------------------------------


def softmax_columns(logits):
    shifted = np.exp(logits - np.max(logits, axis=0))
    return shifted / np.sum(shifted, axis=0)


def dirichlet_methods(logits, alpha):
    """Points kept on the simplex by a softmax over the categories, the first axis."""
    points = softmax_columns(logits)
    return np.sum(dirichlet.logpdf(points, alpha)) + np.sum(
        scipy.stats.dirichlet.pdf(points, alpha)
    )


def dirichlet_multinomial_log_prior(logits, log_alpha, counts):
    """A Dirichlet prior on category probabilities and the multinomial log-likelihood of the
    counts seen: the log joint of a Dirichlet-multinomial model."""
    probabilities = softmax_columns(logits)
    prior = dirichlet.logpdf(probabilities, np.exp(log_alpha))
    return np.sum(prior) + np.sum(counts * np.log(probabilities))


def test_dirichlet_forward_and_gradients() -> None:
    np.testing.assert_allclose(
        ad.script(dirichlet_methods)(LOGITS, ALPHA), dirichlet_methods(LOGITS, ALPHA)
    )
    assert ad.gradcheck(dirichlet_methods, LOGITS, ALPHA).ok
    assert ad.gradcheck(ad.grad(dirichlet_methods, argnums=(0, 1)), LOGITS, ALPHA).ok


def test_dirichlet_multinomial_log_prior() -> None:
    counts = RNG.integers(0, 6, (4, 5)).astype(float)
    args = (LOGITS, np.log(ALPHA), counts)
    assert ad.gradcheck(dirichlet_multinomial_log_prior, *args).ok
    assert ad.gradcheck(ad.grad(dirichlet_multinomial_log_prior, argnums=(0, 1)), *args).ok


def test_dirichlet_with_one_row_fewer_completes_the_point() -> None:
    """SciPy appends ``1 - sum(x, 0)``: the last category's share reaches the other rows."""
    points = softmax_columns(LOGITS)[:3]

    def loss(points, alpha):
        return np.sum(dirichlet.logpdf(points, alpha))

    np.testing.assert_allclose(ad.script(loss)(points, ALPHA), loss(points, ALPHA))
    assert ad.gradcheck(loss, points, ALPHA).ok
    assert ad.gradcheck(ad.grad(loss, argnums=(0, 1)), points, ALPHA).ok


def test_dirichlet_float32_concentrations() -> None:
    points = softmax_columns(LOGITS)
    narrow = ad.grad(lambda a: np.sum(dirichlet.logpdf(points, a)))(ALPHA.astype(np.float32))
    assert narrow.dtype == np.float32
    wide = ad.grad(lambda a: np.sum(dirichlet.logpdf(points, a)))(ALPHA)
    np.testing.assert_allclose(narrow, wide, rtol=1e-4)


# ---- against HIPS autograd ----------------------------------------------------------------------


def test_gradients_agree_with_hips_autograd_where_installed() -> None:
    agrad = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")
    ast = pytest.importorskip("autograd.scipy.stats")

    def theirs_gp(log_params):
        amplitude, length, noise = (
            anp.exp(log_params[0]),
            anp.exp(log_params[1]),
            anp.exp(log_params[2]),
        )
        distances = INPUTS[:, None] - INPUTS[None, :]
        kernel = amplitude**2 * anp.exp(-0.5 * distances**2 / length**2)
        kernel = kernel + noise**2 * anp.eye(INPUTS.shape[0])
        return -ast.multivariate_normal.logpdf(TARGETS, anp.zeros(INPUTS.shape[0]), kernel)

    log_params = np.log(np.array([1.2, 0.9, 0.3]))
    np.testing.assert_allclose(
        ad.grad(gp_negative_marginal_likelihood)(log_params, INPUTS, TARGETS),
        agrad.grad(theirs_gp)(log_params),
        rtol=1e-9,
    )

    def ours_rows(x, mean):
        return np.sum(
            multivariate_normal.logpdf(x, mean, COV) + multivariate_normal.pdf(x, mean, COV)
        )

    def theirs_rows(x, mean):
        return anp.sum(
            ast.multivariate_normal.logpdf(x, mean, COV) + ast.multivariate_normal.pdf(x, mean, COV)
        )

    for mine, their in zip(
        ad.grad(ours_rows, argnums=(0, 1))(X, MEAN),
        agrad.grad(theirs_rows, argnum=(0, 1))(X, MEAN),
        strict=True,
    ):
        np.testing.assert_allclose(mine, their, rtol=1e-9, atol=1e-12)

    point = softmax_columns(LOGITS)[:, 0]

    def ours_dirichlet(x, alpha):
        return dirichlet.logpdf(x, alpha) + dirichlet.pdf(x, alpha)

    def theirs_dirichlet(x, alpha):
        return ast.dirichlet.logpdf(x, alpha) + ast.dirichlet.pdf(x, alpha)

    for mine, their in zip(
        ad.grad(ours_dirichlet, argnums=(0, 1))(point, ALPHA),
        agrad.grad(theirs_dirichlet, argnum=(0, 1))(point, ALPHA),
        strict=True,
    ):
        np.testing.assert_allclose(mine, their, rtol=1e-9, atol=1e-12)


def test_a_singular_covariance_has_no_gradient() -> None:
    """allow_singular=True gives SciPy's value; the gradient stops at the call, located."""
    singular = np.array([[1.0, 1.0], [1.0, 1.0]])
    points = np.array([[0.1, 0.1], [0.3, 0.3]])

    def loss(x, cov):
        return np.sum(multivariate_normal.logpdf(x, cov=cov, allow_singular=True))

    np.testing.assert_allclose(ad.script(loss)(points, singular), loss(points, singular))
    with pytest.raises(ad.AutodiffError) as info:
        ad.grad(loss)(points, singular)
    assert "Singular matrix" in str(info.value)
    assert "test_scipy_stats_more.py" in str(info.value)
