"""Pytree arguments and results: lists, tuples, dicts, namedtuples and None of arrays and
numbers (Note [Pytree arguments] in `autodiff.pytrees`, Note [Containers known while
compiling] in `frontend.trees`)."""

from __future__ import annotations

import collections
import itertools
from typing import Any, NamedTuple

import numpy as np
import pytest

import autodiff as ad
from autodiff.specialize import ArgumentError
from tests.tree_helpers import assert_trees_close, central_differences

RNG = np.random.default_rng(7)


def layers(*sizes: int) -> list[tuple[np.ndarray, np.ndarray]]:
    return [
        (RNG.normal(size=(m, n)) / np.sqrt(m), RNG.normal(size=n) * 0.1)
        for m, n in itertools.pairwise(sizes)
    ]


# ---- an MLP over a list of (W, b) pairs, written as autograd's examples write it ---------------


def predict(params, inputs):
    for W, b in params:
        outputs = inputs @ W + b
        inputs = np.tanh(outputs)
    return outputs


def mlp_loss(params, inputs, targets):
    return np.mean((predict(params, inputs) - targets) ** 2)


def test_an_mlp_over_a_list_of_pairs_gives_gradients_of_the_same_structure() -> None:
    params = layers(3, 5, 2)
    x, y = RNG.normal(size=(6, 3)), RNG.normal(size=(6, 2))
    assert ad.script(mlp_loss)(params, x, y) == pytest.approx(mlp_loss(params, x, y))
    grads = ad.grad(mlp_loss)(params, x, y)
    assert isinstance(grads, list)
    assert all(isinstance(pair, tuple) for pair in grads)
    assert_trees_close(grads, central_differences(mlp_loss, params, x, y), rtol=1e-5, atol=1e-8)


def test_the_mlp_matches_hips_autograd() -> None:
    autograd = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")

    def loss(params, inputs, targets):
        for W, b in params:
            outputs = inputs @ W + b
            inputs = anp.tanh(outputs)
        return anp.mean((outputs - targets) ** 2)

    params = layers(4, 3, 3, 1)
    x, y = RNG.normal(size=(5, 4)), RNG.normal(size=(5, 1))
    expected = autograd.grad(loss)(params, x, y)
    assert_trees_close(ad.grad(mlp_loss)(params, x, y), [tuple(p) for p in expected])


def test_a_repeated_call_with_one_structure_compiles_once() -> None:
    dloss = ad.grad(mlp_loss)
    params = layers(2, 3, 1)
    x, y = RNG.normal(size=(4, 2)), RNG.normal(size=(4, 1))
    first = dloss(params, x, y)
    for _ in range(3):
        again = dloss(params, x, y)
    assert_trees_close(again, first)
    assert len(dloss.cache) == 1
    # another structure is another signature
    dloss(layers(2, 3, 3, 1), x, y)
    assert len(dloss.cache) == 2


def test_calls_with_a_known_structure_take_the_short_way(monkeypatch: pytest.MonkeyPatch) -> None:
    params = {"layers": layers(2, 3, 1), "scale": 2.0}
    x, y = RNG.normal(size=(4, 2)), RNG.normal(size=(4, 1))

    def loss(params, x, y):
        return mlp_loss(params["layers"], x, y) * params["scale"]

    dloss, scripted = ad.grad(loss), ad.script(loss)
    expected, value = dloss(params, x, y), scripted(params, x, y)

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a call with a known structure bound its arguments again")

    monkeypatch.setattr(ad.GradFunction, "general_call", refuse)
    monkeypatch.setattr(ad.ScriptFunction, "runtime_call", refuse)
    assert_trees_close(dloss(params, x, y), expected)
    assert scripted(params, x, y) == value


def test_indices_of_a_range_over_the_parameters_are_known_while_compiling() -> None:
    def loss(params, x):
        total = 0.0
        for i in range(len(params)):
            W, b = params[i]
            total = total + np.sum(np.tanh(x @ W + b)) * (i + 1)
        return total

    params = layers(3, 3, 3)
    x = RNG.normal(size=(2, 3))
    assert_trees_close(ad.grad(loss)(params, x), central_differences(loss, params, x))


# ---- dicts, namedtuples, None ---------------------------------------------------------------


def rnn_loss(params, xs):
    h = np.zeros(params["Wh"].shape[0])
    total = 0.0
    for t in range(xs.shape[0]):
        h = np.tanh(params["Wh"] @ h + params["Wx"] @ xs[t] + params["b"])
        total = total + np.sum(h * params["out"])
    return total


def test_a_dict_of_parameters_read_by_key_inside_a_loop() -> None:
    params = {
        "Wx": RNG.normal(size=(4, 3)) * 0.5,
        "Wh": RNG.normal(size=(4, 4)) * 0.5,
        "b": RNG.normal(size=4),
        "out": RNG.normal(size=4),
    }
    xs = RNG.normal(size=(5, 3))
    assert ad.script(rnn_loss)(params, xs) == pytest.approx(rnn_loss(params, xs))
    grads = ad.grad(rnn_loss)(params, xs)
    assert isinstance(grads, dict)
    assert list(grads) == list(params)  # the order given
    assert_trees_close(grads, central_differences(rnn_loss, params, xs), rtol=1e-5, atol=1e-7)


def test_dict_methods_iteration_and_len() -> None:
    def loss(params, x):
        total = len(params) * 1.0
        for name, value in params.items():
            total = total + np.sum(value * x) * (2.0 if name == "a" else 1.0)
        for key in params:
            total = total + np.sum(params[key] ** 2)
        for value in params.values():
            total = total + np.sum(np.sin(value))
        return total + np.sum(params.get("a")) + np.sum(params.get("missing", x))

    params = {"b": RNG.normal(size=3), "a": RNG.normal(size=3)}
    x = RNG.normal(size=3)
    assert ad.script(loss)(params, x) == pytest.approx(loss(params, x))
    assert_trees_close(ad.grad(loss)(params, x), central_differences(loss, params, x))


class Layer(NamedTuple):
    W: Any
    b: Any


def test_namedtuple_fields_and_a_namedtuple_gradient() -> None:
    def loss(layer, x):
        return np.sum(np.tanh(x @ layer.W + layer[1]))

    layer = Layer(RNG.normal(size=(3, 2)), RNG.normal(size=2))
    x = RNG.normal(size=(4, 3))
    grads = ad.grad(loss)(layer, x)
    assert isinstance(grads, Layer)
    assert_trees_close(grads, central_differences(loss, layer, x))


def test_none_in_a_tree_and_as_an_argument() -> None:
    def loss(params, x, bias=None):
        W, extra = params
        y = x @ W
        if bias is not None:
            y = y + bias
        if extra is None:
            y = y * 2.0
        return np.sum(y**2)

    W, x, bias = RNG.normal(size=(3, 2)), RNG.normal(size=(2, 3)), RNG.normal(size=2)
    for arguments in [((W, None), x), ((W, None), x, bias), ((W, None), x, None)]:
        expected = loss(*arguments)
        assert ad.script(loss)(*arguments) == pytest.approx(expected)
        (dW, extra) = ad.grad(loss)(*arguments)
        assert extra is None
        expected_dW = central_differences(lambda w, *r: loss((w, None), *r), W, *arguments[1:])
        assert_trees_close(dW, expected_dW)


def test_python_numbers_among_the_leaves_get_float_gradients() -> None:
    def loss(params, x):
        return np.sum(np.tanh(params["scale"] * x + params["shift"]))

    params = {"scale": 1.5, "shift": RNG.normal(size=3)}
    x = RNG.normal(size=3)
    grads = ad.grad(loss)(params, x)
    assert isinstance(grads["scale"], float)
    assert_trees_close(grads, central_differences(loss, params, x))


# ---- argnums, has_aux, value_and_grad, vjp, results ------------------------------------------


def test_argnums_and_has_aux_with_trees() -> None:
    def loss(params, data):
        error = data["x"] @ params["W"] - data["y"]
        return np.mean(error**2), {"error": error, "norms": [np.sum(params["W"] ** 2)]}

    params = {"W": RNG.normal(size=(3, 2))}
    data = {"x": RNG.normal(size=(5, 3)), "y": RNG.normal(size=(5, 2))}
    (value, aux), (dparams, ddata) = ad.value_and_grad(loss, argnums=(0, 1), has_aux=True)(
        params, data
    )
    expected_value, expected_aux = loss(params, data)
    assert value == pytest.approx(expected_value)
    assert isinstance(aux, dict)
    assert isinstance(aux["norms"], list)
    assert_trees_close(aux, expected_aux)
    assert set(ddata) == {"x", "y"}
    assert_trees_close(dparams, central_differences(lambda p, d: loss(p, d)[0], params, data))
    assert_trees_close(ddata, central_differences(lambda d, p: loss(p, d)[0], data, params))


def test_a_plain_call_returns_the_containers_the_function_builds() -> None:
    def forward(params, x):
        h = np.tanh(x @ params[0][0])
        return {"hidden": h, "layers": [h, x], "pair": (h, params[1])}

    params = [(RNG.normal(size=(2, 2)),), Layer(np.ones(1), 2.0)]
    x = RNG.normal(size=(3, 2))
    result = ad.script(forward)(params, x)
    expected = forward(params, x)
    assert isinstance(result["layers"], list)
    assert isinstance(result["pair"][1], Layer)
    assert_trees_close(result, expected)


def forward_of_arrays(w, x, n: int):
    h = np.tanh(x @ w) * n
    return {"hidden": h, "both": [h, x]}


def test_containers_returned_for_array_arguments_are_rebuilt_too() -> None:
    """A regression: with no container among the arguments, a dict result came back as the
    tuple the graph returns (a silent wrong result), for the declared compilation and for one
    specialised to a Python int alike."""
    w, x = RNG.normal(size=(2, 2)), RNG.normal(size=(3, 2))
    for n in (2, 3):
        result = ad.script(forward_of_arrays)(w, x, n)
        assert isinstance(result, dict)
        assert isinstance(result["both"], list)
        assert_trees_close(result, forward_of_arrays(w, x, n))

    def with_aux(w, x):
        h = np.tanh(x @ w)
        return np.sum(h), {"h": h}

    (value, aux), grad = ad.value_and_grad(with_aux, has_aux=True)(w, x)
    assert value == pytest.approx(with_aux(w, x)[0])
    np.testing.assert_allclose(grad, central_differences(lambda v: with_aux(v, x)[0], w))
    assert isinstance(aux, dict)
    assert_trees_close(aux, with_aux(w, x)[1])

    def as_dict(w, x):
        return {"out": x @ w}

    out, vjp_fn = ad.vjp(as_dict, w, x)
    assert isinstance(out, dict)
    g = RNG.normal(size=(3, 2))
    dw, dx = vjp_fn({"out": g})
    np.testing.assert_allclose(dw, x.T @ g)
    np.testing.assert_allclose(dx, g @ w.T)


def test_vjp_takes_a_cotangent_of_the_result_structure() -> None:
    def fn(params, x):
        return {"a": params["W"] @ x, "b": params["s"] * x}

    params = {"W": RNG.normal(size=(2, 3)), "s": 1.5}
    x = RNG.normal(size=3)
    out, vjp_fn = ad.vjp(fn, params, x)
    assert_trees_close(out, fn(params, x))
    ga, gb = RNG.normal(size=2), RNG.normal(size=3)
    dparams, dx = vjp_fn({"a": ga, "b": gb})
    np.testing.assert_allclose(dparams["W"], np.outer(ga, x))
    assert dparams["s"] == pytest.approx(float(gb @ x))
    np.testing.assert_allclose(dx, params["W"].T @ ga + params["s"] * gb)
    dparams, _ = vjp_fn({"a": ga, "b": None})  # None: zeros, as for tuples
    assert dparams["s"] == 0.0
    with pytest.raises(ad.DifferentiationError, match="cotangent must nest like the result"):
        vjp_fn({"a": ga})


def test_helpers_take_and_return_containers() -> None:
    def layer(p, x):
        return {"out": np.tanh(x @ p["W"] + p["b"]), "pre": x}

    def loss(params, x):
        for p in params:
            x = layer(p, x)["out"]
        return np.sum(x)

    params = [{"W": W, "b": b} for W, b in layers(3, 4, 2)]
    x = RNG.normal(size=(2, 3))
    assert_trees_close(ad.grad(loss)(params, x), central_differences(loss, params, x))


def test_a_write_into_a_leaf_reaches_the_callers_array() -> None:
    def fn(params):
        params["W"][0] = 5.0
        return np.sum(params["W"])

    params = {"W": np.zeros(3)}
    assert ad.script(fn)(params) == 5.0
    assert params["W"][0] == 5.0


def test_lists_of_numbers_stay_arrays() -> None:
    def fn(x):
        return x * 2

    np.testing.assert_array_equal(ad.script(fn)([1.0, 2.0]), np.array([2.0, 4.0]))


# ---- ad.flatten -------------------------------------------------------------------------------


def test_flatten_gives_one_vector_and_its_inverse() -> None:
    params = {"W": RNG.normal(size=(2, 3)), "b": (np.zeros(3, np.float32), 2.0), "n": None}
    vector, unflatten = ad.flatten(params)
    assert vector.shape == (10,)
    assert vector.dtype == np.float64
    back = unflatten(vector * 2)
    assert back["n"] is None
    assert isinstance(back["b"][1], float)
    assert back["b"][0].dtype == np.float32
    np.testing.assert_allclose(back["W"], params["W"] * 2)
    with pytest.raises(ArgumentError, match="vector of shape"):
        unflatten(np.zeros(3))


def test_flatten_serves_a_vector_optimiser() -> None:
    params = layers(2, 3, 1)
    x, y = RNG.normal(size=(5, 2)), RNG.normal(size=(5, 1))
    vector, unflatten = ad.flatten(params)
    dloss = ad.grad(mlp_loss)

    def flat_gradient(v: np.ndarray) -> np.ndarray:
        return ad.flatten(dloss(unflatten(v), x, y))[0]

    np.testing.assert_allclose(
        flat_gradient(vector),
        ad.flatten(central_differences(mlp_loss, params, x, y))[0],
        rtol=1e-5,
        atol=1e-8,
    )


# ---- what is refused ----------------------------------------------------------------------------


def test_a_leaf_that_is_not_an_array_or_a_number_is_refused_with_its_path() -> None:
    def fn(params):
        return params["W"]

    with pytest.raises(ArgumentError, match=r"'params\['name'\]' of .*fn\(\) is a bytes"):
        ad.script(fn)({"W": np.ones(2), "name": b"dense"})
    with pytest.raises(ArgumentError, match="holds a defaultdict"):
        ad.script(fn)(collections.defaultdict(list, W=np.ones(2)))


def test_a_missing_key_and_a_run_time_index_are_located_errors() -> None:
    def missing(params):
        return params["V"]

    def run_time_index(params, i: int):
        return params[i]

    with pytest.raises(ad.ScriptError, match="KeyError: 'V' is not a key") as info:
        ad.script(missing)({"W": np.ones(2)})
    assert info.value.source_range is not None
    with pytest.raises(ad.ScriptError, match="must be known while compiling"):
        ad.script(run_time_index)([np.ones(2), np.ones(3)], 1)


def test_a_container_error_waits_for_the_arguments() -> None:
    def keyed(params):
        W, b = params["layer"]
        return np.sum(W) + np.sum(b)

    scripted = ad.script(keyed)  # no error yet: params may be a dict
    assert scripted({"layer": (np.ones(2), np.ones(3))}) == 5.0
    with pytest.raises(ad.ScriptError, match="an index must be an int, a slice or an array"):
        scripted(np.ones((2, 2)))  # an array: the error, located


def test_jacobians_of_containers_are_refused_saying_what_to_do() -> None:
    def fn(params):
        return params["W"] * 2.0

    with pytest.raises(ad.DifferentiationError, match=r"ad\.flatten makes one vector"):
        ad.jacobian(fn)({"W": np.ones(2)})


def test_a_loss_that_returns_a_dict_is_not_a_scalar() -> None:
    def fn(params):
        return {"loss": np.sum(params["W"])}

    with pytest.raises(ad.DifferentiationError, match="returned a dict of 1"):
        ad.grad(fn)({"W": np.ones(2)})


def l2_penalty(params, x):
    flat, _ = ad.flatten(params)
    return np.dot(flat, flat) * np.sum(x)


def test_flatten_inside_a_compiled_function_gives_optrees_order() -> None:
    """``ad.flatten`` called in the loss, as HIPS autograd's examples call their ``flatten``:
    the leaves in optree's order (a dict's keys sorted, an OrderedDict's as inserted, None
    skipped), raveled and concatenated, differentiated like any other array code."""
    x = np.array([1.5])
    trees = [
        {"b": [RNG.normal(size=2), (RNG.normal(size=(2, 2)), None)], "a": 3.0},
        collections.OrderedDict(b=RNG.normal(size=2), a=RNG.normal(size=3)),
        [RNG.normal(size=2)],
    ]
    for params in trees:
        assert ad.script(l2_penalty)(params, x) == pytest.approx(l2_penalty(params, x))
        assert_trees_close(
            ad.grad(l2_penalty)(params, x),
            central_differences(lambda p: l2_penalty(p, x), params),
        )

    def flat_only(params):
        return ad.flatten(params)[0]

    np.testing.assert_array_equal(ad.script(flat_only)(trees[1]), ad.flatten(trees[1])[0])

    def calls_unflatten(params):
        flat, unflatten = ad.flatten(params)
        return unflatten(flat)

    with pytest.raises(ad.ScriptError, match="calling a value of type NoneType"):
        ad.script(calls_unflatten)(trees[0])
