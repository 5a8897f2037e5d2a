"""Python-scalar operators: what Python code does with ints, floats and bools.

``n * 2`` on two Python numbers is ``prim::mul`` and gives what Python gives (an int), where
``aten::mul`` would give a NumPy scalar. Results follow Python's rules: ``int / int`` is a float,
``bool + bool`` an int, ``min(1, 2.5)`` whichever is smaller. A result type Python only decides
from the values (``n ** k`` with ``k`` unknown, ``min`` of an int and a float) is ``Scalar``.

    prim::add  sub  mul  truediv  floordiv  mod  pow   (Scalar a, Scalar b) -> Scalar
    prim::min  max                                     (Scalar a, Scalar b) -> Scalar
    prim::bitand  bitor  bitxor                        (Scalar a, Scalar b) -> Scalar
    prim::invert                                       (Scalar a) -> Scalar
    prim::eq  ne  lt  le  gt  ge                       (Scalar a, Scalar b) -> bool
    prim::neg  abs                                     (Scalar a) -> Scalar
    prim::not(Any a) -> bool        prim::len(Any a) -> int     (Python's ``not`` and ``len``)
    prim::int  float  bool          (Any a) -> int / float / bool   (casts, also of arrays)
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

from ir.errors import ShapeError
from ir.ops.call_spelling import as_python_operator
from ir.ops.registry import NOT_CONSTANT, Derivative, ShapeRule, register_op
from ir.ops.shape_rules import fixed
from ir.types import ANY, BOOL, FLOAT, INT, SCALAR, TensorType, TupleType, Type

_SAMPLES: dict[Type, Any] = {INT: 3, FLOAT: 1.5, BOOL: True}
_RESULT_TYPES: dict[type, Type] = {int: INT, float: FLOAT, bool: BOOL}


def python_rule(fn: Callable[..., Any]) -> ShapeRule:
    """The result type of ``fn`` as Python computes it: on the operands' values when all are
    known, else on sample values; ``Scalar`` when the samples cannot stand for the values."""

    def rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
        for position, ty in enumerate(types):
            if ty not in _SAMPLES and ty not in (SCALAR, ANY):
                raise ShapeError(f"operand {position} must be a Python number, got {ty}")
        if all(c is not NOT_CONSTANT and not _too_large(c) for c in consts):
            if fn is operator.pow and all(type(c) in (int, bool) for c in consts):
                return [INT if consts[1] >= 0 else FLOAT]  # without computing a huge power
            try:
                return [_RESULT_TYPES.get(type(fn(*consts)), SCALAR)]
            except ArithmeticError:
                pass  # raised again at run time, with the node's location
        if any(t not in _SAMPLES for t in types) or not _samples_decide(fn, types):
            return [SCALAR]
        return [_RESULT_TYPES[type(fn(*(_SAMPLES[t] for t in types)))]]

    return rule


def integral_rule(fn: Callable[..., Any], symbol: str) -> ShapeRule:
    """`python_rule` of an operator Python defines on ints and bools only (``&``, ``~``)."""
    rule = python_rule(fn)

    def checked(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
        for ty in types:
            if ty is FLOAT:
                raise ShapeError(f"unsupported operand type(s) for {symbol}: 'float'")
        return list(rule(types, consts))

    return checked


_SYMBOLS = {"bitand": "&", "bitor": "|", "bitxor": "^", "invert": "~"}


def _samples_decide(fn: Callable[..., Any], types: Sequence[Type]) -> bool:
    """False where the result type depends on the values: ``int ** int`` (negative exponents
    give floats) and min/max of mixed types."""
    if fn is operator.pow:
        return not (types[0] in (INT, BOOL) and types[1] in (INT, BOOL))
    if fn in (min, max):
        return len(set(types)) == 1
    return True


# Note [Compile-time evaluation of Python ints]
# Python ints have no size limit, and ``10 ** 100_000_000`` takes minutes to compute and
# gigabytes to hold: constant propagation, shape propagation and the rewrites that read static
# values (`passes.rewriting.static_value`) would hang on a program that only computes it in a
# branch that never runs. So they evaluate through `evaluate_bounded`, which leaves to run time
# (returns NOT_CONSTANT for) a node with an int operand or result of more than
# `MAX_EVALUATED_INT_BITS` bits. A result that large is not computed at all when the table
# below bounds it from the operands' sizes; other operators' int results are no larger than
# their operands (``//``, ``%``, ``abs``, ``min``, ...) or the operands' sum (``*``). 4096 bits
# is far beyond any shape, index or count a program computes.
MAX_EVALUATED_INT_BITS = 4096


def _power_bits(base: int, exponent: int) -> int:
    """At least the bits of ``base ** exponent`` (0 for a result no larger than ``base``)."""
    if exponent <= 1 or abs(base) <= 1:
        return 0
    return (abs(base).bit_length() - 1) * exponent + 1


_LEAST_RESULT_BITS: dict[str, Callable[[int, int], int]] = {
    "prim::pow": _power_bits,
    "prim::mul": lambda a, b: a.bit_length() + b.bit_length() - 1 if a and b else 0,
}


def evaluate_bounded(kind: str, kernel: Callable[..., Any], operands: Sequence[Any]) -> Any:
    """``kernel(*operands)``, the compile-time value of a ``kind`` node, or NOT_CONSTANT when
    an int operand or the int result has more than `MAX_EVALUATED_INT_BITS` bits. See Note
    [Compile-time evaluation of Python ints]. The kernel's exceptions pass through."""
    if any(_too_large(x) for x in operands):
        return NOT_CONSTANT
    least = _LEAST_RESULT_BITS.get(kind)
    if least is not None:
        if not all(type(x) in _RESULT_TYPES for x in operands):
            return NOT_CONSTANT  # a sequence `*` repeats: not what the schema allows anyway
        if all(type(x) is int for x in operands) and least(*operands) > MAX_EVALUATED_INT_BITS:
            return NOT_CONSTANT
    result = kernel(*operands)
    return NOT_CONSTANT if _too_large(result) else result


def _too_large(value: Any) -> bool:
    return type(value) is int and value.bit_length() > MAX_EVALUATED_INT_BITS


# name -> (function, derivative): the aten formula `autodiff.derivatives.ALIASES` maps the
# operator to, or none written yet for the Python-scalar one (Note [Derivatives] in
# `ir.ops.registry`).
BINARY: dict[str, tuple[Callable[..., Any], Derivative]] = {
    "add": (operator.add, Derivative.FORMULA),
    "sub": (operator.sub, Derivative.FORMULA),
    "mul": (operator.mul, Derivative.FORMULA),
    "truediv": (operator.truediv, Derivative.FORMULA),
    "floordiv": (operator.floordiv, Derivative.NONE),
    "mod": (operator.mod, Derivative.FORMULA),
    "pow": (operator.pow, Derivative.FORMULA),
    "bitand": (operator.and_, Derivative.NONE),
    "bitor": (operator.or_, Derivative.NONE),
    "bitxor": (operator.xor, Derivative.NONE),
    "min": (min, Derivative.REFUSED),
    "max": (max, Derivative.REFUSED),
}
COMPARISONS: dict[str, Callable[..., Any]] = {
    "eq": operator.eq,
    "ne": operator.ne,
    "lt": operator.lt,
    "le": operator.le,
    "gt": operator.gt,
    "ge": operator.ge,
}
UNARY: dict[str, tuple[Callable[..., Any], Derivative]] = {
    "neg": (operator.neg, Derivative.FORMULA),
    "abs": (abs, Derivative.REFUSED),
    "invert": (operator.invert, Derivative.NONE),
}
# Defined on ints and bools only, as in Python.
_INTEGRAL = frozenset(["bitand", "bitor", "bitxor", "invert"])
CASTS: dict[str, tuple[Callable[..., Any], Type, Derivative]] = {
    "int": (int, INT, Derivative.NONE),
    "float": (float, FLOAT, Derivative.REFUSED),
    "bool": (bool, BOOL, Derivative.NONE),
}


# The operators above that raise for some operand values (Note [Hoisting operators that can
# raise] in `passes.loop_invariants`): division and remainder by zero (ZeroDivisionError), a
# power too large for a float (OverflowError), casts of NaN or of an array of several elements.
_RAISING = frozenset(["truediv", "floordiv", "mod", "pow", "int", "float", "bool"])
# Int arithmetic on a loop's counter, which a reverse loop recomputes rather than tapes.
_CHEAP = frozenset(["add", "sub", "mul", "neg"])


def _len_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    if isinstance(types[0], TensorType) and types[0].rank == 0:
        raise ShapeError("len() of unsized object")
    return [INT]


def _len_value(types: Sequence[Type]) -> Any:
    ty = types[0]
    if isinstance(ty, TupleType):
        return len(ty.elems)
    if isinstance(ty, TensorType) and ty.shape and ty.shape[0] is not None:
        return ty.shape[0]
    return NOT_CONSTANT


for _name, (_fn, _derivative) in BINARY.items():
    register_op(
        f"prim::{_name}(Scalar a, Scalar b) -> Scalar",
        shape=integral_rule(_fn, _SYMBOLS[_name]) if _name in _INTEGRAL else python_rule(_fn),
        derivative=_derivative,
        may_raise=_name in _RAISING,
        cheap_to_recompute=_name in _CHEAP,
        typed_call=as_python_operator(_fn),
    )(_fn)
for _name, _fn in COMPARISONS.items():
    register_op(
        f"prim::{_name}(Scalar a, Scalar b) -> bool",
        shape=fixed(BOOL),
        derivative=Derivative.NONE,
        typed_call=as_python_operator(_fn),
    )(_fn)
for _name, (_fn, _derivative) in UNARY.items():
    register_op(
        f"prim::{_name}(Scalar a) -> Scalar",
        shape=integral_rule(_fn, _SYMBOLS[_name]) if _name in _INTEGRAL else python_rule(_fn),
        derivative=_derivative,
        cheap_to_recompute=_name in _CHEAP,
        typed_call=as_python_operator(_fn),
    )(_fn)
for _name, (_fn, _result, _derivative) in CASTS.items():
    register_op(
        f"prim::{_name}(Any a) -> {_result}",
        shape=fixed(_result),
        derivative=_derivative,
        may_raise=_name in _RAISING,
    )(_fn)
register_op(
    "prim::not(Any a) -> bool",
    shape=fixed(BOOL),
    derivative=Derivative.NONE,
    typed_call=as_python_operator(operator.not_),
)(operator.not_)
# ``x.shape == (3, 4)``: Python's equality of two tuples or lists of numbers and strings (a
# tuple never equals a list, as in Python), for checks written against shapes.
register_op(
    "prim::sequence_eq(Any a, Any b) -> bool",
    shape=fixed(BOOL),
    derivative=Derivative.NONE,
    typed_call=as_python_operator(operator.eq),
)(operator.eq)
register_op(
    "prim::len(Any a) -> int",
    shape=_len_rule,
    derivative=Derivative.NONE,
    value_from_types=_len_value,
)(len)
