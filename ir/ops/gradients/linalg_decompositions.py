"""Adjoints of the np.linalg operators of `ir.ops.linalg_decompositions` whose formulas branch on a
result's structure or ord."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ir.ops.registry import NOT_CONSTANT, Derivative, register_op
from ir.ops.shape_rules import (
    as_tensor,
    fixed,
    normalize_axes,
    normalize_axis,
    tensor,
)
from ir.types import (
    INT,
    Type,
)


def _swap(x: Any) -> Any:
    return np.swapaxes(x, -1, -2)


def _adjoint(x: Any) -> Any:
    return np.conj(np.swapaxes(x, -1, -2))


def svd_leading(grad: Any, count: int, axis: int) -> Any:
    """The first ``count`` entries along ``axis`` of the cotangent of ``u`` (axis -1) or ``vh``
    (axis -2) of ``np.linalg.svd(a, full_matrices=True)``. The columns of ``u`` and rows of
    ``vh`` past ``min(m, n)`` are any orthonormal basis of a complement: a loss that reads them
    has no gradient, so their cotangent must be zero.

    >>> svd_leading(np.ones((3, 3)) * [1.0, 1.0, 0.0], 2, -1).shape
    (3, 2)
    """
    grad = np.asarray(grad)
    past = np.take(grad, range(count, grad.shape[axis]), axis=axis)
    if np.any(past):
        raise ValueError(
            "the gradient of svd with full_matrices=True is not defined for the columns of "
            "u or rows of vh past min(m, n): pass full_matrices=False"
        )
    return np.take(grad, range(count), axis=axis)


# The formulas of np.linalg.norm's gradient (`norm_kind`).
(
    NORM_EUCLIDEAN,
    NORM_POWER,
    NORM_LARGEST,
    NORM_COUNT,
    NORM_COLUMN_SUMS,
    NORM_ROW_SUMS,
    NORM_LARGEST_SINGULAR,
    NORM_SMALLEST_SINGULAR,
    NORM_NUCLEAR,
) = range(9)


def norm_kind(order: Any, axis: Any, ndim: int) -> int:
    """Which of its formulas the gradient of ``np.linalg.norm(x, order, axis)`` takes, for an
    ``x`` of rank ``ndim`` (a constant once ranks are known, so the formula's branches fold):
    `NORM_EUCLIDEAN` (the 2-norm of vectors, the Frobenius norm), `NORM_POWER` (another
    vector p-norm), `NORM_LARGEST` (vector ``inf``/``-inf``), `NORM_COUNT` (``ord=0``), and
    the matrix norms: `NORM_COLUMN_SUMS` (``ord`` 1, -1), `NORM_ROW_SUMS` (``inf``, ``-inf``),
    `NORM_LARGEST_SINGULAR` (2), `NORM_SMALLEST_SINGULAR` (-2) and `NORM_NUCLEAR`.

    >>> norm_kind(None, None, 2), norm_kind(3, None, 1), norm_kind(2, None, 2)
    (0, 1, 6)
    """
    vector = len(normalize_axes(axis, ndim)) == 1
    if order is None or (isinstance(order, str) and order == "fro") or (vector and order == 2):
        return NORM_EUCLIDEAN
    if isinstance(order, str):
        return NORM_NUCLEAR
    if not vector:
        if order in (1, -1):
            return NORM_COLUMN_SUMS
        if order in (np.inf, -np.inf):
            return NORM_ROW_SUMS
        return NORM_LARGEST_SINGULAR if order == 2 else NORM_SMALLEST_SINGULAR
    if order in (np.inf, -np.inf):
        return NORM_LARGEST
    return NORM_COUNT if order == 0 else NORM_POWER


def matrix_norm_axis(axis: Any, ndim: int, which: int) -> int:
    """The row (``which`` 0) or column (1) axis of a matrix norm over ``axis``, in the order
    given: ``axis=(1, 0)`` makes axis 1 the rows, and the 1 and inf norms tell them apart.
    Shapes are propagated through the branches of the norm's formula that are not taken as
    well, so a vector (``axis`` None or one axis) gets the axes of ``np.atleast_2d`` of it.

    >>> matrix_norm_axis((1, 0), 2, 0), matrix_norm_axis(None, 3, 1), matrix_norm_axis(0, 1, 1)
    (1, 2, 1)
    """
    if axis is None or np.ndim(axis) == 0 or ndim < 2:
        return max(ndim, 2) - 2 + which
    return normalize_axis(int(axis[which]), ndim)


def _leading_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    grad, count, axis = as_tensor(types[0], 0), consts[1], consts[2]
    if grad.shape is None or axis is NOT_CONSTANT:
        return tensor(grad.dtype, None)
    shape = list(grad.shape)
    shape[normalize_axis(axis, len(shape))] = None if count is NOT_CONSTANT else count
    return tensor(grad.dtype, tuple(shape))


register_op(
    "aten::_svd_leading(Tensor grad, int count, int axis) -> Tensor",
    shape=_leading_rule,
    derivative=Derivative.FORMULA,
    may_raise=True,
)(svd_leading)


register_op(
    "aten::_norm_kind(Any ord, Any axis, int ndim) -> int",
    shape=fixed(INT),
    derivative=Derivative.NONE,
)(norm_kind)


register_op(
    "aten::_matrix_norm_axis(Any axis, int ndim, int which) -> int",
    shape=fixed(INT),
    derivative=Derivative.NONE,
)(matrix_norm_axis)
