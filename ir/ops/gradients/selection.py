"""Adjoints of the selection operators of `ir.ops.selection` (diagonals, ``take``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ir.ops.gradients.common import shaped_by_operand
from ir.ops.registry import Derivative, register_op
from ir.ops.selection import diagonal_length


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
