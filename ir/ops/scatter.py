"""Writes as values: each operator returns a new array holding what a NumPy write would leave.

Note [Scatters]
The functional forms of NumPy's writes; functionalisation (passes/functionalize.py) rewrites
``x[...] = v``, ``x += v`` and ``np.add.at`` into them, so the graph that autodiff sees never
mutates an array:

    aten::_written(Tensor target, Any value) -> Tensor     np.copyto(x, v, casting="same_kind")
    aten::select_scatter(Tensor self, Tensor src, int axis, int index) -> Tensor
                                                            x[..., i, ...] = v
    aten::slice_scatter(Tensor self, Tensor src, int axis, int? start, int? stop, int? step)
        -> Tensor                                           x[..., a:b:c, ...] = v
    aten::index_put(Tensor self, Any values, Any... indices) -> Tensor      x[idx] = v
    aten::add_at(Tensor self, Any values, Any... indices) -> Tensor         np.add.at(x, idx, v)
    aten::_einsum_scatter(Tensor self, Tensor src, str subscripts) -> Tensor
                                                    np.einsum(subscripts, x)[...] = v
    aten::_real_scatter(Tensor self, Tensor src) -> Tensor                  x.real[...] = v
    aten::_imag_scatter(Tensor self, Tensor src) -> Tensor                  x.imag[...] = v

The last three write through the views of Note [Views] (`ir.ops.views`) that are part of their
operand: a diagonal ``np.einsum`` reads, and the real and imaginary parts of a complex array.

The region each one writes is addressed exactly as the matching read in Note [Lowering
subscripts] (`ir.ops.indexing`) addresses it: ``select_scatter`` is the write of ``select``,
``slice_scatter`` of ``slice`` and ``index_put`` of ``index`` (None among its indices is a full
slice ``:``). The result always has ``self``'s shape and dtype; a value is cast as the write casts
it: assignment casts unsafely, ``_written`` (an in-place ufunc's ``out=``) with "same_kind".
Where advanced indices repeat a position, ``index_put`` keeps the last value written there, as
NumPy does, and ``add_at`` adds them all.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ir.errors import ShapeError
from ir.ops.gradients.scatter import add_at_tuple, index_put_tuple
from ir.ops.indexing import _along, _index_rule, _select_rule, _slice_rule
from ir.ops.products import einsum_view_rule
from ir.ops.registry import Derivative, ShapeRule, register_op
from ir.ops.shape_rules import (
    Shape,
    as_array_like,
    as_tensor,
    elementwise,
    format_shape,
    tensor,
)
from ir.types import BOOL, FLOAT, INT, TensorType, Type


def written(target: Any, value: Any) -> Any:
    """A new array of ``target``'s shape and dtype holding ``value`` broadcast to it. A target
    that is no array (a NumPy scalar: ``s = np.sum(y); s *= 2``) is rebound, as Python rebinds
    what cannot change in place: the result is ``value`` itself."""
    if not isinstance(target, np.ndarray):
        return value
    result = np.empty(np.shape(target), np.result_type(target))
    np.copyto(result, value, casting="same_kind")
    return result


def select_scatter(x: Any, src: Any, axis: int, index: int) -> Any:
    result = np.array(x, copy=True)
    result[_along(axis, index)] = src
    return result


def slice_scatter(
    x: Any, src: Any, axis: int, start: int | None, stop: int | None, step: int | None
) -> Any:
    result = np.array(x, copy=True)
    result[_along(axis, slice(start, stop, step))] = src
    return result


def index_put(x: Any, values: Any, *indices: Any) -> Any:
    return index_put_tuple(x, values, indices)


def add_at(x: Any, values: Any, *indices: Any) -> Any:
    return add_at_tuple(x, values, indices)


def einsum_scatter(x: Any, src: Any, subscripts: str) -> Any:
    result = np.array(x, copy=True)
    np.einsum(subscripts, result)[...] = src
    return result


def real_scatter(x: Any, src: Any) -> Any:
    result = np.array(x, copy=True)
    result.real = src
    return result


def imag_scatter(x: Any, src: Any) -> Any:
    result = np.array(x, copy=True)
    result.imag = src
    return result


# ---- shape rules ------------------------------------------------------------------------------

# The dtype NumPy 2 gives a Python number when it checks a cast (NEP 50: its kind is what counts).
_PYTHON_NUMBER_DTYPES: dict[Type, str] = {BOOL: "bool", INT: "int64", FLOAT: "float64"}


def _assignable(value: Shape | None, region: Shape | None) -> bool:
    """Whether an assignment can broadcast a value of shape ``value`` into ``region``: NumPy
    first drops the value's leading length-1 dims the region does not have."""
    if value is None or region is None:
        return True
    extra = len(value) - len(region)
    if extra > 0:
        if any(d not in (1, None) for d in value[:extra]):
            return False
        value = value[extra:]
    tail = region[len(region) - len(value) :]
    return all(v in (1, None) or r is None or v == r for v, r in zip(value, tail, strict=True))


def _broadcastable(value: Shape | None, region: Shape | None) -> bool:
    """Whether ``value`` broadcasts to ``region`` with no dims dropped (``np.add.at``)."""
    if value is not None and region is not None and len(value) > len(region):
        return False
    return _assignable(value, region)


def _written_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    target, value = as_tensor(types[0]), as_array_like(types[1], 1)
    if not _assignable(value.shape, target.shape):
        raise ShapeError(_into(value.shape, target.shape))
    python_number = _PYTHON_NUMBER_DTYPES.get(types[1])
    source = python_number or value.dtype
    if (
        source is not None
        and target.dtype is not None
        and not np.can_cast(source, target.dtype, casting="same_kind")
    ):
        what = "scalar" if python_number else "array data"
        raise ShapeError(
            f"Cannot cast {what} from dtype('{source}') to dtype('{target.dtype}') "
            "according to the rule 'same_kind'"
        )
    return tensor(target.dtype, target.shape)


def _into(value: Shape | None, region: Shape | None) -> str:
    """NumPy's message for an assignment whose value does not fit."""
    return (
        f"could not broadcast input array from shape {format_shape(value)} "
        f"into shape {format_shape(region)}"
    )


def _index_put_mismatch(value: Shape | None, region: Shape | None) -> str:
    return (
        f"shape mismatch: value array of shape {format_shape(value)} could not be "
        f"broadcast to indexing result of shape {format_shape(region)}"
    )


def _add_at_mismatch(value: Shape | None, region: Shape | None) -> str:
    return "array is not broadcastable to correct shape"


Fits = Callable[[Shape | None, Shape | None], bool]
Mismatch = Callable[[Shape | None, Shape | None], str]


def _scatter_rule(read_rule: ShapeRule, fits: Fits, mismatch: Mismatch) -> ShapeRule:
    """The rule of the write matching the read ``read_rule`` (the write's operands less the
    source, which comes second): the result is like ``self``, and the source must fit the
    region the read would return."""

    def rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
        x = as_tensor(types[0])
        (region,) = read_rule([types[0], *types[2:]], [consts[0], *consts[2:]])
        region_shape = region.shape if isinstance(region, TensorType) else None
        source = as_array_like(types[1], 1).shape
        if not fits(source, region_shape):
            raise ShapeError(mismatch(source, region_shape))
        return tensor(x.dtype, x.shape)

    return rule


register_op(
    "aten::_written(Tensor target, Any value) -> Tensor",
    shape=_written_rule,
    derivative=Derivative.FORMULA,
    read_for_type=("target",),
)(written)
register_op(
    "aten::select_scatter(Tensor self, Tensor src, int axis, int index) -> Tensor",
    shape=_scatter_rule(_select_rule, _assignable, _into),
    derivative=Derivative.FORMULA,
)(select_scatter)
register_op(
    "aten::slice_scatter(Tensor self, Tensor src, int axis, int? start, int? stop, int? step)"
    " -> Tensor",
    shape=_scatter_rule(_slice_rule, _assignable, _into),
    derivative=Derivative.FORMULA,
)(slice_scatter)
register_op(
    "aten::index_put(Tensor self, Any values, Any... indices) -> Tensor",
    shape=_scatter_rule(_index_rule, _assignable, _index_put_mismatch),
    derivative=Derivative.FORMULA,
)(index_put)
register_op(
    "aten::add_at(Tensor self, Any values, Any... indices) -> Tensor",
    shape=_scatter_rule(_index_rule, _broadcastable, _add_at_mismatch),
    derivative=Derivative.FORMULA,
)(add_at)
register_op(
    "aten::_einsum_scatter(Tensor self, Tensor src, str subscripts) -> Tensor",
    shape=_scatter_rule(einsum_view_rule, _assignable, _into),
    derivative=Derivative.FORMULA,
)(einsum_scatter)
register_op(
    "aten::_real_scatter(Tensor self, Tensor src) -> Tensor",
    shape=_scatter_rule(elementwise(np.real), _assignable, _into),
    derivative=Derivative.FORMULA,
)(real_scatter)
register_op(
    "aten::_imag_scatter(Tensor self, Tensor src) -> Tensor",
    shape=_scatter_rule(elementwise(np.imag), _assignable, _into),
    derivative=Derivative.FORMULA,
)(imag_scatter)
