"""Derivative formulas of the operators of `ir.ops.arrangement`."""

import numpy as np

from ir.ops.arrangement import append_axis, append_cut, negated, rollaxis_destination
from ir.ops.arrangement import c_concatenate as c_concatenate_kernel
from ir.ops.arrangement import r_concatenate as r_concatenate_kernel
from ir.ops.gradients.arrangement import (
    column_join_backward,
    join_backward,
    pad_backward,
    repeat_backward,
    tile_backward,
)
from ir.ops.gradients.common import gradient_dtype
from ir.ops.gradients.shape_ops import input_shapes


def moveaxis(self, source, destination):
    def backward(dout):
        return np.moveaxis(dout, destination, source), None, None

    return np.moveaxis(self, source, destination), backward


def swapaxes(self, axis1, axis2):
    def backward(dout):
        return np.swapaxes(dout, axis1, axis2), None, None

    return np.swapaxes(self, axis1, axis2), backward


def rollaxis(self, axis, start):
    destination = rollaxis_destination(self.ndim, axis, start)

    def backward(dout):
        return np.moveaxis(dout, destination, axis), None, None

    return np.rollaxis(self, axis, start), backward


def atleast_1d(self):
    self_shape = self.shape

    def backward(dout):
        return np.reshape(dout, self_shape)

    return np.atleast_1d(self), backward


def atleast_2d(self):
    self_shape = self.shape

    def backward(dout):
        return np.reshape(dout, self_shape)

    return np.atleast_2d(self), backward


def atleast_3d(self):
    self_shape = self.shape

    def backward(dout):
        return np.reshape(dout, self_shape)

    return np.atleast_3d(self), backward


def hstack(tensors):
    shapes = input_shapes(tensors)
    out = np.hstack(tensors)
    axis = min(out.ndim - 1, 1)

    def backward(dout):
        return join_backward(dout, shapes, axis)

    return out, backward


def vstack(tensors):
    shapes = input_shapes(tensors)

    def backward(dout):
        return join_backward(dout, shapes, 0)

    return np.vstack(tensors), backward


def append(arr, values, axis):
    out = np.append(arr, values, axis)
    cut = append_cut(arr, axis)
    along = append_axis(axis)
    arr_shape = np.shape(arr)
    values_shape = np.shape(values)
    arr_dtype = gradient_dtype(arr, out)
    values_dtype = gradient_dtype(values, out)

    def backward(dout):
        # Reshaping undoes the flattening (axis None), and does nothing otherwise.
        head, tail = np.split(dout, [cut], along)
        grad_arr = np.reshape(head, arr_shape).astype(arr_dtype)
        return grad_arr, np.reshape(tail, values_shape).astype(values_dtype), None

    return out, backward


def column_stack(tensors):
    shapes = input_shapes(tensors)

    def backward(dout):
        return column_join_backward(dout, shapes, 1)

    return np.column_stack(tensors), backward


def r_concatenate(tensors):
    shapes = input_shapes(tensors)

    def backward(dout):
        return join_backward(dout, shapes, 0)

    return r_concatenate_kernel(tensors), backward


def c_concatenate(tensors):
    shapes = input_shapes(tensors)

    def backward(dout):
        return column_join_backward(dout, shapes, -1)

    return c_concatenate_kernel(tensors), backward


# The split family returns several arrays: ``dout`` is the tuple of their gradients, with zeros
# for the pieces that got none (`autodiff.differentiate` fills them in).


def split(self, indices_or_sections, axis):
    def backward(dout):
        return np.concatenate(dout, axis=axis), None, None

    return np.split(self, indices_or_sections, axis), backward


def array_split(self, indices_or_sections, axis):
    def backward(dout):
        return np.concatenate(dout, axis=axis), None, None

    return np.array_split(self, indices_or_sections, axis), backward


def hsplit(self, indices_or_sections):
    def backward(dout):
        return np.hstack(dout), None

    return np.hsplit(self, indices_or_sections), backward


def vsplit(self, indices_or_sections):
    def backward(dout):
        return np.concatenate(dout, axis=0), None

    return np.vsplit(self, indices_or_sections), backward


def dsplit(self, indices_or_sections):
    def backward(dout):
        return np.concatenate(dout, axis=2), None

    return np.dsplit(self, indices_or_sections), backward


def repeat(self, repeats, axis):
    shape = self.shape

    def backward(dout):
        return repeat_backward(dout, shape, repeats, axis), None, None

    return np.repeat(self, repeats, axis), backward


def tile(self, reps):
    shape = self.shape

    def backward(dout):
        return tile_backward(dout, shape, reps), None

    return np.tile(self, reps), backward


def pad(self, pad_width, mode, constant_values):
    shape = self.shape

    def backward(dout):
        grad_self, grad_value = pad_backward(dout, shape, pad_width, mode)
        return grad_self, None, None, grad_value

    return np.pad(self, pad_width, mode, constant_values=constant_values), backward


def flip(self, axis):
    def backward(dout):
        return np.flip(dout, axis), None

    return np.flip(self, axis), backward


def fliplr(self):
    def backward(dout):
        return np.fliplr(dout)

    return np.fliplr(self), backward


def flipud(self):
    def backward(dout):
        return np.flipud(dout)

    return np.flipud(self), backward


def rot90(self, k, axes):
    back = -k

    def backward(dout):
        return np.rot90(dout, back, axes), None, None

    return np.rot90(self, k, axes), backward


def roll(self, shift, axis):
    back = negated(shift)

    def backward(dout):
        return np.roll(dout, back, axis), None, None

    return np.roll(self, shift, axis), backward
