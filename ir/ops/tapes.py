"""Tapes: where a differentiated loop's forward keeps, per iteration, what its backward reads.

See Note [Loop tapes] in `autodiff.control_flow`. A tape is created before the loop, carried
through it, written once per iteration and read back, in reverse order, by the backward loop:

    prim::TapeArray(int length, Any row_shape, str dtype) -> Tensor
        a preallocated ``(max(length, 0), *row_shape)`` array of zeros, for a value of fixed
        shape in a loop whose trip count is known when it starts; row ``i`` holds iteration
        ``i``'s value. Zeros, not ``np.empty``: a row a branch did not write is never read, but
        the tape is an output of ``f``, and every executor and tier must give the same bits
    prim::TapeWrite(Tensor tape, int index, Any value) -> Tensor
        ``tape[index] = value`` in place, returning ``tape``; a None value (a branch that did
        not define it: prim::Uninitialized) leaves the row unwritten, as nothing reads it
    prim::TapeList() -> Any
        an empty Python list, for values of varying shape or loops of unknown length
    prim::TapePush(Any tape, Any value) -> Any
        ``tape.append(value)`` in place, returning ``tape``
    prim::Uninitialized() -> Any
        the value a prim::If branch yields for a value only its other branch defines (None)

Reading uses the ordinary operators: ``aten::select(tape, 0, k)`` and ``prim::ListIndex``.

The writes mutate their operand, which SSA passes must not see as two values: the tape value
they read is read by nothing else (the construction guarantees it), and the creators are
`fresh` (Note in `ir.ops.registry`), so that CSE never makes two tapes one and constant
propagation never turns a tape into a constant it would then write into.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ir.ops.registry import Derivative, register_op
from ir.ops.shape_rules import known_int
from ir.types import ListType, TensorType, Type, join_types


def tape_array(length: int, row_shape: Sequence[int], dtype: str) -> np.ndarray:
    return np.zeros((max(int(length), 0), *row_shape), dtype=dtype)


def tape_write(tape: np.ndarray, index: int, value: Any) -> np.ndarray:
    if value is not None:
        tape[index] = value
    return tape


def tape_list() -> list[Any]:
    return []


def tape_push(tape: list[Any], value: Any) -> list[Any]:
    tape.append(value)
    return tape


def uninitialized() -> None:
    return None


def _tape_array_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    length, row_shape, dtype = consts
    known_length = known_int(length)
    rows = None if known_length is None else max(known_length, 0)
    if not isinstance(row_shape, tuple) or not isinstance(dtype, str):
        return [TensorType(dtype if isinstance(dtype, str) else None, None)]
    return [TensorType(dtype, (rows, *row_shape))]


def _same_as_tape(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    return [types[0]]


def _push_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    tape, value = types
    return [ListType(join_types(tape.elem, value)) if isinstance(tape, ListType) else tape]


# The creators take no value a gradient could flow from. A list tape's push has ListAppend's
# formula (differentiating a gradient's loops again); an array tape's write has none, as only
# `stack-tapes` makes it, after the gradient graphs that are differentiated again are built.
register_op(
    "prim::TapeArray(int length, Any row_shape, str dtype) -> Tensor",
    shape=_tape_array_rule,
    fresh=True,
    derivative=Derivative.NONE,
)(tape_array)
register_op(
    "prim::TapeWrite(Tensor tape, int index, Any value) -> Tensor",
    shape=_same_as_tape,
    derivative=Derivative.STRUCTURAL,
)(tape_write)
register_op("prim::TapeList() -> Any", shape=None, fresh=True, derivative=Derivative.NONE)(
    tape_list
)
register_op(
    "prim::TapePush(Any tape, Any value) -> Any", shape=_push_rule, derivative=Derivative.FORMULA
)(tape_push)
register_op("prim::Uninitialized() -> Any", shape=None, fresh=True, derivative=Derivative.NONE)(
    uninitialized
)
