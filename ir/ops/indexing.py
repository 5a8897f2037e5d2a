"""Indexing reads: ``x[...]`` lowered to a chain of select, slice, expand_dims and index.

Note [Lowering subscripts]
An index expression becomes one operator per item, so every part is an ordinary typed IR value
and the IR text round-trips with no slice or Ellipsis objects:

    aten::select(Tensor self, int axis, int index) -> Tensor               x[..., i, ...]
    aten::slice(Tensor self, int axis, int? start, int? stop, int? step) -> Tensor
    aten::expand_dims(Tensor self, Any axis) -> Tensor                     x[..., None, ...]
    aten::index(Tensor self, Any... indices) -> Tensor                     advanced indexing

Basic indexing (ints, slices, None, one Ellipsis) is lowered left to right with a running output
axis ``a``, starting at 0: an int is ``select(axis=a)`` (``a`` stays), a slice is
``slice(axis=a)`` and ``a += 1``, None is ``expand_dims(axis=a)`` and ``a += 1``. Items after
the Ellipsis use negative axes counted from the end, lowered right to left the same way (so
``x[1:3, ::2, None, ..., 0]`` is slice(0), slice(1), expand_dims(2), select(-1)). ``select`` and
``slice`` return NumPy views, as ``x[i]`` and ``x[a:b]`` do.

When any item is an int or bool array, the expression is advanced indexing and NumPy's
placement rules for the broadcast index dims depend on all items together, so it is one
``aten::index``: first every partial slice ``a:b:c`` becomes ``slice`` on its axis (which keeps
axis positions), then ``index(x, item, …)`` gets, per position, an array, an int, or None for
a full slice ``:`` (TorchScript's convention for ``aten::index``). The kernel runs
``x[tuple(item if item is not None else slice(None) for item in items)]``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ir.errors import ShapeError
from ir.graph import Node
from ir.ops.call_spelling import Bind, Call, constant, is_array
from ir.ops.registry import NOT_CONSTANT, Derivative, register_op
from ir.ops.shape_rules import (
    Shape,
    as_tensor,
    broadcast_shapes,
    format_shape,
    known_int,
    normalize_axis,
    tensor,
)
from ir.ops.views import SELECT, SLICE, ViewRule, index_back, not_one_element
from ir.types import INT, NONE, TensorType, Type

_FULL = slice(None)


def _along(axis: int, item: Any) -> tuple[Any, ...]:
    """An index tuple applying ``item`` at ``axis`` (negative: counted from the end)."""
    if axis >= 0:
        return (_FULL,) * axis + (item,)
    return (Ellipsis, item) + (_FULL,) * (-axis - 1)


def select(x: Any, axis: int, index: int) -> Any:
    return x[_along(axis, index)]


def slice_axis(x: Any, axis: int, start: int | None, stop: int | None, step: int | None) -> Any:
    return x[_along(axis, slice(start, stop, step))]


def index(x: Any, *indices: Any) -> Any:
    return x[tuple(_FULL if item is None else item for item in indices)]


def _select_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    x = as_tensor(types[0])
    if x.shape is None or consts[1] is NOT_CONSTANT:
        return tensor(x.dtype, None if x.shape is None else (None,) * max(len(x.shape) - 1, 0))
    if not x.shape:
        raise ShapeError("too many indices for array: array is 0-dimensional, but 1 were indexed")
    axis = normalize_axis(int(consts[1]), len(x.shape))
    size, position = x.shape[axis], known_int(consts[2])
    if size is not None and position is not None and not -size <= position < size:
        raise ShapeError(f"index {position} is out of bounds for axis {axis} with size {size}")
    return tensor(x.dtype, x.shape[:axis] + x.shape[axis + 1 :])


def _slice_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    x = as_tensor(types[0])
    if x.shape is None or consts[1] is NOT_CONSTANT:
        return tensor(x.dtype, x.shape and (None,) * len(x.shape))
    if not x.shape:
        raise ShapeError("too many indices for array: array is 0-dimensional, but 1 were indexed")
    axis = normalize_axis(int(consts[1]), len(x.shape))
    bounds = [None if t is NONE else c for t, c in zip(types[2:], consts[2:], strict=True)]
    size = x.shape[axis]
    if bounds[2] == 0:
        raise ShapeError("slice step cannot be zero")
    length = None
    if size is not None and NOT_CONSTANT not in bounds:
        length = len(range(*slice(*bounds).indices(size)))
    return tensor(x.dtype, (*x.shape[:axis], length, *x.shape[axis + 1 :]))


def _index_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    x = as_tensor(types[0])
    if x.shape is None:
        return tensor(x.dtype, None)
    kept: list[int | str | None] = []  # dims of the result; "advanced" marks the index dims
    advanced: list[Shape] = []
    positions: list[int] = []
    consumed = 0
    for position, (ty, const) in enumerate(zip(types[1:], consts[1:], strict=True)):
        if ty is NONE:
            kept.append(x.shape[consumed] if consumed < len(x.shape) else None)
            consumed += 1
            continue
        item = _advanced_item(ty, const, x.shape[consumed:])
        if item is None:
            return tensor(x.dtype, None)
        shape, width = item
        advanced.append(shape)
        positions.append(position)
        kept.append("advanced")
        consumed += width
    if consumed > len(x.shape):
        raise ShapeError(
            f"too many indices for array: array is {len(x.shape)}-dimensional, "
            f"but {consumed} were indexed"
        )
    index_dims = _broadcast_index_shapes(advanced)
    if index_dims is None:
        return tensor(x.dtype, None)
    dims = [d for d in kept if d != "advanced"] + list(x.shape[consumed:])
    adjacent = positions == list(range(positions[0], positions[-1] + 1)) if positions else True
    at = kept.index("advanced") if positions and adjacent else 0
    result = dims[:at] + list(index_dims) + dims[at:]
    return tensor(x.dtype, tuple(d for d in result if not isinstance(d, str)))


def _advanced_item(ty: Type, const: Any, rest: Shape) -> tuple[Shape, int] | None:
    """The broadcast shape an index item contributes and how many dims it consumes; None when
    its type does not tell."""
    if ty is INT:
        return (), 1
    if not isinstance(ty, TensorType) or ty.dtype is None or ty.shape is None:
        return None
    if ty.dtype != "bool":
        if np.dtype(ty.dtype).kind not in "iu":
            raise ShapeError(
                "only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and "
                "integer or boolean arrays are valid indices"
            )
        return ty.shape, 1
    for axis, (have, want) in enumerate(zip(rest, ty.shape, strict=False)):
        if have is not None and want is not None and have != want:
            raise ShapeError(
                f"boolean index did not match indexed array along axis {axis}; size of axis "
                f"is {have} but size of corresponding boolean axis is {want}"
            )
    count = None if const is NOT_CONSTANT else int(np.count_nonzero(const))
    return (count,), len(ty.shape)


def _broadcast_index_shapes(shapes: list[Shape]) -> Shape | None:
    try:
        return broadcast_shapes(*shapes)
    except ShapeError:
        text = " ".join(format_shape(s) for s in shapes)
        raise ShapeError(
            f"shape mismatch: indexing arrays could not be broadcast together with shapes {text}"
        ) from None


def _basic(node: Any) -> bool:
    """``aten::index`` with int and None items only is basic indexing in NumPy, a view (the
    frontend emits it for ``x[n]`` while n's type is not yet known to be an int), unless it
    reads one element."""
    return all(item.ty in (INT, NONE) for item in node.inputs[1:]) and not_one_element(node)


def spell_subscript(node: Node, args: Sequence[str], bind: Bind) -> Call | None:
    """``aten::select(x, axis, i)`` as ``x[:, i]`` and ``aten::slice(x, axis, a, b, c)`` as
    ``x[:, a:b:c]``: the index tuple the kernels build, for a constant axis counted from the
    front and int (or None) operands."""
    axis = constant(node.inputs[1])
    if type(axis) is not int or axis < 0 or not is_array(node.inputs[0].ty):
        return None
    if not all(v.ty in (INT, NONE) for v in node.inputs[2:]):
        return None
    if node.kind == "aten::select":
        item = args[2]
    else:
        start, stop, step = ("" if a == "None" else a for a in args[2:5])
        item = f"{start}:{stop}:{step}" if step else f"{start}:{stop}"
    return Call(f"{args[0]}[{':, ' * axis}{item}]")


register_op(
    "aten::select(Tensor(a) self, int axis, int index) -> Tensor(a)",
    shape=_select_rule,
    derivative=Derivative.FORMULA,
    view=SELECT,
    may_raise=True,
    typed_call=spell_subscript,
)(select)
register_op(
    "aten::slice(Tensor(a) self, int axis, int? start, int? stop, int? step) -> Tensor(a)",
    shape=_slice_rule,
    derivative=Derivative.FORMULA,
    view=SLICE,
    typed_call=spell_subscript,
)(slice_axis)
register_op(
    "aten::index(Tensor(a) self, Any... indices) -> Tensor(a)",
    shape=_index_rule,
    derivative=Derivative.FORMULA,
    view=ViewRule(index_back, when=_basic),
    may_raise=True,
)(index)
