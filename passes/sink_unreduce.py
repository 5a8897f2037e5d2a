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

from ir.graph import Graph, Node, Value
from ir.ops.elementwise import BINARY, UNARY
from ir.ops.shape_rules import normalize_axes
from ir.types import BOOL, NONE, TensorType, type_of_value
from passes.constant_propagation import constant_value, is_constant
from passes.registry import register_pass
from passes.rewriting import insert_typed, known_shape, retype

UNREDUCE = "aten::_unreduce"
ELEMENTWISE = frozenset(f"aten::{name}" for name in (*BINARY, *UNARY))


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
    changed = False
    worklist = [node for node in graph.all_nodes() if node.kind == UNREDUCE]
    while worklist:
        node = worklist.pop()
        if node.owning_block is not None:
            changed |= _sink(graph, node, worklist)
    return changed


def _sink(graph: Graph, node: Node, worklist: list[Node]) -> bool:
    grad, shape, axis, keepdims = node.inputs
    if not all(is_constant(v) for v in (shape, axis, keepdims)):
        return False
    if not isinstance(grad.ty, TensorType) or known_shape(grad.ty) is None:
        return False
    changed = _skip_inner_broadcast(graph, node)
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
            expanded = grad if not reduced else _expand(graph, node)
        result_shape = np.broadcast_shapes(spread, *(s for s in others if s is not None))
        user.replace_input(use.index, expanded)
        changed = True
        if tuple(result_shape) == produced:
            continue
        # The result is smaller than before: broadcast it back where it is read.
        full_type = user.output.ty
        readers = list(user.output.uses)
        retype(user)
        with graph.inserting_after(user):
            shape_value = graph.insert_constant(produced, type_of_value(produced))
            no_axis = graph.insert_constant(None, NONE)
            keep = graph.insert_constant(True, BOOL)
            again = graph.insert(
                UNREDUCE,
                [user.output, shape_value, no_axis, keep],
                [full_type],
                source_range=node.source_range,
            )
        for reader in readers:
            reader.user.replace_input(reader.index, again.output)
        worklist.append(again)
    if not node.output.uses:
        node.destroy()
    return changed


def _expand(graph: Graph, node: Node) -> Value:
    """The gradient with the reduced dims put back as 1s, just after ``node``."""
    with graph.inserting_after(node):
        return insert_typed(graph, "aten::expand_dims", [node.inputs[0], node.inputs[2]], node)


def _skip_inner_broadcast(graph: Graph, node: Node) -> bool:
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
    with graph.inserting_before(node):
        no_axis = graph.insert_constant(None, NONE)
        keep = graph.insert_constant(True, BOOL)
    node.replace_input(0, source)
    node.replace_input(2, no_axis)
    node.replace_input(3, keep)
    if not inner.output.uses:
        inner.destroy()
    return True
