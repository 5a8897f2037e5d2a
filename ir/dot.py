"""Pictures of graphs: Graphviz DOT text for a Graph (its value flow, `ir.flow`), and SVG
rendered from it when Graphviz is installed.

# Note [Drawing graphs]
# A node is a box labelled with its operator and operands, its outputs and types, and its
# source line (``mlp.py:17``, never an absolute path); graph inputs, block parameters and
# returns are vertices of their own; a nested block (an If's branch, a Loop's body, a GradOf's
# formula) is a cluster inside the cluster of the block around it, and a dashed edge takes its
# results to the node that owns it. Short constants (``1``, ``True``, ``None``) are folded into
# their users' operand lists instead of being drawn, so that pictures stay readable. Ids are the
# flow's keys (Note [Value flow]) behind a prefix, so the same graph always gives the same text,
# and several graphs (the stages of `autodiff dump --stage all`, ``f`` and ``df``) can share one
# picture, each in a cluster of its own.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Collection, Mapping
from dataclasses import dataclass

from ir.errors import AutodiffError, MissingDependencyError
from ir.flow import INPUT, NODE, PARAM, RESULT, BlockView, ValueFlow, Vertex
from ir.graph import Graph, Value
from ir.printer import canonical_hint, format_attr
from ir.source import SourceRange, shown_path

NEEDS_GRAPHVIZ = (
    "needs Graphviz: install the `dot` program (apt install graphviz / brew install graphviz)"
)
LONGEST_FOLDED_CONSTANT = 16  # characters of IR text
LONGEST_LABEL_LINE = 60
# Jupyter shows a graph of more nodes as text: Graphviz takes seconds to lay one out.
LARGEST_PICTURE = 2000

HIGHLIGHT_FILL = "#fde68a"
HIGHLIGHT_LINE = "#d97706"
PARAM_FILL = "#dbeafe"
RETURN_FILL = "#e5e7eb"


def graph_to_dot(graph: Graph, fold_constants: bool = True) -> str:
    """Graphviz DOT text that draws ``graph``. See Note [Drawing graphs].

    >>> print(graph_to_dot(parse_graph("graph @f(%x : Tensor):\\n"
    ...                                "  %y : Tensor = aten::neg(%x)\\n  return (%y)")))
    digraph "f" {
      ...
      "n0" [label="aten::neg(%x)\\n%y : Tensor"];
      ...
      "input0" -> "n0" [label="x"];
    """
    writer = DotWriter(graph.name or "graph")
    writer.add_graph(graph, fold_constants=fold_constants)
    return writer.text()


class RenderError(AutodiffError):
    """Graphviz refused the DOT text (which the writer should never produce)."""


def render_svg(dot_text: str) -> str:
    """SVG text for ``dot_text``, rendered by the `graphviz` package when it is installed, else
    by the ``dot`` program on PATH; a `MissingDependencyError` when neither can run."""
    try:
        import graphviz
    except ImportError:
        pass
    else:
        try:
            return str(graphviz.Source(dot_text).pipe(format="svg", encoding="utf-8"))
        except graphviz.ExecutableNotFound:
            pass  # the package runs the same `dot` program: report it below
        except graphviz.CalledProcessError as error:
            raise RenderError(f"Graphviz could not render the picture: {error.stderr}") from error
    program = shutil.which("dot")
    if program is None:
        raise MissingDependencyError(f"rendering SVG {NEEDS_GRAPHVIZ}")
    done = subprocess.run(
        [program, "-Tsvg"], input=dot_text.encode(), capture_output=True, check=False
    )
    if done.returncode != 0:
        stderr = done.stderr.decode(errors="replace")
        raise RenderError(f"Graphviz could not render the picture: {stderr}")
    return done.stdout.decode()


def try_render_svg(dot_text: str) -> str | None:
    """`render_svg`, or None when Graphviz is not installed (for Jupyter's ``_repr_svg_``,
    which then shows the text representation)."""
    try:
        return render_svg(dot_text)
    except MissingDependencyError:
        return None


def quote(text: str) -> str:
    """``text`` as a DOT quoted string: backslashes and quotes escaped, each line break as
    DOT's ``\\n`` escape, other control characters dropped."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\r\n", "\n")
    escaped = escaped.replace("\n", "\\n")
    return '"' + "".join(c for c in escaped if c >= " " or c == "\t") + '"'


def display_filename(filename: str) -> str:
    """A file name for a picture: as IR comments show it (`ir.source.shown_path`: relative to
    the working directory when the file is under it), but a base name rather than an absolute
    path, which would make every label wide."""
    shown = shown_path(filename)
    return os.path.basename(shown) if os.path.isabs(shown) else shown


def short_location(where: SourceRange | None) -> str | None:
    """``mlp.py:17`` for a node's source range."""
    if where is None:
        return None
    return f"{display_filename(where.filename)}:{where.line}"


@dataclass(frozen=True, slots=True)
class DrawnGraph:
    """A graph a `DotWriter` has drawn: how to find the DOT id of one of its values."""

    flow: ValueFlow
    prefix: str

    def vertex_id(self, key: str) -> str:
        return f"{self.prefix}.{key}" if self.prefix else key

    def producer_id(self, value: Value) -> str:
        """The id of the vertex that defines ``value`` (drawn: it is never folded when it is
        highlighted)."""
        return self.vertex_id(self.flow.producer(value))


class DotWriter:
    """Builds one DOT digraph out of one or more graphs and extra edges between them.

    >>> writer = DotWriter("loss")
    >>> f = writer.add_graph(gradient.f, prefix="f", title="f")
    >>> df = writer.add_graph(gradient.df, prefix="df", title="df")
    >>> writer.add_edge(f.producer_id(t), df.producer_id(t_in), style="dashed")
    >>> text = writer.text()
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self.body: list[str] = []
        self.edges: list[str] = []

    def add_graph(
        self,
        graph: Graph,
        prefix: str = "",
        title: str | None = None,
        fold_constants: bool = True,
        highlight: Collection[Value] = (),
        notes: Mapping[Value, str] | None = None,
    ) -> DrawnGraph:
        """Draw ``graph``, in a cluster labelled ``title`` when one is given. The vertices that
        define ``highlight`` values are coloured; ``notes`` add a line to the label of the
        vertex that defines a value."""
        flow = ValueFlow(graph)
        drawn = DrawnGraph(flow, prefix)
        painter = _GraphPainter(drawn, fold_constants, set(highlight), notes or {})
        if title is not None:
            cluster = f"cluster_{prefix}" if prefix else "cluster_graph"
            self.body.append(f"  subgraph {quote(cluster)} {{")
            self.body.append(f"    label={quote(title)}; style=rounded; color=gray60;")
            self.body.extend(f"  {line}" for line in painter.block_lines(flow.root))
            self.body.append("  }")
        else:
            self.body.extend(painter.block_lines(flow.root))
        self.edges.extend(painter.edge_lines())
        return drawn

    def add_edge(self, source: str, target: str, **attributes: str) -> None:
        self.edges.append(f"  {quote(source)} -> {quote(target)}{_attribute_list(attributes)};")

    def text(self) -> str:
        header = [
            f"digraph {quote(self.name)} {{",
            '  graph [fontname="Helvetica", fontsize=11, rankdir=TB, labelloc=t];',
            '  node [fontname="Helvetica", fontsize=10, shape=box];',
            '  edge [fontname="Helvetica", fontsize=9, color="#555555"];',
        ]
        return "\n".join([*header, *self.body, *self.edges, "}"]) + "\n"


class _GraphPainter:
    """The DOT lines of one graph."""

    def __init__(
        self,
        drawn: DrawnGraph,
        fold_constants: bool,
        highlight: set[Value],
        notes: Mapping[Value, str],
    ) -> None:
        self.drawn = drawn
        self.flow = drawn.flow
        self.highlight = highlight
        self.notes = notes
        self.folded: dict[str, str] = {}  # key of a folded constant -> its value as IR text
        if fold_constants:
            for key, vertex in self.flow.vertices.items():
                literal = self._foldable(vertex)
                if literal is not None:
                    self.folded[key] = literal

    def _foldable(self, vertex: Vertex) -> str | None:
        node = vertex.node
        if vertex.role != NODE or node.kind != "prim::Constant" or len(node.outputs) != 1:
            return None
        if node.output in self.highlight:
            return None
        literal = format_attr(node.attr("value"))
        return literal if len(literal) <= LONGEST_FOLDED_CONSTANT else None

    def block_lines(self, view: BlockView) -> list[str]:
        lines: list[str] = []
        for key in view.vertices:
            if key not in self.folded:
                lines.append(f"  {quote(self.drawn.vertex_id(key))}{self._vertex_attributes(key)};")
        for child in view.children:
            owner = self.flow.vertices[child.owner or ""]
            title = f"block{child.index} of {_clip(self._operator(owner))}"
            lines.append(f"  subgraph {quote('cluster_' + self.drawn.vertex_id(child.key))} {{")
            lines.append(f"    label={quote(title)}; style=rounded; color=gray70;")
            lines.extend(f"  {line}" for line in self.block_lines(child))
            lines.append("  }")
        return lines

    def edge_lines(self) -> list[str]:
        lines = []
        for edge in self.flow.edges:
            if edge.source in self.folded:
                continue
            attributes: dict[str, str] = {}
            names = [
                self.flow.names[value]
                for value in edge.values
                if canonical_hint(value.name_hint) is not None
            ]
            if names:
                attributes["label"] = _clip(", ".join(names))
            if edge.kind == RESULT:
                attributes.update(style="dashed", color="gray50")
            source, target = self.drawn.vertex_id(edge.source), self.drawn.vertex_id(edge.target)
            lines.append(f"  {quote(source)} -> {quote(target)}{_attribute_list(attributes)};")
        return lines

    def _vertex_attributes(self, key: str) -> str:
        vertex = self.flow.vertices[key]
        node = vertex.node
        attributes: dict[str, str] = {}
        if vertex.role in (INPUT, PARAM):
            assert vertex.value is not None
            label = [f"{self.flow.name(vertex.value)} : {vertex.value.ty}"]
            defined = [vertex.value]
            attributes.update(shape="ellipse", style="filled", fillcolor=PARAM_FILL)
        elif vertex.role == NODE:
            label = [_clip(f"{self._operator(vertex)}({self._operands(vertex)})")]
            defined = list(node.outputs)
            if defined:
                label.append(_clip(", ".join(self._typed(value) for value in defined)))
            location = short_location(node.source_range)
            if location is not None and not (node.source_range and node.source_range.in_ir_text):
                label.append(location)
            if node.blocks:
                attributes["style"] = "bold"
            if node.kind == "prim::Constant":
                attributes["fontsize"] = "8"
        else:
            arrow = "return" if not vertex.block else "->"
            label = [_clip(f"{arrow} ({self._operands(vertex)})")]
            defined = []
            attributes.update(style="rounded,filled", fillcolor=RETURN_FILL)
        label.extend(self.notes[value] for value in defined if value in self.notes)
        if any(value in self.highlight for value in defined):
            style = attributes.get("style", "")
            attributes["style"] = f"{style},filled" if style and "filled" not in style else "filled"
            attributes.update(fillcolor=HIGHLIGHT_FILL, color=HIGHLIGHT_LINE, penwidth="2")
        return _attribute_list({"label": "\n".join(label), **attributes})

    def _operator(self, vertex: Vertex) -> str:
        """The operator with its attributes: ``prim::GradOf[name="aten::mul"]``."""
        node = vertex.node
        if not node.attrs:
            return node.kind
        attrs = ", ".join(f"{name}={format_attr(value)}" for name, value in node.attrs.items())
        return f"{node.kind}[{attrs}]"

    def _operands(self, vertex: Vertex) -> str:
        parts = []
        for value in vertex.node.inputs:
            producer = self.flow.producers.get(value)
            literal = self.folded.get(producer) if producer is not None else None
            parts.append(literal if literal is not None else self.flow.name(value))
        return ", ".join(parts)

    def _typed(self, value: Value) -> str:
        return f"{self.flow.name(value)} : {value.ty}"


def _clip(text: str, limit: int = LONGEST_LABEL_LINE) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _attribute_list(attributes: Mapping[str, str]) -> str:
    if not attributes:
        return ""
    return " [" + ", ".join(f"{name}={quote(value)}" for name, value in attributes.items()) + "]"
