# ruff: noqa: SIM108, B007 -- the programs are written as users write them: if statements, loops over unused indices
"""An array that an ``if`` inside a loop gives out (``acc = x`` in a branch) is ``x`` itself in
NumPy: a later write to ``x`` shows through ``acc`` (issue 15, item 2c). Where the compiler
cannot tell at compile time whether ``acc`` is ``x``, it refuses the read (or the write) with a
located error, as it does for an ``if`` or a loop alone (Note [Functionalisation] in
`passes.functionalize`); everything else gives NumPy's values, argument writes and gradients.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import autodiff as ad
from ir.errors import AutodiffError
from tests.gradients.test_gradient_corpus import assert_close_to_numeric, finite_differences

X = np.array([1.3, 1.45, 1.7])  # np.sum(x) > i for every i below: the branch gives out x
Y = np.array([1.0, 2.0, 3.0])


# ---- refused: the read may see a write through an alias that an if in a loop gave out -------


def if_in_a_for_then_written(x, y):
    acc = y
    for i in range(3):
        if np.sum(x) > i:
            acc = x
        else:
            acc = acc * 2.0
    x[0] = 1.0
    return np.sum(acc)  # refused here


def if_in_a_while_then_written(x, y):
    acc = y * 1.0
    i = 0
    while i < 3:
        if np.sum(x) > i:
            acc = x
        i = i + 1
    x[0] = 1.0
    return np.sum(acc)  # refused here


def if_in_a_for_in_an_if_then_written(x, y, c: int):
    acc = y
    if c > 0:
        for i in range(2):
            if np.sum(x) > 0.0:
                acc = x[1:]
            else:
                acc = acc * 2.0
    x[1] = 7.0
    return np.sum(acc)  # refused here


def if_in_nested_loops_then_written(x, y):
    acc = y
    for j in range(2):
        for i in range(2):
            if np.sum(x) > i + j:
                acc = x.T
    x += 1.0
    return np.sum(acc)  # refused here


def if_in_a_for_on_an_array_made_here(x, y):
    z = x * 1.0
    acc = y
    for i in range(3):
        if np.sum(z) > i:
            acc = z
    z[0] = 1.0
    return np.sum(acc * z)  # refused here


def written_in_the_loop_after_an_iteration_gave_it_out(x, y):
    acc = y
    for i in range(3):
        x[1] = x[1] + 1.0
        if np.sum(x) > 6.0:
            acc = acc * 2.0  # refused here
        else:
            acc = x
    return np.sum(acc)


def written_in_the_loop_after_the_if(x, y):
    acc = y
    for i in range(3):
        if np.sum(x) > i:
            acc = x
        x[0] = x[0] + 1.0
    return np.sum(acc)  # refused here (the loop carries acc on: reported at the if)


def kept_by_the_other_branch_after_the_write(x, y):
    acc = y
    s = 0.0
    for i in range(3):
        s = s + np.sum(acc * acc)
        x[0] = x[0] + 1.0
        if np.sum(x) > i:  # refused here: the other branch keeps acc, which may be x as it was
            acc = x
    return s


def written_through_what_the_loop_gave_out(x, y):
    acc = y * 1.0
    for i in range(3):
        if np.sum(x) > i:
            acc = x
    acc[0] = 1.0  # refused here
    return np.sum(x) + np.sum(acc)


def written_through_a_carried_alias_of_another_variable(x, y):
    b = y * 1.0
    acc = y * 2.0
    for i in range(3):
        if np.sum(x) > i:
            acc = b
        if np.sum(x) > 10.0:
            b = b * 2.0
    acc[0] = 7.0  # refused here: acc may be b, which is read after
    return np.sum(b)


def written_through_a_loop_result_that_may_be_its_first_value(x, y):
    w = y * 1.0
    acc = w
    for i in range(3):
        if np.sum(x) > 10.0:
            acc = acc * 2.0
    acc[0] = 7.0  # refused here: no iteration may have rebound acc, and w is read after
    return np.sum(w)


def read_out_of_a_list_after_the_write(x, y):
    held = [x, y * 2.0]
    x[0] = 5.0
    return np.sum(held[0])  # refused here: NumPy's list holds x itself


def list_built_in_a_loop_read_after_the_write(x, y):
    held = []
    for i in range(2):
        held.append(x[i:])
    x[2] = 5.0
    return np.sum(held[1])  # refused here


def written_through_an_element_of_a_list(x, y):
    held = [x * 1.0, y]
    first = held[0]
    first[0] = 5.0  # refused here: the scripted list would not see the write
    return np.sum(held[0])


REFUSED: list[tuple[Callable[..., Any], tuple[Any, ...], str, str]] = [
    (if_in_a_for_then_written, (), "np.sum(acc)", "cannot tell what 'acc' holds here"),
    (if_in_a_while_then_written, (), "np.sum(acc)", "cannot tell what 'acc' holds here"),
    (if_in_a_for_in_an_if_then_written, (1,), "np.sum(acc)", "cannot tell what 'acc' holds"),
    (if_in_nested_loops_then_written, (), "np.sum(acc)", "cannot tell what 'acc' holds here"),
    (if_in_a_for_on_an_array_made_here, (), "acc * z", "cannot tell what 'acc'"),
    (
        written_in_the_loop_after_an_iteration_gave_it_out,
        (),
        "acc * 2.0",
        "cannot tell what 'acc' holds here: the loop carries it, and an iteration may leave it",
    ),
    (written_in_the_loop_after_the_if, (), "if np.sum(x) > i", "cannot tell what 'acc'"),
    (kept_by_the_other_branch_after_the_write, (), "if np.sum(x) > i:", "cannot tell what"),
    (written_through_what_the_loop_gave_out, (), "acc[0] = 1.0", "cannot tell which array"),
    (read_out_of_a_list_after_the_write, (), "held[0]", "cannot tell what 'held' holds here"),
    (list_built_in_a_loop_read_after_the_write, (), "held[1]", "cannot tell what 'held'"),
    (written_through_an_element_of_a_list, (), "first[0] = 5.0", "cannot write to 'first'"),
    (
        written_through_a_carried_alias_of_another_variable,
        (),
        "acc[0] = 7.0",
        "cannot tell which array",
    ),
    (
        written_through_a_loop_result_that_may_be_its_first_value,
        (),
        "acc[0] = 7.0",
        "cannot tell which array",
    ),
]


@pytest.mark.parametrize(
    ("fn", "extra", "marker", "message"), REFUSED, ids=[case[0].__name__ for case in REFUSED]
)
def test_a_read_that_may_see_a_write_through_the_alias_is_refused_where_it_is(
    fn: Callable[..., Any], extra: tuple[Any, ...], marker: str, message: str
) -> None:
    with pytest.raises(AutodiffError) as info:
        ad.script(fn)(X.copy(), Y.copy(), *extra)
    error = info.value
    assert error.message.startswith(message)
    lines, first = inspect.getsourcelines(fn)
    found = [first + i for i, text in enumerate(lines) if marker in text]
    assert len(found) == 1
    assert error.source_range is not None
    assert Path(error.source_range.filename).name == Path(__file__).name
    assert error.source_range.line == found[0]
    assert error.source_range.col == lines[found[0] - first].index(marker) + 1
    *_, caret, link = str(error).splitlines()
    assert "^" in caret
    assert link == "  see docs/language.md#writes-and-views"


# ---- accepted: the alias is not read after a write, or the loop only ever carries new arrays ---


def given_out_and_read_before_the_write(x, y):
    acc = y
    for i in range(3):
        if np.sum(x) > i:
            acc = x
        else:
            acc = acc * 2.0
    s = np.sum(acc * acc)
    x[0] = 1.0
    return s + np.sum(x)


def only_new_arrays_carried_then_written(x, y):
    acc = y * 1.0
    for i in range(3):
        if np.sum(x) > i:
            acc = acc * 2.0
    acc[0] = 1.0
    x[1] = 3.0
    return np.sum(acc * y) + np.sum(x)


def only_new_arrays_carried_in_nested_loops_then_written(x, y):
    acc = y * 1.0
    s = np.sum(acc)  # read before the loops: acc is no other name's array after them
    for j in range(2):
        for i in range(3):
            if np.sum(x) > i + j:
                acc = acc * 2.0
    acc[0] = 7.0
    return np.sum(acc * x) + s


def read_in_the_loop_before_the_write(x, y):
    acc = y
    s = 0.0
    for i in range(3):
        s = s + np.sum(acc * acc)
        x[0] = x[0] + 1.0
        if np.sum(x) > i:
            acc = x
        else:
            acc = x * 2.0
    return s


def copied_where_it_is_assigned(x, y):
    acc = y
    for i in range(3):
        if np.sum(x) > i:
            acc = x.copy()
        else:
            acc = acc * 2.0
    x[0] = 1.0
    return np.sum(acc * x)


def list_read_before_the_write(x, y):
    held = [x * 1.0, x]
    s = np.sum(held[0] * held[1])
    x[0] = 5.0
    return s + np.sum(x)


def element_of_a_tuple_read_after_the_write(x, y):
    pair = (x, y)
    first, second = pair  # the frontend unpacks a tuple it built: first is x itself
    x += 1.0
    return np.sum(first * second)


ACCEPTED = [
    element_of_a_tuple_read_after_the_write,
    list_read_before_the_write,
    given_out_and_read_before_the_write,
    only_new_arrays_carried_then_written,
    only_new_arrays_carried_in_nested_loops_then_written,
    read_in_the_loop_before_the_write,
    copied_where_it_is_assigned,
]


@pytest.mark.parametrize("fn", ACCEPTED, ids=[fn.__name__ for fn in ACCEPTED])
def test_programs_that_read_no_stale_alias_give_numpys_values_and_gradients(
    fn: Callable[..., Any],
) -> None:
    plain_x, compiled_x = X.copy(), X.copy()
    expected = fn(plain_x, Y.copy())
    np.testing.assert_allclose(ad.script(fn)(compiled_x, Y.copy()), expected, rtol=1e-12)
    np.testing.assert_allclose(compiled_x, plain_x, rtol=1e-12)
    for position in (0, 1):
        grad = ad.grad(fn, argnums=position)(X.copy(), Y.copy())
        numeric = finite_differences(fn, (X, Y), position)
        assert_close_to_numeric(grad, numeric, 1e-6, f"argument {position}")
