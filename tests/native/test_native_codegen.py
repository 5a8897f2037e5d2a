"""The native tier against the NumPy tier: f and df of small programs compiled with numba
(`autodiff.native_tier.native_runnable`) give the generated NumPy code's results, to the
tolerance of Note [Native numerics] in `ir.native_kernels`; a region numba refuses falls back
to its block, and says why on its node. Skipped without numba."""

# The programs spell out if/else statements on purpose: each is a prim::If to compile.
# ruff: noqa: SIM108

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from autodiff import native_tier
from benchmarks.workloads import euler  # the ODE the native tier's targets are set on
from ir import native_codegen, native_kernels
from ir.codegen import CompiledGraph
from ir.graph import Graph
from ir.native_kernels import NativeKernel
from tests.native_helpers import assert_same, df_inputs, gradient_of

pytest.importorskip("numba")

RTOL = 1e-12  # transcendental functions and sums: a few ulp (Note [Native numerics])


def chain(x):
    h = 0.5 * (np.tanh(1.5 * np.sin(x)) + x)
    h = 0.5 * (np.tanh(1.5 * np.sin(h)) + x)
    h = 0.5 * (np.tanh(1.5 * np.sin(h)) + x)
    return np.sum(h)


def branch_in_loop(x, w):
    h = x
    for _t in range(6):
        h = h @ w
        if np.sum(h) > 0:
            h = np.tanh(h)
        else:
            h = h * 0.5 + np.sin(h)
    return np.sum(h * x)


def while_loop(x, n: int):
    i = 0
    while i < n:
        x = x * 1.1 + np.sin(x)
        i = i + 1
    return np.sum(x)


def reductions(a):
    return np.mean(a) * np.max(a) + np.min(a) * np.prod(a) + np.sum(np.sum(a, axis=0) ** 2)


def products(a, b, v):
    return np.sum((a @ b) @ v) + np.sum(v @ a) * (v @ v)


def integers(x, k, scale: float):
    total = 0.0
    for i in range(7):
        j = (i * 3) % 5 - 2 // 2
        total = total + np.sum(x * k) * float(j) * scale
    return total


def broadcasting(a, b):
    return np.sum(np.tanh(a * b) * a) + np.mean(np.sin(a * b))


def rng_args(*shapes: tuple[int, ...]) -> Callable[[np.random.Generator], tuple[Any, ...]]:
    return lambda rng: tuple(rng.standard_normal(shape) * 0.5 for shape in shapes)


PROGRAMS: dict[str, tuple[Callable[..., Any], Callable[[np.random.Generator], tuple[Any, ...]]]] = {
    "euler": (euler, rng_args((3, 3), (3,))),
    "chain16": (chain, rng_args((16,))),
    "branch_in_loop": (branch_in_loop, rng_args((4,), (4, 4))),
    "while_loop": (while_loop, lambda rng: (rng.standard_normal(3), 4)),
    "reductions": (reductions, lambda rng: (rng.uniform(0.5, 1.5, (3, 4)),)),
    "products": (products, rng_args((3, 3), (3, 3), (3,))),
    "broadcasting": (broadcasting, rng_args((3, 4), (4,))),
    "broadcasting_large": (broadcasting, rng_args((30, 40), (40,))),
    "integers": (
        integers,
        lambda rng: (rng.standard_normal(5), np.arange(5, dtype=np.int64), 0.25),
    ),
}


def regions(graph: Graph) -> list[Any]:
    return [node for node in graph.all_nodes() if node.kind == "prim::Native"]


@pytest.mark.parametrize("form", ["scalarized", "array"])
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_native_matches_numpy_tier(name: str, form: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each program on the native tier, with the scalarized code where `ir.native_scalar`
    writes it, and with the code on arrays of `ir.native_source` alone."""
    if form == "array":
        monkeypatch.setattr(native_codegen, "_scalarized", lambda block, name: None)
    fn, make = PROGRAMS[name]
    args = make(np.random.default_rng(0))
    gradient = gradient_of(fn, args)
    f_outputs = CompiledGraph(gradient.f)(*args)
    for graph, inputs, compared in (
        (gradient.f, list(args), gradient.f_real_outputs),
        (gradient.df, df_inputs(gradient, args, f_outputs), None),
    ):
        runnable = native_tier.native_runnable(graph)
        assert runnable is not None, f"no native region in {graph}"
        assert not [n for n in regions(runnable.graph) if "fallback" in n.attrs], runnable.graph
        if form == "array":
            assert all("array code" in n.attrs["native"] for n in regions(runnable.graph))
        expected = CompiledGraph(graph)(*inputs)[:compared]
        assert_same(runnable(*inputs)[:compared], expected, rtol=RTOL, where=graph.name or "")
        assert_same(runnable(*inputs)[:compared], expected, rtol=RTOL, where="second run")


def test_refused_region_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """A spelling numba cannot type stands for an operator numba refuses: its region runs its
    block on the NumPy tier, with the reason on the node; the other regions stay native."""
    refused = NativeKernel(lambda node, args, consts: f"np.no_such_function({args[0]})")
    monkeypatch.setitem(native_kernels.NATIVE_KERNELS, "aten::exp", refused)
    monkeypatch.setattr(native_codegen, "_scalarized", lambda block, name: None)

    def two_regions(x):
        a = np.exp(np.sin(x))
        b = np.sort(a)
        return np.sum(np.cos(b) * b)

    x = np.random.default_rng(1).standard_normal(5)
    gradient = gradient_of(two_regions, (x,))
    runnable = native_tier.native_runnable(gradient.f)
    assert runnable is not None
    found = regions(runnable.graph)
    fallbacks = [node.attrs.get("fallback") for node in found]
    assert len(found) == 2
    assert "no_such_function" in str(fallbacks[0])
    assert fallbacks[1] is None
    assert 'fallback="numba:' in str(runnable.graph)
    expected = CompiledGraph(gradient.f)(x)[: gradient.f_real_outputs]
    assert_same(runnable(x)[: gradient.f_real_outputs], expected, rtol=RTOL)


def test_no_numba_no_runnable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(native_tier, "numba_available", lambda: False)
    gradient = gradient_of(chain, (np.ones(4),))
    assert native_tier.native_runnable(gradient.f) is None


def test_region_errors_are_located() -> None:
    """An index out of a tape's range raises (bounds are checked), reported on the region."""
    from ir.errors import InterpreterError
    from ir.parser import parse_graph

    graph = parse_graph(
        """\
graph @f(%t : Double(4, 2), %i : int):
  %zero : int = prim::Constant[value=0]()
  %a : Double(2) = aten::select(%t, %zero, %i)
  %b : Double(2) = aten::tanh(%a)
  return (%b)
"""
    )
    runnable = native_tier.native_runnable(graph)
    assert runnable is not None
    tape = np.arange(8.0).reshape(4, 2)
    np.testing.assert_array_equal(runnable(tape, 3)[0], np.tanh(tape[3]))
    with pytest.raises(InterpreterError, match="prim::Native"):
        runnable(tape, 4)


def test_arguments_outside_the_compiled_signature() -> None:
    """Note [Region arguments]: a transposed array runs on a contiguous copy; a None where the
    IR says an array (a prim::Uninitialized) runs the region's block as Python."""
    from ir.parser import parse_graph

    graph = parse_graph(
        """\
graph @f(%a : Double(2, 2), %b : Double(2, 2)):
  %c : Double(2, 2) = aten::mul(%a, %b)
  %d : Double(2, 2) = aten::sin(%c)
  return (%d)
"""
    )
    runnable = native_tier.native_runnable(graph)
    assert runnable is not None
    a = np.arange(4.0).reshape(2, 2)
    np.testing.assert_array_equal(runnable(a.T, a)[0], np.sin(a.T * a))
    tapes = parse_graph(
        """\
graph @f(%t : Double(3, 2), %i : int, %v : Double(2)):
  %zero : int = prim::Constant[value=0]()
  %t.1 : Double(3, 2) = prim::TapeWrite(%t, %i, %v)
  %s : Double(2) = aten::select(%t.1, %zero, %i)
  %y : Double(2) = aten::tanh(%s)
  return (%y)
"""
    )
    runnable = native_tier.native_runnable(tapes)
    assert runnable is not None
    tape = np.arange(6.0).reshape(3, 2)
    np.testing.assert_array_equal(runnable(tape, 1, np.ones(2))[0], np.tanh([1.0, 1.0]))
    np.testing.assert_array_equal(runnable(tape, 2, None)[0], np.tanh(tape[2]))


def test_results_of_one_small_shape_come_back_as_rows_of_one_array() -> None:
    """Note [Packed results]: four results of shape (3,) between results of other shapes come
    back in the block's order, each a row that overlaps no other, so writing one leaves the
    others as they were."""
    from ir.parser import parse_graph

    graph = parse_graph(
        """\
graph @f(%x : Double(3), %y : Double(4)):
  %a : Double(3) = aten::sin(%x)
  %b : Double(3) = aten::cos(%x)
  %c : Double(4) = aten::tanh(%y)
  %d : Double(3) = aten::exp(%x)
  %e : Double(3) = aten::tanh(%x)
  %none : NoneType = prim::Constant[value=None]()
  %false : bool = prim::Constant[value=False]()
  %s : Double() = aten::sum(%c, %none, %false)
  return (%a, %s, %b, %c, %d, %e)
"""
    )
    runnable = native_tier.native_runnable(graph)
    assert runnable is not None
    x, y = np.array([0.1, -0.4, 0.9]), np.array([0.2, 0.3, -0.5, 0.7])
    expected = CompiledGraph(graph)(x, y)
    got = runnable(x, y)
    assert_same(got, expected, rtol=RTOL)
    rows = [got[i] for i in (0, 2, 4, 5)]
    assert rows[0].base is not None
    assert all(row.base is rows[0].base for row in rows)
    rows[1][:] = 7.0
    assert_same([got[i] for i in (0, 4, 5)], [expected[i] for i in (0, 4, 5)], rtol=RTOL)
