"""Sink ``aten::_unreduce`` past elementwise operators, so arithmetic on a reduction's gradient
runs at the reduced size and NumPy's broadcasting spreads it only where it meets a full-size
operand.

# Note [Sinking unreduce]
# The backward of ``np.sum(x)`` is ``_unreduce(dout, x.shape, ...)``: a broadcast view, free by
# itself, but every elementwise operator that reads it before it meets an array of x's size
# does its work at x's size: the backward of ``np.sum(100 * d ** 2)`` multiplies the view by 100
# and by 2, each allocating an array of x's size, where a hand-written backward would scale the
# one number. An elementwise operator gives the same element whether its operand is the
# broadcast or the array the broadcast views, so the rewrite changes no bit of any result:
#
#     %u = aten::_unreduce(%g, %shape, %axis, %keepdims)      %k = aten::expand_dims(%g, %axis)
#     %a = aten::mul(%u, %c)                          ==>     %a = aten::mul(%k, %c)
#     %b = aten::mul(%a, %d)                                  %b = aten::mul(%a, %d)
#
# where ``%k`` is the gradient with the reduced dims put back as 1s (``%g`` itself when they
# were kept, or when everything was reduced). An operator whose other operands reach the full
# shape (``%d``) has that shape without the broadcast. One whose result stays smaller (``%c`` is
# a number) gets a new ``_unreduce(%a, shape, None, True)`` after it, taking the result to the
# shape it used to have, which sinks in turn. Only an array gradient is moved (a Python float
# is weak in NumPy's promotion, the broadcast array it became was not).
"""

from __future__ import annotations

import numpy as np

from ir.analysis import constant_value, is_constant
from ir.graph import Graph, Node, Value
from ir.ops.elementwise import BINARY, UNARY
from ir.ops.shape_rules import normalize_axes
from ir.types import BOOL, NONE, TensorType, type_of_value
from passes.pattern_rewriter import PatternTable, Rewriter
from passes.registry import register_pass
from passes.rewriting import insert_typed, known_shape, retype

UNREDUCE = "aten::_unreduce"
ELEMENTWISE = frozenset(f"aten::{name}" for name in (*BINARY, *UNARY))

# One pattern: see Note [Pattern rewrite driver] for how the table is applied.
PATTERNS = PatternTable[None]("sink-unreduce")
Sinker = Rewriter[None]


@register_pass("sink-unreduce")
def sink_unreduce(graph: Graph) -> bool:
    """Move ``aten::_unreduce`` after the elementwise operators that read it. Returns True if
    changed. See Note [Sinking unreduce].

    Given:   %u : Double(3, 4) = aten::_unreduce(%g, %shape, %none, %false)   (%g : Double())
             %a : Double(3, 4) = aten::mul(%u, %c)                              (%c : float)
             %b : Double(3, 4) = aten::mul(%a, %d)                              (%d : Double(3, 4))
    Execute: sink_unreduce(graph)
    Result:  %a : Double() = aten::mul(%g, %c)
             %b : Double(3, 4) = aten::mul(%a, %d)
    """
    return PATTERNS.rewrite(graph, None)


@PATTERNS.register(UNREDUCE)
def sink(rewriter: Sinker, node: Node) -> bool:
    """Make the elementwise readers of ``node`` read the gradient it broadcasts (with the
    reduced dims put back as 1s), each followed by a new ``_unreduce`` when its result is now
    smaller than before."""
    grad, shape, axis, keepdims = node.inputs
    if not all(is_constant(v) for v in (shape, axis, keepdims)):
        return False
    if not isinstance(grad.ty, TensorType) or known_shape(grad.ty) is None:
        return False
    changed = _skip_inner_broadcast(rewriter, node)
    grad = node.inputs[0]
    spread = known_shape(grad.ty)
    target = known_shape(node.output.ty)
    if spread is None or target is None:
        return changed
    reduced = not constant_value(node.inputs[3]) and constant_value(node.inputs[2]) is not None
    if reduced:
        axes = normalize_axes(constant_value(node.inputs[2]), len(target))
        kept = list(spread)
        for position in sorted(axes):
            kept.insert(position, 1)
        spread = tuple(kept)
    expanded: Value | None = None
    for use in list(node.output.uses):
        user = use.user
        if user.kind not in ELEMENTWISE or user.blocks:
            continue
        others = [known_shape(v.ty) for i, v in enumerate(user.inputs) if i != use.index]
        produced = known_shape(user.output.ty)
        if produced is None or any(shape is None for shape in others):
            continue
        if expanded is None:
            expanded = grad if not reduced else _expand(rewriter, node)
        result_shape = np.broadcast_shapes(spread, *(s for s in others if s is not None))
        rewriter.replace_input(user, use.index, expanded)
        changed = True
        if tuple(result_shape) == produced:
            continue
        # The result is smaller than before: broadcast it back where it is read.
        full_type = user.output.ty
        readers = list(user.output.uses)
        retype(user)
        with rewriter.inserting_after(user):
            shape_value = rewriter.insert_constant(produced, type_of_value(produced), None)
            no_axis = rewriter.insert_constant(None, NONE, None)
            keep = rewriter.insert_constant(True, BOOL, None)
            again = rewriter.insert(
                UNREDUCE, [user.output, shape_value, no_axis, keep], [full_type], node.source_range
            )
        for reader in readers:
            rewriter.replace_input(reader.user, reader.index, again.output)
    if not node.output.uses:
        rewriter.destroy(node)
    return changed


def _expand(rewriter: Sinker, node: Node) -> Value:
    """The gradient with the reduced dims put back as 1s, just after ``node``."""
    with rewriter.inserting_after(node):
        return insert_typed(rewriter, "aten::expand_dims", [node.inputs[0], node.inputs[2]], node)


def _skip_inner_broadcast(rewriter: Sinker, node: Node) -> bool:
    """``_unreduce(_unreduce(%a, ...), %shape, ...)`` of an %a with one element (a scalar's
    gradient spread twice) is ``_unreduce(%a, %shape, None, True)``."""
    inner = node.inputs[0].node
    if inner.kind != UNREDUCE:
        return False
    source = inner.inputs[0]
    source_shape = known_shape(source.ty)
    target = known_shape(node.output.ty)
    if not isinstance(source.ty, TensorType) or source_shape is None or target is None:
        return False
    if len(source_shape) > len(target) or any(d != 1 for d in source_shape):
        return False
    with rewriter.inserting_before(node):
        no_axis = rewriter.insert_constant(None, NONE, None)
        keep = rewriter.insert_constant(True, BOOL, None)
    rewriter.replace_input(node, 0, source)
    rewriter.replace_input(node, 2, no_axis)
    rewriter.replace_input(node, 3, keep)
    if not inner.output.uses:
        rewriter.destroy(inner)
    return True
