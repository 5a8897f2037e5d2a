"""Call signatures: ``*args``, ``**kwargs`` and keyword-only parameters, ``*xs`` and ``**d`` in
calls, strings known while compiling, and defaults, for the function compiled and for the
functions it calls (Note [Variadic parameters] and Note [Unpacking in calls] in
`frontend.signatures`, Note [Strings known while compiling] in `frontend.trees`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import autodiff as ad
from frontend.errors import ScriptError
from tests.tree_helpers import assert_trees_close, central_differences

RNG = np.random.default_rng(17)
W = RNG.normal(size=3)
A = RNG.normal(size=3)
B = RNG.normal(size=3)


def check_gradient(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    """Value and gradient w.r.t. the first argument agree with the plain function and with
    central differences."""
    np.testing.assert_allclose(ad.script(fn)(*args, **kwargs), fn(*args, **kwargs))
    expected = central_differences(lambda w: fn(w, *args[1:], **kwargs), args[0])
    assert_trees_close(ad.grad(fn)(*args, **kwargs), expected, rtol=1e-5, atol=1e-7)


# ---- *args and **kwargs of the function compiled -----------------------------------------


def weighted_sum(w, *rest, scale=2.0, **extra):
    total = np.sum(w**2) * scale
    for r in rest:
        total = total + np.sum(np.tanh(r * w))
    for name, value in extra.items():
        total = total + np.sum(value * w) * len(name)
    return total / (len(rest) + 1)


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [
        ((W,), {}),
        ((W, A), {}),
        ((W, A, B), {"scale": 0.5}),
        ((W, A), {"bias": B, "z": A}),
        ((W, 1.5, 2.5), {}),  # numbers only: still a tuple, not an array
    ],
    ids=["none", "one", "two-and-scale", "kwargs", "numbers"],
)
def test_variadic_parameters_of_the_function_compiled(
    args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    check_gradient(weighted_sum, *args, **kwargs)


def test_args_indexed_measured_and_summed() -> None:
    def loss(w, *rest):
        first = rest[0]
        return np.sum(first * w) + len(rest) + sum(np.sum(r) for r in rest)

    check_gradient(loss, W, A, B)
    check_gradient(loss, W, A)


def test_argnums_count_the_arguments_given_by_position_as_jax_does() -> None:
    def loss(w, *rest, k=1.0):
        return np.sum(w * rest[0] * rest[1]) * k

    grads = ad.grad(loss, argnums=(0, 2))(W, A, B, k=3.0)
    np.testing.assert_allclose(grads[0], 3.0 * A * B)
    np.testing.assert_allclose(grads[1], 3.0 * W * A)
    np.testing.assert_allclose(ad.grad(loss, argnums=1)(W, A, B), W * B)
    np.testing.assert_allclose(ad.grad(loss, argnums=-1)(W, A, B), W * A)
    value, grad = ad.value_and_grad(loss, argnums=2)(W, A, B)
    np.testing.assert_allclose(value, loss(W, A, B))
    np.testing.assert_allclose(grad, W * A)
    with pytest.raises(ad.DifferentiationError, match="argnums 3 is out of range"):
        ad.grad(loss, argnums=3)(W, A, B)


def test_argnums_against_jax() -> None:
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy

    def make(lib: Any) -> Callable[..., Any]:
        def loss(w, *rest):
            return lib.sum(lib.tanh(w * rest[0]) * rest[1])

        return loss

    ours = ad.grad(make(np), argnums=(1, 2))(W, A, B)
    theirs = jax.grad(make(jnp), argnums=(1, 2))(W, A, B)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, np.asarray(b), rtol=1e-10)


def test_vjp_and_jacobian_give_one_gradient_per_argument_passed() -> None:
    def product(w, *rest, k=2.0):
        return w * rest[0] * rest[1] * k

    out, vjp_fn = ad.vjp(product, W, A, B)
    np.testing.assert_allclose(out, product(W, A, B))
    dw, da, db = vjp_fn(np.ones(3))
    np.testing.assert_allclose(dw, 2.0 * A * B)
    np.testing.assert_allclose(da, 2.0 * W * B)
    np.testing.assert_allclose(db, 2.0 * W * A)
    np.testing.assert_allclose(ad.jacobian(product, argnums=2)(W, A, B), np.diag(2.0 * W * A))


def test_each_number_of_extra_arguments_compiles_once() -> None:
    def loss(w, *rest):
        return np.sum(w) * len(rest)

    scripted = ad.script(loss)
    assert scripted(W) == 0.0
    assert scripted(W, 1.0) == pytest.approx(np.sum(W))
    assert scripted(W, 1.0, 2.0) == pytest.approx(2 * np.sum(W))
    assert scripted(W, 3.0, 4.0) == pytest.approx(2 * np.sum(W))
    assert len(scripted.cache) == 3


def test_kwargs_keep_the_order_they_were_given_in() -> None:
    def names(w, **kw):
        out = w
        for key in kw:
            out = out * 10 + len(key)
        return out

    scripted = ad.script(names)
    assert scripted(1.0, a=0, bbb=0) == names(1.0, a=0, bbb=0) == 113.0
    assert scripted(1.0, bbb=0, a=0) == names(1.0, bbb=0, a=0) == 131.0


def test_returning_args_and_kwargs_gives_a_tuple_and_a_dict() -> None:
    def pack(*args, **kwargs):
        return args, kwargs

    result = ad.script(pack)(A, B, c=W)
    assert isinstance(result, tuple)
    args, kwargs = result
    assert isinstance(args, tuple)
    assert type(kwargs) is dict
    assert list(kwargs) == ["c"]
    np.testing.assert_array_equal(kwargs["c"], W)


def test_a_wrong_call_gets_pythons_message() -> None:
    def loss(w, *rest, k):
        return np.sum(w) * k

    with pytest.raises(ad.ArgumentError, match="missing a required argument: 'k'"):
        ad.script(loss)(W, A)


# ---- keyword-only parameters -----------------------------------------------------------


def scaled(w, *, scale=2.0, shift):
    return np.sum((w * scale + shift) ** 2)


def test_keyword_only_parameters_of_the_function_compiled() -> None:
    check_gradient(scaled, W, shift=1.0)
    check_gradient(scaled, W, scale=0.5, shift=A)
    with pytest.raises(ad.ArgumentError, match="too many positional arguments"):
        ad.script(scaled)(W, 3.0, 1.0)


def test_keyword_only_parameters_of_a_helper_and_a_local_function() -> None:
    def loss(w, b):
        double = lambda x, *, by=2.0: x * by  # noqa: E731
        return scaled(w, shift=b) + np.sum(double(w, by=3.0)) + np.sum(double(b))

    check_gradient(loss, W, A)


def test_a_keyword_only_argument_given_by_position_is_refused_at_the_call() -> None:
    def loss(w):
        return scaled(w, 1.0, 2.0)

    with pytest.raises(ScriptError, match=r"scaled\(\): too many positional arguments") as info:
        ad.script(loss)
    assert "scaled(w, 1.0, 2.0)" in str(info.value)


# ---- helpers with *args and **kwargs ----------------------------------------------------


def total_of(w, *parts, **weights):
    total = np.sum(w)
    for part in parts:
        total = total + np.sum(part * w)
    for name, weight in weights.items():
        total = total + weight * np.sum(w**2) * len(name)
    return total + len(parts)


def forward(*args, **kwargs):
    return total_of(*args, **kwargs)


def test_helpers_with_variadic_parameters() -> None:
    def loss(w, a, b):
        first = total_of(w)
        second = total_of(w, a, b, alpha=0.5, beta=2.0)
        third = total_of(w, *(a, b), **{"gamma": 3.0})
        return first + second + forward(w, a, delta=1.0) + third

    check_gradient(loss, W, A, B)


def test_a_helper_reads_its_args_while_compiling() -> None:
    def first_and_count(*xs):
        return xs[0] * len(xs) + sum(np.sum(x) for x in xs)

    def loss(w, a):
        return np.sum(first_and_count(w, a, a))

    check_gradient(loss, W, A)


# ---- unpacking in calls -------------------------------------------------------------------


def test_unpacking_into_numpy_functions_and_builtins() -> None:
    def loss(w, a):
        pair = (w, a)
        options = {"axis": 0}
        stacked = np.stack((w * a, np.add(*pair)))
        return np.sum(np.maximum(*pair)) + np.sum(np.sum(stacked, **options)) + max(*[1.0, 2.0])

    check_gradient(loss, W, A)


def test_unpacking_a_container_argument() -> None:
    def loss(params, x):
        W1, b1 = params["layer"]
        return np.sum(np.tanh(np.add(*params["layer"]) * x)) + np.sum(W1 * b1)

    params = {"layer": (A, B)}
    np.testing.assert_allclose(ad.script(loss)(params, W), loss(params, W))
    expected = central_differences(loss, params, W)
    assert_trees_close(ad.grad(loss)(params, W), expected, rtol=1e-5, atol=1e-7)


def test_unpacking_zip_and_range_and_into_local_functions() -> None:
    def loss(w, a, b):
        pairs = [(w, a), (a, b)]
        firsts, seconds = [column for column in zip(*pairs, strict=True)]
        add = lambda x, y, z=0.0: x + y + z  # noqa: E731

        def prod(*xs):
            out = 1.0
            for x in xs:
                out = out * x
            return out

        total = np.sum(add(*firsts)) + np.sum(prod(*seconds)) + np.sum(add(*(w, a), **{"z": b}))
        return total + sum(i for i in range(*(1, 4)))

    check_gradient(loss, W, A, B)


def test_kwargs_forwarded_to_a_function_with_named_parameters() -> None:
    def affine(x, *, scale, shift=0.0):
        return x * scale + shift

    def loss(w, **options):
        return np.sum(affine(w, **options) ** 2)

    check_gradient(loss, W, scale=2.0)
    check_gradient(loss, W, scale=A, shift=B)


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("np.maximum(*x)", "cannot unpack an array with '*'"),
        ("np.maximum(**x)", "cannot unpack an array with '**'"),
        ("np.maximum(*3)", "cannot unpack a value of type int with '*'"),
        ("np.maximum(x, **(x, x))", "cannot unpack a value of type (Tensor, Tensor) with '**'"),
        ("np.maximum(x, **{1: x})", "keywords must be strings"),
        ("np.sum(x, **{'axis': 0}, axis=1)", "multiple values for keyword argument 'axis'"),
    ],
)
def test_refused_unpacking_is_located(source: str, message: str, tmp_path: Any) -> None:
    path = tmp_path / "refused_unpacking.py"
    path.write_text(f"import numpy as np\n\n\ndef loss(x):\n    return {source}\n")
    namespace: dict[str, Any] = {"__file__": str(path)}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    with pytest.raises(ScriptError) as info:
        ad.script(namespace["loss"])(np.ones(2))
    assert message in info.value.message
    assert info.value.source_range is not None
    assert info.value.source_range.line == 5


def test_starred_outside_a_call_is_refused() -> None:
    def loss(x):
        return [*x]

    with pytest.raises(ScriptError, match="starred expressions are not supported"):
        ad.script(loss)


# ---- strings known while compiling ----------------------------------------------------


def reduced(w, mode="sum"):
    if mode == "sum":
        return np.sum(w**2)
    if mode == "mean":
        return np.mean(w**2)
    raise ValueError(f"unknown mode {mode}")


def test_string_arguments_compile_per_value() -> None:
    scripted = ad.script(reduced)
    assert scripted(W) == pytest.approx(np.sum(W**2))
    assert scripted(W, "mean") == pytest.approx(np.mean(W**2))
    assert scripted(W, mode="sum") == pytest.approx(np.sum(W**2))
    assert len(scripted.cache) == 2
    check_gradient(reduced, W, "mean")
    check_gradient(reduced, W)
    np.testing.assert_allclose(ad.grad(reduced)(W, mode="mean"), 2 * W / 3)


def test_a_string_has_no_gradient() -> None:
    with pytest.raises(ad.ArgumentError, match=r"argument 'mode' of .*reduced\(\) is a string"):
        ad.grad(reduced, argnums=1)(W, "mean")

    def variadic(w, *modes):
        return reduced(w, modes[0])

    with pytest.raises(ad.ArgumentError, match=r"argument 'modes\[0\]' of"):
        ad.grad(variadic, argnums=(0, 1))(W, "mean")


def test_vjp_gives_none_for_a_string_argument() -> None:
    out, vjp_fn = ad.vjp(reduced, W, "mean")
    assert out == pytest.approx(np.mean(W**2))
    dw, dmode = vjp_fn(1.0)
    np.testing.assert_allclose(dw, 2 * W / 3)
    assert dmode is None


def test_a_helper_is_specialised_to_the_string_it_is_given() -> None:
    def loss(w):
        return reduced(w, "mean") + reduced(w) + reduced(w, mode="sum")

    check_gradient(loss, W)


def test_strings_in_containers_and_forwarded() -> None:
    def loss(w, config):
        activation = config["activation"]
        h = np.tanh(w) if activation == "tanh" else np.maximum(w, 0.0)
        return reduced(h, config["reduce"]) * config["scale"]

    for config in (
        {"activation": "tanh", "reduce": "mean", "scale": 2.0},
        {"activation": "relu", "reduce": "sum", "scale": 0.5},
    ):
        np.testing.assert_allclose(ad.script(loss)(W, config), loss(W, config))
        expected = central_differences(lambda w, c=config: loss(w, c), W)
        np.testing.assert_allclose(ad.grad(loss)(W, config), expected, rtol=1e-5, atol=1e-7)


def test_a_string_read_in_a_raise_is_the_users_error() -> None:
    with pytest.raises(ValueError, match="unknown mode max"):
        ad.script(reduced)(W, "max")


def test_comparing_a_string_with_an_array_is_refused_where_written() -> None:
    def loss(w, mode):
        return np.sum(w) if mode == "sum" else np.mean(w)

    scripted = ad.script(loss)  # mode may be a string: held back
    assert scripted(W, "sum") == pytest.approx(np.sum(W))
    with pytest.raises(ScriptError, match="strings can only be compared when known"):
        scripted(W, W)


def test_strings_against_jax_static_arguments() -> None:
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)

    def loss(w, mode):
        lib = jax.numpy if not isinstance(w, np.ndarray) else np
        return lib.mean(w**2) if mode == "mean" else lib.sum(w**2)

    theirs = jax.grad(loss)(W, "mean")
    np.testing.assert_allclose(ad.grad(reduced)(W, "mean"), np.asarray(theirs), rtol=1e-12)


# ---- defaults: the same object at each call, as in Python ------------------------------


def test_an_array_default_is_read_at_each_call() -> None:
    offset = np.zeros(3)

    def loss(w, shift=offset):
        return np.sum((w - shift) ** 2)

    scripted = ad.script(loss)
    gradient = ad.grad(loss)
    assert scripted(W) == pytest.approx(loss(W))
    offset[:] = 1.0  # mutated in place: the next call sees it, as the plain function does
    assert scripted(W) == pytest.approx(loss(W)) == pytest.approx(np.sum((W - 1.0) ** 2))
    np.testing.assert_allclose(gradient(W), 2 * (W - 1.0))
    offset[:] = 2.0
    np.testing.assert_allclose(gradient(W), 2 * (W - 2.0))


def test_a_container_default_is_read_at_each_call() -> None:
    layers = [(np.ones(3), np.zeros(3))]

    def loss(w, params=layers):
        total = 0.0
        for scale, shift in params:
            total = total + np.sum(w * scale + shift)
        return total

    scripted = ad.script(loss)
    assert scripted(W) == pytest.approx(loss(W))
    layers[0][1][:] = 5.0  # an array inside the default, mutated
    assert scripted(W) == pytest.approx(loss(W))
    layers.append((np.full(3, 2.0), np.zeros(3)))  # the list itself, grown
    assert scripted(W) == pytest.approx(loss(W))
    np.testing.assert_allclose(ad.grad(loss)(W), np.full(3, 3.0))


def test_a_default_the_function_writes_into_is_kept_written() -> None:
    seen = np.zeros(3)

    def record(w, out=seen):
        out[:] = out + w
        return np.sum(out)

    scripted = ad.script(record)
    scripted(W)
    scripted(W)
    np.testing.assert_allclose(seen, 2 * W)


def test_array_defaults_of_a_helper_are_read_at_each_call() -> None:
    """A helper's array default is one object every call of the plain function shares: it is
    read at each call like a global, so writing into it between calls is seen (it was
    refused)."""
    bias = np.ones(3)

    def helper(x, b=bias, scales=(np.full(3, 2.0), 0.5), *, shift=np.zeros(3)):  # noqa: B008 (what users write)
        return np.tanh(x + b) * scales[0] * scales[1] + shift

    def loss(w):
        return np.sum(helper(w) ** 2)

    scripted = ad.script(loss)
    for _ in range(2):
        assert scripted(W) == pytest.approx(loss(W))
        np.testing.assert_allclose(ad.grad(loss)(W), central_differences(loss, W), rtol=1e-6)
        bias[1] = -3.0  # the default object written in place
    helper.__kwdefaults__["shift"][:] = 1.0
    assert scripted(W) == pytest.approx(loss(W))


def _configured_loss(p, x):
    if p["mode"] == "sum":
        return np.sum(p["w"] * x)
    return np.mean(p["w"] * x)


def test_a_gradient_with_respect_to_a_container_holding_a_string_is_refused() -> None:
    """A string has no gradient: leaving it in the gradient's tree (as before) hands an
    optimiser a string where it expects an array; JAX refuses such an argument too."""
    p, x = {"w": np.ones(3), "mode": "sum"}, np.arange(3.0)
    with pytest.raises(ad.ArgumentError, match=r"argument 'p\['mode'\]' of .* is a string"):
        ad.grad(_configured_loss)(p, x)
    np.testing.assert_allclose(ad.grad(_configured_loss, argnums=1)(p, x), np.ones(3))
