"""Adjoints of the selection operators of `ir.ops.selection` (diagonals, ``take``, ``select``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ir.ops.gradients.common import shaped_by_operand
from ir.ops.gradients.shape_ops import concatenate_backward_rule
from ir.ops.registry import Derivative, register_op
from ir.ops.selection import diagonal_length
from ir.ops.shape_ops import sequence_items, sum_to_size
from ir.ops.shape_rules import as_tensor, tensor
from ir.types import Type


def diagonal_backward(grad: Any, shape: Any, offset: int, axis1: int, axis2: int) -> Any:
    """The gradient of ``np.diagonal``: zeros of the input's shape holding ``grad`` on that
    diagonal (``grad`` broadcasts along it: ``np.trace`` passes one value per matrix)."""
    grad = np.asarray(grad)
    result = np.zeros(shape, grad.dtype)
    planes = np.moveaxis(result, (axis1, axis2), (-2, -1))
    steps = np.arange(diagonal_length(planes.shape[-2], planes.shape[-1], offset) or 0)
    planes[..., steps + max(-offset, 0), steps + max(offset, 0)] = grad
    return result


def diag_backward(grad: Any, shape: Any, k: int) -> Any:
    """The gradient of ``np.diag``: the diagonal of the gradient for a vector, the gradient put
    on that diagonal for a matrix."""
    if len(shape) == 1:
        return np.diagonal(grad, k).copy()
    return diagonal_backward(grad, shape, k, 0, 1)


def take_backward(grad: Any, shape: Any, indices: Any, axis: int | None) -> Any:
    """The gradient of ``np.take``: repeated indices accumulate (``np.add.at``)."""
    grad = np.asarray(grad)
    result = np.zeros(shape, grad.dtype)
    if axis is None:
        np.add.at(result.reshape(-1), np.asarray(indices), grad)
        return result
    along: Any = (slice(None),) * (axis % result.ndim) + (np.asarray(indices),)
    np.add.at(result, along, grad)
    return result


def select_choices_backward(grad: Any, taken: Any, shapes: Any) -> tuple[Any, ...]:
    """The gradients of ``np.select``'s choices: each gets ``grad`` where the result took it
    (``taken``, from `select_index`), summed back over its broadcasting."""
    grad = np.asarray(grad)
    zero = np.zeros((), grad.dtype)
    return tuple(
        np.asarray(sum_to_size(np.where(taken == k, grad, zero), tuple(shape)))
        for k, shape in enumerate(shapes)
    )


def select_choices_join(pieces: Any, taken: Any) -> Any:
    """The adjoint of `select_choices_backward`: each element of ``taken``'s shape gets the
    piece of the choice it took (0 where it took the default)."""
    pieces = [np.asarray(p) for p in pieces]
    dtype = np.result_type(*pieces) if pieces else np.float64
    conditions = [taken == k for k in range(len(pieces))]
    return np.select(conditions, pieces, np.zeros(np.shape(taken), dtype))


def _select_choices_backward_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    return concatenate_backward_rule([types[0], types[2]], [consts[0], consts[2]])


def _select_join_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    items, _ = sequence_items(types[0])
    dtypes = [t.dtype for t in items]
    dtype = None if None in dtypes or not dtypes else np.result_type(*dtypes).name
    return tensor(dtype, as_tensor(types[1], 1).shape)


register_op(
    "aten::_select_choices_backward(Tensor grad, Tensor taken, Any shapes) -> Any",
    shape=_select_choices_backward_rule,
    derivative=Derivative.FORMULA,
)(select_choices_backward)
register_op(
    "aten::_select_choices_join(Any pieces, Tensor taken) -> Tensor",
    shape=_select_join_rule,
    derivative=Derivative.FORMULA,
)(select_choices_join)


register_op(
    "aten::_diagonal_backward(Tensor grad, Any shape, int offset, int axis1, int axis2) -> Tensor",
    shape=shaped_by_operand(1),
    derivative=Derivative.FORMULA,
)(diagonal_backward)


register_op(
    "aten::_diag_backward(Tensor grad, Any shape, int k) -> Tensor",
    shape=shaped_by_operand(1),
    derivative=Derivative.FORMULA,
)(diag_backward)


register_op(
    "aten::_take_backward(Tensor grad, Any shape, Any indices, int? axis) -> Tensor",
    shape=shaped_by_operand(1),
    derivative=Derivative.FORMULA,
)(take_backward)
