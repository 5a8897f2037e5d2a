"""Derivative formulas of the operators of `ir.ops.selection`."""

import numpy as np

from ir.ops.gradients.selection import diag_backward, diagonal_backward, take_backward
from ir.ops.shape_ops import size_if_not_equal, sum_to_size


def diag(self, k):
    shape = self.shape

    def backward(dout):
        return diag_backward(dout, shape, k), None

    return np.diag(self, k), backward


def diagonal(self, offset, axis1, axis2):
    shape = self.shape

    def backward(dout):
        return diagonal_backward(dout, shape, offset, axis1, axis2), None, None, None

    return np.diagonal(self, offset, axis1, axis2), backward


def trace(self, offset, axis1, axis2):
    shape = self.shape

    def backward(dout):
        # One gradient per matrix, spread along its diagonal.
        spread = np.expand_dims(dout, -1)
        return diagonal_backward(spread, shape, offset, axis1, axis2), None, None, None

    return np.trace(self, offset, axis1, axis2), backward


def tril(self, k):
    out = np.tril(self, k)
    self_size = size_if_not_equal(self, out)

    def backward(dout):
        return sum_to_size(np.tril(dout, k), self_size), None

    return out, backward


def triu(self, k):
    out = np.triu(self, k)
    self_size = size_if_not_equal(self, out)

    def backward(dout):
        return sum_to_size(np.triu(dout, k), self_size), None

    return out, backward


def take(self, indices, axis):
    shape = self.shape

    def backward(dout):
        return take_backward(dout, shape, indices, axis), None, None

    return np.take(self, indices, axis), backward
