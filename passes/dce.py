"""Dead code elimination: erase side-effect-free computation whose results nobody reads.

What `dce` removes, walking each block backwards so users go before producers:

1. a node whose outputs are all unused, when its operator is pure and every node in its nested
   blocks is too (an impure node such as prim::CallFunction, or an unknown operator, is kept,
   and so is any prim::If or prim::Loop that contains one);
2. an unused output of a prim::If, together with the value each branch returns for it (as
   TorchScript's DCE does), so that the branch code computing it becomes dead too;
3. an unused carried value of a prim::Loop: when the loop's output is unused and what the body
   computes from it is pure and reaches the body's results only as its own next value, its
   initial operand, body parameter, body result and output are dropped, with the body code
   that computed it. Two carried values that only feed each other are both kept.

Outputs of other nodes with blocks (prim::GradOf) are kept: their arity is part of what later
stages rely on.
"""

from __future__ import annotations

from collections.abc import Iterator

from ir.graph import Block, Graph, Node, Value
from ir.ops import OPS
from passes.registry import register_pass


@register_pass("dce")
def eliminate_dead_code(graph: Graph) -> bool:
    """Erase pure nodes whose outputs are unused, and unused prim::If/prim::Loop outputs.

    Given:   %a = aten::mul(%x, %x)
             %b = aten::neg(%x)
             return (%b)
    Execute: eliminate_dead_code(graph)
    Result:  %b = aten::neg(%x)
             return (%b)
    """
    return _sweep(graph.block)


def _sweep(block: Block) -> bool:
    changed = False
    for node in block.nodes(reverse=True):
        if node.kind == "prim::If":
            changed |= _drop_unused_if_outputs(node)
        elif node.kind == "prim::Loop":
            changed |= _drop_unused_loop_carries(node)
        for inner in node.blocks:
            changed |= _sweep(inner)
        if not node.has_uses() and _free_of_side_effects(node):
            node.destroy()
            changed = True
    return changed


def _free_of_side_effects(node: Node) -> bool:
    op = OPS.get(node.kind)
    if op is None or not op.pure:
        return False
    return all(_free_of_side_effects(inner) for block in node.blocks for inner in block.nodes())


def _drop_unused_if_outputs(node: Node) -> bool:
    changed = False
    for index in reversed(range(len(node.outputs))):
        if node.outputs[index].uses:
            continue
        for block in node.blocks:
            block.erase_output(index)
        node.erase_output(index)
        changed = True
    return changed


def _drop_unused_loop_carries(node: Node) -> bool:
    # Operands: (max_trip_count, initial_cond, carried...); body params: (i, carried...);
    # body returns: (cond, carried...); outputs: carried.
    body = node.blocks[0]
    changed = False
    for index in reversed(range(len(node.outputs))):
        if node.outputs[index].uses or not _feeds_only_itself(body, index):
            continue
        body.erase_output(1 + index)
        _sweep(body)  # what computed the dropped result, all of it pure and now unused
        body.erase_input(1 + index)
        node.remove_input(2 + index)
        node.erase_output(index)
        changed = True
    return changed


def _feeds_only_itself(body: Block, index: int) -> bool:
    """True when carried value ``index`` of a loop body influences nothing but its own next
    value: everything computed from its parameter is free of side effects and reaches the
    body's results only at its own position."""
    dependent: set[Value] = {body.inputs[1 + index]}
    for node in body.nodes():
        if not any(value in dependent for value in _values_read(node)):
            continue
        if not _free_of_side_effects(node):
            return False
        dependent.update(node.outputs)
    results = body.outputs
    return all(
        position == 1 + index or value not in dependent for position, value in enumerate(results)
    )


def _values_read(node: Node) -> Iterator[Value]:
    """The operands of ``node`` and of every node (and block result) nested in it."""
    yield from node.inputs
    for block in node.blocks:
        for inner in block.nodes():
            yield from _values_read(inner)
        yield from block.outputs
