"""Derivative formulas of the operators of `ir.ops.scipy_stats`.

Each is a function of ``z = (x - loc) / scale`` (and of ``scale`` itself for the densities):
with ``slope = dout * d(out)/dz / scale``, x gets ``slope``, loc ``-slope`` and scale
``-slope * z``. The normal density's ``exp(-z**2 / 2) / sqrt(2 pi)`` is written with
sqrt(2 pi) = 2.5066282746310002. SciPy's results are float64: each gradient is cast to its
operand's dtype.
"""

import numpy as np

from ir.ops import scipy_stats as st
from ir.ops.gradients.common import dtype_of
from ir.ops.shape_ops import size_if_not_equal, sum_to_size


def stats_norm_logpdf(self, loc, scale):
    out = st.stats_norm_logpdf(self, loc, scale)
    self_size, self_dtype = size_if_not_equal(self, out), dtype_of(self)
    loc_size, loc_dtype = size_if_not_equal(loc, out), dtype_of(loc)
    scale_size, scale_dtype = size_if_not_equal(scale, out), dtype_of(scale)

    def backward(dout):
        # -z**2 / 2 - log(scale) - log(2 pi) / 2
        z = (self - loc) / scale
        slope = -dout * z / scale
        grad_scale = -slope * z - dout / scale
        return (
            sum_to_size(slope, self_size).astype(self_dtype),
            sum_to_size(-slope, loc_size).astype(loc_dtype),
            sum_to_size(grad_scale, scale_size).astype(scale_dtype),
        )

    return out, backward


def stats_norm_pdf(self, loc, scale):
    out = st.stats_norm_pdf(self, loc, scale)
    self_size, self_dtype = size_if_not_equal(self, out), dtype_of(self)
    loc_size, loc_dtype = size_if_not_equal(loc, out), dtype_of(loc)
    scale_size, scale_dtype = size_if_not_equal(scale, out), dtype_of(scale)

    def backward(dout):
        # exp(-z**2 / 2) / (sqrt(2 pi) scale)
        z = (self - loc) / scale
        slope = -dout * out * z / scale
        grad_scale = -slope * z - dout * out / scale
        return (
            sum_to_size(slope, self_size).astype(self_dtype),
            sum_to_size(-slope, loc_size).astype(loc_dtype),
            sum_to_size(grad_scale, scale_size).astype(scale_dtype),
        )

    return out, backward


def stats_norm_cdf(self, loc, scale):
    out = st.stats_norm_cdf(self, loc, scale)
    self_size, self_dtype = size_if_not_equal(self, out), dtype_of(self)
    loc_size, loc_dtype = size_if_not_equal(loc, out), dtype_of(loc)
    scale_size, scale_dtype = size_if_not_equal(scale, out), dtype_of(scale)

    def backward(dout):
        z = (self - loc) / scale
        slope = dout * np.exp(-0.5 * z * z) / (2.5066282746310002 * scale)
        return (
            sum_to_size(slope, self_size).astype(self_dtype),
            sum_to_size(-slope, loc_size).astype(loc_dtype),
            sum_to_size(-slope * z, scale_size).astype(scale_dtype),
        )

    return out, backward


def stats_norm_logcdf(self, loc, scale):
    out = st.stats_norm_logcdf(self, loc, scale)
    self_size, self_dtype = size_if_not_equal(self, out), dtype_of(self)
    loc_size, loc_dtype = size_if_not_equal(loc, out), dtype_of(loc)
    scale_size, scale_dtype = size_if_not_equal(scale, out), dtype_of(scale)

    def backward(dout):
        # the density over the cdf, divided inside the exponent: finite far in the tail
        z = (self - loc) / scale
        slope = dout * np.exp(-0.5 * z * z - out) / (2.5066282746310002 * scale)
        return (
            sum_to_size(slope, self_size).astype(self_dtype),
            sum_to_size(-slope, loc_size).astype(loc_dtype),
            sum_to_size(-slope * z, scale_size).astype(scale_dtype),
        )

    return out, backward


def stats_norm_sf(self, loc, scale):
    out = st.stats_norm_sf(self, loc, scale)
    self_size, self_dtype = size_if_not_equal(self, out), dtype_of(self)
    loc_size, loc_dtype = size_if_not_equal(loc, out), dtype_of(loc)
    scale_size, scale_dtype = size_if_not_equal(scale, out), dtype_of(scale)

    def backward(dout):
        z = (self - loc) / scale
        slope = -dout * np.exp(-0.5 * z * z) / (2.5066282746310002 * scale)
        return (
            sum_to_size(slope, self_size).astype(self_dtype),
            sum_to_size(-slope, loc_size).astype(loc_dtype),
            sum_to_size(-slope * z, scale_size).astype(scale_dtype),
        )

    return out, backward


def stats_norm_logsf(self, loc, scale):
    out = st.stats_norm_logsf(self, loc, scale)
    self_size, self_dtype = size_if_not_equal(self, out), dtype_of(self)
    loc_size, loc_dtype = size_if_not_equal(loc, out), dtype_of(loc)
    scale_size, scale_dtype = size_if_not_equal(scale, out), dtype_of(scale)

    def backward(dout):
        z = (self - loc) / scale
        slope = -dout * np.exp(-0.5 * z * z - out) / (2.5066282746310002 * scale)
        return (
            sum_to_size(slope, self_size).astype(self_dtype),
            sum_to_size(-slope, loc_size).astype(loc_dtype),
            sum_to_size(-slope * z, scale_size).astype(scale_dtype),
        )

    return out, backward
