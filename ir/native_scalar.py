"""Scalarized numba source for a block whose arrays are small: every array of static shape with
at most `SMALL` elements is a set of scalar locals, one per element, so a loop over such values
allocates nothing per step; shapes, broadcasting and views are resolved while generating.

    >>> print(scalarized_source(graph.block, "region"))      # doctest: +SKIP
    def region(theta, x0):
        theta_0 = theta[0, 0]
        ...
        for t in range(1000):
            v12 = theta_0 * x_0 + theta_1 * x_1 + theta_2 * x_2
            ...
        return (out, x_tape, saved_tape)

# Note [Scalarized regions]
# `scalarized_source(block, name)` gives ``def name(<one parameter per block input>): ...
# return (<one item per block output>,)``, or None as soon as the block holds an operator or a
# type it does not handle (the generic native emitter, or the NumPy tier, runs it instead).
# - A value is one of: `Elements` (a small array or a number, an expression per element),
#   `Static` (a constant known while generating: shapes, axes, dtypes, None), a big array
#   held as a numba array (`BigArray`: tapes, inputs above `SMALL` elements, big zeros), or a
#   tuple of those.
# - Inputs: a small array parameter is read into locals once at the start (``x_0 = x[0]``);
#   it keeps its array name for reads at a run-time index. Outputs: a small array is built at
#   the end with ``np.empty`` and element stores; numbers are returned as they are. A 0-d
#   array comes in and goes out as a scalar of its dtype, as `ir.native_codegen` passes it.
# - Elementwise operators are templates applied per element after broadcasting; views only
#   rename; reductions and products are written out (Note [Scalarized numerics]).
# - A run-time index (``tape[t]``, ``xs[t]``) reads or writes a big array element by element,
#   after a bounds check that raises IndexError (numba does not check bounds itself).
# - prim::Loop is a ``for`` over ``range`` when its condition is the constant True in and
#   out, else a ``while``; its carried values are locals rebound at the end of each step.
#   prim::If is ``if``/``else`` assigning the outputs' locals in each branch.
# - Structural operands (shapes, axes, dtypes, static indices) must be constants the block
#   can see: prim::Constant nodes in it or outside it. A block parameter is a run-time value.

# Note [Scalarized numerics]
# Each element is computed by the operation NumPy applies to it, in the same dtype: + - * are
# IEEE-exact the same; division is ``np.true_divide`` (inf/nan, not ZeroDivisionError);
# exp, log, sin, cos, pow, sqrt call the same libm (or correctly rounded) functions as
# NumPy's float64 loops: bit-identical. NumPy's float64 tanh (and its SIMD loops on machines
# with AVX512) differ from libm's in the last place for about a quarter of inputs: 1 ulp.
# Sums: a full or trailing-axes sum of a contiguous run adds in NumPy's pairwise order
# (sequential below 8 elements, eight accumulators and a tree from 8: bit-identical for C-
# contiguous operands); leading-axis sums add rows in turn as NumPy does. Products (matmul,
# dot, its gradients) add ``a[i,k] * b[k,j]`` over k in sequence, where NumPy calls BLAS,
# whose kernels may use FMA and other orders: they agree to a few ulp of ``sum |a*b|``
# (rtol 1e-12 over a 1000-step loop in the tests). fastmath is never used: it would reorder
# sums and drop NaN/inf semantics.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ir.graph import Block, Node, Value
from ir.native_scalar_ops import (
    ELEMENTWISE,
    PYTHON_OPERATORS,
    elementwise,
)
from ir.native_scalar_rules import OPERATOR_RULES, Rule, bind
from ir.native_scalar_values import (
    NUMERIC_DTYPES,
    PYTHON_NUMBERS,
    SMALL,
    BigArray,
    Elements,
    Repr,
    Static,
    Unsupported,
    as_elements,
    cast,
    is_small,
    static_shape,
    static_value,
)
from ir.types import TensorType, TupleType, Type

__all__ = ["MAX_LINES", "SMALL", "scalarized_source"]

DIVISIONS = frozenset({"prim::truediv", "prim::floordiv", "prim::mod"})

# Note [Scalarized code size]
# numba's type inference grows faster than linearly with a function's statements: unrolled
# straight-line code of a 50-operator chain on 16 elements (about 1,100 lines for f, 1,600
# for df) takes numba tens of seconds to compile, where the generic emitter's fused loops
# compile in about a second and run nearly as fast. Scalarizing pays where a loop runs the
# unrolled statements many times; a source past `MAX_LINES` lines is left to the generic
# emitter (None).
MAX_LINES = 400


def scalarized_source(block: Block, name: str) -> str | None:
    """The source of a numba function running ``block`` with its small arrays as scalar
    locals (Note [Scalarized regions]), or None when the block holds an operator or type
    this does not handle.

    >>> namespace = {"np": np}
    >>> exec(scalarized_source(gradient.f.block, "region"), namespace)       # doctest: +SKIP
    >>> region = numba.njit(error_model="numpy")(namespace["region"])       # doctest: +SKIP
    """
    emitter = Emitter()
    try:
        return emitter.function(block, name)
    except Unsupported:
        return None


class Emitter:
    """Writes the function's lines while walking the block, one `Repr` per IR value."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.depth = 1
        self.env: dict[Value, Repr] = {}
        self.counter = 0

    # -- lines and names ---------------------------------------------------------------------

    def fresh(self, hint: str = "v") -> str:
        self.counter += 1
        base = "".join(c if c.isalnum() else "_" for c in hint) or "v"
        return f"{base}_{self.counter}"

    def line(self, text: str) -> None:
        if len(self.lines) >= MAX_LINES:
            raise Unsupported(f"more than {MAX_LINES} lines (Note [Scalarized code size])")
        self.lines.append("    " * self.depth + text)

    def assign(self, expression: str, hint: str = "v") -> str:
        name = self.fresh(hint)
        self.line(f"{name} = {expression}")
        return name

    # -- the function ------------------------------------------------------------------------

    def function(self, block: Block, name: str) -> str:
        parameters = [self.fresh(value.name_hint or "arg") for value in block.inputs]
        for value, parameter in zip(block.inputs, parameters, strict=True):
            self.env[value] = self.parameter(value.ty, parameter)
        self.run_block(block)
        results = [self.returned(self.lookup(value), value.ty) for value in block.outputs]
        self.line(f"return ({''.join(item + ', ' for item in results)})")
        header = f"def {name}({', '.join(parameters)}):"
        return "\n".join([header, *self.lines]) + "\n"

    def parameter(self, ty: Type, name: str) -> Repr:
        if ty in PYTHON_NUMBERS:
            return Elements(np.array(name, dtype=object), PYTHON_NUMBERS[ty])
        shape = static_shape(ty)
        if shape is None or not isinstance(ty, TensorType) or ty.dtype is None:
            raise Unsupported(f"a parameter of type {ty}")
        if not is_small(ty):
            return BigArray(name, ty)
        if shape == ():  # the caller passes a 0-d array as its scalar (`ir.native_codegen`)
            return Elements(np.array(name, dtype=object), ty.dtype)
        items = np.empty(shape, dtype=object)
        for index in np.ndindex(shape):
            items[index] = self.assign(f"{name}[{', '.join(map(str, index)) or '()'}]", name)
        return Elements(items, ty.dtype, array=name)

    def returned(self, value: Repr, ty: Type) -> str:
        if isinstance(value, tuple) and isinstance(ty, TupleType):
            parts = [self.returned(v, t) for v, t in zip(value, ty.elems, strict=True)]
            return f"({''.join(part + ', ' for part in parts)})"
        if isinstance(value, BigArray):
            return value.name
        if isinstance(value, Elements | Static):
            elements = as_elements(value)
            if ty in PYTHON_NUMBERS:
                return elements.scalar
            if isinstance(ty, TensorType) and ty.shape == () and elements.shape == ():
                # a 0-d result leaves as a scalar of its dtype (`ir.native_codegen`)
                return cast(elements.scalar, elements.dtype, str(ty.dtype))
            return self.build(elements, ty)
        raise Unsupported(f"an output of type {ty}")

    def build(self, value: Elements, ty: Type) -> str:
        """A new array of the output's type holding the elements."""
        shape = static_shape(ty)
        if shape is None or shape != value.shape or not isinstance(ty, TensorType):
            raise Unsupported(f"an output of type {ty}")
        name = self.fresh("out")
        self.line(f"{name} = np.empty({shape!r}, np.{ty.dtype})")
        for index in np.ndindex(shape):
            key = ", ".join(map(str, index)) or "()"
            self.line(f"{name}[{key}] = {cast(value.at(index), value.dtype, str(ty.dtype))}")
        return name

    # -- values ------------------------------------------------------------------------------

    def lookup(self, value: Value) -> Repr:
        found = self.env.get(value)
        if found is not None:
            return found
        if value.node.kind == "prim::Constant":  # a constant defined outside the block
            return Static(value.node.attr("value"))
        raise Unsupported(f"a value from outside the block: {value}")

    def operand(self, value: Value) -> Elements:
        found = self.lookup(value)
        if isinstance(found, Elements | Static):
            return as_elements(found)
        raise Unsupported(f"{value} is not a small array or number")

    def static(self, value: Value) -> Any:
        """The value of an operand known while generating (a tuple built of constants too)."""
        return _static_of(self.lookup(value))

    def run_block(self, block: Block) -> None:
        for node in block.nodes():
            self.run_node(node)

    def run_node(self, node: Node) -> None:
        if node.kind == "prim::Constant":
            self.env[node.output] = Static(node.attr("value"))
            return
        rule = STRUCTURAL.get(node.kind)
        if rule is not None:
            results = rule(self, node)
        elif node.kind in PYTHON_OPERATORS:
            results = [self.python_operator(node)]
        elif node.kind in ELEMENTWISE:
            operands = [self.operand(v) for v in node.inputs]
            results = [elementwise(self, node.kind, operands, self.result_dtype(node.output))]
        else:
            raise Unsupported(f"operator {node.kind}")
        for value, result in zip(node.outputs, results, strict=True):
            self.check(value, result)
            self.env[value] = result

    def python_operator(self, node: Node) -> Elements:
        """A prim:: operator on Python numbers, with the errors Python raises that numba (under
        ``error_model="numpy"``) would not: division by zero, int() of a float (NaN, inf)."""
        operands = [self.operand(v) for v in node.inputs]
        numbers = [operand.scalar for operand in operands]
        if node.kind in DIVISIONS:
            self.line(f"if {numbers[1]} == 0:")
            self.line("    raise ZeroDivisionError('division by zero')")
        if node.kind == "prim::int" and operands[0].dtype not in ("int", "bool", "int64"):
            raise Unsupported("int() of a float")
        expression = PYTHON_OPERATORS[node.kind].format(*numbers)
        return Elements(
            np.array(self.assign(expression), dtype=object), self.result_dtype(node.output)
        )

    def result_dtype(self, value: Value) -> str:
        if value.ty in PYTHON_NUMBERS:
            return PYTHON_NUMBERS[value.ty]
        if isinstance(value.ty, TensorType) and value.ty.dtype in NUMERIC_DTYPES:
            return value.ty.dtype
        raise Unsupported(f"a result of type {value.ty}")

    def check(self, value: Value, result: Repr) -> None:
        """Every small result has the static shape and dtype its IR type says: a rule that
        got NumPy's semantics wrong refuses rather than computing something else."""
        if isinstance(result, Elements):
            if value.ty in PYTHON_NUMBERS:
                wanted: tuple[tuple[int, ...] | None, str | None] = ((), PYTHON_NUMBERS[value.ty])
            else:
                ty = value.ty
                wanted = (static_shape(ty), ty.dtype if isinstance(ty, TensorType) else None)
            if (result.shape, result.dtype) != wanted:
                raise Unsupported(f"{value} came out {result.shape} {result.dtype}")
            if result.items.size > SMALL:
                raise Unsupported(f"{value} has more than {SMALL} elements")


def _static_of(found: Repr) -> Any:
    if isinstance(found, tuple):
        return tuple(_static_of(item) for item in found)
    if isinstance(found, Elements | Static):
        return static_value(found)
    raise Unsupported("an operand that must be known while compiling is a run-time array")


def _if(emitter: Emitter, node: Node) -> list[Repr]:
    condition = emitter.operand(node.inputs[0])
    names = [_output_names(emitter, value) for value in node.outputs]
    emitter.line(f"if {condition.scalar}:")
    for block in node.blocks:
        emitter.depth += 1
        emitter.run_block(block)
        for targets, value in zip(names, block.outputs, strict=True):
            bind(emitter, targets, emitter.lookup(value))
        emitter.line("pass")
        emitter.depth -= 1
        if block is node.blocks[0]:
            emitter.line("else:")
    return [targets for targets in names]


def _output_names(
    emitter: Emitter, value: Value, initial: Repr | None = None, shared: bool = True
) -> Repr:
    """Locals that hold a value assigned in several places (an If output, a carried value);
    a carried tape stays an array however small, as its ``initial`` value is, and it stays
    owned (written in place) unless its initial value is ``shared`` with other readers."""
    if not isinstance(initial, BigArray) and (is_small(value.ty) or value.ty in PYTHON_NUMBERS):
        dtype = emitter.result_dtype(value)
        small_shape = static_shape(value.ty) or ()
        items = np.empty(small_shape, dtype=object)
        for index in np.ndindex(small_shape):
            items[index] = emitter.fresh(value.name_hint or "v")
        return Elements(items, dtype)
    shape = static_shape(value.ty)
    if shape is not None and isinstance(value.ty, TensorType):
        owned = isinstance(initial, BigArray) and initial.owned and not shared
        return BigArray(emitter.fresh(value.name_hint or "array"), value.ty, owned)
    raise Unsupported(f"a value of type {value.ty} assigned in a branch or loop")


def _loop(emitter: Emitter, node: Node) -> list[Repr]:
    trip, condition, *initial = node.inputs
    (body,) = node.blocks
    counter, *carried = body.inputs
    names = [
        _output_names(emitter, value, emitter.lookup(start), shared=len(start.uses) > 1)
        for value, start in zip(node.outputs, initial, strict=True)
    ]
    for targets, value in zip(names, initial, strict=True):
        bind(emitter, targets, emitter.lookup(value))
    for parameter, targets in zip(carried, names, strict=True):
        emitter.env[parameter] = targets
    count = emitter.operand(trip).scalar
    step = emitter.fresh(counter.name_hint or "i")
    emitter.env[counter] = Elements(np.array(step, dtype=object), "int")
    always = _is_true(emitter.lookup(condition)) and _is_true_constant(body.outputs[0])
    if always:
        emitter.line(f"for {step} in range({count}):")
    else:
        going = emitter.fresh("go")
        emitter.line(f"{going} = {emitter.operand(condition).scalar}")
        emitter.line(f"{step} = 0")
        emitter.line(f"while {going} and {step} < {count}:")
    emitter.depth += 1
    emitter.run_block(body)
    for targets, value in zip(names, body.outputs[1:], strict=True):
        bind(emitter, targets, emitter.lookup(value))
    if not always:
        emitter.line(f"{going} = {emitter.operand(body.outputs[0]).scalar}")
        emitter.line(f"{step} += 1")
    emitter.line("pass")
    emitter.depth -= 1
    return names


def _is_true(value: Repr) -> bool:
    return isinstance(value, Static) and value.value is True


def _is_true_constant(value: Value) -> bool:
    return value.node.kind == "prim::Constant" and value.node.attr("value") is True


STRUCTURAL: dict[str, Rule] = {**OPERATOR_RULES, "prim::If": _if, "prim::Loop": _loop}
