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
from ir.types import TensorType, TupleType, Type

# name -> (NumPy function, differentiable). One IR operator per NumPy concept.
BINARY: dict[str, tuple[Callable[..., Any], bool]] = {
    "add": (np.add, True),
    "sub": (np.subtract, True),
    "mul": (np.multiply, True),
    "div": (np.true_divide, True),
    "floordiv": (np.floor_divide, False),
    "remainder": (np.remainder, True),
    "pow": (np.power, True),
    "maximum": (np.maximum, True),
    "minimum": (np.minimum, True),
    "eq": (np.equal, False),
    "ne": (np.not_equal, False),
    "lt": (np.less, False),
    "le": (np.less_equal, False),
    "gt": (np.greater, False),
    "ge": (np.greater_equal, False),
    "logical_and": (np.logical_and, False),
    "logical_or": (np.logical_or, False),
    "logical_xor": (np.logical_xor, False),
    "arctan2": (np.arctan2, True),
    "hypot": (np.hypot, True),
    "logaddexp": (np.logaddexp, True),
    "logaddexp2": (np.logaddexp2, True),
    "fmax": (np.fmax, True),
    "fmin": (np.fmin, True),
}

UNARY: dict[str, tuple[Callable[..., Any], bool]] = {
    "neg": (np.negative, True),
    "positive": (np.positive, True),
    "exp": (np.exp, True),
    "log": (np.log, True),
    "sqrt": (np.sqrt, True),
    "sin": (np.sin, True),
    "cos": (np.cos, True),
    "tan": (np.tan, True),
    "tanh": (np.tanh, True),
    "abs": (np.abs, True),
    "sign": (np.sign, True),  # derivative 0 (a formula), as in TorchScript and JAX
    "reciprocal": (np.reciprocal, True),
    "square": (np.square, True),
    "logical_not": (np.logical_not, False),
    "exp2": (np.exp2, True),
    "expm1": (np.expm1, True),
    "log2": (np.log2, True),
    "log10": (np.log10, True),
    "log1p": (np.log1p, True),
    "arcsin": (np.arcsin, True),
    "arccos": (np.arccos, True),
    "arctan": (np.arctan, True),
    "sinh": (np.sinh, True),
    "cosh": (np.cosh, True),
    "arcsinh": (np.arcsinh, True),
    "arccosh": (np.arccosh, True),
    "arctanh": (np.arctanh, True),
    "sinc": (np.sinc, True),
    "deg2rad": (np.deg2rad, True),
    "rad2deg": (np.rad2deg, True),
    "fabs": (np.fabs, True),
    # Piecewise constant, or not a number: no gradient flows through them (JAX gives zeros).
    "floor": (np.floor, False),
    "ceil": (np.ceil, False),
    "trunc": (np.trunc, False),
    "isnan": (np.isnan, False),
    "isfinite": (np.isfinite, False),
    "isinf": (np.isinf, False),
}

for _name, (_fn, _differentiable) in BINARY.items():
    register_op(
        f"aten::{_name}(Any self, Any other) -> Tensor",
        shape=elementwise(_fn),
        differentiable=_differentiable,
    )(_fn)

for _name, (_fn, _differentiable) in UNARY.items():
    register_op(
        f"aten::{_name}(Any self) -> Tensor",
        shape=elementwise(_fn),
        differentiable=_differentiable,
    )(_fn)


register_op("aten::where(Any condition, Any x, Any y) -> Tensor", shape=elementwise(np.where))(
    np.where
)
register_op("aten::clip(Any self, Any a_min, Any a_max) -> Tensor", shape=elementwise(np.clip))(
    np.clip
)
register_op(
    "aten::round(Any self, int decimals=0) -> Tensor",
    shape=elementwise(np.round),
    differentiable=False,
)(np.round)


def _frexp_rule(types: Sequence[Type], consts: Sequence[Any]) -> Sequence[Type]:
    (like,) = elementwise(np.positive)(types, consts)
    assert isinstance(like, TensorType)
    dtype = None if like.dtype is None else np.frexp(np.zeros((), like.dtype))[0].dtype.name
    return [TupleType((TensorType(dtype, like.shape), TensorType("int32", like.shape)))]


# np.frexp returns two arrays: the mantissa, differentiable, and the integer exponent, not
# (see Note [Trimmed gradients] in `autodiff.differentiate`).
register_op("aten::frexp(Any self) -> Tensor[]", shape=_frexp_rule)(np.frexp)


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
)(nan_to_num)
