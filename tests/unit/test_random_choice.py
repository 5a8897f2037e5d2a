"""``choice``, ``permutation`` and ``shuffle`` in compiled code: the draws of the plain function
from the same stream, and gradients through the rows they pick (Note [Draws of rows] in
`ir.ops.random`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import autodiff as ad
from tests.tree_helpers import central_differences

RNG = np.random.default_rng(17)
P5 = np.array([0.1, 0.3, 0.2, 0.25, 0.15])

# The three kinds of stream, each made afresh with one seed: a Generator, a RandomState, and
# np.random's global stream (None: the test then runs the function written with np.random.*).
KINDS: dict[str, Callable[[], Any]] = {
    "Generator": lambda: np.random.default_rng(4),
    "RandomState": lambda: np.random.RandomState(4),
    "global": lambda: np.random.seed(4),
}


def _run(fn: Callable[..., Any], kind: str, *args: Any) -> tuple[Any, float]:
    """``fn(stream, *args)`` (``fn(*args)`` for the global stream) from a fresh stream, and the
    stream's next draw after it: the compiled and the plain function must consume the same
    numbers."""
    stream = KINDS[kind]()
    if stream is None:
        return fn(*args), np.random.random_sample()
    return fn(stream, *args), stream.random_sample() if kind != "Generator" else stream.random()


def assert_same_draws(
    methods: Callable[..., Any], functions: Callable[..., Any], kind: str, *args: Any
) -> None:
    """``methods`` draws from a stream it is given, ``functions`` from np.random's."""
    fn = functions if kind == "global" else methods
    expected, expected_next = _run(fn, kind, *args)
    actual, actual_next = _run(ad.script(fn), kind, *args)
    assert_same(actual, expected)
    assert actual_next == expected_next


def assert_same(actual: Any, expected: Any) -> None:
    assert type(actual) is type(expected)
    if isinstance(expected, tuple):
        for a, e in zip(actual, expected, strict=True):
            assert_same(a, e)
        return
    assert np.shape(actual) == np.shape(expected)
    np.testing.assert_array_equal(actual, expected)


def choices_of_n(rng, n: int):
    one = rng.choice(n)  # a Python int
    some = rng.choice(n, 4)
    distinct = rng.choice(n, size=(2, 2), replace=False)
    weighted = rng.choice(5, size=3, p=P5)
    weighted_distinct = rng.choice(5, 3, False, P5)
    return one, some, distinct, weighted, weighted_distinct


def global_choices_of_n(n: int):
    one = np.random.choice(n)
    some = np.random.choice(n, 4)
    distinct = np.random.choice(n, size=(2, 2), replace=False)
    weighted = np.random.choice(5, size=3, p=P5)
    weighted_distinct = np.random.choice(5, 3, False, P5)
    return one, some, distinct, weighted, weighted_distinct


@pytest.mark.parametrize("kind", KINDS)
def test_choice_of_an_int_draws_what_numpy_draws(kind: str) -> None:
    assert_same_draws(choices_of_n, global_choices_of_n, kind, 7)


def choices_of_rows(rng, a):
    one = rng.choice(a)  # an element: np.float64
    some = rng.choice(a, size=4)
    distinct = rng.choice(a, size=(2, 2), replace=False)
    weighted = rng.choice(a, 3, p=P5)
    weighted_distinct = rng.choice(a, size=2, replace=False, p=P5)
    return one, some, distinct, weighted, weighted_distinct


def global_choices_of_rows(a):
    one = np.random.choice(a)
    some = np.random.choice(a, size=4)
    distinct = np.random.choice(a, size=(2, 2), replace=False)
    weighted = np.random.choice(a, 3, p=P5)
    weighted_distinct = np.random.choice(a, size=2, replace=False, p=P5)
    return one, some, distinct, weighted, weighted_distinct


@pytest.mark.parametrize("kind", KINDS)
def test_choice_of_an_array_picks_the_elements_numpy_picks(kind: str) -> None:
    assert_same_draws(choices_of_rows, global_choices_of_rows, kind, RNG.normal(size=5))


def test_a_generator_chooses_rows_of_a_matrix() -> None:
    def rows(rng, a):
        return rng.choice(a, size=3, replace=False), rng.choice(a)

    assert_same_draws(rows, rows, "Generator", RNG.normal(size=(6, 2)))


def test_random_state_refuses_a_matrix_as_numpy_does() -> None:
    def rows(rng, a):
        return rng.choice(a, size=3)

    with pytest.raises(ValueError, match="a must be 1-dimensional"):
        rows(np.random.RandomState(0), np.ones((4, 2)))
    with pytest.raises(ad.AutodiffError, match="prim::Draw: a must be 1-dimensional") as e:
        ad.script(rows)(np.random.RandomState(0), np.ones((4, 2)))
    assert "rng.choice(a, size=3)" in str(e.value)  # the user's line


def test_choice_of_a_0d_array_is_refused_where_it_is_written() -> None:
    # NumPy reads a 0-d array as an int (choice(np.array(5)) draws from range(5)); the compiled
    # code was written to pick elements, so it refuses rather than index a 0-d array.
    def pick(rng, a):
        return rng.choice(a, size=2)

    with pytest.raises(ad.AutodiffError, match=r"choice\(\) of a 0-d array .* int\(a\)") as e:
        ad.script(pick)(np.random.default_rng(0), np.array(5.0))
    assert "rng.choice(a, size=2)" in str(e.value)


def test_choice_of_a_list_is_refused_where_it_is_written() -> None:
    def pick(rng):
        return rng.choice([1.0, 2.0, 3.0])

    with pytest.raises(ad.ScriptError, match=r"choice\(\) of a .* pass an int or an array") as e:
        ad.script(pick)(np.random.default_rng(0))
    assert "rng.choice([1.0, 2.0, 3.0])" in str(e.value)


def test_choice_with_an_axis_is_refused_where_it_is_written() -> None:
    def pick(rng, a):
        return rng.choice(a, 2, axis=1)

    with pytest.raises(ad.ScriptError, match=r"takes a, size, replace, p here, not 'axis'"):
        ad.script(pick)(np.random.default_rng(0), np.ones((2, 3)))


def minibatch_loss(w, x, y, rng):
    """A stochastic gradient step's loss on a minibatch drawn without replacement."""
    batch = rng.choice(len(x), size=4, replace=False)
    residual = x[batch] @ w - y[batch]
    anchors = rng.choice(w, size=2, replace=False)  # a penalty on two weights at random
    return np.mean(residual**2) + np.sum(anchors**2)


def test_gradients_reach_the_chosen_elements() -> None:
    w, x, y = RNG.normal(size=3), RNG.normal(size=(10, 3)), RNG.normal(size=10)
    grad = ad.grad(minibatch_loss)(w, x, y, np.random.default_rng(3))
    expected = central_differences(lambda v: minibatch_loss(v, x, y, np.random.default_rng(3)), w)
    np.testing.assert_allclose(grad, expected, rtol=1e-6, atol=1e-9)

    def picked(a, rng):
        return np.sum(rng.choice(a, size=2, replace=False) ** 2)

    a = np.arange(1.0, 6.0)
    chosen = np.random.default_rng(5).choice(5, size=2, replace=False)
    expected_grad = np.zeros(5)
    expected_grad[chosen] = 2 * a[chosen]  # only the chosen elements get a gradient
    np.testing.assert_array_equal(ad.grad(picked)(a, np.random.default_rng(5)), expected_grad)


def test_a_gradient_through_the_probabilities_is_refused() -> None:
    def weighted(p, rng):
        return np.sum(rng.choice(5, size=3, p=p))

    with pytest.raises(ad.DifferentiationError, match="a random draw has no derivative"):
        ad.grad(weighted)(P5, np.random.default_rng(0))


# ---- permutation and shuffle ----------------------------------------------------------------


def permutations(rng, x):
    return rng.permutation(6), rng.permutation(x), rng.permutation(len(x))


def global_permutations(x):
    return np.random.permutation(6), np.random.permutation(x), np.random.permutation(len(x))


@pytest.mark.parametrize("kind", KINDS)
def test_permutation_draws_what_numpy_draws(kind: str) -> None:
    assert_same_draws(permutations, global_permutations, kind, RNG.normal(size=(5, 2)))


def shuffled_in_place(rng, x):
    y = x.copy()
    rng.shuffle(y)
    rng.shuffle(x)  # the caller's array, shuffled along its first axis
    return y


def global_shuffled_in_place(x):
    y = x[::-1].copy()
    np.random.shuffle(y)
    np.random.shuffle(x)
    return y


@pytest.mark.parametrize("kind", KINDS)
def test_shuffle_writes_the_permuted_rows_in_place(kind: str) -> None:
    fn = global_shuffled_in_place if kind == "global" else shuffled_in_place
    x = RNG.normal(size=(5, 2))
    plain_x, scripted_x = x.copy(), x.copy()
    expected, expected_next = _run(fn, kind, plain_x)
    actual, actual_next = _run(ad.script(fn), kind, scripted_x)
    np.testing.assert_array_equal(actual, expected)
    np.testing.assert_array_equal(scripted_x, plain_x)  # the argument, mutated alike
    assert actual_next == expected_next


def permuted_loss(w, rng):
    order = rng.permutation(w)
    v = w * np.arange(1.0, 5.0)
    rng.shuffle(v)
    return np.sum(order * np.arange(4.0)) + np.sum(v**2 * np.arange(4.0))


def test_gradients_flow_through_permutations_and_shuffles() -> None:
    w = RNG.normal(size=4)
    grad = ad.grad(permuted_loss)(w, np.random.default_rng(2))
    expected = central_differences(lambda v: permuted_loss(v, np.random.default_rng(2)), w)
    np.testing.assert_allclose(grad, expected, rtol=1e-6, atol=1e-9)


def test_shuffle_of_a_list_is_refused_where_it_is_written() -> None:
    def mix(x, rng):
        items = [x, 2 * x]
        rng.shuffle(items)
        return items[0]

    with pytest.raises(ad.ScriptError, match=r"shuffle\(\) of a .* shuffle an array in place"):
        ad.script(mix)(np.ones(2), np.random.default_rng(0))
