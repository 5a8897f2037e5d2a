"""Python builtins evaluated while compiling (Note [Compile-time builtins] in
`frontend.builtins`): ``type(x) is T``, ``map``, ``sorted``, ``any``/``all``, ``tuple``/``list``,
dict comprehensions and ``dict(zip(...))``, ``slice`` objects, NumPy scalar types as casts,
recursion on values known while compiling and ``zip`` over arrays."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
import pytest

import autodiff as ad
from tests.tree_helpers import assert_trees_close, central_differences

RNG = np.random.default_rng(17)


def check(fn: Any, tree: Any, *rest: Any) -> Any:
    """The compiled value is the plain one, and the gradient w.r.t. the first argument agrees
    with central differences; returns the gradient."""
    np.testing.assert_allclose(ad.script(fn)(tree, *rest), fn(tree, *rest), rtol=1e-12)
    grads = ad.grad(fn)(tree, *rest)
    assert_trees_close(grads, central_differences(fn, tree, *rest), rtol=1e-6, atol=1e-8)
    return grads


# ---- type(x) is T -------------------------------------------------------------------------------


def test_type_comparisons_are_decided_while_compiling() -> None:
    def scale(params, n: int, lr: float):
        total = 0.0
        for p in params:
            if type(p) is tuple:
                total = total + np.sum(p[0] * p[1])
            elif type(p) == dict:  # noqa: E721
                total = total + np.sum(p["w"])
        if type(n) is not int or type(lr) != float:  # noqa: E721
            total = total * 100.0
        if type(n) is type(lr):
            total = total * 7.0
        return total * n * lr

    params = [(RNG.normal(size=3), RNG.normal(size=3)), {"w": RNG.normal(size=2)}]
    check(scale, params, 3, 0.5)
    graph = str(ad.script(scale).graph_for(params, 3, 0.5))
    assert "prim::If" not in graph


def test_type_of_an_array_is_refused_with_the_alternative() -> None:
    def fn(x):
        return x if type(x) is np.ndarray else x * 2.0

    def bare(x):
        kind = type(x)
        return x, kind

    with pytest.raises(ad.ScriptError, match=r"use isinstance\(x, np.ndarray\)") as info:
        ad.script(fn)(np.ones(2))
    assert "type(x) is np.ndarray" in str(info.value)
    assert "^" in str(info.value)
    with pytest.raises(ad.ScriptError, match="only supported compared with a class"):
        ad.script(bare)(np.ones(2))


# ---- isinstance ---------------------------------------------------------------------------------


def test_isinstance_of_pytree_leaves_and_numbers() -> None:
    def tree_sum(t):
        if isinstance(t, (list, tuple)):
            return sum(tree_sum(c) for c in t)
        if isinstance(t, dict):
            return sum(tree_sum(v) for v in t.values())
        if isinstance(t, numbers.Number) and not isinstance(t, np.ndarray):
            return t * 1.0
        return np.sum(t**2)

    def loss(params, x):
        return tree_sum(params) * np.sum(x)

    params = [RNG.normal(size=3), (RNG.normal(size=(2, 2)), {"a": RNG.normal(size=2)})]
    check(loss, params, RNG.normal(size=2))


def test_isinstance_of_arrays_is_decided_where_every_kind_of_array_agrees() -> None:
    def loss(w, params):
        total = np.sum(w)
        if isinstance(w, (list, tuple, dict, str)):  # no array is one: decided
            total = total * 100.0
        for leaf in params:  # leaves of known rank are ndarrays
            if isinstance(leaf, np.ndarray) and not isinstance(leaf, np.generic):
                total = total + np.sum(leaf**2)
        return total

    check(loss, RNG.normal(size=2), [RNG.normal(size=3), RNG.normal(size=(2, 2))])


def test_isinstance_of_an_array_argument_is_decided_per_rank() -> None:
    def loss(w, x):
        if isinstance(w, np.ndarray):
            return np.sum(w * x)
        return w * np.sum(x)

    check(loss, RNG.normal(size=3), RNG.normal(size=3))
    check(loss, RNG.normal(size=(2, 3)), RNG.normal(size=3))
    check(loss, 1.5, RNG.normal(size=3))  # a Python float: not an ndarray
    for zero_d in (np.float64(1.5), np.asarray(1.5)):  # which one the type cannot tell
        with pytest.raises(ad.ScriptError, match="cannot tell while compiling what class"):
            ad.script(loss)(zero_d, np.ones(3))


def test_isinstance_that_depends_on_array_or_numpy_scalar_is_refused() -> None:
    def fn(params):
        return params[0] * 2.0 if isinstance(params[0], np.floating) else params[0]

    with pytest.raises(ad.ScriptError, match="cannot tell while compiling what class") as info:
        ad.script(fn)([np.float64(2.0)])
    assert "isinstance(params[0], np.floating)" in str(info.value)


# ---- map, sorted, tuple, list, dict -------------------------------------------------------------


def test_map_over_lists_with_functions_lambdas_and_numpy() -> None:
    def loss(w, x):
        def affine(a, b):
            return a @ w + b

        norms = list(map(np.sum, [w, w * 2.0]))
        scaled = map(lambda v: v * 3.0, norms)
        outs = tuple(map(affine, [x, 2.0 * x], [1.0, -1.0]))
        return sum(scaled) + np.sum(np.stack(outs)) + sum(map(np.tanh, (w[0], w[1])))

    check(loss, RNG.normal(size=3), RNG.normal(size=(2, 3)))


def test_sorted_of_compile_time_values_and_keys() -> None:
    def loss(params):
        names = sorted(params, key=lambda k: "z" if k == "long" else k, reverse=True)
        widths = sorted([3, 1, 2])
        total = 0.0
        for i, name in enumerate(names):
            total = total + (i + widths[i]) * np.sum(params[name] ** 2)
        return total

    check(loss, {"long": RNG.normal(size=2), "w": RNG.normal(size=3), "mid": RNG.normal(size=1)})


def test_sorted_of_run_time_values_is_refused() -> None:
    def fn(x):
        return sorted([x[0], x[1]])[0]

    with pytest.raises(ad.ScriptError, match=r"use np\.sort"):
        ad.script(fn)(np.ones(2))


def test_tuple_and_list_of_generators_zip_enumerate_and_range() -> None:
    def loss(w):
        parts = tuple(w * i for i in range(1, 4))
        pairs = list(zip(parts, [1.0, 2.0, 3.0], strict=True))
        numbered = tuple(enumerate(parts))
        both = np.concatenate(tuple(w for _ in range(2)))
        return (
            np.sum(np.stack(parts))
            + sum(np.sum(p * c) for p, c in pairs)
            + np.sum(numbered[2][1]) * numbered[2][0]
            + np.sum(both**2)
            + len(list(range(4)))
            + len(tuple())
        )

    check(loss, RNG.normal(size=3))


def test_dict_comprehensions_and_dict_of_zip() -> None:
    def loss(params, x):
        scaled = {k: w * i for i, k in enumerate(["a", "b"]) for w in [params[k]]}
        squares = {name: np.sum(p**2) for name, p in params.items() if name != "skip"}
        layers = dict(zip(["a", "b"], [(params["a"], 1.0), (params["b"], 2.0)], strict=True))
        keyed = dict(scale=3.0, shift=params["a"])
        total = sum(squares.values()) + np.sum(scaled["b"] @ x) + keyed["scale"]
        for W, b in layers.values():
            total = total + np.sum(W) * b
        return total + np.sum(keyed["shift"])

    params = {"a": RNG.normal(size=3), "b": RNG.normal(size=3), "skip": RNG.normal(size=2)}
    check(loss, params, RNG.normal(size=3))


def test_a_dict_comprehension_is_returned_as_a_dict() -> None:
    def fn(params):
        return {k: np.tanh(v) for k, v in params.items()}

    params = {"W": RNG.normal(size=2), "b": RNG.normal(size=2)}
    out = ad.script(fn)(params)
    assert isinstance(out, dict)
    assert set(out) == {"W", "b"}
    np.testing.assert_allclose(out["W"], np.tanh(params["W"]))


def test_dict_comprehension_keys_must_be_known() -> None:
    def fn(x):
        return {x[i]: 1.0 for i in range(2)}

    with pytest.raises(ad.ScriptError, match="dict key must be a string or a number"):
        ad.script(fn)(np.ones(2))


# ---- any, all -----------------------------------------------------------------------------------


@pytest.mark.parametrize("widths", [(1, 2, 4), (1, 2, 3), (0, 5)])
def test_any_and_all_of_constants_fold_while_compiling(widths: tuple[int, ...]) -> None:
    def fn(x):
        scale = 1.0
        if any(w > 3 for w in widths):
            scale = scale * 2.0
        if all(w > 0 for w in widths) and all([]) and not any(()):
            scale = scale * 3.0
        return np.sum(x) * scale

    scripted = ad.script(fn)
    np.testing.assert_allclose(scripted(np.ones(2)), fn(np.ones(2)))
    assert "prim::If" not in str(scripted.graph_for(np.ones(2)))


def test_any_and_all_of_run_time_values_stop_where_python_stops() -> None:
    def fn(x):
        positive = any(f > 0 for f in [x[0], x[1]])
        small = all([np.abs(x[0]) < 1.0, np.abs(x[1]) < 1.0, True])
        return np.sum(x) * (2.0 if positive else 1.0) * (3.0 if small else 1.0)

    scripted = ad.script(fn)
    for x in [np.array([0.5, 0.2]), np.array([-0.5, 4.0]), np.array([-0.5, -0.1])]:
        assert scripted(x) == fn(x)

    def stops(x):  # bool() of a 3-element array is not reached: the first item decides
        return np.sum(x) * any([x[0] > 0, x > 0])

    assert ad.script(stops)(np.ones(3)) == stops(np.ones(3))
    with pytest.raises(Exception, match="truth value"):
        ad.script(stops)(-np.ones(3))


def test_any_of_an_array_is_refused() -> None:
    def fn(x):
        return any(x)

    with pytest.raises(ad.ScriptError, match=r"test the whole array, as np\.max\(x != 0\) does"):
        ad.script(fn)(np.ones(2))


# ---- slice objects ------------------------------------------------------------------------------


def test_slice_objects_in_subscripts() -> None:
    def loss(w, n: int):
        head = slice(0, 2)
        every_other = slice(None, None, 2)
        window = slice(1, n)
        index = (slice(None), 0)
        m = np.outer(w, w)
        return (
            np.sum(w[head] ** 2)
            + np.sum(w[every_other])
            + np.sum(w[window] * 3.0)
            + np.sum(m[index])
            + np.sum(m[slice(1, None), slice(None, 2)])
            + head.stop
        )

    check(loss, RNG.normal(size=5), 4)


def test_a_slice_is_no_tuple() -> None:
    def length(x):
        return len(slice(0, 2)) + np.sum(x)

    def iterated(x):
        for b in slice(0, 2):
            x = x + b
        return x

    def unpacked(x):
        a, b, c = slice(0, 2)
        return x + a + b + c

    for fn, message in [
        (length, "has no len"),
        (iterated, "not iterable"),
        (unpacked, "cannot unpack"),
    ]:
        with pytest.raises(ad.ScriptError, match=message):
            ad.script(fn)(np.ones(3))


def test_a_returned_slice_is_a_slice() -> None:
    def fn(params, n: int):
        return params["x"][:1], slice(1, n)

    out = ad.script(fn)({"x": np.ones(3)}, 2)
    assert out[1] == slice(1, 2, None)


# ---- np.float64(x) and friends ------------------------------------------------------------------


@pytest.mark.parametrize("cast", [np.float64, np.float32, np.int64, np.int32, np.complex128])
@pytest.mark.parametrize(
    "value",
    [2, 2.5, np.arange(3.0), np.float32(1.5), np.asarray(3.0), np.ones((2, 2), np.float32)],
)
def test_casts_give_what_numpy_gives(cast: Any, value: Any) -> None:
    def fn(x):
        return cast(x)

    got = ad.script(fn)(value)
    expected = cast(value)
    assert type(got) is type(expected)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)


def test_casts_of_constants_and_gradients_through_float_casts() -> None:
    def loss(w):
        half = np.float32(w) * np.float32(0.5)
        return np.sum(np.float64(half) ** 2) + np.float64(2) * np.sum(w) + np.int64(3)

    w = RNG.normal(size=3)
    assert ad.script(loss)(w) == pytest.approx(loss(w), rel=1e-6)
    grad = ad.grad(loss)(w)
    expected = central_differences(lambda v: loss(v).astype(np.float64), w, eps=1e-3)
    np.testing.assert_allclose(grad, expected, rtol=1e-3)
    assert grad.dtype == np.float64

    def widened(v):
        return np.sum(np.float64(v) ** 2)

    g32 = ad.grad(widened)(np.ones(2, np.float32))
    assert g32.dtype == np.float32
    np.testing.assert_allclose(g32, 2.0)


# ---- recursion ----------------------------------------------------------------------------------


def fact(n):
    return 1 if n <= 1 else n * fact(n - 1)


def power(x, n: int):
    if n == 0:
        return np.ones_like(x)
    half = power(x, n // 2)
    return half * half * (x if n % 2 else 1.0)


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def is_even(n):
    return True if n == 0 else is_odd(n - 1)


def is_odd(n):
    return False if n == 0 else is_even(n - 1)


def nest(t, depth):
    return t if depth == 0 else nest((t,), depth - 1)


def depth_of(t):
    if isinstance(t, tuple):
        return 1 + depth_of(t[0])
    return 0


def runaway(x, n):
    return runaway(x, n + 1)


def test_recursion_on_ints_known_while_compiling() -> None:
    def loss(w):
        parity = 1.0 if is_even(6) and is_odd(3) else -1.0
        return np.sum(w) * fact(5) + np.sum(power(w, 5)) * fib(10) * parity

    w = RNG.normal(size=3)
    check(loss, w)
    graph = str(ad.script(loss).graph_for(w))
    assert "prim::CallFunction" not in graph
    assert "prim::If" not in graph


def test_structural_recursion_over_nested_tuples() -> None:
    def loss(w):
        return np.sum(w) * depth_of(nest(w, 5))

    check(loss, RNG.normal(size=2))


def test_recursion_in_a_local_function() -> None:
    def loss(params):
        def walk(t, scale):
            if isinstance(t, (list, tuple)):
                return sum(walk(c, scale * 2.0) for c in t)
            return scale * np.sum(np.tanh(t))

        return walk(params, 1.0)

    check(loss, [RNG.normal(size=2), [RNG.normal(size=3), (RNG.normal(size=(2, 2)),)]])


def test_recursion_whose_depth_is_known_only_at_run_time_is_refused() -> None:
    def loss(w, n: int):
        return w * fact(n)

    def deep(w):
        return runaway(w, 0)

    refused = r"recursive call to 'fact' with arguments of the same kind, not known while"
    with pytest.raises(ad.ScriptError, match=refused) as info:
        ad.script(loss)(np.ones(2), 3)
    assert "fact(n - 1)" in str(info.value)
    with pytest.raises(ad.ScriptError, match="recursion of 'runaway' goes deeper than 64 levels"):
        ad.script(deep)(np.ones(2))


# ---- zip over arrays ----------------------------------------------------------------------------


def test_zip_over_arrays_is_a_loop_in_the_ir() -> None:
    def loss(w, X, Y):
        total = 0.0
        for x, y in zip(X, Y, strict=False):
            total = total + (np.tanh(x @ w) - y) ** 2
        for i, (x, y) in enumerate(zip(X, Y[:2], strict=False), 1):  # the shorter decides
            total = total + i * np.sum(x * w) * y
        return total

    w, X, Y = RNG.normal(size=3), RNG.normal(size=(5, 3)), RNG.normal(size=5)
    check(loss, w, X, Y)
    graph = str(ad.script(loss).graph_for(w, X, Y))
    assert graph.count("prim::Loop") == 2
    assert "aten::tanh" in graph
    assert graph.count("aten::tanh") == 1  # not unrolled


def test_zip_of_arrays_of_different_lengths_stops_at_the_shortest() -> None:
    def fn(a, b, c):
        rows = 0
        total = np.zeros(2)
        for x, y, z in zip(a, b, c, strict=False):
            total = total + x * y + z
            rows = rows + 1
        return total * rows

    a, b, c = np.ones((4, 2)), np.full((2, 2), 2.0), np.arange(6.0).reshape(3, 2)
    np.testing.assert_allclose(ad.script(fn)(a, b, c), fn(a, b, c))
    np.testing.assert_allclose(ad.script(fn)(a[:0], b, c), fn(a[:0], b, c))


def test_zip_of_an_array_and_a_list_is_refused() -> None:
    def mixed(x):
        total = 0.0
        for row, scale in zip(x, [1.0, 2.0], strict=False):
            total = total + np.sum(row) * scale
        return total

    def strict(x, y):
        for a, b in zip(x, y, strict=True):
            x = x + a * b
        return x

    with pytest.raises(ad.ScriptError, match=r"zip\(\) of an array and a") as info:
        ad.script(mixed)(np.ones((2, 2)))
    assert "[1.0, 2.0]" in str(info.value)
    with pytest.raises(ad.ScriptError, match="strict=True cannot be checked"):
        ad.script(strict)(np.ones(2), np.ones(2))


def test_any_of_items_that_draw_is_refused_since_python_stops_early() -> None:
    """Every item is emitted before the first is tested: draws after the deciding item would
    move the stream on, unlike Python's any(), a silent difference in the next draws."""

    def draws_until_positive(x, rng):
        if any(rng.normal() > 0 for _ in range(3)):
            return np.sum(x)
        return np.sum(x) * 2.0

    with pytest.raises(ad.ScriptError, match=r"any\(\) of items that draw") as error:
        ad.script(draws_until_positive)(np.ones(2), np.random.default_rng(0))
    assert "rng.normal() > 0 for _ in range(3)" in str(error.value)

    def pure_items(x):
        return np.sum(x) if all(v > 0 for v in [np.sum(x), np.max(x)]) else 0.0

    assert ad.script(pure_items)(np.ones(2)) == 2.0


def sorted_by_computed_keys(a):
    largest = sorted([0.5, -2.0, 1.0], key=abs)[-1]
    first = sorted([3, 1, 2], key=lambda c: -c)[0]
    return largest * np.sum(a) + first


def test_sorted_folds_keys_computed_on_constants() -> None:
    """``key=abs`` of numbers known while compiling gives keys folded then (it was refused:
    tests/regressions/142.py)."""
    a = np.array([0.5, 1.5])
    assert ad.script(sorted_by_computed_keys)(a) == pytest.approx(sorted_by_computed_keys(a))
    np.testing.assert_allclose(ad.grad(sorted_by_computed_keys)(a), np.full(2, -2.0))
