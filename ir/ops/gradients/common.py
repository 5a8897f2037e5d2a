"""Shape rules and dtype operators that the adjoints of several families share."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ir.ops.registry import NOT_CONSTANT, Derivative, register_op
from ir.ops.shape_rules import (
    as_tensor,
    fixed,
    int_sequence,
    tensor,
)
from ir.types import (
    BOOL,
    FLOAT,
    INT,
    STR,
    TensorType,
    Type,
)


def shaped_by_operand(position: int) -> Any:
    """A rule: a tensor with the gradient's dtype and the shape given by operand ``position``."""

    def rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
        grad = as_tensor(types[0])
        return tensor(grad.dtype, int_sequence(types[position], consts[position]))

    return rule


def like_tensor_operand(position: int) -> Any:
    """A rule: a tensor with the gradient's dtype and the shape of operand ``position``."""

    def rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
        grad = as_tensor(types[0])
        return tensor(grad.dtype, as_tensor(types[position], position).shape)

    return rule


def dtype_of(x: Any) -> str:
    """The dtype NumPy gives ``x`` (``"float64"`` for a Python float), to cast gradients to."""
    return np.result_type(x).name


def _dtype_of_value(types: Sequence[Type]) -> Any:
    ty = types[0]
    if isinstance(ty, TensorType) and ty.dtype is not None:
        return ty.dtype
    names: dict[Type, str] = {FLOAT: "float64", INT: "int64", BOOL: "bool"}
    return names.get(ty, NOT_CONSTANT)


def gradient_dtype(operand: Any, result: Any) -> str:
    """The dtype of ``operand``'s gradient: its own for an array, the result's for a Python
    number, whose gradient has the precision of what it was combined with (NEP 50)."""
    if isinstance(operand, np.ndarray | np.generic):
        return operand.dtype.name
    return np.result_type(result).name


def _gradient_dtype_value(types: Sequence[Type]) -> Any:
    operand = types[0]
    if isinstance(operand, TensorType):
        return NOT_CONSTANT if operand.dtype is None else operand.dtype
    result = types[1]
    if operand in (INT, FLOAT, BOOL) and isinstance(result, TensorType) and result.dtype:
        return result.dtype
    return NOT_CONSTANT


register_op(
    "aten::_dtype_of(Any self) -> str",
    shape=fixed(STR),
    derivative=Derivative.NONE,
    value_from_types=_dtype_of_value,
)(dtype_of)


register_op(
    "aten::_gradient_dtype(Any operand, Any result) -> str",
    shape=fixed(STR),
    derivative=Derivative.NONE,
    value_from_types=_gradient_dtype_value,
)(gradient_dtype)
