"""Derivative formulas of the beta family of `ir.ops.scipy_stats_univariate`: ``t`` and ``beta``,
whose distribution functions are regularized incomplete beta functions. ``gamma``, ``chi2`` and
``poisson`` are in `autodiff.formulas.scipy_stats_univariate_gamma`.

Note [Location-scale formulas]
A location-scale density is ``f(z) / scale`` with ``z = (x - loc) / scale``: with ``score`` the
derivative of ``log f`` in ``z`` and ``slope = weight * score / scale``, x gets ``slope``, loc
``-slope`` and scale ``-slope * z - weight / scale``, where ``weight`` is ``dout`` for logpdf and
``dout * out`` for pdf; each shape parameter gets ``weight`` times the derivative of ``log f`` in
it. A distribution function's slope is the density itself (the ``pdf`` operator, so second
derivatives go through its formula), and its shape parameters' gradients are refused (Note
[Refused operands] in `ir.ops.registry`). SciPy's results are float64: each gradient is cast to
its operand's dtype.
"""

import numpy as np

from ir.ops import scipy_special as sp
from ir.ops import scipy_stats_univariate as su
from ir.ops.gradients.common import dtype_of
from ir.ops.shape_ops import size_if_not_equal, sum_to_size


def stats_t_logpdf(self, df, loc, scale):
    out = su.stats_t_logpdf(self, df, loc, scale)
    self_size, self_dtype = size_if_not_equal(self, out), dtype_of(self)
    df_size, df_dtype = size_if_not_equal(df, out), dtype_of(df)
    loc_size, loc_dtype = size_if_not_equal(loc, out), dtype_of(loc)
    scale_size, scale_dtype = size_if_not_equal(scale, out), dtype_of(scale)

    def backward(dout):
        # log f(z) = gammaln((df + 1) / 2) - gammaln(df / 2) - log(df pi) / 2
        #     - (df + 1) / 2 log(1 + z**2 / df)
        weight = dout
        z = (self - loc) / scale
        slope = weight * (-(df + 1.0) * z / (df + z * z)) / scale
        grad_df = weight * (
            0.5 * (sp.special_digamma(0.5 * (df + 1.0)) - sp.special_digamma(0.5 * df))
            - 0.5 / df
            - 0.5 * np.log1p(z * z / df)
            + 0.5 * (df + 1.0) * z * z / (df * (df + z * z))
        )
        return (
            sum_to_size(slope, self_size).astype(self_dtype),
            sum_to_size(grad_df, df_size).astype(df_dtype),
            sum_to_size(-slope, loc_size).astype(loc_dtype),
            sum_to_size(-slope * z - weight / scale, scale_size).astype(scale_dtype),
        )

    return out, backward


def stats_t_pdf(self, df, loc, scale):
    out = su.stats_t_pdf(self, df, loc, scale)
    self_size, self_dtype = size_if_not_equal(self, out), dtype_of(self)
    df_size, df_dtype = size_if_not_equal(df, out), dtype_of(df)
    loc_size, loc_dtype = size_if_not_equal(loc, out), dtype_of(loc)
    scale_size, scale_dtype = size_if_not_equal(scale, out), dtype_of(scale)

    def backward(dout):
        # out times the gradient of logpdf
        weight = dout * out
        z = (self - loc) / scale
        slope = weight * (-(df + 1.0) * z / (df + z * z)) / scale
        grad_df = weight * (
            0.5 * (sp.special_digamma(0.5 * (df + 1.0)) - sp.special_digamma(0.5 * df))
            - 0.5 / df
            - 0.5 * np.log1p(z * z / df)
            + 0.5 * (df + 1.0) * z * z / (df * (df + z * z))
        )
        return (
            sum_to_size(slope, self_size).astype(self_dtype),
            sum_to_size(grad_df, df_size).astype(df_dtype),
            sum_to_size(-slope, loc_size).astype(loc_dtype),
            sum_to_size(-slope * z - weight / scale, scale_size).astype(scale_dtype),
        )

    return out, backward


def stats_t_cdf(self, df, loc, scale):
    out = su.stats_t_cdf(self, df, loc, scale)
    self_size, self_dtype = size_if_not_equal(self, out), dtype_of(self)
    loc_size, loc_dtype = size_if_not_equal(loc, out), dtype_of(loc)
    scale_size, scale_dtype = size_if_not_equal(scale, out), dtype_of(scale)

    def backward(dout):
        # the density
        slope = dout * su.stats_t_pdf(self, df, loc, scale)
        z = (self - loc) / scale
        return (
            sum_to_size(slope, self_size).astype(self_dtype),
            None,
            sum_to_size(-slope, loc_size).astype(loc_dtype),
            sum_to_size(-slope * z, scale_size).astype(scale_dtype),
        )

    return out, backward


def stats_t_logcdf(self, df, loc, scale):
    out = su.stats_t_logcdf(self, df, loc, scale)
    self_size, self_dtype = size_if_not_equal(self, out), dtype_of(self)
    loc_size, loc_dtype = size_if_not_equal(loc, out), dtype_of(loc)
    scale_size, scale_dtype = size_if_not_equal(scale, out), dtype_of(scale)

    def backward(dout):
        # the density over the cdf, divided inside the exponent (finite far in the tail)
        slope = dout * np.exp(su.stats_t_logpdf(self, df, loc, scale) - out)
        z = (self - loc) / scale
        return (
            sum_to_size(slope, self_size).astype(self_dtype),
            None,
            sum_to_size(-slope, loc_size).astype(loc_dtype),
            sum_to_size(-slope * z, scale_size).astype(scale_dtype),
        )

    return out, backward


def stats_t_sf(self, df, loc, scale):
    out = su.stats_t_sf(self, df, loc, scale)
    self_size, self_dtype = size_if_not_equal(self, out), dtype_of(self)
    loc_size, loc_dtype = size_if_not_equal(loc, out), dtype_of(loc)
    scale_size, scale_dtype = size_if_not_equal(scale, out), dtype_of(scale)

    def backward(dout):
        # minus the density
        slope = -dout * su.stats_t_pdf(self, df, loc, scale)
        z = (self - loc) / scale
        return (
            sum_to_size(slope, self_size).astype(self_dtype),
            None,
            sum_to_size(-slope, loc_size).astype(loc_dtype),
            sum_to_size(-slope * z, scale_size).astype(scale_dtype),
        )

    return out, backward


def stats_t_logsf(self, df, loc, scale):
    out = su.stats_t_logsf(self, df, loc, scale)
    self_size, self_dtype = size_if_not_equal(self, out), dtype_of(self)
    loc_size, loc_dtype = size_if_not_equal(loc, out), dtype_of(loc)
    scale_size, scale_dtype = size_if_not_equal(scale, out), dtype_of(scale)

    def backward(dout):
        # minus the density over the sf, divided inside the exponent
        slope = -dout * np.exp(su.stats_t_logpdf(self, df, loc, scale) - out)
        z = (self - loc) / scale
        return (
            sum_to_size(slope, self_size).astype(self_dtype),
            None,
            sum_to_size(-slope, loc_size).astype(loc_dtype),
            sum_to_size(-slope * z, scale_size).astype(scale_dtype),
        )

    return out, backward


def stats_beta_logpdf(self, a, b, loc, scale):
    out = su.stats_beta_logpdf(self, a, b, loc, scale)
    self_size, self_dtype = size_if_not_equal(self, out), dtype_of(self)
    a_size, a_dtype = size_if_not_equal(a, out), dtype_of(a)
    b_size, b_dtype = size_if_not_equal(b, out), dtype_of(b)
    loc_size, loc_dtype = size_if_not_equal(loc, out), dtype_of(loc)
    scale_size, scale_dtype = size_if_not_equal(scale, out), dtype_of(scale)

    def backward(dout):
        # log f(z) = (a - 1) log z + (b - 1) log(1 - z) - betaln(a, b), 0 < z < 1
        weight = dout
        z = (self - loc) / scale
        slope = weight * ((a - 1.0) / z - (b - 1.0) / (1.0 - z)) / scale
        both = sp.special_digamma(a + b)
        grad_a = weight * (np.log(z) - sp.special_digamma(a) + both)
        grad_b = weight * (np.log1p(-z) - sp.special_digamma(b) + both)
        return (
            sum_to_size(slope, self_size).astype(self_dtype),
            sum_to_size(grad_a, a_size).astype(a_dtype),
            sum_to_size(grad_b, b_size).astype(b_dtype),
            sum_to_size(-slope, loc_size).astype(loc_dtype),
            sum_to_size(-slope * z - weight / scale, scale_size).astype(scale_dtype),
        )

    return out, backward


def stats_beta_pdf(self, a, b, loc, scale):
    out = su.stats_beta_pdf(self, a, b, loc, scale)
    self_size, self_dtype = size_if_not_equal(self, out), dtype_of(self)
    a_size, a_dtype = size_if_not_equal(a, out), dtype_of(a)
    b_size, b_dtype = size_if_not_equal(b, out), dtype_of(b)
    loc_size, loc_dtype = size_if_not_equal(loc, out), dtype_of(loc)
    scale_size, scale_dtype = size_if_not_equal(scale, out), dtype_of(scale)

    def backward(dout):
        # out times the gradient of logpdf; outside the support (out is 0 whatever the
        # parameters) z is moved inside, so that 0 times the logs' NaN is no NaN
        weight = dout * out
        z = np.where(out > 0.0, (self - loc) / scale, 0.5)
        slope = weight * ((a - 1.0) / z - (b - 1.0) / (1.0 - z)) / scale
        both = sp.special_digamma(a + b)
        grad_a = weight * (np.log(z) - sp.special_digamma(a) + both)
        grad_b = weight * (np.log1p(-z) - sp.special_digamma(b) + both)
        return (
            sum_to_size(slope, self_size).astype(self_dtype),
            sum_to_size(grad_a, a_size).astype(a_dtype),
            sum_to_size(grad_b, b_size).astype(b_dtype),
            sum_to_size(-slope, loc_size).astype(loc_dtype),
            sum_to_size(-slope * z - weight / scale, scale_size).astype(scale_dtype),
        )

    return out, backward


def stats_beta_cdf(self, a, b, loc, scale):
    out = su.stats_beta_cdf(self, a, b, loc, scale)
    self_size, self_dtype = size_if_not_equal(self, out), dtype_of(self)
    loc_size, loc_dtype = size_if_not_equal(loc, out), dtype_of(loc)
    scale_size, scale_dtype = size_if_not_equal(scale, out), dtype_of(scale)

    def backward(dout):
        # the density
        slope = dout * su.stats_beta_pdf(self, a, b, loc, scale)
        z = (self - loc) / scale
        return (
            sum_to_size(slope, self_size).astype(self_dtype),
            None,
            None,
            sum_to_size(-slope, loc_size).astype(loc_dtype),
            sum_to_size(-slope * z, scale_size).astype(scale_dtype),
        )

    return out, backward


def stats_beta_logcdf(self, a, b, loc, scale):
    out = su.stats_beta_logcdf(self, a, b, loc, scale)
    self_size, self_dtype = size_if_not_equal(self, out), dtype_of(self)
    loc_size, loc_dtype = size_if_not_equal(loc, out), dtype_of(loc)
    scale_size, scale_dtype = size_if_not_equal(scale, out), dtype_of(scale)

    def backward(dout):
        # the density over the cdf, divided inside the exponent (finite far in the tail)
        slope = dout * np.exp(su.stats_beta_logpdf(self, a, b, loc, scale) - out)
        z = (self - loc) / scale
        return (
            sum_to_size(slope, self_size).astype(self_dtype),
            None,
            None,
            sum_to_size(-slope, loc_size).astype(loc_dtype),
            sum_to_size(-slope * z, scale_size).astype(scale_dtype),
        )

    return out, backward


def stats_beta_sf(self, a, b, loc, scale):
    out = su.stats_beta_sf(self, a, b, loc, scale)
    self_size, self_dtype = size_if_not_equal(self, out), dtype_of(self)
    loc_size, loc_dtype = size_if_not_equal(loc, out), dtype_of(loc)
    scale_size, scale_dtype = size_if_not_equal(scale, out), dtype_of(scale)

    def backward(dout):
        # minus the density
        slope = -dout * su.stats_beta_pdf(self, a, b, loc, scale)
        z = (self - loc) / scale
        return (
            sum_to_size(slope, self_size).astype(self_dtype),
            None,
            None,
            sum_to_size(-slope, loc_size).astype(loc_dtype),
            sum_to_size(-slope * z, scale_size).astype(scale_dtype),
        )

    return out, backward


def stats_beta_logsf(self, a, b, loc, scale):
    out = su.stats_beta_logsf(self, a, b, loc, scale)
    self_size, self_dtype = size_if_not_equal(self, out), dtype_of(self)
    loc_size, loc_dtype = size_if_not_equal(loc, out), dtype_of(loc)
    scale_size, scale_dtype = size_if_not_equal(scale, out), dtype_of(scale)

    def backward(dout):
        # minus the density over the sf, divided inside the exponent
        slope = -dout * np.exp(su.stats_beta_logpdf(self, a, b, loc, scale) - out)
        z = (self - loc) / scale
        return (
            sum_to_size(slope, self_size).astype(self_dtype),
            None,
            None,
            sum_to_size(-slope, loc_size).astype(loc_dtype),
            sum_to_size(-slope * z, scale_size).astype(scale_dtype),
        )

    return out, backward
