"""Derivative formulas of the operators of `ir.ops.fourier`."""

import numpy as np

from ir.ops.fourier import (
    fft_backward,
    fftn_backward,
    grad_like,
    imag_backward,
    irfft_backward,
    is_complex,
    rfft_backward,
)


def fft_fftshift(self, axes):
    def backward(dout):
        return np.fft.ifftshift(dout, axes), None

    return np.fft.fftshift(self, axes), backward


def fft_ifftshift(self, axes):
    def backward(dout):
        return np.fft.fftshift(dout, axes), None

    return np.fft.ifftshift(self, axes), backward


def fft_fft(self, n, axis, norm):
    def backward(dout):
        return fft_backward(dout, self, n, axis, norm, False), None, None, None

    return np.fft.fft(self, n, axis, norm), backward


def fft_ifft(self, n, axis, norm):
    def backward(dout):
        return fft_backward(dout, self, n, axis, norm, True), None, None, None

    return np.fft.ifft(self, n, axis, norm), backward


def fft_rfft(self, n, axis, norm):
    def backward(dout):
        return rfft_backward(dout, self, n, axis, norm), None, None, None

    return np.fft.rfft(self, n, axis, norm), backward


def fft_irfft(self, n, axis, norm):
    def backward(dout):
        return irfft_backward(dout, self, n, axis, norm), None, None, None

    return np.fft.irfft(self, n, axis, norm), backward


def fft_fft2(self, s, axes, norm):
    def backward(dout):
        return fftn_backward(dout, self, s, axes, norm, False), None, None, None

    return np.fft.fft2(self, s, axes, norm), backward


def fft_ifft2(self, s, axes, norm):
    def backward(dout):
        return fftn_backward(dout, self, s, axes, norm, True), None, None, None

    return np.fft.ifft2(self, s, axes, norm), backward


def fft_fftn(self, s, axes, norm):
    def backward(dout):
        return fftn_backward(dout, self, s, axes, norm, False), None, None, None

    return np.fft.fftn(self, s, axes, norm), backward


def fft_ifftn(self, s, axes, norm):
    def backward(dout):
        return fftn_backward(dout, self, s, axes, norm, True), None, None, None

    return np.fft.ifftn(self, s, axes, norm), backward


def real(self):
    def backward(dout):
        return grad_like(dout, self)

    return np.real(self), backward


def imag(self):
    def backward(dout):
        return imag_backward(dout, self)

    return np.imag(self), backward


def angle(self, deg):
    complex_input = is_complex(self)
    scale = 180.0 / np.pi if deg else 1.0

    def backward(dout):
        # arg z = arctan2(y, x) moves by (x dy - y dx) / |z|^2: the cotangent
        # dL/dx - 1j dL/dy is -1j * dout * conj(z) / |z|^2 = -1j * dout / z. On reals the angle
        # is 0 or pi, piecewise constant.
        grad = imag_backward(scale * dout / self, self) if complex_input else dout * 0.0
        return grad, None

    return np.angle(self, deg), backward


def real_if_close(self, tol):
    # Only real arrays compile (see the operator's shape rule): the result is a copy.
    def backward(dout):
        return dout, None

    return np.real_if_close(self, tol), backward


def conj(self):
    def backward(dout):
        return grad_like(np.conj(dout), self)

    return np.conj(self), backward


# Adjoints of the np.fft helpers: each is linear in its gradient, so its own vjp is the
# transform it transposes (Note [Complex gradients]); second derivatives go through them.


def _grad_like(grad, like):
    def backward(dout):
        return grad_like(dout, grad), None

    return grad_like(grad, like), backward


def _imag_backward(grad, like):
    def backward(dout):
        return imag_backward(dout, grad), None

    return imag_backward(grad, like), backward


def _fft_backward(grad, like, n, axis, norm, inverse):
    def backward(dout):
        if inverse:
            transposed = np.fft.ifft(dout, n, axis, norm)
        else:
            transposed = np.fft.fft(dout, n, axis, norm)
        return grad_like(transposed, grad), None, None, None, None, None

    return fft_backward(grad, like, n, axis, norm, inverse), backward


def _fftn_backward(grad, like, s, axes, norm, inverse):
    def backward(dout):
        if inverse:
            transposed = np.fft.ifftn(dout, s, axes, norm)
        else:
            transposed = np.fft.fftn(dout, s, axes, norm)
        return grad_like(transposed, grad), None, None, None, None, None

    return fftn_backward(grad, like, s, axes, norm, inverse), backward


def _rfft_backward(grad, like, n, axis, norm):
    def backward(dout):
        return grad_like(np.fft.rfft(dout, n, axis, norm), grad), None, None, None, None

    return rfft_backward(grad, like, n, axis, norm), backward


def _irfft_backward(grad, like, n, axis, norm):
    def backward(dout):
        return grad_like(np.fft.irfft(dout, n, axis, norm), grad), None, None, None, None

    return irfft_backward(grad, like, n, axis, norm), backward
