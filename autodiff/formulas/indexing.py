"""Derivative formulas of the operators of `ir.ops.indexing`."""

from ir.ops.gradients.indexing import index_backward, index_tuple, select_backward, slice_backward
from ir.ops.indexing import select as select_kernel
from ir.ops.indexing import slice_axis


def select(self, axis, index):
    shape = self.shape

    def backward(dout):
        return select_backward(dout, shape, axis, index), None, None

    return select_kernel(self, axis, index), backward


def slice_(self, axis, start, stop, step):
    shape = self.shape

    def backward(dout):
        return slice_backward(dout, shape, axis, start, stop, step), None, None, None, None

    return slice_axis(self, axis, start, stop, step), backward


def index(self, indices):
    # aten::index is variadic; its formula receives the index operands packed in one tuple.
    shape = self.shape

    def backward(dout):
        return index_backward(dout, shape, indices), None

    return index_tuple(self, indices), backward
