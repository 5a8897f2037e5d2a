"""``np.gradient``: central differences inside, one-sided ones at the edges, along each axis
asked for, with a spacing per axis given as a number (uniform) or as the coordinates of the
samples along that axis (a 1-D array).

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


def _spacings(spacing: Sequence[Any], count: int) -> list[Any]:
    """One spacing per axis: a float, or an axis's coordinates (a 1-D array)."""
    if len(spacing) == 0:
        return [1.0] * count
    if len(spacing) == 1 and np.ndim(spacing[0]) == 0:
        return [float(spacing[0])] * count
    if len(spacing) != count:
        raise ShapeError("invalid number of arguments")
    return [float(h) if np.ndim(h) == 0 else np.asarray(h) for h in spacing]


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
        if np.ndim(h) == 0:
            back = _stencil_transpose(moved, h, edge_order)
        else:
            # Coordinates: the stencil's weights vary along the axis, so it is written out
            # as the n x n matrix np.gradient applies (n squared numbers for an axis of n).
            numpy_gradient: Any = np.gradient
            stencil = numpy_gradient(np.eye(len(h)), h, axis=0, edge_order=edge_order)
            back = moved @ stencil.astype(moved.dtype, copy=False)
        total += np.moveaxis(back, -1, along)
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
    spacings = spacing_ty.elems if isinstance(spacing_ty, TupleType) else ()
    for ty in spacings:
        if ty not in (INT, FLOAT, BOOL) and not (
            isinstance(ty, TensorType)
            and ty.shape is not None
            and len(ty.shape) <= 1
            and (ty.dtype is None or np.dtype(ty.dtype).kind in "biuf")
        ):
            raise ShapeError(
                f"np.gradient takes the spacing of each axis as a real number or a 1-D array "
                f"of real coordinates, not {ty}"
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
    if len(spacings) not in (0, 1, len(axes)) or (
        len(spacings) == 1 and len(axes) > 1 and _is_array(spacings[0])
    ):
        raise ShapeError("invalid number of arguments")
    for along, ty in zip(axes, spacings if len(spacings) == len(axes) else (), strict=False):
        count = (
            ty.shape[0] if isinstance(ty, TensorType) and ty.shape and len(ty.shape) == 1 else None
        )
        if None not in (count, f.shape[along]) and count != f.shape[along]:
            raise ShapeError(
                "when 1d, distances must match the length of the corresponding dimension"
            )
    one = TensorType(dtype, f.shape)
    return [one if len(axes) == 1 else TupleType((one,) * len(axes))]


def _is_array(ty: Type) -> bool:
    return isinstance(ty, TensorType) and ty.shape is not None and len(ty.shape) == 1


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
