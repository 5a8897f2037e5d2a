"""Deduplicate size captures: a shape query the forward code computes only for the reverse
program is recomputed inside the prim::Reverse block from values it captures anyway.

TorchScript's deduplicateSizeCaptures moves ``aten::size(x)`` into the backward when ``x`` is
captured already, so ``df`` takes ``x`` once instead of ``x`` and its size. Here any pure
operator whose result its operand types could determine (an operator with ``value_from_types``:
``aten::shape``, ``aten::ndim``, ``aten::size``, ``aten::_size_if_not_equal``, ``prim::len``)
qualifies, chains of them included. When the types are complete, fold-sizes has already turned
such queries into constants; this pass handles what specialisation left unknown.
"""

from __future__ import annotations

from ir.analysis import is_within, reverse_nodes
from ir.graph import PARAM, Graph, Node, Value
from ir.ops import OPS
from passes.lift_constants import CONSTANT, ConstantLifter
from passes.registry import register_pass


@register_pass("dedup-size-captures")
def deduplicate_size_captures(graph: Graph) -> bool:
    """Move shape queries only the reverse block reads into it, when that adds no capture.

    Given:   %s = aten::shape(%x)          (%x is a graph input)
             %dx = prim::Reverse[...]()
               block0(%dy):
                 %g = aten::broadcast_to(%dy, %s)
                 -> (%g)
    Execute: deduplicate_size_captures(graph)
    Result:  %dx = prim::Reverse[...]()
               block0(%dy):
                 %s = aten::shape(%x)
                 %g = aten::broadcast_to(%dy, %s)
                 -> (%g)
    """
    changed = False
    for reverse in reverse_nodes(graph):
        changed |= _recompute_in_reverse(graph, reverse)
    return changed


def is_shape_query(node: Node) -> bool:
    """A pure, block-free operator whose result its operand types could determine."""
    op = OPS.get(node.kind)
    return op is not None and op.pure and op.value_from_types is not None and not node.blocks


def _recompute_in_reverse(graph: Graph, reverse: Node) -> bool:
    forward: list[Node] = []
    for node in graph.nodes():
        if node is reverse:
            break
        forward.append(node)
    captured = _captures(graph, reverse)

    # 1. The largest set of shape queries that can all move together: each is read only by the
    # reverse block or by other movers, and reads only what the reverse block gets anyway (a
    # graph input, a constant, a value it captures already, or another mover's result).
    # Moving a query whose operand is not captured would trade a small size for a whole array.
    movers = {node for node in forward if is_shape_query(node) and node.has_uses()}

    def available(value: Value) -> bool:
        definer = value.node
        return (
            value in captured
            or definer in movers
            or (definer.kind in (PARAM, CONSTANT) and definer.owning_block is graph.block)
        )

    def stays_movable(node: Node) -> bool:
        reads_ok = all(available(value) for value in node.inputs)
        users_ok = all(
            use.user in movers or is_within(use.user, reverse)
            for out in node.outputs
            for use in out.uses
        )
        return reads_ok and users_ok

    shrinking = True
    while shrinking:
        dropped = {node for node in movers if not stays_movable(node)}
        movers -= dropped
        shrinking = bool(dropped)
    if not movers:
        return False

    # 2. Move them, users first, each just before the one moved after it, so the block keeps
    # program order (Note [Topological invariant]); forward constants they read are lifted.
    ordered = [node for node in forward if node in movers]
    body = reverse.blocks[0]
    anchor = next(iter(body.nodes()), body.return_node)
    for node in reversed(ordered):
        node.move_before(anchor)
        anchor = node
    lifter = ConstantLifter(graph, reverse)
    for node in ordered:
        lifter.lift_inputs(node)
    return True


def _captures(graph: Graph, reverse: Node) -> set[Value]:
    """The top-level values that the reverse block reads (at any depth)."""
    found: set[Value] = set()
    stack = [reverse.blocks[0]]
    while stack:
        block = stack.pop()
        readers = [*block.nodes(), block.return_node]
        for node in readers:
            found.update(v for v in node.inputs if v.node.owning_block is graph.block)
            stack.extend(node.blocks)
    return found
