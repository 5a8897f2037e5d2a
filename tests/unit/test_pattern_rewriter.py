"""The pattern rewrite driver (Note [Pattern rewrite driver] in `passes.pattern_rewriter`): it
runs a table to a fixed point, revisits what a rewrite changed (users of replaced values, the
producers and last readers of a destroyed node's operands, inserted nodes), visits nested
blocks, and stops a table that never converges with an internal error."""

from __future__ import annotations

import pytest

from ir.graph import Node
from ir.types import TENSOR
from passes.pattern_rewriter import (
    MINIMUM_REWRITE_LIMIT,
    PatternTable,
    RewriteLimitError,
    Rewriter,
)
from passes.registry import run_passes
from tests.helpers import assert_ir, parse_ir

Toy = Rewriter[None]


def double_negation(rewriter: Toy, node: Node) -> bool:
    """neg(neg(x)) -> x, when the inner negation has no other reader."""
    inner = node.inputs[0]
    if inner.node.kind != "aten::neg" or len(inner.uses) != 1:
        return False
    rewriter.replace(node, [inner.node.inputs[0]])
    rewriter.destroy(inner.node)
    return True


def toy_table() -> PatternTable[None]:
    """Three rewrites of toy graphs, each enabled only by another's result:
    a ``sin`` nothing reads is destroyed; ``neg(neg(y))`` is ``y`` when the inner negation has
    no other reader; ``exp(log(y))`` is ``y``."""
    table = PatternTable[None]("toy")

    @table.register("aten::sin")
    def dead_sine(rewriter: Toy, node: Node) -> bool:
        if node.output.uses:
            return False
        rewriter.destroy(node)
        return True

    table.register("aten::neg")(double_negation)

    @table.register("aten::exp")
    def exp_of_log(rewriter: Toy, node: Node) -> bool:
        inner = node.inputs[0].node
        if inner.kind != "aten::log":
            return False
        rewriter.replace(node, [inner.inputs[0]])
        return True

    return table


def test_revisits_the_last_reader_and_the_users_of_what_changed() -> None:
    # In program order nothing matches but the dead sine. Destroying it leaves %n1 one reader,
    # %n2, which is visited again and folds; that replaces %n2, so its reader %e is visited
    # again and folds too. A single sweep in program order would stop after the sine.
    graph = parse_ir(
        """
        graph @f(%x : Tensor):
          %l : Tensor = aten::log(%x)
          %n1 : Tensor = aten::neg(%l)
          %n2 : Tensor = aten::neg(%n1)
          %s : Tensor = aten::sin(%n1)
          %e : Tensor = aten::exp(%n2)
          return (%e, %l)
        """
    )
    assert toy_table().rewrite(graph, None)
    assert_ir(
        graph,
        """
        graph @f(%x : Tensor):
          %l : Tensor = aten::log(%x)
          return (%x, %l)
        """,
    )


def test_runs_to_a_fixed_point_past_any_number_of_sweeps() -> None:
    # Each destroyed sine makes its operand's producer dead: a chain of ten is undone from its
    # end backwards, one producer at a time, in one run (the old passes stopped after 4 sweeps).
    lines = ["graph @f(%x : Tensor):", "  %s0 : Tensor = aten::sin(%x)"]
    lines += [f"  %s{k} : Tensor = aten::sin(%s{k - 1})" for k in range(1, 10)]
    lines.append("  return (%x)")
    graph = parse_ir("\n".join(lines))
    table = toy_table()
    assert table.rewrite(graph, None)
    assert_ir(graph, "graph @f(%x : Tensor):\n  return (%x)")
    assert not table.rewrite(graph, None)  # a fixed point: nothing more to do


def test_rewrites_in_nested_blocks() -> None:
    # The nodes of a loop's body and of an if's branches nested in it are visited, and a
    # rewrite there revisits the users there.
    graph = parse_ir(
        """
        graph @f(%x : Tensor, %n : int, %c : bool):
          %true : bool = prim::Constant[value=True]()
          %r : Tensor = prim::Loop(%n, %true, %x)
            block0(%i : int, %a : Tensor):
              %b : Tensor = prim::If(%c)
                block0():
                  %l : Tensor = aten::log(%a)
                  %e : Tensor = aten::exp(%l)
                  -> (%e)
                block1():
                  %n1 : Tensor = aten::neg(%a)
                  %n2 : Tensor = aten::neg(%n1)
                  %s : Tensor = aten::sin(%n1)
                  -> (%n2)
              -> (%true, %b)
          return (%r)
        """
    )
    assert toy_table().rewrite(graph, None)
    assert_ir(
        graph,
        """
        graph @f(%x : Tensor, %n : int, %c : bool):
          %true : bool = prim::Constant[value=True]()
          %r : Tensor = prim::Loop(%n, %true, %x)
            block0(%i : int, %a : Tensor):
              %b : Tensor = prim::If(%c)
                block0():
                  %l : Tensor = aten::log(%a)
                  -> (%a)
                block1():
                  -> (%a)
              -> (%true, %b)
          return (%r)
        """,
    )


def test_visits_the_nodes_a_rewrite_inserts() -> None:
    # A pattern that inserts: neg(x) of a graph input becomes neg(neg(neg(x))), once. The two
    # negations it inserts are visited and cancel; the rewrite runs inside the loop's body.
    table = PatternTable[None]("nested")
    inserted: list[Node] = []

    @table.register("aten::neg")
    def triple_once(rewriter: Toy, node: Node) -> bool:
        if inserted or node.inputs[0].node.kind == "aten::neg":
            return False
        with rewriter.inserting_before(node):
            first = rewriter.insert("aten::neg", [node.inputs[0]], [TENSOR], None)
            second = rewriter.insert("aten::neg", [first.output], [TENSOR], None)
        inserted.extend((first, second))
        node.replace_input(0, second.output)
        rewriter.changed(node)
        return True

    table.register("aten::neg")(double_negation)

    graph = parse_ir(
        """
        graph @f(%x : Tensor, %n : int):
          %true : bool = prim::Constant[value=True]()
          %r : Tensor = prim::Loop(%n, %true, %x)
            block0(%i : int, %a : Tensor):
              %b : Tensor = aten::neg(%a)
              -> (%true, %b)
          return (%r)
        """
    )
    assert table.rewrite(graph, None)
    assert len(inserted) == 2
    assert_ir(
        graph,
        """
        graph @f(%x : Tensor, %n : int):
          %true : bool = prim::Constant[value=True]()
          %r : Tensor = prim::Loop(%n, %true, %x)
            block0(%i : int, %a : Tensor):
              %b : Tensor = aten::neg(%a)
              -> (%true, %b)
          return (%r)
        """,
    )


def test_a_pattern_that_does_not_match_changes_nothing() -> None:
    graph = parse_ir(
        """
        graph @f(%x : Tensor):
          %n : Tensor = aten::neg(%x)
          %e : Tensor = aten::exp(%n)
          return (%e)
        """
    )
    before = str(graph)
    assert not toy_table().rewrite(graph, None)
    assert str(graph) == before


def forever() -> PatternTable[None]:
    """A table that never converges: every negation is replaced by a new one."""
    table = PatternTable[None]("forever")

    @table.register("aten::neg")
    def renew(rewriter: Toy, node: Node) -> bool:
        with rewriter.inserting_before(node):
            fresh = rewriter.insert("aten::neg", [node.inputs[0]], [TENSOR], node.source_range)
        rewriter.replace(node, fresh.outputs)
        return True

    return table


NEGATION = """
graph @f(%x : Tensor):
  %n : Tensor = aten::neg(%x)
  return (%n)
"""


def test_a_table_that_never_converges_raises_an_internal_error() -> None:
    graph = parse_ir(NEGATION)
    with pytest.raises(
        RewriteLimitError, match=r"forever: still rewriting after \d+ rewrites"
    ) as info:
        forever().rewrite(graph, None)
    assert f"after {MINIMUM_REWRITE_LIMIT} rewrites" in info.value.message
    assert "last: renew on aten::neg" in info.value.message


def test_the_runner_names_the_pass_that_did_not_converge() -> None:
    from passes import registry

    table = forever()
    name = "test-forever"
    registry.register_pass(name)(lambda graph: table.rewrite(graph, None))
    try:
        with pytest.raises(RewriteLimitError) as info:
            run_passes(parse_ir(NEGATION), name)
    finally:
        del registry.PASSES[name]
    assert any("while running pass 'test-forever'" in note for note in info.value.notes)
