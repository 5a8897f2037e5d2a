"""`ad.script` and ScriptFunction: argument binding, types and cache keys, specialisation,
caching, and behaving like the plain function."""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import numpy as numpy_module
import pytest

import autodiff as ad
from autodiff.specialize import (
    ArgumentError,
    argument_type,
    bind_arguments,
    runtime_value,
    signature_key,
)
from ir.graph import Graph
from ir.printer import print_graph
from ir.types import BOOL, FLOAT, INT, TensorType


def three(x, y, z=2.0):
    return x * y + z


def one(x):
    return x


def two_defaults(x, a=1, b=2):
    return x + a + b


def python_error(fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    with pytest.raises(TypeError) as info:
        fn(*args, **kwargs)
    return str(info.value)


@pytest.mark.parametrize(
    ("fn", "args", "kwargs"),
    [
        (three, (1,), {}),
        (three, (), {}),
        (three, (1, 2, 3, 4), {}),
        (three, (1, 2), {"w": 1}),
        (three, (1, 2), {"x": 1}),
        (one, (1, 2), {}),
        (one, (), {}),
        (two_defaults, (1, 2, 3, 4, 5), {}),
        (two_defaults, (), {"a": 1}),
    ],
)
def test_binding_errors_read_as_python_s(
    fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    with pytest.raises(ArgumentError) as info:
        bind_arguments(fn.__qualname__, inspect.signature(fn), args, kwargs)
    assert info.value.message == python_error(fn, args, kwargs)
    assert isinstance(info.value, TypeError)


def test_binding_applies_defaults_and_keywords() -> None:
    signature = inspect.signature(three)
    assert bind_arguments("three", signature, (1,), {"y": 2}) == [1, 2, 2.0]
    assert bind_arguments("three", signature, (), {"z": 5, "y": 4, "x": 3}) == [3, 4, 5]


def test_runtime_values() -> None:
    x = np.ones(3)
    assert runtime_value("f", "x", x) is x
    scalar = np.float32(1.5)
    assert runtime_value("f", "s", scalar) is scalar
    for number in (1, 1.5, True):
        assert runtime_value("f", "n", number) is number
    nested = runtime_value("f", "x", [[1.0, 2.0], [3.0, 4.0]])
    assert isinstance(nested, np.ndarray)
    assert nested.dtype == np.float64
    assert nested.shape == (2, 2)
    assert runtime_value("f", "x", (1, 2, 3)).dtype == np.int64


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("abc", "argument 'x' of f() is a str; expected a NumPy array, a NumPy scalar, a Python"),
        (None, "argument 'x' of f() is None; expected a NumPy array"),
        ({"a": 1}, "argument 'x' of f() is a dict; expected"),
        (object(), "argument 'x' of f() is an object; expected"),
        ([[1.0, 2.0], [3.0]], "argument 'x' of f() is a ragged list: its items do not have one"),
        (["a", "b"], "argument 'x' of f() is a list of str"),
    ],
)
def test_runtime_value_errors(value: Any, message: str) -> None:
    with pytest.raises(ArgumentError) as info:
        runtime_value("f", "x", value)
    assert info.value.message.startswith(message)


def test_argument_types() -> None:
    assert argument_type("f", "x", np.zeros((2, 3), np.float32)) == TensorType("float32", (2, 3))
    assert argument_type("f", "x", np.float64(1.0)) == TensorType("float64", ())
    assert argument_type("f", "x", np.array(1.0)) == TensorType("float64", ())
    assert argument_type("f", "n", 3) == INT
    assert argument_type("f", "n", 3.0) == FLOAT
    assert argument_type("f", "n", False) == BOOL
    with pytest.raises(ArgumentError, match=r"argument 'x' of f\(\) has dtype uint16"):
        argument_type("f", "x", np.zeros(2, np.uint16))


def test_signature_key_ignores_values_of_numbers_but_not_kinds() -> None:
    x = np.zeros((2, 3))
    assert signature_key([x, 1]) == signature_key([np.ones((2, 3)), 7])
    assert signature_key([x, 1]) != signature_key([x, 1.0])
    assert signature_key([x, 1]) != signature_key([x, True])
    assert signature_key([x]) != signature_key([np.zeros((3, 2))])
    assert signature_key([x]) != signature_key([x.astype(np.float32)])
    assert signature_key([np.float64(1.0)]) != signature_key([np.array(1.0)])


# ---- ScriptFunction --------------------------------------------------------------------------


def affine(x, w, b=0.5):
    """The docstring of affine."""
    return x @ w + b


def pair(x, y):
    return x + y, x * y


def test_script_as_decorator_and_call() -> None:
    @ad.script
    def decorated(x):
        return x * 2.0

    assert isinstance(decorated, ad.ScriptFunction)
    np.testing.assert_array_equal(decorated(np.arange(3.0)), np.arange(3.0) * 2.0)
    called = ad.script(affine)
    assert ad.script(called) is called


def test_behaves_like_a_function() -> None:
    scripted = ad.script(affine)
    assert scripted.__name__ == "affine"
    assert scripted.__doc__ == "The docstring of affine."
    assert scripted.__wrapped__ is affine
    assert inspect.signature(scripted) == inspect.signature(affine)
    assert repr(scripted) == "<ScriptFunction affine>"


def test_graph_is_the_parsed_stage() -> None:
    scripted = ad.script(affine)
    assert isinstance(scripted.graph, Graph)
    text = print_graph(scripted.graph)
    assert text.startswith("graph @affine(%x : Tensor, %w : Tensor, %b : Tensor):")
    assert "aten::matmul(%x, %w)" in text


def test_keywords_and_defaults() -> None:
    scripted = ad.script(affine)
    x, w = np.ones((2, 3)), np.ones((3, 4))
    np.testing.assert_array_equal(scripted(x, w), affine(x, w))
    np.testing.assert_array_equal(scripted(w=w, x=x, b=2.0), affine(x, w, 2.0))


def test_graph_for_is_specialised_and_cached() -> None:
    scripted = ad.script(affine)
    x, w = np.ones((2, 3), np.float32), np.ones((3, 4), np.float32)
    graph = scripted.graph_for(x, w)
    assert print_graph(graph).startswith(
        "graph @affine(%x : Float(2, 3), %w : Float(3, 4), %b : float):"
    )
    assert scripted.graph_for(x, w, 3.0) is graph
    scripted(x, w, b=7.0)
    assert len(scripted.cache) == 1
    scripted(x.astype(np.float64), w)
    assert len(scripted.cache) == 2


def test_cache_key_keeps_number_values_out() -> None:
    scripted = ad.script(two_defaults)
    x = np.zeros(2)
    np.testing.assert_array_equal(scripted(x, 1, 2), x + 3)
    np.testing.assert_array_equal(scripted(x, 5, 10), x + 15)
    assert len(scripted.cache) == 1


def test_tuple_results() -> None:
    scripted = ad.script(pair)
    x, y = np.arange(3.0), np.ones(3)
    result = scripted(x, y)
    assert isinstance(result, tuple)
    assert len(result) == 2
    np.testing.assert_array_equal(result[1], x * y)


def test_lists_become_arrays() -> None:
    scripted = ad.script(pair)
    total, product = scripted([1.0, 2.0], np.array([3.0, 4.0]))
    np.testing.assert_array_equal(total, [4.0, 6.0])
    np.testing.assert_array_equal(product, [3.0, 8.0])


def test_arrays_are_not_copied() -> None:
    @ad.script
    def identity(x):
        return x

    x = np.ones(4)
    assert identity(x) is x


def test_mutation_reaches_the_caller() -> None:
    @ad.script
    def zero_first(x):
        x[0] = 0.0
        return x

    x = np.ones(3)
    zero_first(x)
    np.testing.assert_array_equal(x, [0.0, 1.0, 1.0])


def test_python_numbers_in_and_out() -> None:
    @ad.script
    def scale(a: float, n: int):
        return a * n

    assert scale(1.5, 2) == 3.0
    assert type(scale(1.5, 2)) is float


def test_array_for_an_annotated_int_is_an_error() -> None:
    @ad.script
    def repeat(x, n: int):
        return x * n

    with pytest.raises(ad.ArgumentError, match=r"argument 'n' of .*repeat\(\) is annotated int"):
        repeat(np.ones(2), np.ones(2))
    np.testing.assert_array_equal(repeat(np.ones(2), 3), [3.0, 3.0])


def exp_under_another_name(x):
    return numpy_module.exp(x)


def test_numpy_under_the_name_globals_give_it() -> None:
    scripted = ad.script(exp_under_another_name)
    np.testing.assert_array_equal(scripted(np.zeros(2)), np.ones(2))


def _keep(_maker: Any) -> Any:
    return lambda fn: fn


@_keep(lambda rng, n: rng.standard_normal(n))
def decorated_with_a_lambda(x):
    return np.sum(x * 2.0)


def test_decorators_run_in_python_and_are_not_scripted() -> None:
    # A decorator may use constructs outside the subset (here a lambda): it is not compiled.
    scripted = ad.script(decorated_with_a_lambda)
    assert scripted(np.ones(3)) == 6.0


@ad.script
def scripted_tanh(x):
    return np.tanh(x)


def calls_a_scripted_function(x):
    return np.sum(scripted_tanh(x) * 3.0)


def test_a_scripted_function_may_call_another_one() -> None:
    x = np.linspace(-1.0, 1.0, 4)
    scripted = ad.script(calls_a_scripted_function)
    np.testing.assert_allclose(scripted(x), np.sum(np.tanh(x) * 3.0), rtol=1e-15)
    assert "prim::CallFunction" not in print_graph(scripted.graph)  # inlined
    np.testing.assert_allclose(
        ad.grad(calls_a_scripted_function)(x), 3.0 * (1.0 - np.tanh(x) ** 2), rtol=1e-12
    )
