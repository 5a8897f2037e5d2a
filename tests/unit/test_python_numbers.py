"""Python numbers where NumPy code meets them: an unannotated parameter given a float or an int
computes as Python does (Note [Python numbers for unannotated parameters] in `autodiff.script`),
a NumPy function given a number sees a 0-d array (Note [Python numbers as arrays] in
`frontend.calls`), and ``np.array``/``np.asarray`` of list literals stack their items."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

import autodiff as ad
from frontend import ScriptError, emit_function
from frontend.parse import parse_source
from ir.interpreter import run_graph
from ir.printer import print_graph
from ir.types import FLOAT, TensorType
from ir.verify import verify
from passes.shape_propagation import specialise


def same(actual: Any, expected: Any) -> None:
    assert type(actual) is type(expected)
    np.testing.assert_array_equal(actual, expected)
    assert np.asarray(actual).dtype == np.asarray(expected).dtype


# ---- unannotated parameters given Python numbers ------------------------------------------------


def square(a, b):
    return b * b


def count(n):
    return n * 2 + 1, np.zeros(n)


@pytest.mark.parametrize("b", [1.5, 3, True, np.float64(1.5), np.array(2.0)])
def test_an_unannotated_parameter_computes_as_the_plain_function(b: Any) -> None:
    same(ad.script(square)(np.ones(2), b), square(np.ones(2), b))


def test_an_int_parameter_fixes_shapes_and_stays_an_int() -> None:
    scripted = ad.script(count)
    number, zeros = scripted(4)
    same(number, 9)
    same(zeros, np.zeros(4))
    assert "prim::mul" in str(scripted.graph_for(4))
    assert "aten::mul" in str(scripted.graph_for(np.int64(4)))


def test_the_graph_for_a_python_number_keeps_the_function_name() -> None:
    assert str(ad.script(square).graph_for(np.ones(2), 2.0)).startswith("graph @square(")


def test_gradient_of_an_unannotated_float() -> None:
    assert ad.grad(square, argnums=1)(np.ones(2), 3.0) == pytest.approx(6.0)


# ---- gradients of Python floats ------------------------------------------------------------------


def twice(a, b: float):
    return b + b


def shifted(a, b: float):
    return 0.5 + b


@pytest.mark.parametrize(("fn", "expected"), [(twice, 2.0), (shifted, 1.0)])
def test_gradient_of_a_sum_of_python_floats(fn: Any, expected: float) -> None:
    grad = ad.grad(fn, argnums=1)(np.ones(3), 1.25)
    assert np.ndim(grad) == 0
    assert float(grad) == expected


# ---- NumPy functions of Python numbers -----------------------------------------------------------


def reductions(b: float, n: int):
    return np.sum(b), np.mean(n), np.max(b * n), np.reshape(b, (1,)), np.prod(True)


def test_numpy_functions_take_python_numbers_as_numpy_does() -> None:
    scripted = ad.script(reductions)
    for actual, expected in zip(scripted(2.5, 3), reductions(2.5, 3), strict=True):
        same(actual, expected)
    assert "aten::asarray" in str(scripted.graph)


def sum_of_a_float(b: float):
    return np.sum(b * b) + np.mean(b)


def test_gradient_through_a_reduction_of_a_python_float() -> None:
    assert float(ad.grad(sum_of_a_float)(1.5)) == pytest.approx(4.0)


# ---- np.array and np.asarray ------------------------------------------------------------------


def from_list(x, s: float):
    return np.array([1.0, s, 2.0 * np.sum(x)]), np.array([[x, x], (x * s, x)])


def test_array_of_a_list_stacks_numbers_and_arrays() -> None:
    x = np.arange(3.0)
    for actual, expected in zip(ad.script(from_list)(x, 0.5), from_list(x, 0.5), strict=True):
        same(actual, expected)


def test_gradient_through_an_array_of_a_list() -> None:
    def loss(x, s: float):
        v, m = from_list(x, s)
        return np.sum(v * v) + np.sum(m * np.arange(12.0).reshape((2, 2, 3)))

    x, s = np.arange(3.0), 0.5
    dx, ds = ad.grad(loss, argnums=(0, 1))(x, s)
    # v = [1, s, 2 sum(x)] and m = [[x, x], [s x, x]], weighted by w.
    w = np.arange(12.0).reshape((2, 2, 3))
    np.testing.assert_allclose(dx, 8.0 * np.sum(x) + w[0, 0] + w[0, 1] + s * w[1, 0] + w[1, 1])
    assert float(ds) == pytest.approx(2 * s + np.sum(x * w[1, 0]))


def writes_through_asarray(x):
    y = np.asarray(x)
    y[0] = 7.0
    z = np.array(x)
    z[1] = -1.0
    return z, np.asarray(1.5)


def test_asarray_of_an_array_is_an_alias_and_array_a_copy() -> None:
    plain, scripted = np.zeros(3), np.zeros(3)
    for actual, expected in zip(
        ad.script(writes_through_asarray)(scripted), writes_through_asarray(plain), strict=True
    ):
        same(actual, expected)
    same(scripted, plain)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("np.array([])", "np.array of an empty list is not supported"),
        ("np.array([x], dtype=np.float32)", "np.array() takes only the array-like here"),
        ("np.asarray(x, np.float32)", "np.asarray() takes only the array-like here"),
        ("np.array([x, x.shape])", "an item of an array literal must be an array or a number"),
        ("np.asarray(x.shape)", "np.asarray() of a value of type int[] is not supported"),
    ],
)
def test_array_literals_outside_the_subset_are_refused(body: str, message: str) -> None:
    fdef = parse_source(f"def refused(x):\n    return {body}\n", "<test>").functions[0]
    with pytest.raises(ScriptError, match=re.escape(message)) as info:
        emit_function(fdef, {"np": np})
    assert str(info.value.source_range).startswith("<test>:2:")


def test_specialising_the_declared_graph_to_a_float_converts_it_where_arrays_are_wanted() -> None:
    def total(a, b):
        return np.sum(b) + np.mean(a)

    parsed = ad.script(total).graph  # b is a Tensor here: aten::sum(%b, ...)
    typed = specialise(parsed, [TensorType("float64", (3,)), FLOAT])
    verify(typed)
    assert "aten::asarray(%b)" in print_graph(typed)
    same(run_graph(typed, np.ones(3), 2.5)[0], total(np.ones(3), 2.5))
