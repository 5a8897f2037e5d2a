"""The writes that derivative formulas of the scatters (`ir.ops.scatter`) use, and the adjoints
of repeated writes: the last write to an element wins."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ir.ops.gradients.common import shaped_by_operand
from ir.ops.gradients.indexing import index_tuple_rule
from ir.ops.registry import NOT_CONSTANT, OPS, Derivative, register_op
from ir.ops.shape_rules import (
    as_tensor,
    same_shape,
)
from ir.types import (
    TensorType,
    TupleType,
    Type,
)


def _index_key(indices: Any) -> Any:
    """The subscript ``aten::index`` builds from its index operands (None is ``:``)."""
    return tuple(slice(None) if item is None else item for item in indices)


def index_put_tuple(x: Any, values: Any, indices: Any) -> Any:
    """``aten::index_put`` with its index operands packed in one tuple: ``x`` with
    ``x[indices] = values`` written, a repeated position keeping the last value."""
    result = np.array(x, copy=True)
    result[_index_key(indices)] = values
    return result


def add_at_tuple(x: Any, values: Any, indices: Any) -> Any:
    """``aten::add_at`` with its index operands packed in one tuple: ``np.add.at`` on a copy."""
    result = np.array(x, copy=True)
    np.add.at(result, _index_key(indices), values)
    return result


def _index_put_tuple_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    return _unpacked_rule("aten::index_put", types, consts, fixed=2)


def _add_at_tuple_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    return _unpacked_rule("aten::add_at", types, consts, fixed=2)


def _unpacked_rule(op: str, types: Sequence[Type], consts: Sequence[Any], fixed: int) -> list[Type]:
    """The rule of variadic ``op`` applied to a helper's operands, whose last one packs the
    variadic operands in a tuple; the result is like operand 0 when the tuple's type is not
    known."""
    packed = types[fixed]
    if not isinstance(packed, TupleType):
        x = as_tensor(types[0])
        return [TensorType(x.dtype, x.shape)]
    const = consts[fixed]
    items = const if const is not NOT_CONSTANT else (NOT_CONSTANT,) * len(packed.elems)
    rule = OPS[op].shape
    assert rule is not None
    return list(rule([*types[:fixed], *packed.elems], [*consts[:fixed], *items]))


def zero_written(grad: Any, indices: Any) -> Any:
    """The gradient ``aten::index_put`` sends to ``self``: zero wherever the write landed,
    since those old values were overwritten."""
    result = np.array(grad, copy=True)
    result[_index_key(indices)] = 0
    return result


def _last_writes(shape: tuple[int, ...], key: Any) -> Any:
    """A mask over ``x[key]`` for an ``x`` of ``shape``: True at the element that writes each
    position last when ``x[key] = values`` runs (NumPy writes in C order of the indexed result,
    so a repeated position keeps the value written last)."""
    positions = np.arange(math.prod(shape)).reshape(shape)[key]
    flat = np.ravel(positions)
    _, first_from_the_end = np.unique(flat[::-1], return_index=True)
    last = np.zeros(flat.size, dtype=bool)
    last[flat.size - 1 - first_from_the_end] = True
    return last.reshape(np.shape(positions))


def gather_last_written(grad: Any, indices: Any) -> Any:
    """The gradient ``aten::index_put`` sends to the values it writes, before undoing their
    broadcasting: ``grad[indices]``, except that a value a later one overwrote gets 0."""
    grad = np.asarray(grad)
    key = _index_key(indices)
    return np.where(_last_writes(grad.shape, key), grad[key], np.zeros((), grad.dtype))


def scatter_last_written(grad: Any, shape: Any, indices: Any) -> Any:
    """The adjoint of `gather_last_written`: zeros of ``shape`` holding ``grad`` where
    ``indices`` write, each repeated position the last of its values."""
    result = np.zeros(shape, np.result_type(grad))
    result[_index_key(indices)] = grad
    return result


register_op(
    "aten::_index_put_tuple(Tensor self, Any values, Any indices) -> Tensor",
    shape=_index_put_tuple_rule,
    derivative=Derivative.REFUSED,
)(index_put_tuple)


register_op(
    "aten::_add_at_tuple(Tensor self, Any values, Any indices) -> Tensor",
    shape=_add_at_tuple_rule,
    derivative=Derivative.REFUSED,
)(add_at_tuple)


register_op(
    "aten::_zero_written(Tensor grad, Any indices) -> Tensor",
    shape=same_shape,
    derivative=Derivative.FORMULA,
)(zero_written)


register_op(
    "aten::_gather_last_written(Tensor grad, Any indices) -> Tensor",
    shape=index_tuple_rule,
    derivative=Derivative.FORMULA,
)(gather_last_written)


register_op(
    "aten::_scatter_last_written(Tensor grad, Any shape, Any indices) -> Tensor",
    shape=shaped_by_operand(1),
    derivative=Derivative.FORMULA,
)(scatter_last_written)
