"""Operators that rearrange elements: moving axes, promoting ranks, stacking and splitting,
repeating, padding, flipping and rolling.

The split family (``np.split``, ``array_split``, ``hsplit``, ``vsplit``, ``dsplit``) returns
several arrays. Their schemas say ``-> Tensor[]`` and their kernels return NumPy's own list,
so the frontend unpacks, subscripts and iterates the result like any sequence and a function
that returns it returns a list, as the plain one does; their shape rules type it
``(Tensor, Tensor, ...)`` once the number of pieces is known at compile time (as
``aten::shape`` is typed ``(int, int)``), and ``Tensor[]`` otherwise.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any, Literal, TypeVar

import numpy as np

from ir.errors import ShapeError
from ir.ops.registry import NOT_CONSTANT, Derivative, register_op
from ir.ops.shape_ops import _concatenate_rule, axis_argument, sequence_items
from ir.ops.shape_rules import (
    as_array_like,
    as_tensor,
    fixed,
    int_sequence,
    known_int,
    normalize_axis,
    num_elements,
    tensor,
)
from ir.ops.views import MOVED, RESHAPED, ROLLED, ROTATED, SELF_INVERSE, pieces, split_axis
from ir.types import INT, NONE, ListType, TensorType, TupleType, Type

D = TypeVar("D", int, int | None)  # a dim: known, or possibly unknown

# ---- moving axes ---------------------------------------------------------------------------------


def _unknown_dims(x: TensorType) -> list[Type]:
    """The result of a permutation whose order is not known: same rank, dims unknown."""
    return tensor(x.dtype, None if x.shape is None else (None,) * len(x.shape))


def moved_order(ndim: int, source: Any, destination: Any) -> list[int]:
    """The axis order ``np.moveaxis(x, source, destination)`` gives an ``ndim``-d array."""
    sources = source if isinstance(source, tuple | list) else (source,)
    destinations = destination if isinstance(destination, tuple | list) else (destination,)
    src = [normalize_axis(int(a), ndim) for a in sources]
    dst = [normalize_axis(int(a), ndim) for a in destinations]
    if len(set(src)) != len(src):
        raise ShapeError("repeated axis in `source` argument")
    if len(set(dst)) != len(dst):
        raise ShapeError("repeated axis in `destination` argument")
    if len(src) != len(dst):
        raise ShapeError(
            "`source` and `destination` arguments must have the same number of elements"
        )
    order = [axis for axis in range(ndim) if axis not in src]
    for to, axis in sorted(zip(dst, src, strict=True)):
        order.insert(to, axis)
    return order


def rollaxis_destination(ndim: int, axis: int, start: int) -> int:
    """Where ``np.rollaxis(x, axis, start)`` puts ``axis`` of an ``ndim``-d array: it is
    ``np.moveaxis(x, axis, rollaxis_destination(...))``."""
    axis = normalize_axis(axis, ndim)
    if not -ndim <= start < ndim + 1:
        raise ShapeError(
            f"'start' arg requires {-ndim} <= start < {ndim + 1}, but {start} was passed in"
        )
    start = start + ndim if start < 0 else start
    return start - 1 if axis < start else start


def _permuted(x: TensorType, order: Sequence[int]) -> list[Type]:
    assert x.shape is not None
    return tensor(x.dtype, tuple(x.shape[a] for a in order))


def _moveaxis_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    x = as_tensor(types[0])
    if x.shape is None or NOT_CONSTANT in (consts[1], consts[2]):
        return _unknown_dims(x)
    return _permuted(x, moved_order(len(x.shape), consts[1], consts[2]))


def _swapaxes_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    x = as_tensor(types[0])
    if x.shape is None or NOT_CONSTANT in (consts[1], consts[2]):
        return _unknown_dims(x)
    order = list(range(len(x.shape)))
    first = normalize_axis(int(consts[1]), len(x.shape))
    second = normalize_axis(int(consts[2]), len(x.shape))
    order[first], order[second] = second, first
    return _permuted(x, order)


def _rollaxis_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    x = as_tensor(types[0])
    if x.shape is None or NOT_CONSTANT in (consts[1], consts[2]):
        return _unknown_dims(x)
    ndim = len(x.shape)
    destination = rollaxis_destination(ndim, int(consts[1]), int(consts[2]))
    return _permuted(x, moved_order(ndim, int(consts[1]), destination))


def moveaxis(x: Any, source: Any, destination: Any) -> Any:
    return np.moveaxis(x, axis_argument(source), axis_argument(destination))


# ---- ranks: atleast_1d/2d/3d ---------------------------------------------------------------------


def atleast_shape(shape: tuple[D, ...], ndim: int) -> tuple[D | int, ...]:
    """The shape ``np.atleast_{ndim}d`` gives an array of ``shape``: a 1-d ``(n,)`` becomes a
    row ``(1, n)`` at 2-d and ``(1, n, 1)`` at 3-d; a 2-d one gets a trailing axis at 3-d."""
    ones: tuple[int, ...] = (1,)
    if len(shape) >= ndim:
        return shape
    if ndim == 3 and len(shape) == 1:
        return ones + shape + ones
    if ndim == 3 and len(shape) == 2:
        return shape + ones
    return ones * (ndim - len(shape)) + shape


def _atleast_rule(ndim: int) -> Any:
    def rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
        x = as_tensor(types[0])
        if x.shape is None:
            return tensor(x.dtype, None)
        return tensor(x.dtype, atleast_shape(x.shape, ndim))

    return rule


# ---- stacking and splitting ----------------------------------------------------------------------


def _promoted_sequence(ty: Type, ndim: int) -> tuple[Type, TensorType]:
    """A sequence of arrays as it is once each is made at least ``ndim``-d, and its first."""
    items, complete = sequence_items(ty)
    if not items:
        raise ShapeError("need at least one array to concatenate")
    promoted = [
        TensorType(t.dtype, None if t.shape is None else atleast_shape(t.shape, ndim))
        for t in items
    ]
    sequence = TupleType(tuple(promoted)) if complete else ListType(promoted[0])
    return sequence, promoted[0]


def hstack_axis(ndim: int) -> int:
    """``np.hstack`` joins along axis 1, or 0 when the arrays are 1-d."""
    return 0 if ndim == 1 else 1


def _hstack_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    sequence, first = _promoted_sequence(types[0], 1)
    if first.shape is None:
        return _concatenate_rule([sequence, INT], [NOT_CONSTANT, NOT_CONSTANT])
    return _concatenate_rule([sequence, INT], [NOT_CONSTANT, hstack_axis(len(first.shape))])


def _vstack_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    sequence, _ = _promoted_sequence(types[0], 2)
    return _concatenate_rule([sequence, INT], [NOT_CONSTANT, 0])


def column_shape(shape: tuple[D, ...]) -> tuple[D | int, ...]:
    """The shape ``np.column_stack`` gives an array of ``shape`` before joining along axis 1: a
    1-d ``(n,)`` becomes a column ``(n, 1)``, a 0-d one ``(1, 1)``; others stay as they are."""
    if len(shape) == 0:
        return (1, 1)
    if len(shape) == 1:
        return (shape[0], 1)
    return shape


def column_sequence(ty: Type) -> Type:
    """A sequence of arrays as ``np.column_stack`` shapes them before joining."""
    items, complete = sequence_items(ty)
    if not items:
        raise ShapeError("need at least one array to concatenate")
    columns = [
        TensorType(t.dtype, None if t.shape is None else column_shape(t.shape)) for t in items
    ]
    return TupleType(tuple(columns)) if complete else ListType(columns[0])


def _column_stack_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    return _concatenate_rule([column_sequence(types[0]), INT], [NOT_CONSTANT, 1])


# ``np.r_[a, b]`` and ``np.c_[a, b]`` of arrays (`frontend.subscripts` turns the subscript into
# these operators): r_ joins them at least 1-d along the first axis, c_ joins them with 1-d ones
# as columns along the last.
def r_concatenate(tensors: Any) -> Any:
    return np.r_[tuple(tensors)]


def c_concatenate(tensors: Any) -> Any:
    return np.c_[tuple(tensors)]


def _r_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    sequence, _ = _promoted_sequence(types[0], 1)
    return _concatenate_rule([sequence, INT], [NOT_CONSTANT, 0])


def _c_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    return _concatenate_rule([column_sequence(types[0]), INT], [NOT_CONSTANT, -1])


def _append_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    """``np.append``: both operands flattened and joined when ``axis`` is None, otherwise joined
    along ``axis`` as ``np.concatenate`` joins them."""
    joined = TupleType((as_array_like(types[0], 0), as_array_like(types[1], 1)))
    return _concatenate_rule([joined, types[2]], [NOT_CONSTANT, consts[2]])


def append_cut(arr: Any, axis: int | None) -> int:
    """Where ``np.append(arr, values, axis)`` starts ``values``: along the flattened result, or
    along ``axis``."""
    return int(np.size(arr)) if axis is None else int(np.shape(arr)[axis])


def append_axis(axis: int | None) -> int:
    """The axis of ``np.append``'s result that joins its operands: 0 when they were flattened."""
    return 0 if axis is None else axis


def piece_lengths(size: int, sections: Any, *, equal: bool) -> list[int]:
    """The lengths of the pieces ``np.split`` (``equal``) or ``np.array_split`` cuts an axis
    of ``size`` into, for a number of sections or a sequence of cut indices."""
    if np.ndim(sections):
        bounds = [0, *(int(i) for i in np.ravel(sections)), size]
        return [len(range(size)[a:b]) for a, b in itertools.pairwise(bounds)]
    count = int(sections)
    if count <= 0:
        raise ShapeError("number sections must be larger than 0.")
    if equal and size % count:
        raise ShapeError("array split does not result in an equal division")
    each, extra = divmod(size, count)
    return [each + 1] * extra + [each] * (count - extra)


def _split_types(
    x: TensorType, sections_ty: Type, sections: Any, axis: Any, *, equal: bool
) -> list[Type]:
    if x.shape is None or axis is NOT_CONSTANT:
        return [ListType(TensorType(x.dtype, None if x.shape is None else (None,) * len(x.shape)))]
    if not x.shape:
        raise ShapeError("axis 0 is out of bounds for array of dimension 0")
    axis = normalize_axis(int(axis), len(x.shape))

    def piece(length: int | None) -> TensorType:
        assert x.shape is not None
        return TensorType(x.dtype, (*x.shape[:axis], length, *x.shape[axis + 1 :]))

    size = x.shape[axis]
    if sections is NOT_CONSTANT:
        # Cut indices whose values are unknown still fix the number of pieces.
        cuts = None
        if isinstance(sections_ty, TupleType):
            cuts = len(sections_ty.elems)
        elif isinstance(sections_ty, TensorType) and sections_ty.rank == 1:
            assert sections_ty.shape is not None
            cuts = sections_ty.shape[0]
        if cuts is None:
            return [ListType(piece(None))]
        return [TupleType((piece(None),) * (cuts + 1))]
    if size is None:
        count = np.size(sections) + 1 if np.ndim(sections) else int(sections)
        if count <= 0:
            raise ShapeError("number sections must be larger than 0.")
        return [TupleType((piece(None),) * count)]
    lengths = piece_lengths(size, sections, equal=equal)
    return [TupleType(tuple(piece(n) for n in lengths))]


def _split_rule(*, equal: bool) -> Any:
    def rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
        x = as_tensor(types[0])
        return _split_types(x, types[1], consts[1], consts[2], equal=equal)

    return rule


def _directional_split_rule(name: str, min_ndim: int, axis: int | None) -> Any:
    """Rule of ``np.hsplit`` (``axis`` None: 1, or 0 for 1-d arrays), ``vsplit``, ``dsplit``."""

    def rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
        x = as_tensor(types[0])
        if x.shape is not None and len(x.shape) < min_ndim:
            raise ShapeError(f"{name} only works on arrays of {min_ndim} or more dimensions")
        along = NOT_CONSTANT if x.shape is None else axis
        if x.shape is not None and axis is None:
            along = hstack_axis(len(x.shape))
        return _split_types(x, types[1], consts[1], along, equal=True)

    return rule


def split(x: Any, indices_or_sections: Any, axis: int) -> list[Any]:
    return np.split(x, indices_or_sections, axis)


def array_split(x: Any, indices_or_sections: Any, axis: int) -> list[Any]:
    return np.array_split(x, indices_or_sections, axis)


def hsplit(x: Any, indices_or_sections: Any) -> list[Any]:
    return np.hsplit(x, indices_or_sections)


def vsplit(x: Any, indices_or_sections: Any) -> list[Any]:
    return np.vsplit(x, indices_or_sections)


def dsplit(x: Any, indices_or_sections: Any) -> list[Any]:
    return np.dsplit(x, indices_or_sections)


# ---- repeating and padding -----------------------------------------------------------------------


def _repeat_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    x = as_tensor(types[0])
    axis = None if types[2] is NONE else consts[2]
    if x.shape is None or axis is NOT_CONSTANT:
        return tensor(x.dtype, (None,) if axis is None else None)
    if axis is None:
        size = num_elements(x.shape)
        return tensor(x.dtype, (_repeated_length(size, consts[1]),))
    axis = normalize_axis(int(axis), len(x.shape))
    length = _repeated_length(x.shape[axis], consts[1])
    return tensor(x.dtype, (*x.shape[:axis], length, *x.shape[axis + 1 :]))


def _repeated_length(size: int | None, repeats: Any) -> int | None:
    if repeats is NOT_CONSTANT:
        return None
    counts = [int(r) for r in np.ravel(repeats)]
    if any(r < 0 for r in counts):
        raise ShapeError("negative dimensions are not allowed")
    if len(counts) == 1:
        return None if size is None else size * counts[0]
    if size is not None and len(counts) != size:
        raise ShapeError(
            f"operands could not be broadcast together with shape ({size},) ({len(counts)},)"
        )
    return sum(counts)


def _tile_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    x = as_tensor(types[0])
    reps = int_sequence(types[1], consts[1])
    if x.shape is None or reps is None:
        return tensor(x.dtype, None)
    if any(r is not None and r < 0 for r in reps):
        raise ShapeError("negative dimensions are not allowed")
    rank = max(len(reps), len(x.shape))
    shape = (1,) * (rank - len(x.shape)) + x.shape
    padded = (1,) * (rank - len(reps)) + reps
    return tensor(
        x.dtype,
        tuple(
            None if d is None or r is None else d * r for d, r in zip(shape, padded, strict=True)
        ),
    )


# np.pad modes whose result copies elements of the input (or the constant): their gradient
# gathers the output's gradient back onto the elements it copied. The statistic modes (mean,
# median, ...) and linear_ramp compute new values and are refused.
PadMode = Literal["constant", "edge", "reflect", "symmetric", "wrap"]
PAD_MODES: tuple[PadMode, ...] = ("constant", "edge", "reflect", "symmetric", "wrap")


def pad_pairs(pad_width: Any, ndim: int) -> np.ndarray:
    """``pad_width`` as an ``(ndim, 2)`` array of (before, after) counts, as np.pad reads it."""
    widths = np.asarray(pad_width)
    if widths.dtype.kind not in "iu":
        raise ShapeError("`pad_width` must be of integral type.")
    try:
        pairs = np.broadcast_to(widths, (ndim, 2))
    except ValueError:
        raise ShapeError(
            f"operands could not be broadcast together with remapped shapes "
            f"[original->remapped]: {widths.shape} and requested shape ({ndim},2)"
        ) from None
    if (pairs < 0).any():
        raise ShapeError("index can't contain negative values")
    return pairs


def _pad_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    x = as_tensor(types[0])
    mode = consts[2]
    if mode is not NOT_CONSTANT and mode not in PAD_MODES:
        raise ShapeError(
            f"np.pad mode {mode!r} is not supported: use one of {', '.join(PAD_MODES)}"
        )
    value = types[3]
    if isinstance(value, TensorType) and value.shape not in (None, ()):
        raise ShapeError("constant_values must be a number or a 0-d array here")
    if not isinstance(value, TupleType):  # per-axis constants are a constant tuple
        as_array_like(value, 3)
    if x.shape is None or consts[1] is NOT_CONSTANT:
        return tensor(x.dtype, None if x.shape is None else (None,) * len(x.shape))
    pairs = pad_pairs(consts[1], len(x.shape))
    dims: list[int | None] = []
    for axis, (d, (before, after)) in enumerate(zip(x.shape, pairs, strict=True)):
        if d == 0 and mode not in ("constant", NOT_CONSTANT) and before + after:
            raise ShapeError(
                f"can't extend empty axis {axis} using modes other than 'constant' or 'empty'"
            )
        dims.append(None if d is None else d + int(before) + int(after))
    return tensor(x.dtype, tuple(dims))


def pad(x: Any, pad_width: Any, mode: PadMode, constant_values: Any) -> Any:
    if mode == "constant":
        return np.pad(x, pad_width, mode, constant_values=constant_values)
    return np.pad(x, pad_width, mode)


# ---- flipping, rotating, rolling -----------------------------------------------------------------


def _flip_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    x = as_tensor(types[0])
    axis = None if types[1] is NONE else consts[1]
    if x.shape is not None and axis not in (None, NOT_CONSTANT):
        for a in axis if isinstance(axis, tuple | list) else (axis,):
            normalize_axis(int(a), len(x.shape))
    return tensor(x.dtype, x.shape)


def _at_least_rule(ndim: int) -> Any:
    """Rule of an operator that keeps its operand's shape and needs at least ``ndim`` dims."""

    def rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
        x = as_tensor(types[0])
        if x.shape is not None and len(x.shape) < ndim:
            raise ShapeError(f"Input must be >= {ndim}-d.")
        return tensor(x.dtype, x.shape)

    return rule


def _rot90_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    x = as_tensor(types[0])
    axes = consts[2]
    if x.shape is None or axes is NOT_CONSTANT:
        return _unknown_dims(x)
    ndim = len(x.shape)
    if len(axes) != 2:
        raise ShapeError("len(axes) must be 2.")
    first, second = int(axes[0]), int(axes[1])
    if first == second or abs(first - second) == ndim:
        raise ShapeError("Axes must be different.")
    if not (-ndim <= first < ndim and -ndim <= second < ndim):
        raise ShapeError(f"Axes={tuple(axes)} out of range for array of ndim={ndim}.")
    k = known_int(consts[1])
    if k is None:
        swapped = tuple(
            None if i in (first % ndim, second % ndim) else d for i, d in enumerate(x.shape)
        )
        return tensor(x.dtype, swapped)
    if k % 2 == 0:
        return tensor(x.dtype, x.shape)
    order = list(range(ndim))
    order[first % ndim], order[second % ndim] = order[second % ndim], order[first % ndim]
    return _permuted(x, order)


def rot90(x: Any, k: int, axes: Any) -> Any:
    return np.rot90(x, k, tuple(axes))


def _roll_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    x = as_tensor(types[0])
    axis = None if types[2] is NONE else consts[2]
    if x.shape is not None and axis not in (None, NOT_CONSTANT):
        for a in axis if isinstance(axis, tuple | list) else (axis,):
            normalize_axis(int(a), len(x.shape))
    return tensor(x.dtype, x.shape)


def roll(x: Any, shift: Any, axis: Any) -> Any:
    return np.roll(x, axis_argument(shift), axis_argument(axis))


def flip(x: Any, axis: Any) -> Any:
    return np.flip(x, axis_argument(axis))


register_op(
    "aten::moveaxis(Tensor(a) self, Any source, Any destination) -> Tensor(a)",
    shape=_moveaxis_rule,
    derivative=Derivative.FORMULA,
    view=MOVED,
    spellings={"numpy.moveaxis": "a:self source destination"},
)(moveaxis)
register_op(
    "aten::swapaxes(Tensor(a) self, int axis1, int axis2) -> Tensor(a)",
    shape=_swapaxes_rule,
    derivative=Derivative.FORMULA,
    view=SELF_INVERSE,
    spellings={"numpy.swapaxes": "a:self axis1 axis2", "ndarray.swapaxes": "axis1 axis2"},
)(np.swapaxes)
register_op(
    "aten::rollaxis(Tensor(a) self, int axis, int start=0) -> Tensor(a)",
    shape=_rollaxis_rule,
    derivative=Derivative.FORMULA,
    view=ROLLED,
    spellings={"numpy.rollaxis": "a:self axis start"},
)(np.rollaxis)
register_op(
    "aten::atleast_1d(Tensor(a) self) -> Tensor(a)",
    shape=_atleast_rule(1),
    derivative=Derivative.FORMULA,
    view=RESHAPED,
    spellings={"numpy.atleast_1d": "arys:self /"},
)(np.atleast_1d)
register_op(
    "aten::atleast_2d(Tensor(a) self) -> Tensor(a)",
    shape=_atleast_rule(2),
    derivative=Derivative.FORMULA,
    view=RESHAPED,
    spellings={"numpy.atleast_2d": "arys:self /"},
)(np.atleast_2d)
register_op(
    "aten::atleast_3d(Tensor(a) self) -> Tensor(a)",
    shape=_atleast_rule(3),
    derivative=Derivative.FORMULA,
    view=RESHAPED,
    spellings={"numpy.atleast_3d": "arys:self /"},
)(np.atleast_3d)
register_op(
    "aten::hstack(Any tensors) -> Tensor",
    shape=_hstack_rule,
    derivative=Derivative.FORMULA,
    spellings={"numpy.hstack": "tup:tensors * !dtype !casting"},
)(np.hstack)
register_op(
    "aten::vstack(Any tensors) -> Tensor",
    shape=_vstack_rule,
    derivative=Derivative.FORMULA,
    spellings={
        "numpy.vstack": "tup:tensors * !dtype !casting",
        "numpy.row_stack": "tup:tensors * !dtype !casting",
    },
)(np.vstack)
register_op(
    "aten::r_concatenate(Any tensors) -> Tensor", shape=_r_rule, derivative=Derivative.FORMULA
)(r_concatenate)
register_op(
    "aten::c_concatenate(Any tensors) -> Tensor", shape=_c_rule, derivative=Derivative.FORMULA
)(c_concatenate)
register_op(
    "aten::append(Any arr, Any values, int? axis=None) -> Tensor",
    shape=_append_rule,
    derivative=Derivative.FORMULA,
    spellings={"numpy.append": "arr values axis"},
)(np.append)
register_op(
    "aten::column_stack(Any tensors) -> Tensor",
    shape=_column_stack_rule,
    derivative=Derivative.FORMULA,
    spellings={"numpy.column_stack": "tup:tensors"},
)(np.column_stack)
register_op(
    "aten::split(Tensor(a) self, Any indices_or_sections, int axis=0) -> Tensor(a)[]",
    shape=_split_rule(equal=True),
    derivative=Derivative.FORMULA,
    view=pieces(split_axis(2)),
    may_raise=True,
    spellings={"numpy.split": "ary:self indices_or_sections axis"},
)(split)
register_op(
    "aten::array_split(Tensor(a) self, Any indices_or_sections, int axis=0) -> Tensor(a)[]",
    shape=_split_rule(equal=False),
    derivative=Derivative.FORMULA,
    view=pieces(split_axis(2)),
    spellings={"numpy.array_split": "ary:self indices_or_sections axis"},
)(array_split)
register_op(
    "aten::hsplit(Tensor(a) self, Any indices_or_sections) -> Tensor(a)[]",
    shape=_directional_split_rule("hsplit", 1, None),
    derivative=Derivative.FORMULA,
    view=pieces(split_axis(None)),
    may_raise=True,
    spellings={"numpy.hsplit": "ary:self indices_or_sections"},
)(hsplit)
register_op(
    "aten::vsplit(Tensor(a) self, Any indices_or_sections) -> Tensor(a)[]",
    shape=_directional_split_rule("vsplit", 2, 0),
    derivative=Derivative.FORMULA,
    view=pieces(split_axis(None, 0)),
    may_raise=True,
    spellings={"numpy.vsplit": "ary:self indices_or_sections"},
)(vsplit)
register_op(
    "aten::dsplit(Tensor(a) self, Any indices_or_sections) -> Tensor(a)[]",
    shape=_directional_split_rule("dsplit", 3, 2),
    derivative=Derivative.FORMULA,
    view=pieces(split_axis(None, 2)),
    may_raise=True,
    spellings={"numpy.dsplit": "ary:self indices_or_sections"},
)(dsplit)
register_op(
    "aten::repeat(Tensor self, Any repeats, int? axis=None) -> Tensor",
    shape=_repeat_rule,
    derivative=Derivative.FORMULA,
    spellings={"numpy.repeat": "a:self repeats axis", "ndarray.repeat": "repeats axis"},
)(np.repeat)
register_op(
    "aten::tile(Tensor self, Any reps) -> Tensor",
    shape=_tile_rule,
    derivative=Derivative.FORMULA,
    spellings={"numpy.tile": "A:self reps"},
)(np.tile)
register_op(
    'aten::pad(Tensor self, Any pad_width, str mode="constant", Any constant_values=0) -> Tensor',
    shape=_pad_rule,
    derivative=Derivative.FORMULA,
    spellings={
        "numpy.pad": (
            "array:self pad_width mode * !stat_length constant_values !end_values !reflect_type"
        ),
    },
)(pad)
register_op(
    "aten::flip(Tensor(a) self, Any axis=None) -> Tensor(a)",
    shape=_flip_rule,
    derivative=Derivative.FORMULA,
    view=SELF_INVERSE,
    spellings={"numpy.flip": "m:self axis"},
)(flip)
register_op(
    "aten::fliplr(Tensor(a) self) -> Tensor(a)",
    shape=_at_least_rule(2),
    derivative=Derivative.FORMULA,
    view=SELF_INVERSE,
    spellings={"numpy.fliplr": "m:self"},
)(np.fliplr)
register_op(
    "aten::flipud(Tensor(a) self) -> Tensor(a)",
    shape=_at_least_rule(1),
    derivative=Derivative.FORMULA,
    view=SELF_INVERSE,
    spellings={"numpy.flipud": "m:self"},
)(np.flipud)
register_op(
    "aten::rot90(Tensor(a) self, int k=1, Any axes=(0, 1)) -> Tensor(a)",
    shape=_rot90_rule,
    derivative=Derivative.FORMULA,
    view=ROTATED,
    spellings={"numpy.rot90": "m:self k axes"},
)(rot90)
register_op(
    "aten::roll(Tensor self, Any shift, Any axis=None) -> Tensor",
    shape=_roll_rule,
    derivative=Derivative.FORMULA,
    spellings={"numpy.roll": "a:self shift axis"},
)(roll)


# ---- compile-time helpers of the derivative formulas ---------------------------------------------


def negated(shift: Any) -> Any:
    """``-shift`` for an int or a sequence of ints: rolling back what ``np.roll`` rolled."""
    if isinstance(shift, tuple | list):
        return type(shift)(-int(s) for s in shift)
    return -np.asarray(shift) if isinstance(shift, np.ndarray) else -int(shift)


def _negated_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    ty = types[0]
    if isinstance(ty, TensorType):
        return tensor(ty.dtype, ty.shape)
    return [ty]


register_op(
    "aten::_rollaxis_destination(int ndim, int axis, int start) -> int",
    shape=fixed(INT),
    derivative=Derivative.NONE,
)(rollaxis_destination)
register_op(
    "aten::_append_cut(Any arr, int? axis) -> int", shape=fixed(INT), derivative=Derivative.NONE
)(append_cut)
register_op("aten::_append_axis(int? axis) -> int", shape=fixed(INT), derivative=Derivative.NONE)(
    append_axis
)
register_op("aten::_negated(Any shift) -> Any", shape=_negated_rule, derivative=Derivative.NONE)(
    negated
)
