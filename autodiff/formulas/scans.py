"""Derivative formulas of the operators of `ir.ops.scans`."""

import numpy as np

from ir.ops.gradients.scans import cumsum_backward, diff_backward


def cumsum(self, axis):
    shape = self.shape

    def backward(dout):
        return cumsum_backward(dout, shape, axis), None

    return np.cumsum(self, axis=axis), backward


def diff(self, n, axis):
    shape = self.shape

    def backward(dout):
        return diff_backward(dout, shape, n, axis), None, None

    return np.diff(self, n=n, axis=axis), backward
