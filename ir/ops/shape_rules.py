"""Shared pieces of shape rules: operand checks, broadcasting, axes, shape-valued arguments.

See Note [Shape rules] in `ir.ops.registry` for the contract every rule keeps, and Note [Dtype
probing] in `ir.ops.promotion` for how result dtypes are found. Messages follow NumPy's wording,
so an error found at specialisation reads like the one the plain function would raise.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from ir.errors import ShapeError
from ir.ops.promotion import probe_dtype
from ir.ops.registry import NOT_CONSTANT, ShapeRule
from ir.types import (
    ANY,
    BOOL,
    FLOAT,
    INT,
    NONE,
    SCALAR,
    ListType,
    TensorType,
    TupleType,
    Type,
)

Shape = tuple[int | None, ...]


def format_shape(shape: Shape | None) -> str:
    """NumPy's spelling of a shape, ``?`` for an unknown dim: ``(3,4)``, ``(5,)``."""
    if shape is None:
        return "(...)"
    dims = ["?" if d is None else str(d) for d in shape]
    return f"({dims[0]},)" if len(dims) == 1 else f"({','.join(dims)})"


def as_tensor(ty: Type, position: int = 0) -> TensorType:
    """The tensor type of an operand that must be an array (``Any`` counts as unknown)."""
    if isinstance(ty, TensorType):
        return ty
    if ty is ANY:
        return TensorType()
    raise ShapeError(f"operand {position} must be an array, got a value of type {ty}")


def as_array_like(ty: Type, position: int = 0) -> TensorType:
    """An operand NumPy converts with ``np.asarray``: an array or a Python number (0-d)."""
    if ty in (INT, FLOAT, BOOL, SCALAR):
        return TensorType(None, ())
    return as_tensor(ty, position)


def tensor(dtype: str | None, shape: Shape | None) -> list[Type]:
    """The result list of a single-tensor rule."""
    return [TensorType(dtype, shape)]


def broadcast_shapes(*shapes: Shape | None) -> Shape | None:
    """NumPy broadcasting, where an unknown dim broadcasts like "whatever makes it fit"."""
    if any(s is None for s in shapes):
        return None
    known = [s for s in shapes if s is not None]
    rank = max((len(s) for s in known), default=0)
    result: list[int | None] = []
    for axis in range(rank):
        dim: int | None = 1
        for shape in known:
            index = axis - (rank - len(shape))
            if index < 0:
                continue
            dim = _broadcast_dim(dim, shape[index], known)
        result.append(dim)
    return tuple(result)


def _broadcast_dim(a: int | None, b: int | None, shapes: list[Shape]) -> int | None:
    if a == 1:
        return b
    if b == 1 or b is None:
        return a
    if a is None or a == b:
        return b
    text = " ".join(format_shape(s) for s in shapes)
    raise ShapeError(f"operands could not be broadcast together with shapes {text}")


def elementwise(fn: Callable[..., Any]) -> ShapeRule:
    """Rule of a NumPy ufunc-like function: broadcast every array-like operand (None operands,
    as in ``np.clip(x, None, 1)``, take no part), result dtype as ``fn`` computes it."""

    def rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
        shapes = [as_array_like(t, i).shape for i, t in enumerate(types) if t is not NONE]
        return tensor(probe_dtype(fn, types), broadcast_shapes(*shapes))

    return rule


def normalize_axis(axis: int, ndim: int) -> int:
    if not -ndim <= axis < ndim:
        raise ShapeError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim if ndim else 0


def normalize_axes(axis: Any, ndim: int) -> tuple[int, ...]:
    """``axis`` as NumPy reductions take it (None, an int, or a sequence of ints), as sorted
    non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    items = axis if isinstance(axis, tuple | list) else (axis,)
    axes = [normalize_axis(int(a), ndim) for a in items]
    if len(set(axes)) != len(axes):
        raise ShapeError("duplicate value in 'axis'")
    return tuple(sorted(axes))


def int_sequence(ty: Type, const: Any) -> Shape | None:
    """A shape-like operand (an int or a sequence of ints), with None for each value unknown
    at compile time; None when even its length is unknown."""
    if const is not NOT_CONSTANT:
        if isinstance(const, tuple | list):
            return tuple(int(d) for d in const)
        return (int(const),)
    if ty is INT:
        return (None,)
    if isinstance(ty, TupleType):
        return (None,) * len(ty.elems)
    if isinstance(ty, TensorType) and ty.shape is not None and len(ty.shape) == 1:
        length = ty.shape[0]
        return None if length is None else (None,) * length
    if isinstance(ty, TensorType | ListType) or ty in (ANY, NONE):
        return None
    raise ShapeError(f"expected an int or a sequence of ints, got a value of type {ty}")


def known_int(const: Any) -> int | None:
    """An int operand's compile-time value, or None."""
    return None if const is NOT_CONSTANT or const is None else int(const)


def num_elements(shape: Shape | None) -> int | None:
    if shape is None or any(d is None for d in shape):
        return None
    return math.prod(d for d in shape if d is not None)


def same_shape(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    """The result is like the first operand (dtype and shape)."""
    first = as_tensor(types[0])
    return tensor(first.dtype, first.shape)


def fixed(*result: Type) -> ShapeRule:
    """A rule whose results do not depend on the operands (``aten::ndim -> int``)."""

    def rule(types: Sequence[Type], consts: Sequence[Any]) -> Sequence[Type]:
        return result

    return rule
