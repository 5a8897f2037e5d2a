"""Derivative formulas of the operators of `ir.ops.reductions`."""

import numpy as np

from ir.ops.fourier import is_complex
from ir.ops.gradients.common import dtype_of
from ir.ops.gradients.reductions import prod_backward, unreduce


def sum_(self, axis, keepdims):
    shape = self.shape

    def backward(dout):
        return unreduce(dout, shape, axis, keepdims), None, None

    return np.sum(self, axis=axis, keepdims=keepdims), backward


def mean(self, axis, keepdims):
    shape = self.shape
    out = np.mean(self, axis=axis, keepdims=keepdims)
    # An empty argument has an empty gradient, whatever the scale (JAX, PyTorch): no 0 / 0.
    scale = np.size(out) / max(np.size(self), 1)

    def backward(dout):
        # Scaled before it is spread: one multiplication per reduced element, same bits.
        return unreduce(dout * scale, shape, axis, keepdims), None, None

    return out, backward


def prod(self, axis, keepdims):
    def backward(dout):
        return prod_backward(dout, self, axis, keepdims), None, None

    return np.prod(self, axis=axis, keepdims=keepdims), backward


def max_(self, axis, keepdims):
    shape = self.shape
    out = np.max(self, axis=axis, keepdims=keepdims)
    dtype = dtype_of(out)

    def backward(dout):
        # Ties share dout evenly. Dividing by the count before spreading gives the same bits
        # as dividing the spread product (hits are 0 or 1), at the reduced size.
        hits = self == unreduce(out, shape, axis, keepdims)
        count = np.sum(hits, axis=axis, keepdims=keepdims).astype(dtype)
        return hits * unreduce(dout / count, shape, axis, keepdims), None, None

    return out, backward


def min_(self, axis, keepdims):
    shape = self.shape
    out = np.min(self, axis=axis, keepdims=keepdims)
    dtype = dtype_of(out)

    def backward(dout):
        # Ties share dout evenly. Dividing by the count before spreading gives the same bits
        # as dividing the spread product (hits are 0 or 1), at the reduced size.
        hits = self == unreduce(out, shape, axis, keepdims)
        count = np.sum(hits, axis=axis, keepdims=keepdims).astype(dtype)
        return hits * unreduce(dout / count, shape, axis, keepdims), None, None

    return out, backward


def var(self, axis, keepdims, ddof):
    shape = self.shape
    out = np.var(self, axis=axis, keepdims=keepdims, ddof=ddof)
    # mean(|x - mean x|^2): its cotangent is the conjugate of the centred values (Note
    # [Complex gradients]); the branch folds away, so a real array is not copied by conj.
    centered = self - np.mean(self, axis=axis, keepdims=True)
    centered = np.conj(centered) if is_complex(self) else centered
    count = np.size(self) / max(np.size(out), 1) - ddof  # an empty result: empty gradients

    def backward(dout):
        # Divided last: a count of 0 (ddof too large) gives inf as np.var does, not an error.
        return unreduce(dout, shape, axis, keepdims) * centered * 2.0 / count, None, None, None

    return out, backward


def std(self, axis, keepdims, ddof):
    shape = self.shape
    out = np.std(self, axis=axis, keepdims=keepdims, ddof=ddof)
    centered = self - np.mean(self, axis=axis, keepdims=True)
    centered = np.conj(centered) if is_complex(self) else centered
    count = np.size(self) / max(np.size(out), 1) - ddof  # an empty result: empty gradients
    # std is a scaled norm of the centred values: where they are all 0 (equal values) its
    # gradient is the least-norm subgradient, 0, as the norm's is at 0, and so is its second
    # derivative (the where routes none through the other branch).
    flat = out == 0.0
    safe = np.where(flat, 1.0, out)

    def backward(dout):
        scale = np.where(flat, 0.0, dout / safe)
        return unreduce(scale, shape, axis, keepdims) * centered / count, None, None, None

    return out, backward
