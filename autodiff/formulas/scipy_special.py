"""Derivative formulas of the operators of `ir.ops.scipy_special`.

The kernels are called through the module (``sp.special_digamma``): each formula's name is its
operator's kernel's name. Constants are written out: 2 / sqrt(pi) = 1.1283791670955126,
sqrt(pi) / 2 = 0.88622692545275801, sqrt(2 pi) = 2.5066282746310002. Operators of an order
(``polygamma``, ``jv``...) give the order no gradient.
"""

import numpy as np

from ir.ops import scipy_special as sp
from ir.ops.fourier import grad_like, is_complex
from ir.ops.gradients.common import dtype_of
from ir.ops.gradients.reductions import unreduce
from ir.ops.shape_ops import size_if_not_equal, sum_to_size


def special_expit(self):
    out = sp.special_expit(self)

    def backward(dout):
        return dout * out * (1.0 - out)

    return out, backward


def special_logit(self):
    def backward(dout):
        return dout / (self * (1.0 - self))

    return sp.special_logit(self), backward


def special_gammaln(self):
    def backward(dout):
        return dout * sp.special_digamma(self)

    return sp.special_gammaln(self), backward


def special_gamma(self):
    out = sp.special_gamma(self)

    def backward(dout):
        return dout * out * sp.special_digamma(self)

    return out, backward


def special_digamma(self):
    out = sp.special_digamma(self)
    dtype = dtype_of(out)

    def backward(dout):
        # SciPy's polygamma computes in float64
        return dout * sp.special_polygamma(1, self).astype(dtype)

    return out, backward


def special_erf(self):
    def backward(dout):
        return dout * 1.1283791670955126 * np.exp(-self * self)

    return sp.special_erf(self), backward


def special_erfc(self):
    def backward(dout):
        return dout * -1.1283791670955126 * np.exp(-self * self)

    return sp.special_erfc(self), backward


def special_erfinv(self):
    out = sp.special_erfinv(self)

    def backward(dout):
        # the inverse of erf: 1 / erf'(out)
        return dout * 0.88622692545275801 * np.exp(out * out)

    return out, backward


def special_erfcinv(self):
    out = sp.special_erfcinv(self)

    def backward(dout):
        return dout * -0.88622692545275801 * np.exp(out * out)

    return out, backward


def special_ndtr(self):
    def backward(dout):
        return dout * np.exp(-0.5 * self * self) / 2.5066282746310002

    return sp.special_ndtr(self), backward


def special_log_ndtr(self):
    out = sp.special_log_ndtr(self)

    def backward(dout):
        # the normal density over ndtr, divided inside the exponent: finite far in the tail
        return dout * np.exp(-0.5 * self * self - out) / 2.5066282746310002

    return out, backward


def special_ndtri(self):
    out = sp.special_ndtri(self)

    def backward(dout):
        return dout * 2.5066282746310002 * np.exp(0.5 * out * out)

    return out, backward


def special_entr(self):
    def backward(dout):
        return -dout * (np.log(self) + 1.0)

    return sp.special_entr(self), backward


def special_i0(self):
    def backward(dout):
        return dout * sp.special_i1(self)

    return sp.special_i0(self), backward


def special_i1(self):
    def backward(dout):
        # (I0 + I2) / 2: finite at 0, where I1(x) / x would divide by zero
        return dout * 0.5 * (sp.special_i0(self) + sp.special_iv(2, self))

    return sp.special_i1(self), backward


def special_i0e(self):
    out = sp.special_i0e(self)

    def backward(dout):
        # i0e(x) = i0(x) exp(-|x|)
        return dout * (sp.special_i1e(self) - np.sign(self) * out)

    return out, backward


def special_i1e(self):
    out = sp.special_i1e(self)

    def backward(dout):
        spread = 0.5 * (sp.special_i0e(self) + sp.special_ive(2, self))
        return dout * (spread - np.sign(self) * out)

    return out, backward


def special_j0(self):
    def backward(dout):
        return -dout * sp.special_j1(self)

    return sp.special_j0(self), backward


def special_j1(self):
    def backward(dout):
        return dout * 0.5 * (sp.special_j0(self) - sp.special_jv(2, self))

    return sp.special_j1(self), backward


def special_y0(self):
    def backward(dout):
        return -dout * sp.special_y1(self)

    return sp.special_y0(self), backward


def special_y1(self):
    out = sp.special_y1(self)
    dtype = dtype_of(out)

    def backward(dout):
        # SciPy's yn computes in float64
        return dout * 0.5 * (sp.special_y0(self) - sp.special_yn(2, self).astype(dtype))

    return out, backward


# ---- of two arguments ---------------------------------------------------------------------------


# SciPy's betaln, beta, xlogy and xlog1py compute a float32 array and a Python float in
# float64 (NumPy's ufuncs keep float32): each gradient is cast to its operand's dtype (by
# grad_like for xlogy and xlog1py, which take complex values: a real operand's is real).


def special_betaln(self, other):
    out = sp.special_betaln(self, other)
    self_size = size_if_not_equal(self, out)
    other_size = size_if_not_equal(other, out)
    self_dtype, other_dtype = dtype_of(self), dtype_of(other)

    def backward(dout):
        both = sp.special_digamma(self + other)
        grad_self = sum_to_size(dout * (sp.special_digamma(self) - both), self_size)
        grad_other = sum_to_size(dout * (sp.special_digamma(other) - both), other_size)
        return grad_self.astype(self_dtype), grad_other.astype(other_dtype)

    return out, backward


def special_beta(self, other):
    out = sp.special_beta(self, other)
    self_size = size_if_not_equal(self, out)
    other_size = size_if_not_equal(other, out)
    self_dtype, other_dtype = dtype_of(self), dtype_of(other)

    def backward(dout):
        scaled = dout * out
        both = sp.special_digamma(self + other)
        grad_self = sum_to_size(scaled * (sp.special_digamma(self) - both), self_size)
        grad_other = sum_to_size(scaled * (sp.special_digamma(other) - both), other_size)
        return grad_self.astype(self_dtype), grad_other.astype(other_dtype)

    return out, backward


def special_xlogy(self, other):
    out = sp.special_xlogy(self, other)
    self_size = size_if_not_equal(self, out)
    other_size = size_if_not_equal(other, out)

    def backward(dout):
        grad_self = sum_to_size(dout * np.log(other), self_size)
        grad_other = sum_to_size(dout * self / other, other_size)
        # in each operand's dtype, real for a real one (SciPy computes float32 in float64)
        return grad_like(grad_self, self), grad_like(grad_other, other)

    return out, backward


def special_xlog1py(self, other):
    out = sp.special_xlog1py(self, other)
    self_size = size_if_not_equal(self, out)
    other_size = size_if_not_equal(other, out)

    def backward(dout):
        grad_self = sum_to_size(dout * np.log1p(other), self_size)
        grad_other = sum_to_size(dout * self / (other + 1.0), other_size)
        # in each operand's dtype, real for a real one (SciPy computes float32 in float64)
        return grad_like(grad_self, self), grad_like(grad_other, other)

    return out, backward


def special_rel_entr(self, other):
    out = sp.special_rel_entr(self, other)  # keeps float32, as NumPy does
    self_size = size_if_not_equal(self, out)
    other_size = size_if_not_equal(other, out)

    def backward(dout):
        # x log(x / y) where both are positive
        grad_self = sum_to_size(dout * (np.log(self / other) + 1.0), self_size)
        return grad_self, sum_to_size(-dout * self / other, other_size)

    return out, backward


# ---- of an order and an argument ----------------------------------------------------------------


def special_polygamma(order, self):
    out = sp.special_polygamma(order, self)
    self_size = size_if_not_equal(self, out)

    def backward(dout):
        return None, sum_to_size(dout * sp.special_polygamma(order + 1, self), self_size)

    return out, backward


def special_jv(order, self):
    out = sp.special_jv(order, self)
    dtype = dtype_of(out)  # of a Python float, SciPy gives a float64
    self_size = size_if_not_equal(self, out)

    def backward(dout):
        below, above = sp.special_jv(order - 1, self), sp.special_jv(order + 1, self)
        return None, sum_to_size(dout * (0.5 * (below - above)).astype(dtype), self_size)

    return out, backward


def special_yn(order, self):
    out = sp.special_yn(order, self)
    dtype = dtype_of(out)
    self_size = size_if_not_equal(self, out)

    def backward(dout):
        below, above = sp.special_yn(order - 1, self), sp.special_yn(order + 1, self)
        return None, sum_to_size(dout * (0.5 * (below - above)).astype(dtype), self_size)

    return out, backward


def special_yv(order, self):
    out = sp.special_yv(order, self)
    dtype = dtype_of(out)  # of a Python float, SciPy gives a float64
    self_size = size_if_not_equal(self, out)

    def backward(dout):
        below, above = sp.special_yv(order - 1, self), sp.special_yv(order + 1, self)
        return None, sum_to_size(dout * (0.5 * (below - above)).astype(dtype), self_size)

    return out, backward


def special_iv(order, self):
    out = sp.special_iv(order, self)
    dtype = dtype_of(out)  # of a Python float, SciPy gives a float64
    self_size = size_if_not_equal(self, out)

    def backward(dout):
        below, above = sp.special_iv(order - 1, self), sp.special_iv(order + 1, self)
        return None, sum_to_size(dout * (0.5 * (below + above)).astype(dtype), self_size)

    return out, backward


def special_ive(order, self):
    out = sp.special_ive(order, self)
    dtype = dtype_of(out)  # of a Python float, SciPy gives a float64
    self_size = size_if_not_equal(self, out)

    def backward(dout):
        # ive(v, z) = iv(v, z) exp(-|Re z|): iv's holomorphic derivative, scaled, and the
        # derivative of exp(-|x|) in the real part x alone, which takes the real part of
        # dout * out (Note [Complex gradients]); the same for a real x.
        below, above = sp.special_ive(order - 1, self), sp.special_ive(order + 1, self)
        scaled = dout * (0.5 * (below + above)).astype(dtype)
        grad = scaled - np.sign(np.real(self)) * np.real(dout * out)
        return None, sum_to_size(grad, self_size)

    return out, backward


def special_multigammaln(self, d):
    def backward(dout):
        # the log of a product of d gamma functions at self - j / 2
        grad = sp.special_digamma(self)
        for j in range(1, d):
            grad = grad + sp.special_digamma(self - 0.5 * j)
        return dout * grad, None

    return sp.special_multigammaln(self, d), backward


# ---- reductions ---------------------------------------------------------------------------------


def special_logsumexp(self, axis, b, keepdims, return_sign):
    out = sp.special_logsumexp(self, axis, b, keepdims, False)  # return_sign is False
    # b is 1.0 unless given; the product's shape folds to a constant, the product goes
    broadcast = self * b
    shape = np.shape(broadcast)
    self_size = size_if_not_equal(self, broadcast)
    b_size = size_if_not_equal(b, broadcast)

    def backward(dout):
        # exp(a - out): each term's share of the sum, b's gradient; times b, a's
        spread = unreduce(out, shape, axis, keepdims)
        weights = unreduce(dout, shape, axis, keepdims) * np.exp(self - spread)
        grad_self = sum_to_size(weights * b, self_size)
        return grad_self, None, sum_to_size(weights, b_size), None, None

    return out, backward


def special_logsumexp_signed(self, axis, b, keepdims):
    out = sp.special_logsumexp_signed(self, axis, b, keepdims)
    magnitude = out[0]
    sign = out[1]
    broadcast = self * b
    shape = np.shape(broadcast)
    self_size = size_if_not_equal(self, broadcast)
    b_size = size_if_not_equal(b, broadcast)

    complex_sum = is_complex(sign)

    def backward(dout):
        # The sum S = |S| sign moves by dS; with u = dS / S, log |S| moves by Re(u) and the
        # sign by sign * 1j * Im(u): the loss by Re(k u) for k = Re(dout[0]) + 1j Im(dout[1]
        # sign), so S's gradient is k / S = k conj(sign) / |S|. A real sign (+1 or -1) does not
        # move: k / S is dout[0] sign / |S|.
        if complex_sum:
            moved = np.real(dout[0]) + 1j * np.imag(dout[1] * sign)
            scale = moved * np.conj(sign)
        else:
            scale = dout[0] * sign
        spread = unreduce(magnitude, shape, axis, keepdims)
        spread_dout = unreduce(scale, shape, axis, keepdims)
        weights = spread_dout * np.exp(self - spread)
        grad_self = sum_to_size(weights * b, self_size)
        return grad_self, None, sum_to_size(weights, b_size), None

    return out, backward


def special_softmax(self, axis):
    out = sp.special_softmax(self, axis)

    def backward(dout):
        projected = dout * out
        return projected - out * np.sum(projected, axis=axis, keepdims=True), None

    return out, backward


def special_log_softmax(self, axis):
    out = sp.special_log_softmax(self, axis)

    def backward(dout):
        return dout - np.exp(out) * np.sum(dout, axis=axis, keepdims=True), None

    return out, backward
