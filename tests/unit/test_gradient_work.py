"""The work ``f`` and ``df`` do (issue #8): the reverse program's peephole passes
(`sink-unreduce`, `simplify-arithmetic`, `accumulate-slices`) leave the structure a hand-written
backward has, and change no bit of any gradient."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import autodiff as ad
from autodiff import pipeline
from benchmarks.workloads import BY_NAME
from ir.graph import Graph
from ir.ops.gradients.indexing import scatter_slices, select_backward, slice_backward
from ir.types import FLOAT

NEW_PASSES = ("sink-unreduce", "simplify-arithmetic", "accumulate-slices")


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def ends_and_middle(x):
    return np.sum(x[0] * x[1:] + x[:-1] * x[-1]) + np.sum(np.tanh(x[1:-1]))


def scaled_mean(x, y):
    d = np.mean(x, axis=1) * 3.0 - np.sum(y, axis=0)
    return np.mean(-((d * 0.5) ** 2)) + np.sum(x**1)


def columns(a):
    return np.sum(a[:, 1:] * a[:, :-1]) - np.sum(a[0] ** 2) + np.max(a[:, 2])


def _compiled(fn: Callable[..., Any], args: tuple[Any, ...], argnums: Any) -> Any:
    gradient = ad.value_and_grad(fn, argnums=argnums)
    result = gradient(*args)
    (compiled,) = gradient.compiled_gradients()
    return result, compiled.runtime.gradient


def _kinds(graph: Graph) -> Counter[str]:
    return Counter(node.kind for node in graph.all_nodes())


def test_rosenbrock_df_zeroes_one_buffer_for_both_slices() -> None:
    x = np.random.default_rng(0).uniform(-2.0, 2.0, 50)
    _, gradient = _compiled(rosenbrock, (x,), 0)
    kinds = _kinds(gradient.df)
    assert kinds["aten::_scatter_slices"] == 1
    assert kinds["aten::_slice_backward"] == 0
    # The sum's gradient is scaled as one number, never spread to x's size before a product.
    assert kinds["aten::_unreduce"] == 0
    assert kinds["aten::pow"] == 0
    assert _kinds(gradient.f)["aten::pow"] == 0
    assert _kinds(gradient.f)["aten::square"] == 3


def test_logistic_df_scales_the_mean_gradient_as_one_number() -> None:
    workload = BY_NAME["logistic"]
    _, gradient = _compiled(workload.function, workload.inputs(tiny=True), workload.argnums)
    full = (6,)
    scaled = [
        node
        for node in gradient.df.all_nodes()
        if node.kind in ("aten::mul", "aten::neg") and node.output.ty.shape == full
    ]
    # y * (-s) and s * exp(z - softplus): two products at x's length, no scaling or negation
    # of a spread gradient.
    assert len(scaled) == 2
    assert _kinds(gradient.df)["aten::_unreduce"] == 0


CASES = [
    (rosenbrock, lambda rng: (rng.uniform(-2.0, 2.0, 31),), 0),
    (ends_and_middle, lambda rng: (rng.standard_normal(9),), 0),
    (scaled_mean, lambda rng: (rng.standard_normal((4, 5)), rng.standard_normal((3, 4))), (0, 1)),
    (columns, lambda rng: (rng.standard_normal((4, 6)),), 0),
    (
        scaled_mean,
        lambda rng: (
            rng.standard_normal((4, 5)).astype(np.float32),
            rng.standard_normal((3, 4)).astype(np.float32),
        ),
        (0, 1),
    ),
    (columns, lambda rng: (rng.standard_normal((4, 6)).astype(np.float32),), 0),
]


@pytest.mark.parametrize(("fn", "make", "argnums"), CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_new_passes_change_no_bit(
    monkeypatch: pytest.MonkeyPatch, fn: Callable[..., Any], make: Any, argnums: Any
) -> None:
    args = make(np.random.default_rng(1))
    (value, grads), _ = _compiled(fn, args, argnums)
    without = tuple(p for p in pipeline.REVERSE_OPTIMISATION if p not in NEW_PASSES)
    monkeypatch.setattr(pipeline, "REVERSE_OPTIMISATION", without)
    (old_value, old_grads), _ = _compiled(fn, args, argnums)
    assert np.array_equal(value, old_value)
    for new, old in zip(
        grads if isinstance(grads, tuple) else (grads,),
        old_grads if isinstance(old_grads, tuple) else (old_grads,),
        strict=True,
    ):
        assert np.asarray(new).dtype == np.asarray(old).dtype
        np.testing.assert_array_equal(new, old)


@pytest.mark.parametrize("name", ["mlp", "logistic", "rnn", "attention", "rosenbrock"])
def test_new_passes_change_no_bit_on_the_benchmarks(
    monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    workload = BY_NAME[name]
    args = workload.inputs(tiny=True)
    (value, grads), _ = _compiled(workload.function, args, workload.argnums)
    without = tuple(p for p in pipeline.REVERSE_OPTIMISATION if p not in NEW_PASSES)
    monkeypatch.setattr(pipeline, "REVERSE_OPTIMISATION", without)
    (old_value, old_grads), _ = _compiled(workload.function, args, workload.argnums)
    assert np.array_equal(value, old_value)
    for new, old in zip(grads, old_grads, strict=True):
        np.testing.assert_array_equal(new, old)


def test_scatter_slices_is_the_sum_of_the_slice_backwards() -> None:
    rng = np.random.default_rng(2)
    g1, g2, g3 = rng.standard_normal((3, 4)), rng.standard_normal((3, 3)), rng.standard_normal(5)
    keys = ((1, None, -1, None), (1, 2, None, None), (0, 1))
    got = scatter_slices((g1, g2, g3), (3, 5), keys)
    expected = (
        slice_backward(g1, (3, 5), 1, None, -1, None)
        + slice_backward(g2, (3, 5), 1, 2, None, None)
        + select_backward(g3, (3, 5), 0, 1)
    )
    np.testing.assert_array_equal(got, expected)
    assert got.dtype == expected.dtype


def test_scatter_slices_promotes_as_the_sum_did() -> None:
    g1 = np.ones(2, np.float32)
    g2 = np.ones(2, np.float64)
    got = scatter_slices((g1, g2), (3,), ((0, 1, None, None), (0, None, 2, None)))
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, [1.0, 2.0, 1.0])


# ---- formulas: the same bits with less work ---------------------------------------------------


def row_max(x, y):
    return np.sum(np.max(x, axis=1) * y)


def row_mean(x, y):
    return np.sum(np.mean(x, axis=1, keepdims=True) * y)


def test_max_gradient_splits_ties_with_the_old_bits() -> None:
    x = np.array([[1.0, 3.0, 3.0], [2.0, -1.0, 0.5], [4.0, 4.0, 4.0], [0.0, 0.3, 0.1]])
    y = np.array([0.7, -1.3, 2.9, 0.1])
    (_, (dx, _)), gradient = _compiled(row_max, (x, y), (0, 1))
    hits = x == x.max(axis=1, keepdims=True)
    old = hits * np.broadcast_to(y[:, None], x.shape) / hits.sum(axis=1, keepdims=True)
    np.testing.assert_array_equal(dx, old)
    # The division by the count of ties is done per row, not per element.
    divisions = [n for n in gradient.df.all_nodes() if n.kind == "aten::div"]
    assert [n.output.ty.shape for n in divisions] == [(4,)]


def test_mean_gradient_is_scaled_before_it_is_spread() -> None:
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal((3, 7)), rng.standard_normal((3, 1))
    (_, (dx, _)), gradient = _compiled(row_mean, (x, y), (0, 1))
    np.testing.assert_array_equal(dx, np.broadcast_to(y, x.shape) * (1 / 7))
    products = [n for n in gradient.df.all_nodes() if n.kind == "aten::mul"]
    assert all(n.output.ty.shape != (3, 7) for n in products)


# ---- loop tapes ---------------------------------------------------------------------------------


def test_rnn_keeps_one_tape_of_states() -> None:
    workload = BY_NAME["rnn"]
    (value, grads), gradient = _compiled(
        workload.function, workload.inputs(tiny=True), workload.argnums
    )
    assert _kinds(gradient.f)["prim::TapeArray"] == 1
    assert _kinds(gradient.df)["aten::_previous_row"] == 1
    reference_value, reference_grads = workload.reference(*workload.inputs(tiny=True))
    np.testing.assert_allclose(value, reference_value, rtol=1e-12)
    for got, expected in zip(grads, reference_grads, strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-14)


def test_a_mean_scale_is_a_constant_not_a_capture() -> None:
    """``np.mean``'s scale ``1 / n`` is known once fold-sizes has made ``n`` a constant; the
    constant propagation after it folds the division, so ``f`` computes and hands ``df`` no
    scale, and the seeded ``df`` folds it into the seed (Note [Seeded df])."""
    workload = BY_NAME["logistic"]
    _, gradient = _compiled(workload.function, workload.inputs(tiny=True), workload.argnums)
    assert _kinds(gradient.f)["prim::truediv"] == 0
    assert FLOAT not in [value.ty for value in gradient.df.inputs]
