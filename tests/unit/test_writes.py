"""Writes into arrays (Note [Writes] in `frontend.subscripts`): the graph as parsed, with its
in-place operators not yet functionalised, run by the interpreter, gives the plain function's
results and leaves its arguments mutated exactly as the plain function does."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import autodiff as ad
from frontend.emit import emit_function
from frontend.environment import assigned_names
from frontend.parse import parse_source
from ir.interpreter import run_graph
from ir.ops import OPS
from ir.types import ANY

RNG = np.random.default_rng(7)
Y = RNG.standard_normal((4, 5))
ROW = RNG.standard_normal(5)
COLUMN = RNG.standard_normal(4)
REPEATED = np.array([1, 3, 1, 0])


def write_row(y, v):
    y[0] = v
    return y.sum()


def write_element_of_vector(y, v: float):
    y[2] = v
    return y


def write_rows(y, v):
    y[1:3] = v
    return y * 2


def add_to_column(y, v):
    y[:, 2] += v
    return y[:, 2]


def zero_masked(y):
    y[y > 0] = 0
    return y


def write_repeated_indices(y, idx, v):
    y[idx] = v
    return y


def increment_repeated_indices(y, idx):
    y[idx] += 1.0  # NumPy increments each listed row once: the last write wins
    return y


def alias_updated(y):
    z = y
    z += 1
    return y, z


def view_updated(y):
    v = y[0]
    v *= 2
    return y


def add_at_repeated(y, idx):
    np.add.at(y, idx, 1.0)
    return y


def copy_does_not_alias(x):
    c = x.copy()
    c[0] = 0.0
    d = np.copy(x)
    d += 1.0
    return c, d


def write_whole(y, v):
    y[...] = v
    y[:] += 1.0
    return y


def write_after_ellipsis_and_newaxis(y, v):
    y[..., 1] = v
    y[1:, None] = 5.0
    return y


def scalar_update_rebinds(x: float, y):
    x += 1.0
    s = np.sum(y)
    s *= 2.0
    return x, s


def write_in_loop(y, n: int):
    for i in range(n):
        y[i] = i * 1.0
        y += 1.0
    return y


def write_only_in_loop(y, n: int):
    for i in range(n):
        y[i] = y[i - 1] * 2.0
    return y


def write_in_branch(y, c: bool):
    if c:
        y[0, 0] = -1.0
    else:
        y[1:, 1:] *= 0.5
    return y


def tuple_write(y, v):
    y[0], y[1] = v, v * 2
    return y


def slices_then_array(y, idx):
    y[1:, idx] = 7.0
    return y


PROGRAMS: list[tuple[Callable[..., Any], tuple[Any, ...]]] = [
    (write_row, (Y, ROW)),
    (write_element_of_vector, (ROW, 4.5)),
    (write_rows, (Y, ROW)),
    (add_to_column, (Y, COLUMN)),
    (zero_masked, (Y,)),
    (write_repeated_indices, (Y, REPEATED, ROW)),
    (increment_repeated_indices, (Y, REPEATED)),
    (alias_updated, (Y,)),
    (view_updated, (Y,)),
    (add_at_repeated, (Y, REPEATED)),
    (add_at_repeated, (ROW, REPEATED)),
    (copy_does_not_alias, (Y,)),
    (write_whole, (Y, ROW)),
    (write_after_ellipsis_and_newaxis, (Y, COLUMN)),
    (scalar_update_rebinds, (1.5, Y)),
    (write_in_loop, (Y, 3)),
    (write_only_in_loop, (Y, 4)),
    (write_in_branch, (Y, True)),
    (write_in_branch, (Y, False)),
    (tuple_write, (Y, ROW)),
    (slices_then_array, (Y, np.array([0, 2]))),
]


def assert_same(actual: Any, expected: Any) -> None:
    assert type(actual) is type(expected), (type(actual), type(expected))
    if isinstance(expected, tuple | list):
        for a, e in zip(actual, expected, strict=True):
            assert_same(a, e)
    elif isinstance(expected, np.ndarray | np.generic):
        assert actual.dtype == expected.dtype
        np.testing.assert_array_equal(actual, expected)
    else:
        assert actual == expected


@pytest.mark.parametrize(
    ("fn", "args"), PROGRAMS, ids=[f"{fn.__name__}-{i}" for i, (fn, _) in enumerate(PROGRAMS)]
)
def test_parsed_graph_mutates_like_numpy(fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
    plain_args = copy.deepcopy(args)
    graph_args = copy.deepcopy(args)
    expected = fn(*plain_args)
    (actual,) = run_graph(ad.script(fn).graph, *graph_args)
    assert_same(actual, expected)
    for mutated, reference in zip(graph_args, plain_args, strict=True):
        assert_same(mutated, reference)


def test_results_that_alias_an_argument_are_that_argument() -> None:
    y = Y.copy()
    (result,) = run_graph(ad.script(view_updated).graph, y)
    assert result is y


def test_copy_is_a_new_array() -> None:
    x = Y.copy()
    (result,) = run_graph(ad.script(copy_does_not_alias).graph, x)
    c, d = result
    assert not np.shares_memory(c, x)
    assert not np.shares_memory(d, x)
    np.testing.assert_array_equal(x, Y)


def test_subscript_writes_bind_no_name() -> None:
    """``y[0] = v`` writes into ``y``; only ``y += x`` rebinds it (to what copy_ returns), so
    only that makes ``y`` a loop-carried name."""
    text = "def f(y, z, v):\n    y[0] = v\n    y[1:] += v\n    z += v\n    (a, y[2]) = v, v\n"
    (function,) = parse_source(text).functions
    assert assigned_names(function.body) == ["z", "a"]


def test_loop_write_leaves_the_array_uncarried() -> None:
    graph = ad.script(write_only_in_loop).graph
    (loop,) = [node for node in graph.nodes() if node.kind == "prim::Loop"]
    assert list(loop.outputs) == []  # the write reaches y in place; functionalisation carries it


def helper(x):
    return x * 2.0


def test_update_of_a_value_typed_any_is_in_place_and_rebinds_a_number() -> None:
    """A callee's result is typed Any when the callee is not compiled first: ``h += 1`` emits
    the in-place form, whose kernel writes into an array and rebinds anything else."""
    text = "def f(x):\n    h = helper(x)\n    h += 1.0\n    return h\n"
    (function,) = parse_source(text).functions
    graph, _ = emit_function(function, {"helper": helper})
    (update,) = [node for node in graph.nodes() if node.kind == "aten::copy_"]
    assert update.inputs[0].ty is ANY
    copy_ = OPS["aten::copy_"].kernel
    assert copy_ is not None
    array = np.zeros(2)
    assert copy_(array, np.ones(2)) is array
    assert copy_(2.0, 3.0) == 3.0


def update_unannotated(x):
    x += 1.0
    return x


def test_update_of_a_number_passed_for_an_array_rebinds() -> None:
    """An unannotated parameter is an array at parse time; a Python number passed for it is
    rebound by ``+=`` (copy_ takes Any for this), compiled and run as parsed alike."""
    scripted = ad.script(update_unannotated)
    assert scripted(2.0) == 3.0
    assert run_graph(scripted.graph, 2.0) == [3.0]
    y = np.zeros(2)
    assert scripted(y) is not None
    np.testing.assert_array_equal(y, [1.0, 1.0])


# ---- results that are the written argument or views of it (Note [Returned arguments]) -------


def return_written_views(x):
    x[0] = 2.0 * x[1] * x[2]
    return x[1:], x, x.T, np.flip(x)


def return_written_argument(x):
    x[1:] *= x[0]
    return x


def return_written_reshape_and_pieces(x):
    x[2] = np.sin(x[0]) * x[3]
    a, b = np.split(x, 2)
    return x.reshape(2, 3), a, (b[::-1], x[:1])


def return_written_in_loop(x, n: int):
    for _ in range(n):
        x[1:] += x[:-1] * 0.5
    return x[::2], x


def return_written_in_branch(x, c: bool):
    if c:
        x[0] = x[1] * x[2]
    return x.T


def return_view_from_a_branch(x, c: bool):
    x[0] = 2.0 * x[1] * x[2]
    y = x[1:].reshape(5, 1) if c else x * 2.0
    return y, x


def return_view_written_in_a_branch(x, c: bool):
    if c:
        x[0] = x[1] * x[2]
        y = x[1:]
    else:
        y = x.T
    return (y, x)


def return_view_from_a_branch_also_read(x, c: bool):
    x[0] = x[1] * x[2]
    y = x[2:] if c else x * 2.0
    return y, np.sum(y) * y


def return_view_written_through(x):
    v = np.flip(x)
    x[0] = 2.0 * x[1]
    v += x[2]
    return v, x


def return_view_written_through_in_a_loop(x, n: int):
    v = x[1:]
    for i in range(n):
        v = x[::2]
        v[1] += x[i] * 2.0
    return v


# A loop's result that NumPy gives as a view of the argument the loop writes: derived again as
# one more carried value (Note [Returned arguments]); ``n = 0`` runs no iteration.
def return_view_from_a_loop(x, n: int):
    v = x[:1]
    for i in range(n):
        x[i] = x[i] * 2.0
        v = x[1:]
    return v


def return_view_taken_before_the_loop_writes(x, n: int):
    v = x
    for i in range(n):
        v = x[::-1]
        x[i] = x[i + 1] * x[i]
    return v


def return_view_from_a_loop_after_a_write(x, n: int):
    x[0] = x[1] * x[2]
    v = x[:2]
    for i in range(n):
        x[i + 1] = np.sin(x[i])
        v = x[1:].reshape(1, 5)
    return v, x


def return_view_from_a_while_loop(x, n: int):
    v = x[1:]
    i = 0
    while i < n:
        x[i] += x[i + 1] * x[i]
        v = x[::2]
        i += 1
    return v


def return_view_from_a_loop_in_a_branch(x, c: bool):
    v = x * 1.0
    if c:
        for i in range(2):
            x[i] = x[i + 2] * x[i]
            v = x[i:]
    return v, x


def return_view_from_a_branch_in_a_loop(x, n: int):
    v = x[:3]
    for i in range(n):
        x[i] = x[i] * x[5]
        v = x[2:] if i % 2 == 0 else x * 3.0
    return v


def return_view_from_nested_loops(x, n: int):
    v = x
    for i in range(n):
        for j in range(2):
            x[j] = x[j] * x[i + 2]
            v = x[j:].T
    return v, (v, x[1:])


def return_tuple_of_views_from_a_loop(x, n: int):
    t = (x, x[:1])
    for i in range(n):
        x[i] = np.cos(x[i]) * x[3]
        t = (x[1:], x[::-1])
    return t


def return_view_the_loop_also_reads(x, n: int):
    v = x[:1]
    s = 0.0
    for i in range(n):
        s = s + np.sum(v)
        x[i] = x[i] * 2.0
        v = x[1:]
    return v, s * v


def return_view_kept_by_later_iterations(x, n: int):
    v = x * 1.0
    for i in range(n):
        for j in range(2):
            if i + j == 0:
                x[0] = x[1] * 5.0
                v = x[1:]
    return v, x


LOOPS = {
    "view_from_loop": (return_view_from_a_loop, (2,)),
    "view_from_loop_no_iteration": (return_view_from_a_loop, (0,)),
    "view_taken_before_loop_writes": (return_view_taken_before_the_loop_writes, (2,)),
    "view_from_loop_after_write": (return_view_from_a_loop_after_a_write, (3,)),
    "view_from_loop_after_write_no_iteration": (return_view_from_a_loop_after_a_write, (0,)),
    "view_from_while": (return_view_from_a_while_loop, (3,)),
    "view_from_while_no_iteration": (return_view_from_a_while_loop, (0,)),
    "view_from_loop_in_branch": (return_view_from_a_loop_in_a_branch, (True,)),
    "copy_from_loop_in_branch": (return_view_from_a_loop_in_a_branch, (False,)),
    "view_from_branch_in_loop": (return_view_from_a_branch_in_a_loop, (3,)),
    "copy_from_branch_in_loop": (return_view_from_a_branch_in_a_loop, (2,)),
    "view_from_nested_loops": (return_view_from_nested_loops, (2,)),
    "view_from_nested_loops_no_iteration": (return_view_from_nested_loops, (0,)),
    "tuple_of_views_from_loop": (return_tuple_of_views_from_a_loop, (2,)),
    "tuple_of_views_no_iteration": (return_tuple_of_views_from_a_loop, (0,)),
    "view_loop_also_reads": (return_view_the_loop_also_reads, (3,)),
    "view_kept_by_later_iterations": (return_view_kept_by_later_iterations, (2,)),
}


RETURNED = {
    "views": (return_written_views, ()),
    "argument": (return_written_argument, ()),
    "reshape_and_pieces": (return_written_reshape_and_pieces, ()),
    "loop": (return_written_in_loop, (3,)),
    "branch": (return_written_in_branch, (True,)),
    "branch_not_taken": (return_written_in_branch, (False,)),
    "view_from_branch": (return_view_from_a_branch, (True,)),
    "copy_from_branch": (return_view_from_a_branch, (False,)),
    "view_written_in_branch": (return_view_written_in_a_branch, (True,)),
    "view_not_written_in_branch": (return_view_written_in_a_branch, (False,)),
    "view_from_branch_also_read": (return_view_from_a_branch_also_read, (True,)),
    "view_written_through": (return_view_written_through, ()),
    "view_written_through_in_loop": (return_view_written_through_in_a_loop, (2,)),
    **LOOPS,
}
ARGUMENT = np.array([0.7, -1.3, 0.4, 2.1, -0.6, 1.5])


def _leaves(result: Any) -> list[Any]:
    if isinstance(result, tuple | list):
        return [leaf for item in result for leaf in _leaves(item)]
    return [result]


@pytest.mark.parametrize("executor", ["codegen", "interpreter"])
@pytest.mark.parametrize("name", list(RETURNED))
def test_returned_written_argument_aliases_as_in_numpy(
    name: str, executor: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A result that NumPy gives as the argument written to, or a view of it, is that array
    (a fresh array before): it shares memory with the argument, and the caller's write into
    it changes the argument, in plain calls and in ad.vjp's forward."""
    monkeypatch.setenv("AUTODIFF_EXECUTOR", executor)
    fn, extra = RETURNED[name]
    plain_argument, compiled_argument, vjp_argument = (ARGUMENT.copy() for _ in range(3))
    expected = _leaves(fn(plain_argument, *extra))
    compiled = _leaves(ad.script(fn)(compiled_argument, *extra))
    outputs, _ = ad.vjp(ad.script(fn), vjp_argument, *extra)
    for actual, argument in ((compiled, compiled_argument), (_leaves(outputs), vjp_argument)):
        np.testing.assert_array_equal(argument, plain_argument)
        for result, reference in zip(actual, expected, strict=True):
            np.testing.assert_array_equal(result, reference)
            assert np.shares_memory(result, argument) == np.shares_memory(reference, plain_argument)
    for result, reference in zip(compiled, expected, strict=True):
        result[...] += 10.0
        reference[...] += 10.0
        np.testing.assert_array_equal(compiled_argument, plain_argument)


def _central_differences_of(loss: Callable[[np.ndarray], float], x: np.ndarray) -> np.ndarray:
    gradient = np.zeros_like(x)
    for index in range(x.size):
        step = np.zeros_like(x)
        step[index] = 1e-6
        gradient[index] = (loss(x + step) - loss(x - step)) / 2e-6
    return gradient


def sum_of_views(x):
    a, b, c, d = return_written_views(x)
    return np.sum(a) + np.sum(b) + np.sum(c) + np.sum(d)


def sum_of_argument(x):
    return np.sum(return_written_argument(x))


def sum_of_reshape_and_pieces(x):
    r, a, (b, c) = return_written_reshape_and_pieces(x)
    return np.sum(r) + np.sum(a) + np.sum(b) + np.sum(c)


def sum_of_loop(x, n: int):
    a, b = return_written_in_loop(x, n)
    return np.sum(a) + np.sum(b)


def sum_of_branch(x, c: bool):
    return np.sum(return_written_in_branch(x, c))


def sum_of_view_from_a_branch(x, c: bool):
    y, z = return_view_from_a_branch(x, c)
    return np.sum(y) + np.sum(z)


def sum_of_view_written_in_a_branch(x, c: bool):
    y, z = return_view_written_in_a_branch(x, c)
    return np.sum(y) + np.sum(z)


def sum_of_view_from_a_loop(x, n: int):
    return np.sum(return_view_from_a_loop(x, n))


def sum_of_view_taken_before_the_loop_writes(x, n: int):
    return np.sum(return_view_taken_before_the_loop_writes(x, n))


def sum_of_view_from_a_loop_after_a_write(x, n: int):
    v, y = return_view_from_a_loop_after_a_write(x, n)
    return np.sum(v) + np.sum(y)


def sum_of_view_from_a_while_loop(x, n: int):
    return np.sum(return_view_from_a_while_loop(x, n))


def sum_of_view_from_a_loop_in_a_branch(x, c: bool):
    v, y = return_view_from_a_loop_in_a_branch(x, c)
    return np.sum(v) + np.sum(y)


def sum_of_view_from_a_branch_in_a_loop(x, n: int):
    return np.sum(return_view_from_a_branch_in_a_loop(x, n))


def sum_of_view_from_nested_loops(x, n: int):
    v, (w, y) = return_view_from_nested_loops(x, n)
    return np.sum(v) + np.sum(w) + np.sum(y)


def sum_of_tuple_of_views_from_a_loop(x, n: int):
    v, w = return_tuple_of_views_from_a_loop(x, n)
    return np.sum(v) + np.sum(w)


def sum_of_view_the_loop_also_reads(x, n: int):
    v, w = return_view_the_loop_also_reads(x, n)
    return np.sum(v) + np.sum(w)


def sum_of_view_kept_by_later_iterations(x, n: int):
    v, y = return_view_kept_by_later_iterations(x, n)
    return np.sum(v) + np.sum(y)


def sum_of_view_from_a_branch_also_read(x, c: bool):
    y, z = return_view_from_a_branch_also_read(x, c)
    return np.sum(y) + np.sum(z)


def sum_of_view_written_through(x):
    v, y = return_view_written_through(x)
    return np.sum(v) + np.sum(y)


def sum_of_view_written_through_in_a_loop(x, n: int):
    return np.sum(return_view_written_through_in_a_loop(x, n))


LOOP_SUMS = {
    "view_from_loop": sum_of_view_from_a_loop,
    "view_from_loop_no_iteration": sum_of_view_from_a_loop,
    "view_taken_before_loop_writes": sum_of_view_taken_before_the_loop_writes,
    "view_from_loop_after_write": sum_of_view_from_a_loop_after_a_write,
    "view_from_loop_after_write_no_iteration": sum_of_view_from_a_loop_after_a_write,
    "view_from_while": sum_of_view_from_a_while_loop,
    "view_from_while_no_iteration": sum_of_view_from_a_while_loop,
    "view_from_loop_in_branch": sum_of_view_from_a_loop_in_a_branch,
    "copy_from_loop_in_branch": sum_of_view_from_a_loop_in_a_branch,
    "view_from_branch_in_loop": sum_of_view_from_a_branch_in_a_loop,
    "copy_from_branch_in_loop": sum_of_view_from_a_branch_in_a_loop,
    "view_from_nested_loops": sum_of_view_from_nested_loops,
    "view_from_nested_loops_no_iteration": sum_of_view_from_nested_loops,
    "tuple_of_views_from_loop": sum_of_tuple_of_views_from_a_loop,
    "tuple_of_views_no_iteration": sum_of_tuple_of_views_from_a_loop,
    "view_loop_also_reads": sum_of_view_the_loop_also_reads,
    "view_kept_by_later_iterations": sum_of_view_kept_by_later_iterations,
}


SUMS = {
    "views": sum_of_views,
    "argument": sum_of_argument,
    "reshape_and_pieces": sum_of_reshape_and_pieces,
    "loop": sum_of_loop,
    "branch": sum_of_branch,
    "branch_not_taken": sum_of_branch,
    "view_from_branch": sum_of_view_from_a_branch,
    "copy_from_branch": sum_of_view_from_a_branch,
    "view_written_in_branch": sum_of_view_written_in_a_branch,
    "view_not_written_in_branch": sum_of_view_written_in_a_branch,
    "view_from_branch_also_read": sum_of_view_from_a_branch_also_read,
    "view_written_through": sum_of_view_written_through,
    "view_written_through_in_loop": sum_of_view_written_through_in_a_loop,
    **LOOP_SUMS,
}


@pytest.mark.parametrize("executor", ["codegen", "interpreter"])
@pytest.mark.parametrize("name", list(RETURNED))
def test_gradients_of_a_returned_written_argument(
    name: str, executor: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The gradients stay w.r.t. the values passed in: ad.vjp of the function, and ad.grad of
    a weighted sum of its results, match central differences of the plain function on fresh
    copies."""
    monkeypatch.setenv("AUTODIFF_EXECUTOR", executor)
    fn, extra = RETURNED[name]
    weights = np.random.default_rng(11).standard_normal(ARGUMENT.size * 5)

    def cotangents(results: Any) -> Any:
        if isinstance(results, tuple | list):
            return type(results)(cotangents(item) for item in results)
        return weights[: results.size].reshape(results.shape) + results.size

    def weighted(x: np.ndarray) -> float:
        results = fn(x.copy(), *extra)
        return sum(
            float(np.sum(r * c))
            for r, c in zip(_leaves(results), _leaves(cotangents(results)), strict=True)
        )

    expected = _central_differences_of(weighted, ARGUMENT)
    outputs, vjp_fn = ad.vjp(ad.script(fn), ARGUMENT.copy(), *extra)
    gradient = vjp_fn(cotangents(outputs))[0]
    np.testing.assert_allclose(gradient, expected, rtol=1e-6, atol=1e-7)

    def summed(x: np.ndarray) -> float:
        return float(sum(np.sum(leaf) for leaf in _leaves(fn(x.copy(), *extra))))

    for _ in range(2):  # the second call takes the gradient cache's hit path
        np.testing.assert_allclose(
            ad.grad(SUMS[name])(ARGUMENT.copy(), *extra),
            _central_differences_of(summed, ARGUMENT),
            rtol=1e-6,
            atol=1e-7,
        )


def loss_with_written_aux(x):
    x[1:] = x[1:] * x[0]
    return np.sum(np.sin(x)), (x, x[::2].T)


@pytest.mark.parametrize("executor", ["codegen", "interpreter"])
def test_value_and_grad_aux_is_the_written_argument(
    executor: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """value_and_grad's aux that NumPy gives as the argument or a view of it is that array, on
    the first call and on the cache-hit path, and the gradient is unchanged."""
    monkeypatch.setenv("AUTODIFF_EXECUTOR", executor)
    function = ad.value_and_grad(loss_with_written_aux, has_aux=True)
    expected_gradient = _central_differences_of(
        lambda x: float(loss_with_written_aux(x.copy())[0]), ARGUMENT
    )
    for _ in range(3):
        argument, plain_argument = ARGUMENT.copy(), ARGUMENT.copy()
        expected_loss, expected_aux = loss_with_written_aux(plain_argument)
        (value, aux), gradient = function(argument)
        assert value == expected_loss
        np.testing.assert_array_equal(argument, plain_argument)
        assert aux[0] is argument
        assert np.shares_memory(aux[1], argument)
        np.testing.assert_array_equal(aux[1], expected_aux[1])
        np.testing.assert_allclose(gradient, expected_gradient, rtol=1e-6, atol=1e-7)


def write_in_a_loop_to_a_copying_ravel(x, b: float):
    y = x * 1.0
    w = y[::-1].ravel()  # NumPy copies: w is an array of its own, not a view of y
    w[0] = np.tanh(b)
    for i in range(2):
        w[i] = np.sin(b) * x[i]
    return w, y


def test_a_loop_writing_a_copy_a_reshape_made_carries_it() -> None:
    """The loop carries the array the write reaches, the reshape's copy, not the array the
    reshape read (the write in the loop was lost); found by the fuzzer (views idiom, seed 12)."""
    x = np.arange(6.0) / 7 + 0.3
    expected = write_in_a_loop_to_a_copying_ravel(x.copy(), 0.5)
    actual = ad.script(write_in_a_loop_to_a_copying_ravel)(x.copy(), 0.5)
    for result, reference in zip(actual, expected, strict=True):
        np.testing.assert_array_equal(result, reference)

    def loss(z: np.ndarray) -> float:
        w, y = write_in_a_loop_to_a_copying_ravel(z.copy(), 0.5)
        return float(np.sum(w * w) + np.sum(y))

    _, vjp_fn = ad.vjp(ad.script(write_in_a_loop_to_a_copying_ravel), x.copy(), 0.5)
    w, y = expected
    gradient = vjp_fn((2.0 * w, np.ones_like(y)))[0]
    np.testing.assert_allclose(gradient, _central_differences_of(loss, x), rtol=1e-6, atol=1e-7)
