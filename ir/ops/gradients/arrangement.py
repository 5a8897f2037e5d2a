"""Adjoints of the arrangement operators of `ir.ops.arrangement`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ir.ops.arrangement import (
    PadMode,
    _promoted_sequence,
    atleast_shape,
    column_sequence,
    column_shape,
)
from ir.ops.gradients.common import shaped_by_operand
from ir.ops.gradients.shape_ops import concatenate_backward_rule
from ir.ops.registry import NOT_CONSTANT, Derivative, register_op
from ir.ops.shape_ops import _concatenate_rule
from ir.ops.shape_rules import (
    as_tensor,
    int_sequence,
)
from ir.types import (
    INT,
    TensorType,
    TupleType,
    Type,
)


def join_backward(grad: Any, shapes: Any, axis: int) -> tuple[Any, ...]:
    """Split the gradient of ``np.hstack``/``np.vstack`` (a concatenation along ``axis`` of the
    inputs made at least ``grad.ndim``-d) back into one piece per input, in its own shape."""
    grad = np.asarray(grad)
    lengths = [atleast_shape(tuple(s), grad.ndim)[axis] for s in shapes]
    pieces = np.split(grad, np.cumsum(lengths)[:-1], axis=axis)
    return tuple(p.reshape(s) for p, s in zip(pieces, shapes, strict=True))


def join(tensors: Any, axis: int, ndim: int) -> Any:
    """The adjoint of `join_backward`: the arrays made at least ``ndim``-d, as ``np.hstack``
    and ``np.vstack`` make them, concatenated along ``axis``."""
    shaped = [np.reshape(t, atleast_shape(np.shape(t), ndim)) for t in tensors]
    return np.concatenate(shaped, axis=axis)


def column_join_backward(grad: Any, shapes: Any, axis: int) -> tuple[Any, ...]:
    """Split the gradient of ``np.column_stack`` (``axis`` 1) or ``np.c_`` (``axis`` -1) back
    into one piece per input, in its own shape (a 1-d input's piece is a column)."""
    grad = np.asarray(grad)
    lengths = [column_shape(tuple(s))[axis] for s in shapes]
    pieces = np.split(grad, np.cumsum(lengths)[:-1], axis=axis)
    return tuple(p.reshape(s) for p, s in zip(pieces, shapes, strict=True))


def column_join(tensors: Any, axis: int) -> Any:
    """The adjoint of `column_join_backward`: the arrays as columns (1-d ones) joined along
    ``axis``, ``np.column_stack`` for ``axis`` 1."""
    shaped = [np.reshape(t, column_shape(np.shape(t))) for t in tensors]
    return np.concatenate(shaped, axis=axis)


def _column_join_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    return _concatenate_rule([column_sequence(types[0]), INT], [NOT_CONSTANT, consts[1]])


def _column_join_backward_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    return concatenate_backward_rule(types[:2], consts[:2])


def _join_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    axis, ndim = consts[1], consts[2]
    if ndim is NOT_CONSTANT:
        return _concatenate_rule([types[0], INT], [NOT_CONSTANT, NOT_CONSTANT])
    sequence, _ = _promoted_sequence(types[0], int(ndim))
    return _concatenate_rule([sequence, INT], [NOT_CONSTANT, axis])


def repeat_backward(grad: Any, shape: Any, repeats: Any, axis: int | None) -> Any:
    """The gradient of ``np.repeat``: each element gets the sum of its copies' gradients."""
    grad = np.asarray(grad)
    result = np.zeros(shape, grad.dtype)
    if axis is None:
        owners = np.repeat(np.arange(result.size), repeats)
        np.add.at(result.reshape(-1), owners, grad)
        return result
    owners = np.repeat(np.arange(result.shape[axis]), repeats)
    np.add.at(np.moveaxis(result, axis, 0), owners, np.moveaxis(grad, axis, 0))
    return result


def tile_backward(grad: Any, shape: Any, reps: Any) -> Any:
    """The gradient of ``np.tile``: the sum of the gradients of every tile."""
    shape = tuple(shape)
    counts = tuple(int(r) for r in np.ravel(reps))
    rank = max(len(counts), len(shape))
    base = (1,) * (rank - len(shape)) + shape
    counts = (1,) * (rank - len(counts)) + counts
    split = [n for pair in zip(counts, base, strict=True) for n in pair]
    tiles = np.reshape(grad, split).sum(axis=tuple(range(0, 2 * rank, 2)))
    return tiles.reshape(shape)


def pad_backward(grad: Any, shape: Any, pad_width: Any, mode: PadMode) -> tuple[Any, Any]:
    """The gradients of ``np.pad`` w.r.t. the array and ``constant_values``: each element gets
    the gradients of every place the padding copied it to (a reflection may copy it several
    times), the constant those of the places it filled."""
    grad = np.asarray(grad)
    origin = np.arange(int(np.prod(shape))).reshape(shape)
    if mode == "constant":
        origin = np.pad(origin, pad_width, mode, constant_values=-1)
    else:
        origin = np.pad(origin, pad_width, mode)
    copied = origin >= 0
    result = np.zeros(int(np.prod(shape)), grad.dtype)
    np.add.at(result, origin[copied], grad[copied])
    return result.reshape(shape), np.asarray(np.sum(grad[~copied]), grad.dtype)


def _pad_backward_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    grad = as_tensor(types[0])
    shape = int_sequence(types[1], consts[1])
    return [TupleType((TensorType(grad.dtype, shape), TensorType(grad.dtype, ())))]


register_op(
    "aten::_join_backward(Tensor grad, Any shapes, int axis) -> Any",
    shape=concatenate_backward_rule,
    derivative=Derivative.FORMULA,
)(join_backward)


register_op(
    "aten::_join(Any tensors, int axis, int ndim) -> Tensor",
    shape=_join_rule,
    derivative=Derivative.FORMULA,
)(join)


register_op(
    "aten::_column_join_backward(Tensor grad, Any shapes, int axis) -> Any",
    shape=_column_join_backward_rule,
    derivative=Derivative.FORMULA,
)(column_join_backward)


register_op(
    "aten::_column_join(Any tensors, int axis) -> Tensor",
    shape=_column_join_rule,
    derivative=Derivative.FORMULA,
)(column_join)


register_op(
    "aten::_repeat_backward(Tensor grad, Any shape, Any repeats, int? axis) -> Tensor",
    shape=shaped_by_operand(1),
    derivative=Derivative.FORMULA,
)(repeat_backward)


register_op(
    "aten::_tile_backward(Tensor grad, Any shape, Any reps) -> Tensor",
    shape=shaped_by_operand(1),
    derivative=Derivative.FORMULA,
)(tile_backward)


register_op(
    "aten::_pad_backward(Tensor grad, Any shape, Any pad_width, str mode) -> Any",
    shape=_pad_backward_rule,
    derivative=Derivative.FORMULA,
)(pad_backward)
