"""Helpers for tests written in IR text: exact round trips and whole-graph golden comparisons."""

from __future__ import annotations

import difflib
import textwrap

from ir.graph import Graph
from ir.parser import parse_graph
from ir.printer import print_graph


def parse_ir(text: str) -> Graph:
    """`parse_graph` of ``text`` dedented, so tests can indent IR inside triple quotes."""
    return parse_graph(textwrap.dedent(text))


def check_roundtrip(text: str) -> Graph:
    """Parse canonical IR ``text`` and return the graph, after checking that it prints back as
    exactly ``text`` and that the printed text parses to a graph that prints the same again."""
    graph = parse_graph(text)
    printed = print_graph(graph)
    _assert_same_text(printed, text, "printed graph differs from its input")
    reprinted = print_graph(parse_graph(printed))
    _assert_same_text(reprinted, printed, "reparsed graph prints differently")
    return graph


def assert_ir(graph: Graph, expected: str) -> None:
    """Check that ``graph`` prints as ``expected``, dedented; surrounding blank lines ignored."""
    _assert_same_text(
        print_graph(graph).strip("\n"),
        textwrap.dedent(expected).strip("\n"),
        "graph differs from the expected IR",
    )


def _assert_same_text(actual: str, expected: str, what: str) -> None:
    if actual == expected:
        return
    diff = difflib.unified_diff(
        expected.splitlines(), actual.splitlines(), "expected", "actual", lineterm=""
    )
    lines = list(diff)
    if not lines:  # the same lines: only line endings or the final newline differ
        lines = [f"expected {expected!r}", f"actual   {actual!r}"]
    raise AssertionError(f"{what}:\n" + "\n".join(lines))
