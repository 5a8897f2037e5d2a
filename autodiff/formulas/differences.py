"""Derivative formulas of the operators of `ir.ops.differences`.

``np.gradient`` is linear in its array: its vjp is the transpose of its stencil
(`gradient_backward`), and the vjp of that transpose is ``np.gradient`` again."""

from ir.ops.differences import gradient as numpy_gradient
from ir.ops.differences import gradient_backward


def gradient(self, spacing, axis, edge_order):
    def backward(dout):
        return gradient_backward(dout, spacing, axis, edge_order), None, None, None

    return numpy_gradient(self, spacing, axis, edge_order), backward


def _gradient_backward(grad, spacing, axis, edge_order):
    def backward(dout):
        return numpy_gradient(dout, spacing, axis, edge_order), None, None, None

    return gradient_backward(grad, spacing, axis, edge_order), backward
