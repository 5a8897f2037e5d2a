"""The Gradient descriptor: a forward graph ``f``, a backward graph ``df``, and the index lists
that say how ``df``'s inputs come from a run of ``f`` (TorchScript's ``Gradient``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ir.graph import Graph, Value
from ir.printer import print_graph


@dataclass(frozen=True, slots=True)
class Gradient:
    """``f`` and ``df`` of a differentiated graph, and how to call ``df`` after ``f``.

    For ``s = sum(tanh(x * y))`` with x : Double(3, 4) and y : Double(4)::

        graph @f(%x, %y):                     graph @df(%ds, %x, %y, %t):
          %a = aten::mul(%x, %y)                ...
          %t = aten::tanh(%a)                   return (%dx, %dy)
          %s = aten::sum(%t, ...)
          return (%s, %t)

        f_real_outputs = 1              f's outputs are (%s) then the temporary %t
        df_input_vjps = (0,)            df input 0 is the vjp of f output 0 (%s)
        df_input_captured_inputs = (0, 1)    then f inputs 0 and 1 (%x, %y)
        df_input_captured_outputs = (1,)     then f output 1 (%t)
        df_output_vjps = (0, 1)         df's outputs are the gradients of f inputs 0 and 1

    ``df`` takes, in this order: the vjps listed by ``df_input_vjps``, the inputs of ``f``
    listed by ``df_input_captured_inputs``, the outputs of ``f`` listed by
    ``df_input_captured_outputs``. It returns one tuple of the gradients, in the order of
    ``df_output_vjps``, as TorchScript's does; unlike TorchScript's, it takes no vjps for
    temporaries (see Note [No vjps for temporaries] in `autodiff.lambda_lift`).
    """

    f: Graph
    """The forward graph: the original outputs, then the temporaries ``df`` captures."""
    df: Graph
    """The backward graph: vjps and captured values in, a tuple of the gradients out."""
    f_real_outputs: int
    """How many of ``f``'s outputs are the original function's (the rest are temporaries)."""
    df_input_vjps: tuple[int, ...]
    """For each leading input of ``df``, the index of the ``f`` output whose vjp it takes."""
    df_input_captured_inputs: tuple[int, ...]
    """For each next input of ``df``, the index of the ``f`` input it takes (saved by the
    caller: inputs are captured as inputs, never re-output by ``f``)."""
    df_input_captured_outputs: tuple[int, ...]
    """For each last input of ``df``, the index of the ``f`` output it takes (real outputs
    included: an output ``df`` reads is not output twice)."""
    df_output_vjps: tuple[int, ...]
    """For each output of ``df``, the index of the ``f`` input it is the gradient of."""

    def __str__(self) -> str:
        lists = [
            ("f_real_outputs", str(self.f_real_outputs)),
            ("df_input_vjps", _spell(self.df_input_vjps)),
            ("df_input_captured_inputs", _spell(self.df_input_captured_inputs)),
            ("df_input_captured_outputs", _spell(self.df_input_captured_outputs)),
            ("df_output_vjps", _spell(self.df_output_vjps)),
        ]
        # The lists are comments, so the whole text still parses as an IR module.
        footer = "".join(f"# {name} {value}\n" for name, value in lists)
        return f"{print_graph(self.f)}\n{print_graph(self.df)}\n{footer}"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        """IPython shows a gradient as its text (when it shows no picture)."""
        printer.text(str(self))

    def _repr_svg_(self) -> str | None:
        """Jupyter shows a gradient as a picture of ``f`` and ``df`` side by side (`to_dot`),
        or as text when Graphviz is not installed or the graphs are too large."""
        from ir.dot import LARGEST_PICTURE, try_render_svg

        size = sum(1 for graph in (self.f, self.df) for _ in graph.all_nodes())
        return None if size > LARGEST_PICTURE else try_render_svg(self.to_dot())

    def to_dot(self, fold_constants: bool = True) -> str:
        """Graphviz DOT text that draws ``f`` and ``df`` side by side, the values ``f`` saves
        for ``df`` highlighted and joined by dashed edges (Note [Captured edges] in
        `autodiff.pictures`).

        >>> gradient = ad.differentiate(ad.script(loss).graph_for(w, x, y))
        >>> Path("loss.dot").write_text(gradient.to_dot())
        """
        from autodiff.pictures import gradient_to_dot  # which imports this module

        return gradient_to_dot(self, fold_constants)

    def to_networkx(self) -> Any:
        """``f`` and ``df`` in one `networkx.DiGraph`, vertices keyed ``("f", key)`` and
        ``("df", key)``, with an edge of kind ``"captured"`` from each value ``f`` saves to the
        ``df`` input that takes it (`autodiff.pictures.gradient_to_networkx`). Needs networkx.

        >>> g = gradient.to_networkx()
        >>> [edge for edge in g.edges(data="kind") if edge[2] == "captured"][0]
        (('f', 'n1'), ('df', 'input2'), 'captured')
        """
        from autodiff.pictures import gradient_to_networkx

        return gradient_to_networkx(self)


def _spell(indices: tuple[int, ...]) -> str:
    return "[" + ", ".join(str(i) for i in indices) + "]"


# Note [Joined f and df]
# A ``grad``/``value_and_grad`` call runs ``f``, then ``df`` on what ``f`` saved. When the
# loss's seed is folded into ``df`` (Note [Seeded df] in `autodiff.runtime`) and ``df`` takes
# no other vjp, nothing the call does between the two reads more than ``f``'s results, so the
# two can run as one graph: ``f``'s nodes, then ``df``'s, each ``df`` input replaced by the
# input or output of ``f`` it captures; it returns ``f``'s real outputs, then ``df``'s tuple
# of gradients. The native tier compiles this graph instead of the two (Note [Tiering] in
# `autodiff.tiering`): the values ``f`` saves never leave numba's code (the 16-element chain
# saves 19 arrays; boxing them as ``f``'s results and unboxing them as ``df``'s arguments
# cost more than its arithmetic), and `native-regions` draws one region across both.
# Nothing is reordered: the nodes run in the order the two graphs run them, so ``f``'s writes
# into its arguments come before ``df`` reads them, as they do between two calls. The call
# checks the loss's dtype and shape after the run instead of between the two graphs; the
# check only refuses, and what ``df`` computed is then dropped.


def joined_graph(gradient: Gradient, df: Graph) -> Graph | None:
    """``gradient.f`` then ``df`` (``gradient.df`` with its seed folded in) as one graph,
    or None when ``df`` takes a vjp: Note [Joined f and df].

    >>> joined = joined_graph(gradient, seeded_df)
    >>> value, gradients = CompiledGraph(joined)(*args)
    """
    captured = gradient.df_input_captured_inputs + gradient.df_input_captured_outputs
    if len(df.inputs) != len(captured):
        return None
    graph = Graph(f"{gradient.f.name or 'f'}_and_df")
    f_values: dict[Value, Value] = {
        value: graph.add_input(value.ty, value.name_hint) for value in gradient.f.inputs
    }
    _append_nodes(graph, gradient.f, f_values)
    f_outputs = [f_values[value] for value in gradient.f.outputs]
    inputs = [graph.inputs[i] for i in gradient.df_input_captured_inputs]
    inputs += [f_outputs[i] for i in gradient.df_input_captured_outputs]
    df_values = dict(zip(df.inputs, inputs, strict=True))
    _append_nodes(graph, df, df_values)
    for value in f_outputs[: gradient.f_real_outputs]:
        graph.register_output(value)
    for value in df.outputs:
        graph.register_output(df_values[value])
    return graph


def _append_nodes(graph: Graph, source: Graph, values: dict[Value, Value]) -> None:
    """Copies of ``source``'s top-level nodes (their blocks with them) at the end of
    ``graph``, reading ``values`` of ``source``'s values, which grows with their results."""
    for node in source.block.nodes():
        copy = graph.create_clone(node, values.__getitem__)
        graph.block.append_node(copy)
        values.update(zip(node.outputs, copy.outputs, strict=True))


def gradient_name(value: Value) -> str | None:
    """The name hint of ``value``'s gradient: ``d`` before its own (``%dw`` for ``%w``), as
    TorchScript names the values of its gradient graphs; None when ``value`` has none."""
    return f"d{value.name_hint}" if value.name_hint else None
