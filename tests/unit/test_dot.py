"""Graphviz DOT for graphs and gradients (`ir.dot`, `autodiff.pictures`): a DOT node per IR node,
clusters for nested blocks, folded constants, escaped labels, short source locations, stable
text, captured edges between f and df; and, where Graphviz is installed, `dot` accepts it."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

import autodiff as ad
from autodiff.gradient import Gradient
from autodiff.pictures import captures, gradient_to_dot
from ir.dot import HIGHLIGHT_FILL, graph_to_dot, quote
from ir.graph import Graph
from tests import picture_samples
from tests.helpers import parse_ir

NESTED = """\
graph @nested(%x : Double(3), %n : int):
  %2 : bool = prim::Constant[value=True]()
  %3 : int = prim::Constant[value=1]()
  %y : Double(3) = prim::Loop(%n, %2, %x)
    block0(%i : int, %y.1 : Double(3)):
      %7 : bool = prim::gt(%i, %3)
      %y.2 : Double(3) = prim::If(%7)
        block0():
          %y.3 : Double(3) = aten::mul(%y.1, %x)
          -> (%y.3)
        block1():
          %10 : float = prim::Constant[value=1.]()
          %y.4 : Double(3) = aten::add(%y.1, %10)
          -> (%y.4)
      -> (%2, %y.2)
  %12 : NoneType = prim::Constant[value=None]()
  %13 : bool = prim::Constant[value=False]()
  %14 : Double() = aten::sum(%y, %12, %13)
  return (%14)
"""

QUOTED_STRING = r'"(?:[^"\\]|\\.)*"'
NODE_STATEMENT = re.compile(rf"^\s*({QUOTED_STRING}) \[label=({QUOTED_STRING})(.*)\];$", re.M)
EDGE_STATEMENT = re.compile(rf"^\s*({QUOTED_STRING}) -> ({QUOTED_STRING})(.*);$", re.M)
CLUSTER = re.compile(rf"^\s*subgraph ({QUOTED_STRING}) {{$", re.M)


def unquote(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text[1:-1])


def node_ids(dot: str) -> list[str]:
    return [unquote(match.group(1)) for match in NODE_STATEMENT.finditer(dot)]


def labels(dot: str) -> dict[str, str]:
    return {unquote(m.group(1)): m.group(2) for m in NODE_STATEMENT.finditer(dot)}


def edges(dot: str) -> list[tuple[str, str, str]]:
    return [
        (unquote(m.group(1)), unquote(m.group(2)), m.group(3)) for m in EDGE_STATEMENT.finditer(dot)
    ]


def clusters(dot: str) -> list[str]:
    return [unquote(match.group(1)) for match in CLUSTER.finditer(dot)]


def gradient_of(name: str) -> Gradient:
    function = ad.script(getattr(picture_samples, name))
    return ad.differentiate(function.graph_for(*picture_samples.arguments(name)))


def test_one_dot_node_per_ir_node_and_a_cluster_per_block() -> None:
    graph = parse_ir(NESTED)
    dot = graph_to_dot(graph, fold_constants=False)
    nodes = list(graph.all_nodes())
    blocks = [block for node in nodes for block in node.blocks]
    params = sum(len(block.inputs) for block in blocks)
    ids = node_ids(dot)
    # every IR node, every graph input and block parameter, and every block's return, once
    assert len(ids) == len(set(ids)) == len(nodes) + len(graph.inputs) + params + len(blocks) + 1
    assert sorted(clusters(dot)) == ["cluster_n2.b0", "cluster_n4.b0", "cluster_n4.b1"]
    drawn = {key: label for key, label in labels(dot).items() if re.fullmatch(r"n\d+", key)}
    assert {key: re.match(r'"([\w:]+)', label).group(1) for key, label in drawn.items()} == {  # type: ignore[union-attr]
        f"n{i}": node.kind for i, node in enumerate(nodes)
    }


def test_clusters_nest_as_the_blocks_do() -> None:
    dot = graph_to_dot(parse_ir(NESTED))
    lines = dot.splitlines()
    loop_body = lines.index('  subgraph "cluster_n2.b0" {')
    branch = lines.index('    subgraph "cluster_n4.b0" {')
    closing = lines.index("  }", loop_body)
    assert loop_body < branch < closing  # the If's branch is inside the Loop's body
    body = "\n".join(lines[loop_body:closing])
    assert '"n2.b0.param0" [label="%i : int"' in body
    assert '"n2.b0.param1" [label="%y.1 : Double(3)"' in body
    assert '"n2.b0.return" [label="-> (True, %y.2)"' in body
    # the body's results go to the Loop, dashed
    assert ("n2.b0.return", "n2", ' [label="y.2", style="dashed", color="gray50"]') in edges(dot)


def test_short_constants_are_folded_into_their_users() -> None:
    graph = parse_ir(
        "graph @f(%x : Double(2, 3)):\n"
        "  %1 : int = prim::Constant[value=1]()\n"
        "  %2 : bool = prim::Constant[value=True]()\n"
        "  %3 : Double(2) = prim::Constant[value=tensor<Double(2)>[0.25, 0.5]]()\n"
        "  %4 : Double(2, 1) = aten::sum(%x, %1, %2)\n"
        "  %5 : Double(2, 1) = aten::mul(%4, %3)\n"
        "  return (%5)\n"
    )
    dot = graph_to_dot(graph)
    found = labels(dot)
    assert found["n3"] == '"aten::sum(%x, 1, True)\\n%4 : Double(2, 1)"'
    assert "n0" not in found  # folded: no vertex, no edge
    assert "n1" not in found
    assert not any("n0" in edge[:2] or "n1" in edge[:2] for edge in edges(dot))
    # an array constant is too long to fold: it stays a (small) vertex with an edge
    assert "prim::Constant[value=tensor<Double(2)>[0.25, 0.5]]" in found["n2"]
    assert ("n2", "n4", "") in edges(dot)


def test_labels_are_escaped() -> None:
    assert quote('a"b\\c\nd<e>') == '"a\\"b\\\\c\\nd<e>"'
    graph = Graph('we"ird\\name')
    x = graph.add_input(name_hint="x")
    text = graph.insert_constant('say "hi" \\ <b>\nbye', ty=x.ty)
    graph.register_output(graph.insert("prim::TupleConstruct", [x, text]).output)
    dot = graph_to_dot(graph, fold_constants=False)
    assert dot.startswith('digraph "we\\"ird\\\\name" {\n')
    for line in dot.splitlines():  # every quote on a line opens or closes a well-formed string
        assert '"' not in re.sub(QUOTED_STRING, "", line), line
    label = labels(dot)["n0"]
    # the IR text of the string (JSON: \" and \\ and \n), its backslashes escaped for DOT
    assert r"say \\\"hi\\\" \\\\ <b>\\nbye" in label


def test_source_lines_are_short(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    function = ad.script(picture_samples.mlp_loss)
    repository = Path(picture_samples.__file__).resolve().parents[1]
    monkeypatch.chdir(repository)
    dot = graph_to_dot(function.graph)
    assert "tests/picture_samples.py:" in dot
    monkeypatch.chdir(tmp_path)  # the file is not under the working directory: its base name
    dot = graph_to_dot(function.graph)
    line = picture_samples.mlp_loss.__code__.co_firstlineno + 1
    assert f'\\n%h : Tensor\\npicture_samples.py:{line}"' in dot
    assert str(repository) not in dot


def test_output_is_deterministic() -> None:
    graph = ad.script(picture_samples.looped).graph
    first = graph_to_dot(graph)
    assert graph_to_dot(graph) == first
    assert graph_to_dot(graph.copy()) == first  # ids do not depend on object identities
    gradient = gradient_of("looped")
    assert gradient.to_dot() == gradient_of("looped").to_dot()


@pytest.mark.parametrize("name", ["mlp_loss", "looped", "branchy"])
def test_gradient_draws_f_and_df_with_captured_edges(name: str) -> None:
    gradient = gradient_of(name)
    dot = gradient.to_dot()
    assert clusters(dot)[:1] == ["cluster_f"]
    assert "cluster_df" in clusters(dot)
    saved = captures(gradient)
    assert saved
    captured = [edge for edge in edges(dot) if 'label="captured"' in edge[2]]
    vjps = len(gradient.df_input_vjps)
    expected_targets = [f"df.input{vjps + i}" for i in range(len(saved))]
    assert [target for _, target, _ in captured] == expected_targets
    assert all(source.startswith("f.") for source, _, _ in captured)
    assert all('style="dashed"' in attributes for _, _, attributes in captured)
    found = labels(dot)
    highlighted = {
        key for key, label in found.items() if HIGHLIGHT_FILL in dot_attributes(dot, key)
    }
    assert {source for source, _, _ in captured} | set(expected_targets) == highlighted
    for capture, target in zip(saved, expected_targets, strict=True):
        assert capture.note in found[target]


def dot_attributes(dot: str, key: str) -> str:
    for match in NODE_STATEMENT.finditer(dot):
        if unquote(match.group(1)) == key:
            return match.group(3)
    raise KeyError(key)


def test_graph_and_gradient_to_dot_methods() -> None:
    graph = ad.script(picture_samples.branchy).graph
    assert graph.to_dot() == graph_to_dot(graph)
    assert graph.to_dot(fold_constants=False) != graph.to_dot()
    gradient = gradient_of("branchy")
    dot = gradient.to_dot()
    assert dot.startswith(f'digraph "{gradient.f.name}" {{')
    assert dot == gradient_to_dot(gradient)


needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz `dot` not installed")


@needs_dot
@pytest.mark.parametrize("name", ["mlp_loss", "looped", "branchy"])
def test_dot_accepts_every_picture(name: str) -> None:
    function = ad.script(getattr(picture_samples, name))
    typed = function.graph_for(*picture_samples.arguments(name))
    gradient = ad.differentiate(typed)
    pictures = [
        graph_to_dot(function.graph),
        graph_to_dot(typed, fold_constants=False),
        gradient.to_dot(),
        gradient.to_dot(fold_constants=False),
    ]
    for dot in pictures:
        done = subprocess.run(["dot", "-Tsvg"], input=dot.encode(), capture_output=True)
        assert done.returncode == 0, done.stderr.decode()
        assert b"<svg" in done.stdout
        assert not done.stderr, done.stderr.decode()  # not even a warning


@needs_dot
def test_escaped_graph_renders() -> None:
    graph = Graph('q"\\')
    x = graph.add_input(name_hint="x")
    text = graph.insert_constant('"\\<>&\n', ty=x.ty)
    graph.register_output(graph.insert("prim::TupleConstruct", [x, text]).output)
    done = subprocess.run(["dot", "-Tsvg"], input=graph_to_dot(graph).encode(), capture_output=True)
    assert done.returncode == 0, done.stderr.decode()
    # the label shows the string's IR text, "\"\\<>&\n", as it is
    assert "&quot;\\&quot;\\\\&lt;&gt;&amp;\\n&quot;" in done.stdout.decode()
