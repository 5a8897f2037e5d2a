"""Adjoints of the reductions of `ir.ops.reductions` (``sum``, ``mean``, ``prod``...)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ir.graph import Node
from ir.ops.call_spelling import Bind, Call, constant
from ir.ops.gradients.common import like_tensor_operand, shaped_by_operand
from ir.ops.registry import Derivative, register_op
from ir.ops.shape_rules import (
    as_tensor,
    normalize_axes,
)
from ir.types import (
    TensorType,
    TupleType,
    Type,
)


def unreduce(grad: Any, shape: Any, axis: Any, keepdims: bool) -> Any:
    """Spread the gradient of a reduction back over the reduced input's ``shape``."""
    grad = np.asarray(grad)
    if not keepdims and axis is not None:
        grad = np.expand_dims(grad, normalize_axes(axis, len(shape)))
    return np.broadcast_to(grad, shape)


def prod_backward(grad: Any, x: Any, axis: Any, keepdims: bool) -> Any:
    """The gradient of ``np.prod(x, axis, keepdims)``: each element gets the product of the
    others it was multiplied with, computed without dividing (exact where x has zeros)."""
    x = np.asarray(x)
    reduced = normalize_axes(axis, x.ndim)
    kept = [i for i in range(x.ndim) if i not in reduced]
    moved = np.transpose(x, [*kept, *reduced])
    count = int(np.prod([x.shape[i] for i in reduced]))
    spread = unreduce(grad, x.shape, axis, keepdims)
    if count == 0:
        return np.zeros_like(spread)
    flat = moved.reshape((*moved.shape[: len(kept)], count))
    ones = np.ones((*flat.shape[:-1], 1), flat.dtype)
    before = np.cumprod(np.concatenate([ones, flat[..., :-1]], axis=-1), axis=-1)
    after = np.cumprod(np.concatenate([ones, flat[..., :0:-1]], axis=-1), axis=-1)[..., ::-1]
    others = np.transpose((before * after).reshape(moved.shape), np.argsort([*kept, *reduced]))
    return spread * others


def prod_double_backward(
    cotangent: Any, grad: Any, x: Any, axis: Any, keepdims: bool
) -> tuple[Any, Any]:
    """The gradients of `prod_backward` w.r.t. ``grad`` and ``x`` for a ``cotangent`` of x's
    shape. W.r.t. ``grad``: the cotangent times the others' product, summed back. W.r.t.
    ``x``: ``grad`` times the derivative of the others' product in the cotangent's direction
    (the Hessian of a product is symmetric), from prefix and suffix products carried with
    their derivatives, so without dividing (exact where x has zeros)."""
    x = np.asarray(x)
    grad = np.asarray(grad)
    cotangent = np.asarray(cotangent)
    reduced = normalize_axes(axis, x.ndim)
    others = prod_backward(np.ones_like(grad), x, axis, keepdims)
    grad_grad = np.sum(cotangent * others, axis=reduced, keepdims=True).reshape(grad.shape)
    kept = [i for i in range(x.ndim) if i not in reduced]
    order = [*kept, *reduced]
    moved = np.transpose(x, order)
    count = int(np.prod([x.shape[i] for i in reduced]))
    flat = moved.reshape((*moved.shape[: len(kept)], count))
    direction = np.transpose(cotangent, order).reshape(flat.shape)
    before, after = np.ones_like(flat), np.ones_like(flat)
    # A complex cotangent of a real x (a real part taken later) makes the derivatives complex.
    moving = np.result_type(flat, direction)
    d_before, d_after = np.zeros(flat.shape, moving), np.zeros(flat.shape, moving)
    for k in range(1, count):
        before[..., k] = before[..., k - 1] * flat[..., k - 1]
        d_before[..., k] = d_before[..., k - 1] * flat[..., k - 1]
        d_before[..., k] += before[..., k - 1] * direction[..., k - 1]
        j = count - 1 - k
        after[..., j] = after[..., j + 1] * flat[..., j + 1]
        d_after[..., j] = (
            d_after[..., j + 1] * flat[..., j + 1] + after[..., j + 1] * direction[..., j + 1]
        )
    moved_jvp = (d_before * after + before * d_after).reshape(moved.shape)
    jvp = np.transpose(moved_jvp, np.argsort(order))
    grad_x = unreduce(grad, x.shape, axis, keepdims) * jvp
    return _gradient_of(grad_grad, grad), _gradient_of(grad_x, x)


def _gradient_of(value: Any, operand: Any) -> Any:
    """``value`` as the gradient of ``operand``: in its dtype, the real part of a real one's
    (Note [Complex gradients] in `autodiff.formulas`)."""
    if operand.dtype.kind != "c":
        value = np.real(value)
    return value.astype(operand.dtype, copy=False)


def _prod_double_backward_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    grad, x = as_tensor(types[1], 1), as_tensor(types[2], 2)
    return [TupleType((TensorType(grad.dtype, grad.shape), TensorType(x.dtype, x.shape)))]


def spell_unreduce(node: Node, args: Sequence[str], bind: Bind) -> Call | None:
    """``_unreduce`` that inserts no axis (all axes, or keepdims) is ``np.broadcast_to``."""
    axis, keepdims = (constant(v) for v in node.inputs[2:4])
    if node.inputs[1].node.kind != "prim::Constant":
        return None
    if not (axis is None or keepdims is True):
        return None  # the kernel inserts the reduced axes first
    return Call(f"{bind(np.broadcast_to, 'broadcast_to')}({args[0]}, {args[1]})")


register_op(
    "aten::_unreduce(Tensor grad, Any shape, Any axis, bool keepdims) -> Tensor",
    shape=shaped_by_operand(1),
    derivative=Derivative.FORMULA,
    typed_call=spell_unreduce,
)(unreduce)


register_op(
    "aten::_prod_backward(Tensor grad, Tensor self, Any axis, bool keepdims) -> Tensor",
    shape=like_tensor_operand(1),
    derivative=Derivative.FORMULA,
)(prod_backward)


register_op(
    "aten::_prod_double_backward(Tensor cotangent, Tensor grad, Tensor self, Any axis,"
    " bool keepdims) -> Any",
    shape=_prod_double_backward_rule,
    derivative=Derivative.REFUSED,
)(prod_double_backward)
