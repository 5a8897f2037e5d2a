"""Derivative formulas of the operators of `ir.ops.fourier_real`: each transform's vjp is its
adjoint helper, and each helper's vjp is the transform again (the real part where the helper's
gradient operand is real: Note [Complex gradients])."""

import numpy as np

from ir.ops.fourier import grad_like
from ir.ops.fourier_real import irfftn_backward, rfftn_backward


def fft_rfftn(self, s, axes, norm):
    def backward(dout):
        return rfftn_backward(dout, self, s, axes, norm), None, None, None

    return np.fft.rfftn(self, s, axes, norm), backward


def fft_rfft2(self, s, axes, norm):
    def backward(dout):
        return rfftn_backward(dout, self, s, axes, norm), None, None, None

    return np.fft.rfft2(self, s, axes, norm), backward


def fft_irfftn(self, s, axes, norm):
    def backward(dout):
        return irfftn_backward(dout, self, s, axes, norm), None, None, None

    return np.fft.irfftn(self, s, axes, norm), backward


def fft_irfft2(self, s, axes, norm):
    def backward(dout):
        return irfftn_backward(dout, self, s, axes, norm), None, None, None

    return np.fft.irfft2(self, s, axes, norm), backward


def _rfftn_backward(grad, like, s, axes, norm):
    def backward(dout):
        return grad_like(np.fft.rfftn(dout, s, axes, norm), grad), None, None, None, None

    return rfftn_backward(grad, like, s, axes, norm), backward


def _irfftn_backward(grad, like, s, axes, norm):
    def backward(dout):
        return grad_like(np.fft.irfftn(dout, s, axes, norm), grad), None, None, None, None

    return irfftn_backward(grad, like, s, axes, norm), backward
