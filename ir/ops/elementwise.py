"""Elementwise array operators: arithmetic, comparisons, logic, math functions, rounding, tests
for NaN and infinity, where, clip, nan_to_num, round.

Each kernel is the NumPy ufunc itself. Operands are typed ``Any`` because NumPy takes an array or
a Python number on either side (``x * 2.0`` and ``2.0 * x`` are both ``aten::mul``); the shape
rule broadcasts them and finds the result dtype with NumPy's own NEP 50 promotion. Two Python
numbers give a NumPy scalar, as ``np.multiply(2, 3)`` does: Python's own ``2 * 3`` is
``prim::mul`` (`ir.ops.scalar`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ir.ops.registry import register_op
from ir.ops.shape_rules import elementwise
from ir.ops.spellings import BINARY_UFUNC, UNARY_UFUNC
from ir.types import TensorType, TupleType, Type

# name -> (NumPy function, differentiable, spellings). One IR operator per NumPy concept.
Elementwise = tuple[Callable[..., Any], bool, dict[str, str]]
BINARY: dict[str, Elementwise] = {
    "add": (np.add, True, {"numpy.add": BINARY_UFUNC}),
    "sub": (np.subtract, True, {"numpy.subtract": BINARY_UFUNC}),
    "mul": (np.multiply, True, {"numpy.multiply": BINARY_UFUNC}),
    "div": (
        np.true_divide,
        True,
        {"numpy.divide": BINARY_UFUNC, "numpy.true_divide": BINARY_UFUNC},
    ),
    "floordiv": (np.floor_divide, False, {"numpy.floor_divide": BINARY_UFUNC}),
    "remainder": (np.remainder, True, {"numpy.remainder": BINARY_UFUNC, "numpy.mod": BINARY_UFUNC}),
    "pow": (np.power, True, {"numpy.power": BINARY_UFUNC, "numpy.pow": BINARY_UFUNC}),
    "maximum": (np.maximum, True, {"numpy.maximum": BINARY_UFUNC}),
    "minimum": (np.minimum, True, {"numpy.minimum": BINARY_UFUNC}),
    "eq": (np.equal, False, {"numpy.equal": BINARY_UFUNC}),
    "ne": (np.not_equal, False, {"numpy.not_equal": BINARY_UFUNC}),
    "lt": (np.less, False, {"numpy.less": BINARY_UFUNC}),
    "le": (np.less_equal, False, {"numpy.less_equal": BINARY_UFUNC}),
    "gt": (np.greater, False, {"numpy.greater": BINARY_UFUNC}),
    "ge": (np.greater_equal, False, {"numpy.greater_equal": BINARY_UFUNC}),
    "logical_and": (np.logical_and, False, {"numpy.logical_and": BINARY_UFUNC}),
    "logical_or": (np.logical_or, False, {"numpy.logical_or": BINARY_UFUNC}),
    "logical_xor": (np.logical_xor, False, {"numpy.logical_xor": BINARY_UFUNC}),
    "arctan2": (np.arctan2, True, {"numpy.arctan2": BINARY_UFUNC}),
    "hypot": (np.hypot, True, {"numpy.hypot": BINARY_UFUNC}),
    "logaddexp": (np.logaddexp, True, {"numpy.logaddexp": BINARY_UFUNC}),
    "logaddexp2": (np.logaddexp2, True, {"numpy.logaddexp2": BINARY_UFUNC}),
    "fmax": (np.fmax, True, {"numpy.fmax": BINARY_UFUNC}),
    "fmin": (np.fmin, True, {"numpy.fmin": BINARY_UFUNC}),
}

UNARY: dict[str, Elementwise] = {
    "neg": (np.negative, True, {"numpy.negative": UNARY_UFUNC}),
    "positive": (np.positive, True, {"numpy.positive": UNARY_UFUNC}),
    "exp": (np.exp, True, {"numpy.exp": UNARY_UFUNC}),
    "log": (np.log, True, {"numpy.log": UNARY_UFUNC}),
    "sqrt": (np.sqrt, True, {"numpy.sqrt": UNARY_UFUNC}),
    "sin": (np.sin, True, {"numpy.sin": UNARY_UFUNC}),
    "cos": (np.cos, True, {"numpy.cos": UNARY_UFUNC}),
    "tan": (np.tan, True, {"numpy.tan": UNARY_UFUNC}),
    "tanh": (np.tanh, True, {"numpy.tanh": UNARY_UFUNC}),
    "abs": (np.abs, True, {"numpy.absolute": UNARY_UFUNC, "numpy.abs": UNARY_UFUNC}),
    # derivative 0 (a formula), as in TorchScript and JAX
    "sign": (np.sign, True, {"numpy.sign": UNARY_UFUNC}),
    "reciprocal": (np.reciprocal, True, {"numpy.reciprocal": UNARY_UFUNC}),
    "square": (np.square, True, {"numpy.square": UNARY_UFUNC}),
    "logical_not": (np.logical_not, False, {"numpy.logical_not": UNARY_UFUNC}),
    "exp2": (np.exp2, True, {"numpy.exp2": UNARY_UFUNC}),
    "expm1": (np.expm1, True, {"numpy.expm1": UNARY_UFUNC}),
    "log2": (np.log2, True, {"numpy.log2": UNARY_UFUNC}),
    "log10": (np.log10, True, {"numpy.log10": UNARY_UFUNC}),
    "log1p": (np.log1p, True, {"numpy.log1p": UNARY_UFUNC}),
    "arcsin": (np.arcsin, True, {"numpy.arcsin": UNARY_UFUNC}),
    "arccos": (np.arccos, True, {"numpy.arccos": UNARY_UFUNC}),
    "arctan": (np.arctan, True, {"numpy.arctan": UNARY_UFUNC}),
    "sinh": (np.sinh, True, {"numpy.sinh": UNARY_UFUNC}),
    "cosh": (np.cosh, True, {"numpy.cosh": UNARY_UFUNC}),
    "arcsinh": (np.arcsinh, True, {"numpy.arcsinh": UNARY_UFUNC}),
    "arccosh": (np.arccosh, True, {"numpy.arccosh": UNARY_UFUNC}),
    "arctanh": (np.arctanh, True, {"numpy.arctanh": UNARY_UFUNC}),
    "sinc": (np.sinc, True, {"numpy.sinc": "x:self"}),
    "deg2rad": (np.deg2rad, True, {"numpy.deg2rad": UNARY_UFUNC, "numpy.radians": UNARY_UFUNC}),
    "rad2deg": (np.rad2deg, True, {"numpy.rad2deg": UNARY_UFUNC, "numpy.degrees": UNARY_UFUNC}),
    "fabs": (np.fabs, True, {"numpy.fabs": UNARY_UFUNC}),
    # Piecewise constant, or not a number: no gradient flows through them (JAX gives zeros).
    "floor": (np.floor, False, {"numpy.floor": UNARY_UFUNC}),
    "ceil": (np.ceil, False, {"numpy.ceil": UNARY_UFUNC}),
    "trunc": (np.trunc, False, {"numpy.trunc": UNARY_UFUNC}),
    "isnan": (np.isnan, False, {"numpy.isnan": UNARY_UFUNC}),
    "isfinite": (np.isfinite, False, {"numpy.isfinite": UNARY_UFUNC}),
    "isinf": (np.isinf, False, {"numpy.isinf": UNARY_UFUNC}),
}

for _name, (_fn, _differentiable, _spellings) in BINARY.items():
    register_op(
        f"aten::{_name}(Any self, Any other) -> Tensor",
        shape=elementwise(_fn),
        differentiable=_differentiable,
        spellings=_spellings,
    )(_fn)

for _name, (_fn, _differentiable, _spellings) in UNARY.items():
    register_op(
        f"aten::{_name}(Any self) -> Tensor",
        shape=elementwise(_fn),
        differentiable=_differentiable,
        spellings=_spellings,
    )(_fn)


register_op(
    "aten::where(Any condition, Any x, Any y) -> Tensor",
    shape=elementwise(np.where),
    spellings={"numpy.where": "condition x y /"},
)(np.where)
register_op(
    "aten::clip(Any self, Any a_min, Any a_max) -> Tensor",
    shape=elementwise(np.clip),
    spellings={
        "numpy.clip": "a:self a_min a_max !out",
        "ndarray.clip": "min:a_min max:a_max !out",
    },
)(np.clip)
register_op(
    "aten::round(Any self, int decimals=0) -> Tensor",
    shape=elementwise(np.round),
    differentiable=False,
    spellings={
        "numpy.round": "a:self decimals !out",
        "numpy.around": "a:self decimals !out",
        "ndarray.round": "decimals !out",
    },
)(np.round)


def _frexp_rule(types: Sequence[Type], consts: Sequence[Any]) -> Sequence[Type]:
    (like,) = elementwise(np.positive)(types, consts)
    assert isinstance(like, TensorType)
    dtype = None if like.dtype is None else np.frexp(np.zeros((), like.dtype))[0].dtype.name
    return [TupleType((TensorType(dtype, like.shape), TensorType("int32", like.shape)))]


# np.frexp returns two arrays: the mantissa, differentiable, and the integer exponent, not
# (see Note [Trimmed gradients] in `autodiff.differentiate`).
register_op(
    "aten::frexp(Any self) -> Tensor[]",
    shape=_frexp_rule,
    spellings={"numpy.frexp": UNARY_UFUNC},
)(np.frexp)


def nan_to_num(x: Any, nan: Any, posinf: Any, neginf: Any) -> Any:
    """``np.nan_to_num`` without its ``copy`` flag: always a new array."""
    return np.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)


_like_nan_to_num = elementwise(np.nan_to_num)


def _nan_to_num_rule(types: Sequence[Type], consts: Sequence[Any]) -> Sequence[Type]:
    """Like ``self``: the replacement values take no part in the result's dtype."""
    return _like_nan_to_num(types[:1], consts[:1])


register_op(
    "aten::nan_to_num(Any self, Scalar nan=0.0, Scalar? posinf=None, Scalar? neginf=None)"
    " -> Tensor",
    shape=_nan_to_num_rule,
    spellings={"numpy.nan_to_num": "x:self !copy nan posinf neginf"},
)(nan_to_num)
