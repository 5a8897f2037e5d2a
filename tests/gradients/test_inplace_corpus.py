"""NumPy programs that write in place, to views and to their arguments (issue #7): compiled,
each gives the plain function's result and leaves its arguments as the plain function does, and
its gradient (w.r.t. the values passed in) matches central finite differences.

Note [Functionalisation] in `passes.functionalize` is how: writes become out-of-place operators
and scatters, so differentiation sees pure SSA.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

import autodiff as ad
from autodiff.specialize import argument_type, typed_graph
from ir.ops.registry import is_in_place
from tests.gradients.test_gradient_corpus import assert_close_to_numeric, finite_differences

EPS = 1e-6
IDX = np.array([0, 2, 2, 4])  # a repeated index: NumPy's last write wins, np.add.at adds both


@dataclass(frozen=True)
class Program:
    fn: Callable[..., Any]
    args: tuple[Any, ...]
    wrt: tuple[int, ...]


PROGRAMS: list[Program] = []


def program(*args: Any, wrt: tuple[int, ...] = (0,)) -> Callable[[Any], Any]:
    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        PROGRAMS.append(Program(fn, args, wrt))
        return fn

    return register


RNG = np.random.default_rng(7)
V3 = RNG.standard_normal(3)
V4 = RNG.standard_normal(4)
V5 = RNG.standard_normal(5)
M23 = RNG.standard_normal((2, 3))
M34 = RNG.standard_normal((3, 4))
T234 = RNG.standard_normal((2, 3, 4))


# ---- writes to arrays the function makes --------------------------------------------------------


@program(V5, V3, wrt=(0, 1))
def set_element(x, w):
    y = x.copy()
    y[0] = 5.0 * w[1]
    return np.sum(y * y)


@program(V5, V3, wrt=(0, 1))
def set_slice(x, w):
    y = x * 1.0
    y[1:3] = w[:2]
    return np.sum(np.sin(y))


@program(M34, V3, wrt=(0, 1))
def add_to_a_column(x, v):
    y = x.copy()
    y[:, 2] += v
    return np.sum(y**2)


@program(V5, V5, wrt=(0, 1))
def zero_where_negative(x, w):
    y = x.copy()
    y[y < 0] = 0.0
    return np.sum(y * w)


@program(V5, V4, V5, IDX, wrt=(0, 1, 2))
def repeated_index_last_write_wins(x, v, w, idx):
    y = x.copy()
    y[idx] = v
    return np.sum(y * y * w)


@program(V5, V4, V5, IDX, wrt=(0, 1, 2))
def repeated_index_add_once(x, v, w, idx):
    y = x.copy()
    y[idx] += v
    return np.sum(y * y * w)


@program(V4, V5, IDX, wrt=(0, 1))
def add_at_accumulates(v, w, idx):
    y = np.zeros(5)
    np.add.at(y, idx, v)
    return np.sum(y * w)


@program(V5, V5, wrt=(0, 1))
def overlapping_shift(x, w):
    y = x.copy()
    y[1:] = y[:-1]
    return np.sum(y * w)


@program(V4, V4, wrt=(0, 1))
def divide_and_square_in_place(x, w):
    y = x.copy()
    y /= 2.0
    y **= 2
    y -= w
    return np.sum(y * y)


@program(M34, V3, wrt=(0, 1))
def ellipsis_write(x, w):
    y = x.copy()
    y[..., 0] = w
    return np.sum(y * y)


# ---- aliases and views --------------------------------------------------------------------------


@program(V4, V4, wrt=(0, 1))
def alias_sees_augmented_assignment(x, w):
    y = x * 2.0
    z = y
    z += w
    return np.sum(y * y)


@program(M34, V4, wrt=(0, 1))
def view_scaled_in_place(x, w):
    y = x.copy()
    v = y[0]
    v *= 2.0
    return np.sum(y * w)


@program(M23, V3, wrt=(0, 1))
def write_through_transpose(x, v):
    y = x.copy()
    y.T[:, 0] = v
    return np.sum(y * y)


@program(M23, V3, wrt=(0, 1))
def write_through_reshape(x, w):
    y = x.copy()
    r = y.reshape(6)
    r[1:4] = w
    return np.sum(y**2)


@program(M23, V3, wrt=(0, 1))
def reshape_of_transpose_is_a_copy(x, w):
    y = x.copy()
    r = y.T.reshape(6)
    r[1:4] = w
    return np.sum(y**2) + np.sum(r)


@program(M34, wrt=(0,))
def view_of_a_view(x):
    y = x.copy()
    v = y[1:, :2]
    v[0, 1] = 7.0
    v += 1.0
    return np.sum(y**2)


@program(V5, V3, wrt=(0, 1))
def view_read_after_write(x, w):
    y = x.copy()
    a = y[0:3]
    y[0] = 3.0
    return np.sum(a * w)


@program(V4, wrt=(0,))
def copies_do_not_alias(x):
    y = x.copy()
    z = y.copy()
    z[0] = 100.0
    c = y[[0, 1]]
    c[0] = 100.0
    return np.sum(y * y) + np.sum(z) + np.sum(c)


@program(T234, T234[0, 0], wrt=(0, 1))
def swapaxes_view(x, w):
    y = x.copy()
    s = np.swapaxes(y, 0, 2)
    s[0] += 1.0
    return np.sum(y * w)


@program(V3, V3, wrt=(0, 1))
def expand_dims_view(x, w):
    y = x.copy()
    e = y[None]
    e[0, 1] = w[0]
    return np.sum(y**2)


# ---- control flow -------------------------------------------------------------------------------


@program(M34, V4, 3, wrt=(0, 1))
def accumulate_in_a_loop(x, w, n: int):
    acc = np.zeros(4)
    for i in range(n):
        acc += x[i] * w
    return np.sum(acc**2)


@program(M34, 3, wrt=(0,))
def write_rows_in_a_loop(x, n: int):
    out = np.zeros((n, 4))
    for i in range(n):
        out[i] = np.sin(x[i]) * (i + 1.0)
    return np.sum(out * out)


@program(V3, V3, wrt=(0, 1))
def nested_loops_fill_a_grid(x, w):
    grid = np.zeros((3, 3))
    for i in range(3):
        for j in range(3):
            grid[i, j] = x[i] * w[j]
    return np.sum(grid**2)


@program(V4, V4, wrt=(0, 1))
def write_in_a_branch(x, w):
    y = x.copy()
    if np.sum(x) > 0:
        y[0] = 10.0 * w[0]
    else:
        y[1] *= 3.0
    return np.sum(y * y)


@program(-np.abs(V4), V4, wrt=(0, 1))
def write_in_the_other_branch(x, w):
    return write_in_a_branch(x, w)


@program(V4 * 4, wrt=(0,))
def halve_in_place_while_large(x):
    y = x.copy()
    while np.sum(np.abs(y)) > 1.0:
        y *= 0.5
    return np.sum(y)


# ---- writes to arguments ------------------------------------------------------------------------


@program(V4, V4, wrt=(0, 1))
def argument_increased_in_place(x, w):
    x += w
    return np.sum(x * x)


@program(M34, V4, wrt=(0, 1))
def argument_row_set(x, w):
    x[0] = w
    return np.sum(x * x)


@program(M34, wrt=(0,))
def argument_view_increased(x):
    v = x[1]
    v += 1.0
    return np.sum(x * x)


@program(V4, V4, 4, wrt=(0, 1))
def argument_scaled_in_a_loop(x, w, n: int):
    for i in range(n):
        x[i] *= 2.0 + i
    return np.sum(x * w)


@program(M34, V4, wrt=(0, 1))
def argument_view_read_before_the_write(x, w):
    # sin's gradient reads the row x[0] as passed: a view of x, which f overwrites at its end.
    s = np.sum(np.sin(x[0]) * w)
    x += 1.0
    return s + np.sum(x * x)


@program(V5, IDX, V4, wrt=(0, 2))
def argument_add_at(x, idx, v):
    np.add.at(x, idx, v)
    return np.sum(np.sin(x))


# ---- one element read out of an array: a NumPy scalar, a copy, no view (issue 15, item 2) -------


@program(V5, wrt=(0,))
def element_read_then_base_written(v):
    t = v[1]
    v[1] = 7.0
    return t * np.sum(v * v)


@program(V5, wrt=(0,))
def element_updated_leaves_the_array(y):
    s = y[0]
    s += 5.0
    return s * np.sum(y)


@program(V5, 2, wrt=(0,))
@program(V5, -2, wrt=(0,))
def element_at_an_int_parameter(y, n: int):
    t = y[n]
    y[n] += 1.0
    t -= 1.0
    return t * np.sum(y * y)


@program(M34, 1, wrt=(0,))
@program(M34, -3, wrt=(0,))
def matrix_element_then_row_written(y, n: int):
    t = y[n, -1]
    y[n] = 0.5
    t *= 3.0
    return t + np.sum(y * y)


@program(T234, wrt=(0,))
def rank_3_element_then_written(y):
    t = y[1, -2, 3]
    y[1, -2] *= 3.0
    s = y[0, 0, 0]
    y[0, 0, 0] = t
    s /= 2.0
    return t * s + np.sum(y * y)


@program(V4, 4, wrt=(0,))
def elements_read_and_zeroed_in_a_loop(x, n: int):
    acc = 0.0
    for i in range(n):
        t = x[i]
        x[i] = 0.0
        acc += t * t
    return acc + np.sum(x)


@program(M34, wrt=(0,))
def element_accumulator_in_a_while_loop(x):
    s = x[0, 0]
    i = 1
    while i < 3:
        s **= 1.0
        s += x[i, i]
        x[i, i] = s
        i += 1
    return s * np.sum(x)


# ---- the checks ---------------------------------------------------------------------------------


def fresh(args: tuple[Any, ...]) -> list[Any]:
    """Copies of the arguments, each its own array even where the same one was listed twice:
    two arguments that are one array are taken to be two (a limit the tests stay within)."""
    return [copy.deepcopy(arg) for arg in args]


def params() -> list[Any]:
    return [pytest.param(p, id=p.fn.__name__) for p in PROGRAMS]


def test_the_corpus_is_large_enough() -> None:
    assert len(PROGRAMS) >= 25


@pytest.mark.parametrize("case", params())
def test_results_and_argument_writes_match_numpy(case: Program) -> None:
    plain_args, compiled_args = fresh(case.args), fresh(case.args)
    expected = case.fn(*plain_args)
    actual = ad.script(case.fn)(*compiled_args)
    np.testing.assert_allclose(actual, expected, rtol=1e-12, atol=1e-12)
    for after, plain_after in zip(compiled_args, plain_args, strict=True):
        np.testing.assert_allclose(after, plain_after, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("case", params())
def test_gradients_match_finite_differences(case: Program) -> None:
    plain_args, compiled_args = fresh(case.args), fresh(case.args)
    value, grads = ad.value_and_grad(case.fn, argnums=case.wrt)(*compiled_args)
    np.testing.assert_allclose(value, case.fn(*plain_args), rtol=1e-12, atol=1e-12)
    for after, plain_after in zip(compiled_args, plain_args, strict=True):
        np.testing.assert_allclose(after, plain_after, rtol=1e-12, atol=1e-12)
    for position, grad in zip(case.wrt, grads, strict=True):
        numeric = finite_differences(case.fn, case.args, position, EPS)
        assert_close_to_numeric(grad, numeric, 1e-6, f"argument {position}")


@pytest.mark.parametrize("case", params())
def test_the_typed_graph_has_no_in_place_operator_left(case: Program) -> None:
    parsed = ad.script(case.fn).graph
    assert any(is_in_place(node) for node in parsed.all_nodes())
    types = [argument_type(case.fn.__name__, str(i), a) for i, a in enumerate(case.args)]
    typed = typed_graph(parsed, types)
    assert not any(is_in_place(node) for node in typed.all_nodes())
