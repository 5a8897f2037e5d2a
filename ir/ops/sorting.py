"""Sorting along one axis: sort and partition (differentiable: a gather by a permutation),
argpartition (indices only), and the scatter that takes their gradients back.

``aten::partition`` is computed as a gather by ``np.argpartition``, so the derivative formula,
which scatters back through that same permutation, agrees with the forward even in the
positions whose order NumPy leaves unspecified.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import numpy as np

from ir.ops.registry import Derivative, register_op
from ir.ops.scans import _flattening_rule
from ir.ops.shape_rules import as_tensor, int_sequence, tensor
from ir.types import Type


def sort(x: Any, axis: int | None, kind: str | None, stable: bool | None) -> Any:
    # The schema checks nothing about `kind`'s value; NumPy does, at run time.
    return np.sort(x, axis=axis, kind=cast(Any, kind), stable=stable)


def argpartition(x: Any, kth: Any, axis: int | None) -> Any:
    return np.argpartition(x, kth, axis=axis)


def partition(x: Any, kth: Any, axis: int | None) -> Any:
    return permute(x, np.argpartition(x, kth, axis=axis), axis)


def permute(x: Any, order: Any, axis: int | None) -> Any:
    """``take_along_axis(x, order, axis)`` (flat indices when ``axis`` is None): the adjoint of
    `unpermute`, so sort's gradient differentiates again."""
    if axis is None:
        return np.ravel(x)[order]
    return np.take_along_axis(np.asarray(x), np.asarray(order), axis)


def _permute_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    x, order = as_tensor(types[0]), as_tensor(types[1], 1)
    return tensor(x.dtype, order.shape)


def unpermute(grad: Any, shape: Any, order: Any, axis: int | None) -> Any:
    """The gradient of ``take_along_axis(x, order, axis)`` for a permutation ``order`` (flat
    indices of x when ``axis`` is None): each element of x gets the gradient of the place it
    moved to."""
    grad = np.asarray(grad)
    if axis is None:
        result = np.zeros(int(np.prod(shape)), grad.dtype)
        result[order] = grad
        return result.reshape(shape)
    result = np.zeros(shape, grad.dtype)
    np.put_along_axis(result, np.asarray(order), grad, axis)
    return result


def _unpermute_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    grad = as_tensor(types[0])
    return tensor(grad.dtype, int_sequence(types[1], consts[1]))


def _partition_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    """Like sort's: kth is checked by NumPy at run time."""
    return list(_flattening_rule(np.asarray)([types[0], types[2]], [consts[0], consts[2]]))


def _argpartition_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    return tensor("int64", as_tensor(_partition_rule(types, consts)[0]).shape)


register_op(
    "aten::sort(Tensor self, int? axis=-1, str? kind=None, bool? stable=None) -> Tensor",
    shape=_flattening_rule(np.asarray),
    derivative=Derivative.FORMULA,
    spellings={"numpy.sort": "a:self axis kind !order * stable"},
)(sort)
register_op(
    "aten::partition(Tensor self, Any kth, int? axis=-1) -> Tensor",
    shape=_partition_rule,
    derivative=Derivative.FORMULA,
    spellings={"numpy.partition": "a:self kth axis !kind !order"},
)(partition)
register_op(
    "aten::argpartition(Tensor self, Any kth, int? axis=-1) -> Tensor",
    shape=_argpartition_rule,
    derivative=Derivative.NONE,
    spellings={
        "numpy.argpartition": "a:self kth axis !kind !order",
        "ndarray.argpartition": "kth axis !kind !order",
    },
)(argpartition)
register_op(
    "aten::_unpermute(Tensor grad, Any shape, Tensor order, int? axis) -> Tensor",
    shape=_unpermute_rule,
    derivative=Derivative.FORMULA,
)(unpermute)
register_op(
    "aten::_permute(Tensor self, Tensor order, int? axis) -> Tensor",
    shape=_permute_rule,
    derivative=Derivative.FORMULA,
)(permute)
