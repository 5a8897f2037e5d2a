"""Operators along one axis that keep it: cumsum, diff, argsort.

With ``axis=None``, cumsum and argsort work on the flattened array, as NumPy's do; diff always
works along an axis (the last by default) and shortens it by ``n``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ir.errors import ShapeError
from ir.ops.promotion import probe_dtype
from ir.ops.registry import NOT_CONSTANT, Derivative, ShapeRule, register_op
from ir.ops.shape_rules import as_tensor, known_int, normalize_axis, num_elements, tensor
from ir.types import INT, NONE, Type


def cumsum(x: Any, axis: int | None) -> Any:
    return np.cumsum(x, axis=axis)


def diff(x: Any, n: int, axis: int) -> Any:
    return np.diff(x, n=n, axis=axis)


def argsort(x: Any, axis: int | None, kind: Any, stable: bool | None) -> Any:
    return np.argsort(x, axis=axis, kind=kind, stable=stable)


def _flattening_rule(fn: Callable[..., Any]) -> ShapeRule:
    """The rule of an operator that keeps its operand's shape along ``axis`` (operand 1), or
    returns a flat array when ``axis`` is None."""

    def rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
        x = as_tensor(types[0])
        dtype = probe_dtype(fn, [x])
        axis = None if types[1] is NONE else consts[1]
        if axis is NOT_CONSTANT and types[1] is not INT:
            return tensor(dtype, None)  # flat or not, depending on the value
        if axis is None:
            return tensor(dtype, (num_elements(x.shape),))
        if x.shape is not None and axis is not NOT_CONSTANT:
            normalize_axis(int(axis), len(x.shape))
        return tensor(dtype, x.shape)

    return rule


def _diff_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    x = as_tensor(types[0])
    dtype = probe_dtype(np.diff, [x], [1])
    n, axis = known_int(consts[1]), known_int(consts[2])
    if n is not None and n < 0:
        raise ShapeError(f"order must be non-negative but got {n}")
    if x.shape is None:
        return tensor(dtype, None)
    if not x.shape:
        raise ShapeError("diff requires input that is at least one dimensional")
    if axis is None:
        return tensor(dtype, (None,) * len(x.shape))
    axis = normalize_axis(axis, len(x.shape))
    size = x.shape[axis]
    shortened = None if size is None or n is None else max(size - n, 0)
    return tensor(dtype, tuple(shortened if i == axis else d for i, d in enumerate(x.shape)))


register_op(
    "aten::cumsum(Tensor self, int? axis=None) -> Tensor",
    shape=_flattening_rule(np.cumsum),
    derivative=Derivative.FORMULA,
    spellings={"numpy.cumsum": "a:self axis !dtype !out", "ndarray.cumsum": "axis !dtype !out"},
)(cumsum)
register_op(
    "aten::diff(Tensor self, int n=1, int axis=-1) -> Tensor",
    shape=_diff_rule,
    derivative=Derivative.FORMULA,
    spellings={"numpy.diff": "a:self n axis !prepend !append"},
)(diff)
register_op(
    "aten::argsort(Tensor self, int? axis=-1, str? kind=None, bool? stable=None) -> Tensor",
    shape=_flattening_rule(np.argsort),
    derivative=Derivative.NONE,
    spellings={
        "numpy.argsort": "a:self axis kind !order * stable",
        "ndarray.argsort": "axis kind !order * stable",
    },
)(argsort)
