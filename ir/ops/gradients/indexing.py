"""Adjoints of indexing (`ir.ops.indexing`): ``x[i]``, ``x[a:b]``, ``x[array]``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ir.ops.gradients.common import like_tensor_operand, shaped_by_operand
from ir.ops.indexing import _along
from ir.ops.registry import NOT_CONSTANT, OPS, Derivative, register_op
from ir.ops.shape_rules import (
    as_tensor,
    int_sequence,
    tensor,
)
from ir.types import (
    TensorType,
    TupleType,
    Type,
)


def select_backward(grad: Any, shape: Any, axis: int, index: int) -> Any:
    """The gradient of ``x[..., index, ...]``: zeros of x's shape holding ``grad`` there."""
    result = np.zeros(shape, np.result_type(grad))
    result[_along(axis, index)] = grad
    return result


def slice_backward(
    grad: Any, shape: Any, axis: int, start: int | None, stop: int | None, step: int | None
) -> Any:
    """The gradient of ``x[..., start:stop:step, ...]``."""
    result = np.zeros(shape, np.result_type(grad))
    result[_along(axis, slice(start, stop, step))] = grad
    return result


def scatter_slices(grads: Any, shape: Any, keys: Any) -> Any:
    """Zeros of ``shape`` with each of ``grads`` added into its place: a key ``(axis, start,
    stop, step)`` names a slice along ``axis``, ``(axis, index)`` one index. The sum of the
    `slice_backward` and `select_backward` of each, with one array allocated instead of one
    per gradient (Note [Accumulating slices] in `passes.accumulate_slices`)."""
    result = np.zeros(shape, np.result_type(*grads))
    for position, (grad, (axis, *place)) in enumerate(zip(grads, keys, strict=True)):
        item = slice(*place) if len(place) == 3 else place[0]
        key = _along(axis, item)
        if position == 0:
            result[key] = grad  # written, not added to the zeros: a -0.0 stays -0.0
        else:
            result[key] += grad
    return result


def _scatter_slices_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    grads = types[0]
    elems = grads.elems if isinstance(grads, TupleType) else ()
    dtypes = [ty.dtype for ty in elems if isinstance(ty, TensorType) and ty.dtype is not None]
    dtype = np.result_type(*dtypes).name if dtypes and len(dtypes) == len(elems) else None
    return tensor(dtype, int_sequence(types[1], consts[1]))


def previous_row(tape: Any, first: Any, index: int) -> Any:
    """Row ``index - 1`` of ``tape``, ``first`` for index 0: what a loop-carried value was in
    iteration ``index``, read from the tape of the value it is carried from (Note [Shared
    carried tapes] in `passes.share_carried_tapes`)."""
    return first if index == 0 else tape[index - 1]


def index_tuple(x: Any, indices: Any) -> Any:
    """``aten::index`` with its index operands packed in one tuple, so a derivative formula
    (which has no ``*args``) can name them."""
    return x[tuple(slice(None) if item is None else item for item in indices)]


def index_tuple_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    packed = types[1]
    if not isinstance(packed, TupleType):
        return [TensorType(as_tensor(types[0]).dtype)]
    items = consts[1] if consts[1] is not NOT_CONSTANT else (NOT_CONSTANT,) * len(packed.elems)
    rule = OPS["aten::index"].shape
    assert rule is not None
    return list(rule([types[0], *packed.elems], [consts[0], *items]))


def index_backward(grad: Any, shape: Any, indices: Any) -> Any:
    """The gradient of advanced indexing: repeated indices accumulate (``np.add.at``)."""
    result = np.zeros(shape, np.result_type(grad))
    key: Any = tuple(slice(None) if item is None else item for item in indices)
    np.add.at(result, key, grad)
    return result


register_op(
    "aten::_select_backward(Tensor grad, Any shape, int axis, int index) -> Tensor",
    shape=shaped_by_operand(1),
    derivative=Derivative.FORMULA,
)(select_backward)


register_op(
    "aten::_slice_backward(Tensor grad, Any shape, int axis, int? start, int? stop, int? step)"
    " -> Tensor",
    shape=shaped_by_operand(1),
    derivative=Derivative.FORMULA,
)(slice_backward)


# It and _previous_row are created by optimisations of the reverse program (accumulate-slices,
# share-carried-tapes), after differentiation: structural.
register_op(
    "aten::_scatter_slices(Any grads, Any shape, Any keys) -> Tensor",
    shape=_scatter_slices_rule,
    derivative=Derivative.STRUCTURAL,
)(scatter_slices)


register_op(
    "aten::_previous_row(Tensor tape, Tensor first, int index) -> Tensor",
    shape=like_tensor_operand(1),
    derivative=Derivative.STRUCTURAL,
)(previous_row)


register_op(
    "aten::_index_tuple(Tensor self, Any indices) -> Tensor",
    shape=index_tuple_rule,
    derivative=Derivative.FORMULA,
    may_raise=True,
)(index_tuple)


register_op(
    "aten::_index_backward(Tensor grad, Any shape, Any indices) -> Tensor",
    shape=shaped_by_operand(1),
    derivative=Derivative.FORMULA,
)(index_backward)
