"""Elementwise array operators: arithmetic, comparisons, logic, math functions, where, clip.

Each kernel is the NumPy ufunc itself. Operands are typed ``Any`` because NumPy takes an array or
a Python number on either side (``x * 2.0`` and ``2.0 * x`` are both ``aten::mul``); the shape
rule broadcasts them and finds the result dtype with NumPy's own NEP 50 promotion. Two Python
numbers give a NumPy scalar, as ``np.multiply(2, 3)`` does: Python's own ``2 * 3`` is
``prim::mul`` (`ir.ops.scalar`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ir.ops.registry import register_op
from ir.ops.shape_rules import elementwise

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
