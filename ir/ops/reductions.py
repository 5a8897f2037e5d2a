"""Reductions over axes: sum, mean, max, min, prod, var, std, the index reductions argmax and
argmin, and the truth reductions any and all.

``aten::sum(Tensor self, Any axis=None, bool keepdims=False) -> Tensor``: ``axis`` is None, an int
or a tuple (or list) of ints, as in NumPy (argmax and argmin take None or an int); var and std
take ``ddof`` after ``keepdims``. Results are NumPy's, dtype included (``np.sum`` of
int32 is int64, ``np.mean`` of ints is float64), so reducing everything gives a NumPy scalar.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ir.graph import Node
from ir.ops.call_spelling import ADD_REDUCE, Bind, Call, is_array, reduction_operands
from ir.ops.promotion import probe_dtype
from ir.ops.registry import NOT_CONSTANT, Derivative, ShapeRule, register_op
from ir.ops.shape_rules import as_tensor, normalize_axes, tensor
from ir.types import NONE, TensorType, Type

# name -> (NumPy function, spellings)
Reduction = tuple[Callable[..., Any], dict[str, str]]
REDUCTIONS: dict[str, Reduction] = {
    "sum": (
        np.sum,
        {
            "numpy.sum": "a:self axis !dtype !out keepdims !initial !where",
            "ndarray.sum": "axis !dtype !out * keepdims !initial !where",
        },
    ),
    "mean": (
        np.mean,
        {
            "numpy.mean": "a:self axis !dtype !out keepdims * !where",
            "ndarray.mean": "axis !dtype !out * keepdims !where",
        },
    ),
    "max": (
        np.max,
        {
            "numpy.max": "a:self axis !out keepdims !initial !where",
            "numpy.amax": "a:self axis !out keepdims !initial !where",
            "ndarray.max": "axis !out * keepdims !initial !where",
        },
    ),
    "min": (
        np.min,
        {
            "numpy.min": "a:self axis !out keepdims !initial !where",
            "numpy.amin": "a:self axis !out keepdims !initial !where",
            "ndarray.min": "axis !out * keepdims !initial !where",
        },
    ),
    "prod": (
        np.prod,
        {
            "numpy.prod": "a:self axis !dtype !out keepdims !initial !where",
            "ndarray.prod": "axis !dtype !out * keepdims !initial !where",
        },
    ),
}

# On an ndarray, ``np.sum(x, axis=a, keepdims=k)`` is ``np.add.reduce(x, a, None, None, k)``
# after a Python-level wrapper (max, min and prod likewise): generated code calls the ufunc's
# ``reduce`` directly (Note [Typed calls] in `ir.typed_calls`). Bound once, so that every node
# binds the same object (``np.add.reduce`` is a new bound method on each access).
UFUNC_REDUCES: dict[str, Callable[..., Any]] = {
    "sum": ADD_REDUCE,
    "max": np.maximum.reduce,
    "min": np.minimum.reduce,
    "prod": np.multiply.reduce,
}

# Index reductions: int64 positions, no gradient.
ARG_REDUCTIONS: dict[str, Reduction] = {
    "argmax": (
        np.argmax,
        {"numpy.argmax": "a:self axis !out * keepdims", "ndarray.argmax": "axis !out * keepdims"},
    ),
    "argmin": (
        np.argmin,
        {"numpy.argmin": "a:self axis !out * keepdims", "ndarray.argmin": "axis !out * keepdims"},
    ),
}

# Truth reductions: bool results, no gradient.
TRUTH_REDUCTIONS: dict[str, Reduction] = {
    "any": (
        np.any,
        {
            "numpy.any": "a:self axis !out keepdims * !where",
            "ndarray.any": "axis !out * keepdims !where",
        },
    ),
    "all": (
        np.all,
        {
            "numpy.all": "a:self axis !out keepdims * !where",
            "ndarray.all": "axis !out * keepdims !where",
        },
    ),
}

# Moments with a ``ddof`` (delta degrees of freedom) argument.
MOMENTS: dict[str, Reduction] = {
    "var": (
        np.var,
        {
            "numpy.var": "a:self axis !dtype !out ddof keepdims * !where !mean !correction",
            "ndarray.var": "axis !dtype !out ddof * keepdims !where !mean",
        },
    ),
    "std": (
        np.std,
        {
            "numpy.std": "a:self axis !dtype !out ddof keepdims * !where !mean !correction",
            "ndarray.std": "axis !dtype !out ddof * keepdims !where !mean",
        },
    ),
}


def _axis(axis: Any) -> Any:
    return tuple(axis) if isinstance(axis, list) else axis


def reduction_kernel(fn: Callable[..., Any]) -> Callable[[Any, Any, bool], Any]:
    def kernel(x: Any, axis: Any, keepdims: bool) -> Any:
        return fn(x, axis=_axis(axis), keepdims=keepdims)

    kernel.__name__ = fn.__name__
    return kernel


def moment_kernel(fn: Callable[..., Any]) -> Callable[[Any, Any, bool, Any], Any]:
    def kernel(x: Any, axis: Any, keepdims: bool, ddof: Any) -> Any:
        return fn(x, axis=_axis(axis), keepdims=keepdims, ddof=ddof)

    kernel.__name__ = fn.__name__
    return kernel


def reduction_rule(fn: Callable[..., Any]) -> ShapeRule:
    def rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
        x = as_tensor(types[0])
        dtype = probe_dtype(fn, [x])
        axis, keepdims = consts[1], consts[2]
        if axis is NOT_CONSTANT and types[1] is NONE:
            axis = None
        if x.shape is None and axis is None and keepdims is False:
            return tensor(dtype, ())  # every axis reduced: a NumPy scalar, whatever the rank
        if x.shape is None or keepdims is NOT_CONSTANT:
            return tensor(dtype, None)
        if axis is NOT_CONSTANT:
            return tensor(dtype, (None,) * len(x.shape) if keepdims else None)
        axes = normalize_axes(axis, len(x.shape))
        if keepdims:
            return tensor(dtype, tuple(1 if i in axes else d for i, d in enumerate(x.shape)))
        return tensor(dtype, tuple(d for i, d in enumerate(x.shape) if i not in axes))

    return rule


def spell_mean(node: Node, args: Sequence[str], bind: Bind) -> Call | None:
    """``np.mean`` of float64 as the sum divided by the element count, known from the shape (a
    true division by an integer, in place for an array result); see Note [Typed calls] in
    `ir.typed_calls`."""
    spelled = reduction_operands(node)
    source = node.inputs[0].ty
    if spelled is None or not isinstance(source, TensorType) or source.dtype != "float64":
        return None
    if not source.is_complete or source.shape is None:
        return None
    axis, keepdims = spelled
    axes = normalize_axes(node.inputs[1].node.attr("value"), len(source.shape))
    count = math.prod(d for i, d in enumerate(source.shape) if i in axes and d is not None)
    if count == 0:  # np.mean warns of an empty slice
        return None
    reduce = bind(ADD_REDUCE, "aten_sum_reduce")
    total = f"{reduce}({args[0]}, {axis}, None, None, {keepdims})"
    if not is_array(node.output.ty):
        # np.mean's scalar path: the NumPy scalar sum divided by the count
        return Call(f"{total} / {count}")
    divide = bind(np.true_divide, "true_divide")
    return Call(total, then=f"{divide}({{out}}, {count}, out={{out}})", fresh=True)


TYPED_CALLS = {"mean": spell_mean}

for _name, (_fn, _spellings) in REDUCTIONS.items():
    register_op(
        f"aten::{_name}(Tensor self, Any axis=None, bool keepdims=False) -> Tensor",
        shape=reduction_rule(_fn),
        derivative=Derivative.FORMULA,
        only_reads=True,
        ufunc_reduce=UFUNC_REDUCES.get(_name),
        typed_call=TYPED_CALLS.get(_name),
        spellings=_spellings,
    )(reduction_kernel(_fn))

for _name, (_fn, _spellings) in ARG_REDUCTIONS.items():
    register_op(
        f"aten::{_name}(Tensor self, int? axis=None, bool keepdims=False) -> Tensor",
        shape=reduction_rule(_fn),
        derivative=Derivative.NONE,
        spellings=_spellings,
    )(reduction_kernel(_fn))

for _name, (_fn, _spellings) in TRUTH_REDUCTIONS.items():
    register_op(
        f"aten::{_name}(Tensor self, Any axis=None, bool keepdims=False) -> Tensor",
        shape=reduction_rule(_fn),
        derivative=Derivative.NONE,
        only_reads=True,
        spellings=_spellings,
    )(reduction_kernel(_fn))

for _name, (_fn, _spellings) in MOMENTS.items():
    register_op(
        f"aten::{_name}(Tensor self, Any axis=None, bool keepdims=False, Scalar ddof=0) -> Tensor",
        shape=reduction_rule(_fn),
        derivative=Derivative.FORMULA,
        spellings=_spellings,
    )(moment_kernel(_fn))
