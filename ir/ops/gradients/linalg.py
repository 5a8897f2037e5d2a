"""Adjoints of ``matmul`` and ``dot`` (`ir.ops.linalg`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ir.graph import Node
from ir.ops.call_spelling import Bind, Call
from ir.ops.gradients.common import like_tensor_operand
from ir.ops.registry import Derivative, register_op
from ir.ops.shape_rules import (
    as_array_like,
    as_tensor,
)
from ir.types import (
    TensorType,
    TupleType,
    Type,
)


def _matmul_operands(grad: Any, a: Any, b: Any) -> tuple[Any, Any, Any, Any, Any]:
    """The operands as at least 2-d stacks, and the gradient with the dims that 1-d operands
    dropped from the result put back (b's last one, then a's row)."""
    a, b, grad = np.asarray(a), np.asarray(b), np.asarray(grad)
    a2 = a[None, :] if a.ndim == 1 else a
    b2 = b[:, None] if b.ndim == 1 else b
    g2 = grad[..., None] if b.ndim == 1 else grad
    if a.ndim == 1:
        g2 = np.expand_dims(g2, -2)
    return a, b, a2, b2, g2


def matmul_backward_self(grad: Any, a: Any, b: Any) -> Any:
    """The gradient of ``a @ b`` w.r.t. ``a`` alone: a gradient w.r.t. ``b`` that nothing
    reads is never computed (DCE drops this half's twin, `matmul_backward_other`)."""
    a, b, _, b2, g2 = _matmul_operands(grad, a, b)
    grad_a = np.matmul(g2, np.swapaxes(b2, -1, -2))
    if a.ndim == 1:
        grad_a = np.squeeze(grad_a, -2)
    return _sum_to(grad_a, a.shape)


def matmul_backward_other(grad: Any, a: Any, b: Any) -> Any:
    """The gradient of ``a @ b`` w.r.t. ``b`` alone."""
    a, b, a2, _, g2 = _matmul_operands(grad, a, b)
    grad_b = np.matmul(np.swapaxes(a2, -1, -2), g2)
    if b.ndim == 1:
        grad_b = np.squeeze(grad_b, -1)
    return _sum_to(grad_b, b.shape)


def dot_backward(grad: Any, a: Any, b: Any) -> tuple[Any, Any]:
    """Gradients of ``np.dot(a, b)``: a sum product over a's last axis and b's second-to-last
    (its only one when 1-d), with a scalar operand scaling the other."""
    a, b, grad = np.asarray(a), np.asarray(b), np.asarray(grad)
    if a.ndim == 0 or b.ndim == 0:
        grad_a, grad_b = _sum_to(grad * b, a.shape), _sum_to(grad * a, b.shape)
    elif b.ndim == 1:
        lead = a.ndim - 1  # the result's dims are a's leading ones, then b's other ones
        grad_a = np.multiply.outer(grad, b)
        grad_b = np.tensordot(a, grad, (range(lead), range(lead)))
    else:
        lead, middle = a.ndim - 1, b.ndim - 2
        grad_a = np.tensordot(
            grad, b, ([*range(lead, lead + middle), grad.ndim - 1], [*range(middle), b.ndim - 1])
        )
        grad_b = np.moveaxis(np.tensordot(a, grad, (range(lead), range(lead))), 0, -2)
    # np.dot turns a Python float into a float64 array, so a float32 operand can meet a
    # float64 result: its gradient is cast back.
    return _in_dtype_of(grad_a, a), _in_dtype_of(grad_b, b)


def _in_dtype_of(grad: Any, operand: np.ndarray[Any, Any]) -> Any:
    # A real operand's gradient is the real part (Note [Complex gradients] in autodiff.formulas).
    return np.real(grad).astype(operand.dtype, copy=False) if operand.dtype.kind == "f" else grad


def _sum_to(grad: Any, shape: tuple[int, ...]) -> Any:
    grad = np.asarray(grad)
    if grad.shape == shape:
        return grad
    lead = grad.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, d in enumerate(shape) if d == 1 and grad.shape[lead + i] != 1
    )
    return np.sum(grad, axis=axes, keepdims=True).reshape(shape)


def _dot_backward_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    grad = as_tensor(types[0])
    result: list[Type] = []
    for ty in types[1:3]:
        operand = as_array_like(ty)
        floating = operand.dtype is not None and np.dtype(operand.dtype).kind == "f"
        result.append(TensorType(operand.dtype if floating else grad.dtype, operand.shape))
    return [TupleType(tuple(result))]


def _product_of_matrices(node: Node) -> bool:
    """The gradient and both operands are matrices whose shapes chain (``grad`` (n, m) is the
    shape of ``a`` (n, k) @ ``b`` (k, m)): the kernel's sum back to an operand's shape, and its
    handling of 1-d and stacked operands, do nothing."""
    shapes = []
    for value in node.inputs:
        ty = value.ty
        if not (isinstance(ty, TensorType) and ty.is_complete and ty.shape and len(ty.shape) == 2):
            return False
        shapes.append(ty.shape)
    (n, m), (n_a, k), (k_b, m_b) = shapes
    return (n, m, k) == (n_a, m_b, k_b)


def spell_matmul_backward_self(node: Node, args: Sequence[str], bind: Bind) -> Call | None:
    """The kernel's one matmul, ``matmul(grad, b.T)`` (``swapaxes(b, -1, -2)`` of a matrix is
    ``b.T``), for a product of two matrices (Note [Typed calls] in `ir.typed_calls`)."""
    if not _product_of_matrices(node):
        return None
    return Call(f"{bind(np.matmul, 'aten_matmul')}({args[0]}, {args[2]}.T)", fresh=True)


def spell_matmul_backward_other(node: Node, args: Sequence[str], bind: Bind) -> Call | None:
    """``matmul(a.T, grad)`` for a product of two matrices."""
    if not _product_of_matrices(node):
        return None
    return Call(f"{bind(np.matmul, 'aten_matmul')}({args[1]}.T, {args[0]})", fresh=True)


register_op(
    "aten::_matmul_backward_self(Tensor grad, Tensor self, Tensor other) -> Tensor",
    shape=like_tensor_operand(1),
    derivative=Derivative.FORMULA,
    only_reads=True,
    typed_call=spell_matmul_backward_self,
    read_for_type=("self",),
)(matmul_backward_self)


register_op(
    "aten::_matmul_backward_other(Tensor grad, Tensor self, Tensor other) -> Tensor",
    shape=like_tensor_operand(2),
    derivative=Derivative.FORMULA,
    only_reads=True,
    typed_call=spell_matmul_backward_other,
    read_for_type=("other",),
)(matmul_backward_other)


register_op(
    "aten::_dot_backward(Tensor grad, Any self, Any other) -> Any",
    shape=_dot_backward_rule,
    derivative=Derivative.FORMULA,
)(dot_backward)
