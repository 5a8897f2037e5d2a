"""Derivative formulas of the operators of `ir.ops.scatter`.

Writes are the functional forms of assignment (Note [Scatters] in `ir.ops.scatter`). What a write
replaces gets no gradient; what it writes gets the gradient of where it landed, summed back over its
broadcasting and cast to its dtype (``gradient_dtype``: a Python number's gradient keeps the
result's precision)."""

import numpy as np

from ir.ops.gradients.common import gradient_dtype
from ir.ops.gradients.indexing import index_tuple
from ir.ops.gradients.scatter import (
    add_at_tuple,
    gather_last_written,
    index_put_tuple,
    zero_written,
)
from ir.ops.indexing import select as select_kernel
from ir.ops.indexing import slice_axis
from ir.ops.products import einsum_view as einsum_view_kernel
from ir.ops.scatter import einsum_scatter as einsum_scatter_kernel
from ir.ops.scatter import imag_scatter as imag_scatter_kernel
from ir.ops.scatter import real_scatter as real_scatter_kernel
from ir.ops.scatter import select_scatter as select_scatter_kernel
from ir.ops.scatter import slice_scatter as slice_scatter_kernel
from ir.ops.scatter import written
from ir.ops.shape_ops import size_if_not_equal, sum_to_size


def _written(target, value):
    out = written(target, value)
    value_size = size_if_not_equal(value, out)
    value_dtype = gradient_dtype(value, out)

    def backward(dout):
        return None, sum_to_size(dout, value_size).astype(value_dtype)

    return out, backward


def select_scatter(self, src, axis, index):
    out = select_scatter_kernel(self, src, axis, index)
    src_size = size_if_not_equal(src, select_kernel(out, axis, index))
    src_dtype = gradient_dtype(src, out)

    def backward(dout):
        grad_self = select_scatter_kernel(dout, np.zeros(()), axis, index)
        grad_src = sum_to_size(select_kernel(dout, axis, index), src_size).astype(src_dtype)
        return grad_self, grad_src, None, None

    return out, backward


def slice_scatter(self, src, axis, start, stop, step):
    out = slice_scatter_kernel(self, src, axis, start, stop, step)
    src_size = size_if_not_equal(src, slice_axis(out, axis, start, stop, step))
    src_dtype = gradient_dtype(src, out)

    def backward(dout):
        grad_self = slice_scatter_kernel(dout, np.zeros(()), axis, start, stop, step)
        region = slice_axis(dout, axis, start, stop, step)
        grad_src = sum_to_size(region, src_size).astype(src_dtype)
        return grad_self, grad_src, None, None, None, None

    return out, backward


def _einsum_scatter(self, src, subscripts):
    out = einsum_scatter_kernel(self, src, subscripts)
    src_size = size_if_not_equal(src, einsum_view_kernel(out, subscripts))
    src_dtype = gradient_dtype(src, out)

    def backward(dout):
        grad_self = einsum_scatter_kernel(dout, np.zeros(()), subscripts)
        region = einsum_view_kernel(dout, subscripts)
        return grad_self, sum_to_size(region, src_size).astype(src_dtype), None

    return out, backward


def _real_scatter(self, src):
    # out = src + 1j Im(self): self keeps only its imaginary part's gradient (Note [Complex
    # gradients]: the cotangent's imaginary part), src gets the cotangent's real part.
    src_size = size_if_not_equal(src, np.real(self))

    def backward(dout):
        grad_self = real_scatter_kernel(dout, np.zeros(()))
        return grad_self, sum_to_size(np.real(dout), src_size)

    return real_scatter_kernel(self, src), backward


def _imag_scatter(self, src):
    # out = Re(self) + 1j src: the cotangent is dL/dRe - 1j dL/dIm, so src's gradient, dL/dIm,
    # is minus the cotangent's imaginary part.
    src_size = size_if_not_equal(src, np.imag(self))

    def backward(dout):
        grad_self = imag_scatter_kernel(dout, np.zeros(()))
        return grad_self, sum_to_size(-np.imag(dout), src_size)

    return imag_scatter_kernel(self, src), backward


def index_put(self, values, indices):
    # Variadic: the index operands come packed in one tuple. Of the values written to one
    # position only the last stays in the result, so only it gets a gradient.
    out = index_put_tuple(self, values, indices)
    values_size = size_if_not_equal(values, index_tuple(self, indices))
    values_dtype = gradient_dtype(values, out)

    def backward(dout):
        grad_values = sum_to_size(gather_last_written(dout, indices), values_size)
        return zero_written(dout, indices), grad_values.astype(values_dtype), None

    return out, backward


def add_at(self, values, indices):
    # Every value added to a position stays in the sum there: each gets that position's
    # gradient, and self is passed through whole.
    out = add_at_tuple(self, values, indices)
    values_size = size_if_not_equal(values, index_tuple(self, indices))
    values_dtype = gradient_dtype(values, out)

    def backward(dout):
        grad_values = sum_to_size(index_tuple(dout, indices), values_size)
        return dout, grad_values.astype(values_dtype), None

    return out, backward
