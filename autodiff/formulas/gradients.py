"""Derivative formulas of the helper operators of the `ir.ops.gradients` package.

They make gradients differentiable again. Each helper is linear in its gradient operand, so its own
gradient is the adjoint map; the product helpers are bilinear, so d<G, f(A, B)> in a direction is f
in that direction."""

import numpy as np

from ir.ops.gradients.arrangement import (
    column_join,
    column_join_backward,
    join,
    join_backward,
    pad_backward,
    repeat_backward,
    tile_backward,
)
from ir.ops.gradients.indexing import index_backward, index_tuple, select_backward, slice_backward
from ir.ops.gradients.linalg import dot_backward, matmul_backward_other, matmul_backward_self
from ir.ops.gradients.linalg_decompositions import svd_leading
from ir.ops.gradients.prim import add_lists, is_list, list_head, list_index_backward, sequence_as
from ir.ops.gradients.reductions import prod_backward, prod_double_backward, unreduce
from ir.ops.gradients.scans import cumsum_backward, diff_backward
from ir.ops.gradients.scatter import gather_last_written, scatter_last_written, zero_written
from ir.ops.gradients.selection import (
    diag_backward,
    diagonal_backward,
    select_choices_backward,
    select_choices_join,
    take_backward,
)
from ir.ops.gradients.shape_ops import (
    concatenate_backward,
    input_shapes,
    stack_backward,
    transpose_backward,
)
from ir.ops.indexing import select as select_kernel
from ir.ops.indexing import slice_axis
from ir.ops.prim import list_append, list_index
from ir.ops.shape_ops import sum_to_size


def _unreduce(grad, shape, axis, keepdims):
    grad_shape = grad.shape

    def backward(dout):
        summed = np.sum(dout, axis=axis, keepdims=keepdims)
        return np.reshape(summed, grad_shape), None, None, None

    return unreduce(grad, shape, axis, keepdims), backward


def _transpose_backward(grad, axes):
    def backward(dout):
        return np.transpose(dout, axes), None

    return transpose_backward(grad, axes), backward


def _matmul_backward_self(grad, self, other):
    # Linear in grad and other; self gives only its shape.
    def backward(dout):
        return dout @ other, None, matmul_backward_other(grad, dout, other)

    return matmul_backward_self(grad, self, other), backward


def _matmul_backward_other(grad, self, other):
    # Linear in grad and self; other gives only its shape.
    def backward(dout):
        return self @ dout, matmul_backward_self(grad, self, dout), None

    return matmul_backward_other(grad, self, other), backward


def _dot_backward(grad, self, other):
    def backward(dout):
        dout_self, dout_other = dout
        grad_grad = np.dot(dout_self, other) + np.dot(self, dout_other)
        grad_self, _ = dot_backward(grad, self, dout_other)
        _, grad_other = dot_backward(grad, dout_self, other)
        return grad_grad, grad_self, grad_other

    return dot_backward(grad, self, other), backward


def _prod_backward(grad, self, axis, keepdims):
    # Linear in the gradient, not in self: the second derivative of a product.
    def backward(dout):
        grad_grad, grad_self = prod_double_backward(dout, grad, self, axis, keepdims)
        return grad_grad, grad_self, None, None

    return prod_backward(grad, self, axis, keepdims), backward


def _select_backward(grad, shape, axis, index):
    def backward(dout):
        return select_kernel(dout, axis, index), None, None, None

    return select_backward(grad, shape, axis, index), backward


def _slice_backward(grad, shape, axis, start, stop, step):
    def backward(dout):
        return slice_axis(dout, axis, start, stop, step), None, None, None, None, None

    return slice_backward(grad, shape, axis, start, stop, step), backward


def _svd_leading(grad, count, axis):
    shape = grad.shape

    def backward(dout):
        return slice_backward(dout, shape, axis, 0, count, 1), None, None

    return svd_leading(grad, count, axis), backward


def _index_backward(grad, shape, indices):
    def backward(dout):
        return index_tuple(dout, indices), None, None

    return index_backward(grad, shape, indices), backward


def _index_tuple(self, indices):
    shape = self.shape

    def backward(dout):
        return index_backward(dout, shape, indices), None

    return index_tuple(self, indices), backward


def _zero_written(grad, indices):
    # A projection: zeroing the same positions again is its own adjoint.
    def backward(dout):
        return zero_written(dout, indices), None

    return zero_written(grad, indices), backward


def _gather_last_written(grad, indices):
    shape = grad.shape

    def backward(dout):
        return scatter_last_written(dout, shape, indices), None

    return gather_last_written(grad, indices), backward


def _scatter_last_written(grad, shape, indices):
    def backward(dout):
        return gather_last_written(dout, indices), None, None

    return scatter_last_written(grad, shape, indices), backward


def _take_backward(grad, shape, indices, axis):
    def backward(dout):
        return np.take(dout, indices, axis), None, None, None

    return take_backward(grad, shape, indices, axis), backward


def _tile_backward(grad, shape, reps):
    # Sums the tiles' gradients: its adjoint tiles again.
    def backward(dout):
        return np.tile(dout, reps), None, None

    return tile_backward(grad, shape, reps), backward


def _pad_backward(grad, shape, pad_width, mode):
    # Gathers the padded gradient onto the elements and the constant it copies: its adjoint
    # pads again, with the constant's cotangent as the constant (the copying modes have none).
    def backward(dout):
        dout_self, dout_value = dout
        return np.pad(dout_self, pad_width, mode, constant_values=dout_value), None, None, None

    return pad_backward(grad, shape, pad_width, mode), backward


def _join_backward(grad, shapes, axis):
    # Splits hstack's or vstack's gradient: its adjoint joins the pieces again.
    ndim = grad.ndim

    def backward(dout):
        return join(dout, axis, ndim), None, None

    return join_backward(grad, shapes, axis), backward


def _join(tensors, axis, ndim):
    shapes = input_shapes(tensors)

    def backward(dout):
        return join_backward(dout, shapes, axis), None, None

    return join(tensors, axis, ndim), backward


def _column_join_backward(grad, shapes, axis):
    # Splits column_stack's (or np.c_'s) gradient: its adjoint joins the pieces as columns again.
    def backward(dout):
        return column_join(dout, axis), None, None

    return column_join_backward(grad, shapes, axis), backward


def _column_join(tensors, axis):
    shapes = input_shapes(tensors)

    def backward(dout):
        return column_join_backward(dout, shapes, axis), None

    return column_join(tensors, axis), backward


def _select_choices_backward(grad, taken, shapes):
    # Masks the gradient once per choice: its adjoint puts the pieces back where they were taken.
    def backward(dout):
        return select_choices_join(dout, taken), None, None

    return select_choices_backward(grad, taken, shapes), backward


def _select_choices_join(pieces, taken):
    shapes = input_shapes(pieces)

    def backward(dout):
        return select_choices_backward(dout, taken, shapes), None

    return select_choices_join(pieces, taken), backward


def _cumsum_backward(grad, shape, axis):
    def backward(dout):
        return np.cumsum(dout, axis), None, None

    return cumsum_backward(grad, shape, axis), backward


def _concatenate_backward(grad, sizes, axis):
    def backward(dout):
        return np.concatenate(dout, axis=axis), None, None

    return concatenate_backward(grad, sizes, axis), backward


def _stack_backward(grad, axis):
    def backward(dout):
        return np.stack(dout, axis=axis), None

    return stack_backward(grad, axis), backward


def _repeat_backward(grad, shape, repeats, axis):
    def backward(dout):
        return np.repeat(dout, repeats, axis), None, None, None

    return repeat_backward(grad, shape, repeats, axis), backward


def _diagonal_backward(grad, shape, offset, axis1, axis2):
    grad_shape = grad.shape

    def backward(dout):
        diagonal = np.diagonal(dout, offset, axis1, axis2)
        return sum_to_size(diagonal, grad_shape), None, None, None, None

    return diagonal_backward(grad, shape, offset, axis1, axis2), backward


def _diag_backward(grad, shape, k):
    def backward(dout):
        return np.diag(dout, k), None, None

    return diag_backward(grad, shape, k), backward


def _diff_backward(grad, shape, n, axis):
    def backward(dout):
        return np.diff(dout, n, axis), None, None, None

    return diff_backward(grad, shape, n, axis), backward


def _list_index_backward(grad, lst, index):
    # Linear in grad, which lands at one index of a list of zeros; lst only gives the zeros'
    # shapes and dtypes, so it gets no gradient.
    def backward(dout):
        return list_index(dout, index), None, None

    return list_index_backward(grad, lst, index), backward


def _sequence_as(parts, as_list):
    parts_as_list = is_list(parts)

    def backward(dout):
        return sequence_as(dout, parts_as_list), None

    return sequence_as(parts, as_list), backward


def _list_head(lst):
    last = list_index(lst, -1)

    def backward(dout):
        return list_append(dout, np.zeros_like(last))

    return list_head(lst), backward


def _add_lists(a, b):
    def backward(dout):
        return dout, dout

    return add_lists(a, b), backward
