"""Derivative formulas of the operators of `ir.ops.shape_ops`."""

import numpy as np

from ir.ops.gradients.common import dtype_of
from ir.ops.gradients.prim import is_list, sequence_as
from ir.ops.gradients.shape_ops import (
    concatenate_backward,
    input_shapes,
    stack_backward,
    transpose_backward,
)
from ir.ops.shape_ops import flatten as flatten_kernel
from ir.ops.shape_ops import number_to_array, scalar_type_cast, sum_to_size


def reshape(self, shape):
    self_shape = self.shape

    def backward(dout):
        return np.reshape(dout, self_shape), None

    return np.reshape(self, shape), backward


def ravel(self):
    self_shape = self.shape

    def backward(dout):
        return np.reshape(dout, self_shape)

    return np.ravel(self), backward


def flatten(self):
    self_shape = self.shape

    def backward(dout):
        return np.reshape(dout, self_shape)

    return flatten_kernel(self), backward


def squeeze(self, axis):
    self_shape = self.shape

    def backward(dout):
        return np.reshape(dout, self_shape), None

    return np.squeeze(self, axis), backward


def expand_dims(self, axis):
    self_shape = self.shape

    def backward(dout):
        return np.reshape(dout, self_shape), None

    return np.expand_dims(self, axis), backward


def transpose(self, axes):
    def backward(dout):
        return transpose_backward(dout, axes), None

    return np.transpose(self, axes), backward


def broadcast_to(self, shape):
    self_shape = self.shape

    def backward(dout):
        return sum_to_size(dout, self_shape), None

    return np.broadcast_to(self, shape), backward


def sum_to_size_(self, shape):
    self_shape = self.shape

    def backward(dout):
        return np.broadcast_to(dout, self_shape), None

    return sum_to_size(self, shape), backward


# A list of arrays (``np.stack(hs)``) gets a list of gradients, a tuple a tuple: Note [Lists
# are values] in `ir.ops.prim`. ``is_list`` folds to a constant once types are specialised.


def concatenate(tensors, axis):
    sizes = input_shapes(tensors)
    as_list = is_list(tensors)

    def backward(dout):
        return sequence_as(concatenate_backward(dout, sizes, axis), as_list), None

    return np.concatenate(tensors, axis=axis), backward


def stack(tensors, axis):
    as_list = is_list(tensors)

    def backward(dout):
        return sequence_as(stack_backward(dout, axis), as_list), None

    return np.stack(tensors, axis=axis), backward


def astype(self, dtype):
    self_dtype = dtype_of(self)

    def backward(dout):
        return dout.astype(self_dtype), None

    return self.astype(dtype), backward


def cast(self, dtype):
    self_dtype = dtype_of(self)

    def backward(dout):
        return dout.astype(self_dtype), None

    return scalar_type_cast(self, dtype), backward


def asarray(self):
    def backward(dout):
        return dout

    return number_to_array(self), backward
