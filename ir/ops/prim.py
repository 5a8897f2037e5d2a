"""prim:: operators for structure: constants, control flow, tuples and lists, autograd glue.

Control flow follows TorchScript:

    prim::If(bool cond) -> Any...
        block0() -> (then results), block1() -> (else results); node outputs = taken results
    prim::Loop(int max_trip_count, bool initial_condition, Any... carried) -> Any...
        block0(%i, %carried...) -> (%continue, %carried...); outputs = final carried values.
        Runs while ``i < max_trip_count and condition``; a ``while`` loop passes a huge count.
    prim::GradOf(Any... grads) -> Any...                  attribute name="aten::mul"
        block0() -> (input gradients). See Note [GradOf semantics] in `ir.interpreter`.
    prim::CallFunction(Any... args) -> Any...            attribute callee="helper": calls graph
        @helper of the module with ``args`` (the inline pass replaces it by a copy of the body);
        without ``callee``, calls the Python callable or Graph ``args[0]`` with the rest.
        Impure, since nothing is known about the callee
    prim::Reverse() -> Any...                             the reverse program of
        `autodiff.differentiate` before lambda lifting; running a graph skips it
    prim::Native(Any... inputs) -> Any...                 a region the native tier compiles
        block0(%inputs...) -> (outputs): the block reads nothing but its parameters, one per
        operand; every executor runs it as if inlined. See Note [Native regions] in
        `passes.native_regions`

Note [Lists are values]
A Python list in scripted code is an SSA value like any other. ``hs.append(v)`` is
``%hs.1 = prim::ListAppend(%hs, %v)``: a new list, a copy of ``%hs`` with ``%v`` at its end,
and the name ``hs`` is rebound to it (so a loop that appends carries the list). No two values
share one list object, which keeps lists pure for CSE, DCE and differentiation. The price is
aliasing: after ``a = hs; hs.append(x)`` Python's ``a`` sees ``x`` too, a scripted ``a`` does
not. The gradient of a list is a list of the same length whose elements are the gradients of
its elements, zeros where an element got none, never `AUTOGRAD_ZERO` inside the list, at any
depth (the gradient of ``params = [(W1, b1), (W2, b2)]`` holds no sentinel in its tuples
either): specialize-autograd-zero relies on it (an element of a list that is not the sentinel
is not either, nor are its parts, and two such lists add with ``aten::_add_lists``).

These have no kernel: `ir.interpreter` runs them. Tuple, list and autograd-add operators are
ordinary functions of their operands and have kernels; prim::AutogradZero has none because its
value, `AUTOGRAD_ZERO`, is not a constant that IR text can spell.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from ir.errors import ProgramRaised, ShapeError
from ir.ops.call_spelling import as_python_operator
from ir.ops.registry import NOT_CONSTANT, Derivative, Holds, register_op, register_structural
from ir.ops.shape_rules import elementwise, fixed, known_int
from ir.types import (
    ANY,
    NONE,
    NOTHING,
    STR,
    ListType,
    TensorType,
    TupleType,
    Type,
    join_types,
)


class AutogradZeroType:
    """The type of `AUTOGRAD_ZERO`: a gradient known to be zero, whatever its shape."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "AUTOGRAD_ZERO"


AUTOGRAD_ZERO = AutogradZeroType()


def autograd_add(a: Any, b: Any) -> Any:
    """TorchScript's truth table: zero + b = b, a + zero = a, otherwise a + b (element by
    element for the gradients of tuples, such as what ``np.split`` returns, and of lists).

    >>> autograd_add([1.0, 2.0], [10.0, 20.0])
    [11.0, 22.0]
    """
    if a is AUTOGRAD_ZERO:
        return b
    if b is AUTOGRAD_ZERO:
        return a
    if a is None or b is None:  # Note [Trimmed gradients] in `autodiff.differentiate`
        return b if a is None else a
    if isinstance(a, tuple):
        return tuple(autograd_add(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, list):
        return [autograd_add(x, y) for x, y in zip(a, b, strict=True)]
    return a + b


def write_back(target: Any, value: Any) -> tuple[()]:
    """What a graph leaves in an argument it wrote to (Note [Functionalisation] in
    `passes.functionalize`): the caller's array receives the final contents."""
    np.copyto(target, value)
    return ()


def print_values(sep: str | None, end: str | None, flush: bool, *values: Any) -> tuple[()]:
    """``print(*values, sep=sep, end=end, flush=flush)``, at run time, with the values the run
    computed (TorchScript's prim::Print, ``jax.debug.print``)."""
    print(*values, sep=sep, end=end, flush=flush)
    return ()


def raise_exception(kind: str, message: str | None) -> tuple[()]:
    """The program's ``raise ValueError(message)`` or failed ``assert``: the executor raises
    the exception ``kind`` names, located at the node (`ir.errors.located_user_exception`)."""
    raise ProgramRaised(kind, message)


def format_values(template: str, *values: Any) -> str:
    """An f-string's value: ``template.format(*values)``, the template written from its
    pieces (Note [f-strings] in `frontend.parse`)."""
    return template.format(*values)


def written_argument(value: Any, target: Any) -> Any:
    """The argument ``target`` once prim::WriteBack has left ``value`` in it: the array itself,
    so that a result of the function that NumPy gives as the argument (or a view of it) is that
    very array (Note [Returned arguments] in `passes.returned_arguments`). ``value`` is only
    read by the derivative, which is that of ``value``.

    >>> x = np.zeros(2)
    >>> written_argument(x + 1, x) is x
    True
    """
    return target


def copy_if_shared(value: Any, *written: np.ndarray) -> Any:
    """``value`` with every array in it (looking into tuples and lists) that may share memory
    with one of ``written`` replaced by a copy; ``value`` itself when none may. ``f`` saves
    what ``df`` reads this way before it writes its arguments back (Note [Arguments written
    to] in `autodiff.lambda_lift`).

    >>> x, y = np.zeros(3), np.ones(2)
    >>> saved = copy_if_shared([x[1:], y], x)
    >>> np.shares_memory(saved[0], x), saved[1] is y
    (False, True)
    """
    if isinstance(value, np.ndarray):
        if any(np.may_share_memory(value, array) for array in written):
            return value.copy()
        return value
    if isinstance(value, tuple | list):
        saved = [copy_if_shared(item, *written) for item in value]
        if all(new is old for new, old in zip(saved, value, strict=True)):
            return value
        return tuple(saved) if isinstance(value, tuple) else saved
    return value


def make_tuple(*elems: Any) -> tuple[Any, ...]:
    return elems


def make_list(*elems: Any) -> list[Any]:
    return list(elems)


def list_append(lst: Any, elem: Any) -> list[Any]:
    """``lst.append(elem)`` as a value: a new list, ``lst`` itself unchanged (Note [Lists are
    values]).

    >>> hs = [1]
    >>> list_append(hs, 2), hs
    ([1, 2], [1])
    """
    return [*lst, elem]


def list_index(lst: Any, i: int) -> Any:
    """``lst[i]``: an element of a list (the kernel of prim::ListIndex, which formulas call
    by this name)."""
    return lst[i]


def unpack(sequence: Any) -> tuple[Any, ...]:
    return tuple(sequence)


def slice_sequence(sequence: Any, start: int | None, stop: int | None, step: int | None) -> Any:
    return sequence[start:stop:step]


def _concatenated_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    a, b = types
    if isinstance(a, TupleType) and isinstance(b, TupleType):
        return [TupleType(a.elems + b.elems)]
    elements = [t.elem if isinstance(t, ListType) else join_all(_items(t), NOTHING) for t in types]
    return [ListType(join_all(elements, NOTHING))]


def _items(ty: Type) -> tuple[Type, ...]:
    return ty.elems if isinstance(ty, TupleType) else (ANY,)


def _same_type_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    return [types[0]]


def _written_argument_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    return [types[1]]


def _tuple_construct_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    return [TupleType(tuple(types))]


def join_all(types: Sequence[Type], empty: Type) -> Type:
    """The join of ``types`` (``empty`` when there are none)."""
    if not types:
        return empty
    joined = types[0]
    for ty in types[1:]:
        joined = join_types(joined, ty)
    return joined


def _list_construct_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    return [ListType(join_all(types, NOTHING))]


def _list_append_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    lst, elem = types
    if isinstance(lst, ListType):
        return [ListType(join_types(lst.elem, elem))]
    if isinstance(lst, TupleType):
        return [ListType(join_all([*lst.elems, elem], NOTHING))]
    return [ListType(ANY)]


def _unpack_rule(types: Sequence[Type], consts: Sequence[Any]) -> Sequence[Type]:
    return types[0].elems if isinstance(types[0], TupleType) else ()


def _element_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    sequence, position = types[0], known_int(consts[1])
    if sequence == ListType(NOTHING):
        # Nothing appended yet, as in the first pass over a loop body that reads what the
        # previous iteration appended: unknown until the carried list's type settles.
        return [ANY]
    if isinstance(sequence, ListType):
        return [sequence.elem]
    if not isinstance(sequence, TupleType):
        return [ANY]
    if position is None:
        return [join_all(sequence.elems, ANY)]
    if not -len(sequence.elems) <= position < len(sequence.elems):
        raise ShapeError(f"tuple index {position} out of range for a tuple of type {sequence}")
    return [sequence.elems[position]]


def _slice_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    sequence = types[0]
    bounds = [None if t is NONE else c for t, c in zip(types[1:], consts[1:], strict=True)]
    if isinstance(sequence, TupleType) and NOT_CONSTANT not in bounds:
        return [TupleType(sequence.elems[slice(*bounds)])]
    if isinstance(sequence, TupleType):
        return [ListType(join_all(sequence.elems, ANY))]
    return [sequence]


def join_list_gradients(a: ListType, b: ListType) -> ListType:
    """The type of the sum of two gradients of one list. They are alike element for element,
    so a side whose element type is not known (what np.stack's gradient gives for a list of
    unknown length) says nothing more than the other.

    >>> join_list_gradients(ListType(ANY), ListType(FLOAT))
    ListType(elem=NamedType(name='float'))
    """
    if a.elem is ANY:
        return b
    if b.elem is ANY:
        return a
    return ListType(join_types(a.elem, b.elem))


def _autograd_add_rule(types: Sequence[Type], consts: Sequence[Any]) -> Sequence[Type]:
    a, b = types
    if a is ANY or b is ANY:  # an AUTOGRAD_ZERO typed Any adds nothing
        return [b if a is ANY else a]
    if isinstance(a, ListType) and isinstance(b, ListType):
        return [join_list_gradients(a, b)]
    if isinstance(a, TensorType) or isinstance(b, TensorType):
        return _ADD_RULE(types, consts)
    return [join_types(a, b)]


_ADD_RULE = elementwise(operator.add)


register_structural(
    "prim::Constant() -> Any",
    pure=True,
    num_blocks=0,
    cheap_to_recompute=True,
    derivative=Derivative.NONE,
)
register_structural(
    "prim::If(bool cond) -> Any...", pure=True, num_blocks=2, derivative=Derivative.STRUCTURAL
)
register_structural(
    "prim::Loop(int max_trip_count, bool initial_condition, Any... carried) -> Any...",
    pure=True,
    num_blocks=1,
    derivative=Derivative.STRUCTURAL,
)
register_structural(
    "prim::GradOf(Any... grads) -> Any...",
    pure=True,
    num_blocks=1,
    derivative=Derivative.STRUCTURAL,
)
register_structural(
    "prim::Native(Any... inputs) -> Any...",
    pure=True,
    num_blocks=1,
    derivative=Derivative.STRUCTURAL,
)
register_structural(
    "prim::AutogradZero() -> Any", pure=True, num_blocks=0, derivative=Derivative.STRUCTURAL
)
# Inlining removes every call before differentiation (a gradient that met one would be refused).
register_structural(
    "prim::CallFunction(Any... args) -> Any...",
    pure=False,
    num_blocks=0,
    derivative=Derivative.STRUCTURAL,
)
register_structural(
    "prim::Reverse() -> Any...", pure=False, num_blocks=1, derivative=Derivative.STRUCTURAL
)

register_op(
    "prim::TupleConstruct(Any... elems) -> Any",
    shape=_tuple_construct_rule,
    derivative=Derivative.STRUCTURAL,
    holds=Holds.PACKED,
)(make_tuple)
register_op(
    "prim::TupleUnpack(Any tup) -> Any...",
    shape=_unpack_rule,
    derivative=Derivative.STRUCTURAL,
    holds=Holds.ELEMENTS,
)(unpack)
register_op(
    "prim::TupleIndex(Any tup, int i) -> Any",
    shape=_element_rule,
    derivative=Derivative.STRUCTURAL,
    may_raise=True,
    holds=Holds.ELEMENTS,
)(operator.getitem)
register_op(
    "prim::TupleSlice(Any tup, int? start, int? stop, int? step) -> Any",
    shape=_slice_rule,
    derivative=Derivative.STRUCTURAL,
    holds=Holds.ELEMENTS,
)(slice_sequence)
# ``a + b`` of two tuples of ints whose lengths are only known once specialised: shapes, as in
# ``x.reshape(x.shape + (1,))`` (Note [Concatenating sequences] in `frontend.lists`).
register_op(
    "prim::TupleConcat(Any a, Any b) -> Any",
    shape=_concatenated_rule,
    derivative=Derivative.NONE,
    typed_call=as_python_operator(operator.add),
)(operator.add)
register_op(
    "prim::ListConstruct(Any... elems) -> Any",
    shape=_list_construct_rule,
    derivative=Derivative.STRUCTURAL,
    holds=Holds.PACKED,
)(make_list)
register_op(
    "prim::ListUnpack(Any lst) -> Any...",
    shape=None,
    derivative=Derivative.STRUCTURAL,
    holds=Holds.ELEMENTS,
)(unpack)
register_op(
    "prim::ListIndex(Any lst, int i) -> Any",
    shape=_element_rule,
    derivative=Derivative.FORMULA,
    may_raise=True,
    holds=Holds.ELEMENTS,
)(list_index)
register_op(
    "prim::ListAppend(Any lst, Any elem) -> Any[]",
    shape=_list_append_rule,
    derivative=Derivative.FORMULA,
    holds=Holds.EXTENDED,
)(list_append)
register_op(
    "prim::Format(str template, Any... values) -> str",
    shape=fixed(STR),
    derivative=Derivative.NONE,
    may_raise=True,  # a format spec the value does not take
)(format_values)
# Impure: it runs where it stands, in program order, and no pass drops, merges or moves it.
register_op(
    "prim::Print(str? sep, str? end, bool flush, Any... values) -> ()",
    shape=None,
    pure=False,
    derivative=Derivative.NONE,
)(print_values)
# Impure, as prim::Print: it runs where it stands, in program order (Note [Run-time checks] in
# `frontend.checks`).
register_op(
    "prim::RaiseException(str kind, str? message) -> ()",
    shape=None,
    pure=False,
    derivative=Derivative.NONE,
)(raise_exception)
register_op(
    "prim::AutogradAdd(Any a, Any b) -> Any",
    shape=_autograd_add_rule,
    derivative=Derivative.STRUCTURAL,
)(autograd_add)
register_op(
    "prim::WriteBack(Tensor(a!) target, Tensor value) -> ()",
    shape=None,
    pure=False,
    derivative=Derivative.NONE,
)(write_back)
# Its result is ``target`` itself (the schema says so); impure: no pass may merge, fold, hoist
# or move it (Note [Returned arguments] in `passes.returned_arguments`).
register_op(
    "prim::WrittenArgument(Tensor value, Tensor(a) target) -> Tensor(a)",
    shape=_written_argument_rule,
    derivative=Derivative.FORMULA,
    pure=False,
    read_for_type=("target",),
)(written_argument)
# Impure: it must run where it stands, before the prim::WriteBack nodes that follow it. Lambda
# lifting inserts it, after differentiation.
register_op(
    "prim::CopyIfShared(Any value, Tensor... written) -> Any",
    shape=_same_type_rule,
    pure=False,
    derivative=Derivative.STRUCTURAL,
)(copy_if_shared)
