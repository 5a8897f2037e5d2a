"""Arithmetic peepholes that change no bit of any result: powers with the exponents 1 and 2, and
negations and power-of-two scalings moved onto the scalar side of a product.

# Note [Exact arithmetic rewrites]
# Derivative formulas are written for every case, so a specialised program is full of work a
# hand-written one would not do: ``x ** 2``'s backward is ``dout * 2 * x ** (2 - 1)``, ``a - b``'s
# negates the whole gradient before the next product scales it. Each rewrite here gives the
# same bits as what it replaces (IEEE 754, round to nearest):
#
#   pow(x, 1) -> x                            x ** 1 is x (when the result keeps x's type)
#   pow(x, 2) -> square(x)                    both are the correctly rounded x * x (for real
#                                             x: NumPy's complex power is not)
#   neg(mul(a, s)) -> mul(a, neg(s))          negation only flips a sign
#   mul(neg(a), s) -> mul(a, neg(s))
#   mul(mul(a, s), c) -> mul(a, mul(s, c))    s or c a power of two: scaling by it is exact
#   op(neg(a), b) -> neg(op(a, b))            op a product, quotient or sum_to_size: rounding is
#                                             symmetric, so the negation moves past it and
#                                             negates the smaller result of a sum_to_size
#   add(x, neg(y)) -> sub(x, y), sub(x, neg(y)) -> add(x, y), neg(neg(x)) -> x
#
# where ``s`` is a scalar (a Python number or a 0-d array), so the negation and the scaling
# move from an array to one number. A power-of-two scaling is exact unless the product leaves
# the range of normal numbers (an overflow or a subnormal result), where the two orders may
# round differently. Only floating and complex arrays are rewritten.
"""

from __future__ import annotations

import math

import numpy as np

from ir.analysis import constant_value, is_constant
from ir.graph import Graph, Node, Value
from ir.ops import NOT_CONSTANT
from ir.types import FLOAT, INT, TensorType, type_of_value
from passes.pattern_rewriter import PatternTable, Rewriter
from passes.registry import register_pass
from passes.rewriting import PYTHON_SCALARS, insert_typed, known_shape, static_value

Simplifier = Rewriter[None]


def _floating(node: Node) -> bool:
    ty = node.outputs[0].ty if len(node.outputs) == 1 else None
    return (
        isinstance(ty, TensorType)
        and ty.dtype is not None
        and np.dtype(ty.dtype).kind in "fc"
        and known_shape(ty) is not None
    )


# Only floating and complex arrays of known shapes are rewritten (Note [Exact arithmetic
# rewrites]); see Note [Pattern rewrite driver] for how the table is applied.
PATTERNS = PatternTable[None]("simplify-arithmetic", guard=_floating)


@register_pass("simplify-arithmetic")
def simplify_arithmetic(graph: Graph) -> bool:
    """Rewrite powers by 1 and 2, and move negations and power-of-two scalings of arrays onto
    the scalar operand of a product. Returns True if changed. See Note [Exact arithmetic
    rewrites].

    Given:   %p : Double(9) = aten::pow(%x, %two)                         (%two = 2)
             %n : Double(9) = aten::neg(%m)    %m = aten::mul(%s, %d)     (%s : Double())
    Execute: simplify_arithmetic(graph)
    Result:  %p : Double(9) = aten::square(%x)
             %n = aten::mul(%d, %ns)           %ns : Double() = aten::neg(%s)
    """
    return PATTERNS.rewrite(graph, None)


@PATTERNS.register("aten::pow")
def power(rewriter: Simplifier, node: Node) -> bool:
    """pow(x, 1) -> x; pow(x, 2) -> square(x)."""
    base, exponent = node.inputs
    value = static_value(exponent)
    if value is NOT_CONSTANT or np.ndim(value) != 0 or base.ty != node.output.ty:
        return False
    if _complex(node):
        # NumPy's complex power is not the correctly rounded product: z ** 2.0 and z * z may
        # differ in the last bit, so nothing is rewritten.
        return False
    if value == 1:
        rewriter.replace(node, [base])
        return True
    if value == 2:
        with rewriter.inserting_before(node):
            square = insert_typed(rewriter, "aten::square", [base], node)
        if square.ty != node.output.ty:
            square.node.destroy()
            return False
        rewriter.replace(node, [square], take_names=True)
        return True
    return False


@PATTERNS.register("aten::neg")
def negated_product(rewriter: Simplifier, node: Node) -> bool:
    """neg(mul(a, s)) -> mul(a, neg(s))."""
    product = node.inputs[0].node
    if product.kind != "aten::mul" or product.output.ty != node.output.ty:
        return False
    position = _scalar_operand(product)
    if position is None:
        return False
    with rewriter.inserting_before(node):
        negated = _negate(rewriter, product.inputs[position], node)
        if negated is None:
            return False
        multiplier = product.inputs[1 - position]
        result = insert_typed(rewriter, "aten::mul", [multiplier, negated], product)
    return _replace(rewriter, node, result)


@PATTERNS.register("aten::neg")
def double_negation(rewriter: Simplifier, node: Node) -> bool:
    """neg(neg(x)) -> x."""
    inner = node.inputs[0].node
    if inner.kind != "aten::neg" or inner.inputs[0].ty != node.output.ty:
        return False
    rewriter.replace_all_uses_with(node.output, inner.inputs[0])
    _destroy_dead(rewriter, node)
    return True


@PATTERNS.register("aten::mul")
def scaled_product(rewriter: Simplifier, node: Node) -> bool:
    """mul(neg(a), s) -> mul(a, neg(s)); mul(mul(a, s), c) -> mul(a, mul(s, c)) when s or c is
    a power of two."""
    position = _scalar_operand(node)
    if position is None:
        return False
    scalar, operand = node.inputs[position], node.inputs[1 - position]
    inner = operand.node
    if inner.kind == "aten::neg" and inner.output.ty == node.output.ty:
        with rewriter.inserting_before(node):
            negated = _negate(rewriter, scalar, node)
            if negated is None:
                return False
            result = insert_typed(rewriter, "aten::mul", [inner.inputs[0], negated], node)
        return _replace(rewriter, node, result)
    if inner.kind != "aten::mul" or inner.output.ty != node.output.ty:
        return False
    inner_position = _scalar_operand(inner)
    if inner_position is None:
        return False
    inner_scalar = inner.inputs[inner_position]
    if not (_power_of_two(scalar) or _power_of_two(inner_scalar)):
        return False
    with rewriter.inserting_before(node):
        if all(v.ty in PYTHON_SCALARS and is_constant(v) for v in (inner_scalar, scalar)):
            number = constant_value(inner_scalar) * constant_value(scalar)
            scale = rewriter.insert_constant(number, type_of_value(number), node.source_range)
        else:
            scale = insert_typed(rewriter, "aten::mul", [inner_scalar, scalar], node)
        array = inner.inputs[1 - inner_position]
        result = insert_typed(rewriter, "aten::mul", [array, scale], node)
    if not _is_scalar(scale):
        _discard(result, scale)
        return False
    return _replace(rewriter, node, result)


# Operators a negation of an operand can move through or end in (Note [Exact arithmetic
# rewrites]).
_CARRIERS = ("aten::mul", "aten::div", "aten::sum_to_size", "aten::add", "aten::sub")


@PATTERNS.register(*_CARRIERS)
def delayed_negation(rewriter: Simplifier, node: Node) -> bool:
    """An operand negated for this node alone: the negation moves after it, where a reduction
    makes it cheaper, or into it (``x + -y`` is ``x - y``)."""
    for position, operand in enumerate(node.inputs):
        negation = operand.node
        if negation.kind != "aten::neg" or len(operand.uses) != 1:
            continue
        if node.kind == "aten::sum_to_size" and position != 0:
            continue
        if operand.ty != negation.inputs[0].ty:
            continue
        moved = node.kind not in ("aten::add", "aten::sub")
        if moved and (
            _size(operand) < _size(node.output)
            or (_is_scalar(operand) and not _is_scalar(node.output))
        ):
            # A negated scalar is where the negation costs least, and where negated_product
            # puts it: moving it out of a one-element product would undo that, forever.
            continue
        if node.kind == "aten::sub" and position == 0:
            continue
        plain = negation.inputs[0]
        with rewriter.inserting_before(node):
            if node.kind in ("aten::add", "aten::sub"):
                other = node.inputs[1 - position]
                kind = "aten::sub" if node.kind == "aten::add" else "aten::add"
                result = insert_typed(rewriter, kind, [other, plain], node)
            else:
                inputs = list(node.inputs)
                inputs[position] = plain
                inner = insert_typed(rewriter, node.kind, inputs, node)
                result = insert_typed(rewriter, "aten::neg", [inner], negation)
        return _replace(rewriter, node, result)
    return False


def _size(value: Value) -> int:
    shape = known_shape(value.ty)
    return -1 if shape is None else math.prod(shape)


def _complex(node: Node) -> bool:
    ty = node.outputs[0].ty
    return isinstance(ty, TensorType) and ty.dtype is not None and np.dtype(ty.dtype).kind == "c"


def _scalar_operand(node: Node) -> int | None:
    """The position of an operand of binary ``node`` that is one number (a Python number or a
    0-d array), when the other is not; None otherwise."""
    for position, operand in enumerate(node.inputs):
        if _is_scalar(operand) and not _is_scalar(node.inputs[1 - position]):
            return position
    return None


def _is_scalar(value: Value) -> bool:
    return value.ty in PYTHON_SCALARS or known_shape(value.ty) == ()


def _power_of_two(value: Value) -> bool:
    if not is_constant(value) or value.ty not in (INT, FLOAT):
        return False
    number = constant_value(value)
    if isinstance(number, bool) or number == 0 or not math.isfinite(number):
        return False
    mantissa, _ = math.frexp(abs(float(number)))
    return mantissa == 0.5


def _negate(rewriter: Simplifier, value: Value, like: Node) -> Value | None:
    """``-value`` for a scalar: a constant when ``value`` is one, else an ``aten::neg``."""
    if value.ty in PYTHON_SCALARS:
        if not is_constant(value) or value.ty not in (INT, FLOAT):
            return None
        negated = -constant_value(value)
        return rewriter.insert_constant(negated, type_of_value(negated), like.source_range)
    return insert_typed(rewriter, "aten::neg", [value], like)


def _replace(rewriter: Simplifier, node: Node, result: Value) -> bool:
    if result.ty != node.output.ty:
        _discard(result)
        return False
    result.name_hint = node.output.name_hint
    rewriter.replace_all_uses_with(node.output, result)
    _destroy_dead(rewriter, node)
    return True


def _discard(*values: Value) -> None:
    """Destroy the nodes a failed rewrite inserted (those of ``values`` nothing reads, and the
    operands only they read)."""
    for value in values:
        node = value.node
        if node.owning_block is None or value.uses:
            continue
        operands = [v for v in node.inputs if v.node.kind in _INSERTED]
        node.destroy()
        _discard(*operands)


_INSERTED = ("aten::neg", "aten::mul", "prim::Constant")


def _destroy_dead(rewriter: Simplifier, node: Node) -> None:
    """Destroy ``node`` and the producers of its operands that only it read."""
    operands = list(dict.fromkeys(v.node for v in node.inputs))
    rewriter.destroy(node)
    for operand in operands:
        if operand.kind in ("aten::neg", "aten::mul") and not operand.output.uses:
            rewriter.destroy(operand)
