"""Derivative formulas of the operators of `ir.ops.selection`."""

import numpy as np

from ir.ops.gradients.common import gradient_dtype
from ir.ops.gradients.prim import is_list, sequence_as
from ir.ops.gradients.selection import (
    diag_backward,
    diagonal_backward,
    select_choices_backward,
    take_backward,
)
from ir.ops.gradients.shape_ops import input_shapes
from ir.ops.selection import select_index
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


def select_by_conditions(condlist, choicelist, default):
    # Each element of the result is a copy of one choice's element, or of the default's: the
    # gradient goes back to what was taken there (`select_index`).
    out = np.select(condlist, choicelist, default)
    taken = select_index(condlist, out)
    shapes = input_shapes(choicelist)
    as_list = is_list(choicelist)
    count = len(condlist)
    default_size = size_if_not_equal(default, out)
    default_dtype = gradient_dtype(default, out)

    def backward(dout):
        grad_default = sum_to_size(np.where(taken == count, dout, 0.0), default_size)
        grad_choices = sequence_as(select_choices_backward(dout, taken, shapes), as_list)
        return None, grad_choices, grad_default.astype(default_dtype)

    return out, backward
