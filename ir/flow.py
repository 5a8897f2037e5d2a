"""The value flow of a graph, for pictures and graph algorithms: a vertex per node, graph input,
block parameter and block return, and an edge per producer that a vertex reads from. `ir.dot`
draws it; `to_networkx` hands it to networkx.

# Note [Value flow]
# Vertex keys are stable strings: ``n7`` is the eighth node in printed order (`Graph.all_nodes`),
# ``input0`` the graph's first input, ``return`` its return; the parameters and return of block
# ``j`` of node ``n7`` are ``n7.b0.param0`` ... and ``n7.b0.return``. A "use" edge goes from the
# vertex that defines a value to each vertex that reads it, one edge per pair (several values
# flowing along it are listed in order); a "result" edge goes from a block's return to the node
# that owns the block, whose outputs are the block's results (an If's branches, a Loop's body,
# a GradOf's formula), so that paths lead from the inputs through nested blocks to the outputs.
# With both kinds of edge the flow is acyclic, and `Vertex.order` — parameters first, a node
# after its blocks, a block's return last — is a topological order of it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ir.errors import MissingDependencyError
from ir.graph import Block, Graph, Node, Value
from ir.printer import Namer

if TYPE_CHECKING:
    import networkx

INPUT = "input"  # a graph input
PARAM = "param"  # a parameter of a nested block
NODE = "node"  # an operation
RETURN = "return"  # a block's (or the graph's) return

USE = "use"
RESULT = "result"


@dataclass(frozen=True, slots=True)
class Vertex:
    """One vertex of the flow. See Note [Value flow]."""

    key: str
    role: str  # INPUT, PARAM, NODE or RETURN
    node: Node  # the operation, or the block's param or return sentinel
    value: Value | None  # the value an input or parameter stands for
    block: tuple[str, ...]  # keys of the enclosing blocks, outermost first; () at top level
    order: int  # position in a topological order


@dataclass(slots=True)
class FlowEdge:
    """The values one vertex reads from another (``kind`` USE), or a block's results going to
    the node that owns the block (``kind`` RESULT)."""

    source: str
    target: str
    kind: str
    values: list[Value] = field(default_factory=list)


@dataclass(slots=True)
class BlockView:
    """A block and the vertices directly in it, for drawing blocks as nested clusters."""

    key: str  # "" for the graph's own block
    block: Block
    owner: str | None  # the key of the node that owns the block (None for the graph's own)
    index: int  # which of the owner's blocks
    vertices: list[str] = field(default_factory=list)
    children: list[BlockView] = field(default_factory=list)


class ValueFlow:
    """The flow of ``graph``: `vertices`, `edges` and the tree of blocks (`root`), with values
    named as the printer names them.

    >>> flow = ValueFlow(parse_graph("graph(%x : Tensor):\\n  %y : Tensor = aten::neg(%x)\\n"
    ...                              "  return (%y)"))
    >>> [(e.source, e.target) for e in flow.edges]
    [('input0', 'n0'), ('n0', 'return')]
    """

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.names = _print_names(graph)
        self.vertices: dict[str, Vertex] = {}
        self.edges: list[FlowEdge] = []
        self.node_keys = {node: f"n{i}" for i, node in enumerate(graph.all_nodes())}
        self.producers: dict[Value, str] = {}  # value -> the key of the vertex defining it
        self._edge_index: dict[tuple[str, str, str], FlowEdge] = {}
        self.root = BlockView("", graph.block, None, 0)
        self._add_block(self.root, ())

    def name(self, value: Value) -> str:
        """``%name`` as the IR text prints ``value``."""
        return f"%{self.names[value]}"

    def producer(self, value: Value) -> str:
        """The key of the vertex that defines ``value``."""
        return self.producers[value]

    def _add_block(self, view: BlockView, path: tuple[str, ...]) -> None:
        top_level = view.owner is None
        for index, param in enumerate(view.block.inputs):
            key = f"input{index}" if top_level else f"{view.key}.param{index}"
            self._add_vertex(view, key, INPUT if top_level else PARAM, param.node, param, path)
            self.producers[param] = key
        for node in view.block.nodes():
            key = self.node_keys[node]
            for index, inner in enumerate(node.blocks):
                child = BlockView(f"{key}.b{index}", inner, key, index)
                view.children.append(child)
                self._add_block(child, (*path, child.key))
                self._connect(f"{child.key}.return", key, RESULT, inner.outputs)
            self._add_vertex(view, key, NODE, node, None, path)
            self._read(node.inputs, key)
            for out in node.outputs:
                self.producers[out] = key
        key = "return" if top_level else f"{view.key}.return"
        self._add_vertex(view, key, RETURN, view.block.return_node, None, path)
        self._read(view.block.outputs, key)

    def _add_vertex(
        self,
        view: BlockView,
        key: str,
        role: str,
        node: Node,
        value: Value | None,
        path: tuple[str, ...],
    ) -> None:
        self.vertices[key] = Vertex(key, role, node, value, path, len(self.vertices))
        view.vertices.append(key)

    def _read(self, values: list[Value], reader: str) -> None:
        for value in values:
            source = self.producers.get(value)
            if source is not None:  # (a value from outside the graph: the verifier reports it)
                self._connect(source, reader, USE, [value])

    def _connect(self, source: str, target: str, kind: str, values: list[Value]) -> None:
        edge = self._edge_index.get((source, target, kind))
        if edge is None:
            edge = self._edge_index[source, target, kind] = FlowEdge(source, target, kind)
            self.edges.append(edge)
        edge.values.extend(value for value in values if value not in edge.values)


def _print_names(graph: Graph) -> Namer:
    """The names the printer gives ``graph``'s values (defined in the printer's order)."""
    namer = Namer()
    for value in graph.inputs:
        namer.define(value)

    def define_in(block: Block) -> None:
        for node in block.nodes():
            for out in node.outputs:
                namer.define(out)
            for inner in node.blocks:
                for param in inner.inputs:
                    namer.define(param)
                define_in(inner)

    define_in(graph.block)
    return namer


def import_networkx(what: str) -> Any:
    """The networkx module, or a `MissingDependencyError` saying how to install it."""
    try:
        import networkx
    except ImportError as error:
        raise MissingDependencyError(
            f"{what} needs networkx: pip install networkx "
            "(or pip install 'numpy-autodiff[networkx]')"
        ) from error
    return networkx


def to_networkx(graph: Graph) -> networkx.DiGraph:
    """``graph`` as a `networkx.DiGraph` with the vertices and edges of Note [Value flow].

    Vertex attributes: ``op`` (the operator, or ``"input"``, ``"param"``, ``"return"``),
    ``types`` (output types as IR text; an input's or parameter's own type), ``values`` (the
    names of the outputs), ``source`` (``file:line:col`` or None), ``block`` (keys of the
    enclosing blocks, outermost first), ``order`` (a topological position). Edge attributes:
    ``kind`` (``"use"`` or ``"result"``), ``value`` and ``type`` (the names and types of the
    values along it, joined by ``", "`` when there are several).

    >>> g = to_networkx(graph)
    >>> networkx.has_path(g, "input0", "return")
    True
    """
    nx = import_networkx("Graph.to_networkx")
    flow = ValueFlow(graph)
    digraph = nx.DiGraph(name=graph.name)
    for key, vertex in flow.vertices.items():
        digraph.add_node(key, **vertex_attributes(flow, vertex))
    for edge in flow.edges:
        digraph.add_edge(edge.source, edge.target, **edge_attributes(flow, edge))
    return digraph


def vertex_attributes(flow: ValueFlow, vertex: Vertex) -> dict[str, Any]:
    if vertex.value is not None:
        values = [vertex.value]
    elif vertex.role == NODE:
        values = list(vertex.node.outputs)
    else:
        values = []
    where = vertex.node.source_range
    return {
        "op": vertex.node.kind if vertex.role == NODE else vertex.role,
        "types": ", ".join(str(value.ty) for value in values),
        "values": ", ".join(flow.name(value) for value in values),
        "source": str(where) if where is not None and vertex.role == NODE else None,
        "block": vertex.block,
        "order": vertex.order,
    }


def edge_attributes(flow: ValueFlow, edge: FlowEdge) -> dict[str, Any]:
    return {
        "kind": edge.kind,
        "value": ", ".join(flow.name(value) for value in edge.values),
        "type": ", ".join(str(value.ty) for value in edge.values),
    }
