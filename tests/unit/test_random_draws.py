"""Random draws inside compiled code: the same stream, in the same order, as the plain function;
gradients through reparameterised samples (Note [Random draws] in `ir.ops.random`)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import autodiff as ad

RNG = np.random.default_rng(99)
STATE = np.random.RandomState(0)


def elbo(mu, log_sigma, rng):
    eps = rng.standard_normal(size=mu.shape)
    z = mu + np.exp(log_sigma) * eps  # the reparameterised sample
    log_prior = -0.5 * np.sum(z**2)
    entropy = np.sum(log_sigma)
    return -(log_prior + entropy)


def central(fn: Any, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    grad = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[index] = eps
        grad[index] = (fn(x + step) - fn(x - step)) / (2 * eps)
    return grad


def test_a_reparameterised_sample_from_a_generator_argument() -> None:
    mu, log_sigma = RNG.normal(size=4), RNG.normal(size=4) * 0.3
    value = ad.script(elbo)(mu, log_sigma, np.random.default_rng(5))
    assert value == elbo(mu, log_sigma, np.random.default_rng(5))  # the same draws, bit for bit
    dmu, dsigma = ad.grad(elbo, argnums=(0, 1))(mu, log_sigma, np.random.default_rng(5))
    # each evaluation draws again from the same seed: the same sample
    np.testing.assert_allclose(
        dmu, central(lambda m: elbo(m, log_sigma, np.random.default_rng(5)), mu), rtol=1e-6
    )
    np.testing.assert_allclose(
        dsigma, central(lambda s: elbo(mu, s, np.random.default_rng(5)), log_sigma), rtol=1e-6
    )


def draws_from_globals(x):
    a = np.random.randn(3)
    b = np.random.normal(0.0, 2.0, size=3)
    STATE.uniform(size=2)  # unused: it still consumes its stream
    c = STATE.randn(3)
    return np.sum(x * a) + np.sum(x * b) + np.sum(c)


def test_global_streams_are_consumed_in_program_order() -> None:
    x = RNG.normal(size=3)
    scripted = ad.script(draws_from_globals)
    results = []
    for run in (draws_from_globals, scripted):
        np.random.seed(3)
        STATE.seed(4)
        value = run(x)
        results.append((value, np.random.rand(), STATE.rand()))  # what comes next
    assert results[0] == results[1]
    np.random.seed(3)
    STATE.seed(4)
    first = scripted(x)
    assert scripted(x) != first  # draws again: a new value each call


def test_draws_in_a_loop_are_taped_for_the_backward() -> None:
    def fn(w, rng, steps: int):
        h = np.zeros(3)
        for _ in range(steps):
            h = np.tanh(w * h + rng.normal(size=3))
        return np.sum(h**2)

    w = RNG.normal(size=3)
    grad = ad.grad(fn)(w, np.random.default_rng(8), 4)
    expected = central(lambda v: fn(v, np.random.default_rng(8), 4), w)
    np.testing.assert_allclose(grad, expected, rtol=1e-6)


def test_two_equal_draws_are_two_draws() -> None:
    def fn(rng):
        return rng.normal(size=2) - rng.normal(size=2)

    difference = ad.script(fn)(np.random.default_rng(1))
    np.testing.assert_array_equal(difference, fn(np.random.default_rng(1)))
    assert np.all(difference != 0.0)


def test_shapes_and_kinds_of_draws() -> None:
    def fn(rng, x):
        n = rng.integers(0, 10, size=(2, 3))
        u = rng.uniform(x, x + 1.0)  # one draw per element of x
        s = rng.normal()  # a Python float
        return np.sum(n) + np.sum(u) + s

    x = RNG.normal(size=(4,))
    scripted = ad.script(fn)
    assert scripted(np.random.default_rng(2), x) == fn(np.random.default_rng(2), x)
    graph = str(scripted.graph_for(np.random.default_rng(2), x))
    assert "Long(2, 3) = prim::Draw" in graph
    assert "Double(4) = prim::Draw" in graph


def test_a_gradient_through_a_samplers_parameters_is_refused() -> None:
    def fn(mu, rng):
        return np.sum(rng.normal(mu, 1.0))

    with pytest.raises(ad.DifferentiationError, match="a random draw has no derivative"):
        ad.grad(fn)(np.ones(2), np.random.default_rng(0))
