"""Derivative formulas of the operators of `ir.ops.products`."""

import numpy as np

from ir.ops.products import (
    cross_axes,
    einsum_vjp,
    einsum_vjp_backward,
    einsum_vjp_backward_backward,
    inner_subscripts,
    kron_split,
    kron_subscripts,
    tensordot_subscripts,
)
from ir.ops.products import einsum as einsum_kernel
from ir.ops.products import einsum_view as einsum_view_kernel
from ir.ops.scatter import einsum_scatter as einsum_scatter_kernel
from ir.ops.shape_ops import size_if_not_equal, sum_to_size


def tensordot(self, other, axes):
    subscripts = tensordot_subscripts(self.ndim, other.ndim, axes)

    def backward(dout):
        grad_self, grad_other = einsum_vjp(dout, subscripts, (self, other))
        return grad_self, grad_other, None

    return np.tensordot(self, other, axes), backward


def einsum(subscripts, operands):
    # The operands come as one tuple; their gradients go back as one tuple too.
    def backward(dout):
        return None, einsum_vjp(dout, subscripts, operands)

    return einsum_kernel(subscripts, operands), backward


def _einsum_view(self, subscripts):
    # A relabelling of one operand's axes and diagonals: its gradient goes back onto them.
    def backward(dout):
        return einsum_scatter_kernel(np.zeros_like(self), dout, subscripts), None

    return einsum_view_kernel(self, subscripts), backward


def inner(self, other):
    subscripts = inner_subscripts(np.ndim(self), np.ndim(other))

    def backward(dout):
        grad_self, grad_other = einsum_vjp(dout, subscripts, (self, other))
        return grad_self, grad_other

    return np.inner(self, other), backward


def outer(self, other):
    self_shape = np.shape(self)
    other_shape = np.shape(other)

    def backward(dout):
        flat = (np.ravel(self), np.ravel(other))
        grad_self, grad_other = einsum_vjp(dout, "i,j->ij", flat)
        return np.reshape(grad_self, self_shape), np.reshape(grad_other, other_shape)

    return np.outer(self, other), backward


def kron(self, other):
    subscripts = kron_subscripts(np.ndim(self), np.ndim(other))
    split = kron_split(np.shape(self), np.shape(other))

    def backward(dout):
        grad_self, grad_other = einsum_vjp(np.reshape(dout, split), subscripts, (self, other))
        return grad_self, grad_other

    return np.kron(self, other), backward


def cross(self, other, axisa, axisb, axisc, axis):
    out = np.cross(self, other, axisa, axisb, axisc, axis)
    # With the vectors along the last axis of each operand and of the result:
    a_axis, b_axis, c_axis = cross_axes(axisa, axisb, axisc, axis)
    self_last = np.moveaxis(self, a_axis, -1)
    other_last = np.moveaxis(other, b_axis, -1)
    out_last = np.moveaxis(out, c_axis, -1)
    self_size = size_if_not_equal(self_last, out_last)
    other_size = size_if_not_equal(other_last, out_last)

    def backward(dout):
        # dout . (self x other) = self . (other x dout) = other . (dout x self)
        dout_last = np.moveaxis(dout, c_axis, -1)
        grad_self = sum_to_size(np.cross(other_last, dout_last), self_size)
        grad_other = sum_to_size(np.cross(dout_last, self_last), other_size)
        return (
            np.moveaxis(grad_self, -1, a_axis),
            np.moveaxis(grad_other, -1, b_axis),
            None,
            None,
            None,
            None,
        )

    return out, backward


def _einsum_backward(grad, subscripts, operands):
    # Linear in the gradient and in each operand: its own gradient is einsums again.
    def backward(dout):
        grad_grad, grad_operands = einsum_vjp_backward(dout, grad, subscripts, operands)
        return grad_grad, None, grad_operands

    return einsum_vjp(grad, subscripts, operands), backward


def _einsum_double_backward(cotangents, grad, subscripts, operands):
    # Multilinear in the cotangents, the gradient and the operands: einsums again.
    def backward(dout):
        dout_grad, dout_operands = dout
        grads = einsum_vjp_backward_backward(
            dout_grad, dout_operands, cotangents, grad, subscripts, operands
        )
        grad_cotangents, grad_grad, grad_operands = grads
        return grad_cotangents, grad_grad, None, grad_operands

    return einsum_vjp_backward(cotangents, grad, subscripts, operands), backward
