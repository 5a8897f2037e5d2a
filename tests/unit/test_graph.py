"""The mutation verbs of ir/graph.py, one test each: Given IR text, Execute the verb, Result is
the exact printed graph plus the use lists (Note [Use lists])."""

from __future__ import annotations

from collections import Counter

import pytest

from ir.errors import IRError
from ir.graph import Graph, Node, Use, Value
from ir.printer import print_graph
from ir.types import INT, TENSOR
from tests.helpers import assert_ir, parse_ir

BRANCHES = """
    graph @f(%c : bool, %x : Tensor):
      %a : Tensor = aten::neg(%x)
      %r : Tensor = prim::If(%c)
        block0():
          %b : Tensor = aten::exp(%a)
          -> (%b)
        block1():
          %d : Tensor = aten::log(%a)
          -> (%d)
      %e : Tensor = aten::mul(%r, %a)
      return (%e)
"""


def value(graph: Graph, hint: str) -> Value:
    """The value named ``hint`` (hints are unique in these tests)."""
    found = [
        v
        for block in graph.blocks_post_order()
        for v in [*block.inputs, *(o for n in block.nodes() for o in n.outputs)]
        if v.name_hint == hint
    ]
    assert len(found) == 1, f"{len(found)} values named {hint}"
    return found[0]


def node(graph: Graph, hint: str) -> Node:
    """The node that defines the value named ``hint``."""
    return value(graph, hint).node


def assert_uses(v: Value, *expected: Use) -> None:
    assert Counter(v.uses) == Counter(expected)


# -- operands ------------------------------------------------------------------------------


def test_add_input_appends_an_operand_and_its_use() -> None:
    g = parse_ir("""
        graph @f(%a : Tensor, %b : Tensor):
          %t : (Tensor) = prim::TupleConstruct(%a)
          return (%t)
    """)
    t = node(g, "t")

    t.add_input(value(g, "b"))

    expected = """
        graph @f(%a : Tensor, %b : Tensor):
          %t : (Tensor) = prim::TupleConstruct(%a, %b)
          return (%t)
    """
    assert_ir(g, expected)
    assert_uses(value(g, "b"), Use(t, 1))


def test_insert_input_shifts_later_operands_and_their_uses() -> None:
    g = parse_ir("""
        graph @f(%a : Tensor, %b : Tensor):
          %t : (Tensor, Tensor) = prim::TupleConstruct(%a, %a)
          return (%t)
    """)
    t = node(g, "t")

    t.insert_input(0, value(g, "b"))

    expected = """
        graph @f(%a : Tensor, %b : Tensor):
          %t : (Tensor, Tensor) = prim::TupleConstruct(%b, %a, %a)
          return (%t)
    """
    assert_ir(g, expected)
    assert_uses(value(g, "a"), Use(t, 1), Use(t, 2))
    assert_uses(value(g, "b"), Use(t, 0))


def test_replace_input_rewires_one_slot_and_returns_the_old_value() -> None:
    g = parse_ir("""
        graph @f(%a : Tensor, %b : Tensor, %c : Tensor):
          %y : Tensor = aten::mul(%a, %b)
          return (%y)
    """)
    y = node(g, "y")

    old = y.replace_input(1, value(g, "c"))

    assert old is value(g, "b")
    expected = """
        graph @f(%a : Tensor, %b : Tensor, %c : Tensor):
          %y : Tensor = aten::mul(%a, %c)
          return (%y)
    """
    assert_ir(g, expected)
    assert_uses(value(g, "b"))
    assert_uses(value(g, "c"), Use(y, 1))


def test_replace_input_with_rewires_every_slot_of_that_node_only() -> None:
    g = parse_ir("""
        graph @f(%a : Tensor, %b : Tensor):
          %y : Tensor = aten::add(%a, %a)
          %z : Tensor = aten::neg(%a)
          return (%y, %z)
    """)
    y, z = node(g, "y"), node(g, "z")

    y.replace_input_with(value(g, "a"), value(g, "b"))

    expected = """
        graph @f(%a : Tensor, %b : Tensor):
          %y : Tensor = aten::add(%b, %b)
          %z : Tensor = aten::neg(%a)
          return (%y, %z)
    """
    assert_ir(g, expected)
    assert_uses(value(g, "a"), Use(z, 0))
    assert_uses(value(g, "b"), Use(y, 0), Use(y, 1))


def test_remove_input_shifts_later_uses_left() -> None:
    g = parse_ir("""
        graph @f(%a : Tensor, %b : Tensor, %c : Tensor):
          %t : (Tensor, Tensor) = prim::TupleConstruct(%a, %b, %c)
          return (%t)
    """)
    t = node(g, "t")

    t.remove_input(1)

    expected = """
        graph @f(%a : Tensor, %b : Tensor, %c : Tensor):
          %t : (Tensor, Tensor) = prim::TupleConstruct(%a, %c)
          return (%t)
    """
    assert_ir(g, expected)
    assert_uses(value(g, "b"))
    assert_uses(value(g, "c"), Use(t, 1))


# -- values --------------------------------------------------------------------------------


def test_replace_all_uses_with_rewrites_every_slot() -> None:
    g = parse_ir("""
        graph @f(%x : Tensor, %z : Tensor):
          %y : Tensor = aten::add(%x, %x)
          return (%y, %x)
    """)
    x, z, y = value(g, "x"), value(g, "z"), node(g, "y")

    x.replace_all_uses_with(z)

    expected = """
        graph @f(%x : Tensor, %z : Tensor):
          %y : Tensor = aten::add(%z, %z)
          return (%y, %z)
    """
    assert_ir(g, expected)
    assert not x.uses
    assert_uses(z, Use(y, 0), Use(y, 1), Use(g.block.return_node, 1))


def test_replace_all_uses_with_reaches_into_nested_blocks() -> None:
    g = parse_ir(BRANCHES)
    a = value(g, "a")

    a.replace_all_uses_with(value(g, "x"))

    assert_ir(g, BRANCHES.replace("(%a)", "(%x)").replace(", %a)", ", %x)"))
    assert not a.uses
    assert len(value(g, "x").uses) == 4


def test_replace_all_uses_after_node_with_keeps_earlier_uses() -> None:
    g = parse_ir("""
        graph @f(%x : Tensor, %c : bool):
          %a : Tensor = aten::neg(%x)
          %b : Tensor = aten::exp(%x)
          %r : Tensor = prim::If(%c)
            block0():
              %d : Tensor = aten::log(%x)
              -> (%d)
          return (%a, %b, %r, %x)
    """)
    x, b = value(g, "x"), value(g, "b")

    x.replace_all_uses_after_node_with(b.node, b)

    expected = """
        graph @f(%x : Tensor, %c : bool):
          %a : Tensor = aten::neg(%x)
          %b : Tensor = aten::exp(%x)
          %r : Tensor = prim::If(%c)
            block0():
              %d : Tensor = aten::log(%b)
              -> (%d)
          return (%a, %b, %r, %b)
    """
    assert_ir(g, expected)
    assert_uses(x, Use(node(g, "a"), 0), Use(b.node, 0))
    assert_uses(b, Use(node(g, "d"), 0), Use(g.block.return_node, 1), Use(g.block.return_node, 3))


# -- placing nodes -------------------------------------------------------------------------


def test_insert_before_and_insert_after_link_a_new_node() -> None:
    g = parse_ir("""
        graph @f(%x : Tensor):
          %e : Tensor = aten::exp(%x)
          return (%e)
    """)
    e = node(g, "e")
    before = g.create("aten::neg", [value(g, "x")])
    before.output.set_name("n")
    after = g.create("aten::sin", [e.output])
    after.output.set_name("s")

    before.insert_before(e)
    after.insert_after(e)

    expected = """
        graph @f(%x : Tensor):
          %n : Tensor = aten::neg(%x)
          %e : Tensor = aten::exp(%x)
          %s : Tensor = aten::sin(%e)
          return (%e)
    """
    assert_ir(g, expected)
    assert before.owning_block is g.block
    assert after.owning_block is g.block


def test_insert_refuses_sentinel_neighbours_and_linked_nodes() -> None:
    g = parse_ir("""
        graph @f(%x : Tensor):
          %e : Tensor = aten::exp(%x)
          return (%e)
    """)
    fresh = g.create("aten::neg", [value(g, "x")])

    with pytest.raises(IRError, match="before a block's parameters"):
        fresh.insert_before(g.block.param_node)
    with pytest.raises(IRError, match="after a block's return"):
        fresh.insert_after(g.block.return_node)
    with pytest.raises(IRError, match="already in a block"):
        node(g, "e").insert_after(g.block.param_node)


STRAIGHT = """
    graph @f(%x : Tensor):
      %a : Tensor = aten::exp(%x)
      %b : Tensor = aten::neg(%x)
      %c : Tensor = aten::mul(%a, %b)
      return (%c)
"""


def test_move_before_keeps_order_legal() -> None:
    g = parse_ir(STRAIGHT)

    node(g, "b").move_before(node(g, "a"))

    expected = """
        graph @f(%x : Tensor):
          %b : Tensor = aten::neg(%x)
          %a : Tensor = aten::exp(%x)
          %c : Tensor = aten::mul(%a, %b)
          return (%c)
    """
    assert_ir(g, expected)


def test_move_after_keeps_order_legal() -> None:
    g = parse_ir(STRAIGHT)

    node(g, "a").move_after(node(g, "b"))

    expected = """
        graph @f(%x : Tensor):
          %b : Tensor = aten::neg(%x)
          %a : Tensor = aten::exp(%x)
          %c : Tensor = aten::mul(%a, %b)
          return (%c)
    """
    assert_ir(g, expected)


def test_move_after_a_user_is_refused_and_changes_nothing() -> None:
    g = parse_ir(STRAIGHT)

    with pytest.raises(IRError, match="after a user"):
        node(g, "a").move_after(node(g, "c"))

    assert_ir(g, STRAIGHT)


def test_move_before_a_definition_is_refused_and_changes_nothing() -> None:
    g = parse_ir(STRAIGHT)

    with pytest.raises(IRError, match="before its definition"):
        node(g, "c").move_before(node(g, "b"))

    assert_ir(g, STRAIGHT)


def test_move_out_of_a_block_that_returns_its_output_is_refused() -> None:
    g = parse_ir(BRANCHES)

    with pytest.raises(IRError, match="after a user"):
        node(g, "d").move_after(node(g, "r"))

    assert_ir(g, BRANCHES)


LOOP = """
    graph @f(%x : Tensor, %n : int):
      %y : Tensor = prim::Loop(%n, %x)
        block0(%i : int, %h : Tensor):
          %t : Tensor = aten::exp(%h)
          %s : Tensor = aten::mul(%t, %x)
          -> (%h)
      %z : Tensor = aten::neg(%y)
      return (%z)
"""


@pytest.mark.parametrize("hint", ["t", "s"])
def test_move_out_of_the_block_that_defines_an_input_is_refused(hint: str) -> None:
    g = parse_ir(LOOP)

    with pytest.raises(IRError, match="before its definition"):
        node(g, hint).move_after(node(g, "z"))

    assert_ir(g, LOOP)


def test_move_before_sentinel_is_refused_and_changes_nothing() -> None:
    g = parse_ir(STRAIGHT)

    with pytest.raises(IRError, match="before a block's parameters"):
        node(g, "b").move_before(g.block.param_node)

    assert_ir(g, STRAIGHT)


def test_destroy_unlinks_the_node_and_drops_its_uses() -> None:
    g = parse_ir("""
        graph @f(%x : Tensor):
          %n : Tensor = aten::neg(%x)
          %e : Tensor = aten::exp(%x)
          return (%e)
    """)

    node(g, "n").destroy()

    expected = """
        graph @f(%x : Tensor):
          %e : Tensor = aten::exp(%x)
          return (%e)
    """
    assert_ir(g, expected)
    assert_uses(value(g, "x"), Use(node(g, "e"), 0))


def test_destroy_drops_the_uses_made_inside_its_blocks() -> None:
    g = parse_ir("""
        graph @f(%c : bool, %x : Tensor):
          %r : Tensor = prim::If(%c)
            block0():
              %b : Tensor = aten::exp(%x)
              -> (%b)
          return (%x)
    """)

    node(g, "r").destroy()

    expected = """
        graph @f(%c : bool, %x : Tensor):
          return (%x)
    """
    assert_ir(g, expected)
    assert_uses(value(g, "x"), Use(g.block.return_node, 0))
    assert not value(g, "c").uses


def test_destroy_refuses_a_node_whose_output_is_used() -> None:
    g = parse_ir(STRAIGHT)

    with pytest.raises(IRError, match="still used by aten::mul"):
        node(g, "a").destroy()

    assert_ir(g, STRAIGHT)


def test_erase_output_renumbers_later_outputs() -> None:
    g = parse_ir("""
        graph @f(%x : Tensor):
          %p : Tensor, %q : Tensor, %r : Tensor = prim::Split(%x)
          return (%r)
    """)
    split = node(g, "p")

    split.erase_output(1)

    expected = """
        graph @f(%x : Tensor):
          %p : Tensor, %r : Tensor = prim::Split(%x)
          return (%r)
    """
    assert_ir(g, expected)
    assert [o.index for o in split.outputs] == [0, 1]
    with pytest.raises(IRError, match="cannot erase a used output"):
        split.erase_output(1)


# -- blocks --------------------------------------------------------------------------------


def test_add_block_and_fill_it_with_inserting_at_end() -> None:
    g = parse_ir("""
        graph @f(%x : Tensor, %n : int):
          %y : Tensor = prim::Loop(%n, %x)
          return (%y)
    """)
    loop = node(g, "y")

    body = loop.add_block()
    i = body.add_input(INT, "i")
    carried = body.add_input(TENSOR, "h")
    with g.inserting_at_end(body):
        step = g.insert("aten::add", [carried, i]).output.set_name("s")
    body.register_output(step)

    expected = """
        graph @f(%x : Tensor, %n : int):
          %y : Tensor = prim::Loop(%n, %x)
            block0(%i : int, %h : Tensor):
              %s : Tensor = aten::add(%h, %i)
              -> (%s)
          return (%y)
    """
    assert_ir(g, expected)
    assert_uses(carried, Use(step.node, 0))


def test_erase_block_drops_its_nodes_and_their_uses() -> None:
    g = parse_ir(BRANCHES)
    a = value(g, "a")

    node(g, "r").erase_block(0)

    expected = """
        graph @f(%c : bool, %x : Tensor):
          %a : Tensor = aten::neg(%x)
          %r : Tensor = prim::If(%c)
            block0():
              %d : Tensor = aten::log(%a)
              -> (%d)
          %e : Tensor = aten::mul(%r, %a)
          return (%e)
    """
    assert_ir(g, expected)
    assert_uses(a, Use(node(g, "d"), 0), Use(node(g, "e"), 1))


def test_block_clone_from_copies_params_nodes_and_results() -> None:
    g = parse_ir("""
        graph @f(%x : Tensor, %n : int):
          %y : Tensor = prim::Loop(%n, %x)
            block0(%i : int, %h : Tensor):
              %s : Tensor = aten::mul(%h, %x)
              -> (%s)
          %z : Tensor = prim::Loop(%n, %y)
          return (%z)
    """)
    source = node(g, "y").blocks[0]
    target = node(g, "z").add_block()

    target.clone_from(source, lambda outer: outer)

    expected = """
        graph @f(%x : Tensor, %n : int):
          %y : Tensor = prim::Loop(%n, %x)
            block0(%i : int, %h : Tensor):
              %s : Tensor = aten::mul(%h, %x)
              -> (%s)
          %z : Tensor = prim::Loop(%n, %y)
            block0(%i.1 : int, %h.1 : Tensor):
              %s.1 : Tensor = aten::mul(%h.1, %x)
              -> (%s.1)
          return (%z)
    """
    assert_ir(g, expected)
    assert len(value(g, "x").uses) == 3
    assert target.inputs[1].uses == [Use(target.outputs[0].node, 0)]


# -- copying -------------------------------------------------------------------------------


def test_graph_copy_is_deep_and_independent() -> None:
    g = parse_ir(BRANCHES)

    copy = g.copy()
    value(copy, "a").replace_all_uses_with(value(copy, "x"))

    assert print_graph(copy) != print_graph(g)
    assert_ir(g, BRANCHES)
    assert all(n.graph is copy for n in copy.all_nodes())
    assert value(copy, "x") is not value(g, "x")


def test_create_clone_copies_a_node_into_another_graph() -> None:
    g = parse_ir(BRANCHES)
    other = parse_ir("""
        graph @g(%flag : bool, %t : Tensor):
          return (%t)
    """)
    mapping = {value(g, "c"): value(other, "flag"), value(g, "a"): value(other, "t")}

    clone = other.create_clone(node(g, "r"), mapping.__getitem__)
    other.insert_node(clone)
    other.block.erase_output(0)
    other.register_output(clone.output)

    expected = """
        graph @g(%flag : bool, %t : Tensor):
          %r : Tensor = prim::If(%flag)
            block0():
              %b : Tensor = aten::exp(%t)
              -> (%b)
            block1():
              %d : Tensor = aten::log(%t)
              -> (%d)
          return (%r)
    """
    assert_ir(other, expected)
    assert clone.graph is other
    assert_ir(g, BRANCHES)


# -- insertion points ----------------------------------------------------------------------


def test_inserting_before_and_after_set_where_new_nodes_go() -> None:
    g = parse_ir("""
        graph @f(%x : Tensor):
          %a : Tensor = aten::exp(%x)
          %b : Tensor = aten::neg(%a)
          return (%b)
    """)
    a, b = node(g, "a"), node(g, "b")

    with g.inserting_before(a):
        g.insert("aten::sin", [value(g, "x")]).output.set_name("s")
    with g.inserting_after(a):
        g.insert("aten::cos", [a.output]).output.set_name("c1")
        g.insert("aten::tan", [a.output]).output.set_name("c2")
    g.insert("aten::abs", [b.output]).output.set_name("end")

    expected = """
        graph @f(%x : Tensor):
          %s : Tensor = aten::sin(%x)
          %a : Tensor = aten::exp(%x)
          %c1 : Tensor = aten::cos(%a)
          %c2 : Tensor = aten::tan(%a)
          %b : Tensor = aten::neg(%a)
          %end : Tensor = aten::abs(%b)
          return (%b)
    """
    assert_ir(g, expected)
    assert g.insert_point is g.block.return_node


def test_inserting_restores_the_insertion_point_after_an_error() -> None:
    g = parse_ir(STRAIGHT)

    with pytest.raises(RuntimeError), g.inserting_before(node(g, "a")):
        raise RuntimeError

    assert g.insert_point is g.block.return_node


# -- iteration and order -------------------------------------------------------------------


def test_nodes_iteration_survives_destroying_the_yielded_node() -> None:
    g = parse_ir("""
        graph @f(%x : Tensor):
          %a : Tensor = aten::exp(%x)
          %b : Tensor = aten::neg(%a)
          %c : Tensor = aten::sin(%x)
          %d : Tensor = aten::cos(%x)
          return (%d)
    """)

    forward = []
    for n in g.nodes():
        forward.append(n.kind)
        if not n.has_uses():
            n.destroy()
    backward = []
    for n in g.block.nodes(reverse=True):
        backward.append(n.kind)
        if not n.has_uses():
            n.destroy()

    assert forward == ["aten::exp", "aten::neg", "aten::sin", "aten::cos"]
    assert backward == ["aten::cos", "aten::exp"]
    expected = """
        graph @f(%x : Tensor):
          %d : Tensor = aten::cos(%x)
          return (%d)
    """
    assert_ir(g, expected)
    assert_uses(value(g, "x"), Use(node(g, "d"), 0))


@pytest.mark.parametrize(
    ("first", "second", "expected"),
    [
        ("a", "b", True),  # an outer node and a nested node after it
        ("b", "a", False),
        ("b", "e", True),  # a nested node and an outer node after its owner
        ("d", "e", True),
        ("e", "d", False),
        ("b", "d", False),  # sibling blocks: neither runs first
        ("d", "b", False),
        ("b", "r", False),  # a node and one inside it: neither
        ("r", "b", False),
        ("a", "a", False),
    ],
)
def test_is_before_compares_across_nested_blocks(first: str, second: str, expected: bool) -> None:
    g = parse_ir(BRANCHES)

    assert node(g, first).is_before(node(g, second)) is expected
    assert node(g, second).is_after(node(g, first)) is expected


def test_is_before_a_block_return() -> None:
    g = parse_ir(BRANCHES)
    if_node = node(g, "r")

    assert node(g, "b").is_before(if_node.blocks[0].return_node)
    assert node(g, "a").is_before(if_node.blocks[1].return_node)
    assert not node(g, "e").is_before(if_node.blocks[1].return_node)


def test_is_before_agrees_with_block_order_for_every_pair() -> None:
    # Sentinels included: the walk from both ends must agree with plain positions wherever the
    # two nodes sit, near each other, near the start or near the end.
    g = parse_ir(
        "graph @f(%x : Tensor):\n"
        + "".join(f"  %v{k} : Tensor = aten::neg(%x)\n" for k in range(6))
        + "  return (%v5)"
    )
    ordered = [g.block.param_node, *g.nodes(), g.block.return_node]
    for first_position, first in enumerate(ordered):
        for second_position, second in enumerate(ordered):
            assert first.is_before(second) is (first_position < second_position)
