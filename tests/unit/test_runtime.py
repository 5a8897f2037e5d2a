"""Running f then df through CompiledGradient: gradients against finite differences, the
saved values, missing vjps, and the reverse-block passes keeping the gradients they compute."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from autodiff.cli import split_input
from autodiff.errors import DifferentiationError
from autodiff.lambda_lift import lambda_lift
from autodiff.runtime import CompiledGradient
from ir.analysis import reverse_nodes
from ir.errors import InterpreterError
from ir.graph import Graph
from ir.parser import parse_module
from ir.printer import print_graph
from ir.types import BOOL, FLOAT, INT, ListType, TensorType, Type
from passes.registry import run_passes
from tests.helpers import parse_ir
from tests.unit.test_lambda_lift import EXAMPLE

REVERSE_PASSES = ["specialize-autograd-zero", "lift-constants", "dedup-size-captures"]
FILECHECK_PASSES = Path(__file__).resolve().parents[1] / "filecheck" / "passes"


def compile_text(text: str, pipeline: str = "") -> CompiledGradient:
    graph = parse_ir(text)
    if pipeline:
        run_passes(graph, pipeline)
    return CompiledGradient(lambda_lift(graph))


def loss(x: np.ndarray, y: np.ndarray) -> float:
    return float(np.sum(np.tanh(x * y)))


def finite_differences(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Central differences of `loss` with respect to each element of x and y."""
    gradients = []
    for which in (0, 1):
        args = [x.copy(), y.copy()]
        gradient = np.zeros_like(args[which])
        for index in np.ndindex(args[which].shape):
            step = 1e-6 * max(1.0, abs(args[which][index]))
            original = args[which][index]
            args[which][index] = original + step
            up = loss(*args)
            args[which][index] = original - step
            down = loss(*args)
            args[which][index] = original
            gradient[index] = (up - down) / (2 * step)
        gradients.append(gradient)
    return gradients[0], gradients[1]


@pytest.fixture
def inputs() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    return rng.standard_normal((3, 4)), rng.standard_normal(4)


@pytest.mark.parametrize("pipeline", ["", "specialize-autograd-zero,lift-constants,cse,dce"])
def test_example_gradients_match_finite_differences(
    inputs: tuple[np.ndarray, np.ndarray], pipeline: str
) -> None:
    x, y = inputs
    compiled = compile_text(EXAMPLE, pipeline)
    outputs, saved = compiled.forward([x, y])
    assert len(outputs) == 1
    np.testing.assert_allclose(outputs[0], loss(x, y), rtol=1e-12)
    dx, dy = compiled.backward(saved, [np.float64(1.0)])
    want_dx, want_dy = finite_differences(x, y)
    np.testing.assert_allclose(dx, want_dx, rtol=1e-6)
    np.testing.assert_allclose(dy, want_dy, rtol=1e-6)
    sech2 = 1 - np.tanh(x * y) ** 2  # and exactly the analytic gradient
    np.testing.assert_allclose(dx, sech2 * y, rtol=1e-12)
    np.testing.assert_allclose(dy, (sech2 * x).sum(axis=0), rtol=1e-12)


def test_vjp_scales_the_gradient(inputs: tuple[np.ndarray, np.ndarray]) -> None:
    compiled = compile_text(EXAMPLE)
    _, saved = compiled.forward(list(inputs))
    _, twice = compiled.forward(list(inputs))
    dx, dy = compiled.backward(saved, [np.float64(1.0)])
    dx2, dy2 = compiled.backward(twice, [np.float64(2.0)])
    np.testing.assert_allclose(dx2, 2 * dx)
    np.testing.assert_allclose(dy2, 2 * dy)


def test_saved_holds_only_the_captures(inputs: tuple[np.ndarray, np.ndarray]) -> None:
    x, y = inputs
    compiled = compile_text(EXAMPLE)
    _, saved = compiled.forward([x, y])
    assert saved.captured_inputs[0] is x
    assert saved.captured_inputs[1] is y
    assert len(saved.captured_outputs) == 1
    np.testing.assert_array_equal(saved.captured_outputs[0], np.tanh(x * y))


def test_backward_releases_the_saved_values(inputs: tuple[np.ndarray, np.ndarray]) -> None:
    compiled = compile_text(EXAMPLE)
    _, saved = compiled.forward(list(inputs))
    compiled.backward(saved, [1.0])
    assert saved.released
    assert not saved.captured_inputs
    assert not saved.captured_outputs
    with pytest.raises(DifferentiationError, match="already used by a backward run"):
        compiled.backward(saved, [1.0])


def test_retain_keeps_the_saved_values(inputs: tuple[np.ndarray, np.ndarray]) -> None:
    compiled = compile_text(EXAMPLE)
    _, saved = compiled.forward(list(inputs))
    first = compiled.backward(saved, [1.0], retain=True)
    second = compiled.backward(saved, [1.0])
    for a, b in zip(first, second, strict=True):
        np.testing.assert_array_equal(a, b)


def test_missing_vjp_gives_zero_gradients(inputs: tuple[np.ndarray, np.ndarray]) -> None:
    x, y = inputs
    compiled = compile_text(EXAMPLE, "specialize-autograd-zero")
    _, saved = compiled.forward([x, y])
    dx, dy = compiled.backward(saved, [None])
    np.testing.assert_array_equal(dx, np.zeros_like(x))
    np.testing.assert_array_equal(dy, np.zeros_like(y))


def test_wrong_number_of_vjps_is_refused(inputs: tuple[np.ndarray, np.ndarray]) -> None:
    compiled = compile_text(EXAMPLE)
    _, saved = compiled.forward(list(inputs))
    with pytest.raises(DifferentiationError, match=r"one vjp per output of the function \(1\)"):
        compiled.backward(saved, [1.0, 1.0])


def test_zero_gradient_reaches_the_caller_as_an_array() -> None:
    # A gradient left as AUTOGRAD_ZERO (its type too vague to materialise at compile time).
    compiled = compile_text(
        """
        graph @g(%x : Float(*), %w : Float(*)):
          %y : Float(*) = aten::neg(%x)
          %dx : Float(*), %dw : Float(*) = prim::Reverse[output_vjps=[0], input_grads=[0, 1]]()
            block0(%dy : Float(*)):
              %n : Float(*) = aten::neg(%dy)
              %z : Float(*) = prim::AutogradZero()
              -> (%n, %z)
          return (%y)
        """,
        "specialize-autograd-zero",
    )
    x, w = np.ones(3, np.float32), np.ones(5, np.float32)
    _, saved = compiled.forward([x, w])
    dx, dw = compiled.backward(saved, [np.ones(3, np.float32)])
    np.testing.assert_array_equal(dx, -np.ones(3))
    assert isinstance(dw, np.ndarray)
    assert dw.shape == (5,)
    assert dw.dtype == np.float32
    assert not dw.any()


# -- the reverse-block passes keep the gradients ---------------------------------------------


def sample(ty: Type, rng: np.random.Generator) -> object:
    if isinstance(ty, TensorType):
        shape = (2,) if ty.shape is None else tuple(d or 2 for d in ty.shape)
        return rng.standard_normal(shape).astype(ty.dtype or "float64")
    if isinstance(ty, ListType):
        return [sample(ty.elem, rng) for _ in range(2)]
    values: dict[Type, object] = {INT: 3, FLOAT: 0.5, BOOL: True}
    return values[ty]


def reverse_corpus() -> list[tuple[str, str]]:
    """(pass name, graph text) for every graph with a Reverse node in the passes' files."""
    cases = []
    for name in REVERSE_PASSES:
        for chunk in split_input((FILECHECK_PASSES / f"{name}.ir").read_text()):
            for graph in parse_module(chunk).values():
                if reverse_nodes(graph):
                    cases.append((name, print_graph(graph)))
    return cases


def gradients_of(graph: Graph, args: list[object], seed: int) -> list[object]:
    compiled = CompiledGradient(lambda_lift(graph))
    outputs, saved = compiled.forward(args)
    rng = np.random.default_rng(seed)
    vjps = [rng.standard_normal(np.shape(out)) for out in outputs]
    return compiled.backward(saved, vjps)


CORPUS = reverse_corpus()


@pytest.mark.parametrize(
    ("pass_name", "text"),
    CORPUS,
    ids=[f"{name}:{parse_ir(text).name}" for name, text in CORPUS],
)
def test_reverse_passes_keep_the_gradients(pass_name: str, text: str) -> None:
    rng = np.random.default_rng(1)
    before = parse_ir(text)
    args = [sample(v.ty, rng) for v in before.inputs]
    after = parse_ir(text)
    run_passes(after, pass_name)
    try:
        expected = gradients_of(before, args, seed=2)
    except InterpreterError:
        # AUTOGRAD_ZERO reached a kernel (a GradOf with some zero inputs, not specialised):
        # there are no gradients to keep, and specialisation may well make the graph run.
        return
    actual = gradients_of(after, args, seed=2)
    assert len(actual) == len(expected)
    for got, want in zip(actual, expected, strict=True):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-12)
