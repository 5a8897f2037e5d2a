"""Gradients of lists: Note [Lists are values] in `ir.ops.prim`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ir.ops.prim import AUTOGRAD_ZERO, autograd_add, join_all, join_list_gradients
from ir.ops.registry import NOT_CONSTANT, Derivative, register_op
from ir.ops.shape_rules import (
    fixed,
)
from ir.types import (
    ANY,
    BOOL,
    NOTHING,
    ListType,
    TupleType,
    Type,
)


def list_index_backward(grad: Any, lst: Any, index: int) -> list[Any]:
    """The gradient of ``lst[index]`` w.r.t. the list ``lst``: zeros like each element, with
    ``grad`` at ``index``. An element may itself be a tuple or list (``[(W, b), (V, c)]``):
    its zeros are then a tuple or list of zeros, and a part of ``grad`` that is
    `AUTOGRAD_ZERO` (a part of the tuple nothing read) becomes zeros like that part, so that
    no list gradient holds the sentinel at any depth (Note [Lists are values]).

    >>> list_index_backward(np.ones(2), [np.ones(2), np.ones(2)], -1)
    [array([0., 0.]), array([1., 1.])]
    >>> list_index_backward((AUTOGRAD_ZERO, 2.0), [(np.ones(1), 1.0)], 0)
    [(array([0.]), 2.0)]
    """
    grads = [zeros_like_value(element) for element in lst]
    grads[index] = _without_sentinel(grad, lst[index])
    return grads


def _without_sentinel(grad: Any, like: Any) -> Any:
    """``grad`` with each `AUTOGRAD_ZERO` in it (at any depth) replaced by zeros like the
    matching part of ``like``."""
    if grad is AUTOGRAD_ZERO:
        return zeros_like_value(like)
    if isinstance(grad, list | tuple):
        return type(grad)(_without_sentinel(g, v) for g, v in zip(grad, like, strict=True))
    return grad


def _list_index_backward_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    lst = types[1]
    if isinstance(lst, ListType):
        return [lst]
    if isinstance(lst, TupleType):
        return [ListType(join_all(lst.elems, NOTHING))]
    return [ANY]


def list_head(lst: Any) -> list[Any]:
    """``lst[:-1]`` as a list: the gradient of the list that ``prim::ListAppend`` appended to.

    >>> list_head([1, 2, 3])
    [1, 2]
    """
    return list(lst[:-1])


def _list_head_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    lst = types[0]
    if isinstance(lst, ListType):
        return [lst]
    if isinstance(lst, TupleType):
        return [ListType(join_all(lst.elems[:-1], NOTHING))]
    return [ListType(ANY)]


def add_lists(a: Any, b: Any) -> list[Any]:
    """Two list gradients added element by element (what ``prim::AutogradAdd`` of two lists
    becomes once both are known not to be zero: list gradients never hold the sentinel). An
    element that is a tuple or list (the gradient of ``[(W, b), ...]``) is added element by
    element too, not concatenated as Python's ``+`` would.

    >>> add_lists([1, (2, 3)], [10, (20, 30)])
    [11, (22, 33)]
    """
    return [autograd_add(x, y) for x, y in zip(a, b, strict=True)]


def _add_lists_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    a, b = types
    if not isinstance(a, ListType) or not isinstance(b, ListType):
        return [ListType(ANY)]
    return [join_list_gradients(a, b)]


def is_list(sequence: Any) -> bool:
    """Whether ``sequence`` is a list (not a tuple): the formulas of ``np.stack`` and
    ``np.concatenate`` hand back a list of gradients for a list of arrays."""
    return isinstance(sequence, list)


def _is_list_value(types: Sequence[Type]) -> Any:
    if isinstance(types[0], ListType):
        return True
    if isinstance(types[0], TupleType):
        return False
    return NOT_CONSTANT


def sequence_as(parts: Any, as_list: bool) -> Any:
    """``parts`` as a list when ``as_list``, else as a tuple.

    >>> sequence_as((1, 2), True)
    [1, 2]
    """
    return list(parts) if as_list else tuple(parts)


def _sequence_as_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    parts, as_list = types[0], consts[1]
    if as_list is NOT_CONSTANT:
        return [ANY]
    if isinstance(parts, TupleType):
        return [ListType(join_all(parts.elems, NOTHING)) if as_list else parts]
    if isinstance(parts, ListType) and as_list:
        return [parts]
    return [ListType(ANY) if as_list else ANY]


def zeros_like_value(value: Any) -> Any:
    """The zero gradient of any value a gradient can flow through: zeros like an array, 0.0
    for a number, and element by element for lists and tuples (a loop tape's).

    >>> zeros_like_value([np.ones(2), 3.0])
    [array([0., 0.]), 0.0]
    """
    if isinstance(value, list | tuple):
        return type(value)(zeros_like_value(item) for item in value)
    if isinstance(value, float):
        return 0.0
    return np.zeros_like(value)


def _same_type(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    return [types[0]]


register_op(
    "aten::_list_index_backward(Any grad, Any lst, int index) -> Any",
    shape=_list_index_backward_rule,
    derivative=Derivative.FORMULA,
    read_for_type=("lst",),
)(list_index_backward)


register_op(
    "aten::_is_list(Any sequence) -> bool",
    shape=fixed(BOOL),
    derivative=Derivative.NONE,
    value_from_types=_is_list_value,
)(is_list)


register_op(
    "aten::_sequence_as(Any parts, bool as_list) -> Any",
    shape=_sequence_as_rule,
    derivative=Derivative.FORMULA,
)(sequence_as)


register_op(
    "aten::_list_head(Any lst) -> Any[]", shape=_list_head_rule, derivative=Derivative.FORMULA
)(list_head)


register_op(
    "aten::_zeros_like_value(Any value) -> Any", shape=_same_type, derivative=Derivative.NONE
)(zeros_like_value)


register_op(
    "aten::_add_lists(Any a, Any b) -> Any[]", shape=_add_lists_rule, derivative=Derivative.FORMULA
)(add_lists)
