"""Read-only questions about where a node sits in a graph, asked by passes and by autodiff alike.

Each question is answered here once, so that a pass, differentiation and lambda lifting do not
keep their own copies of the same walk up the enclosing blocks.
"""

from __future__ import annotations

from collections.abc import Iterator

from ir.graph import Block, Graph, Node

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


def in_block(node: Node, block: Block) -> bool:
    """Whether ``node`` (a block's parameter or return node included) is in ``block`` or in a
    block nested in it.

    >>> in_block(next(loop.blocks[0].nodes()), graph.block)
    True
    """
    return any(owner is block for owner in enclosing_blocks(node))


def is_within(node: Node, ancestor: Node) -> bool:
    """Whether ``node`` sits in a block nested (at any depth) in ``ancestor``'s blocks."""
    return any(owner.owning_node is ancestor for owner in enclosing_blocks(node))


def in_loop(node: Node) -> bool:
    """Whether ``node`` sits in the body of a prim::Loop, at any depth."""
    return any(
        owner.owning_node is not None and owner.owning_node.kind == LOOP
        for owner in enclosing_blocks(node)
    )


def reverse_nodes(graph: Graph) -> list[Node]:
    """The prim::Reverse nodes of ``graph``'s top-level block (differentiation adds one)."""
    return [node for node in graph.nodes() if node.kind == REVERSE]
