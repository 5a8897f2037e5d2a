"""Scale without crashing (issue #10): a 10,000-statement function, expressions nested as deep as
Python source allows and longer operator chains, deeply nested blocks, and a 1,000-deep chain of
helper calls all compile, print, parse back, verify, run and differentiate without hitting
Python's recursion limit (Note [Nesting depth] in `frontend.emit`)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import autodiff as ad
from ir.parser import parse_module
from ir.printer import print_graph, print_module
from ir.verify import verify
from passes.registry import run_module_passes

X = np.array([0.3, -0.2, 0.7])


def load(tmp_path: Path, name: str, text: str) -> ModuleType:
    """Import generated source ``text`` as module ``name`` (from a file, so ad.script finds it)."""
    path = tmp_path / f"{name}.py"
    path.write_text("import numpy as np\n\n\n" + text)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def central_difference(fn: Any, x: np.ndarray, *rest: Any, eps: float = 1e-6) -> np.ndarray:
    grad = np.zeros_like(x)
    for i in range(x.size):
        step = np.zeros_like(x)
        step.flat[i] = eps
        grad.flat[i] = (fn(x + step, *rest) - fn(x - step, *rest)) / (2 * eps)
    return grad


def check_compiles_runs_and_differentiates(
    fn: Any, *rest: Any, expected: Any = None, differentiate: bool = True
) -> ad.ScriptFunction:
    """``fn`` scripts (leaving the recursion limit as it was), gives ``expected`` (the plain
    function's result when None) and its gradient matches central differences."""
    limit = sys.getrecursionlimit()
    scripted = ad.script(fn)
    assert sys.getrecursionlimit() == limit
    plain = fn if expected is None else (lambda x, *_: expected(x))
    np.testing.assert_allclose(scripted(X, *rest), plain(X, *rest), rtol=1e-12)
    if differentiate:
        np.testing.assert_allclose(
            ad.grad(fn)(X, *rest), central_difference(plain, X, *rest), rtol=1e-5, atol=1e-8
        )
    return scripted


def test_ten_thousand_statements(tmp_path: Path) -> None:
    count = 10_000
    body = "".join("    x = x * y\n" if i % 2 else "    x = np.sin(x)\n" for i in range(count))
    fn = load(tmp_path, "long", f"def f(x, y):\n{body}    return x\n").f
    scripted = ad.script(fn)
    graph = scripted.graph
    assert sum(1 for node in graph.all_nodes() if node.kind.startswith("aten::")) == count
    assert list(graph.all_nodes())[-1].source_range.line == 4 + count  # as counted in the file
    assert print_graph(graph).count("\n") > count  # (test_parser reads 10,000 nodes back)
    verify(graph)
    y = np.full(3, 1.01)
    np.testing.assert_array_equal(scripted(X, y), fn(X, y))
    verify(scripted.graph_for(X, y))


DEEP = {
    # 199 is as deep as Python nests brackets
    "parentheses": "(" * 199 + "x" + " * 0.5 + 0.25)" * 199,
    "calls": "np.sin(" * 199 + "x" + ")" * 199,
    "calls-and-negations": "-np.tanh(" * 100 + "x" + ")" * 100,
    "arguments": "np.maximum(0.0, " * 150 + "x" + ")" * 150,
    # operator chains nest without brackets, as deep as they are long
    "negations": "- " * 1000 + "x",
    "sum": " + ".join(f"x * {i % 7}.0" for i in range(1000)),
    "power": "x ** " + " ** ".join(["1.0"] * 200),
}


@pytest.mark.parametrize(("name", "expression"), DEEP.items(), ids=DEEP.keys())
def test_deeply_nested_expressions(tmp_path: Path, name: str, expression: str) -> None:
    fn = load(tmp_path, "deep", f"def f(x):\n    return np.sum({expression})\n").f
    # (The gradient of the 2,000 operations of the sum works, but takes seconds.)
    check_compiles_runs_and_differentiates(fn, differentiate=name != "sum")


def test_deeply_nested_blocks(tmp_path: Path) -> None:
    lines = ["def f(x, k: int):"]
    for depth in range(50):  # Python allows 100 levels of indentation, 20 of loops
        pad = " " * (4 + depth)
        lines += [f"{pad}if k > {depth}:", f"{pad} x = np.sin(x) + 0.5"]
    for depth in range(19):
        pad = " " * (4 + depth)
        lines += [f"{pad}for i{depth} in range(1):", f"{pad} x = x * 0.9"]
    lines.append(" " * 23 + "x = x + 1.0")  # in the innermost loop
    lines.append("    return np.sum(x)")
    fn = load(tmp_path, "nested", "\n".join(lines) + "\n").f
    # (Differentiating 50 nested branches works, but takes seconds.)
    check_compiles_runs_and_differentiates(fn, 60, differentiate=False)


def test_thousand_deep_chain_of_helpers_inlines(tmp_path: Path) -> None:
    # Python itself cannot call a chain this deep under its default recursion limit.
    depth = 1000
    helpers = "def h0(x):\n    return x * 2.0\n\n\n" + "".join(
        f"def h{i}(x):\n    return h{i - 1}(x) + 0.5\n\n\n" for i in range(1, depth)
    )
    fn = load(tmp_path, "chain", helpers + f"def f(x):\n    return np.sum(h{depth - 1}(x))\n").f
    scripted = check_compiles_runs_and_differentiates(
        fn, expected=lambda x: np.sum(2.0 * x + 0.5 * (depth - 1)), differentiate=False
    )
    np.testing.assert_allclose(ad.grad(fn)(X), np.full(3, 2.0))
    kinds = [node.kind for node in scripted.graph.all_nodes()]
    assert "prim::CallFunction" not in kinds
    assert kinds.count("aten::add") == depth - 1


def test_inline_pass_on_a_thousand_deep_call_chain() -> None:
    depth = 1000
    graphs = ["graph @h0(%x : Tensor):\n  %y : Tensor = aten::neg(%x)\n  return (%y)\n"]
    for i in range(1, depth):
        graphs.append(
            f"graph @h{i}(%x : Tensor):\n"
            f'  %y : Tensor = prim::CallFunction[callee="h{i - 1}"](%x)\n'
            "  %z : Tensor = aten::exp(%y)\n"
            "  return (%z)\n"
        )
    module = parse_module("\n".join(reversed(graphs)))
    assert run_module_passes(module, "inline{entry-only=true}")
    entry = module[f"h{depth - 1}"]
    kinds = [node.kind for node in entry.nodes()]
    assert kinds == ["aten::neg"] + ["aten::exp"] * (depth - 1)
    text = print_module(module.values())
    assert print_module(parse_module(text).values()) == text
