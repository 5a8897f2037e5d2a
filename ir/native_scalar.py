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

from dataclasses import dataclass
from typing import Any

import numpy as np

from ir.graph import Block, Node, Value
from ir.native_scalar_ops import (
    ELEMENTWISE,
    NUMERIC_DTYPES,
    PYTHON_OPERATORS,
    REDUCTIONS,
    SMALL,
    VIEWS,
    Elements,
    Static,
    Unsupported,
    along,
    as_elements,
    cast,
    converted,
    elementwise,
    matmul,
    matmul_backward,
    normalize_axes,
    placed,
    reduce,
    static_value,
    sum_to_shape,
)
from ir.types import BOOL, FLOAT, INT, TensorType, TupleType, Type

__all__ = ["SMALL", "scalarized_source"]


@dataclass
class BigArray:
    """An array too large for scalars, held as a numba array named ``name``."""

    name: str
    ty: TensorType


Repr = Elements | Static | BigArray | tuple[Any, ...]
PYTHON_NUMBERS = {INT: "int", FLOAT: "float", BOOL: "bool"}


def scalarized_source(block: Block, name: str) -> str | None:
    """The source of a numba function running ``block`` with its small arrays as scalar
    locals (Note [Scalarized regions]), or None when the block holds an operator or type
    this does not handle.

    >>> source = scalarized_source(f.block, "region")
    >>> region = numba.njit(namespace_of(source)["region"])    # doctest: +SKIP
    """
    emitter = Emitter()
    try:
        return emitter.function(block, name)
    except Unsupported:
        return None


def static_shape(ty: Type) -> tuple[int, ...] | None:
    if isinstance(ty, TensorType) and ty.is_complete and ty.dtype in NUMERIC_DTYPES:
        return tuple(d for d in ty.shape or () if d is not None)
    return None


def is_small(ty: Type) -> bool:
    shape = static_shape(ty)
    return shape is not None and int(np.prod(shape, dtype=np.int64)) <= SMALL


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
        found = self.lookup(value)
        if isinstance(found, Elements | Static):
            return static_value(found)
        raise Unsupported(f"{value} is not known while compiling")

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
            numbers = [self.operand(v).scalar for v in node.inputs]
            expression = PYTHON_OPERATORS[node.kind].format(*numbers)
            dtype = self.result_dtype(node.output)
            results = [Elements(np.array(self.assign(expression), dtype=object), dtype)]
        elif node.kind in ELEMENTWISE:
            operands = [self.operand(v) for v in node.inputs]
            results = [elementwise(self, node.kind, operands, self.result_dtype(node.output))]
        else:
            raise Unsupported(f"operator {node.kind}")
        for value, result in zip(node.outputs, results, strict=True):
            self.check(value, result)
            self.env[value] = result

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


# Structural rules and the rules of operators that take static operands: each gives the
# node's results, one `Repr` per output.
def _view(emitter: Emitter, node: Node) -> list[Repr]:
    value = emitter.lookup(node.inputs[0])
    if isinstance(value, BigArray):
        return [_big_select(emitter, node, value)] if node.kind == "aten::select" else _no(node)
    items = as_elements(value) if isinstance(value, Static) else value
    if not isinstance(items, Elements):
        return _no(node)
    statics = [emitter.static(v) for v in node.inputs[1:]]
    if node.kind in ("aten::conj", "aten::real") and items.dtype not in ("float64", "float32"):
        return _no(node)
    try:
        rearranged = VIEWS[node.kind](items.items, *statics)
    except (ValueError, IndexError, TypeError) as error:
        raise Unsupported(str(error)) from None
    return [Elements(np.asarray(rearranged, dtype=object), items.dtype)]


def _no(node: Node) -> list[Repr]:
    raise Unsupported(f"{node.kind} on these operands")


def _check_index(emitter: Emitter, index: str, size: int) -> str:
    """A run-time index normalised and checked: numba reads out of bounds silently."""
    name = emitter.assign(f"{index} + {size} if {index} < 0 else {index}", "index")
    emitter.line(f"if {name} < 0 or {name} >= {size}:")
    emitter.line(f"    raise IndexError('index out of range for an axis of size {size}')")
    return name


def _row_reads(emitter: Emitter, array: str, shape: tuple[int, ...], axis: int, index: str) -> Any:
    rest = shape[:axis] + shape[axis + 1 :]
    items = np.empty(rest, dtype=object)
    for position in np.ndindex(rest):
        key = [*map(str, position[:axis]), index, *map(str, position[axis:])]
        items[position] = emitter.assign(f"{array}[{', '.join(key)}]", array)
    return items


def _big_select(emitter: Emitter, node: Node, value: BigArray) -> Repr:
    axis, index = node.inputs[1:]
    shape = static_shape(value.ty)
    if shape is None or not is_small(node.output.ty):
        raise Unsupported("select of a big array giving a big array")
    axis_value = emitter.static(axis) % len(shape)
    checked = _check_index(emitter, emitter.operand(index).scalar, shape[axis_value])
    return Elements(
        _row_reads(emitter, value.name, shape, axis_value, checked), str(value.ty.dtype)
    )


def _select_runtime(emitter: Emitter, node: Node) -> list[Repr]:
    """aten::select with an index known only at run time on a small input array."""
    value = emitter.lookup(node.inputs[0])
    index = emitter.lookup(node.inputs[2])
    if isinstance(index, Static) or isinstance(value, BigArray):
        return _view(emitter, node)
    if not isinstance(value, Elements) or value.array is None:
        return _no(node)
    axis = emitter.static(node.inputs[1]) % len(value.shape)
    checked = _check_index(emitter, emitter.operand(node.inputs[2]).scalar, value.shape[axis])
    return [Elements(_row_reads(emitter, value.array, value.shape, axis, checked), value.dtype)]


def _reduction(emitter: Emitter, node: Node) -> list[Repr]:
    value = emitter.operand(node.inputs[0])
    axis = emitter.static(node.inputs[1]) if len(node.inputs) > 1 else None
    keepdims = bool(emitter.static(node.inputs[2])) if len(node.inputs) > 2 else False
    axes = normalize_axes(axis, len(value.shape))
    return [reduce(emitter, node.kind, value, axes, keepdims, emitter.result_dtype(node.output))]


def _sum_to_size(emitter: Emitter, node: Node) -> list[Repr]:
    value = emitter.operand(node.inputs[0])
    shape = emitter.static(node.inputs[1])
    if shape is None:
        return [value]
    target = tuple(shape) if isinstance(shape, tuple | list) else (shape,)
    return [sum_to_shape(emitter, value, target)]


def _unreduce(emitter: Emitter, node: Node) -> list[Repr]:
    grad = emitter.operand(node.inputs[0])
    shape, axis, keepdims = (emitter.static(v) for v in node.inputs[1:])
    items = grad.items
    if not keepdims and axis is not None:
        items = np.expand_dims(items, normalize_axes(axis, len(shape)))
    return [Elements(np.broadcast_to(items, tuple(shape)), grad.dtype)]


def _matmul(emitter: Emitter, node: Node) -> list[Repr]:
    a, b = (emitter.operand(v) for v in node.inputs)
    if node.kind == "aten::dot" and (len(a.shape) > 2 or len(b.shape) > 2):
        return _no(node)
    return [matmul(emitter, a, b, emitter.result_dtype(node.output))]


def _matmul_backward(emitter: Emitter, node: Node) -> list[Repr]:
    grad, a, b = (emitter.operand(v) for v in node.inputs)
    if len({grad.dtype, a.dtype, b.dtype}) != 1:
        return _no(node)
    wrt = 0 if node.kind == "aten::_matmul_backward_self" else 1
    return [matmul_backward(emitter, grad, a, b, wrt)]


def _outer(emitter: Emitter, node: Node) -> list[Repr]:
    a, b = (emitter.operand(v) for v in node.inputs)
    column = Elements(a.items.reshape(-1, 1), a.dtype)
    row = Elements(b.items.reshape(1, -1), b.dtype)
    return [elementwise(emitter, "aten::mul", [column, row], emitter.result_dtype(node.output))]


def _zeros(emitter: Emitter, node: Node) -> list[Repr]:
    ty = node.output.ty
    shape = static_shape(ty)
    if shape is None or not isinstance(ty, TensorType):
        return _no(node)
    if not is_small(ty):
        name = emitter.assign(f"np.zeros({shape!r}, np.{ty.dtype})", "zeros")
        return [BigArray(name, ty)]
    zero = cast("0", "int", str(ty.dtype))
    return [Elements(np.full(shape, zero, dtype=object), str(ty.dtype))]


def _astype(emitter: Emitter, node: Node) -> list[Repr]:
    return [converted(emitter, emitter.operand(node.inputs[0]), emitter.result_dtype(node.output))]


def _select_backward(emitter: Emitter, node: Node) -> list[Repr]:
    grad = emitter.operand(node.inputs[0])
    shape, axis = emitter.static(node.inputs[1]), emitter.static(node.inputs[2])
    shape = tuple(shape) if isinstance(shape, tuple | list) else (shape,)
    dtype = emitter.result_dtype(node.output)
    zero = cast("0", "int", dtype)
    index = emitter.lookup(node.inputs[3])
    if isinstance(index, Static):
        return [placed(grad, shape, along(axis, index.value, len(shape)), zero)]
    # At a run-time index: each element is the gradient's where the index points, else zero.
    axis %= len(shape)
    checked = _check_index(emitter, emitter.operand(node.inputs[3]).scalar, shape[axis])
    items = np.empty(shape, dtype=object)
    for position in np.ndindex(shape):
        source = grad.items[position[:axis] + position[axis + 1 :]]
        items[position] = emitter.assign(f"{source} if {checked} == {position[axis]} else {zero}")
    return [Elements(items, dtype)]


def _slice_backward(emitter: Emitter, node: Node) -> list[Repr]:
    grad = emitter.operand(node.inputs[0])
    shape, axis, start, stop, step = (emitter.static(v) for v in node.inputs[1:])
    shape = tuple(shape) if isinstance(shape, tuple | list) else (shape,)
    key = along(axis, slice(start, stop, step), len(shape))
    return [placed(grad, shape, key, cast("0", "int", emitter.result_dtype(node.output)))]


def _tape_array(emitter: Emitter, node: Node) -> list[Repr]:
    ty = node.output.ty
    row_shape, dtype = emitter.static(node.inputs[1]), emitter.static(node.inputs[2])
    if not isinstance(ty, TensorType) or static_shape(TensorType(dtype, (1, *row_shape))) is None:
        return _no(node)
    length = emitter.operand(node.inputs[0]).scalar
    shape = ", ".join([f"max({length}, 0)", *map(str, row_shape)])
    return [BigArray(emitter.assign(f"np.empty(({shape},), np.{dtype})", "tape"), ty)]


def _tape_write(emitter: Emitter, node: Node) -> list[Repr]:
    tape = emitter.lookup(node.inputs[0])
    shape = static_shape(tape.ty) if isinstance(tape, BigArray) else None
    if not isinstance(tape, BigArray) or shape is None:
        return _no(node)
    written = emitter.lookup(node.inputs[2])
    if isinstance(written, Static) and written.value is None:
        return [tape]  # an undefined value leaves its row unwritten (`tape_write`)
    row = emitter.operand(node.inputs[2])
    if row.shape != shape[1:]:
        return _no(node)
    index = _check_index(emitter, emitter.operand(node.inputs[1]).scalar, shape[0])
    for position in np.ndindex(row.shape):
        key = ", ".join([index, *map(str, position)])
        emitter.line(
            f"{tape.name}[{key}] = {cast(row.at(position), row.dtype, str(tape.ty.dtype))}"
        )
    return [tape]


def _previous_row(emitter: Emitter, node: Node) -> list[Repr]:
    """Row ``index - 1`` of the tape, ``first`` at index 0 (`previous_row`)."""
    tape = emitter.lookup(node.inputs[0])
    first = emitter.operand(node.inputs[1])
    shape = static_shape(tape.ty) if isinstance(tape, BigArray) else None
    if not isinstance(tape, BigArray) or shape is None or first.shape != shape[1:]:
        return _no(node)
    index = emitter.operand(node.inputs[2]).scalar
    items = np.empty(first.shape, dtype=object)
    for position in np.ndindex(first.shape):
        items[position] = emitter.fresh("row")
    emitter.line(f"if {index} == 0:")
    emitter.depth += 1
    _bind(emitter, Elements(items, first.dtype), first)
    emitter.depth -= 1
    emitter.line("else:")
    emitter.depth += 1
    previous = _check_index(emitter, f"{index} - 1", shape[0])
    _bind(
        emitter,
        Elements(items, first.dtype),
        Elements(_row_reads_expressions(tape.name, shape, previous), first.dtype),
    )
    emitter.depth -= 1
    return [Elements(items, first.dtype)]


def _row_reads_expressions(array: str, shape: tuple[int, ...], index: str) -> Any:
    items = np.empty(shape[1:], dtype=object)
    for position in np.ndindex(shape[1:]):
        items[position] = f"{array}[{', '.join([index, *map(str, position)])}]"
    return items


def _uninitialized(emitter: Emitter, node: Node) -> list[Repr]:
    return [Static(None)]


def _tuple_construct(emitter: Emitter, node: Node) -> list[Repr]:
    return [tuple(emitter.lookup(v) for v in node.inputs)]


def _tuple_unpack(emitter: Emitter, node: Node) -> list[Repr]:
    value = emitter.lookup(node.inputs[0])
    if isinstance(value, Static) and isinstance(value.value, tuple):
        return [Static(item) for item in value.value]
    return list(value) if isinstance(value, tuple) else _no(node)


def _tuple_index(emitter: Emitter, node: Node) -> list[Repr]:
    value = emitter.lookup(node.inputs[0])
    position = emitter.static(node.inputs[1])
    if isinstance(value, Static) and isinstance(value.value, tuple):
        return [Static(value.value[position])]
    return [value[position]] if isinstance(value, tuple) else _no(node)


def _if(emitter: Emitter, node: Node) -> list[Repr]:
    condition = emitter.operand(node.inputs[0])
    names = [_output_names(emitter, value) for value in node.outputs]
    emitter.line(f"if {condition.scalar}:")
    for block in node.blocks:
        emitter.depth += 1
        emitter.run_block(block)
        for targets, value in zip(names, block.outputs, strict=True):
            _bind(emitter, targets, emitter.lookup(value))
        emitter.line("pass")
        emitter.depth -= 1
        if block is node.blocks[0]:
            emitter.line("else:")
    return [targets for targets in names]


def _output_names(emitter: Emitter, value: Value) -> Repr:
    """Locals that hold a value assigned in several places (an If output, a carried value)."""
    if is_small(value.ty) or value.ty in PYTHON_NUMBERS:
        dtype = emitter.result_dtype(value)
        small_shape = static_shape(value.ty) or ()
        items = np.empty(small_shape, dtype=object)
        for index in np.ndindex(small_shape):
            items[index] = emitter.fresh(value.name_hint or "v")
        return Elements(items, dtype)
    shape = static_shape(value.ty)
    if shape is not None and isinstance(value.ty, TensorType):
        return BigArray(emitter.fresh(value.name_hint or "array"), value.ty)
    raise Unsupported(f"a value of type {value.ty} assigned in a branch or loop")


def _bind(emitter: Emitter, targets: Repr, value: Repr) -> None:
    if isinstance(targets, BigArray):
        if not isinstance(value, BigArray):
            raise Unsupported("a big array bound to a small value")
        emitter.line(f"{targets.name} = {value.name}")
        return
    assert isinstance(targets, Elements)
    if isinstance(value, Static) and value.value is None:
        # prim::Uninitialized: the branch does not define it and nothing reads it; numba
        # needs the locals defined on every path, so they get zeros
        zero = cast("0", "int", targets.dtype)
        value = Elements(np.full(targets.shape, zero, dtype=object), targets.dtype)
    source = as_elements(value) if isinstance(value, Static) else value
    if not isinstance(source, Elements) or source.shape != targets.shape:
        raise Unsupported("a value bound to locals of another shape")
    pairs = [
        (targets.at(i), cast(source.at(i), source.dtype, targets.dtype))
        for i in np.ndindex(targets.shape)
    ]
    if pairs:  # all at once: a carried value may read another one's old element
        emitter.line(f"{', '.join(t for t, _ in pairs)} = {', '.join(s for _, s in pairs)}")


def _loop(emitter: Emitter, node: Node) -> list[Repr]:
    trip, condition, *initial = node.inputs
    (body,) = node.blocks
    counter, *carried = body.inputs
    names = [_output_names(emitter, value) for value in node.outputs]
    for targets, value in zip(names, initial, strict=True):
        _bind(emitter, targets, emitter.lookup(value))
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
        _bind(emitter, targets, emitter.lookup(value))
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


STRUCTURAL: dict[str, Any] = {
    **dict.fromkeys(VIEWS, _view),
    "aten::select": _select_runtime,
    **dict.fromkeys(REDUCTIONS, _reduction),
    "aten::sum_to_size": _sum_to_size,
    "aten::_unreduce": _unreduce,
    "aten::matmul": _matmul,
    "aten::dot": _matmul,
    "aten::_matmul_backward_self": _matmul_backward,
    "aten::_matmul_backward_other": _matmul_backward,
    "aten::outer": _outer,
    "aten::zeros": _zeros,
    "aten::zeros_like": _zeros,
    "aten::astype": _astype,
    "aten::_grad_like": _astype,
    "aten::_select_backward": _select_backward,
    "aten::_slice_backward": _slice_backward,
    "prim::TapeArray": _tape_array,
    "prim::TapeWrite": _tape_write,
    "aten::_previous_row": _previous_row,
    "prim::Uninitialized": _uninitialized,
    "prim::TupleConstruct": _tuple_construct,
    "prim::TupleUnpack": _tuple_unpack,
    "prim::TupleIndex": _tuple_index,
    "prim::If": _if,
    "prim::Loop": _loop,
}
