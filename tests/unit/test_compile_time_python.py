"""Python evaluated while compiling: comprehensions and generator expressions, ``zip``,
``enumerate`` and ``reversed`` in loops, ``sum``/``min``/``max`` of what they give, and
comparisons of constants (Note [Comprehensions] in `frontend.iteration`)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import autodiff as ad

RNG = np.random.default_rng(3)


def check(fn: Any, *args: Any) -> Any:
    """The compiled value is the plain one, and the gradient w.r.t. the first argument agrees
    with central differences; returns the gradient."""
    np.testing.assert_allclose(ad.script(fn)(*args), fn(*args), rtol=1e-12)
    return ad.grad(fn)(*args)


def test_an_l2_penalty_written_as_a_generator_into_sum() -> None:
    def loss(params, x):
        penalty = sum(np.sum(W**2) for W, _ in params)
        for W, b in params:
            x = np.tanh(x @ W + b)
        return np.sum(x) + 0.01 * penalty

    params = [(RNG.normal(size=(3, 3)), RNG.normal(size=3)) for _ in range(2)]
    x = RNG.normal(size=(2, 3))
    grads = check(loss, params, x)
    W, b = params[0]
    eps = 1e-6
    for index in np.ndindex(W.shape):
        step = np.zeros_like(W)
        step[index] = eps
        up = loss([(W + step, b), params[1]], x)
        down = loss([(W - step, b), params[1]], x)
        assert grads[0][0][index] == pytest.approx((up - down) / (2 * eps), rel=1e-6, abs=1e-8)


def test_zip_enumerate_and_reversed_unroll_over_containers() -> None:
    def loss(params, xs):
        outs = [np.tanh(W @ x + b) for (W, b), x in zip(params, xs, strict=True)]
        total = np.sum(np.stack(outs))
        for i, (_, b) in enumerate(params, 1):
            total = total + i * np.sum(b)
        for W, _ in reversed(params):
            total = total * 0.5 + np.sum(W[0])
        return total

    params = [(RNG.normal(size=(3, 3)), RNG.normal(size=3)) for _ in range(3)]
    xs = [RNG.normal(size=3) for _ in range(3)]
    grads = check(loss, params, xs)
    autograd = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")

    def reference(params, xs):
        outs = [anp.tanh(anp.dot(W, x) + b) for (W, b), x in zip(params, xs, strict=True)]
        total = anp.sum(anp.stack(outs))
        for i, (_, b) in enumerate(params, 1):
            total = total + i * anp.sum(b)
        for W, _ in reversed(params):
            total = total * 0.5 + anp.sum(W[0])
        return total

    expected = autograd.grad(reference)(params, xs)
    for (dW, db), (eW, eb) in zip(grads, expected, strict=True):
        np.testing.assert_allclose(dW, eW, rtol=1e-10)
        np.testing.assert_allclose(db, eb, rtol=1e-10)


def test_comprehensions_over_ranges_with_conditions_of_constants() -> None:
    def fn(x):
        squares = [i * i for i in range(5) if i != 2]
        pairs = [x[i] * j for i in range(2) for j in (1.0, 2.0) if i < j]
        return sum(squares) + max(i for i in range(3)) + np.sum(np.stack(pairs)) + min([4, 2, 3])

    check(fn, RNG.normal(size=3))


def test_comprehension_names_do_not_leak() -> None:
    def fn(x):
        i = 10
        parts = [x * i for i in range(3)]
        return np.sum(parts[2]) + i

    np.testing.assert_allclose(ad.script(fn)(np.ones(2)), fn(np.ones(2)))


def test_a_dict_of_arrays_in_a_comprehension_and_sum_with_a_start() -> None:
    def loss(params):
        return sum((np.sum(v**2) for v in params.values()), 1.0) + sum(
            [np.sum(params[k]) for k in params if k != "skip"]
        )

    check(loss, {"a": RNG.normal(size=2), "skip": RNG.normal(size=3)})


def test_what_is_refused_says_so_where_it_is() -> None:
    def over_a_run_time_range(x, n: int):
        return sum(x[i] for i in range(n))

    def on_array_values(x):
        return sum(v for v in [x[0], x[1]] if v > 0)

    with pytest.raises(ad.ScriptError, match="range known only at run time"):
        ad.script(over_a_run_time_range)(np.ones(3), 2)
    with pytest.raises(ad.ScriptError, match="condition must be known while compiling"):
        ad.script(on_array_values)(np.ones(3))


def test_math_of_constants_and_isinstance_are_decided_while_compiling() -> None:
    def fn(x, params):
        c = math.exp(2.0) + math.log(10) + math.pi + round(2.7) + pow(2, 3)
        if isinstance(params, dict) and isinstance(params["w"], (float, int)):
            c = c + params["w"]
        if params.get("b") is None:
            c = c * 2.0
        return np.sum(x) * c

    x = RNG.normal(size=3)
    for params in ({"w": 1.5}, {"w": np.ones(3), "b": 2.0}):
        assert ad.script(fn)(x, params) == pytest.approx(fn(x, params))


def test_math_of_a_run_time_number_points_to_numpy() -> None:
    def fn(x, s: float):
        return x * math.exp(s)

    with pytest.raises(ad.ScriptError, match=r"use np\.exp"):
        ad.script(fn)(np.ones(2), 1.0)


def test_a_loop_over_the_rows_of_an_array_stays_a_loop() -> None:
    def fn(x, w):
        total = 0.0
        for row in x:
            total = total + np.sum(np.tanh(row @ w))
        for i, row in enumerate(x):
            total = total + i * np.sum(row**2)
        return total

    x, w = RNG.normal(size=(5, 3)), RNG.normal(size=(3, 2))
    scripted = ad.script(fn)
    assert scripted(x, w) == pytest.approx(fn(x, w))
    assert ad.gradcheck(fn, x, w).ok
    assert str(scripted.graph_for(x, w)).count("prim::Loop") == 2  # not unrolled


def test_a_comprehension_over_the_length_of_a_container_argument() -> None:
    # Found by tests/property/pytrees.py: at decoration, `params` is typed as an array, so
    # `range(len(params))` has a run-time bound; the error is held back until a call tells.
    def loss(params, scale):
        return sum(np.sum(np.cos(params[i])) for i in range(len(params))) * scale

    params = [RNG.normal(size=2), 0.5, RNG.normal(size=3)]
    scripted = ad.script(loss)
    assert scripted(params, 1.5) == pytest.approx(loss(params, 1.5))
    with pytest.raises(ad.ScriptError, match="range known only at run time"):
        scripted(np.ones((2, 2)), 1.5)


def any_annotated(x: Any, y: object):
    return 1.0 if x is None else np.sum(x) * 2.0


def calls_any_annotated(w):
    return np.sum(w) * any_annotated(None, w) + any_annotated(w, None)


def test_any_and_object_annotations_leave_a_parameter_its_arguments_type() -> None:
    """``x: Any`` fixes nothing: a helper given None sees None (it was typed an array, and
    refused by the verifier)."""
    w = np.ones(2)
    assert ad.script(calls_any_annotated)(w) == pytest.approx(calls_any_annotated(w))
