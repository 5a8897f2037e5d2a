"""Python's own constructs applied to arrays, compiled as Python runs them (issue 17, found by
the fuzzer's new idioms): ``np.array`` of a list comprehension or of a list built in a loop,
``enumerate(x.T)``, and ``max``/``min`` with arrays among their operands."""

from __future__ import annotations

import numpy as np
import pytest

import autodiff as ad
from tests.tree_helpers import central_differences

X = np.array([0.3, -1.2, 0.8])


def stacked_rows(x):
    return np.array([x * i for i in range(3)])


def stacked_in_a_loop(x):
    rows = []
    for i in range(3):
        rows.append(np.tanh(x * i))
    return np.asarray(rows)


def stacked_scalars(x):
    return np.array([np.sum(x**i) for i in range(1, 4)])


def stacked_tuple(x):
    return np.array(tuple(x * i for i in range(2)))


@pytest.mark.parametrize("fn", [stacked_rows, stacked_in_a_loop, stacked_scalars, stacked_tuple])
def test_np_array_of_a_list_value_stacks_its_items(fn) -> None:
    got, expected = ad.script(fn)(X), fn(X)
    assert got.shape == expected.shape
    assert got.dtype == expected.dtype
    np.testing.assert_allclose(got, expected)

    def loss(x):
        return np.sum(np.sin(fn(x)))

    np.testing.assert_allclose(ad.grad(loss)(X), central_differences(loss, X), rtol=1e-6)


def of_a_generator(x):
    return np.array(x * i for i in range(3))


def test_np_array_of_a_generator_expression_is_refused_where_written() -> None:
    with pytest.raises(ad.ScriptError, match="0-d array of objects") as error:
        ad.script(of_a_generator)(X)
    assert "x * i for i in range(3)" in str(error.value)


def columns_numbered(x):
    total = 0.0
    for i, column in enumerate(x.T):
        total = total + i * np.sum(column**2)
    return total


def test_enumerate_of_an_attribute_of_an_array_is_a_loop_over_its_rows() -> None:
    x = np.arange(6.0).reshape(2, 3)
    assert ad.script(columns_numbered)(x) == pytest.approx(columns_numbered(x))
    np.testing.assert_allclose(
        ad.grad(columns_numbered)(x), central_differences(columns_numbered, x), rtol=1e-6
    )
    graph = str(ad.script(columns_numbered).graph_for(x))
    assert "prim::Loop" in graph  # not unrolled


def clipped(x, y, n):
    return max(np.sum(x), np.sum(y), 0.5) * min(np.sum(x * x), 1.0) * max(n, 1)


def test_max_and_min_with_arrays_compare_as_python_does() -> None:
    y = np.array([0.5, 0.1, -0.2])
    for x in (X, -X, np.zeros(3)):
        assert ad.script(clipped)(x, y, 3) == pytest.approx(clipped(x, y, 3))
        got = ad.grad(clipped, argnums=(0, 1))(x, y, 3)
        expected = (
            central_differences(lambda v: clipped(v, y, 3), x),
            central_differences(lambda v, x=x: clipped(x, v, 3), y),
        )
        for g, e in zip(got, expected, strict=True):
            np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-8)


def biggest(a, b):
    return max(a, b)


def test_max_of_arrays_of_several_elements_raises_as_python_does() -> None:
    with pytest.raises(ValueError, match="truth value"):
        biggest(np.ones(2), np.zeros(2))
    with pytest.raises(ad.AutodiffError, match="truth value of an array") as error:
        ad.script(biggest)(np.ones(2), np.zeros(2))
    assert "max(a, b)" in str(error.value)


def checks_its_shape(x):
    assert x.shape == (3, 4), "x must be 3 x 4"
    scale = 2.0 if x.shape[::-1] == (4, 3) else 1.0
    listed = 1.0 if x.shape == [3, 4] else 0.0  # a tuple never equals a list
    return np.sum(x) * scale + listed + (0.5 if x.shape != (3, 4) else 0.0)


def test_shapes_compare_with_tuples_as_python_compares_them() -> None:
    """``x.shape == (3, 4)`` (it was refused while specialising, found by the fuzzer's call
    idioms): Python's equality of tuples and lists of numbers."""
    x = np.ones((3, 4))
    assert ad.script(checks_its_shape)(x) == checks_its_shape(x)
    np.testing.assert_allclose(ad.grad(checks_its_shape)(x), np.full((3, 4), 2.0))
    with pytest.raises(AssertionError, match="x must be 3 x 4"):
        ad.script(checks_its_shape)(np.ones((2, 4)))
