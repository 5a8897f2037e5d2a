"""Read-only questions about a graph, asked by passes, autodiff and the executors alike: where a
node sits (the walk up its enclosing blocks), which values are constants, and what a block's
nested blocks read and where each value is read last.

Each question is answered here once, so that a pass, differentiation, lambda lifting and the
executors do not keep their own copies of the same walk.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ir.graph import Block, Graph, Node, Value

CONSTANT = "prim::Constant"
LOOP = "prim::Loop"
REVERSE = "prim::Reverse"


def enclosing_blocks(node: Node) -> Iterator[Block]:
    """The block ``node`` is in, then the block of the node owning that one, and so on out to
    the graph's own block (nothing for a node not in a block).

    >>> [b.owning_node.kind if b.owning_node else "graph" for b in enclosing_blocks(inner)]
    ['prim::Loop', 'prim::If', 'graph']
    """
    block = node.owning_block
    while block is not None:
        yield block
        owner = block.owning_node
        block = owner.owning_block if owner is not None else None


def ancestor_in(node: Node, block: Block) -> Node | None:
    """The node of ``block`` that is ``node`` or holds it in one of its nested blocks, at any
    depth (None when ``node`` is not in ``block`` or a block nested in it).

    Given:   %r = prim::If(%c)  block0(): %l = prim::Loop(...)  block0(...): %e = aten::exp(%h)
    Execute: ancestor_in(node of %e, graph.block)
    Result:  the node of %r (the prim::If)
    """
    # The walk of `enclosing_blocks` without its generator: in_block and is_within run in the
    # inner loops of functionalisation and differentiation, where a generator costs 4x.
    current: Node | None = node
    while current is not None:
        owner = current.owning_block
        if owner is block:
            return current
        current = owner.owning_node if owner is not None else None
    return None


def in_block(node: Node, block: Block) -> bool:
    """Whether ``node`` (a block's parameter or return node included) is in ``block`` or in a
    block nested in it.

    >>> in_block(next(loop.blocks[0].nodes()), graph.block)
    True
    """
    return ancestor_in(node, block) is not None


def is_within(node: Node, ancestor: Node) -> bool:
    """Whether ``node`` sits in a block nested (at any depth) in ``ancestor``'s blocks."""
    if node is ancestor:
        return False
    home = ancestor.owning_block
    if home is None:  # a node taken out of its graph (or not yet put in)
        return any(owner.owning_node is ancestor for owner in enclosing_blocks(node))
    return ancestor_in(node, home) is ancestor


def in_loop(node: Node) -> bool:
    """Whether ``node`` sits in the body of a prim::Loop, at any depth."""
    return any(
        owner.owning_node is not None and owner.owning_node.kind == LOOP
        for owner in enclosing_blocks(node)
    )


def reverse_nodes(graph: Graph) -> list[Node]:
    """The prim::Reverse nodes of ``graph``'s top-level block (differentiation adds one)."""
    return [node for node in graph.nodes() if node.kind == REVERSE]


def is_constant(value: Value) -> bool:
    """Whether ``value`` is a prim::Constant's output."""
    return value.node.kind == CONSTANT


def constant_value(value: Value) -> Any:
    """The Python or NumPy value of a prim::Constant's output (None for a ``NoneType`` one)."""
    return value.node.attrs.get("value")


def runs_its_count(loop: Node) -> bool:
    """Whether ``loop`` runs exactly its trip count: it starts, and never stops early."""

    def constant_true(value: Value) -> bool:
        return is_constant(value) and constant_value(value) is True

    return constant_true(loop.inputs[1]) and constant_true(loop.blocks[0].outputs[0])


def last_uses(block: Block, nodes: list[Node]) -> dict[Value, int]:
    """For each value read in ``block``, the position of its last reader: node ``i`` is at
    ``i + 1``, the block's return at ``len(nodes) + 1``. See Note [Freeing values] in
    `ir.interpreter`; the generated code (`ir.codegen`) frees by the same positions."""
    last: dict[Value, int] = {}
    for position, node in enumerate(nodes, start=1):
        for value in node.inputs:
            last[value] = position
        for value in values_read_in_blocks(node):
            last[value] = position
    for value in block.outputs:
        last[value] = len(nodes) + 1
    return last


def values_read_in_blocks(node: Node) -> list[Value]:
    """Every value the nested blocks of ``node`` read, at any depth (none without blocks)."""
    values: list[Value] = []
    pending = list(node.blocks)
    while pending:
        block = pending.pop()
        for inner in block.nodes():
            values.extend(inner.inputs)
            pending.extend(inner.blocks)
        values.extend(block.outputs)
    return values
