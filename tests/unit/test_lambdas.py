"""A lambda as the function compiled or differentiated, as JAX users write
``jax.grad(lambda p: loss(p, x, y))`` (Note [Lambdas compiled] in `frontend.lambdas`): the
same values and gradients as the plain lambda, errors located in the lambda where it is
written, and the lambdas that cannot be told apart refused."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import autodiff as ad
from tests.tree_helpers import central_differences

RNG = np.random.default_rng(3)
X, Y = RNG.normal(size=(6, 3)), RNG.normal(size=6)
P = RNG.normal(size=3)


def loss(p, x, y):
    return np.mean((np.tanh(x @ p) - y) ** 2)


def test_grad_of_a_lambda_closing_over_data() -> None:
    x, y = X, Y
    dloss = ad.grad(lambda p: loss(p, x, y))
    np.testing.assert_allclose(dloss(P), ad.grad(loss)(P, X, Y))
    np.testing.assert_allclose(dloss(P), central_differences(lambda p: loss(p, x, y), P), rtol=1e-6)
    x = 2.0 * X  # a closure cell rebound: read at the next call
    np.testing.assert_allclose(dloss(P), ad.grad(loss)(P, 2.0 * X, Y))


def test_a_lambda_with_a_default_and_two_parameters() -> None:
    fn = ad.value_and_grad(lambda q, s=2.0: np.sum(q**2) * s)
    value, gradient = fn(P)
    assert value == pytest.approx(2.0 * np.sum(P**2))
    np.testing.assert_allclose(gradient, 4.0 * P)
    both = ad.grad(lambda a, b: np.sum(np.sin(a) * b), argnums=(0, 1))(P, P[::-1].copy())
    np.testing.assert_allclose(both[0], np.cos(P) * P[::-1])


def test_lambdas_on_one_line_are_told_apart() -> None:
    square, cube = ad.grad(lambda a: np.sum(a**2)), ad.grad(lambda a: np.sum(a**3))
    np.testing.assert_allclose(square(P), 2 * P)
    np.testing.assert_allclose(cube(P), 3 * P**2)


def test_a_lambda_over_several_lines_and_its_hessian() -> None:
    energy = ad.hessian(
        lambda a: np.sum(np.sin(a))
        + 0.5 * np.sum(a**2)
    )
    np.testing.assert_allclose(energy(P), np.diag(1.0 - np.sin(P)), atol=1e-12)


def test_an_error_in_a_lambda_points_at_the_lambda() -> None:
    with pytest.raises(ad.ScriptError) as error:
        ad.grad(lambda a: np.sum(a * not_defined_anywhere))  # noqa: F821
    text = str(error.value)
    assert "undefined name 'not_defined_anywhere'" in text
    assert "ad.grad(lambda a: np.sum(a * not_defined_anywhere))" in text  # the file's line
    where = error.value.source_range
    assert where is not None
    line = Path(__file__).read_text().splitlines()[where.line - 1]
    assert line[where.col - 1 :].startswith("not_defined_anywhere")


def test_a_lambda_whose_body_starts_at_the_left_edge_is_refused() -> None:
    with pytest.raises(ad.ScriptError, match="define the function with 'def'"):
        ad.script(lambda a:
a)  # fmt: skip
