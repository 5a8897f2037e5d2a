"""Adjoints of the scans of `ir.ops.scans` (``cumsum``, ``diff``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ir.ops.gradients.common import shaped_by_operand
from ir.ops.registry import Derivative, register_op


def cumsum_backward(grad: Any, shape: Any, axis: int | None) -> Any:
    """The gradient of ``np.cumsum(x, axis)``: a cumulative sum from the other end, reshaped
    back to x's ``shape`` (a flat gradient when ``axis`` is None)."""
    grad = np.asarray(grad)
    along = 0 if axis is None else axis
    summed = np.flip(np.cumsum(np.flip(grad, along), axis=along), along)
    return np.reshape(summed, shape)


def diff_backward(grad: Any, shape: Any, n: int, axis: int) -> Any:
    """The gradient of ``np.diff(x, n, axis)``: the adjoint of one difference,
    ``g[j - 1] - g[j]`` with zeros beyond either end, applied ``n`` times."""
    grad = np.asarray(grad)
    if n >= shape[axis]:  # an empty result: x does not reach it
        return np.zeros(shape, grad.dtype)
    widths = [(0, 0)] * grad.ndim
    widths[axis] = (1, 1)
    for _ in range(n):
        grad = -np.diff(np.pad(grad, widths), axis=axis)
    return grad


register_op(
    "aten::_cumsum_backward(Tensor grad, Any shape, int? axis) -> Tensor",
    shape=shaped_by_operand(1),
    derivative=Derivative.FORMULA,
)(cumsum_backward)


register_op(
    "aten::_diff_backward(Tensor grad, Any shape, int n, int axis) -> Tensor",
    shape=shaped_by_operand(1),
    derivative=Derivative.FORMULA,
)(diff_backward)
