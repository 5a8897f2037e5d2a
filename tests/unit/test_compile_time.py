"""What keeps compiling cheap (issue #8, Note [Compile-time cost] in autodiff/pipeline.py): the
compiler's pipelines verify once each unless asked for more, its stages run with the cycle
collector paused, intermediate stages are copied only when kept, and the frontend's LALR loop
gives lark's trees and lark's errors."""

from __future__ import annotations

import gc
import linecache
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import autodiff as ad
from autodiff.pipeline import Stages, differentiate_typed
from autodiff.specialize import argument_type, typed_graph
from frontend.errors import ScriptError
from frontend.parse import _parser, parse_source
from ir.errors import IRError, VerifyError
from ir.graph import Graph, Use
from ir.parser import parse_graph
from ir.printer import print_graph
from passes import registry
from passes.registry import PASSES, PipelineError, register_pass, run_passes

X = np.linspace(-1.0, 1.0, 4)


def fresh(body: str) -> Callable[..., Any]:
    """A new function ``f(x)`` with this body, its source findable as a file's is."""
    text = "def f(x):\n" + "".join(f"    {line}\n" for line in body.splitlines())
    filename = f"<test_compile_time {id(text)} {len(linecache.cache)}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(keepends=True), filename)
    namespace: dict[str, Any] = {"np": np}
    exec(compile(text, filename, "exec"), namespace)
    function: Callable[..., Any] = namespace["f"]
    return function


BODY = "h = np.sin(x)\nh = h * 1.5\nh = np.tanh(h) + x\nreturn np.sum(h)"


@pytest.fixture
def scratch_registry() -> Iterator[None]:
    saved = dict(PASSES)
    yield
    PASSES.clear()
    PASSES.update(saved)


@pytest.fixture
def verify_calls(monkeypatch: pytest.MonkeyPatch) -> list[Graph]:
    """The graphs the pass runner verifies, in order."""
    seen: list[Graph] = []
    original = registry.verify_graph

    def counting(graph: Graph) -> None:
        seen.append(graph)
        original(graph)

    monkeypatch.setattr(registry, "verify_graph", counting)
    return seen


def compile_gradient_of(function: Callable[..., Any]) -> Stages:
    scripted = ad.script(function)
    typed = typed_graph(scripted.graph, [argument_type("f", "x", X)])
    return differentiate_typed(typed, [0])


# -- Note [Verify between passes] -----------------------------------------------------------


@pytest.mark.parametrize(("mode", "per_pipeline"), [("end", 1), ("off", 0)])
def test_pipelines_verify_once_or_not_at_all(
    mode: str, per_pipeline: int, monkeypatch: pytest.MonkeyPatch, verify_calls: list[Graph]
) -> None:
    monkeypatch.setenv("AUTODIFF_VERIFY", mode)
    compile_gradient_of(fresh(BODY))
    # Three pipelines: inlining (ad.script), the forward cleanup, the reverse optimisation.
    assert len(verify_calls) == 3 * per_pipeline


def test_each_mode_verifies_the_input_and_after_every_pass(
    monkeypatch: pytest.MonkeyPatch, verify_calls: list[Graph]
) -> None:
    monkeypatch.setenv("AUTODIFF_VERIFY", "each")
    graph = parse_graph("graph @g(%x : Tensor):\n  %y : Tensor = aten::neg(%x)\n  return (%y)\n")
    run_passes(graph, "cse,dce,constant-propagation")
    assert len(verify_calls) == 4
    monkeypatch.setenv("AUTODIFF_VERIFY", "off")
    run_passes(graph, "cse,dce", verify=True)  # an explicit True is every pass, whatever is set
    assert len(verify_calls) == 7


def test_an_unknown_mode_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUTODIFF_VERIFY", "sometimes")
    with pytest.raises(PipelineError, match="AUTODIFF_VERIFY='sometimes' is not one of"):
        run_passes(parse_graph("graph @g(%x : Tensor):\n  return (%x)\n"), "dce")


@pytest.mark.usefixtures("scratch_registry")
def test_end_mode_still_catches_a_broken_graph_and_says_how_to_find_the_pass(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    @register_pass("break-uses")
    def break_uses(graph: Graph) -> bool:
        graph.inputs[0].uses.append(Use(graph.block.return_node, 0))
        return True

    monkeypatch.setenv("AUTODIFF_VERIFY", "end")
    graph = parse_graph("graph @g(%x : Tensor):\n  %y : Tensor = aten::neg(%x)\n  return (%y)\n")
    with pytest.raises(VerifyError) as info:
        run_passes(graph, "dce,break-uses,cse")
    message = str(info.value)
    assert "after the pipeline 'dce, break-uses, cse', verified at its end only" in message
    assert "AUTODIFF_VERIFY=each verifies after every pass" in message


# -- Note [Compile-time cost] ---------------------------------------------------------------


@pytest.mark.usefixtures("scratch_registry")
def test_the_compiler_runs_with_the_cycle_collector_paused() -> None:
    states: list[bool] = []
    dce = PASSES["dce"]

    def spying(graph: Graph) -> bool:
        states.append(gc.isenabled())
        result: bool = dce.function(graph)
        return result

    PASSES["dce"] = registry.RegisteredPass("dce", spying, dce.options, dce.on_module)
    assert gc.isenabled()
    grad = ad.grad(fresh(BODY))(X)
    assert len(states) == 2  # the forward cleanup's dce and the reverse optimisation's
    assert not any(states)
    assert gc.isenabled()
    expected = (1 - np.tanh(1.5 * np.sin(X)) ** 2) * 1.5 * np.cos(X) + 1
    np.testing.assert_allclose(grad, expected, rtol=1e-12)


def test_the_collector_stays_off_when_it_was_off() -> None:
    gc.disable()
    try:
        ad.grad(fresh(BODY))(X)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_intermediate_stages_are_copies_only_when_kept() -> None:
    function = fresh(BODY)
    stages = compile_gradient_of(function)
    with pytest.raises(ValueError, match="pass keep_stages=True"):
        print_graph(stages.grad)
    scripted = ad.script(function)
    typed = typed_graph(scripted.graph, [argument_type("f", "x", X)])
    before = print_graph(typed)
    kept = differentiate_typed(typed, [0], keep_stages=True)
    assert print_graph(typed) == before
    graphs = [kept.typed, kept.grad, kept.optimized, kept.gradient.f]
    assert len({id(graph) for graph in graphs}) == 4
    assert "prim::GradOf" in print_graph(kept.grad)
    assert "prim::GradOf" not in print_graph(kept.optimized)
    assert print_graph(kept.gradient.df) == print_graph(stages.gradient.df)


# -- Note [Our own LALR loop] -----------------------------------------------------------------

SOURCES = [
    "def f(x):\n    return x\n",
    "def f(x, n: int = 3):\n    for i in range(n):\n        x = np.tanh(x @ x.T)[0, :] + 1\n"
    "    if x.sum() > 0 and not n:\n        y = [a for a in (1, 2)]\n    else:\n"
    "        y = -x ** 2 if n else x\n    return y\n",
    "import numpy as np\n\n\ndef g(a, *, b=None):\n    '''doc'''\n    a[1:3, ...] += b\n"
    "    while a.max() > 1.0:\n        a = a / 2\n    return a, b\n",
]


@pytest.mark.parametrize("text", SOURCES)
def test_the_fast_parser_builds_the_tree_lark_builds(text: str) -> None:
    parser = _parser()
    assert parser.parse(text) == parser.lark.parse(text)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("def f(x):\n    return x +\n", "invalid syntax: unexpected end of line"),
        ("def f(x):\nreturn x\n", "expected an indented block"),
        ("def f(x):\n    y = (x\n", "'(' was never closed"),
        ("def f(x)\n    return x\n", "invalid syntax: unexpected end of line"),
    ],
)
def test_syntax_errors_read_as_lark_reports_them(text: str, message: str) -> None:
    with pytest.raises(ScriptError, match=message.replace("(", r"\(")):
        parse_source(text)


# -- moving instead of copying ----------------------------------------------------------------


def test_hoist_block_moves_a_blocks_nodes_before_its_node() -> None:
    graph = parse_graph(
        """graph @g(%x : Tensor, %c : bool):
  %y : Tensor = prim::If(%c)
    block0():
      %a : Tensor = aten::neg(%x)
      %b : Tensor = aten::exp(%a)
      -> (%b)
    block1():
      -> (%x)
  return (%y)
"""
    )
    branch = next(graph.nodes())
    (result,) = branch.hoist_block(0)
    assert [node.kind for node in graph.nodes()] == ["aten::neg", "aten::exp", "prim::If"]
    assert result.node.kind == "aten::exp"
    branch.output.replace_all_uses_with(result)
    branch.destroy()
    assert print_graph(graph) == (
        "graph @g(%x : Tensor, %c : bool):\n"
        "  %a : Tensor = aten::neg(%x)\n"
        "  %b : Tensor = aten::exp(%a)\n"
        "  return (%b)\n"
    )
    run_passes(graph, "dce", verify=True)


def test_hoist_block_refuses_a_block_with_parameters() -> None:
    graph = parse_graph(
        """graph @g(%x : Tensor, %n : int):
  %t : bool = prim::Constant[value=1]()
  %y : Tensor = prim::Loop(%n, %t, %x)
    block0(%i : int, %h : Tensor):
      %h.1 : Tensor = aten::neg(%h)
      -> (%t, %h.1)
  return (%y)
"""
    )
    loop = next(node for node in graph.nodes() if node.kind == "prim::Loop")
    with pytest.raises(IRError, match="has parameters"):
        loop.hoist_block(0)
