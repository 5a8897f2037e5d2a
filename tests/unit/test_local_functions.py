"""``lambda`` and nested ``def`` inside a scripted function, and local names for functions
(Note [Local functions] in `frontend.local_functions`)."""

from __future__ import annotations

import numpy as np
import pytest

import autodiff as ad

RNG = np.random.default_rng(11)


def gp_negative_log_likelihood(log_scale, X, y):
    scale = np.exp(log_scale)

    def kernel(a, b):
        distances = np.sum((a[:, None, :] - b[None, :, :]) ** 2, axis=-1)
        return np.exp(-0.5 * distances / scale**2)

    def nll(K, targets, jitter=1e-6):
        K = K + jitter * np.eye(K.shape[0])
        alpha = np.linalg.solve(K, targets)
        return 0.5 * targets @ alpha + 0.5 * np.linalg.slogdet(K)[1]

    return nll(kernel(X, X), y)


def test_a_gaussian_process_with_a_nested_kernel_function() -> None:
    X, y = RNG.normal(size=(6, 2)), RNG.normal(size=6)
    expected = gp_negative_log_likelihood(0.2, X, y)
    assert ad.script(gp_negative_log_likelihood)(0.2, X, y) == pytest.approx(expected)
    assert ad.gradcheck(gp_negative_log_likelihood, 0.2, X, y).ok


def test_lambdas_defaults_keywords_and_a_local_name_for_a_numpy_function() -> None:
    def loss(x, w):
        act = np.tanh
        affine = lambda v, bias=0.5: v @ w + bias  # noqa: E731 (the code users write)
        square = lambda v: v**2  # noqa: E731
        return np.sum(square(act(affine(x))) + affine(x, bias=-1.0))

    x, w = RNG.normal(size=(3, 4)), RNG.normal(size=(4, 2))
    assert ad.script(loss)(x, w) == pytest.approx(loss(x, w))
    assert ad.gradcheck(loss, x, w).ok


def test_a_closure_reads_the_variables_it_names_when_it_is_called() -> None:
    def fn(x):
        w = x
        twice = lambda: w * 2.0  # noqa: E731
        total = np.zeros_like(x)
        for _ in range(3):
            w = w + 1.0
            total = total + twice()  # Python's late binding: the w of this iteration
        return total

    x = RNG.normal(size=3)
    np.testing.assert_allclose(ad.script(fn)(x), fn(x))


def test_a_nested_def_with_branches_and_returns() -> None:
    def fn(x, n: int):
        def piece(v, k):
            if k > 1:
                return np.sin(v) * k
            return np.cos(v)

        return np.sum(piece(x, n) + piece(x * 2.0, 1))

    x = RNG.normal(size=4)
    for n in (0, 3):
        assert ad.script(fn)(x, n) == pytest.approx(fn(x, n))
    assert ad.gradcheck(fn, x, 3).ok


def test_what_local_functions_cannot_do_is_refused_where_it_is_written() -> None:
    def recursive(x):
        def again(v):
            return again(v)

        return again(x)

    def passed_on(x):
        f = lambda v: v * 2.0  # noqa: E731
        return np.sum(np.stack([f]))

    def immediately_called(x):
        return (lambda v: v)(x)

    with pytest.raises(ad.ScriptError, match="recursion of 'again' goes deeper than 64 levels"):
        ad.script(recursive)(np.ones(2))
    with pytest.raises(ad.ScriptError, match="can only be called"):
        ad.script(passed_on)(np.ones(2))
    with pytest.raises(ad.ScriptError, match="assign it to a name"):
        ad.script(immediately_called)(np.ones(2))
