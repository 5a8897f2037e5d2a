"""The graph queries of ir/analysis.py on one graph with a loop inside a branch."""

from __future__ import annotations

from ir.analysis import (
    ancestor_in,
    constant_value,
    enclosing_blocks,
    in_block,
    in_loop,
    is_constant,
    is_within,
    last_uses,
    reverse_nodes,
    runs_its_count,
    values_read_in_blocks,
)
from ir.graph import Graph, Node
from tests.helpers import parse_ir

NESTED = """
    graph @f(%c : bool, %n : int, %x : Tensor):
      %a : Tensor = aten::neg(%x)
      %r : Tensor = prim::If(%c)
        block0():
          %true : bool = prim::Constant[value=True]()
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
    assert ancestor_in(exp, graph.block) is branch
    assert ancestor_in(exp, loop.blocks[0]) is exp
    assert ancestor_in(neg, branch.blocks[0]) is None
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


def test_is_within_a_node_not_in_a_block() -> None:
    graph = parse_ir(NESTED)
    loose = graph.create("prim::Reverse", output_types=(), num_blocks=1)
    inner = graph.create("aten::neg", (graph.inputs[2],), (graph.inputs[2].ty,))
    loose.blocks[0].append_node(inner)
    assert is_within(inner, loose)
    assert not is_within(node_of(graph, "aten::neg"), loose)


def test_constants_and_loops_that_run_their_count() -> None:
    graph = parse_ir(NESTED)
    loop = node_of(graph, "prim::Loop")
    true = loop.inputs[1]
    assert is_constant(true)
    assert constant_value(true) is True
    assert not is_constant(loop.inputs[0])
    assert runs_its_count(loop)  # starts (True) and its body always goes on (True)
    stops = parse_ir(NESTED.replace("-> (%true, %e)", "-> (%c, %e)"))
    assert not runs_its_count(node_of(stops, "prim::Loop"))


def test_reads_in_nested_blocks_and_last_uses() -> None:
    graph = parse_ir(NESTED)
    branch = node_of(graph, "prim::If")
    names = {value.name_hint for value in values_read_in_blocks(branch)}
    assert names == {"n", "true", "a", "h", "e", "l"}
    neg = node_of(graph, "aten::neg")
    last = last_uses(graph.block, [neg, branch])
    by_name = {value.name_hint: position for value, position in last.items()}
    # %x is read by neg (1); %c, %n and %a by the If or inside it (2); %r by the return (3).
    assert by_name == {"x": 1, "c": 2, "n": 2, "true": 2, "a": 2, "h": 2, "e": 2, "l": 2, "r": 3}
