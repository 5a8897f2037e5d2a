"""Derivative formulas of the operators of `ir.ops.elementwise`."""

import numpy as np

from ir.ops.fourier import is_complex
from ir.ops.shape_ops import size_if_not_equal, sum_to_size


def add(self, other):
    out = self + other
    self_size = size_if_not_equal(self, out)
    other_size = size_if_not_equal(other, out)

    def backward(dout):
        return sum_to_size(dout, self_size), sum_to_size(dout, other_size)

    return out, backward


def sub(self, other):
    out = self - other
    self_size = size_if_not_equal(self, out)
    other_size = size_if_not_equal(other, out)

    def backward(dout):
        return sum_to_size(dout, self_size), sum_to_size(-dout, other_size)

    return out, backward


def mul(self, other):
    out = self * other
    self_size = size_if_not_equal(self, out)
    other_size = size_if_not_equal(other, out)

    def backward(dout):
        return sum_to_size(dout * other, self_size), sum_to_size(dout * self, other_size)

    return out, backward


def div(self, other):
    out = self / other
    self_size = size_if_not_equal(self, out)
    other_size = size_if_not_equal(other, out)

    def backward(dout):
        grad_self = sum_to_size(dout / other, self_size)
        grad_other = sum_to_size(-dout * out / other, other_size)
        return grad_self, grad_other

    return out, backward


def remainder(self, other):
    out = self % other
    self_size = size_if_not_equal(self, out)
    other_size = size_if_not_equal(other, out)

    def backward(dout):
        # self - other * floor(self / other): the quotient is piecewise constant.
        grad_other = sum_to_size(-dout * (self // other), other_size)
        return sum_to_size(dout, self_size), grad_other

    return out, backward


def pow_(self, other):
    out = self**other
    self_size = size_if_not_equal(self, out)
    other_size = size_if_not_equal(other, out)
    complex_base = is_complex(self)

    def backward(dout):
        # x ** 0 is 1 everywhere, so its derivative is 0 at x = 0 too (JAX's convention), not
        # 0 * 0 ** -1 = nan: where the exponent is 0 the power is raised to 0 instead of -1,
        # and the factor ``other`` makes the term 0. The same rule applied again makes the
        # second derivative 0 there as well.
        grad_self = sum_to_size(dout * other * self ** (other - 1 + (other == 0)), self_size)
        # log(self) only where it is real (the principal log of a complex base, as NumPy's
        # power takes it, but for 0); the exponent's gradient is 0 elsewhere.
        has_log = self != 0 if complex_base else self > 0
        log_self = np.log(np.where(has_log, self, 1.0))
        grad_other = sum_to_size(dout * out * log_self, other_size)
        return grad_self, grad_other

    return out, backward


def neg(self):
    def backward(dout):
        return -dout

    return -self, backward


def positive(self):
    def backward(dout):
        return dout

    return +self, backward


def exp(self):
    out = np.exp(self)

    def backward(dout):
        return dout * out

    return out, backward


def log(self):
    def backward(dout):
        return dout / self

    return np.log(self), backward


def sqrt(self):
    out = np.sqrt(self)

    def backward(dout):
        return dout / (2.0 * out)

    return out, backward


def sin(self):
    def backward(dout):
        return dout * np.cos(self)

    return np.sin(self), backward


def cos(self):
    def backward(dout):
        return -dout * np.sin(self)

    return np.cos(self), backward


def tan(self):
    out = np.tan(self)

    def backward(dout):
        return dout * (1.0 + out * out)

    return out, backward


def tanh(self):
    out = np.tanh(self)

    def backward(dout):
        return dout * (1.0 - out * out)

    return out, backward


def abs_(self):
    out = np.abs(self)

    def backward(dout):
        # dout * sign(x); for a complex z, dout * conj(z) / |z| (0 at 0), written so that it
        # differentiates again (sign's derivative is 0, z / |z|'s is not).
        return dout * np.conj(self) / np.where(out == 0, 1.0, out)

    return out, backward


def sign(self):
    out = np.sign(self)
    complex_input = is_complex(self)
    magnitude = np.abs(self)

    def backward(dout):
        # Piecewise constant on reals. A complex sign is z / |z| (NumPy 2), the direction of z:
        # it moves with z's phase, (dout - Re(dout * s) * conj(s)) / |z| (0 at 0).
        if complex_input:
            along = dout - np.real(dout * out) * np.conj(out)
            grad = np.where(magnitude == 0, 0.0, along / np.where(magnitude == 0, 1.0, magnitude))
        else:
            grad = dout * 0.0
        return grad

    return out, backward


def reciprocal(self):
    out = np.reciprocal(self)

    def backward(dout):
        return -dout * out * out

    return out, backward


def square(self):
    def backward(dout):
        return 2.0 * self * dout

    return np.square(self), backward


def exp2(self):
    out = np.exp2(self)

    def backward(dout):
        return dout * out * 0.6931471805599453  # ln 2, a Python float: float32 stays float32

    return out, backward


def expm1(self):
    out = np.expm1(self)

    def backward(dout):
        return dout * (out + 1.0)

    return out, backward


def log2(self):
    def backward(dout):
        return dout / (self * 0.6931471805599453)  # ln 2

    return np.log2(self), backward


def log10(self):
    def backward(dout):
        return dout / (self * 2.302585092994046)  # ln 10

    return np.log10(self), backward


def log1p(self):
    def backward(dout):
        return dout / (self + 1.0)

    return np.log1p(self), backward


def arcsin(self):
    def backward(dout):
        return dout / np.sqrt(1.0 - self * self)

    return np.arcsin(self), backward


def arccos(self):
    def backward(dout):
        return -dout / np.sqrt(1.0 - self * self)

    return np.arccos(self), backward


def arctan(self):
    def backward(dout):
        return dout / (1.0 + self * self)

    return np.arctan(self), backward


def sinh(self):
    def backward(dout):
        return dout * np.cosh(self)

    return np.sinh(self), backward


def cosh(self):
    def backward(dout):
        return dout * np.sinh(self)

    return np.cosh(self), backward


def arcsinh(self):
    def backward(dout):
        return dout / np.sqrt(self * self + 1.0)

    return np.arcsinh(self), backward


def arccosh(self):
    def backward(dout):
        return dout / np.sqrt((self - 1.0) * (self + 1.0))

    return np.arccosh(self), backward


def arctanh(self):
    def backward(dout):
        return dout / (1.0 - self * self)

    return np.arctanh(self), backward


def sinc(self):
    out = np.sinc(self)

    def backward(dout):
        # (cos(pi x) - sinc(x)) / x, whose limit at x = 0 is 0; written there as its Taylor
        # term -(pi**2 / 3) x (pi**2 / 3 = 3.289868133696453), which is 0 too and gives the
        # second derivative its value at 0.
        at_zero = self == 0.0
        safe = np.where(at_zero, 1.0, self)
        near_zero = dout * (-3.289868133696453 * self)
        return np.where(at_zero, near_zero, dout * (np.cos(np.pi * self) - out) / safe)

    return out, backward


def deg2rad(self):
    def backward(dout):
        return dout * (np.pi / 180.0)

    return np.deg2rad(self), backward


def rad2deg(self):
    def backward(dout):
        return dout * (180.0 / np.pi)

    return np.rad2deg(self), backward


def fabs(self):
    def backward(dout):
        return dout * np.sign(self)

    return np.fabs(self), backward


def maximum(self, other):
    out = np.maximum(self, other)
    self_size = size_if_not_equal(self, out)
    other_size = size_if_not_equal(other, out)

    def backward(dout):
        # Masks multiply the gradient itself, so it keeps its dtype (float32 stays float32).
        mine = dout * (self > other) + 0.5 * dout * (self == other)
        return sum_to_size(mine, self_size), sum_to_size(dout - mine, other_size)

    return out, backward


def minimum(self, other):
    out = np.minimum(self, other)
    self_size = size_if_not_equal(self, out)
    other_size = size_if_not_equal(other, out)

    def backward(dout):
        # Masks multiply the gradient itself, so it keeps its dtype (float32 stays float32).
        mine = dout * (self < other) + 0.5 * dout * (self == other)
        return sum_to_size(mine, self_size), sum_to_size(dout - mine, other_size)

    return out, backward


def fmax(self, other):
    out = np.fmax(self, other)
    self_size = size_if_not_equal(self, out)
    other_size = size_if_not_equal(other, out)

    def backward(dout):
        to_self = np.logical_or(self > other, np.isnan(other))
        grad_self = np.where(to_self, dout, np.where(self == other, 0.5 * dout, 0.0))
        return sum_to_size(grad_self, self_size), sum_to_size(dout - grad_self, other_size)

    return out, backward


def fmin(self, other):
    out = np.fmin(self, other)
    self_size = size_if_not_equal(self, out)
    other_size = size_if_not_equal(other, out)

    def backward(dout):
        to_self = np.logical_or(self < other, np.isnan(other))
        grad_self = np.where(to_self, dout, np.where(self == other, 0.5 * dout, 0.0))
        return sum_to_size(grad_self, self_size), sum_to_size(dout - grad_self, other_size)

    return out, backward


def arctan2(self, other):
    out = np.arctan2(self, other)
    self_size = size_if_not_equal(self, out)
    other_size = size_if_not_equal(other, out)

    def backward(dout):
        scale = dout / (self * self + other * other)
        return sum_to_size(scale * other, self_size), sum_to_size(-scale * self, other_size)

    return out, backward


def hypot(self, other):
    out = np.hypot(self, other)
    self_size = size_if_not_equal(self, out)
    other_size = size_if_not_equal(other, out)

    def backward(dout):
        scale = dout / np.where(out == 0.0, 1.0, out)
        return sum_to_size(scale * self, self_size), sum_to_size(scale * other, other_size)

    return out, backward


def logaddexp(self, other):
    out = np.logaddexp(self, other)
    self_size = size_if_not_equal(self, out)
    other_size = size_if_not_equal(other, out)

    def backward(dout):
        grad_self = sum_to_size(dout * np.exp(self - out), self_size)
        return grad_self, sum_to_size(dout * np.exp(other - out), other_size)

    return out, backward


def logaddexp2(self, other):
    out = np.logaddexp2(self, other)
    self_size = size_if_not_equal(self, out)
    other_size = size_if_not_equal(other, out)

    def backward(dout):
        grad_self = sum_to_size(dout * np.exp2(self - out), self_size)
        return grad_self, sum_to_size(dout * np.exp2(other - out), other_size)

    return out, backward


def where(condition, x, y):
    out = np.where(condition, x, y)
    x_size = size_if_not_equal(x, out)
    y_size = size_if_not_equal(y, out)

    def backward(dout):
        grad_x = sum_to_size(np.where(condition, dout, 0.0), x_size)
        grad_y = sum_to_size(np.where(condition, 0.0, dout), y_size)
        return None, grad_x, grad_y

    return out, backward


def clip(self, a_min, a_max):
    out = np.clip(self, a_min, a_max)
    self_size = size_if_not_equal(self, out)
    min_size = size_if_not_equal(a_min, out)
    max_size = size_if_not_equal(a_max, out)

    def backward(dout):
        # Where self was raised to a_min, the gradient goes to a_min; lowered, to a_max.
        grad_self = sum_to_size(dout * (out == self), self_size)
        grad_min = sum_to_size(dout * (self < out), min_size)
        grad_max = sum_to_size(dout * (self > out), max_size)
        return grad_self, grad_min, grad_max

    return out, backward


def nan_to_num(self, nan, posinf, neginf):
    complex_input = is_complex(self)

    def backward(dout):
        # A complex value's real and imaginary parts are replaced each on its own: Re(dout)
        # where the real part is finite plus i Im(dout) where the imaginary part is.
        if complex_input:
            real_part = (dout + np.conj(dout)) * 0.5 * np.isfinite(np.real(self))
            imag_part = (dout - np.conj(dout)) * 0.5 * np.isfinite(np.imag(self))
            grad = real_part + imag_part
        else:
            grad = dout * np.isfinite(self)
        return grad, None, None, None

    return np.nan_to_num(self, nan=nan, posinf=posinf, neginf=neginf), backward


# frexp returns two arrays: ``dout`` is the tuple of their gradients, with zeros for one that
# got none (`autodiff.differentiate` fills them in), as for the split family.


def frexp(self):
    out = np.frexp(self)
    exponent = out[1]

    def backward(dout):
        # dout[1], the integer exponent's gradient, is None: trimmed, as it carries none.
        return dout[0] * 2.0 ** (-exponent)

    return out, backward
