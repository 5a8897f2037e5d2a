"""Gradients of loops that append to a list, against central finite differences: the list is
a loop-carried value like any other (Note [Control-flow derivatives] in
`autodiff.control_flow`), whether the trip count is an int, a list's length (``for h in
hs``) or decided by the data (``while``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import autodiff as ad
from tests.gradients.test_gradient_corpus import finite_differences
from tests.unit.test_lists import rnn_states


def read_back(x, T: int):
    hs = []
    h = x
    for t in range(T):
        if t > 0:
            h = h + 0.5 * hs[-1]
        h = np.tanh(h)
        hs.append(h)
    return np.sum(np.concatenate(hs) ** 2)


def running_mean(x, T: int):
    hs = []
    m = x
    for t in range(T):
        if t > 0:
            m = np.mean(np.stack(hs), axis=0)
        hs.append(np.sin(m + t))
    return np.sum(m * m)


def over_the_list(x):
    hs = []
    hs.append(x)
    hs.append(2.0 * x)
    total = np.zeros(())
    for h in hs:
        total = total + np.sum(h * h)
    return total


def while_growing(x):
    hs = []
    h = x
    while np.sum(np.abs(h)) < 10.0:
        h = h * 2.0
        hs.append(h)
    return np.sum(np.stack(hs))


X = np.array([[0.3, -0.5, 0.8], [1.1, 0.2, -0.7]])
W = np.array([[0.4, -0.2, 0.1], [0.3, 0.5, -0.6], [-0.1, 0.2, 0.3]])

CASES: list[Any] = [
    pytest.param(rnn_states, (X, W, 4), id="rnn_states"),
    pytest.param(rnn_states, (X, W, 1), id="rnn_states-one-step"),
    pytest.param(read_back, (X, 3), id="read_back"),
    pytest.param(running_mean, (X, 3), id="running_mean"),
    pytest.param(over_the_list, (X,), id="over_the_list"),
    pytest.param(while_growing, (X,), id="while_growing"),
]


@pytest.mark.parametrize(("fn", "args"), CASES)
def test_loop_list_gradients_match_finite_differences(
    fn: Callable[..., Any], args: tuple[Any, ...]
) -> None:
    argnums = tuple(i for i, a in enumerate(args) if isinstance(a, np.ndarray))
    value, grads = ad.value_and_grad(fn, argnums=argnums)(*args)
    np.testing.assert_allclose(value, fn(*args), rtol=1e-12)
    for position, grad in zip(argnums, grads, strict=True):
        expected = finite_differences(fn, args, position)
        np.testing.assert_allclose(grad, expected, rtol=1e-6, atol=1e-8)


def test_hessian_of_a_loop_that_appends() -> None:
    # The gradient's own loops (and their tapes) are differentiated again.
    x = np.array([0.3, -0.2, 0.5])
    hessian = ad.hessian(rnn_states)(x, W, 3)
    grad = ad.grad(rnn_states)
    eps = 1e-6
    columns = [(grad(x + eps * d, W, 3) - grad(x - eps * d, W, 3)) / (2 * eps) for d in np.eye(3)]
    np.testing.assert_allclose(hessian, np.stack(columns, axis=-1), rtol=1e-6, atol=1e-7)
