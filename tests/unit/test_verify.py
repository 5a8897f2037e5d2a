"""The verifier: each invariant accepted when kept and reported, with the node, when broken."""

from __future__ import annotations

import time

import pytest

from ir.errors import VerifyError
from ir.graph import Graph, Node, Use, Value
from ir.parser import parse_graph
from ir.types import BOOL, TENSOR
from ir.verify import verify

SIMPLE = """\
graph @f(%x : Tensor):
  %y : Tensor = aten::neg(%x)  # model.py:4:8
  %z : Tensor = aten::add(%y, %y)
  return (%z)
"""

CONTROL_FLOW = """\
graph @f(%x : Tensor, %c : bool, %n : int):
  %r : Tensor = prim::If(%c)
    block0():
      %a : Tensor = aten::neg(%x)
      -> (%a)
    block1():
      -> (%x)
  %out : Tensor = prim::Loop(%n, %c, %r)
    block0(%i : int, %acc : Tensor):
      %next : Tensor = aten::add(%acc, %x)
      -> (%c, %next)
  %g : Tensor = prim::GradOf[name="aten::neg"](%out)
    block0():
      %d : Tensor = aten::neg(%out)
      -> (%d)
  return (%g)
"""


def node_of(graph: Graph, kind: str, occurrence: int = 0) -> Node:
    return [n for n in graph.all_nodes() if n.kind == kind][occurrence]


def value_named(graph: Graph, hint: str) -> Value:
    for node in graph.all_nodes():
        for value in [*node.outputs, *(p for b in node.blocks for p in b.inputs)]:
            if value.name_hint == hint:
                return value
    for value in graph.inputs:
        if value.name_hint == hint:
            return value
    raise KeyError(hint)


def verify_error(graph: Graph) -> str:
    with pytest.raises(VerifyError) as info:
        verify(graph)
    return str(info.value)


@pytest.mark.parametrize("text", [SIMPLE, CONTROL_FLOW], ids=["simple", "control-flow"])
def test_well_formed_graphs_verify(text: str) -> None:
    verify(parse_graph(text))


def test_error_names_the_node_and_its_source_range() -> None:
    graph = parse_graph(SIMPLE)
    neg = node_of(graph, "aten::neg")
    neg.add_block()
    assert verify_error(graph) == (
        "model.py:4:8: error: aten::neg has 1 blocks, expected 0\n"
        "  in %y : Tensor = aten::neg(%x)  # model.py:4:8"
    )


# -- definitions dominate uses -------------------------------------------------------------


def test_use_before_definition() -> None:
    graph = parse_graph(SIMPLE)
    y = value_named(graph, "y")
    early = graph.create("aten::exp", [y])
    early.insert_before(node_of(graph, "aten::neg"))
    assert "operand 0: %y is used before its definition" in verify_error(graph)


def test_use_outside_the_defining_block() -> None:
    graph = parse_graph(CONTROL_FLOW)
    a = value_named(graph, "a")
    late = graph.create("aten::exp", [a])
    late.insert_after(node_of(graph, "prim::If"))
    assert "operand 0: %a is used outside the block that defines it" in verify_error(graph)


def test_use_from_a_sibling_block() -> None:
    graph = parse_graph(CONTROL_FLOW)
    a = value_named(graph, "a")
    else_block = node_of(graph, "prim::If").blocks[1]
    else_block.append_node(graph.create("aten::exp", [a]))
    assert "%a is used outside the block that defines it" in verify_error(graph)


def test_block_parameter_out_of_scope() -> None:
    graph = parse_graph(CONTROL_FLOW)
    acc = value_named(graph, "acc")
    graph.block.return_node.replace_input(0, acc)
    message = verify_error(graph)
    assert "%acc is used outside the block that defines it" in message
    assert "in the return of the graph" in message


def test_value_from_another_graph() -> None:
    graph = parse_graph(SIMPLE)
    stranger = parse_graph(SIMPLE).inputs[0]
    node_of(graph, "aten::neg").replace_input(0, stranger)
    assert "%x comes from another graph" in verify_error(graph)


def test_block_parameters_and_enclosing_values_are_in_scope() -> None:
    graph = parse_graph(CONTROL_FLOW)
    body = node_of(graph, "prim::Loop").blocks[0]
    body.append_node(graph.create("aten::add", [value_named(graph, "i"), value_named(graph, "r")]))
    verify(graph)


# -- use lists ------------------------------------------------------------------------------


def test_missing_use_entry_for_a_repeated_operand() -> None:
    graph = parse_graph(SIMPLE)
    y = value_named(graph, "y")
    add = node_of(graph, "aten::add")
    y.uses.remove(Use(add, 1))
    assert "operand 1: %y has no use entry for this slot" in verify_error(graph)


def test_use_entry_for_a_slot_that_reads_another_value() -> None:
    graph = parse_graph(SIMPLE)
    x = value_named(graph, "x")
    x.uses.append(Use(node_of(graph, "aten::add"), 0))
    assert "%x lists a use by operand 0 of aten::add, which does not read it" in verify_error(graph)


def test_duplicate_use_entry() -> None:
    graph = parse_graph(SIMPLE)
    y = value_named(graph, "y")
    y.uses.append(y.uses[0])
    assert "%y lists the same use twice" in verify_error(graph)


def test_use_by_a_node_outside_the_graph() -> None:
    graph = parse_graph(SIMPLE)
    graph.create("aten::exp", [value_named(graph, "y")])  # created, never inserted
    assert "%y lists a use by aten::exp, which is not in the graph" in verify_error(graph)


# -- ownership and ring links ---------------------------------------------------------------


def test_broken_ring_link() -> None:
    graph = parse_graph(SIMPLE)
    neg = node_of(graph, "aten::neg")
    neg.next.prev = graph.block.param_node
    assert "broken ring link" in verify_error(graph)


def test_wrong_owning_block() -> None:
    graph = parse_graph(CONTROL_FLOW)
    node_of(graph, "aten::neg").owning_block = graph.block
    assert "node's owning_block is not the block that lists it" in verify_error(graph)


def test_node_of_another_graph() -> None:
    graph = parse_graph(SIMPLE)
    node_of(graph, "aten::neg").graph = Graph("other")
    assert "node belongs to another graph" in verify_error(graph)


def test_output_that_forgot_its_index() -> None:
    graph = parse_graph(SIMPLE)
    value_named(graph, "y").index = 3
    assert "output 0 does not record its node and index" in verify_error(graph)


def test_block_with_wrong_owner() -> None:
    graph = parse_graph(CONTROL_FLOW)
    node_of(graph, "prim::If").blocks[0].owning_node = None
    assert "owning node is not the node that holds it" in verify_error(graph)


# -- schemas --------------------------------------------------------------------------------


def test_unknown_operator() -> None:
    graph = parse_graph(SIMPLE)
    node_of(graph, "aten::neg").kind = "aten::frobnicate"
    assert "error: unknown operator aten::frobnicate" in verify_error(graph)


def test_operand_count() -> None:
    graph = parse_graph(SIMPLE)
    node_of(graph, "aten::neg").add_input(value_named(graph, "x"))
    assert "aten::neg takes 1 operands, got 2" in verify_error(graph)


def test_operand_type() -> None:
    graph = parse_graph(CONTROL_FLOW)
    node_of(graph, "prim::If").replace_input(0, value_named(graph, "x"))
    assert "operand 0 (cond) of prim::If has type Tensor, expected bool" in verify_error(graph)


def test_variadic_operands_are_checked_against_the_last_argument() -> None:
    graph = parse_graph(SIMPLE)
    x = value_named(graph, "x")
    with graph.inserting_before(graph.block.return_node):
        graph.insert("prim::TupleConstruct", [x, x, x], [TENSOR])
    verify(graph)


def test_output_count() -> None:
    graph = parse_graph(SIMPLE)
    node_of(graph, "aten::neg").add_output(TENSOR)
    assert "aten::neg has 2 outputs, its schema returns 1" in verify_error(graph)


def test_block_count() -> None:
    graph = parse_graph(CONTROL_FLOW)
    node_of(graph, "prim::If").erase_block(1)
    assert "prim::If has 1 blocks, expected 2" in verify_error(graph)


# -- structural arities ---------------------------------------------------------------------


def test_if_branch_returns_too_few_values() -> None:
    graph = parse_graph(CONTROL_FLOW)
    node_of(graph, "prim::If").blocks[1].erase_output(0)
    assert "prim::If block1 returns 0 values, expected 1" in verify_error(graph)


def test_if_branch_with_parameters() -> None:
    graph = parse_graph(CONTROL_FLOW)
    node_of(graph, "prim::If").blocks[0].add_input(BOOL)
    assert "prim::If block0 has parameters" in verify_error(graph)


def test_loop_outputs_must_match_carried_values() -> None:
    graph = parse_graph(CONTROL_FLOW)
    node_of(graph, "prim::Loop").add_output(TENSOR)
    assert "prim::Loop carries 1 values but has 2 outputs" in verify_error(graph)


def test_loop_body_parameters() -> None:
    graph = parse_graph(CONTROL_FLOW)
    node_of(graph, "prim::Loop").blocks[0].add_input(TENSOR)
    assert "prim::Loop body has 3 parameters, expected 2" in verify_error(graph)


def test_loop_body_results() -> None:
    graph = parse_graph(CONTROL_FLOW)
    body = node_of(graph, "prim::Loop").blocks[0]
    body.register_output(value_named(graph, "x"))
    assert "prim::Loop body returns 3 values, expected 2" in verify_error(graph)


def test_grad_of_results() -> None:
    graph = parse_graph(CONTROL_FLOW)
    node_of(graph, "prim::GradOf").blocks[0].erase_output(0)
    assert "prim::GradOf block0 returns 0 values, expected 1" in verify_error(graph)


# -- cost -----------------------------------------------------------------------------------


def test_verify_is_linear_on_a_long_chain() -> None:
    graph = Graph("chain")
    value = graph.add_input(TENSOR, "x")
    for _ in range(10_000):
        value = graph.insert("aten::neg", [value]).output
    graph.register_output(value)
    # CPU time of this process, which other jobs on the machine barely change (a quadratic
    # verifier takes minutes here; a linear one a fraction of a second).
    start = time.process_time()
    verify(graph)
    assert time.process_time() - start < 2.0
