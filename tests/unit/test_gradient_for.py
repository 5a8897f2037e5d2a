"""`GradFunction.gradient_for`: the f and df a call with given arguments runs."""

from __future__ import annotations

import numpy as np

import autodiff as ad
from ir.printer import print_graph


def loss(w, x, y):
    return np.mean((np.tanh(x @ w) - y) ** 2)


def test_gradient_for_is_what_a_call_runs() -> None:
    rng = np.random.default_rng(0)
    w, x, y = rng.standard_normal((3, 2)), rng.standard_normal((5, 3)), rng.standard_normal(5)
    dloss = ad.grad(loss)
    dloss(w, x, y[:, None])
    gradient = dloss.gradient_for(w, x, y[:, None])
    (compiled,) = dloss.compiled_gradients()
    assert gradient is compiled.runtime.gradient
    assert [v.name_hint for v in gradient.f.inputs] == ["w", "x", "y"]
    assert "Double(3, 2)" in print_graph(gradient.df)  # the gradient of w, and only w
    assert "Double(5, 3) = " not in print_graph(gradient.df)


def test_gradient_for_a_pytree_and_argnums() -> None:
    params = {"b": np.zeros(2), "w": np.ones((3, 2))}
    x, y = np.ones((4, 3)), np.zeros((4, 2))
    dloss = ad.grad(lambda p, x, y: loss(p["w"], x, y) + np.sum(p["b"]), argnums=(0, 2))
    gradient = dloss.gradient_for(params, x, y)
    assert len(gradient.f.inputs) == 4  # one per leaf: b, w, x, y
    (result,) = gradient.df.outputs
    returned = result.node.inputs
    assert len(returned) == 3  # d/db, d/dw and d/dy, not d/dx
