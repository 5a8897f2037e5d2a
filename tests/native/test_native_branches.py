"""A branch inside a differentiated loop on the native tier: `stack-tapes` keeps the branch
decisions in a Bool array rather than a Python list, and prim::Uninitialized (what a branch
yields for a value only the other defines) has a native spelling, so the whole of ``f`` and
``df`` joined is one compiled region (Note [Joined f and df], Note [Native regions])."""

from __future__ import annotations

import numpy as np
import pytest

import autodiff as ad
from autodiff.gradient import joined_graph
from autodiff.native_tier import native_graph

pytest.importorskip("numba")


def gated(w, x):
    h = x
    for _ in range(40):
        a = w @ h
        if np.sum(a) > 0:  # noqa: SIM108 - a statement, as users write it
            h = np.tanh(a)
        else:
            h = 0.9 * h + 0.1 * np.sin(a)
    return np.sum(h * h)


def branches_taken(w: np.ndarray, x: np.ndarray) -> set[bool]:
    taken, h = set(), x
    for _ in range(40):
        a = w @ h
        taken.add(bool(np.sum(a) > 0))
        h = np.tanh(a) if np.sum(a) > 0 else 0.9 * h + 0.1 * np.sin(a)
    return taken


def inputs() -> tuple[np.ndarray, np.ndarray]:
    w = np.array([[0.9, -1.2, 0.3], [1.1, 0.4, -0.8], [-0.5, 0.7, 1.0]])
    return w, np.array([0.3, -0.6, 0.2])


def test_both_branches_are_taken_by_the_inputs() -> None:
    assert branches_taken(*inputs()) == {True, False}


def test_a_loop_with_a_branch_is_one_native_region() -> None:
    fn = ad.value_and_grad(gated, argnums=(0, 1), native=False)
    fn(*inputs())
    (entry,) = fn.compiled_gradients()
    runtime = entry.runtime
    joined = joined_graph(runtime.gradient, runtime.df_graph)
    assert joined is not None
    regions = native_graph(joined)
    top = [node.kind for node in regions.block.nodes() if node.kind != "prim::Constant"]
    assert top == ["prim::Native", "prim::TupleConstruct"]
    inside = {node.kind for node in regions.all_nodes()}
    assert "prim::TapeList" not in inside
    assert "prim::ListIndex" not in inside


def test_a_loop_with_a_branch_on_the_native_tier_equals_the_numpy_tier() -> None:
    expected_value, expected_grads = ad.value_and_grad(gated, argnums=(0, 1), native=False)(
        *inputs()
    )
    native = ad.value_and_grad(gated, argnums=(0, 1), native=True)
    value, grads = native(*inputs())
    (entry,) = native.compiled_gradients()
    assert entry.runtime.native.status == "native: always (not measured)"
    assert value == pytest.approx(expected_value, rel=1e-12)
    for got, want in zip(grads, expected_grads, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-14)
