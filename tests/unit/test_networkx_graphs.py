"""`Graph.to_networkx` and `Gradient.to_networkx` (`ir.flow`, `autodiff.pictures`): the value
flow as a networkx DiGraph, with operator, type and source attributes and, for a gradient,
captured edges from f to df."""

from __future__ import annotations

import sys
from typing import Any

import pytest

import autodiff as ad
from autodiff.pictures import captures
from ir.errors import MissingDependencyError
from ir.graph import Graph, Value
from tests import picture_samples

nx = pytest.importorskip("networkx")


def typed_graph(name: str) -> Graph:
    function = ad.script(getattr(picture_samples, name))
    return function.graph_for(*picture_samples.arguments(name))


def test_a_vertex_per_node_input_and_return() -> None:
    graph = typed_graph("mlp_loss")
    digraph = graph.to_networkx()
    nodes = list(graph.all_nodes())
    assert set(digraph) == {f"n{i}" for i in range(len(nodes))} | {
        f"input{i}" for i in range(len(graph.inputs))
    } | {"return"}
    for i, node in enumerate(nodes):
        attributes = digraph.nodes[f"n{i}"]
        assert attributes["op"] == node.kind
        assert attributes["types"] == ", ".join(str(out.ty) for out in node.outputs)
        assert attributes["source"] == str(node.source_range)
        assert attributes["block"] == ()
    assert digraph.nodes["input0"] == {
        "op": "input",
        "types": "Double(4, 5)",
        "values": "%w1",
        "source": None,
        "block": (),
        "order": 0,
    }
    tanh = next(key for key, op in digraph.nodes(data="op") if op == "aten::tanh")
    assert digraph.nodes[tanh]["source"].endswith(
        f"picture_samples.py:{picture_samples.mlp_loss.__code__.co_firstlineno + 1}:9"
    )


def test_edges_are_value_uses() -> None:
    graph = typed_graph("mlp_loss")
    digraph = graph.to_networkx()
    keys = {node: f"n{i}" for i, node in enumerate(graph.all_nodes())}

    def vertex(value: Value) -> str:
        return f"input{value.index}" if value.node is graph.block.param_node else keys[value.node]

    expected = {(vertex(value), key) for node, key in keys.items() for value in node.inputs}
    expected |= {(vertex(value), "return") for value in graph.outputs}
    assert set(digraph.edges) == expected
    matmul = next(key for key, op in digraph.nodes(data="op") if op == "aten::matmul")
    assert digraph.edges["input3", matmul] == {"kind": "use", "value": "%x", "type": "Double(6, 4)"}


def test_ir_order_is_a_topological_order() -> None:
    digraph = typed_graph("mlp_loss").to_networkx()  # no nested blocks: n0, n1, ... in IR order
    ir_order = sorted(digraph, key=lambda key: digraph.nodes[key]["order"])
    assert [key for key in ir_order if key.startswith("n")] == [
        f"n{i}" for i in range(sum(1 for key in digraph if key.startswith("n")))
    ]
    position = {key: i for i, key in enumerate(ir_order)}
    assert all(position[u] < position[v] for u, v in digraph.edges)
    assert nx.is_directed_acyclic_graph(digraph)


@pytest.mark.parametrize("name", ["looped", "branchy"])
def test_nested_blocks_and_their_order(name: str) -> None:
    graph = typed_graph(name)
    digraph = graph.to_networkx()
    assert nx.is_directed_acyclic_graph(digraph)
    order = dict(digraph.nodes(data="order"))
    assert all(order[u] < order[v] for u, v in digraph.edges)  # `order` is topological
    owners = [f"n{i}" for i, node in enumerate(graph.all_nodes()) if node.blocks]
    assert owners
    for owner in owners:
        inner = [
            key for key, block in digraph.nodes(data="block") if block[-1:] == (f"{owner}.b0",)
        ]
        assert f"{owner}.b0.return" in inner
        assert digraph.edges[f"{owner}.b0.return", owner]["kind"] == "result"


def test_paths_lead_through_branches() -> None:
    """``x`` is used only inside the If's branches: the path to the return goes through a
    branch's return and the If."""
    digraph = typed_graph("branchy").to_networkx()
    path = nx.shortest_path(digraph, "input0", "return")
    ops = [digraph.nodes[key]["op"] for key in path]
    assert "prim::If" in ops
    assert ops[ops.index("prim::If") - 1] == "return"  # the branch's return
    assert digraph.nodes[path[1]]["block"] != ()


def test_loop_body_parameters_are_vertices() -> None:
    graph = typed_graph("looped")
    digraph = graph.to_networkx()
    loop = next(key for key, op in digraph.nodes(data="op") if op == "prim::Loop")
    params = [key for key in digraph if key.startswith(f"{loop}.b0.param")]
    body = next(node for node in graph.all_nodes() if node.kind == "prim::Loop").blocks[0]
    assert len(params) == len(body.inputs)
    for index, param in enumerate(body.inputs):
        attributes = digraph.nodes[f"{loop}.b0.param{index}"]
        assert (attributes["op"], attributes["types"]) == ("param", str(param.ty))
        assert attributes["block"] == (f"{loop}.b0",)
    assert any(u.startswith(f"{loop}.b0.param") for u, _ in digraph.edges)


@pytest.mark.parametrize("name", ["mlp_loss", "looped", "branchy"])
def test_gradient_has_f_df_and_captured_edges(name: str) -> None:
    gradient = ad.differentiate(typed_graph(name))
    digraph = gradient.to_networkx()
    assert {key[0] for key in digraph} == {"f", "df"}
    assert all(digraph.nodes[key]["graph"] == key[0] for key in digraph)
    assert len([key for key in digraph if key[0] == "f"]) == len(gradient.f.to_networkx())
    captured = [
        (u, v, data) for u, v, data in digraph.edges(data=True) if data["kind"] == "captured"
    ]
    saved = captures(gradient)
    assert len(captured) == len(saved) > 0
    vjps = len(gradient.df_input_vjps)
    for position, ((source, target, data), capture) in enumerate(zip(captured, saved, strict=True)):
        assert source[0] == "f"
        assert target == ("df", f"input{vjps + position}")
        assert (data["f_input"], data["f_output"]) == (capture.f_input, capture.f_output)
        if capture.f_output is not None:  # the f vertex that defines the saved output
            defined = digraph.nodes[source]["values"].split(", ")
            assert data["value"] in defined
    # only captured edges join f to df
    crossing = [kind for u, v, kind in digraph.edges(data="kind") if u[0] != v[0]]
    assert crossing == ["captured"] * len(saved)
    assert nx.has_path(digraph, captured[0][0], ("df", "return"))


def test_missing_networkx_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "networkx", None)  # `import networkx` raises ImportError
    graph = typed_graph("branchy")
    raised: list[Any] = []
    for call in (graph.to_networkx, ad.differentiate(graph).to_networkx):
        with pytest.raises(MissingDependencyError) as info:
            call()
        raised.append(info.value)
    assert all(isinstance(error, ImportError) for error in raised)
    assert raised[0].message.startswith("Graph.to_networkx needs networkx: pip install networkx")
    assert raised[1].message.startswith("Gradient.to_networkx needs networkx")
