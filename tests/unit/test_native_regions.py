"""The native-regions pass on the f and df graphs of the gradient corpus: the graph it leaves
verifies, and runs (each region's block inline, as every executor runs it without numba) to
exactly the results of the graph before the pass, on the generated code and the interpreter.
Numba is not needed: Note [Native regions] in `passes.native_regions`."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from autodiff.native_tier import native_graph
from ir.codegen import CompiledGraph
from ir.errors import AutodiffError
from ir.interpreter import Executable
from ir.parser import parse_graph
from ir.printer import print_graph
from ir.verify import verify
from tests.gradients.corpus import CASES, Case
from tests.native_helpers import assert_same, df_inputs, gradient_of


def cases() -> list[Any]:
    return [pytest.param(case, id=case.name) for case in CASES if not case.xfail]


@pytest.mark.parametrize("case", cases())
def test_regions_keep_results(case: Case) -> None:
    args = case.make(np.random.default_rng(0))
    try:
        gradient = gradient_of(case.fn, args)
    except AutodiffError:
        pytest.skip("not differentiable for these arguments")
    # f's temporaries may hold rows of prim::Uninitialized: only its real outputs compare.
    with np.errstate(all="ignore"):
        f_outputs = CompiledGraph(gradient.f)(*args)
        for graph, inputs, compared in (
            (gradient.f, list(args), gradient.f_real_outputs),
            (gradient.df, df_inputs(gradient, args, f_outputs), None),
        ):
            regions = native_graph(graph)
            verify(regions)
            expected = CompiledGraph(graph)(*inputs)[:compared]
            for runnable in (CompiledGraph(regions), Executable(regions)):
                assert_same(runnable(*inputs)[:compared], expected, where=graph.name or "")


def test_region_text_round_trips() -> None:
    text = """\
graph @f(%x : Double(3), %w : Double(3)):
  %y : Double(3), %z : Double(3) = prim::Native(%x, %w)
    block0(%a : Double(3), %b : Double(3)):
      %c : Double(3) = aten::mul(%a, %b)
      %d : Double(3) = aten::tanh(%c)
      -> (%c, %d)
  %e : Double(3) = aten::add(%y, %z)
  return (%e)
"""
    graph = parse_graph(text)
    assert print_graph(graph) == text
    x, w = np.arange(3.0), np.full(3, 0.5)
    expected = np.tanh(x * w) + x * w
    np.testing.assert_array_equal(CompiledGraph(graph)(x, w)[0], expected)
    np.testing.assert_array_equal(Executable(graph)(x, w)[0], expected)


def test_verifier_refuses_a_region_reading_outside() -> None:
    text = """\
graph @f(%x : Double(3), %w : Double(3)):
  %y : Double(3) = prim::Native(%x)
    block0(%a : Double(3)):
      %c : Double(3) = aten::mul(%a, %w)
      -> (%c)
  return (%y)
"""
    with pytest.raises(AutodiffError, match="reads %w, defined outside it"):
        verify(parse_graph(text))


def test_verifier_counts_region_parameters() -> None:
    text = """\
graph @f(%x : Double(3)):
  %y : Double(3) = prim::Native(%x)
    block0():
      %c : Double(3) = aten::neg(%x)
      -> (%c)
  return (%y)
"""
    with pytest.raises(AutodiffError, match="block has 0 parameters, expected 1"):
        verify(parse_graph(text))
