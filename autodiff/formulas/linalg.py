"""Derivative formulas of the operators of `ir.ops.linalg`."""

import numpy as np

from ir.ops.gradients.linalg import dot_backward, matmul_backward_other, matmul_backward_self


def matmul(self, other):
    # Two helpers, not one pair: DCE drops the gradient of an operand nothing differentiates.
    def backward(dout):
        return matmul_backward_self(dout, self, other), matmul_backward_other(dout, self, other)

    return self @ other, backward


def dot(self, other):
    def backward(dout):
        grad_self, grad_other = dot_backward(dout, self, other)
        return grad_self, grad_other

    return np.dot(self, other), backward
