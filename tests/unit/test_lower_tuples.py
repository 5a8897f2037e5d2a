"""lower-tuples on gradient-stage graphs, where a tuple-typed value is not always a tuple at run
time (Note [Tuples that cannot be unpacked]): the gradients stay those of the graph before."""

# The if/else statements are the point: each is a prim::If to differentiate.
# ruff: noqa: SIM108

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import autodiff as ad
from autodiff.lambda_lift import lambda_lift
from autodiff.pipeline import compile_gradient
from autodiff.runtime import CompiledGradient
from autodiff.specialize import argument_type
from ir.graph import Graph
from ir.printer import print_graph
from passes.registry import run_passes


def split_read_in_a_branch_not_taken(a: Any) -> Any:
    # The inner If sends x no gradient, so the gradient of parts that the outer reverse branch
    # gives is the AUTOGRAD_ZERO sentinel: not a tuple to unpack.
    parts = np.split(a, 2, axis=1)
    if np.sum(a) > -100.0:
        x = parts[0]
        if np.sum(a) > 100.0:
            w = x * 2.0
        else:
            w = a[:, 0:2] * 3.0
    else:
        w = a[:, 0:2] * 1.0
    return np.sum(w)


def split_in_a_branch_of_a_loop(a: Any) -> Any:
    # The tape keeps parts from the branch that is never taken: the other branch gives None.
    acc = a[:, 0:2] * 1.0
    for _ in range(2):
        if np.sum(acc) > 100.0:
            parts = np.split(a * acc[0, 0], 2, axis=1)
            acc = np.tanh(acc * parts[0])
        else:
            acc = acc * 0.5
    return np.sum(acc)


def gradient_of(graph: Graph, a: np.ndarray) -> list[Any]:
    """The output of ``f`` and the gradient from ``df`` of a gradient-stage graph."""
    compiled = CompiledGradient(lambda_lift(graph))
    outputs, saved = compiled.forward([a.copy()])
    return [*outputs, *compiled.backward(saved, [np.float64(1.0)])]


@pytest.mark.parametrize(
    ("function", "lowers"),
    [
        # The reverse If's tuple output may be the sentinel: it stays as it is.
        (split_read_in_a_branch_not_taken, False),
        # The forward If's tuple output comes apart, None into one None per element.
        (split_in_a_branch_of_a_loop, True),
    ],
)
def test_gradient_stage_keeps_its_gradients(function: Callable[..., Any], lowers: bool) -> None:
    a = np.random.default_rng(0).uniform(-1, 1, (3, 4))
    types = [argument_type("f", "a", a)]
    grad = compile_gradient(ad.script(function).graph, types, [0]).grad
    expected = gradient_of(grad.copy(), a)
    lowered = grad.copy()
    assert run_passes(lowered, "lower-tuples") is lowers
    assert (print_graph(lowered) != print_graph(grad)) is lowers
    for actual, want in zip(gradient_of(lowered, a), expected, strict=True):
        np.testing.assert_array_equal(actual, want)
