"""Dead code elimination: erase side-effect-free computation whose results nobody reads.

What `dce` removes, walking each block backwards so users go before producers:

1. a node whose outputs are all unused, when its operator is pure and every node in its nested
   blocks is too (an impure node such as prim::CallFunction, or an unknown operator, is kept,
   and so is any prim::If or prim::Loop that contains one);
2. an unused output of a prim::If, together with the value each branch returns for it (as
   TorchScript's DCE does), so that the branch code computing it becomes dead too;
3. an unused carried value of a prim::Loop: when the loop's output is unused and the body's
   parameter for it is read by nothing but the body's own return, its initial operand, body
   parameter, body result and output are all dropped. Values that only feed each other around
   the loop in a cycle are not detected.

Outputs of other nodes with blocks (prim::GradOf) are kept: their arity is part of what later
stages rely on.
"""

from __future__ import annotations

from ir.graph import Block, Graph, Node
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
    progress = True
    while progress:
        progress = False
        for index in reversed(range(len(node.outputs))):
            param = body.inputs[1 + index]
            only_passed_through = all(
                use.user is body.return_node and use.index == 1 + index for use in param.uses
            )
            if node.outputs[index].uses or not only_passed_through:
                continue
            body.erase_output(1 + index)
            body.erase_input(1 + index)
            node.remove_input(2 + index)
            node.erase_output(index)
            changed = progress = True
        if progress:
            # Dropping a result may have left the body code that computed it dead, which may
            # in turn free another carried parameter.
            _sweep(body)
    return changed
