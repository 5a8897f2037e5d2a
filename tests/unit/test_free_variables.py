"""Global and closure arrays a function reads are read at each call, as hidden inputs (issue 17,
item 1; Note [Free variables] in `frontend.compile`): never a stale constant, rebinding and
writing seen by the next call, the signature key covering their shapes, gradients w.r.t. the
parameters only, and what is not handled yet refused, saying so."""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np
import pytest

import autodiff as ad

RNG = np.random.default_rng(7)
X = RNG.standard_normal((20, 3))
Y = RNG.standard_normal(20)
W = np.array([0.5, -1.0, 2.0])


def mse(w):
    return np.mean((X @ w - Y) ** 2)


def mse_gradient(w: np.ndarray) -> np.ndarray:
    return 2.0 * X.T @ (X @ w - Y) / X.shape[0]


def make_loss(data, targets):
    def closure_loss(w, b):
        r = np.tanh(data @ w + b) - targets
        return np.sum(r * r)

    return closure_loss


COUNTS = np.zeros(3)


def counts_calls(w):
    COUNTS[0] += 1.0  # a write into a global array, seen by the caller
    return np.sum(w * w)


def reads_through_a_helper(w):
    return helper_reading_x(w)


def helper_reading_x(w):
    return np.sum(X @ w)


def reads_twice_and_last(w, scale):
    return np.sum(X @ w) * scale + np.sum(X[0] * w)


def rebind(**values: Any) -> None:
    """Rebind this module's globals, as code between two calls would."""
    globals().update(values)


@pytest.fixture
def restore_globals() -> Any:
    saved = (X.copy(), Y.copy())
    yield
    rebind(X=saved[0], Y=saved[1])


def test_a_global_array_is_an_input_after_the_parameters() -> None:
    graph = ad.script(mse).graph
    assert [v.name_hint for v in graph.inputs] == ["w", "X", "Y"]
    assert ad.script(mse).free[0].name == "X"


def test_values_and_gradients_read_the_globals_of_each_call(restore_globals: None) -> None:
    scripted, dmse = ad.script(mse), ad.value_and_grad(mse)
    for _ in range(2):  # compiled, then a cache hit
        assert scripted(W) == pytest.approx(mse(W), rel=1e-14)
        value, grad = dmse(W)
        assert value == pytest.approx(mse(W), rel=1e-14)
        np.testing.assert_allclose(grad, mse_gradient(W), rtol=1e-12)
    rebind(X=X * 2.0)  # rebound: the next call sees it, no stale constant
    value, grad = dmse(W)
    assert value == pytest.approx(mse(W), rel=1e-14)
    np.testing.assert_allclose(grad, mse_gradient(W), rtol=1e-12)
    X[0, 0] = 100.0  # written in place between calls
    np.testing.assert_allclose(dmse(W)[1], mse_gradient(W), rtol=1e-12)
    assert scripted(W) == pytest.approx(mse(W), rel=1e-14)
    rebind(X=np.ones((5, 3)), Y=np.zeros(5))  # another shape: compiled again
    np.testing.assert_allclose(dmse(W)[1], mse_gradient(W), rtol=1e-12)
    assert len(dmse.cache) == 2


def test_closure_arrays_with_grad_vjp_and_jacobian() -> None:
    data, targets = RNG.standard_normal((6, 3)), RNG.standard_normal(6)
    loss = make_loss(data, targets)
    dw, db = ad.grad(loss, argnums=(0, 1))(W, 0.25)
    r = np.tanh(data @ W + 0.25) - targets
    dz = 2.0 * r * (1.0 - np.tanh(data @ W + 0.25) ** 2)
    np.testing.assert_allclose(dw, data.T @ dz, rtol=1e-12)
    assert db == pytest.approx(np.sum(dz), rel=1e-12)
    out, vjp_fn = ad.vjp(loss, W, 0.25)
    assert out == pytest.approx(loss(W, 0.25), rel=1e-14)
    np.testing.assert_allclose(vjp_fn(1.0)[0], dw, rtol=1e-12)
    np.testing.assert_allclose(ad.jacobian(loss)(W, 0.25), dw, rtol=1e-12)
    # finite differences, for the gradient through the closed-over data
    eps = 1e-6
    for i in range(3):
        step = np.eye(3)[i] * eps
        central = (loss(W + step, 0.25) - loss(W - step, 0.25)) / (2 * eps)
        assert dw[i] == pytest.approx(central, rel=1e-6)


def test_a_write_into_a_global_array_reaches_it() -> None:
    before = COUNTS.copy()
    ad.script(counts_calls)(W)
    ad.grad(counts_calls)(W)
    assert COUNTS[0] == before[0] + 2.0


def test_argnums_count_the_parameters_only() -> None:
    grad_last = ad.grad(reads_twice_and_last, argnums=-1)(W, 1.5)
    assert grad_last == pytest.approx(np.sum(X @ W), rel=1e-12)
    assert isinstance(grad_last, float)


def test_a_helper_reading_a_global_array_reads_it_at_each_call(restore_globals: None) -> None:
    scripted = ad.script(reads_through_a_helper)
    assert [v.name_hint for v in scripted.graph.inputs] == ["w", "X"]
    assert scripted(W) == pytest.approx(np.sum(X @ W), rel=1e-14)
    np.testing.assert_allclose(ad.grad(reads_through_a_helper)(W), X.sum(0), rtol=1e-14)
    rebind(X=X * 3.0)
    assert scripted(W) == pytest.approx(np.sum(X @ W), rel=1e-14)


def test_second_derivatives_read_the_globals_too(restore_globals: None) -> None:
    # the Hessian of the mean squared error: 2 X^T X / n, whatever W is
    np.testing.assert_allclose(ad.hessian(mse)(W), 2.0 * X.T @ X / X.shape[0], rtol=1e-12)
    rebind(X=X * 2.0)
    np.testing.assert_allclose(ad.hessian(mse)(W), 2.0 * X.T @ X / X.shape[0], rtol=1e-12)


def test_a_global_that_stops_being_an_array_is_refused(restore_globals: None) -> None:
    scripted = ad.script(mse)
    scripted(W)
    rebind(X=3.0)
    with pytest.raises(ad.ArgumentError, match=r"'X', which mse\(\) reads, was an array"):
        scripted(W)
    rebind(X=RNG.standard_normal((4, 3)), Y=np.zeros(4))
    assert scripted(W) == pytest.approx(mse(W), rel=1e-14)  # and the next call works


# ---- values read once, at compile time: checked at each call (Note [Values read once]) ----------

SCALE = 2.0


def scale_helper(v):
    return v * 3.0


def scaled_loss(w):
    return np.sum(scale_helper(w) * w) * SCALE


def make_counter_loss():
    k = 1.0

    def loss(w):
        return np.sum(w * w) * k

    def set_k(value: float) -> None:
        nonlocal k
        k = value

    return loss, set_k


@pytest.fixture
def restore_scale() -> Any:
    saved = (SCALE, scale_helper)
    yield
    rebind(SCALE=saved[0], scale_helper=saved[1])


def test_a_rebound_global_number_or_helper_compiles_again(restore_scale: None) -> None:
    scripted, dloss = ad.script(scaled_loss), ad.grad(scaled_loss)
    hessian = ad.hessian(scaled_loss)
    for _ in range(2):
        assert scripted(W) == pytest.approx(scaled_loss(W), rel=1e-14)
        np.testing.assert_allclose(dloss(W), 12.0 * W, rtol=1e-14)
    units = len(dloss.cache)
    rebind(SCALE=5.0)  # read once, as a constant: the next call compiles again
    assert scripted(W) == pytest.approx(scaled_loss(W), rel=1e-14)
    np.testing.assert_allclose(dloss(W), 30.0 * W, rtol=1e-14)
    np.testing.assert_allclose(ad.vjp(scaled_loss, W)[1](1.0)[0], 30.0 * W, rtol=1e-14)
    np.testing.assert_allclose(hessian(W), 30.0 * np.eye(3), rtol=1e-14)

    def tenfold(v):
        return v * 10.0

    rebind(scale_helper=tenfold)  # a helper defined again
    np.testing.assert_allclose(dloss(W), 100.0 * W, rtol=1e-14)
    assert len(dloss.cache) == units


def test_nothing_compiles_again_while_nothing_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    script_module = importlib.import_module("autodiff.script")  # ad.script is the function
    dloss = ad.grad(scaled_loss)
    dloss(W)
    calls: list[object] = []
    original = script_module.compile_with_free_variables
    monkeypatch.setattr(
        script_module,
        "compile_with_free_variables",
        lambda *a, **k: calls.append(a) or original(*a, **k),
    )
    for _ in range(3):
        dloss(W)
    assert calls == []


def test_a_changed_closure_number_compiles_again() -> None:
    loss, set_k = make_counter_loss()
    dloss = ad.grad(loss)
    np.testing.assert_allclose(dloss(W), 2.0 * W, rtol=1e-14)
    set_k(4.0)
    np.testing.assert_allclose(dloss(W), 8.0 * W, rtol=1e-14)
    assert ad.script(loss)(W) == pytest.approx(loss(W), rel=1e-14)
