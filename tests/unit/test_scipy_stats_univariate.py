"""``scipy.stats.t``, ``gamma``, ``beta``, ``chi2`` and ``poisson`` in user code: every method
found under every import alias and with keywords, forward equal to SciPy, gradients against
central differences at first and second order in every differentiable parameter, broadcasting,
float32 gradients kept float32, and the gradients refused (never a silent zero): the shape
parameters of the distribution functions, Poisson's count and loc. The formulas are checked one
node at a time in `tests/unit/test_formulas.py` (`tests/scipy_samples.py`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import autodiff as ad

pytest.importorskip("scipy")
import scipy
import scipy.stats as st
from scipy.stats import beta, chi2, gamma, poisson, t

RNG = np.random.default_rng(7)
LOC = RNG.normal(size=4) * 0.1
SCALE = RNG.uniform(1.0, 2.0, (3, 1))
Z = RNG.uniform(0.1, 0.9, (3, 4))  # inside every support
X = LOC + SCALE * Z
SHAPE = RNG.uniform(1.5, 4.0, 4)
SHAPE_B = RNG.uniform(1.5, 4.0, (3, 1))
COUNTS = RNG.integers(0, 8, (3, 4)).astype(float)
MU = RNG.uniform(0.5, 5.0, 4)

# The shape parameters of the distribution functions are not differentiated: read as globals.
DF, A, B = 3.5, 2.5, 1.5


def densities(x, shape, shape_b, loc, scale):
    return np.sum(
        t.logpdf(x, shape, loc, scale)
        + t.pdf(x, shape, loc, scale)
        + gamma.logpdf(x, shape, loc, scale)
        + gamma.pdf(x, shape, loc, scale)
        + beta.logpdf(x, shape, shape_b, loc, scale)
        + beta.pdf(x, shape, shape_b, loc, scale)
        + chi2.logpdf(x, shape, loc, scale)
        + chi2.pdf(x, shape, loc, scale)
    )


def distribution_functions(x, loc, scale):
    return (
        np.sum(t.cdf(x, DF, loc, scale) + t.logcdf(x, DF, loc, scale))
        + np.sum(t.sf(x, DF, loc, scale) + t.logsf(x, DF, loc, scale))
        + np.sum(gamma.cdf(x, A, loc, scale) + gamma.logcdf(x, A, loc, scale))
        + np.sum(gamma.sf(x, A, loc, scale) + gamma.logsf(x, A, loc, scale))
        + np.sum(beta.cdf(x, A, B, loc, scale) + beta.logcdf(x, A, B, loc, scale))
        + np.sum(beta.sf(x, A, B, loc, scale) + beta.logsf(x, A, B, loc, scale))
        + np.sum(chi2.cdf(x, DF, loc, scale) + chi2.logcdf(x, DF, loc, scale))
        + np.sum(chi2.sf(x, DF, loc, scale) + chi2.logsf(x, DF, loc, scale))
    )


def aliases_and_keywords(x, shape, loc, scale):
    return np.sum(
        st.t.logpdf(x, df=shape, loc=loc, scale=scale)
        + scipy.stats.gamma.pdf(x, shape, scale=scale)
        + st.beta.logpdf(x / 4.0, a=shape, b=2.0)
        + chi2.logpdf(x, shape, loc)
        + st.gamma.logcdf(x, A, scale=scale)
        + scipy.stats.t.sf(x, DF, loc=loc)
    )


def poisson_methods(mu):
    return np.sum(
        poisson.logpmf(COUNTS, mu)
        + poisson.pmf(COUNTS, mu)
        + poisson.cdf(COUNTS, mu)
        + st.poisson.logcdf(COUNTS, mu)
        + poisson.sf(COUNTS, mu=mu)
        + poisson.logsf(COUNTS, mu, loc=1.0)
    )


CASES: list[tuple[Callable[..., Any], tuple[Any, ...]]] = [
    (densities, (X, SHAPE, SHAPE_B, LOC, SCALE)),
    (distribution_functions, (X, LOC, SCALE)),
    (aliases_and_keywords, (X, SHAPE, LOC, SCALE)),
    (poisson_methods, (MU,)),
]
IDS = [fn.__name__ for fn, _ in CASES]


@pytest.mark.parametrize(("fn", "args"), CASES, ids=IDS)
def test_forward_equals_scipy_and_gradients_match_central_differences(
    fn: Callable[..., Any], args: tuple[Any, ...]
) -> None:
    np.testing.assert_allclose(ad.script(fn)(*args), fn(*args), rtol=1e-12)
    assert ad.gradcheck(fn, *args).ok


@pytest.mark.parametrize(("fn", "args"), CASES, ids=IDS)
def test_second_order_in_every_parameter(fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
    gradient = ad.grad(fn, argnums=tuple(range(len(args))))
    assert ad.gradcheck(gradient, *args, rtol=1e-5, atol=1e-6).ok


def test_float32_gradients_stay_float32() -> None:
    narrow = [a.astype(np.float32) for a in (X, SHAPE, SHAPE_B, LOC, SCALE)]
    grads = ad.grad(densities, argnums=(0, 1, 2, 3, 4))(*narrow)
    wide = ad.grad(densities, argnums=(0, 1, 2, 3, 4))(X, SHAPE, SHAPE_B, LOC, SCALE)
    for low, exact in zip(grads, wide, strict=True):
        assert low.dtype == np.float32
        np.testing.assert_allclose(low, exact, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize(
    ("call", "named"),
    [
        (lambda x, a: gamma.cdf(x, a), "gamma.cdf is not differentiable in its shape parameter a"),
        (lambda x, a: st.t.logsf(x, a), "t.logsf is not differentiable in its shape parameter df"),
        (lambda x, a: beta.sf(x / 4.0, 2.0, b=a), "beta.sf is not differentiable in its shape"),
        (lambda x, a: chi2.logcdf(x, a), "regularized incomplete gamma function"),
        (lambda x, a: poisson.pmf(a, x), "poisson.pmf is not differentiable in k"),
        (lambda x, a: poisson.cdf(COUNTS, x, loc=a), "poisson.cdf is not differentiable in loc"),
    ],
)
def test_gradients_without_a_formula_are_refused_where_called(call: Any, named: str) -> None:
    def loss(x, a):
        return np.sum(call(x, a))

    with pytest.raises(ad.DifferentiationError) as info:
        ad.grad(loss, argnums=1)(X, 2.0)
    message = str(info.value)
    assert named in message
    assert "test_scipy_stats_univariate.py" in message
    assert "^" in message


def test_refused_parameters_need_no_gradient_when_constant() -> None:
    """The same calls, differentiated in x only, are fine: nothing is refused."""

    def loss(x, a):
        return np.sum(gamma.cdf(x, a) + poisson.logpmf(COUNTS, x))

    assert ad.gradcheck(lambda x: loss(x, 2.0), X).ok


# ---- realistic losses -----------------------------------------------------------------------


def student_t_regression_nll(w, log_df, log_scale, features, targets):
    """Robust linear regression: Student-t residuals, the degrees of freedom and the scale
    learned in log space."""
    prediction = features @ w
    return -np.sum(t.logpdf(targets, np.exp(log_df), prediction, np.exp(log_scale)))


def test_student_t_regression() -> None:
    features = RNG.normal(size=(20, 3))
    targets = features @ np.array([1.0, -2.0, 0.5]) + 0.3 * RNG.standard_t(3.0, 20)
    args = (np.zeros(3) + 0.1, np.log(4.0), np.log(0.5), features, targets)
    assert ad.gradcheck(student_t_regression_nll, *args).ok
    hessian = ad.hessian(student_t_regression_nll)(*args)
    np.testing.assert_allclose(hessian, hessian.T, rtol=1e-10, atol=1e-12)
    assert ad.gradcheck(ad.grad(student_t_regression_nll, argnums=(0, 1, 2)), *args).ok


def gamma_beta_likelihood(log_shape, log_rate, log_ab, waits, fractions):
    """Waiting times from a gamma (shape, rate: scale = 1 / rate), fractions from a beta."""
    wait_ll = gamma.logpdf(waits, np.exp(log_shape), scale=np.exp(-log_rate))
    fraction_ll = beta.logpdf(fractions, np.exp(log_ab[0]), np.exp(log_ab[1]))
    return -(np.mean(wait_ll) + np.mean(fraction_ll))


def test_gamma_and_beta_likelihoods_first_and_second_order() -> None:
    waits = RNG.gamma(2.0, 1.5, 30)
    fractions = RNG.beta(2.0, 5.0, 30)
    args = (np.log(1.8), np.log(0.7), np.log(np.array([1.5, 4.0])), waits, fractions)
    assert ad.gradcheck(gamma_beta_likelihood, *args).ok
    assert ad.gradcheck(ad.grad(gamma_beta_likelihood, argnums=(0, 1, 2)), *args).ok


def test_poisson_maximum_likelihood_is_the_sample_mean() -> None:
    """The gradient of the Poisson log-likelihood vanishes at mu = mean(k), and a Poisson GLM's
    gradient matches central differences at first and second order."""
    counts = RNG.poisson(3.0, 40).astype(float)

    def nll(mu):
        return -np.sum(poisson.logpmf(counts, mu))

    assert abs(ad.grad(nll)(np.mean(counts))) < 1e-9
    features = RNG.normal(size=(40, 2))

    def glm(w):
        return -np.sum(poisson.logpmf(counts, np.exp(features @ w)))

    assert ad.gradcheck(glm, np.array([0.3, -0.2])).ok
    assert ad.gradcheck(ad.grad(glm), np.array([0.3, -0.2])).ok


def test_gradients_agree_with_hips_autograd_where_installed() -> None:
    agrad = pytest.importorskip("autograd")
    ast = pytest.importorskip("autograd.scipy.stats")
    anp = pytest.importorskip("autograd.numpy")
    x = Z + 0.5

    def theirs(x, df, a, b, mu):
        return (
            anp.sum(ast.t.logpdf(x, df, 0.1, 1.3) + ast.t.pdf(x, df, 0.1, 1.3))
            + anp.sum(ast.gamma.logpdf(x, a) + ast.gamma.pdf(x, a))
            + anp.sum(ast.beta.logpdf(x / 2.0, a, b) + ast.beta.cdf(x / 2.0, 2.0, 3.0))
            + anp.sum(ast.chi2.logpdf(x, 3.0) + ast.chi2.cdf(x, 4.0))
            + anp.sum(ast.poisson.logpmf(COUNTS, mu) + ast.poisson.pmf(COUNTS, mu))
            + anp.sum(ast.t.cdf(x, 2.0, 0.2) + ast.t.logcdf(x, 5.0, 0.1))
        )

    def ours(x, df, a, b, mu):
        return (
            np.sum(t.logpdf(x, df, 0.1, 1.3) + t.pdf(x, df, 0.1, 1.3))
            + np.sum(gamma.logpdf(x, a) + gamma.pdf(x, a))
            + np.sum(beta.logpdf(x / 2.0, a, b) + beta.cdf(x / 2.0, 2.0, 3.0))
            + np.sum(chi2.logpdf(x, 3.0) + chi2.cdf(x, 4.0))
            + np.sum(poisson.logpmf(COUNTS, mu) + poisson.pmf(COUNTS, mu))
            + np.sum(t.cdf(x, 2.0, 0.2) + t.logcdf(x, 5.0, 0.1))
        )

    args = (x, SHAPE, SHAPE, SHAPE_B, MU)
    expected = agrad.grad(theirs, argnum=list(range(5)))(*args)
    for mine, their in zip(ad.grad(ours, argnums=(0, 1, 2, 3, 4))(*args), expected, strict=True):
        np.testing.assert_allclose(mine, their, rtol=1e-9, atol=1e-12)


def test_densities_outside_their_support_have_zero_gradients() -> None:
    """A pdf is 0 below loc (and above loc + scale for beta) whatever the parameters: its
    gradient there is 0, not the NaN of the logs the formula reads inside the support."""
    x = np.array([-1.0, -0.2, 0.3, 0.7, 1.4])

    def loss(x, shape, loc, scale):
        return np.sum(
            gamma.pdf(x, shape, loc, scale)
            + beta.pdf(x, shape, 2.5, loc, scale)
            + chi2.pdf(x, shape + 1.0, loc, scale)
        )

    grads = ad.grad(loss, argnums=(0, 1, 2, 3))(x, 2.5, 0.1, 1.1)
    assert all(np.all(np.isfinite(g)) for g in grads)
    assert ad.gradcheck(loss, x, 2.5, 0.1, 1.1).ok
    assert ad.gradcheck(ad.grad(loss, argnums=(0, 1, 2, 3)), x, 2.5, 0.1, 1.1).ok
