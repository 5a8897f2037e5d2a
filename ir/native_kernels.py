"""The native tier's operator table: how numba spells each operator it runs.

`NATIVE_KERNELS` maps an operator name to a `NativeKernel`: the source of an expression for
whole arrays (a NumPy function numba supports, an operator, a subscript, or a small helper of
`HELPERS` that the compiler wraps in ``numba.njit``), and for elementwise operators the
expression for one element, which the emitter uses inside a fused loop (Note [Fused loops] in
`ir.native_codegen`). `runs_natively(node)` says whether a node can go into a native region:
its operator is in the table, its operands and results have types numba takes (`native_type`),
and the operands the spelling needs at code-generation time (a shape, a dtype, an axis) are
constants. This module imports no numba: the pass that draws regions reads it without numba.

# Note [Native numerics]
# The native tier computes what the NumPy tier computes, operation by operation, in the same
# dtype and the same order; what differs is who implements each operation.
# - fastmath is NOT used: it would let LLVM reassociate sums, assume no NaN or inf and flush
#   subnormals, which changes results and hides the NaN and inf a user's program produces
#   (anomaly mode and our own checks rely on seeing them). Every region is compiled with IEEE
#   semantics and ``error_model="numpy"`` (a float division by zero gives inf or NaN as in
#   NumPy rather than raising ZeroDivisionError).
# - +, -, *, / and sqrt are IEEE-exact: bit-identical with NumPy.
# - exp, log, tanh, sin, cos and the other transcendental functions are calls to the
#   platform's libm in numba. NumPy calls the same libm for most of them, and uses its own SIMD
#   loops for some: measured with NumPy 2.4 on x86-64, exp, log, sin, cos, sqrt, expm1 and
#   arctan of 100,000 normal float64 values are bit-identical; tanh differs in about a quarter
#   of them by at most 2 ulp (relative 4.2e-16), NumPy's tanh being its own. Tests compare
#   with rtol 1e-12.
# - Reductions (sum, mean) and matrix products may add in another order than NumPy's pairwise
#   summation and BLAS: agreement to within a few ulp times the number of terms.
# - Only float64, int64 and bool arrays and Python int, float and bool values run natively: the
#   dtypes that NumPy's promotion and numba's agree on. Other dtypes (float32 next to a Python
#   float, say) would be promoted differently, so their nodes stay on the NumPy tier.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ir.graph import Node, Value
from ir.types import BOOL, FLOAT, INT, TensorType, Type

__all__ = [
    "HELPERS",
    "NATIVE_DTYPES",
    "NATIVE_KERNELS",
    "NOT_CONSTANT",
    "PYTHON_DTYPES",
    "NativeKernel",
    "constant_literal",
    "native_type",
    "runs_natively",
    "spell",
]

NATIVE_DTYPES = frozenset({"float64", "int64", "bool"})
"""The array dtypes regions take: Note [Native numerics]."""

PYTHON_DTYPES: dict[Type, str] = {INT: "int64", FLOAT: "float64", BOOL: "bool"}
"""The dtype numba gives a Python int, float or bool inside a region."""

NOT_CONSTANT: Any = object()
"""What `spell` gets for an operand that is not a constant."""

# spelling(node, operand expressions, constant operand values) -> expression, or None when
# the node's operands are not ones the native tier handles.
Spelling = Callable[[Node, Sequence[str], Sequence[Any]], str | None]


@dataclass(frozen=True, slots=True)
class NativeKernel:
    """How numba spells one operator: ``array`` for whole values, ``element`` (a format
    string over the operands, ``"({0} + {1})"``) for one element inside a fused loop, or
    None when the operator is not elementwise."""

    array: Spelling
    element: str | None = None


def native_type(ty: Type) -> bool:
    """Whether a value of type ``ty`` can cross into or live in a native region."""
    if isinstance(ty, TensorType):
        return ty.dtype in NATIVE_DTYPES and ty.shape is not None
    return ty in (INT, FLOAT, BOOL)


def constant_literal(value: Any) -> str | None:
    """Python source numba reads as ``value``, for the constants a region writes inline:
    None, bools, ints, finite floats, strings and tuples of them; None for the rest."""
    if value is None or isinstance(value, bool | str):
        return repr(value)
    if isinstance(value, int) and abs(value) < 2**63:
        return repr(value)
    if isinstance(value, float):
        if math.isfinite(value):
            return repr(value)
        return "np.nan" if math.isnan(value) else ("np.inf" if value > 0 else "-np.inf")
    if isinstance(value, tuple):
        parts = [constant_literal(v) for v in value]
        if any(p is None for p in parts):
            return None
        return f"({', '.join(parts)},)" if parts else "()"  # type: ignore[arg-type]
    return None


def constant_of(value: Value) -> Any:
    """The value of a prim::Constant, or NOT_CONSTANT."""
    node = value.node
    return node.attrs.get("value") if node.kind == "prim::Constant" else NOT_CONSTANT


def spell(node: Node, args: Sequence[str]) -> str | None:
    """The expression computing ``node``'s result from operands spelled ``args``, or None."""
    kernel = NATIVE_KERNELS.get(node.kind)
    if kernel is None:
        return None
    return kernel.array(node, args, [constant_of(v) for v in node.inputs])


def runs_natively(node: Node) -> bool:
    """Whether ``node`` (not a structural one) can run in a native region."""
    if len(node.outputs) != 1 or not native_type(node.output.ty):
        return False
    for value in node.inputs:
        if not native_type(value.ty) and constant_literal(constant_of(value)) is None:
            return False
    return spell(node, [f"a{i}" for i in range(len(node.inputs))]) is not None


# -- helpers: plain functions the compiler wraps in numba.njit ----------------------------------


def tape_write(tape: Any, index: int, value: Any) -> Any:
    tape[index] = value
    return tape


# Matrix products as loops: numba's np.dot and np.outer call BLAS through bindings that take
# seconds to compile, and for the small operands of this tier a loop is as fast. Each sum runs
# over k in order from 0, as a plain loop does (Note [Native numerics]: not BLAS's order).


def matmul_2_2(a: Any, b: Any) -> Any:
    rows, inner = a.shape
    cols = b.shape[1]
    out = np.zeros((rows, cols), a.dtype)
    for i in range(rows):
        for k in range(inner):
            scale = a[i, k]
            for j in range(cols):
                out[i, j] += scale * b[k, j]
    return out


def matmul_2_1(a: Any, b: Any) -> Any:
    rows, inner = a.shape
    out = np.empty(rows, a.dtype)
    for i in range(rows):
        total = 0.0
        for k in range(inner):
            total += a[i, k] * b[k]
        out[i] = total
    return out


def matmul_1_2(a: Any, b: Any) -> Any:
    inner, cols = b.shape
    out = np.zeros(cols, b.dtype)
    for k in range(inner):
        scale = a[k]
        for j in range(cols):
            out[j] += scale * b[k, j]
    return out


def matmul_1_1(a: Any, b: Any) -> Any:
    total = 0.0
    for k in range(a.shape[0]):
        total += a[k] * b[k]
    return total


def outer(a: Any, b: Any) -> Any:
    out = np.empty((a.shape[0], b.shape[0]), a.dtype)
    for i in range(a.shape[0]):
        for j in range(b.shape[0]):
            out[i, j] = a[i] * b[j]
    return out


HELPERS: dict[str, Callable[..., Any]] = {
    "_tape_write": tape_write,
    "_matmul_2_2": matmul_2_2,
    "_matmul_2_1": matmul_2_1,
    "_matmul_1_2": matmul_1_2,
    "_matmul_1_1": matmul_1_1,
    "_outer": outer,
}
"""Functions the spellings call by name; the compiler binds ``numba.njit`` of each."""


# -- spellings -----------------------------------------------------------------------------------


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


def _template(text: str) -> Spelling:
    def spelling(node: Node, args: Sequence[str], consts: Sequence[Any]) -> str | None:
        return text.format(*args)

    return spelling


def _arithmetic(text: str) -> Spelling:
    """An arithmetic operator on numbers: NumPy's arithmetic on bools (``True + True`` is
    True in a bool array) is not numba's, so bool operands stay on the NumPy tier."""

    def spelling(node: Node, args: Sequence[str], consts: Sequence[Any]) -> str | None:
        if any(_dtype(v) == "bool" for v in node.inputs):
            return None
        return text.format(*args)

    return spelling


def _divides(text: str) -> Spelling:
    """Python's ``//``, ``%`` and ``/`` of numbers by a nonzero constant: by zero, Python
    raises where compiled code would give a number."""
    inner = _arithmetic(text)

    def spelling(node: Node, args: Sequence[str], consts: Sequence[Any]) -> str | None:
        divisor = consts[1]
        if divisor is NOT_CONSTANT or isinstance(divisor, bool) or divisor == 0:
            return None
        return inner(node, args, consts)

    return spelling


def _float_result(text: str) -> Spelling:
    """An operator spelled ``text`` only when its result is float64 (pow and reciprocal of
    ints follow integer rules numba does not share)."""
    inner = _template(text)

    def spelling(node: Node, args: Sequence[str], consts: Sequence[Any]) -> str | None:
        return inner(node, args, consts) if _dtype(node.output) == "float64" else None

    return spelling


def _reduction(function: str) -> Spelling:
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


def _matmul(node: Node, args: Sequence[str], consts: Sequence[Any]) -> str | None:
    a, b = node.inputs
    if not _floats(node, a, b) or _rank(a) not in (1, 2) or _rank(b) not in (1, 2):
        return None
    return f"_matmul_{_rank(a)}_{_rank(b)}({args[0]}, {args[1]})"


def _matmul_backward(which: str) -> Spelling:
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


def _select(node: Node, args: Sequence[str], consts: Sequence[Any]) -> str | None:
    axis = consts[1]
    rank = _rank(node.inputs[0])
    if not isinstance(axis, int) or not rank or not -rank <= axis < rank:
        return None
    return f"{args[0]}[{', '.join([':'] * (axis % rank) + [args[2]])}]"


def _creation(function: str) -> Spelling:
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


def _full(node: Node, args: Sequence[str], consts: Sequence[Any]) -> str | None:
    shape, dtype = consts[0], consts[2]
    dtype = dtype if dtype is not None else _dtype(node.output)
    if not _int_tuple(shape) or dtype not in NATIVE_DTYPES or _dtype(node.output) != dtype:
        return None
    if _rank(node.inputs[1]) != 0:
        return None
    return f"np.full({tuple(shape)!r}, {args[1]}, np.{_numpy_name(dtype)})"


def _like(function: str) -> Spelling:
    def spelling(node: Node, args: Sequence[str], consts: Sequence[Any]) -> str | None:
        if consts[1] is not None or _dtype(node.output) != _dtype(node.inputs[0]):
            return None
        if _rank(node.inputs[0]) == 0:
            return None
        return f"np.{function}({args[0]})"

    return spelling


def _tape_array(node: Node, args: Sequence[str], consts: Sequence[Any]) -> str | None:
    row_shape, dtype = consts[1], consts[2]
    if not _int_tuple(row_shape) or dtype not in NATIVE_DTYPES:
        return None
    row = "".join(f", {d}" for d in row_shape)
    return f"np.empty((max({args[0]}, 0){row}), np.{_numpy_name(dtype)})"


def _tape_write(node: Node, args: Sequence[str], consts: Sequence[Any]) -> str | None:
    tape, _, value = node.inputs
    rank = _rank(tape)
    if not rank or _rank(value) != rank - 1 or _dtype(value) != _dtype(tape):
        return None
    return f"_tape_write({args[0]}, {args[1]}, {args[2]})"


def _transpose(node: Node, args: Sequence[str], consts: Sequence[Any]) -> str | None:
    if consts[1] is not None or _rank(node.inputs[0]) not in (1, 2):
        return None
    return f"{args[0]}.T"


def _copy(node: Node, args: Sequence[str], consts: Sequence[Any]) -> str | None:
    return None if _rank(node.inputs[0]) == 0 else f"{args[0]}.copy()"


def _sum_to_size(node: Node, args: Sequence[str], consts: Sequence[Any]) -> str | None:
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


def _unreduce(node: Node, args: Sequence[str], consts: Sequence[Any]) -> str | None:
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


def _build() -> dict[str, NativeKernel]:
    table: dict[str, NativeKernel] = {}
    # Binary elementwise operators: whole arrays and one element spelled alike.
    binary = {
        "aten::add": "({0} + {1})",
        "aten::sub": "({0} - {1})",
        "aten::mul": "({0} * {1})",
        "aten::div": "({0} / {1})",
        "aten::maximum": "np.maximum({0}, {1})",
        "aten::minimum": "np.minimum({0}, {1})",
        "aten::gt": "({0} > {1})",
        "aten::lt": "({0} < {1})",
        "aten::ge": "({0} >= {1})",
        "aten::le": "({0} <= {1})",
        "aten::eq": "({0} == {1})",
        "aten::ne": "({0} != {1})",
    }
    comparisons = ("aten::gt", "aten::lt", "aten::ge", "aten::le", "aten::eq", "aten::ne")
    for name, text in binary.items():
        spelling = _template(text) if name in comparisons else _arithmetic(text)
        table[name] = NativeKernel(spelling, text)
    table["aten::pow"] = NativeKernel(_float_result("({0} ** {1})"), "({0} ** {1})")
    unary = {
        "aten::neg": "(-{0})",
        "aten::square": "({0} * {0})",
        "aten::abs": "np.abs({0})",
    }
    for name, text in unary.items():
        table[name] = NativeKernel(_arithmetic(text), text)
    for function in (
        "tanh", "exp", "log", "sin", "cos", "tan", "sqrt", "sinh", "cosh", "arctan",
        "arcsin", "arccos", "arcsinh", "log1p", "expm1", "exp2", "log2", "log10", "floor",
        "ceil", "trunc", "sign",
    ):  # fmt: skip
        text = f"np.{function}({{0}})"
        table[f"aten::{function}"] = NativeKernel(_float_result(text), text)
    table["aten::reciprocal"] = NativeKernel(_float_result("(1.0 / {0})"), "(1.0 / {0})")
    table["aten::where"] = NativeKernel(
        _template("np.where({0}, {1}, {2})"), "({1} if {0} else {2})"
    )
    for function in ("sum", "mean", "max", "min", "prod"):
        table[f"aten::{function}"] = NativeKernel(_reduction(function))
    table["aten::matmul"] = NativeKernel(_matmul)
    table["aten::_matmul_backward_self"] = NativeKernel(_matmul_backward("self"))
    table["aten::_matmul_backward_other"] = NativeKernel(_matmul_backward("other"))
    table["aten::select"] = NativeKernel(_select)
    table["aten::sum_to_size"] = NativeKernel(_sum_to_size)
    table["aten::_unreduce"] = NativeKernel(_unreduce)
    table["aten::transpose"] = NativeKernel(_transpose)
    table["aten::copy"] = NativeKernel(_copy)
    table["aten::zeros"] = NativeKernel(_creation("zeros"))
    table["aten::ones"] = NativeKernel(_creation("ones"))
    table["aten::full"] = NativeKernel(_full)
    table["aten::zeros_like"] = NativeKernel(_like("zeros_like"))
    table["aten::ones_like"] = NativeKernel(_like("ones_like"))
    table["prim::TapeArray"] = NativeKernel(_tape_array)
    table["prim::TapeWrite"] = NativeKernel(_tape_write)
    table["prim::Uninitialized"] = NativeKernel(_uninitialized)
    # Python numbers: Python's operators, which numba gives Python's semantics for ints.
    scalar = {
        "prim::add": "({0} + {1})",
        "prim::sub": "({0} - {1})",
        "prim::mul": "({0} * {1})",
        "prim::lt": "({0} < {1})",
        "prim::gt": "({0} > {1})",
        "prim::le": "({0} <= {1})",
        "prim::ge": "({0} >= {1})",
        "prim::eq": "({0} == {1})",
        "prim::ne": "({0} != {1})",
        "prim::neg": "(-{0})",
        "prim::not": "(not {0})",
        "prim::float": "float({0})",
        "prim::max": "max({0}, {1})",
        "prim::min": "min({0}, {1})",
    }
    for name, text in scalar.items():
        table[name] = NativeKernel(_scalar_only(_template(text)))
    for name, text in {
        "prim::truediv": "({0} / {1})",
        "prim::floordiv": "({0} // {1})",
        "prim::mod": "({0} % {1})",
    }.items():
        table[name] = NativeKernel(_scalar_only(_divides(text)))
    table["prim::bool"] = NativeKernel(_truth)
    # int() of a float: Python raises for NaN and inf, compiled code would give a number.
    table["prim::int"] = NativeKernel(_scalar_only(_arithmetic("int({0})"), ints_only=True))
    return table


def _uninitialized(node: Node, args: Sequence[str], consts: Sequence[Any]) -> str | None:
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


def _truth(node: Node, args: Sequence[str], consts: Sequence[Any]) -> str | None:
    """``bool(x)`` of a Python number or a 0-d array (a scalar in a region)."""
    return f"bool({args[0]})" if _rank(node.inputs[0]) == 0 else None


def _scalar_only(inner: Spelling, *, ints_only: bool = False) -> Spelling:
    """``inner`` for Python numbers (not arrays), and for ints only when ``ints_only``."""

    def spelling(node: Node, args: Sequence[str], consts: Sequence[Any]) -> str | None:
        if any(isinstance(v.ty, TensorType) for v in (*node.inputs, node.output)):
            return None
        if ints_only and any(_dtype(v) == "float64" for v in node.inputs):
            return None
        return inner(node, args, consts)

    return spelling


NATIVE_KERNELS: dict[str, NativeKernel] = _build()
"""Operator name -> how numba spells it. See the module docstring."""
