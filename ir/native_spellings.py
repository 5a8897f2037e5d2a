"""How numba spells operators, by kind: the builders `ir.native_kernels` makes its table of.

A spelling takes the node, the expressions of its operands and the values of its constant
operands, and gives the expression computing the node's result, or None when the native tier
does not handle those operands (the node then stays on the NumPy tier). Spellings call the
helpers of `ir.native_helpers` by name. This module imports no numba.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ir.graph import Node, Value
from ir.types import BOOL, FLOAT, INT, TensorType, Type

__all__ = [
    "NATIVE_DTYPES",
    "NOT_CONSTANT",
    "PYTHON_DTYPES",
    "Spelling",
    "arithmetic",
    "copy",
    "creation",
    "divides",
    "float_result",
    "full",
    "like",
    "matmul",
    "matmul_backward",
    "reduction",
    "scalar_only",
    "select",
    "sum_to_size",
    "tape_array",
    "tape_write",
    "template",
    "transpose",
    "truth",
    "uninitialized",
    "unreduce",
]

NATIVE_DTYPES = frozenset({"float64", "int64", "bool"})
"""The array dtypes regions take: Note [Native numerics] in `ir.native_kernels`."""

PYTHON_DTYPES: dict[Type, str] = {INT: "int64", FLOAT: "float64", BOOL: "bool"}
"""The dtype numba gives a Python int, float or bool inside a region."""

NOT_CONSTANT: Any = object()
"""What `ir.native_kernels.spell` gets for an operand that is not a constant."""

# spelling(node, operand expressions, constant operand values) -> expression, or None when
# the node's operands are not ones the native tier handles.
Spelling = Callable[[Node, Sequence[str], Sequence[Any]], str | None]


def _rank(value: Value) -> int | None:
    ty = value.ty
    if isinstance(ty, TensorType):
        return None if ty.shape is None else len(ty.shape)
    return 0


def _dtype(value: Value) -> str | None:
    ty = value.ty
    if isinstance(ty, TensorType):
        return ty.dtype
    return PYTHON_DTYPES.get(ty)


def template(text: str) -> Spelling:
    def spelling(node: Node, args: Sequence[str], consts: Sequence[Any]) -> str | None:
        return text.format(*args)

    return spelling


def arithmetic(text: str) -> Spelling:
    """An arithmetic operator on numbers: NumPy's arithmetic on bools (``True + True`` is
    True in a bool array) is not numba's, so bool operands stay on the NumPy tier."""

    def spelling(node: Node, args: Sequence[str], consts: Sequence[Any]) -> str | None:
        if any(_dtype(v) == "bool" for v in node.inputs):
            return None
        return text.format(*args)

    return spelling


def divides(text: str) -> Spelling:
    """Python's ``//``, ``%`` and ``/`` of numbers by a nonzero constant: by zero, Python
    raises where compiled code would give a number."""
    inner = arithmetic(text)

    def spelling(node: Node, args: Sequence[str], consts: Sequence[Any]) -> str | None:
        divisor = consts[1]
        if divisor is NOT_CONSTANT or isinstance(divisor, bool) or divisor == 0:
            return None
        return inner(node, args, consts)

    return spelling


def float_result(text: str) -> Spelling:
    """An operator spelled ``text`` only when its result is float64 (pow and reciprocal of
    ints follow integer rules numba does not share)."""
    inner = template(text)

    def spelling(node: Node, args: Sequence[str], consts: Sequence[Any]) -> str | None:
        return inner(node, args, consts) if _dtype(node.output) == "float64" else None

    return spelling


def reduction(function: str) -> Spelling:
    """sum, mean, max, min, prod over every axis (or one constant axis for sum: numba's
    other reductions take none), without keepdims."""

    def spelling(node: Node, args: Sequence[str], consts: Sequence[Any]) -> str | None:
        axis, keepdims = consts[1], consts[2]
        if keepdims is not False or _rank(node.inputs[0]) == 0:
            return None
        if axis is None:
            return f"np.{function}({args[0]})"
        if isinstance(axis, int) and function == "sum":
            rank = _rank(node.inputs[0]) or 0
            if rank >= 2 and -rank <= axis < rank:
                return f"np.{function}({args[0]}, axis={axis % rank})"
        return None

    return spelling


def _floats(node: Node, *values: Value) -> bool:
    return all(_dtype(v) == "float64" for v in (*values, node.output))


def matmul(node: Node, args: Sequence[str], consts: Sequence[Any]) -> str | None:
    a, b = node.inputs
    if not _floats(node, a, b) or _rank(a) not in (1, 2) or _rank(b) not in (1, 2):
        return None
    return f"_matmul_{_rank(a)}_{_rank(b)}({args[0]}, {args[1]})"


def matmul_backward(which: str) -> Spelling:
    """The gradient of ``a @ b`` w.r.t. ``a`` (``self``) or ``b`` (``other``), for 1-d and 2-d
    operands: ``g @ b.T`` and ``a.T @ g`` with the 1-d cases as outer and scaled products."""

    def spelling(node: Node, args: Sequence[str], consts: Sequence[Any]) -> str | None:
        g, a, b = node.inputs
        ranks = (_rank(a), _rank(b))
        if not _floats(node, g, a, b) or ranks[0] not in (1, 2) or ranks[1] not in (1, 2):
            return None
        gs, as_, bs = args
        forms = {
            "self": {
                (2, 2): f"_matmul_2_2({gs}, {bs}.T)",
                (2, 1): f"_outer({gs}, {bs})",
                (1, 2): f"_matmul_2_1({bs}, {gs})",
                (1, 1): f"({gs} * {bs})",
            },
            "other": {
                (2, 2): f"_matmul_2_2({as_}.T, {gs})",
                (2, 1): f"_matmul_1_2({gs}, {as_})",
                (1, 2): f"_outer({as_}, {gs})",
                (1, 1): f"({gs} * {as_})",
            },
        }
        return forms[which][ranks]  # type: ignore[index]

    return spelling


def select(node: Node, args: Sequence[str], consts: Sequence[Any]) -> str | None:
    axis = consts[1]
    rank = _rank(node.inputs[0])
    if not isinstance(axis, int) or not rank or not -rank <= axis < rank:
        return None
    return f"{args[0]}[{', '.join([':'] * (axis % rank) + [args[2]])}]"


def creation(function: str) -> Spelling:
    """zeros, ones, empty of a constant shape and dtype."""

    def spelling(node: Node, args: Sequence[str], consts: Sequence[Any]) -> str | None:
        shape, dtype = consts[0], consts[-1]
        dtype = dtype if dtype is not None else "float64"
        if not _int_tuple(shape) or dtype not in NATIVE_DTYPES:
            return None
        if _dtype(node.output) != dtype:
            return None
        return f"np.{function}({tuple(shape)!r}, np.{_numpy_name(dtype)})"

    return spelling


def full(node: Node, args: Sequence[str], consts: Sequence[Any]) -> str | None:
    shape, dtype = consts[0], consts[2]
    dtype = dtype if dtype is not None else _dtype(node.output)
    if not _int_tuple(shape) or dtype not in NATIVE_DTYPES or _dtype(node.output) != dtype:
        return None
    if _rank(node.inputs[1]) != 0:
        return None
    return f"np.full({tuple(shape)!r}, {args[1]}, np.{_numpy_name(dtype)})"


def like(function: str) -> Spelling:
    def spelling(node: Node, args: Sequence[str], consts: Sequence[Any]) -> str | None:
        if consts[1] is not None or _dtype(node.output) != _dtype(node.inputs[0]):
            return None
        if _rank(node.inputs[0]) == 0:
            return None
        return f"np.{function}({args[0]})"

    return spelling


def tape_array(node: Node, args: Sequence[str], consts: Sequence[Any]) -> str | None:
    row_shape, dtype = consts[1], consts[2]
    if not _int_tuple(row_shape) or dtype not in NATIVE_DTYPES:
        return None
    row = "".join(f", {d}" for d in row_shape)
    return f"np.zeros((max({args[0]}, 0){row}), np.{_numpy_name(dtype)})"  # as ir.ops.tapes


def tape_write(node: Node, args: Sequence[str], consts: Sequence[Any]) -> str | None:
    tape, _, value = node.inputs
    rank = _rank(tape)
    if not rank or _rank(value) != rank - 1 or _dtype(value) != _dtype(tape):
        return None
    return f"_tape_write({args[0]}, {args[1]}, {args[2]})"


def transpose(node: Node, args: Sequence[str], consts: Sequence[Any]) -> str | None:
    if consts[1] is not None or _rank(node.inputs[0]) not in (1, 2):
        return None
    return f"{args[0]}.T"


def copy(node: Node, args: Sequence[str], consts: Sequence[Any]) -> str | None:
    return None if _rank(node.inputs[0]) == 0 else f"{args[0]}.copy()"


def sum_to_size(node: Node, args: Sequence[str], consts: Sequence[Any]) -> str | None:
    """The adjoint of broadcasting, in the cases whose shapes are static: nothing to do, a sum
    over every axis, or over leading axes only."""
    ty, target = node.inputs[0].ty, consts[1]
    if not isinstance(ty, TensorType) or ty.shape is None or None in ty.shape:
        return None
    if target is None or (_int_tuple(target) and tuple(target) == ty.shape):
        return args[0]
    if not _int_tuple(target) or _dtype(node.output) != "float64":
        return None
    target = tuple(target)
    if target == () and ty.shape:
        return f"np.sum({args[0]})"
    if len(ty.shape) == 2 and target == ty.shape[1:]:
        return f"np.sum({args[0]}, axis=0)"
    return None


def unreduce(node: Node, args: Sequence[str], consts: Sequence[Any]) -> str | None:
    """The gradient of a reduction over every axis, spread over the reduced shape (a new
    array, where NumPy gives a broadcast view: nothing writes into either)."""
    shape, axis = consts[1], consts[2]
    if axis is not None or not _int_tuple(shape) or not tuple(shape):
        return None
    if _rank(node.inputs[0]) != 0 or _dtype(node.inputs[0]) != "float64":
        return None
    return f"np.full({tuple(shape)!r}, {args[0]})"


def _int_tuple(value: Any) -> bool:
    return isinstance(value, tuple | list) and all(
        isinstance(d, int) and not isinstance(d, bool) for d in value
    )


def _numpy_name(dtype: str) -> str:
    return "bool_" if dtype == "bool" else dtype


def truth(node: Node, args: Sequence[str], consts: Sequence[Any]) -> str | None:
    """``bool(x)`` of a Python number or a 0-d array (a scalar in a region)."""
    return f"bool({args[0]})" if _rank(node.inputs[0]) == 0 else None


def scalar_only(inner: Spelling, *, ints_only: bool = False) -> Spelling:
    """``inner`` for Python numbers (not arrays), and for ints only when ``ints_only``."""

    def spelling(node: Node, args: Sequence[str], consts: Sequence[Any]) -> str | None:
        if any(isinstance(v.ty, TensorType) for v in (*node.inputs, node.output)):
            return None
        if ints_only and any(_dtype(v) == "float64" for v in node.inputs):
            return None
        return inner(node, args, consts)

    return spelling


def uninitialized(node: Node, args: Sequence[str], consts: Sequence[Any]) -> str | None:
    """What a branch yields for a value only its other branch defines. Nothing reads it (a
    tape write of it is never read back), but numba types every local on every path, so it is
    zeros of the value's type where the NumPy tier has None."""
    ty, dtype = node.output.ty, _dtype(node.output)
    if dtype not in NATIVE_DTYPES:
        return None
    if isinstance(ty, TensorType) and ty.shape:
        if not _int_tuple(ty.shape):
            return None
        return f"np.zeros({tuple(ty.shape)!r}, np.{_numpy_name(dtype)})"
    return {"float64": "0.0", "int64": "0", "bool": "False"}[dtype]
