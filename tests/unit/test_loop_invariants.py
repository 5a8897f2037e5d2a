"""hoist-loop-invariants on scripted functions (results unchanged) and on a generated loop of
thousands of nodes (work that grows linearly with the body)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import FrameType
from typing import Any

import numpy as np
import pytest

import autodiff as ad
from autodiff.runtime import CompiledGradient
from autodiff.specialize import (
    SPECIALISE_PIPELINE,
    argument_type,
    numpy_scalar_positions,
    with_input_layouts,
)
from ir.graph import Graph
from ir.interpreter import run_graph
from ir.ops import OPS
from ir.parser import parse_graph
from ir.verify import verify
from passes.loop_invariants import hoist_loop_invariants
from passes.registry import run_passes
from passes.shape_propagation import specialise


def recurrent(h: Any, W: Any, b: Any, n: int) -> Any:
    for _ in range(n):
        h = np.tanh(h @ W.T + np.exp(b)) * 2.0
    return np.sum(h)


def counted_while(x: Any, steps: int) -> Any:
    k = 0
    acc = x
    while k < steps:
        acc = acc * 0.5 + np.sin(x) * 3.0
        k = k + 1
    return acc


def nested(x: Any, y: Any, n: int, m: int) -> Any:
    acc = x
    for i in range(n):
        for _ in range(m):
            acc = acc + np.cos(y) * i + np.exp(x)
    return acc


def divides_in_loop(x: Any, a: int, d: int, n: int) -> Any:
    acc = x
    for _ in range(n):
        acc = acc + a // d
    return acc


rng = np.random.default_rng(0)
H, W, B = rng.standard_normal((2, 3)), rng.standard_normal((3, 3)), rng.standard_normal(3)
X, Y = rng.standard_normal(4), rng.standard_normal(4)

CASES: list[tuple[Callable[..., Any], tuple[Any, ...]]] = [
    (recurrent, (H, W, B, 3)),
    (recurrent, (H, W, B, 0)),
    (counted_while, (X, 4)),
    (nested, (X, Y, 3, 2)),
    (nested, (X, Y, 2, 0)),
    # A zero-trip loop around a division by zero: the division must not be hoisted into code
    # that runs.
    (divides_in_loop, (X, 7, 0, 0)),
    (divides_in_loop, (X, 7, 2, 3)),
]


def unhoisted(function: Callable[..., Any], *args: Any) -> Graph:
    """The graph a call with ``args`` runs, before `hoist-loop-invariants` (which the
    specialisation pipeline runs: Note [One specialisation pipeline])."""
    scripted = ad.script(function)
    values = scripted.runtime_values(args, {})
    names = scripted.signature.parameters
    types = [argument_type(scripted.qualname, n, v) for n, v in zip(names, values, strict=True)]
    graph = specialise(scripted.parsed_for(types), types)
    steps = with_input_layouts(SPECIALISE_PIPELINE, numpy_scalar_positions(values), "")
    run_passes(graph, [step for step in steps if step[0] != "hoist-loop-invariants"])
    return graph


@pytest.mark.parametrize(
    ("function", "args"), CASES, ids=[f"{f.__name__}-{i}" for i, (f, _) in enumerate(CASES)]
)
def test_hoisting_preserves_results(function: Callable[..., Any], args: tuple[Any, ...]) -> None:
    graph = unhoisted(function, *args)
    before = run_graph(graph, *args)

    hoist_loop_invariants(graph)
    verify(graph)

    after = run_graph(graph, *args)
    assert len(after) == len(before)
    for got, want in zip(after, before, strict=True):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    np.testing.assert_allclose(after[0], function(*args))


def test_a_plain_call_runs_its_loop_without_its_invariants() -> None:
    graph = ad.script(recurrent).graph_for(H, W, B, 3)
    loop = next(node for node in graph.nodes() if node.kind == "prim::Loop")
    assert "aten::exp" not in {node.kind for node in loop.blocks[0].nodes()}


def test_scripted_loop_loses_its_invariants() -> None:
    graph = unhoisted(recurrent, H, W, B, 3)

    assert hoist_loop_invariants(graph)

    loop = next(node for node in graph.nodes() if node.kind == "prim::Loop")
    body_kinds = {node.kind for node in loop.blocks[0].nodes()}
    assert "aten::transpose" not in body_kinds
    assert "aten::exp" not in body_kinds
    assert {"aten::matmul", "aten::tanh"} <= body_kinds
    assert not hoist_loop_invariants(graph)  # nothing left to move


def recurrent_three_steps(h: Any, W: Any, b: Any) -> Any:
    for _ in range(3):
        h = np.tanh(h @ W.T + np.exp(b)) * 2.0
    return np.sum(h)


def test_a_hoisted_graph_differentiates_to_the_same_gradients() -> None:
    graph = unhoisted(recurrent_three_steps, H, W, B)
    assert hoist_loop_invariants(graph)

    compiled = CompiledGradient(ad.differentiate(graph))
    outputs, saved = compiled.forward([H, W, B])
    gradients = compiled.backward(saved, [np.ones(())])

    np.testing.assert_allclose(outputs[0], recurrent_three_steps(H, W, B))
    expected = ad.grad(recurrent_three_steps, argnums=(0, 1, 2))(H, W, B)
    for got, want in zip(gradients, expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_the_records_say_which_operators_may_raise() -> None:
    # Note [Hoisting operators that can raise]: each raises for some operand values.
    assert {kind for kind, op in OPS.items() if op.may_raise} == {
        *("prim::truediv", "prim::floordiv", "prim::mod", "prim::pow"),
        *("prim::int", "prim::float", "prim::bool"),
        *("aten::index", "aten::_index_tuple", "aten::select", "aten::take"),
        *("prim::ListIndex", "prim::TupleIndex"),
        *("aten::reshape", "aten::split", "aten::hsplit", "aten::vsplit", "aten::dsplit"),
        *("aten::linalg_inv", "aten::linalg_solve", "aten::linalg_cholesky"),
        *("aten::linalg_eigh", "aten::linalg_svd", "aten::linalg_pinv", "aten::_reads_upper"),
        "aten::linalg_eig",
        "prim::Format",  # a format spec the value does not take
        # a covariance that is not positive definite, a point off the simplex
        *(f"aten::stats_multivariate_normal_{m}" for m in ("logpdf", "pdf", "cdf", "logcdf")),
        *("aten::stats_dirichlet_logpdf", "aten::stats_dirichlet_pdf"),
        "aten::_svd_leading",  # a cotangent on svd's columns past min(m, n)
        # a singular or non-definite matrix, a complex square root, a bad flag
        *(f"aten::scipy_{f}" for f in ("cho_factor", "cho_solve", "cholesky", "lu_factor")),
        *(f"aten::scipy_{f}" for f in ("lu_solve", "solve", "solve_sylvester")),
        *("aten::scipy_solve_triangular", "aten::scipy_sqrtm"),
        *("aten::_reads_one_triangle", "aten::_solve_read_mask", "aten::_transposes"),
    }


# -- linear work -------------------------------------------------------------------------------


def big_loop(body_nodes: int) -> Graph:
    """A loop whose body alternates invariant nodes (reading a graph input, a constant, or the
    invariant before them) with nodes reading the carried value, ``body_nodes`` in all."""
    lines = [
        "graph @big(%x : Tensor, %n : int, %c : bool):",
        "  %out : Tensor = prim::Loop(%n, %c, %x)",
        "    block0(%i : int, %h : Tensor):",
        "      %two : float = prim::Constant[value=2.]()",
        "      %inv0 : Tensor = aten::exp(%x)",
        "      %h0 : Tensor = aten::mul(%h, %x)",
    ]
    for k in range(1, body_nodes // 2):
        invariant_operand = ("%x", "%two", f"%inv{k - 1}")[k % 3]
        lines.append(f"      %inv{k} : Tensor = aten::mul(%inv{k - 1}, {invariant_operand})")
        lines.append(f"      %h{k} : Tensor = aten::add(%h{k - 1}, %inv{k})")
    last = body_nodes // 2 - 1
    lines += [f"      -> (%c, %h{last})", "  return (%out)"]
    return parse_graph("\n".join(lines))


def traced_line_events(action: Callable[[], object]) -> int:
    """How many Python lines ``action`` executes: a measure of work that, unlike time, does not
    depend on the machine or its load."""
    count = 0

    def trace(frame: FrameType, event: str, arg: object) -> Any:
        nonlocal count
        count += 1
        return trace

    previous = sys.gettrace()
    sys.settrace(trace)
    try:
        action()
    finally:
        sys.settrace(previous)
    return count


def test_a_loop_of_5000_nodes_is_hoisted_in_linear_work() -> None:
    small, large = big_loop(1250), big_loop(5000)

    small_work = traced_line_events(lambda: hoist_loop_invariants(small))
    large_work = traced_line_events(lambda: hoist_loop_invariants(large))

    verify(large)
    loop = next(node for node in large.nodes() if node.kind == "prim::Loop")
    assert sum(1 for _ in large.nodes()) == 1 + 2500 + 1  # the constant, the invariants, the loop
    assert sum(1 for _ in loop.blocks[0].nodes()) == 2500  # the nodes reading %h
    # Four times the nodes, about four times the work; a rescan per node would give sixteen.
    assert large_work < 5 * small_work
