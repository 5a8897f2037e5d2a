"""Derivative formulas of the operators of `ir.ops.convolution`: ``np.convolve`` and
``np.correlate``.

A result is a window of the full convolution of ``a`` with ``k`` (``v``, or for a correlation
``v`` flipped and conjugated), so its cotangent padded with zeros to the full length gives
``a`` the 'valid' convolution of that with ``k`` flipped, and ``k`` the one with ``a`` flipped
(Note [Convolution windows] in `ir.ops.convolution`). These are convolutions again: the formula
differentiates its own backward. A 0-d operand is convolved as a 1-d one of length 1, and its
gradient reshaped back.
"""

import numpy as np

from ir.ops.convolution import cotangent_padding


def convolve(self, other, mode):
    self_shape = np.shape(self)
    other_shape = np.shape(other)
    padding = cotangent_padding(self_shape, other_shape, mode, "numpy_convolve")

    def backward(dout):
        full = np.pad(dout, padding)
        grad_self = np.convolve(full, np.flip(np.atleast_1d(other)), "valid")
        grad_other = np.convolve(full, np.flip(np.atleast_1d(self)), "valid")
        return np.reshape(grad_self, self_shape), np.reshape(grad_other, other_shape), None

    return np.convolve(self, other, mode), backward


def correlate(self, other, mode):
    self_shape = np.shape(self)
    other_shape = np.shape(other)
    padding = cotangent_padding(self_shape, other_shape, mode, "numpy_correlate")

    def backward(dout):
        # the window of convolve(self, k) for k = flip(conj(other))
        full = np.pad(dout, padding)
        grad_self = np.convolve(full, np.conj(np.atleast_1d(other)), "valid")
        grad_k = np.convolve(full, np.flip(np.atleast_1d(self)), "valid")
        grad_other = np.conj(np.flip(grad_k))
        return np.reshape(grad_self, self_shape), np.reshape(grad_other, other_shape), None

    return np.correlate(self, other, mode), backward
