"""Derivative formulas of the operators of `ir.ops.sorting`."""

import numpy as np

from ir.ops.sorting import permute, unpermute


def sort(self, axis, kind, stable):
    shape = self.shape
    order = np.argsort(self, axis, kind, stable=stable)

    def backward(dout):
        return unpermute(dout, shape, order, axis), None, None, None

    return np.sort(self, axis, kind, stable=stable), backward


def partition(self, kth, axis):
    shape = self.shape
    order = np.argpartition(self, kth, axis)

    def backward(dout):
        return unpermute(dout, shape, order, axis), None, None

    return np.partition(self, kth, axis), backward


def _unpermute(grad, shape, order, axis):
    # A scatter by a permutation; its adjoint is the gather by that permutation.
    def backward(dout):
        return permute(dout, order, axis), None, None, None

    return unpermute(grad, shape, order, axis), backward


def _permute(self, order, axis):
    shape = self.shape

    def backward(dout):
        return unpermute(dout, shape, order, axis), None, None

    return permute(self, order, axis), backward
