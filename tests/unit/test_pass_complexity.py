"""Compile work grows linearly with the size of the function (issue #8): every registered pass,
differentiation, lambda lifting, the verifier, the printer and the IR parser do about four times
the work on a function four times as long. Work is counted as Python calls, not timed, so the
test does not depend on the machine or its load; a pass that rescans the graph per node, or
searches a list of uses per use, does sixteen times the work instead."""

from __future__ import annotations

import linecache
import sys
from collections.abc import Callable
from functools import cache
from types import FrameType
from typing import Any

import numpy as np
import pytest

import autodiff as ad
from autodiff.lambda_lift import lambda_lift
from autodiff.pipeline import (
    REVERSE_OPTIMISATION,
    add_reverse,
    differentiate_typed,
    flatten_outputs,
)
from autodiff.specialize import typed_graph
from ir.graph import Graph
from ir.parser import parse_graph
from ir.printer import print_graph
from ir.types import INT, TensorType, Type
from ir.verify import verify
from passes.registry import PASSES, run_passes
from passes.shape_propagation import propagate_shapes, specialise

SMALL = 30  # statements; the others have twice and four times as many
_STEPS = (
    "a = np.sin(a) * y",
    "a = np.tanh(a) + x",
    "a = np.exp(a * 0.1) - y",
    "a = a * a + x",
)


def source(statements: int, control: bool) -> str:
    """A function of ``statements`` elementwise statements; with ``control``, every fifth is a
    loop or an if of two statements instead."""
    lines = ["def f(x, y, n: int):", "    a = np.sin(x) * y"]
    for k in range(statements):
        step = _STEPS[k % len(_STEPS)]
        if control and k % 10 == 4:
            lines += ["    for i in range(n):", f"        {step}", "        a = a * 0.5"]
        elif control and k % 10 == 9:
            lines += [
                "    if np.sum(a) > 0.0:",
                f"        {step}",
                "    else:",
                "        a = a - x",
            ]
        else:
            lines.append(f"    {step}")
    lines.append("    return np.sum(a)")
    return "\n".join(lines) + "\n"


def function(statements: int, control: bool) -> Callable[..., Any]:
    text = source(statements, control)
    filename = f"<generated {statements} {control}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(keepends=True), filename)
    namespace: dict[str, Any] = {"np": np}
    exec(compile(text, filename, "exec"), namespace)
    return namespace["f"]


INPUT_TYPES: list[Type] = [
    TensorType("float64", (4,), requires_grad=True),
    TensorType("float64", (4,), requires_grad=False),
    INT,
]


@cache
def stages(statements: int, control: bool) -> dict[str, Graph]:
    """The graphs the pipeline hands each stage: parsed, specialised before cleanup, typed,
    differentiated (before optimisation) and optimised (before lambda lifting)."""
    parsed = ad.script(function(statements, control)).graph
    specialised = specialise(parsed, INPUT_TYPES)
    typed = typed_graph(parsed, INPUT_TYPES)
    grad = typed.copy()
    flatten_outputs(grad)
    add_reverse(grad, [grad.inputs[0]])
    propagate_shapes(grad)
    optimized = grad.copy()
    run_passes(optimized, [(name, {}) for name in REVERSE_OPTIMISATION], verify=False)
    return {
        "parsed": parsed,
        "specialised": specialised,
        "typed": typed,
        "grad": grad,
        "optimized": optimized,
    }


def calls(action: Callable[[], object]) -> int:
    """How many Python functions ``action`` calls: a measure of work that, unlike time, does
    not depend on the machine or its load. (The trace function asks for no line events, so
    counting costs one callback per call.)"""
    count = 0

    def trace(frame: FrameType, event: str, arg: object) -> None:
        nonlocal count
        count += 1

    previous = sys.gettrace()
    sys.settrace(trace)
    try:
        action()
    finally:
        sys.settrace(previous)
    return count


def assert_linear(work: Callable[[int, bool], Callable[[], object]], control: bool) -> None:
    """Four times the statements, about four times the work (quadratic work would be sixteen);
    and, more sharply, the work added from 2n to 4n statements about twice that added from n to
    2n (for quadratic work, four times), which finds a quadratic term of a few percent."""
    small, middle, large = (calls(work(k * SMALL, control)) for k in (1, 2, 4))
    message = f"work {small}, {middle}, {large} for {SMALL}, {2 * SMALL}, {4 * SMALL} statements"
    assert large < 5 * small, message
    assert large - middle < 2.1 * (middle - small), message


PASS_STAGES = [
    (name, stage)
    for name in sorted(PASSES)
    if not PASSES[name].on_module
    for stage in ("specialised", "grad")
]


@pytest.mark.parametrize("control", [False, True], ids=["straight", "control"])
@pytest.mark.parametrize(("name", "stage"), PASS_STAGES)
def test_each_pass_is_linear(name: str, stage: str, control: bool) -> None:
    def work(statements: int, control: bool) -> Callable[[], object]:
        graph = stages(statements, control)[stage].copy()
        return lambda: PASSES[name].function(graph)

    assert_linear(work, control)


@pytest.mark.parametrize("control", [False, True], ids=["straight", "control"])
@pytest.mark.parametrize(
    "step",
    [
        "add_reverse",
        "lambda_lift",
        "verify",
        "print",
        "parse",
        "specialise",
        "script",
        "differentiate_typed",
        "first_gradient",
    ],
)
def test_each_compile_step_is_linear(step: str, control: bool) -> None:
    def work(statements: int, control: bool) -> Callable[[], object]:
        graphs = stages(statements, control)
        if step == "add_reverse":
            graph = graphs["typed"].copy()
            flatten_outputs(graph)
            return lambda: add_reverse(graph, [graph.inputs[0]])
        if step == "lambda_lift":
            graph = graphs["optimized"].copy()
            return lambda: lambda_lift(graph)
        if step == "verify":
            return lambda: verify(graphs["optimized"])
        if step == "print":
            return lambda: print_graph(graphs["optimized"])
        if step == "parse":
            text = print_graph(graphs["optimized"])
            parse_graph(text)  # builds the parser once, outside the count
            return lambda: parse_graph(text)
        if step == "specialise":
            return lambda: specialise(graphs["parsed"], INPUT_TYPES)
        if step == "differentiate_typed":
            return lambda: differentiate_typed(graphs["typed"], [0])
        f = function(statements, control)
        if step == "first_gradient":  # source to gradient: frontend, pipeline and codegen
            x = np.linspace(-1.0, 1.0, 4)
            return lambda: ad.grad(f)(x, x, 3)
        return lambda: ad.script(f)

    assert_linear(work, control)
