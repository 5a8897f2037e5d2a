"""The native tier's operator table: how numba spells each operator it runs.

`NATIVE_KERNELS` maps an operator name to a `NativeKernel`: the source of an expression for
whole arrays (a NumPy function numba supports, an operator, a subscript, or a small helper of
`ir.native_helpers` that the compiler wraps in ``numba.njit``), built by the spellings of
`ir.native_spellings`, and for elementwise operators the expression for one element, which the
emitter uses inside a fused loop (Note [Fused loops] in `ir.native_source`).
`runs_natively(node)` says whether a node can go into a native region: its operator is in the
table, its operands and results have types numba takes (`native_type`), and the operands the
spelling needs at code-generation time (a shape, a dtype, an axis) are constants. This module
imports no numba: the pass that draws regions reads it without numba.

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
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ir import native_spellings as spellings
from ir.graph import Node, Value
from ir.native_spellings import NATIVE_DTYPES, NOT_CONSTANT, Spelling
from ir.types import BOOL, FLOAT, INT, TensorType, Type

__all__ = [
    "NATIVE_KERNELS",
    "NativeKernel",
    "constant_literal",
    "native_type",
    "runs_natively",
    "spell",
]


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
        spelling = spellings.template(text) if name in comparisons else spellings.arithmetic(text)
        table[name] = NativeKernel(spelling, text)
    table["aten::pow"] = NativeKernel(spellings.float_result("({0} ** {1})"), "({0} ** {1})")
    unary = {
        "aten::neg": "(-{0})",
        "aten::square": "({0} * {0})",
        "aten::abs": "np.abs({0})",
    }
    for name, text in unary.items():
        table[name] = NativeKernel(spellings.arithmetic(text), text)
    for function in (
        "tanh", "exp", "log", "sin", "cos", "tan", "sqrt", "sinh", "cosh", "arctan",
        "arcsin", "arccos", "arcsinh", "log1p", "expm1", "exp2", "log2", "log10", "floor",
        "ceil", "trunc", "sign",
    ):  # fmt: skip
        text = f"np.{function}({{0}})"
        table[f"aten::{function}"] = NativeKernel(spellings.float_result(text), text)
    table["aten::reciprocal"] = NativeKernel(spellings.float_result("(1.0 / {0})"), "(1.0 / {0})")
    table["aten::where"] = NativeKernel(
        spellings.template("np.where({0}, {1}, {2})"), "({1} if {0} else {2})"
    )
    for function in ("sum", "mean", "max", "min", "prod"):
        table[f"aten::{function}"] = NativeKernel(spellings.reduction(function))
    table["aten::matmul"] = NativeKernel(spellings.matmul)
    table["aten::_matmul_backward_self"] = NativeKernel(spellings.matmul_backward("self"))
    table["aten::_matmul_backward_other"] = NativeKernel(spellings.matmul_backward("other"))
    table["aten::select"] = NativeKernel(spellings.select)
    table["aten::sum_to_size"] = NativeKernel(spellings.sum_to_size)
    table["aten::_unreduce"] = NativeKernel(spellings.unreduce)
    table["aten::transpose"] = NativeKernel(spellings.transpose)
    table["aten::copy"] = NativeKernel(spellings.copy)
    table["aten::zeros"] = NativeKernel(spellings.creation("zeros"))
    table["aten::ones"] = NativeKernel(spellings.creation("ones"))
    table["aten::full"] = NativeKernel(spellings.full)
    table["aten::zeros_like"] = NativeKernel(spellings.like("zeros_like"))
    table["aten::ones_like"] = NativeKernel(spellings.like("ones_like"))
    table["prim::TapeArray"] = NativeKernel(spellings.tape_array)
    table["prim::TapeWrite"] = NativeKernel(spellings.tape_write)
    table["prim::Uninitialized"] = NativeKernel(spellings.uninitialized)
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
        table[name] = NativeKernel(spellings.scalar_only(spellings.template(text)))
    for name, text in {
        "prim::truediv": "({0} / {1})",
        "prim::floordiv": "({0} // {1})",
        "prim::mod": "({0} % {1})",
    }.items():
        table[name] = NativeKernel(spellings.scalar_only(spellings.divides(text)))
    table["prim::bool"] = NativeKernel(spellings.truth)
    # int() of a float: Python raises for NaN and inf, compiled code would give a number.
    table["prim::int"] = NativeKernel(
        spellings.scalar_only(spellings.arithmetic("int({0})"), ints_only=True)
    )
    return table


NATIVE_KERNELS: dict[str, NativeKernel] = _build()
"""Operator name -> how numba spells it. See the module docstring."""
