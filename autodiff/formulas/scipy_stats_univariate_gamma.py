"""Derivative formulas of the gamma family of `ir.ops.scipy_stats_univariate`: ``gamma``,
``chi2`` and ``poisson``, whose distribution functions are regularized incomplete gamma functions
(``poisson.cdf(k, mu)`` is ``gammaincc(floor(k - loc) + 1, mu)``). ``t`` and ``beta`` are in
`autodiff.formulas.scipy_stats_univariate_beta`.

``gamma`` and ``chi2`` are location-scale distributions (Note [Location-scale formulas] in
`autodiff.formulas.scipy_stats_univariate_beta`); ``poisson`` is differentiable in ``mu`` alone.
SciPy's results are float64: each gradient is cast to its operand's dtype.
"""

import numpy as np

from ir.ops import scipy_special as sp
from ir.ops import scipy_stats_univariate as su
from ir.ops.gradients.common import dtype_of
from ir.ops.shape_ops import size_if_not_equal, sum_to_size


def stats_gamma_logpdf(self, a, loc, scale):
    out = su.stats_gamma_logpdf(self, a, loc, scale)
    self_size, self_dtype = size_if_not_equal(self, out), dtype_of(self)
    a_size, a_dtype = size_if_not_equal(a, out), dtype_of(a)
    loc_size, loc_dtype = size_if_not_equal(loc, out), dtype_of(loc)
    scale_size, scale_dtype = size_if_not_equal(scale, out), dtype_of(scale)

    def backward(dout):
        # log f(z) = (a - 1) log z - z - gammaln(a), z > 0
        weight = dout
        z = (self - loc) / scale
        slope = weight * ((a - 1.0) / z - 1.0) / scale
        grad_a = weight * (np.log(z) - sp.special_digamma(a))
        return (
            sum_to_size(slope, self_size).astype(self_dtype),
            sum_to_size(grad_a, a_size).astype(a_dtype),
            sum_to_size(-slope, loc_size).astype(loc_dtype),
            sum_to_size(-slope * z - weight / scale, scale_size).astype(scale_dtype),
        )

    return out, backward


def stats_gamma_pdf(self, a, loc, scale):
    out = su.stats_gamma_pdf(self, a, loc, scale)
    self_size, self_dtype = size_if_not_equal(self, out), dtype_of(self)
    a_size, a_dtype = size_if_not_equal(a, out), dtype_of(a)
    loc_size, loc_dtype = size_if_not_equal(loc, out), dtype_of(loc)
    scale_size, scale_dtype = size_if_not_equal(scale, out), dtype_of(scale)

    def backward(dout):
        # out times the gradient of logpdf; outside the support (out is 0 whatever the
        # parameters) z is moved inside, so that 0 times the logs' NaN is no NaN
        weight = dout * out
        z = np.where(out > 0.0, (self - loc) / scale, 0.5)
        slope = weight * ((a - 1.0) / z - 1.0) / scale
        grad_a = weight * (np.log(z) - sp.special_digamma(a))
        return (
            sum_to_size(slope, self_size).astype(self_dtype),
            sum_to_size(grad_a, a_size).astype(a_dtype),
            sum_to_size(-slope, loc_size).astype(loc_dtype),
            sum_to_size(-slope * z - weight / scale, scale_size).astype(scale_dtype),
        )

    return out, backward


def stats_gamma_cdf(self, a, loc, scale):
    out = su.stats_gamma_cdf(self, a, loc, scale)
    self_size, self_dtype = size_if_not_equal(self, out), dtype_of(self)
    loc_size, loc_dtype = size_if_not_equal(loc, out), dtype_of(loc)
    scale_size, scale_dtype = size_if_not_equal(scale, out), dtype_of(scale)

    def backward(dout):
        # the density
        slope = dout * su.stats_gamma_pdf(self, a, loc, scale)
        z = (self - loc) / scale
        return (
            sum_to_size(slope, self_size).astype(self_dtype),
            None,
            sum_to_size(-slope, loc_size).astype(loc_dtype),
            sum_to_size(-slope * z, scale_size).astype(scale_dtype),
        )

    return out, backward


def stats_gamma_logcdf(self, a, loc, scale):
    out = su.stats_gamma_logcdf(self, a, loc, scale)
    self_size, self_dtype = size_if_not_equal(self, out), dtype_of(self)
    loc_size, loc_dtype = size_if_not_equal(loc, out), dtype_of(loc)
    scale_size, scale_dtype = size_if_not_equal(scale, out), dtype_of(scale)

    def backward(dout):
        # the density over the cdf, divided inside the exponent (finite far in the tail)
        slope = dout * np.exp(su.stats_gamma_logpdf(self, a, loc, scale) - out)
        z = (self - loc) / scale
        return (
            sum_to_size(slope, self_size).astype(self_dtype),
            None,
            sum_to_size(-slope, loc_size).astype(loc_dtype),
            sum_to_size(-slope * z, scale_size).astype(scale_dtype),
        )

    return out, backward


def stats_gamma_sf(self, a, loc, scale):
    out = su.stats_gamma_sf(self, a, loc, scale)
    self_size, self_dtype = size_if_not_equal(self, out), dtype_of(self)
    loc_size, loc_dtype = size_if_not_equal(loc, out), dtype_of(loc)
    scale_size, scale_dtype = size_if_not_equal(scale, out), dtype_of(scale)

    def backward(dout):
        # minus the density
        slope = -dout * su.stats_gamma_pdf(self, a, loc, scale)
        z = (self - loc) / scale
        return (
            sum_to_size(slope, self_size).astype(self_dtype),
            None,
            sum_to_size(-slope, loc_size).astype(loc_dtype),
            sum_to_size(-slope * z, scale_size).astype(scale_dtype),
        )

    return out, backward


def stats_gamma_logsf(self, a, loc, scale):
    out = su.stats_gamma_logsf(self, a, loc, scale)
    self_size, self_dtype = size_if_not_equal(self, out), dtype_of(self)
    loc_size, loc_dtype = size_if_not_equal(loc, out), dtype_of(loc)
    scale_size, scale_dtype = size_if_not_equal(scale, out), dtype_of(scale)

    def backward(dout):
        # minus the density over the sf, divided inside the exponent
        slope = -dout * np.exp(su.stats_gamma_logpdf(self, a, loc, scale) - out)
        z = (self - loc) / scale
        return (
            sum_to_size(slope, self_size).astype(self_dtype),
            None,
            sum_to_size(-slope, loc_size).astype(loc_dtype),
            sum_to_size(-slope * z, scale_size).astype(scale_dtype),
        )

    return out, backward


def stats_chi2_logpdf(self, df, loc, scale):
    out = su.stats_chi2_logpdf(self, df, loc, scale)
    self_size, self_dtype = size_if_not_equal(self, out), dtype_of(self)
    df_size, df_dtype = size_if_not_equal(df, out), dtype_of(df)
    loc_size, loc_dtype = size_if_not_equal(loc, out), dtype_of(loc)
    scale_size, scale_dtype = size_if_not_equal(scale, out), dtype_of(scale)

    def backward(dout):
        # log f(z) = (df / 2 - 1) log z - z / 2 - df / 2 log 2 - gammaln(df / 2)
        weight = dout
        z = (self - loc) / scale
        slope = weight * ((0.5 * df - 1.0) / z - 0.5) / scale
        grad_df = weight * (0.5 * (np.log(0.5 * z) - sp.special_digamma(0.5 * df)))
        return (
            sum_to_size(slope, self_size).astype(self_dtype),
            sum_to_size(grad_df, df_size).astype(df_dtype),
            sum_to_size(-slope, loc_size).astype(loc_dtype),
            sum_to_size(-slope * z - weight / scale, scale_size).astype(scale_dtype),
        )

    return out, backward


def stats_chi2_pdf(self, df, loc, scale):
    out = su.stats_chi2_pdf(self, df, loc, scale)
    self_size, self_dtype = size_if_not_equal(self, out), dtype_of(self)
    df_size, df_dtype = size_if_not_equal(df, out), dtype_of(df)
    loc_size, loc_dtype = size_if_not_equal(loc, out), dtype_of(loc)
    scale_size, scale_dtype = size_if_not_equal(scale, out), dtype_of(scale)

    def backward(dout):
        # out times the gradient of logpdf; outside the support (out is 0 whatever the
        # parameters) z is moved inside, so that 0 times the logs' NaN is no NaN
        weight = dout * out
        z = np.where(out > 0.0, (self - loc) / scale, 0.5)
        slope = weight * ((0.5 * df - 1.0) / z - 0.5) / scale
        grad_df = weight * (0.5 * (np.log(0.5 * z) - sp.special_digamma(0.5 * df)))
        return (
            sum_to_size(slope, self_size).astype(self_dtype),
            sum_to_size(grad_df, df_size).astype(df_dtype),
            sum_to_size(-slope, loc_size).astype(loc_dtype),
            sum_to_size(-slope * z - weight / scale, scale_size).astype(scale_dtype),
        )

    return out, backward


def stats_chi2_cdf(self, df, loc, scale):
    out = su.stats_chi2_cdf(self, df, loc, scale)
    self_size, self_dtype = size_if_not_equal(self, out), dtype_of(self)
    loc_size, loc_dtype = size_if_not_equal(loc, out), dtype_of(loc)
    scale_size, scale_dtype = size_if_not_equal(scale, out), dtype_of(scale)

    def backward(dout):
        # the density
        slope = dout * su.stats_chi2_pdf(self, df, loc, scale)
        z = (self - loc) / scale
        return (
            sum_to_size(slope, self_size).astype(self_dtype),
            None,
            sum_to_size(-slope, loc_size).astype(loc_dtype),
            sum_to_size(-slope * z, scale_size).astype(scale_dtype),
        )

    return out, backward


def stats_chi2_logcdf(self, df, loc, scale):
    out = su.stats_chi2_logcdf(self, df, loc, scale)
    self_size, self_dtype = size_if_not_equal(self, out), dtype_of(self)
    loc_size, loc_dtype = size_if_not_equal(loc, out), dtype_of(loc)
    scale_size, scale_dtype = size_if_not_equal(scale, out), dtype_of(scale)

    def backward(dout):
        # the density over the cdf, divided inside the exponent (finite far in the tail)
        slope = dout * np.exp(su.stats_chi2_logpdf(self, df, loc, scale) - out)
        z = (self - loc) / scale
        return (
            sum_to_size(slope, self_size).astype(self_dtype),
            None,
            sum_to_size(-slope, loc_size).astype(loc_dtype),
            sum_to_size(-slope * z, scale_size).astype(scale_dtype),
        )

    return out, backward


def stats_chi2_sf(self, df, loc, scale):
    out = su.stats_chi2_sf(self, df, loc, scale)
    self_size, self_dtype = size_if_not_equal(self, out), dtype_of(self)
    loc_size, loc_dtype = size_if_not_equal(loc, out), dtype_of(loc)
    scale_size, scale_dtype = size_if_not_equal(scale, out), dtype_of(scale)

    def backward(dout):
        # minus the density
        slope = -dout * su.stats_chi2_pdf(self, df, loc, scale)
        z = (self - loc) / scale
        return (
            sum_to_size(slope, self_size).astype(self_dtype),
            None,
            sum_to_size(-slope, loc_size).astype(loc_dtype),
            sum_to_size(-slope * z, scale_size).astype(scale_dtype),
        )

    return out, backward


def stats_chi2_logsf(self, df, loc, scale):
    out = su.stats_chi2_logsf(self, df, loc, scale)
    self_size, self_dtype = size_if_not_equal(self, out), dtype_of(self)
    loc_size, loc_dtype = size_if_not_equal(loc, out), dtype_of(loc)
    scale_size, scale_dtype = size_if_not_equal(scale, out), dtype_of(scale)

    def backward(dout):
        # minus the density over the sf, divided inside the exponent
        slope = -dout * np.exp(su.stats_chi2_logpdf(self, df, loc, scale) - out)
        z = (self - loc) / scale
        return (
            sum_to_size(slope, self_size).astype(self_dtype),
            None,
            sum_to_size(-slope, loc_size).astype(loc_dtype),
            sum_to_size(-slope * z, scale_size).astype(scale_dtype),
        )

    return out, backward


def stats_poisson_logpmf(self, mu, loc):
    out = su.stats_poisson_logpmf(self, mu, loc)
    mu_size, mu_dtype = size_if_not_equal(mu, out), dtype_of(mu)

    def backward(dout):
        # (k - loc) log mu - mu - gammaln(k - loc + 1); k and loc are refused
        grad_mu = dout * ((self - loc) / mu - 1.0)
        return None, sum_to_size(grad_mu, mu_size).astype(mu_dtype), None

    return out, backward


def stats_poisson_pmf(self, mu, loc):
    out = su.stats_poisson_pmf(self, mu, loc)
    mu_size, mu_dtype = size_if_not_equal(mu, out), dtype_of(mu)

    def backward(dout):
        grad_mu = dout * out * ((self - loc) / mu - 1.0)
        return None, sum_to_size(grad_mu, mu_size).astype(mu_dtype), None

    return out, backward


def stats_poisson_cdf(self, mu, loc):
    out = su.stats_poisson_cdf(self, mu, loc)
    mu_size, mu_dtype = size_if_not_equal(mu, out), dtype_of(mu)

    def backward(dout):
        # the sum of pmf(j) over j <= floor(k - loc) telescopes to -pmf(floor(k - loc))
        below = np.floor(self - loc)
        grad_mu = -dout * su.stats_poisson_pmf(below, mu, 0.0)
        return None, sum_to_size(grad_mu, mu_size).astype(mu_dtype), None

    return out, backward


def stats_poisson_logcdf(self, mu, loc):
    out = su.stats_poisson_logcdf(self, mu, loc)
    mu_size, mu_dtype = size_if_not_equal(mu, out), dtype_of(mu)

    def backward(dout):
        # -pmf(floor(k - loc)) over the cdf, divided inside the exponent
        below = np.floor(self - loc)
        grad_mu = -dout * np.exp(su.stats_poisson_logpmf(below, mu, 0.0) - out)
        return None, sum_to_size(grad_mu, mu_size).astype(mu_dtype), None

    return out, backward


def stats_poisson_sf(self, mu, loc):
    out = su.stats_poisson_sf(self, mu, loc)
    mu_size, mu_dtype = size_if_not_equal(mu, out), dtype_of(mu)

    def backward(dout):
        # 1 - cdf
        below = np.floor(self - loc)
        grad_mu = dout * su.stats_poisson_pmf(below, mu, 0.0)
        return None, sum_to_size(grad_mu, mu_size).astype(mu_dtype), None

    return out, backward


def stats_poisson_logsf(self, mu, loc):
    out = su.stats_poisson_logsf(self, mu, loc)
    mu_size, mu_dtype = size_if_not_equal(mu, out), dtype_of(mu)

    def backward(dout):
        # pmf(floor(k - loc)) over the sf, divided inside the exponent
        below = np.floor(self - loc)
        grad_mu = dout * np.exp(su.stats_poisson_logpmf(below, mu, 0.0) - out)
        return None, sum_to_size(grad_mu, mu_size).astype(mu_dtype), None

    return out, backward
