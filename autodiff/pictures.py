"""Pictures and networkx graphs of a Gradient: ``f`` and ``df`` side by side, with the values
``f`` saves for ``df`` highlighted and joined to the ``df`` inputs that take them.

# Note [Captured edges]
# ``df`` takes, after its vjps, the inputs of ``f`` listed by ``df_input_captured_inputs`` and
# the outputs of ``f`` listed by ``df_input_captured_outputs`` (`autodiff.gradient.Gradient`).
# A picture colours both ends of each such value — the ``f`` vertex that defines it and the
# ``df`` input that takes it — and joins them with a dashed "captured" edge that does not
# constrain the layout, so ``f`` and ``df`` stay side by side.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from autodiff.gradient import Gradient
from ir.dot import HIGHLIGHT_LINE, DotWriter
from ir.flow import ValueFlow, edge_attributes, import_networkx, vertex_attributes
from ir.graph import Graph, Value

if TYPE_CHECKING:
    import networkx


@dataclass(frozen=True, slots=True)
class Capture:
    """One value ``f`` saves for ``df``: ``f_value`` (an input or output of ``f``) is passed
    as ``df_input``."""

    f_value: Value
    df_input: Value
    f_input: int | None  # the index among f's inputs, when it is one
    f_output: int | None  # the index among f's outputs, when it is one

    @property
    def note(self) -> str:
        if self.f_input is not None:
            return f"saved f input {self.f_input}"
        return f"saved f output {self.f_output}"


def captures(gradient: Gradient) -> list[Capture]:
    """The values ``f`` saves for ``df``, in the order ``df`` takes them."""
    first = len(gradient.df_input_vjps)
    df_inputs = gradient.df.inputs[first:]
    found = [
        Capture(gradient.f.inputs[index], df_inputs[position], index, None)
        for position, index in enumerate(gradient.df_input_captured_inputs)
    ]
    after_inputs = len(gradient.df_input_captured_inputs)
    found.extend(
        Capture(gradient.f.outputs[index], df_inputs[after_inputs + position], None, index)
        for position, index in enumerate(gradient.df_input_captured_outputs)
    )
    return found


def draw_gradient(writer: DotWriter, gradient: Gradient, fold_constants: bool = True) -> None:
    """Add ``f`` and ``df`` to ``writer`` as clusters ``f`` and ``df``, with their captured
    values highlighted and joined. See Note [Captured edges]."""
    saved = captures(gradient)
    notes = {capture.df_input: capture.note for capture in saved}
    for position, output in enumerate(gradient.df_input_vjps):
        notes[gradient.df.inputs[position]] = f"vjp of f output {output}"
    forward = writer.add_graph(
        gradient.f,
        prefix="f",
        title="f (forward)",
        fold_constants=fold_constants,
        highlight=[capture.f_value for capture in saved],
    )
    backward = writer.add_graph(
        gradient.df,
        prefix="df",
        title="df (backward)",
        fold_constants=fold_constants,
        highlight=[capture.df_input for capture in saved],
        notes=notes,
    )
    for capture in saved:
        writer.add_edge(
            forward.producer_id(capture.f_value),
            backward.producer_id(capture.df_input),
            style="dashed",
            color=HIGHLIGHT_LINE,
            penwidth="1.5",
            constraint="false",
            label="captured",
            fontcolor=HIGHLIGHT_LINE,
        )


def gradient_to_dot(gradient: Gradient, fold_constants: bool = True) -> str:
    """Graphviz DOT text that draws ``f`` and ``df`` side by side (Note [Captured edges])."""
    writer = DotWriter(gradient.f.name or "gradient")
    draw_gradient(writer, gradient, fold_constants)
    return writer.text()


def stages_to_dot(
    name: str, stages: Sequence[tuple[str, Graph | Gradient]], fold_constants: bool = True
) -> str:
    """One picture of several stages of a function, each stage a cluster (a Gradient two, ``f``
    and ``df``); a single graph is drawn without a cluster around it.

    >>> stages_to_dot("loss", [("typed", typed), ("f and df", gradient)])
    """
    writer = DotWriter(name)
    if len(stages) == 1 and isinstance(stages[0][1], Graph):
        writer.add_graph(stages[0][1], fold_constants=fold_constants)
        return writer.text()
    for title, stage in stages:
        if isinstance(stage, Gradient):
            draw_gradient(writer, stage, fold_constants)
        else:
            writer.add_graph(stage, prefix=title, title=title, fold_constants=fold_constants)
    return writer.text()


def gradient_to_networkx(gradient: Gradient) -> networkx.DiGraph:
    """``f`` and ``df`` in one `networkx.DiGraph`: each vertex of `ir.flow.to_networkx` keyed
    by a tuple ``("f", key)`` or ``("df", key)`` and with a ``graph`` attribute ``"f"`` or
    ``"df"``; plus an edge of kind ``"captured"`` from the ``f`` vertex that defines each saved
    value to the ``df`` input that takes it (attributes ``value``, ``type``, and ``f_input`` or
    ``f_output``: its index among ``f``'s inputs or outputs). No edge stands for the vjps,
    which come from the caller, not from ``f``.

    >>> g = gradient.to_networkx()
    >>> [(u, v) for u, v, kind in g.edges(data="kind") if kind == "captured"]
    [(('f', 'n2'), ('df', 'input1'))]
    """
    nx = import_networkx("Gradient.to_networkx")
    digraph = nx.DiGraph(name=gradient.f.name)
    flows = {"f": ValueFlow(gradient.f), "df": ValueFlow(gradient.df)}
    for graph_name, flow in flows.items():
        for key, vertex in flow.vertices.items():
            digraph.add_node((graph_name, key), graph=graph_name, **vertex_attributes(flow, vertex))
        for edge in flow.edges:
            digraph.add_edge(
                (graph_name, edge.source),
                (graph_name, edge.target),
                **edge_attributes(flow, edge),
            )
    for capture in captures(gradient):
        digraph.add_edge(
            ("f", flows["f"].producer(capture.f_value)),
            ("df", flows["df"].producer(capture.df_input)),
            kind="captured",
            value=flows["f"].name(capture.f_value),
            type=str(capture.f_value.ty),
            f_input=capture.f_input,
            f_output=capture.f_output,
        )
    return digraph
