"""Adjoints of the shape operators of `ir.ops.shape_ops` (``transpose``, ``concatenate``,
``stack``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ir.ops.registry import NOT_CONSTANT, Derivative, register_op
from ir.ops.shape_ops import spell_transpose
from ir.ops.shape_rules import (
    as_tensor,
    tensor,
)
from ir.types import (
    ANY,
    INT,
    TensorType,
    TupleType,
    Type,
)


def transpose_backward(grad: Any, axes: Any) -> Any:
    """The gradient of ``np.transpose(x, axes)``: transpose back by the inverse permutation."""
    if axes is None:
        return np.transpose(grad)
    return np.transpose(grad, _inverse_permutation(axes, np.ndim(grad)))


def _inverse_permutation(axes: Sequence[int], ndim: int) -> tuple[int, ...]:
    return tuple(int(i) for i in np.argsort([axis % ndim for axis in axes]))


def _transpose_backward_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    grad = as_tensor(types[0])
    if grad.shape is None:
        return [TensorType(grad.dtype)]
    axes = consts[1]
    if axes is None:
        return tensor(grad.dtype, tuple(reversed(grad.shape)))
    if isinstance(axes, tuple | list):
        inverse = _inverse_permutation(axes, len(grad.shape))
        return tensor(grad.dtype, tuple(grad.shape[i] for i in inverse))
    return tensor(grad.dtype, (None,) * len(grad.shape))


def concatenate_backward(grad: Any, sizes: Any, axis: int | None) -> tuple[Any, ...]:
    """Split the gradient of ``np.concatenate`` back into one piece per input."""
    if axis is None:
        pieces = np.split(np.asarray(grad), np.cumsum([int(np.prod(s)) for s in sizes])[:-1])
        return tuple(p.reshape(s) for p, s in zip(pieces, sizes, strict=True))
    bounds = np.cumsum([s[axis] for s in sizes])[:-1]
    return tuple(np.split(np.asarray(grad), bounds, axis=axis))


def input_shapes(tensors: Any) -> tuple[tuple[int, ...], ...]:
    """The shape of each array of a sequence (what `concatenate_backward` splits by)."""
    return tuple(np.shape(t) for t in tensors)


def _input_shapes_value(types: Sequence[Type]) -> Any:
    seq = types[0]
    if not isinstance(seq, TupleType):
        return NOT_CONSTANT
    shapes = []
    for ty in seq.elems:
        if not isinstance(ty, TensorType) or ty.shape is None or None in ty.shape:
            return NOT_CONSTANT
        shapes.append(ty.shape)
    return tuple(shapes)


def _input_shapes_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    value = _input_shapes_value(types)
    if value is NOT_CONSTANT:
        return [ANY]
    return [TupleType(tuple(TupleType((INT,) * len(s)) for s in value))]


def stack_backward(grad: Any, axis: int) -> tuple[Any, ...]:
    """Split the gradient of ``np.stack`` back into one piece per stacked input."""
    grad = np.asarray(grad)
    return tuple(np.take(grad, i, axis=axis) for i in range(grad.shape[axis]))


register_op(
    "aten::_transpose_backward(Tensor grad, Any axes) -> Tensor",
    shape=_transpose_backward_rule,
    derivative=Derivative.FORMULA,
    typed_call=spell_transpose,  # the transpose it undoes, for axes not given
)(transpose_backward)


def concatenate_backward_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    grad = as_tensor(types[0])
    sizes = consts[1]
    if sizes is NOT_CONSTANT:
        return [ANY]
    return [TupleType(tuple(TensorType(grad.dtype, tuple(s)) for s in sizes))]


def _stack_backward_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    grad = as_tensor(types[0])
    axis = consts[1]
    if grad.shape is None or axis is NOT_CONSTANT or grad.shape[axis] is None:
        return [ANY]
    piece = tuple(d for i, d in enumerate(grad.shape) if i != axis % len(grad.shape))
    return [TupleType((TensorType(grad.dtype, piece),) * int(grad.shape[axis]))]


register_op(
    "aten::_concatenate_backward(Tensor grad, Any sizes, int? axis) -> Any",
    shape=concatenate_backward_rule,
    derivative=Derivative.FORMULA,
)(concatenate_backward)


register_op(
    "aten::_input_shapes(Any tensors) -> Any",
    shape=_input_shapes_rule,
    derivative=Derivative.NONE,
    value_from_types=_input_shapes_value,
)(input_shapes)


register_op(
    "aten::_stack_backward(Tensor grad, int axis) -> Any",
    shape=_stack_backward_rule,
    derivative=Derivative.FORMULA,
)(stack_backward)
