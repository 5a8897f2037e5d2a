"""Operators that pick elements by position: diagonals (diag, diagonal, trace), triangles
(tril, triu) and ``np.take``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ir.errors import ShapeError
from ir.ops.promotion import probe_dtype
from ir.ops.registry import NOT_CONSTANT, Derivative, register_op
from ir.ops.shape_ops import sequence_items
from ir.ops.shape_rules import (
    as_array_like,
    as_tensor,
    broadcast_shapes,
    known_int,
    normalize_axis,
    num_elements,
    tensor,
)
from ir.ops.views import DIAG, READ_ONLY
from ir.types import ANY, BOOL, FLOAT, INT, NONE, ListType, TensorType, TupleType, Type


def diagonal_length(rows: int | None, cols: int | None, offset: int | None) -> int | None:
    """How many elements the ``offset`` diagonal of a ``rows`` x ``cols`` matrix holds."""
    if rows is None or cols is None or offset is None:
        return None
    if offset >= 0:
        return max(0, min(rows, cols - offset))
    return max(0, min(rows + offset, cols))


def _diag_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    x = as_tensor(types[0])
    if x.shape is None:
        return tensor(x.dtype, None)
    k = known_int(consts[1])
    if len(x.shape) == 1:
        n = x.shape[0]
        side = None if n is None or k is None else n + abs(k)
        return tensor(x.dtype, (side, side))
    if len(x.shape) == 2:
        return tensor(x.dtype, (diagonal_length(x.shape[0], x.shape[1], k),))
    raise ShapeError("Input must be 1- or 2-d.")


def _diagonal_axes(x: TensorType, consts: Sequence[Any]) -> tuple[int, int] | None:
    """The two axes a diagonal runs over (non-negative), or None when they are not known."""
    assert x.shape is not None
    if len(x.shape) < 2:
        raise ShapeError("diag requires an array of at least two dimensions")
    if NOT_CONSTANT in (consts[2], consts[3]):
        return None
    first = normalize_axis(int(consts[2]), len(x.shape))
    second = normalize_axis(int(consts[3]), len(x.shape))
    if first == second:
        raise ShapeError("axis1 and axis2 cannot be the same")
    return first, second


def _diagonal_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    x = as_tensor(types[0])
    if x.shape is None:
        return tensor(x.dtype, None)
    axes = _diagonal_axes(x, consts)
    if axes is None:
        return tensor(x.dtype, (None,) * (len(x.shape) - 1))
    rest = tuple(d for i, d in enumerate(x.shape) if i not in axes)
    length = diagonal_length(x.shape[axes[0]], x.shape[axes[1]], known_int(consts[1]))
    return tensor(x.dtype, (*rest, length))


def _trace_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    x = as_tensor(types[0])
    dtype = probe_dtype(np.trace, [x], [2])
    if x.shape is None:
        return tensor(dtype, None)
    axes = _diagonal_axes(x, consts)
    if axes is None:
        return tensor(dtype, (None,) * (len(x.shape) - 2))
    return tensor(dtype, tuple(d for i, d in enumerate(x.shape) if i not in axes))


def _triangle_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    """``np.tril``/``np.triu``: a 1-d ``(n,)`` is broadcast to the square ``(n, n)``."""
    x = as_tensor(types[0])
    if x.shape is None:
        return tensor(x.dtype, None)
    if not x.shape:
        raise ShapeError("tri() missing 1 required positional argument: 'N'")
    if len(x.shape) == 1:
        return tensor(x.dtype, (x.shape[0], x.shape[0]))
    return tensor(x.dtype, x.shape)


def _index_shape(ty: Type, const: Any) -> tuple[int | None, ...] | None:
    """The shape of an integer index operand (an int, an int array, a sequence of ints)."""
    if const is not NOT_CONSTANT:
        values = np.asarray(const)
        if values.ndim and values.dtype.kind not in "iub":
            raise ShapeError(
                f"Cannot cast array data from dtype('{values.dtype}') to dtype('int64') "
                "according to the rule 'same_kind'"
            )
        return values.shape
    if ty in (INT, BOOL, FLOAT):
        return ()
    if isinstance(ty, TensorType):
        floating = ty.dtype is not None and np.dtype(ty.dtype).kind not in "iub"
        if floating and ty.shape != ():
            raise ShapeError(
                f"Cannot cast array data from dtype('{ty.dtype}') to dtype('int64') "
                "according to the rule 'same_kind'"
            )
        return ty.shape
    if isinstance(ty, TupleType):
        return (len(ty.elems),)
    if isinstance(ty, ListType):
        return (None,)
    return None


def _take_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    x = as_tensor(types[0])
    indices = _index_shape(types[1], consts[1])
    axis = None if types[2] is NONE else consts[2]
    if x.shape is None or indices is None or axis is NOT_CONSTANT:
        return tensor(x.dtype, None if indices is None or axis is not None else indices)
    if axis is None:
        _check_bounds(consts[1], num_elements(x.shape), 0)
        return tensor(x.dtype, indices)
    axis = normalize_axis(int(axis), len(x.shape))
    _check_bounds(consts[1], x.shape[axis], axis)
    return tensor(x.dtype, (*x.shape[:axis], *indices, *x.shape[axis + 1 :]))


def _check_bounds(indices: Any, size: int | None, axis: int) -> None:
    if indices is NOT_CONSTANT or size is None:
        return
    for index in np.ravel(indices):
        if not -size <= int(index) < size:
            raise ShapeError(
                f"index {int(index)} is out of bounds for axis {axis} with size {size}"
            )


register_op(
    "aten::diag(Tensor(a) self, int k=0) -> Tensor(a)",
    shape=_diag_rule,
    derivative=Derivative.FORMULA,
    view=DIAG,
    spellings={"numpy.diag": "v:self k"},
)(np.diag)
register_op(
    "aten::diagonal(Tensor(a) self, int offset=0, int axis1=0, int axis2=1) -> Tensor(a)",
    shape=_diagonal_rule,
    derivative=Derivative.FORMULA,
    view=READ_ONLY,
    spellings={
        "numpy.diagonal": "a:self offset axis1 axis2",
        "ndarray.diagonal": "offset axis1 axis2",
    },
)(np.diagonal)
register_op(
    "aten::trace(Tensor self, int offset=0, int axis1=0, int axis2=1) -> Tensor",
    shape=_trace_rule,
    derivative=Derivative.FORMULA,
    spellings={
        "numpy.trace": "a:self offset axis1 axis2 !dtype !out",
        "ndarray.trace": "offset axis1 axis2 !dtype !out",
    },
)(np.trace)
register_op(
    "aten::tril(Tensor self, int k=0) -> Tensor",
    shape=_triangle_rule,
    derivative=Derivative.FORMULA,
    spellings={"numpy.tril": "m:self k"},
)(np.tril)
register_op(
    "aten::triu(Tensor self, int k=0) -> Tensor",
    shape=_triangle_rule,
    derivative=Derivative.FORMULA,
    spellings={"numpy.triu": "m:self k"},
)(np.triu)
register_op(
    "aten::take(Tensor self, Any indices, int? axis=None) -> Tensor",
    shape=_take_rule,
    derivative=Derivative.FORMULA,
    may_raise=True,
    spellings={
        "numpy.take": "a:self indices axis !out !mode",
        "ndarray.take": "indices axis !out !mode",
    },
)(np.take)


# ---- np.select ----------------------------------------------------------------------------------

# The dtype ``np.asarray`` gives a Python number (np.select converts every choice so).
_PYTHON_NUMBER_DTYPES: dict[Type, str] = {BOOL: "bool", INT: "int64", FLOAT: "float64"}


def _array_dtype(ty: Type) -> str | None:
    if isinstance(ty, TensorType):
        return ty.dtype
    return _PYTHON_NUMBER_DTYPES.get(ty)


def _select_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    conditions, _ = sequence_items(types[0])
    choices = _sequence_or_numbers(types[1])
    dtypes = [_array_dtype(t) for t in [*choices, types[2]]]
    dtype = None if None in dtypes else np.result_type(*dtypes).name
    shapes = [c.shape for c in conditions]
    shapes += [as_array_like(t, 1).shape for t in [*choices, types[2]]]
    return tensor(dtype, broadcast_shapes(*shapes))


def _sequence_or_numbers(ty: Type) -> list[Type]:
    """The item types of the choices: arrays or Python numbers."""
    if isinstance(ty, TupleType):
        return list(ty.elems)
    if isinstance(ty, ListType):
        return [ty.elem]
    if ty is ANY:
        return [ANY]
    raise ShapeError(f"expected a sequence of choices, got a value of type {ty}")


def select(condlist: Any, choicelist: Any, default: Any) -> Any:
    """``np.select`` of the sequences the graph holds (tuples or lists)."""
    return np.select(list(condlist), list(choicelist), default)


def select_index(condlist: Any, out: Any) -> Any:
    """For each element of ``np.select``'s result ``out``, the index of the choice it took: that
    of the first condition true there, or ``len(condlist)`` for the default."""
    count = len(condlist)
    taken = np.select(list(condlist), list(range(count)), count)
    return np.broadcast_to(taken, np.shape(out))


def _select_index_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    return tensor("int64", as_tensor(types[1], 1).shape)


register_op(
    "aten::select_by_conditions(Any condlist, Any choicelist, Any default=0) -> Tensor",
    shape=_select_rule,
    derivative=Derivative.FORMULA,
    spellings={"numpy.select": "condlist choicelist default"},
)(select)
register_op(
    "aten::_select_index(Any condlist, Tensor out) -> Tensor",
    shape=_select_index_rule,
    derivative=Derivative.NONE,
)(select_index)
