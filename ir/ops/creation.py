"""Array creation: zeros, ones, full, arange, linspace, eye and the ``*_like`` family.

Each takes ``str? dtype=None`` last: a dtype name (``"float32"``) or None for NumPy's default
(float64 for zeros, ones and eye; the fill value's for full; the bounds' for arange; the
prototype's for ``*_like``; float64 for linspace's integer bounds). Their results do not depend
on any operand's value, except on the fill value of ``full`` and ``full_like`` and the bounds of
``linspace`` (which have formulas) and the bounds of ``arange`` (whose derivative is refused, not
silently zero: Note [Derivatives] in `ir.ops.registry`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ir.errors import ShapeError
from ir.ops.promotion import dtype_name, probe_dtype
from ir.ops.registry import NOT_CONSTANT, Derivative, ShapeRule, register_op
from ir.ops.shape_rules import (
    as_array_like,
    as_tensor,
    broadcast_shapes,
    int_sequence,
    known_int,
    normalize_axis,
    tensor,
)
from ir.types import NONE, Type


def _dtype_argument(ty: Type, const: Any) -> str | None:
    """The dtype a ``str? dtype`` operand fixes; None when unknown or not given."""
    if ty is NONE or const is None or const is NOT_CONSTANT:
        return None
    return dtype_name(const)


def _given_dtype(types: Sequence[Type], consts: Sequence[Any]) -> tuple[bool, str | None]:
    """Whether the last (dtype) operand is given, and the dtype it names if known."""
    given = types[-1] is not NONE and consts[-1] is not None
    return given, _dtype_argument(types[-1], consts[-1])


def _filled_rule(default_dtype: str | None) -> ShapeRule:
    """zeros/ones (``default_dtype`` float64) and full (None: the fill value decides)."""

    def rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
        shape = int_sequence(types[0], consts[0])
        given, dtype = _given_dtype(types, consts)
        if not given:
            dtype = default_dtype or probe_dtype(_full_scalar, [types[1]])
        return tensor(dtype, shape)

    return rule


def _full_scalar(fill_value: Any) -> Any:
    return np.full((), fill_value)


def _like_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    prototype = as_tensor(types[0])
    given, dtype = _given_dtype(types, consts)
    return tensor(dtype if given else prototype.dtype, prototype.shape)


def _arange_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    given, dtype = _given_dtype(types, consts)
    if not given:
        dtype = probe_dtype(np.arange, types[:3])
    bounds = consts[:3]
    if any(b is NOT_CONSTANT for b in bounds):
        return tensor(dtype, (None,))
    start, stop, step = bounds
    if stop is None:
        start, stop = 0, start
    step = 1 if step is None else step
    if step == 0:
        raise ShapeError("arange: step must not be zero")
    return tensor(dtype, (max(0, math.ceil((stop - start) / step)),))


def linspace(start: Any, stop: Any, num: int, endpoint: bool, dtype: Any, axis: int) -> Any:
    """``np.linspace`` without ``retstep``: only the samples."""
    return np.linspace(start, stop, num, endpoint, dtype=dtype, axis=axis)


def _linspace_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    given, dtype = _given_dtype(types[:5], consts[:5])
    if not given:
        dtype = probe_dtype(np.linspace, types[:2])
    bounds = broadcast_shapes(as_array_like(types[0], 0).shape, as_array_like(types[1], 1).shape)
    num = known_int(consts[2])
    if num is not None and num < 0:
        raise ShapeError(f"Number of samples, {num}, must be non-negative.")
    axis = consts[5]
    if bounds is None or axis is NOT_CONSTANT:
        return tensor(dtype, None)
    where = normalize_axis(int(axis), len(bounds) + 1)
    return tensor(dtype, (*bounds[:where], num, *bounds[where:]))


def _eye_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    given, dtype = _given_dtype(types, consts)
    rows = known_int(consts[0])
    cols = rows if types[1] is NONE or consts[1] is None else known_int(consts[1])
    return tensor(dtype if given else "float64", (rows, cols))


register_op(
    "aten::zeros(Any shape, str? dtype=None) -> Tensor",
    shape=_filled_rule("float64"),
    derivative=Derivative.NONE,
    spellings={"numpy.zeros": "shape dtype !order * !device !like"},
)(np.zeros)
register_op(
    "aten::ones(Any shape, str? dtype=None) -> Tensor",
    shape=_filled_rule("float64"),
    derivative=Derivative.NONE,
    spellings={"numpy.ones": "shape dtype !order * !device !like"},
)(np.ones)
register_op(
    "aten::full(Any shape, Any fill_value, str? dtype=None) -> Tensor",
    shape=_filled_rule(None),
    derivative=Derivative.FORMULA,
    spellings={"numpy.full": "shape fill_value dtype !order * !device !like"},
)(np.full)
register_op(
    "aten::arange(Scalar start, Scalar? stop=None, Scalar? step=None, str? dtype=None) -> Tensor",
    shape=_arange_rule,
    derivative=Derivative.REFUSED,
    spellings={"numpy.arange": "start stop step dtype * !device !like"},
)(np.arange)
register_op(
    "aten::linspace(Any start, Any stop, int num=50, bool endpoint=True, str? dtype=None,"
    " int axis=0) -> Tensor",
    shape=_linspace_rule,
    derivative=Derivative.FORMULA,
    spellings={"numpy.linspace": "start stop num endpoint !retstep dtype axis * !device"},
)(linspace)
register_op(
    "aten::eye(int N, int? M=None, int k=0, str? dtype=None) -> Tensor",
    shape=_eye_rule,
    derivative=Derivative.NONE,
    spellings={"numpy.eye": "N M k dtype !order * !device !like"},
)(np.eye)
register_op(
    "aten::zeros_like(Tensor self, str? dtype=None) -> Tensor",
    shape=_like_rule,
    derivative=Derivative.NONE,
    spellings={"numpy.zeros_like": "a:self dtype !order !subok !shape * !device"},
)(np.zeros_like)
register_op(
    "aten::ones_like(Tensor self, str? dtype=None) -> Tensor",
    shape=_like_rule,
    derivative=Derivative.NONE,
    spellings={"numpy.ones_like": "a:self dtype !order !subok !shape * !device"},
)(np.ones_like)
register_op(
    "aten::full_like(Tensor self, Any fill_value, str? dtype=None) -> Tensor",
    shape=_like_rule,
    derivative=Derivative.FORMULA,
    read_for_type=("self",),
    spellings={"numpy.full_like": "a:self fill_value dtype !order !subok !shape * !device"},
)(np.full_like)
