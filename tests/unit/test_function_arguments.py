"""Functions passed to helpers, or left as their parameters' defaults: Note [Functions as
arguments] in `frontend.function_calls`."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import autodiff as ad
from tests.tree_helpers import assert_trees_close, central_differences


def relu(z):
    return np.maximum(z, 0.0)


def softplus(z, sharpness=1.0):
    return np.log1p(np.exp(sharpness * z)) / sharpness


SHARP_SOFTPLUS = functools.partial(softplus, sharpness=4.0)


def predict(params, x, act=np.tanh):
    for W, b in params:
        x = act(x @ W + b)
    return x


def layer(x, W, act):
    return act(x @ W)


def many_activations(params, x, y):
    by_default = predict(params, x)
    by_keyword = predict(params, x, act=relu)
    by_position = predict(params, x, softplus)
    sharp = predict(params, x, SHARP_SOFTPLUS)
    ufunc = layer(x, params[0][0], np.sin)
    total = by_default + by_keyword + by_position + sharp
    return np.mean((total - y) ** 2) + np.sum(ufunc)


PARAMS = [
    (np.linspace(-1.0, 1.0, 12).reshape(3, 4), np.linspace(-0.2, 0.3, 4)),
    (np.linspace(0.5, -0.5, 8).reshape(4, 2), np.array([0.1, -0.1])),
]
X = np.linspace(-1.0, 1.0, 15).reshape(5, 3)
Y = np.linspace(0.0, 1.0, 10).reshape(5, 2)


def test_helpers_take_functions_by_position_keyword_and_default() -> None:
    expected = many_activations(PARAMS, X, Y)
    assert ad.script(many_activations)(PARAMS, X, Y) == pytest.approx(expected, rel=1e-12)
    value, grads = ad.value_and_grad(many_activations)(PARAMS, X, Y)
    assert value == pytest.approx(expected, rel=1e-12)
    assert_trees_close(grads, central_differences(many_activations, PARAMS, X, Y), rtol=1e-5)


def test_each_function_compiles_its_own_callee() -> None:
    def two(x):
        return np.sum(layer(x, np.eye(3), np.tanh)) + np.sum(layer(x, np.eye(3), np.exp))

    x = np.linspace(-1.0, 1.0, 6).reshape(2, 3)
    np.testing.assert_allclose(ad.script(two)(x), two(x), rtol=1e-12)
    np.testing.assert_allclose(ad.grad(two)(x), 1 - np.tanh(x) ** 2 + np.exp(x), rtol=1e-12)


ACTIVATION = relu


def uses_global_activation(x):
    return np.sum(layer(x, np.eye(2), ACTIVATION))


def test_a_global_function_passed_on_is_read_again_when_rebound() -> None:
    global ACTIVATION
    x = np.array([[-1.0, 2.0]])
    scripted = ad.script(uses_global_activation)
    assert scripted(x) == pytest.approx(2.0)
    try:
        ACTIVATION = np.exp
        assert scripted(x) == pytest.approx(np.exp(-1.0) + np.exp(2.0))
    finally:
        ACTIVATION = relu


def test_a_lambda_written_inside_is_still_refused_where_it_is_passed() -> None:
    def inside(x):
        square = lambda v: v * v  # noqa: E731
        return np.sum(layer(x, np.eye(2), square))

    with pytest.raises(ad.ScriptError) as info:
        ad.script(inside)(np.ones((1, 2)))
    assert info.value.source_range is not None
    assert "square" in str(info.value)
