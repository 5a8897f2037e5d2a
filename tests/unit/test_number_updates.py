"""``s op= v`` on a Python number, a NumPy scalar and a 0-d array, and integer-indexed reads
(Note [Numbers and 0-d arrays] in `passes.number_updates`): a number or a NumPy scalar is
rebound, an array is written in place, and ``y[i]`` reading every axis of ``y`` is a copy. Each
case must give the plain function's value, leave the arguments as it does, and have the exact
gradient (issue 15, items 1 and 2)."""

from __future__ import annotations

import linecache
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import autodiff as ad
from ir.errors import IRError

X = np.array([[0.61, 0.93], [1.17, 0.71], [0.83, 1.37]])

OPERATORS = ["+=", "-=", "*=", "/=", "//=", "%=", "**="]
# The accumulator's first value: a literal, or a parameter given this number.
ACCUMULATORS = {
    "float literal": ("s = 1.5", None),
    "int literal": ("s = 2", None),
    "float param": ("", 1.5),
    "int param": ("", 2),
}
# Each loop updates ``s`` three times from the rows of ``x``; the branch once or not at all.
SHAPES = {
    "for": "for i in range(x.shape[0]):\n    s {op} {rhs}",
    "while": "i = 0\nwhile i < x.shape[0]:\n    s {op} {rhs}\n    i += 1",
    "branch": "i = 1\nif np.sum(x) > 1.0:\n    s {op} {rhs}\nelse:\n    s = s * 2.0",
    "branch in loop": "for i in range(3):\n    if np.sum(x[i]) > 1.6:\n        s {op} {rhs}",
    "nested loops": "for i in range(3):\n    for j in range(2):\n        s {op} 0.5 * x[i, j]",
}
_made = 0


def make(text: str, params: str = "x") -> Callable[..., Any]:
    """A function made from source text, its source findable by `ad.script` as a file's is."""
    global _made
    _made += 1
    filename = f"<test_number_updates {_made}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(keepends=True), filename)
    namespace: dict[str, Any] = {"np": np}
    exec(compile(text, filename, "exec"), namespace)
    function: Callable[..., Any] = namespace["f"]
    return function


def accumulating(op: str, accumulator: str, shape: str) -> tuple[Callable[..., Any], tuple]:
    start, param = ACCUMULATORS[accumulator]
    # `**=` on rows of x: exponents near 1 keep the result moderate.
    rhs = "(0.5 * np.sum(x[i]))" if op == "**=" else "np.sum(x[i])"
    body = SHAPES[shape].format(op=op, rhs=rhs)
    lines = ([start] if start else []) + body.splitlines() + ["return s"]
    annotation = {None: "", 1.5: ", s: float", 2: ", s: int"}[param]
    text = f"def f(x{annotation}):\n" + "".join(f"    {line}\n" for line in lines)
    args = (X.copy(),) if param is None else (X.copy(), param)
    return make(text), args


def central_difference(fn: Callable[..., Any], x: np.ndarray, *rest: Any) -> np.ndarray:
    eps = 1e-6
    grad = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[index] += eps
        down[index] -= eps
        grad[index] = (fn(up, *rest) - fn(down, *rest)) / (2 * eps)
    return grad


@pytest.mark.parametrize("shape", list(SHAPES))
@pytest.mark.parametrize("accumulator", list(ACCUMULATORS))
@pytest.mark.parametrize("op", OPERATORS)
def test_an_augmented_number_accumulator_gives_the_plain_value_and_gradient(
    op: str, accumulator: str, shape: str
) -> None:
    fn, args = accumulating(op, accumulator, shape)
    expected = fn(*args)
    actual = ad.script(fn)(*args)
    np.testing.assert_allclose(actual, expected, rtol=1e-12)
    assert np.asarray(actual).dtype == np.asarray(expected).dtype
    gradient = ad.grad(fn, argnums=0)(*args)
    np.testing.assert_allclose(gradient, central_difference(fn, *args), rtol=1e-5, atol=1e-7)
    if accumulator == "float param":
        (d_s,) = [ad.grad(fn, argnums=1)(*args)]
        step = 1e-6
        numeric = (fn(args[0], 1.5 + step) - fn(args[0], 1.5 - step)) / (2 * step)
        np.testing.assert_allclose(d_s, numeric, rtol=1e-5, atol=1e-7)


def test_the_issue_example_sums_the_rows() -> None:
    fn = make(
        "def f(x):\n    s = 0.0\n    for t in range(x.shape[0]):\n        s += np.sum(x[t])\n"
        "    return s\n"
    )
    assert ad.script(fn)(X) == pytest.approx(X.sum())
    np.testing.assert_allclose(ad.grad(fn)(X), np.ones_like(X))


@pytest.mark.parametrize("op", OPERATORS)
def test_an_element_read_out_of_an_array_is_updated_as_a_numpy_scalar(op: str) -> None:
    """``s = x[0, 1]`` is a NumPy scalar: ``s op= ...`` rebinds it and leaves ``x`` alone."""
    rhs = "(0.5 * x[i, 0])" if op == "**=" else "x[i, 0]"
    fn = make(
        "def f(x):\n    s = x[0, 1]\n    for i in range(3):\n"
        f"        s {op} {rhs}\n        x[i, 1] = 2.0 * x[i, 1]\n    return s + np.sum(x)\n"
    )
    compiled_x, plain_x = X.copy(), X.copy()
    np.testing.assert_allclose(ad.script(fn)(compiled_x), fn(plain_x), rtol=1e-12)
    np.testing.assert_array_equal(compiled_x, plain_x)
    gradient = ad.grad(fn)(X.copy())
    np.testing.assert_allclose(
        gradient, central_difference(lambda x: fn(x.copy()), X), rtol=1e-5, atol=1e-7
    )


def numpy_scalar_accumulator(x):
    s = np.sum(x[0])
    first = s
    for i in range(1, 3):
        s -= np.sum(x[i])
        s *= 0.5
    return s, first


def zero_d_array_accumulator(x):
    s = np.zeros(())
    first = s  # the same array: it sees every update
    for i in range(3):
        s += np.sum(x[i])
    return s * 2.0, first


def zero_d_array_argument(s, x):
    for i in range(3):
        s -= np.sum(x[i])
    return s * 2.0


def array_product_in_place(a, b):
    c = a.copy()
    c @= b
    return c


@pytest.mark.parametrize(
    ("fn", "args"),
    [
        (numpy_scalar_accumulator, (X,)),
        (zero_d_array_accumulator, (X,)),
        (zero_d_array_argument, (np.array(0.5), X)),
        (array_product_in_place, (X[:2], X[:2].T)),
    ],
    ids=lambda item: item.__name__ if callable(item) else "",
)
def test_numpy_scalars_rebind_and_arrays_update_in_place(fn: Any, args: tuple) -> None:
    plain = [a.copy() for a in args]
    compiled = [a.copy() for a in args]
    expected = fn(*plain)
    actual = ad.script(fn)(*compiled)
    for a, e in zip(
        actual if isinstance(actual, tuple) else (actual,),
        expected if isinstance(expected, tuple) else (expected,),
        strict=True,
    ):
        np.testing.assert_allclose(a, e, rtol=1e-12)
    for a, e in zip(compiled, plain, strict=True):
        np.testing.assert_array_equal(a, e)  # a 0-d array argument is written as NumPy does
    out, vjp_fn = ad.vjp(fn, *[a.copy() for a in args])
    cotangents = (
        tuple(np.ones_like(o) for o in out) if isinstance(out, tuple) else np.ones_like(out)
    )
    grads = vjp_fn(cotangents)
    for position, grad in enumerate(grads if isinstance(grads, tuple) else (grads,)):
        np.testing.assert_allclose(
            grad, central_difference_of_total(fn, args, position), rtol=1e-5, atol=1e-7
        )


def central_difference_of_total(fn: Any, args: tuple, position: int) -> np.ndarray:
    """d(sum of fn's outputs)/d(args[position]), each evaluation on fresh copies."""

    def total(value: np.ndarray) -> float:
        copies = [a.copy() for a in args]
        copies[position] = value.copy()
        out = fn(*copies)
        return float(sum(np.sum(o) for o in (out if isinstance(out, tuple) else (out,))))

    base = np.asarray(args[position], dtype=float)
    grad = np.zeros_like(base)
    eps = 1e-6
    for index in np.ndindex(base.shape):
        up, down = base.copy(), base.copy()
        up[index] += eps
        down[index] -= eps
        grad[index] = (total(up) - total(down)) / (2 * eps)
    return grad


def number_or_zero_d_array(x):
    s = 0.0
    if np.sum(x) > 0.0:
        s = np.zeros(())
    s += 1.0
    return s


def test_an_update_of_a_number_or_a_zero_d_array_is_refused_where_it_is() -> None:
    with pytest.raises(IRError, match="cannot tell whether 's' is a 0-d array") as info:
        ad.script(number_or_zero_d_array)(X)
    assert "s += 1.0" in str(info.value)


def updated_argument(s, x):
    before = s  # the argument itself: an array sees the update, a NumPy scalar does not
    for i in range(3):
        s += np.sum(x[i])
    return s * 2.0, before


@pytest.mark.parametrize(
    "start", [np.float64(0.5), np.array(0.5), 0.5], ids=["numpy scalar", "0-d array", "float"]
)
def test_an_updated_argument_is_rebound_or_written_as_numpy_does(start: Any) -> None:
    """The same function compiled for a NumPy scalar, a 0-d array and a float argument: the
    signature tells them apart, and only the 0-d array is written in place."""
    fresh = start.copy() if isinstance(start, np.ndarray) else start
    compiled_start = start.copy() if isinstance(start, np.ndarray) else start
    expected = updated_argument(fresh, X)
    actual = ad.script(updated_argument)(compiled_start, X)
    for a, e in zip(actual, expected, strict=True):
        np.testing.assert_allclose(a, e, rtol=1e-12)
    np.testing.assert_array_equal(compiled_start, fresh)  # the 0-d array written as NumPy does
    (d_start, d_x) = ad.vjp(updated_argument, compiled_start, X)[1]((1.0, 1.0))

    def total(value: float, x: np.ndarray) -> float:
        as_given = np.array(value) if isinstance(start, np.ndarray) else type(start)(value)
        return float(sum(np.sum(o) for o in updated_argument(as_given, x.copy())))

    eps = 1e-6
    numeric = (total(0.5 + eps, X) - total(0.5 - eps, X)) / (2 * eps)
    np.testing.assert_allclose(d_start, numeric, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(
        d_x, central_difference(lambda x: total(0.5, x), X), rtol=1e-5, atol=1e-7
    )


def assigns_into_an_element(x):
    s = x[0]
    s[...] = 3.0
    return s


def assigns_into_a_sum(x):
    s = np.sum(x)
    s[()] = 3.0
    return s


@pytest.mark.parametrize("fn", [assigns_into_an_element, assigns_into_a_sum])
def test_item_assignment_into_a_numpy_scalar_is_refused_where_it_is(fn: Any) -> None:
    """NumPy raises TypeError ('numpy.float64' object does not support item assignment)."""
    with pytest.raises(TypeError):
        fn(np.arange(3.0))
    with pytest.raises(IRError, match="'s' is a number here") as info:
        ad.script(fn)(np.arange(3.0))
    assert "s[" in str(info.value)


# ---- copies of NumPy scalars (issue 15): ``s.copy()`` stays a scalar, ``np.copy(s)`` is 0-d ----


def method_copy_of_an_element(x):
    s = x[0, 1]
    return s.copy()


def method_copy_of_a_reduction(x):
    return np.sum(x).copy()


def function_copy_of_an_element(x):
    return np.copy(x[0, 1])


def function_copy_of_a_reduction(x):
    return np.copy(np.sum(x * x))


def method_copy_of_a_zero_d_array(x):
    return np.zeros(()).copy() + x[1, 1]


def method_copy_updated(x):
    s = x[0, 0]
    t = s.copy()
    t += 2.0  # a NumPy scalar: rebound, so s keeps its value
    return s * 1.0, t


def function_copy_updated(x):
    t = np.copy(x[0, 0])
    first = t
    t += 2.0  # a 0-d array: updated in place, so first sees it
    return first, t * x[1, 0]


def method_copy_of_a_float32_element(x):
    return x.astype(np.float32)[2, 1].copy()


COPIES = [
    method_copy_of_an_element,
    method_copy_of_a_reduction,
    function_copy_of_an_element,
    function_copy_of_a_reduction,
    method_copy_of_a_zero_d_array,
    method_copy_updated,
    function_copy_updated,
    method_copy_of_a_float32_element,
]


def _kind_of(value: Any) -> tuple[type, Any, tuple[int, ...]]:
    return type(value), np.result_type(value), np.shape(value)


@pytest.mark.parametrize("fn", COPIES, ids=lambda fn: fn.__name__)
def test_a_copy_has_the_type_dtype_and_shape_numpy_gives(fn: Any) -> None:
    expected = fn(X.copy())
    pairs = [(ad.script(fn)(X.copy()), expected), (ad.vjp(fn, X.copy())[0], expected)]
    for actual, want in pairs:
        actuals = actual if isinstance(actual, tuple) else (actual,)
        wants = want if isinstance(want, tuple) else (want,)
        assert len(actuals) == len(wants)
        for a, w in zip(actuals, wants, strict=True):
            assert _kind_of(a) == _kind_of(w)
            np.testing.assert_array_equal(a, w)
    if fn is method_copy_of_a_float32_element:
        return  # its gradient is float32 rounding; its value and kind are what matters here
    out, vjp_fn = ad.vjp(fn, X.copy())
    cotangents = tuple(np.ones_like(o) for o in out) if isinstance(out, tuple) else 1.0
    (grad,) = vjp_fn(cotangents)
    np.testing.assert_allclose(grad, central_difference_of_total(fn, (X,), 0), rtol=1e-6, atol=1e-8)
