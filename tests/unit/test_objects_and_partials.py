"""Helpers reading global arrays, global containers of arrays, bound methods and
functools.partial (issue 17, items 1, 3 and 6; Note [Reading objects from outside] in
`frontend.objects`): everything read from outside is read at each call, gradients are
w.r.t. the explicit arguments only, and what is still refused says what to write."""

from __future__ import annotations

import functools
from collections import namedtuple
from typing import Any

import numpy as np
import pytest

import autodiff as ad
from tests.tree_helpers import assert_trees_close, central_differences

RNG = np.random.default_rng(11)
X = RNG.standard_normal((8, 3))
Y = RNG.standard_normal(8)
W0 = RNG.standard_normal(3)
PARAMS = [RNG.standard_normal((3, 4)), RNG.standard_normal(4)]
CONFIG = {"W": RNG.standard_normal(3), "scale": 2.0}
Pair = namedtuple("Pair", ["a", "b"])
PAIR = Pair(RNG.standard_normal(3), 0.5)


def predict(w):
    return np.tanh(X @ w)  # a helper reading a global array


def residual(w):
    return predict(w) - Y  # two levels down


def deep_loss(w):
    return np.sum(residual(w) ** 2) + np.sum(X[0] * w)  # the caller reads X too


def mlp_loss(x):
    W, b = PARAMS
    return np.sum(np.tanh(x @ W + b) ** 2)


def config_loss(w):
    return np.sum((CONFIG["W"] * w) ** 2) * CONFIG["scale"] + np.sum(PAIR.a * w) * PAIR.b


def layers_loss(x):
    h = x
    for W, b in LAYERS:
        h = np.tanh(h @ W + b)
    return np.sum(h)


LAYERS = [(RNG.standard_normal((3, 3)), RNG.standard_normal(3))]


def test_helpers_at_any_depth_read_global_arrays_at_each_call() -> None:
    saved = X.copy()
    try:
        scripted = ad.script(deep_loss)
        assert [v.name_hint for v in scripted.graph.inputs] == ["w", "X", "Y"]
        for _ in range(2):
            assert scripted(W0) == pytest.approx(deep_loss(W0), rel=1e-13)
            assert_trees_close(ad.grad(deep_loss)(W0), central_differences(deep_loss, W0))
        X[:] = X * 0.5  # written in place between calls
        assert scripted(W0) == pytest.approx(deep_loss(W0), rel=1e-13)
        assert_trees_close(ad.grad(deep_loss)(W0), central_differences(deep_loss, W0))
    finally:
        X[:] = saved


def test_a_global_list_of_arrays_is_read_at_each_call() -> None:
    x = RNG.standard_normal((5, 3))
    saved = list(PARAMS)
    try:
        assert ad.script(mlp_loss)(x) == pytest.approx(mlp_loss(x), rel=1e-13)
        assert_trees_close(ad.grad(mlp_loss)(x), central_differences(mlp_loss, x))
        PARAMS[0] = PARAMS[0] * 2.0  # an item rebound: seen
        assert ad.script(mlp_loss)(x) == pytest.approx(mlp_loss(x), rel=1e-13)
        assert_trees_close(ad.grad(mlp_loss)(x), central_differences(mlp_loss, x))
    finally:
        PARAMS[:] = saved


def test_appending_to_a_global_list_compiles_again() -> None:
    x = RNG.standard_normal((2, 3))
    scripted = ad.script(layers_loss)
    assert scripted(x) == pytest.approx(layers_loss(x), rel=1e-13)
    LAYERS.append((RNG.standard_normal((3, 3)), RNG.standard_normal(3)))
    try:
        assert scripted(x) == pytest.approx(layers_loss(x), rel=1e-13)
        assert_trees_close(ad.grad(layers_loss)(x), central_differences(layers_loss, x))
    finally:
        LAYERS.pop()
    assert scripted(x) == pytest.approx(layers_loss(x), rel=1e-13)


def test_dicts_and_namedtuples_with_numbers_are_never_stale() -> None:
    scripted = ad.script(config_loss)
    assert scripted(W0) == pytest.approx(config_loss(W0), rel=1e-13)
    CONFIG["scale"] = 5.0  # a number in a global dict: compiled again
    try:
        assert scripted(W0) == pytest.approx(config_loss(W0), rel=1e-13)
        assert_trees_close(ad.grad(config_loss)(W0), central_differences(config_loss, W0))
    finally:
        CONFIG["scale"] = 2.0
    assert scripted(W0) == pytest.approx(config_loss(W0), rel=1e-13)


class Model:
    def __init__(self, W: np.ndarray, scale: float) -> None:
        self.W = W
        self.scale = scale
        self.params = [W.copy(), np.ones(W.shape[1])]
        self.act = np.tanh

    def hidden(self, x):
        return self.act(x @ self.W)

    def apply(self, x):
        h = self.hidden(x)  # another method, through self
        W2, b = self.params
        return np.sum((h @ W2.T + b[0]) ** 2) * self.scale


def test_bound_methods_read_self_at_each_call() -> None:
    m = Model(RNG.standard_normal((3, 3)), 0.5)
    x = RNG.standard_normal((4, 3))
    assert ad.script(m.apply)(x) == pytest.approx(m.apply(x), rel=1e-13)
    grad = ad.grad(m.apply)
    assert_trees_close(grad(x), central_differences(m.apply, x))
    m.W = m.W * 2.0  # an array attribute rebound: read at the next call
    assert_trees_close(grad(x), central_differences(m.apply, x))
    m.scale = 3.0  # a number attribute rebound: compiled again
    assert_trees_close(grad(x), central_differences(m.apply, x))
    m.act = np.sin  # a function attribute rebound: compiled again
    assert_trees_close(grad(x), central_differences(m.apply, x))


def test_a_method_called_inside_a_compiled_function() -> None:
    m = Model(RNG.standard_normal((3, 3)), 1.5)

    def loss(x):
        return m.apply(x) + np.sum(m.W)

    x = RNG.standard_normal((2, 3))
    assert ad.script(loss)(x) == pytest.approx(loss(x), rel=1e-13)
    assert_trees_close(ad.grad(loss)(x), central_differences(loss, x))
    m.W[0, 0] += 1.0  # written in place
    assert_trees_close(ad.grad(loss)(x), central_differences(loss, x))


def mse(w, x, y):
    return np.mean((x @ w - y) ** 2)


def scaled(x, s):
    return np.sum(x * s)


FIXED = functools.partial(mse, x=X, y=Y)


def calls_a_global_partial(w):
    return FIXED(w) + 1.0


def builds_a_partial(x, s):
    g = functools.partial(scaled, s=s * 3.0)
    h = functools.partial(lambda a, b: a * b, 2.0)
    return g(x) + np.sum(h(x))


def test_the_function_differentiated_may_be_a_partial() -> None:
    loss = functools.partial(mse, x=X, y=Y)
    assert ad.script(loss)(W0) == pytest.approx(loss(W0), rel=1e-13)
    assert_trees_close(ad.grad(loss)(W0), central_differences(loss, W0))
    positional = functools.partial(scaled, X[0])
    assert ad.grad(positional)(2.0) == pytest.approx(np.sum(X[0]), rel=1e-13)


def test_a_partial_fixing_an_array_reads_it_at_each_call() -> None:
    data = X.copy()
    loss = functools.partial(mse, x=data, y=Y)
    dloss = ad.grad(loss)
    dloss(W0)
    data *= 2.0
    assert_trees_close(dloss(W0), central_differences(loss, W0))


def test_a_global_partial_called_inside() -> None:
    assert ad.script(calls_a_global_partial)(W0) == pytest.approx(
        calls_a_global_partial(W0), rel=1e-13
    )
    assert_trees_close(
        ad.grad(calls_a_global_partial)(W0), central_differences(calls_a_global_partial, W0)
    )


def test_a_partial_built_inside_with_run_time_arguments() -> None:
    x = RNG.standard_normal(3)
    assert ad.script(builds_a_partial)(x, 0.5) == pytest.approx(builds_a_partial(x, 0.5))
    dx, ds = ad.grad(builds_a_partial, argnums=(0, 1))(x, 0.5)
    assert_trees_close(dx, central_differences(lambda v: builds_a_partial(v, 0.5), x))
    assert ds == pytest.approx(3.0 * np.sum(x), rel=1e-12)


def test_what_is_still_refused_says_what_to_write() -> None:
    table = {"a": 1.0}

    def calls_a_c_method(x):
        return x * table.get("a")

    with pytest.raises(ad.ScriptError, match=r"implemented in C.*call it before") as info:
        ad.script(calls_a_c_method)
    assert "only functions defined with" not in str(info.value)
    with pytest.raises(ad.ScriptError, match=r"functools.partial of len .*write a def") as info:
        ad.grad(functools.partial(len, [1]))
    assert "only functions defined with" not in str(info.value)

    def calls_partial_directly(x):
        return functools.partial(scaled, s=2.0)(x)

    with pytest.raises(ad.ScriptError, match=r"assign it to a name"):
        ad.script(calls_partial_directly)


def test_jax_agrees_on_the_method_gradient() -> Any:
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy
    m = Model(RNG.standard_normal((3, 3)), 0.5)
    x = RNG.standard_normal((4, 3))

    def reference(x):
        h = jnp.tanh(x @ m.W)
        return jnp.sum((h @ m.params[0].T + m.params[1][0]) ** 2) * m.scale

    np.testing.assert_allclose(ad.grad(m.apply)(x), jax.grad(reference)(x), rtol=1e-10)


def quartic(w):
    return np.sum(np.tanh(X @ w) ** 2) + np.sum(w**4)  # reads the global X


def quartic_through_helper(w):
    return np.sum(predict(w) ** 2) + np.sum(w**4)


def hessian_by_differences(fn: Any, w: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    dfn = ad.grad(fn)
    rows = []
    for i in range(w.size):
        step = np.zeros_like(w)
        step[i] = eps
        rows.append((dfn(w + step) - dfn(w - step)) / (2 * eps))
    return np.array(rows)


@pytest.mark.parametrize("fn", [quartic, quartic_through_helper])
def test_second_derivatives_of_functions_reading_globals(fn: Any) -> None:
    expected = hessian_by_differences(fn, W0)
    np.testing.assert_allclose(ad.hessian(fn)(W0), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(ad.jacobian(ad.grad(fn))(W0), expected, rtol=1e-6, atol=1e-8)
    v = RNG.standard_normal(3)

    dfn = ad.grad(fn)

    def hvp(w):
        return np.sum(dfn(w) * v)  # the gradient called from scripted code

    np.testing.assert_allclose(ad.grad(hvp)(W0), expected @ v, rtol=1e-6, atol=1e-8)
    saved = X.copy()
    try:
        X[:] = X * 0.5  # the hidden input of the Hessian is read at each call
        np.testing.assert_allclose(
            ad.hessian(fn)(W0), hessian_by_differences(fn, W0), rtol=1e-6, atol=1e-8
        )
    finally:
        X[:] = saved


def test_a_method_takes_a_container_and_a_python_number() -> None:
    class Net:
        def __init__(self) -> None:
            self.bias = RNG.standard_normal(3)

        def loss(self, params, scale):
            W, b = params
            return np.sum(np.tanh(X @ W + b + self.bias) ** 2) * scale

    net = Net()
    params = [RNG.standard_normal((3, 3)), RNG.standard_normal(3)]
    grads = ad.grad(net.loss)(params, 2.0)
    assert_trees_close(grads, central_differences(net.loss, params, 2.0))


def _squared_error(w, x, y):
    return np.mean((x @ w - y) ** 2)


SQUARE = np.array([[1.0, 2.0], [3.0, 4.0]])
TARGET = np.array([0.5, -1.0])
SQUARE_FIXED = functools.partial(_squared_error, x=SQUARE, y=TARGET)


def _overrides_a_fixed_keyword(w):
    return SQUARE_FIXED(w) + SQUARE_FIXED(w, y=TARGET + 1.0)


def test_a_partial_whose_fixed_array_precedes_a_passed_argument_binds_each_in_place() -> None:
    """A regression: the fixed ``x`` became a hidden input of the callee before the passed
    ``y``, while the caller passes hidden inputs after the arguments, so ``x`` and ``y`` were
    swapped; with these square shapes that was a silent wrong value."""
    w = np.array([0.3, -0.7])
    assert ad.script(_overrides_a_fixed_keyword)(w) == pytest.approx(_overrides_a_fixed_keyword(w))
    expected = ad.grad(lambda v: _squared_error(v, SQUARE, TARGET))(w) + ad.grad(
        lambda v: _squared_error(v, SQUARE, TARGET + 1.0)
    )(w)
    np.testing.assert_allclose(ad.grad(_overrides_a_fixed_keyword)(w), expected)


def _dict_loss(params, x):
    return np.sum((x @ params["w"] + params["b"]) ** 2)


def test_a_partial_given_a_dict_of_parameters() -> None:
    # Regression: naming the partial in messages built its graph before the call's arguments
    # said that `params` is a dict, which raised "an index must be an int ..., not str".
    x = np.arange(12.0).reshape(4, 3) / 10
    params = {"w": np.ones((3, 2)), "b": np.array([0.5, -1.0])}
    loss = functools.partial(_dict_loss, x=x)
    grads = ad.grad(loss)(params)
    residual = x @ params["w"] + params["b"]
    np.testing.assert_allclose(grads["w"], 2 * x.T @ residual)
    np.testing.assert_allclose(grads["b"], 2 * residual.sum(axis=0))
    value, vjp_fn = ad.vjp(loss, params)
    assert value == pytest.approx(_dict_loss(params, x))
    (cotangent,) = vjp_fn(1.0)
    np.testing.assert_allclose(cotangent["w"], grads["w"])
