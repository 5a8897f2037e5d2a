"""Lift constants into the reverse block: a forward prim::Constant read by the reverse program
gets a copy at the start of the prim::Reverse block, so lambda lifting never captures it.

Constants are cheap to recreate, and capturing one would add an output to ``f`` and an input to
``df`` for nothing (TorchScript's liftConstants). A constant defined anywhere inside the reverse
block already is left where it is: reading it captures nothing.
"""

from __future__ import annotations

from ir.analysis import reverse_nodes
from ir.graph import Block, Graph, Node, Value
from passes.registry import register_pass

CONSTANT = "prim::Constant"


@register_pass("lift-constants")
def lift_constants(graph: Graph) -> bool:
    """Read forward constants in the reverse block through copies made at its start.

    Given:   %one = prim::Constant[value=1.]()
             %dx = prim::Reverse[...]()
               block0(%dy):
                 %g = aten::mul(%dy, %one)
                 -> (%g)
    Execute: lift_constants(graph)
    Result:  %one = prim::Constant[value=1.]()
             %dx = prim::Reverse[...]()
               block0(%dy):
                 %one.1 = prim::Constant[value=1.]()
                 %g = aten::mul(%dy, %one.1)
                 -> (%g)
    """
    changed = False
    for reverse in reverse_nodes(graph):
        lifter = ConstantLifter(graph, reverse)
        lifter.lift_block(reverse.blocks[0])
        changed |= lifter.changed
    return changed


class ConstantLifter:
    """Copies forward constants into ``reverse``'s block, one copy per constant, reused."""

    def __init__(self, graph: Graph, reverse: Node) -> None:
        self.graph = graph
        self.block = reverse.blocks[0]
        self.copies: dict[Value, Value] = {}
        self.last_copy: Node | None = None  # copies are kept in order of first use
        self.changed = False

    def lift_block(self, block: Block) -> None:
        for node in block.nodes():
            self.lift_inputs(node)
            for inner in node.blocks:
                self.lift_block(inner)
        self.lift_inputs(block.return_node)

    def lift_inputs(self, node: Node) -> None:
        """Make ``node`` read lifted copies of the forward constants among its operands."""
        for index, value in enumerate(node.inputs):
            if value.node.kind != CONSTANT or not self.is_forward(value.node):
                continue
            node.replace_input(index, self.copy_of(value))
            self.changed = True

    def is_forward(self, node: Node) -> bool:
        """True when ``node`` sits in the graph's top-level block (forward code or the reverse
        node itself), not inside the reverse block."""
        return node.owning_block is self.graph.block

    def copy_of(self, constant: Value) -> Value:
        copy = self.copies.get(constant)
        if copy is None:
            clone = self.graph.create_clone(constant.node, _no_operands)
            if self.last_copy is None:
                self.block.prepend_node(clone)
            else:
                clone.insert_after(self.last_copy)
            self.last_copy = clone
            copy = self.copies[constant] = clone.output
        return copy


def _no_operands(value: Value) -> Value:
    raise AssertionError("a prim::Constant has no operands")
