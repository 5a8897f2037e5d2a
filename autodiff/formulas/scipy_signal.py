"""Derivative formulas of the operators of `ir.ops.scipy_signal`.

As for ``np.convolve`` (`autodiff.formulas.convolution`): the cotangent padded with zeros to
the full convolution, convolved in 'valid' mode with the other operand flipped on every axis
(a correlation's second operand is ``k = flip(conj(in2))``, whose gradient is flipped and
conjugated back). The 2-D functions convolve ``in1`` padded as ``boundary`` says: its gradient
is that of the padded array gathered back by `pad_backward`, which gives ``fillvalue`` the
gradients of the places it filled. SciPy's ``correlate2d`` in 'valid' mode with a second
operand larger on some axis correlates them swapped and flips the result: for complex values,
the conjugate of the correlation, a case of its own. Every backward is made of convolutions,
pads and flips, so each formula differentiates its own backward.
"""

import numpy as np

from ir.ops import scipy_signal as sig
from ir.ops.convolution import boundary_widths, cotangent_padding, swaps_operands
from ir.ops.gradients.arrangement import pad_backward
from ir.ops.scipy_signal import boundary_pad_mode


def signal_convolve(in1, in2, mode, method):
    padding = cotangent_padding(np.shape(in1), np.shape(in2), mode, "scipy")

    def backward(dout):
        full = np.pad(dout, padding)
        grad_in1 = sig.signal_convolve(full, np.flip(in2), "valid", "auto")
        grad_in2 = sig.signal_convolve(full, np.flip(in1), "valid", "auto")
        return grad_in1, grad_in2, None, None

    return sig.signal_convolve(in1, in2, mode, method), backward


def signal_correlate(in1, in2, mode, method):
    padding = cotangent_padding(np.shape(in1), np.shape(in2), mode, "scipy")

    def backward(dout):
        full = np.pad(dout, padding)
        grad_in1 = sig.signal_convolve(full, np.conj(in2), "valid", "auto")
        grad_k = sig.signal_convolve(full, np.flip(in1), "valid", "auto")
        return grad_in1, np.conj(np.flip(grad_k)), None, None

    return sig.signal_correlate(in1, in2, mode, method), backward


def signal_convolve2d(in1, in2, mode, boundary, fillvalue):
    in1_shape = np.shape(in1)
    widths = boundary_widths(np.shape(in2), mode)
    pad_mode = boundary_pad_mode(boundary)
    padding = cotangent_padding(in1_shape, np.shape(in2), mode, "scipy2d")

    def backward(dout):
        full = np.pad(dout, padding)
        padded = np.pad(in1, widths, pad_mode, constant_values=fillvalue)
        grad_padded = sig.signal_convolve(full, np.flip(in2), "valid", "auto")
        grad_in1, grad_fillvalue = pad_backward(grad_padded, in1_shape, widths, pad_mode)
        grad_in2 = sig.signal_convolve(full, np.flip(padded), "valid", "auto")
        return grad_in1, grad_in2, None, None, grad_fillvalue

    return sig.signal_convolve2d(in1, in2, mode, boundary, fillvalue), backward


def signal_correlate2d(in1, in2, mode, boundary, fillvalue):
    in1_shape = np.shape(in1)
    widths = boundary_widths(np.shape(in2), mode)
    pad_mode = boundary_pad_mode(boundary)
    padding = cotangent_padding(in1_shape, np.shape(in2), mode, "scipy_correlate2d")
    swapped = swaps_operands(in1_shape, np.shape(in2), mode)

    def backward(dout):
        full = np.pad(dout, padding)
        if swapped:
            # SciPy's result is conj(correlate(in1, in2)) = convolve(conj(in1), flip(in2)),
            # with no padding (``widths`` are 0)
            grad_padded = np.conj(sig.signal_convolve(full, in2, "valid", "auto"))
            grad_k = sig.signal_convolve(full, np.flip(np.conj(in1)), "valid", "auto")
            grad_in2 = np.flip(grad_k)
        else:
            padded = np.pad(in1, widths, pad_mode, constant_values=fillvalue)
            grad_padded = sig.signal_convolve(full, np.conj(in2), "valid", "auto")
            grad_k = sig.signal_convolve(full, np.flip(padded), "valid", "auto")
            grad_in2 = np.conj(np.flip(grad_k))
        grad_in1, grad_fillvalue = pad_backward(grad_padded, in1_shape, widths, pad_mode)
        return grad_in1, grad_in2, None, None, grad_fillvalue

    return sig.signal_correlate2d(in1, in2, mode, boundary, fillvalue), backward
