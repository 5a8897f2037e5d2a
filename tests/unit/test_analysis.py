"""The graph queries of ir/analysis.py on one graph with a loop inside a branch."""

from __future__ import annotations

from ir.analysis import enclosing_blocks, in_block, in_loop, is_within, reverse_nodes
from ir.graph import Graph, Node
from tests.helpers import parse_ir

NESTED = """
    graph @f(%c : bool, %n : int, %x : Tensor):
      %a : Tensor = aten::neg(%x)
      %r : Tensor = prim::If(%c)
        block0():
          %true : bool = prim::Constant[value=1]()
          %l : Tensor = prim::Loop(%n, %true, %a)
            block0(%i : int, %h : Tensor):
              %e : Tensor = aten::exp(%h)
              -> (%true, %e)
          -> (%l)
        block1():
          -> (%a)
      return (%r)
"""


def node_of(graph: Graph, kind: str) -> Node:
    (found,) = [node for node in graph.all_nodes() if node.kind == kind]
    return found


def test_enclosing_blocks_walk_out_to_the_graph() -> None:
    graph = parse_ir(NESTED)
    loop, branch = node_of(graph, "prim::Loop"), node_of(graph, "prim::If")
    exp = node_of(graph, "aten::exp")
    assert list(enclosing_blocks(exp)) == [loop.blocks[0], branch.blocks[0], graph.block]
    assert list(enclosing_blocks(node_of(graph, "aten::neg"))) == [graph.block]


def test_in_block_and_is_within() -> None:
    graph = parse_ir(NESTED)
    loop, branch = node_of(graph, "prim::Loop"), node_of(graph, "prim::If")
    exp, neg = node_of(graph, "aten::exp"), node_of(graph, "aten::neg")
    assert in_block(exp, graph.block)
    assert in_block(exp, branch.blocks[0])
    assert not in_block(exp, branch.blocks[1])
    assert not in_block(neg, branch.blocks[0])
    assert in_block(loop.blocks[0].param_node, loop.blocks[0])
    assert is_within(exp, branch)
    assert is_within(exp, loop)
    assert not is_within(loop, loop)
    assert not is_within(neg, branch)


def test_in_loop() -> None:
    graph = parse_ir(NESTED)
    assert in_loop(node_of(graph, "aten::exp"))
    assert not in_loop(node_of(graph, "prim::Loop"))
    assert not in_loop(node_of(graph, "aten::neg"))


def test_reverse_nodes_lists_the_top_level_reverse() -> None:
    graph = parse_ir(NESTED)
    assert reverse_nodes(graph) == []
    reverse = graph.create("prim::Reverse", output_types=(), num_blocks=1)
    graph.block.append_node(reverse)
    assert reverse_nodes(graph) == [reverse]
