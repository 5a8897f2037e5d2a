"""Named intermediates (issue #9): ``ad.tap`` is the identity, ``retain=`` returns d output /
d tapped value, ``hooks=`` run on that gradient while ``df`` runs and may replace it
(Note [Taps] in `autodiff.taps`)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import autodiff as ad
from autodiff.grad import GradFunction

RNG = np.random.default_rng(9)
W = RNG.standard_normal(3)
X = RNG.standard_normal((4, 3))
B = RNG.standard_normal(4)


def hidden(w, x):
    return np.tanh(x @ w)


def head(h, b):
    return np.sum(h**2 * b + np.sin(h))


def tapped(w, x, b):
    h = ad.tap(np.tanh(x @ w), "h")
    return np.sum(h**2 * b + np.sin(h))


def two_taps(w, x, b):
    z = ad.tap(x @ w, "z")
    h = ad.tap(np.tanh(z), "h")
    return np.sum(h**2 * b + np.sin(h))


def tapped_loop(w, n: int):
    h = w
    for _ in range(n):
        h = ad.tap(np.sin(h) * 1.5, "h")
    return np.sum(h * h)


def tapped_branch(w, c: bool):
    if c:
        t = w * 3.0
        h = ad.tap(t, "h")
    else:
        h = w * 2.0
    return np.sum(h * h)


def finite_difference(fn: Any, at: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    grad = np.zeros_like(at)
    for index in np.ndindex(at.shape):
        up, down = at.copy(), at.copy()
        up[index] += eps
        down[index] -= eps
        grad[index] = (fn(up) - fn(down)) / (2 * eps)
    return grad


def manual_dw(h_grad: np.ndarray, w: np.ndarray, x: np.ndarray) -> np.ndarray:
    """d out / d w from d out / d h, through h = tanh(x @ w)."""
    h = np.tanh(x @ w)
    return x.T @ (h_grad * (1.0 - h * h))


def dhead_dh(w: np.ndarray, x: np.ndarray, b: np.ndarray) -> np.ndarray:
    h = np.tanh(x @ w)
    return 2 * h * b + np.cos(h)


def test_tap_is_the_identity_in_plain_python_and_scripted_code() -> None:
    value = np.arange(3.0)
    assert ad.tap(value, "v") is value
    assert tapped(W, X, B) == head(hidden(W, X), B)
    np.testing.assert_allclose(ad.script(tapped)(W, X, B), head(hidden(W, X), B))
    assert "aten::_tap" in str(ad.script(tapped).graph)


def test_gradients_without_retain_are_unchanged_and_df_has_no_hook() -> None:
    dw = ad.grad(tapped)(W, X, B)
    np.testing.assert_allclose(dw, manual_dw(dhead_dh(W, X, B), W, X))
    df = str(ad.differentiate(ad.script(tapped).graph_for(W, X, B)).df)
    assert "_run_hooks" not in df


def test_retained_gradient_is_d_output_d_tapped_value() -> None:
    dw, retained = ad.grad(tapped, retain=("h",))(W, X, B)
    expected = finite_difference(lambda h: head(h, B), hidden(W, X))
    np.testing.assert_allclose(retained["h"], expected, rtol=1e-6)
    np.testing.assert_allclose(retained["h"], dhead_dh(W, X, B))
    np.testing.assert_allclose(dw, ad.grad(tapped)(W, X, B))


def test_retain_two_names_and_value_and_grad_shape() -> None:
    (value, (dw, db)), retained = ad.value_and_grad(two_taps, argnums=(0, 2), retain=("z", "h"))(
        W, X, B
    )
    np.testing.assert_allclose(value, tapped(W, X, B))
    np.testing.assert_allclose(db, hidden(W, X) ** 2)
    h = hidden(W, X)
    np.testing.assert_allclose(retained["h"], dhead_dh(W, X, B))
    np.testing.assert_allclose(retained["z"], dhead_dh(W, X, B) * (1 - h * h))
    assert list(retained) == ["z", "h"]
    dw_only, only_h = ad.grad(two_taps, retain="h")(W, X, B)
    np.testing.assert_allclose(dw_only, dw)
    assert list(only_h) == ["h"]


def test_clipping_hook_changes_the_input_gradients() -> None:
    def clip(g: np.ndarray) -> np.ndarray:
        return np.clip(g, -0.5, 0.5)

    dw, retained = ad.grad(tapped, hooks={"h": clip}, retain="h")(W, X, B)
    clipped = clip(dhead_dh(W, X, B))
    assert not np.allclose(clipped, dhead_dh(W, X, B))  # the hook does clip here
    np.testing.assert_allclose(dw, manual_dw(clipped, W, X))
    np.testing.assert_allclose(retained["h"], clipped)  # retained after the hooks


def test_hooks_run_in_registration_order_and_none_keeps_the_gradient() -> None:
    calls: list[tuple[str, np.ndarray]] = []

    def observe(g: np.ndarray) -> None:
        calls.append(("observe", np.array(g)))

    def double(g: np.ndarray) -> np.ndarray:
        calls.append(("double", np.array(g)))
        return g * 2.0

    def last(g: np.ndarray) -> None:
        calls.append(("last", np.array(g)))

    dw = ad.grad(tapped, hooks={"h": [observe, double, last]})(W, X, B)
    assert [name for name, _ in calls] == ["observe", "double", "last"]
    np.testing.assert_allclose(calls[0][1], dhead_dh(W, X, B))
    np.testing.assert_allclose(calls[1][1], dhead_dh(W, X, B))
    np.testing.assert_allclose(calls[2][1], 2 * dhead_dh(W, X, B))
    np.testing.assert_allclose(dw, 2 * ad.grad(tapped)(W, X, B))

    calls.clear()
    np.testing.assert_allclose(
        ad.grad(tapped, hooks={"h": observe})(W, X, B), ad.grad(tapped)(W, X, B)
    )
    assert len(calls) == 1


def test_hook_on_an_earlier_tap_sees_the_later_hooks_result() -> None:
    seen: list[np.ndarray] = []
    dw = ad.grad(two_taps, hooks={"h": lambda g: g * 0.0, "z": lambda g: seen.append(g)})(W, X, B)
    np.testing.assert_allclose(seen[0], np.zeros(4))
    np.testing.assert_allclose(dw, np.zeros(3))


def test_unknown_names_are_refused_clearly() -> None:
    with pytest.raises(ad.DifferentiationError, match=r"taps no value named 'q'.*'h'"):
        ad.grad(tapped, retain=("q",))(W, X, B)
    with pytest.raises(ad.DifferentiationError, match=r"taps no value named 'nope'"):
        ad.grad(tapped, hooks={"nope": print})(W, X, B)
    with pytest.raises(ad.DifferentiationError, match="must be callable"):
        ad.grad(tapped, hooks={"h": 3})


def test_a_hook_returning_another_shape_is_refused() -> None:
    with pytest.raises(ad.AutodiffError, match=r"returned shape \(2,\).*shape \(4,\)"):
        ad.grad(tapped, hooks={"h": lambda g: g[:2]})(W, X, B)


def test_tap_in_a_branch_retains_only_when_the_branch_runs() -> None:
    dw, retained = ad.grad(tapped_branch, retain="h")(W, True)
    np.testing.assert_allclose(retained["h"], 2 * (3.0 * W))
    np.testing.assert_allclose(dw, 18.0 * W)
    dw, retained = ad.grad(tapped_branch, retain="h", hooks={"h": lambda g: g * 0.0})(W, False)
    assert retained == {"h": None}
    np.testing.assert_allclose(dw, 8.0 * W)
    _, retained = ad.grad(tapped_branch, retain="h", hooks={"h": lambda g: g * 0.0})(W, True)
    np.testing.assert_allclose(retained["h"], np.zeros(3))


def test_tap_in_a_loop_retains_one_gradient_per_iteration_in_forward_order() -> None:
    dw, retained = ad.grad(tapped_loop, retain="h")(W, 3)
    values = [W]
    for _ in range(3):
        values.append(np.sin(values[-1]) * 1.5)
    grads = retained["h"]
    assert isinstance(grads, list)
    assert len(grads) == 3
    np.testing.assert_allclose(grads[2], 2 * values[3])
    for k in (1, 0):  # h_k feeds h_{k+1} = 1.5 sin(h_k)
        np.testing.assert_allclose(grads[k], grads[k + 1] * 1.5 * np.cos(values[k + 1]))
    np.testing.assert_allclose(dw, grads[0] * 1.5 * np.cos(values[0]))
    calls: list[int] = []
    ad.grad(tapped_loop, hooks={"h": lambda g: calls.append(1)})(W, 3)
    assert len(calls) == 3


def test_caches_keep_hooked_and_plain_compilations_apart() -> None:
    def scale(w):
        return np.sum(ad.tap(w * w, "s"))

    plain = ad.grad(scale)
    hooked = ad.grad(scale, hooks={"s": lambda g: g * 10.0})
    np.testing.assert_allclose(plain(W), 2 * W)
    np.testing.assert_allclose(hooked(W), 20 * W)
    np.testing.assert_allclose(plain(W), 2 * W)
    np.testing.assert_allclose(ad.grad(scale)(W), 2 * W)
    _, vjp_fn = ad.vjp(scale, W)
    np.testing.assert_allclose(vjp_fn(1.0)[0], 2 * W)

    differentiated = GradFunction(scale, 0, has_aux=False, with_value=False)
    untapped = differentiated.compiled_for([W], (0,))
    with_taps = differentiated.compiled_for([W], (0,), frozenset({"s"}))
    assert untapped is not with_taps
    assert "_run_hooks" not in str(untapped.runtime.gradient.df)
    assert "_run_hooks" in str(with_taps.runtime.gradient.df)
    assert differentiated.compiled_for([W], (0,)) is untapped
    assert "_tap_hooked" not in str(ad.script(scale).graph_for(W))


def test_taps_survive_higher_derivatives_and_vjp() -> None:
    def cubic(w):
        return np.sum(ad.tap(w**3, "c"))

    np.testing.assert_allclose(ad.hessian(cubic)(W), np.diag(6 * W))
    _, vjp_fn = ad.vjp(cubic, W)
    np.testing.assert_allclose(vjp_fn(1.0)[0], 3 * W**2)


def test_a_retaining_gradient_cannot_be_called_from_scripted_code() -> None:
    retaining = ad.grad(tapped, retain="h")

    def outer(w, x, b):
        return np.sum(retaining(w, x, b))

    with pytest.raises(ad.AutodiffError, match="retain= or hooks="):
        ad.script(outer)(W, X, B)


def test_anomaly_mode_names_the_tap_whose_hook_made_a_nan() -> None:
    with (
        ad.detect_anomaly(),
        pytest.raises(ad.AnomalyError, match=r"aten::_run_hooks") as raised,
    ):
        ad.grad(tapped, hooks={"h": lambda g: g * np.nan})(W, X, B)
    assert 'ad.tap(np.tanh(x @ w), "h")' in str(raised.value)


def test_the_hook_point_runs_the_installed_runner_and_restores_the_one_before() -> None:
    from ir.ops.prim import AUTOGRAD_ZERO
    from ir.ops.taps import run_hooks, running_hooks

    grad = np.ones(2)
    assert run_hooks(grad, "h") is grad  # no runner installed: the identity
    with running_hooks(lambda g, name: g * 2):
        np.testing.assert_array_equal(run_hooks(grad, "h"), [2.0, 2.0])
        with running_hooks(lambda g, name: g + 5):
            np.testing.assert_array_equal(run_hooks(grad, "h"), [6.0, 6.0])
        np.testing.assert_array_equal(run_hooks(grad, "h"), [2.0, 2.0])
        assert run_hooks(AUTOGRAD_ZERO, "h") is AUTOGRAD_ZERO
    assert run_hooks(grad, "h") is grad
