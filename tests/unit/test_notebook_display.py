"""How Jupyter shows graphs, gradients and profiles: `_repr_svg_` (a picture when Graphviz is
installed, else None so that the text shows), `_repr_pretty_` (the IR text), and a profile's
`_repr_html_` (time per source line with bars)."""

from __future__ import annotations

import html
import re
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

import autodiff as ad
import ir.dot
from ir.graph import Graph
from tests import picture_samples

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz `dot` not installed")


class TextPrinter:
    """What IPython's pretty printer gives `_repr_pretty_`."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    def text(self, part: str) -> None:
        self.parts.append(part)


def typed_graph(name: str) -> Graph:
    function = ad.script(getattr(picture_samples, name))
    return function.graph_for(*picture_samples.arguments(name))


def without_graphviz(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "graphviz", None)
    monkeypatch.setenv("PATH", str(tmp_path))


def test_text_display_is_the_ir_text() -> None:
    graph = typed_graph("branchy")
    gradient = ad.differentiate(graph)
    for shown in (graph, gradient):
        printer = TextPrinter()
        shown._repr_pretty_(printer, cycle=False)
        assert printer.parts == [str(shown)]
    assert printer.parts[0].startswith("graph @f(")


@needs_dot
def test_svg_display() -> None:
    graph = typed_graph("looped")
    for shown in (graph, ad.differentiate(graph)):
        svg = shown._repr_svg_()
        assert svg is not None
        assert "<svg" in svg
        assert "prim::Loop" in svg


def test_no_svg_without_graphviz(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    without_graphviz(monkeypatch, tmp_path)
    graph = typed_graph("looped")
    assert graph._repr_svg_() is None
    assert ad.differentiate(graph)._repr_svg_() is None


@needs_dot
def test_no_svg_for_a_graph_too_large_to_lay_out(monkeypatch: pytest.MonkeyPatch) -> None:
    graph = typed_graph("branchy")
    gradient = ad.differentiate(graph)
    size = sum(1 for _ in graph.all_nodes())
    monkeypatch.setattr(ir.dot, "LARGEST_PICTURE", size)
    assert graph._repr_svg_() is not None
    monkeypatch.setattr(ir.dot, "LARGEST_PICTURE", size - 1)
    assert graph._repr_svg_() is None
    assert gradient._repr_svg_() is None


def escaped(x):  # type: ignore[no-untyped-def]
    y = np.where(x < 0.5, x * x, 2.0 * x)
    return np.sum(np.exp(y))


@pytest.fixture
def interpreter(monkeypatch: pytest.MonkeyPatch) -> None:
    """The profiler observes the interpreter's runs."""
    monkeypatch.setenv("AUTODIFF_EXECUTOR", "interpreter")


@pytest.mark.usefixtures("interpreter")
def test_time_per_line_sums_the_entries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(picture_samples.PATH.parents[1])  # locations are relative to it
    prof = ad.profile(picture_samples.mlp_loss, *picture_samples.arguments("mlp_loss"))
    lines = prof.time_per_line()
    entries = prof.entries()
    for graph in ("f", "df"):
        in_lines = sum(line.f_ns if graph == "f" else line.df_ns for line in lines)
        assert in_lines == sum(entry.time_ns for entry in entries if entry.graph == graph)
    assert sum(line.calls for line in lines) == sum(entry.calls for entry in entries)
    times = [line.time_ns for line in lines]
    assert times == sorted(times, reverse=True)
    first = picture_samples.mlp_loss.__code__.co_firstlineno
    located = {line.location for line in lines if line.location}
    assert located == {f"tests/picture_samples.py:{first + i}" for i in range(1, 6)}
    assert any(line.source_line == "h = np.tanh(x @ w1 + b1)" for line in lines)


@pytest.mark.usefixtures("interpreter")
def test_profile_html_is_a_table_with_bars() -> None:
    prof = ad.profile(escaped, np.linspace(0.0, 1.0, 5))
    page = prof._repr_html_()
    lines = prof.time_per_line()
    rows = re.findall(r"<tr>(.*?)</tr>", page)
    assert len(rows) == len(lines) + 1  # and the header
    for row, line in zip(rows[1:], lines, strict=True):
        assert f"<code>{html.escape(line.location or '(no source line)')}</code>" in row
        widths = [float(w) for w in re.findall(r"width:([\d.]+)%;background", row)]
        assert widths == pytest.approx(
            [100 * line.f_ns / lines[0].time_ns, 100 * line.df_ns / lines[0].time_ns], abs=0.06
        )
    assert "y = np.where(x &lt; 0.5, x * x, 2.0 * x)" in page  # escaped
    assert "x < 0.5" not in page
    assert "<script" not in page
