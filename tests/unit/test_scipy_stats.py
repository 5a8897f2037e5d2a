"""``scipy.stats.norm`` in user code: the module-level distribution's methods found under every
import alias, differentiable in x, loc and scale to first and second order, broadcasting every
parameter, float32 gradients kept float32. The formulas are checked one node at a time in
`tests/unit/test_formulas.py` (`tests/scipy_samples.py`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import autodiff as ad

pytest.importorskip("scipy")
import scipy
import scipy.stats as st
from scipy.stats import norm

RNG = np.random.default_rng(5)
X = RNG.normal(size=(3, 4))
LOC = RNG.normal(size=4)
SCALE = RNG.uniform(0.5, 2.0, (3, 1))


def every_method(x, loc, scale):
    return np.sum(
        norm.logpdf(x, loc, scale)
        + norm.pdf(x, loc, scale)
        + norm.cdf(x, loc, scale)
        + norm.logcdf(x, loc, scale)
        + norm.sf(x, loc, scale)
        + norm.logsf(x, loc, scale)
    )


def aliases_and_keywords(x, loc, scale):
    return np.sum(
        st.norm.logpdf(x, loc=loc, scale=scale)
        + scipy.stats.norm.cdf(x, scale=scale)
        + norm.logsf(x, loc)
        + norm.pdf(x)
    )


def gaussian_negative_log_likelihood(x, loc, scale):
    return -np.sum(norm.logpdf(x, loc, scale))


LOSSES = [every_method, aliases_and_keywords, gaussian_negative_log_likelihood]


@pytest.mark.parametrize("fn", LOSSES)
def test_forward_equals_scipy_and_gradients_match_central_differences(
    fn: Callable[..., Any],
) -> None:
    np.testing.assert_allclose(ad.script(fn)(X, LOC, SCALE), fn(X, LOC, SCALE), rtol=1e-12)
    assert ad.gradcheck(fn, X, LOC, SCALE).ok


@pytest.mark.parametrize("fn", LOSSES)
def test_second_order_in_every_parameter(fn: Callable[..., Any]) -> None:
    gradient = ad.grad(fn, argnums=(0, 1, 2))
    assert ad.gradcheck(gradient, X, LOC, SCALE, rtol=1e-5, atol=1e-6).ok


def test_float_parameters_and_float32_arrays() -> None:
    grads = ad.grad(every_method, argnums=(0, 1, 2))(X.astype(np.float32), 0.5, 1.5)
    assert grads[0].dtype == np.float32
    wide = ad.grad(every_method, argnums=(0, 1, 2))(X, 0.5, 1.5)
    for narrow, exact in zip(grads, wide, strict=True):
        np.testing.assert_allclose(narrow, exact, rtol=1e-4, atol=1e-5)


def test_maximum_likelihood_moves_towards_the_sample_moments() -> None:
    """A use: the gradient of the negative log-likelihood vanishes at the sample mean and the
    (biased) sample standard deviation."""
    data = RNG.normal(1.5, 0.7, 50)

    def nll(mu, sigma):
        return -np.sum(norm.logpdf(data, mu, sigma))

    d_mu, d_sigma = ad.grad(nll, argnums=(0, 1))(np.mean(data), np.std(data))
    assert abs(d_mu) < 1e-9
    assert abs(d_sigma) < 1e-9


def test_gradients_agree_with_jax_where_installed() -> None:
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnorm = pytest.importorskip("jax.scipy.stats.norm")

    def theirs(x, loc, scale):
        parts = [getattr(jnorm, m)(x, loc, scale) for m in ("logpdf", "pdf", "cdf", "logcdf")]
        parts += [jnorm.sf(x, loc, scale), jnorm.logsf(x, loc, scale)]
        return sum(part.sum() for part in parts)

    ours = ad.grad(every_method, argnums=(0, 1, 2))(X, LOC, SCALE)
    expected = jax.grad(theirs, argnums=(0, 1, 2))(X, LOC, SCALE)
    for mine, jax_grad in zip(ours, expected, strict=True):
        np.testing.assert_allclose(mine, np.asarray(jax_grad), rtol=1e-9, atol=1e-12)
