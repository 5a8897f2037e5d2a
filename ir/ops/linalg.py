"""Products: ``aten::matmul`` (the ``@`` operator, ``np.matmul``) and ``aten::dot`` (``np.dot``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ir.errors import ShapeError
from ir.ops.promotion import probe_dtype
from ir.ops.registry import Derivative, register_op
from ir.ops.shape_rules import (
    Shape,
    as_array_like,
    as_tensor,
    broadcast_shapes,
    format_shape,
    tensor,
)
from ir.ops.spellings import BINARY_UFUNC
from ir.types import Type

_SIGNATURE = "(n?,k),(k,m?)->(n?,m?)"


def _dims_differ(a: int | None, b: int | None) -> bool:
    return a is not None and b is not None and a != b


def matmul_shape(a: Shape, b: Shape) -> Shape:
    for index, shape in enumerate((a, b)):
        if not shape:
            raise ShapeError(
                f"matmul: Input operand {index} does not have enough dimensions (has 0, gufunc "
                f"core with signature {_SIGNATURE} requires 1)"
            )
    if _dims_differ(a[-1], b[-2] if len(b) > 1 else b[0]):
        k = b[-2] if len(b) > 1 else b[0]
        raise ShapeError(
            f"matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc "
            f"signature {_SIGNATURE} (size {k} is different from {a[-1]}); "
            f"shapes {format_shape(a)} and {format_shape(b)}"
        )
    rows = a[-2:-1]
    cols = b[-1:] if len(b) > 1 else ()
    batch = broadcast_shapes(a[:-2], b[:-2])
    assert batch is not None
    return batch + rows + cols


def _matmul_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    a, b = as_tensor(types[0], 0), as_tensor(types[1], 1)
    dtype = probe_dtype(np.matmul, [a, b], ndims=[1, 1])
    if a.shape is None or b.shape is None:
        return tensor(dtype, None)
    return tensor(dtype, matmul_shape(a.shape, b.shape))


def dot_shape(a: Shape, b: Shape) -> Shape:
    if not a or not b:
        return a or b
    b_axis = len(b) - 2 if len(b) > 1 else 0
    if _dims_differ(a[-1], b[b_axis]):
        raise ShapeError(
            f"shapes {format_shape(a)} and {format_shape(b)} not aligned: "
            f"{a[-1]} (dim {len(a) - 1}) != {b[b_axis]} (dim {b_axis})"
        )
    return a[:-1] + b[:b_axis] + b[b_axis + 1 :]


def _dot_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    a, b = as_array_like(types[0], 0), as_array_like(types[1], 1)
    dtype = probe_dtype(np.dot, types)
    if a.shape is None or b.shape is None:
        return tensor(dtype, None)
    return tensor(dtype, dot_shape(a.shape, b.shape))


register_op(
    "aten::matmul(Tensor self, Tensor other) -> Tensor",
    shape=_matmul_rule,
    derivative=Derivative.FORMULA,
    spellings={"numpy.matmul": BINARY_UFUNC},
    c_order_result=True,
)(np.matmul)
register_op(
    "aten::dot(Any self, Any other) -> Tensor",
    shape=_dot_rule,
    derivative=Derivative.FORMULA,
    spellings={"numpy.dot": "a:self b:other !out", "ndarray.dot": "b:other !out"},
    c_order_result=True,
)(np.dot)
