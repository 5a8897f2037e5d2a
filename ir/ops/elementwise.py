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

from ir.ops.registry import Derivative, register_op
from ir.ops.shape_rules import elementwise
from ir.ops.spellings import BINARY_UFUNC, UNARY_UFUNC
from ir.types import TensorType, TupleType, Type

# name -> (NumPy function, derivative, spellings): Note [Derivatives] in `ir.ops.registry`.
# One IR operator per NumPy concept.
Elementwise = tuple[Callable[..., Any], Derivative, dict[str, str]]
BINARY: dict[str, Elementwise] = {
    "add": (np.add, Derivative.FORMULA, {"numpy.add": BINARY_UFUNC}),
    "sub": (np.subtract, Derivative.FORMULA, {"numpy.subtract": BINARY_UFUNC}),
    "mul": (np.multiply, Derivative.FORMULA, {"numpy.multiply": BINARY_UFUNC}),
    "div": (
        np.true_divide,
        Derivative.FORMULA,
        {"numpy.divide": BINARY_UFUNC, "numpy.true_divide": BINARY_UFUNC},
    ),
    "floordiv": (np.floor_divide, Derivative.NONE, {"numpy.floor_divide": BINARY_UFUNC}),
    "remainder": (
        np.remainder,
        Derivative.FORMULA,
        {"numpy.remainder": BINARY_UFUNC, "numpy.mod": BINARY_UFUNC},
    ),
    "pow": (np.power, Derivative.FORMULA, {"numpy.power": BINARY_UFUNC, "numpy.pow": BINARY_UFUNC}),
    "maximum": (np.maximum, Derivative.FORMULA, {"numpy.maximum": BINARY_UFUNC}),
    "minimum": (np.minimum, Derivative.FORMULA, {"numpy.minimum": BINARY_UFUNC}),
    "eq": (np.equal, Derivative.NONE, {"numpy.equal": BINARY_UFUNC}),
    "ne": (np.not_equal, Derivative.NONE, {"numpy.not_equal": BINARY_UFUNC}),
    "lt": (np.less, Derivative.NONE, {"numpy.less": BINARY_UFUNC}),
    "le": (np.less_equal, Derivative.NONE, {"numpy.less_equal": BINARY_UFUNC}),
    "gt": (np.greater, Derivative.NONE, {"numpy.greater": BINARY_UFUNC}),
    "ge": (np.greater_equal, Derivative.NONE, {"numpy.greater_equal": BINARY_UFUNC}),
    "logical_and": (np.logical_and, Derivative.NONE, {"numpy.logical_and": BINARY_UFUNC}),
    "logical_or": (np.logical_or, Derivative.NONE, {"numpy.logical_or": BINARY_UFUNC}),
    "logical_xor": (np.logical_xor, Derivative.NONE, {"numpy.logical_xor": BINARY_UFUNC}),
    # Bitwise on integers, logical on bools (``mask & other``): no gradient flows.
    "bitwise_and": (np.bitwise_and, Derivative.NONE, {"numpy.bitwise_and": BINARY_UFUNC}),
    "bitwise_or": (np.bitwise_or, Derivative.NONE, {"numpy.bitwise_or": BINARY_UFUNC}),
    "bitwise_xor": (np.bitwise_xor, Derivative.NONE, {"numpy.bitwise_xor": BINARY_UFUNC}),
    "arctan2": (np.arctan2, Derivative.FORMULA, {"numpy.arctan2": BINARY_UFUNC}),
    "hypot": (np.hypot, Derivative.FORMULA, {"numpy.hypot": BINARY_UFUNC}),
    "logaddexp": (np.logaddexp, Derivative.FORMULA, {"numpy.logaddexp": BINARY_UFUNC}),
    "logaddexp2": (np.logaddexp2, Derivative.FORMULA, {"numpy.logaddexp2": BINARY_UFUNC}),
    "fmax": (np.fmax, Derivative.FORMULA, {"numpy.fmax": BINARY_UFUNC}),
    "fmin": (np.fmin, Derivative.FORMULA, {"numpy.fmin": BINARY_UFUNC}),
}

UNARY: dict[str, Elementwise] = {
    "neg": (np.negative, Derivative.FORMULA, {"numpy.negative": UNARY_UFUNC}),
    "positive": (np.positive, Derivative.FORMULA, {"numpy.positive": UNARY_UFUNC}),
    "exp": (np.exp, Derivative.FORMULA, {"numpy.exp": UNARY_UFUNC}),
    "log": (np.log, Derivative.FORMULA, {"numpy.log": UNARY_UFUNC}),
    "sqrt": (np.sqrt, Derivative.FORMULA, {"numpy.sqrt": UNARY_UFUNC}),
    "sin": (np.sin, Derivative.FORMULA, {"numpy.sin": UNARY_UFUNC}),
    "cos": (np.cos, Derivative.FORMULA, {"numpy.cos": UNARY_UFUNC}),
    "tan": (np.tan, Derivative.FORMULA, {"numpy.tan": UNARY_UFUNC}),
    "tanh": (np.tanh, Derivative.FORMULA, {"numpy.tanh": UNARY_UFUNC}),
    "abs": (np.abs, Derivative.FORMULA, {"numpy.absolute": UNARY_UFUNC, "numpy.abs": UNARY_UFUNC}),
    # derivative 0 (a formula), as in TorchScript and JAX
    "sign": (np.sign, Derivative.FORMULA, {"numpy.sign": UNARY_UFUNC}),
    "reciprocal": (np.reciprocal, Derivative.FORMULA, {"numpy.reciprocal": UNARY_UFUNC}),
    "square": (np.square, Derivative.FORMULA, {"numpy.square": UNARY_UFUNC}),
    "logical_not": (np.logical_not, Derivative.NONE, {"numpy.logical_not": UNARY_UFUNC}),
    "invert": (
        np.invert,
        Derivative.NONE,
        {
            "numpy.invert": UNARY_UFUNC,
            "numpy.bitwise_not": UNARY_UFUNC,
            "numpy.bitwise_invert": UNARY_UFUNC,
        },
    ),
    "exp2": (np.exp2, Derivative.FORMULA, {"numpy.exp2": UNARY_UFUNC}),
    "expm1": (np.expm1, Derivative.FORMULA, {"numpy.expm1": UNARY_UFUNC}),
    "log2": (np.log2, Derivative.FORMULA, {"numpy.log2": UNARY_UFUNC}),
    "log10": (np.log10, Derivative.FORMULA, {"numpy.log10": UNARY_UFUNC}),
    "log1p": (np.log1p, Derivative.FORMULA, {"numpy.log1p": UNARY_UFUNC}),
    "arcsin": (np.arcsin, Derivative.FORMULA, {"numpy.arcsin": UNARY_UFUNC}),
    "arccos": (np.arccos, Derivative.FORMULA, {"numpy.arccos": UNARY_UFUNC}),
    "arctan": (np.arctan, Derivative.FORMULA, {"numpy.arctan": UNARY_UFUNC}),
    "sinh": (np.sinh, Derivative.FORMULA, {"numpy.sinh": UNARY_UFUNC}),
    "cosh": (np.cosh, Derivative.FORMULA, {"numpy.cosh": UNARY_UFUNC}),
    "arcsinh": (np.arcsinh, Derivative.FORMULA, {"numpy.arcsinh": UNARY_UFUNC}),
    "arccosh": (np.arccosh, Derivative.FORMULA, {"numpy.arccosh": UNARY_UFUNC}),
    "arctanh": (np.arctanh, Derivative.FORMULA, {"numpy.arctanh": UNARY_UFUNC}),
    "sinc": (np.sinc, Derivative.FORMULA, {"numpy.sinc": "x:self"}),
    "deg2rad": (
        np.deg2rad,
        Derivative.FORMULA,
        {"numpy.deg2rad": UNARY_UFUNC, "numpy.radians": UNARY_UFUNC},
    ),
    "rad2deg": (
        np.rad2deg,
        Derivative.FORMULA,
        {"numpy.rad2deg": UNARY_UFUNC, "numpy.degrees": UNARY_UFUNC},
    ),
    "fabs": (np.fabs, Derivative.FORMULA, {"numpy.fabs": UNARY_UFUNC}),
    # Piecewise constant, or not a number: no gradient flows through them (JAX gives zeros).
    "floor": (np.floor, Derivative.NONE, {"numpy.floor": UNARY_UFUNC}),
    "ceil": (np.ceil, Derivative.NONE, {"numpy.ceil": UNARY_UFUNC}),
    "trunc": (np.trunc, Derivative.NONE, {"numpy.trunc": UNARY_UFUNC}),
    "isnan": (np.isnan, Derivative.NONE, {"numpy.isnan": UNARY_UFUNC}),
    "isfinite": (np.isfinite, Derivative.NONE, {"numpy.isfinite": UNARY_UFUNC}),
    "isinf": (np.isinf, Derivative.NONE, {"numpy.isinf": UNARY_UFUNC}),
    "isposinf": (np.isposinf, Derivative.NONE, {"numpy.isposinf": "x:self !out"}),
    "isneginf": (np.isneginf, Derivative.NONE, {"numpy.isneginf": "x:self !out"}),
    "signbit": (np.signbit, Derivative.NONE, {"numpy.signbit": UNARY_UFUNC}),
}

for _name, (_fn, _derivative, _spellings) in BINARY.items():
    register_op(
        f"aten::{_name}(Any self, Any other) -> Tensor",
        shape=elementwise(_fn),
        derivative=_derivative,
        spellings=_spellings,
    )(_fn)

for _name, (_fn, _derivative, _spellings) in UNARY.items():
    register_op(
        f"aten::{_name}(Any self) -> Tensor",
        shape=elementwise(_fn),
        derivative=_derivative,
        spellings=_spellings,
    )(_fn)


register_op(
    "aten::where(Any condition, Any x, Any y) -> Tensor",
    shape=elementwise(np.where),
    derivative=Derivative.FORMULA,
    spellings={"numpy.where": "condition x y /"},
)(np.where)
register_op(
    "aten::clip(Any self, Any a_min, Any a_max) -> Tensor",
    shape=elementwise(np.clip),
    derivative=Derivative.FORMULA,
    spellings={
        "numpy.clip": "a:self a_min a_max !out",
        "ndarray.clip": "min:a_min max:a_max !out",
    },
)(np.clip)
register_op(
    "aten::round(Any self, int decimals=0) -> Tensor",
    shape=elementwise(np.round),
    derivative=Derivative.NONE,
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
    derivative=Derivative.FORMULA,
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
    derivative=Derivative.FORMULA,
    spellings={"numpy.nan_to_num": "x:self !copy nan posinf neginf"},
)(nan_to_num)
