"""``np.gradient``: central differences inside, one-sided ones at the edges, along each axis
asked for, with a uniform spacing per axis given as numbers (coordinate arrays are refused).

The operator is linear in its array, so its gradient is the transpose of the same stencil
(`gradient_backward`), whose own gradient is the operator again: second derivatives go
through the pair.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ir.errors import ShapeError
from ir.ops.registry import NOT_CONSTANT, Derivative, register_op
from ir.ops.shape_rules import as_tensor, normalize_axis
from ir.types import ANY, BOOL, FLOAT, INT, TensorType, TupleType, Type


def _axes(axis: Any, ndim: int) -> tuple[int, ...]:
    """The axes ``np.gradient`` differentiates along, in the order asked."""
    if axis is None:
        return tuple(range(ndim))
    items = axis if isinstance(axis, tuple | list) else (axis,)
    axes = tuple(normalize_axis(int(a), ndim) for a in items)
    if len(set(axes)) != len(axes):
        raise ShapeError("duplicate value in 'axis'")
    return axes


def _spacings(spacing: Sequence[Any], count: int) -> list[float]:
    if len(spacing) == 0:
        return [1.0] * count
    if len(spacing) == 1:
        return [float(spacing[0])] * count
    if len(spacing) != count:
        raise ShapeError("invalid number of arguments")
    return [float(h) for h in spacing]


def gradient(f: Any, spacing: Sequence[Any], axis: Any, edge_order: int) -> Any:
    """``np.gradient(f, *spacing, axis=axis, edge_order=edge_order)``: an array for one axis,
    a tuple of arrays for several."""
    numpy_gradient: Any = np.gradient  # its overloads do not take an unknown edge_order
    result = numpy_gradient(f, *spacing, axis=axis, edge_order=edge_order)
    return tuple(result) if isinstance(result, tuple | list) else result


def gradient_backward(grad: Any, spacing: Sequence[Any], axis: Any, edge_order: int) -> Any:
    """The transpose of `gradient`: ``grad`` holds one array per axis (or is the array, for one
    axis); each goes back through its axis's stencil, and they add up."""
    pieces = list(grad) if isinstance(grad, tuple | list) else [grad]
    first = np.asarray(pieces[0])
    axes = _axes(axis, first.ndim)
    total = np.zeros(first.shape, first.dtype)
    for piece, along, h in zip(pieces, axes, _spacings(spacing, len(axes)), strict=True):
        moved = np.moveaxis(np.asarray(piece), along, -1)
        total += np.moveaxis(_stencil_transpose(moved, h, edge_order), -1, along)
    return total


def _stencil_transpose(g: np.ndarray, h: float, edge_order: int) -> np.ndarray:
    """The transpose of np.gradient's stencil along the last axis, applied to ``g``."""
    out = np.zeros(g.shape, g.dtype)
    inner = g[..., 1:-1] / (2.0 * h)
    out[..., :-2] -= inner
    out[..., 2:] += inner
    first, last = g[..., 0], g[..., -1]
    if edge_order == 1:
        out[..., 0] -= first / h
        out[..., 1] += first / h
        out[..., -1] += last / h
        out[..., -2] -= last / h
    else:
        for offset, weight in ((0, -3.0), (1, 4.0), (2, -1.0)):
            out[..., offset] += weight * first / (2.0 * h)
            out[..., -1 - offset] -= weight * last / (2.0 * h)
    return out


def _gradient_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    f = as_tensor(types[0])
    spacing_ty, axis, edge_order = types[1], consts[2], consts[3]
    if isinstance(spacing_ty, TupleType) and any(
        t not in (INT, FLOAT, BOOL) for t in spacing_ty.elems
    ):
        raise ShapeError(
            "np.gradient with coordinate arrays is not supported: pass the spacing of each "
            "axis as a number"
        )
    if edge_order is not NOT_CONSTANT and edge_order not in (1, 2):
        raise ShapeError("'edge_order' greater than 2 not supported")
    dtype = f.dtype
    if dtype is not None and np.dtype(dtype).kind not in "fc":
        dtype = "float64"
    if f.shape is None or axis is NOT_CONSTANT:
        return [ANY]
    axes = _axes(axis, len(f.shape))
    order = 1 if edge_order is NOT_CONSTANT else int(edge_order)
    for along in axes:
        length = f.shape[along]
        if length is not None and length < order + 1:
            raise ShapeError(
                "Shape of array too small to calculate a numerical gradient, at least "
                "(edge_order + 1) elements are required."
            )
    if isinstance(spacing_ty, TupleType) and len(spacing_ty.elems) not in (0, 1, len(axes)):
        raise ShapeError("invalid number of arguments")
    one = TensorType(dtype, f.shape)
    return [one if len(axes) == 1 else TupleType((one,) * len(axes))]


def _gradient_backward_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    grad = types[0]
    piece = grad.elems[0] if isinstance(grad, TupleType) and grad.elems else grad
    return [piece if isinstance(piece, TensorType) else ANY]


register_op(
    "aten::gradient(Tensor self, Any spacing=(), Any axis=None, int edge_order=1) -> Any",
    shape=_gradient_rule,
    derivative=Derivative.FORMULA,
    spellings={"numpy.gradient": "f:self *spacing * axis edge_order"},
)(gradient)
register_op(
    "aten::_gradient_backward(Any grad, Any spacing, Any axis, int edge_order) -> Tensor",
    shape=_gradient_backward_rule,
    derivative=Derivative.FORMULA,
)(gradient_backward)
