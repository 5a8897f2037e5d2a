"""Rematerialisation (issue 20): ``ad.checkpoint`` gives the same gradient, to the bit, while
``f`` keeps fewer and smaller values for ``df``, which recomputes the checkpointed calls
(Note [Checkpoints] in `autodiff.checkpoints`)."""

from __future__ import annotations

import math
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import optree
import pytest

import autodiff as ad
from autodiff.cli import main
from autodiff.gradient import Gradient
from benchmarks.compile_time import load_straight_line
from ir.types import TensorType
from tests.tree_helpers import assert_trees_close, central_differences

RNG = np.random.default_rng(20)
WIDTH = 8


def block(x, W1, b1, W2):
    h = np.maximum(x @ W1 + b1, 0.0)
    return x + np.tanh(h @ W2)


checkpointed_block = ad.checkpoint(block)


def residual_loss(params, x):
    for W1, b1, W2 in params:
        x = block(x, W1, b1, W2)
    return np.mean(x**2)


def checkpointed_residual_loss(params, x):
    for W1, b1, W2 in params:
        x = checkpointed_block(x, W1, b1, W2)
    return np.mean(x**2)


def residual_params(layers: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    return [
        (
            RNG.standard_normal((WIDTH, WIDTH)) / 3,
            RNG.standard_normal(WIDTH) / 10,
            RNG.standard_normal((WIDTH, WIDTH)) / 3,
        )
        for _ in range(layers)
    ]


X = RNG.standard_normal((5, WIDTH))
PARAMS = residual_params(20)


@ad.checkpoint
def dense(layer, x):
    """A layer taking a dict of parameters, returning a tuple."""
    z = x @ layer["W"] + layer["b"]
    return np.tanh(z), np.sum(z**2)


def mlp_loss(layers, x, y):
    penalty = 0.0
    for layer in layers:
        x, z2 = dense(layer, x)
        penalty = penalty + 1e-3 * z2
    return np.mean((x - y) ** 2) + penalty


def plain_dense(layer, x):
    z = x @ layer["W"] + layer["b"]
    return np.tanh(z), np.sum(z**2)


def plain_mlp_loss(layers, x, y):
    penalty = 0.0
    for layer in layers:
        x, z2 = plain_dense(layer, x)
        penalty = penalty + 1e-3 * z2
    return np.mean((x - y) ** 2) + penalty


MLP = [
    {"W": RNG.standard_normal((WIDTH, WIDTH)) / 3, "b": RNG.standard_normal(WIDTH)}
    for _ in range(3)
]
Y = RNG.standard_normal((5, WIDTH))


def saved_for_df(gradient: Gradient) -> list[TensorType]:
    """The types of the values ``f`` computes and keeps for ``df``: its outputs ``df`` reads
    (the caller's arguments, which ``df`` reads too, are not kept by ``f``)."""
    kept = [gradient.f.outputs[i].ty for i in gradient.df_input_captured_outputs]
    assert all(isinstance(ty, TensorType) for ty in kept)
    return kept  # type: ignore[return-value]


def size_in_bytes(types: list[TensorType]) -> int:
    total = 0
    for ty in types:
        assert ty.dtype is not None
        assert ty.shape is not None
        assert None not in ty.shape
        total += math.prod(ty.shape) * np.dtype(ty.dtype).itemsize  # type: ignore[arg-type]
    return total


def gradcheck_tree(fn: Any, tree: Any, *rest: Any) -> None:
    """``ad.grad`` of ``fn`` w.r.t. the pytree ``tree`` against central differences of the
    plain function (a checkpointed function is itself when called from Python)."""
    expected = central_differences(fn, tree, *rest)
    assert_trees_close(ad.grad(fn)(tree, *rest), expected, rtol=1e-5, atol=1e-7)


def assert_same_leaves(got: Any, expected: Any) -> None:
    got_leaves, got_spec = optree.tree_flatten(got)
    expected_leaves, expected_spec = optree.tree_flatten(expected)
    assert got_spec == expected_spec
    for a, b in zip(got_leaves, expected_leaves, strict=True):
        np.testing.assert_array_equal(a, b)


# -- the same gradient ----------------------------------------------------------------------


def test_checkpoint_is_the_function_itself_from_python() -> None:
    np.testing.assert_array_equal(checkpointed_block(X, *PARAMS[0]), block(X, *PARAMS[0]))
    assert checkpointed_block.__name__ == "block"
    assert ad.remat is ad.checkpoint


def test_residual_net_of_20_layers_has_the_plain_gradient_to_the_bit() -> None:
    value, grads = ad.value_and_grad(checkpointed_residual_loss)(PARAMS, X)
    plain_value, plain_grads = ad.value_and_grad(residual_loss)(PARAMS, X)
    assert value == plain_value
    assert_same_leaves(grads, plain_grads)
    gradcheck_tree(checkpointed_residual_loss, PARAMS[:3], X)


def test_mlp_with_dict_layers_and_tuple_results_has_the_plain_gradient() -> None:
    grads = ad.grad(mlp_loss, argnums=(0, 1))(MLP, X, Y)
    assert_same_leaves(grads, ad.grad(plain_mlp_loss, argnums=(0, 1))(MLP, X, Y))
    gradcheck_tree(mlp_loss, MLP, X, Y)


def test_checkpointed_call_in_a_loop_over_layers_tapes_only_its_inputs() -> None:
    def run(W1s, b1s, W2s, x, n: int):
        for i in range(n):
            x = checkpointed_block(x, W1s[i], b1s[i], W2s[i])
        return np.sum(x**2)

    def plain(W1s, b1s, W2s, x, n: int):
        for i in range(n):
            x = block(x, W1s[i], b1s[i], W2s[i])
        return np.sum(x**2)

    stacked = [np.stack(leaves) for leaves in zip(*PARAMS, strict=True)]
    wrt = (0, 1, 2, 3)
    grads = ad.grad(run, argnums=wrt)(*stacked, X, 20)
    assert_same_leaves(grads, ad.grad(plain, argnums=wrt)(*stacked, X, 20))
    gradient = ad.grad(run, argnums=wrt).gradient_for(*stacked, X, 20)
    plain_gradient = ad.grad(plain, argnums=wrt).gradient_for(*stacked, X, 20)
    # the loop tapes the layer's input x alone, where the plain loop tapes its intermediates too
    tapes = [gradient.f.outputs[i].name_hint for i in gradient.df_input_captured_outputs]
    assert [hint for hint in tapes if hint and hint.endswith("_tape")] == ["x_tape"]
    assert len(saved_for_df(gradient)) < len(saved_for_df(plain_gradient))


@pytest.mark.parametrize("sign", [1.0, -1.0], ids=["then", "else"])
def test_checkpointed_calls_in_branches(sign: float) -> None:
    def branchy(params, x):
        W1, b1, W2 = params
        if np.sum(x) > 0:
            y = checkpointed_block(x, W1, b1, W2)
        else:
            x = 2.0 * x
            y = checkpointed_block(x, W1, b1, W1)
        return np.sum(y**2)

    def plain(params, x):
        W1, b1, W2 = params
        if np.sum(x) > 0:
            y = block(x, W1, b1, W2)
        else:
            x = 2.0 * x
            y = block(x, W1, b1, W1)
        return np.sum(y**2)

    x = sign * (np.abs(X) + 0.1)
    assert_same_leaves(
        ad.grad(branchy, argnums=(0, 1))(PARAMS[0], x), ad.grad(plain, argnums=(0, 1))(PARAMS[0], x)
    )
    gradcheck_tree(branchy, PARAMS[0], x)


def test_keywords_scripted_functions_and_functions_passed_to_helpers() -> None:
    scripted_block = ad.checkpoint(ad.script(block))

    def apply(layer_fn, params, x):
        for W1, b1, W2 in params:
            x = layer_fn(x, W1=W1, b1=b1, W2=W2)
        return x

    def loss(params, x):
        return np.mean(apply(scripted_block, params, x) ** 2)

    assert_same_leaves(ad.grad(loss)(PARAMS[:4], X), ad.grad(residual_loss)(PARAMS[:4], X))


# -- what f keeps -----------------------------------------------------------------------------


def test_f_keeps_fewer_and_smaller_values_with_checkpoint() -> None:
    gradient = ad.grad(checkpointed_residual_loss).gradient_for(PARAMS, X)
    plain = ad.grad(residual_loss).gradient_for(PARAMS, X)
    kept, plain_kept = saved_for_df(gradient), saved_for_df(plain)
    # plain: per layer, the pre-activation, h and tanh(h @ W2) (plus the output); checkpointed:
    # per layer, its input, the one array df recomputes the layer from
    assert len(kept) == 20
    assert len(plain_kept) > 3 * len(kept)
    assert size_in_bytes(kept) < size_in_bytes(plain_kept) / 3
    # what df runs: copies of the marks, then the layer's forward operators again
    df = str(gradient.df)
    assert df.count("aten::_checkpoint_in") == 4 * 20
    assert df.count("aten::maximum") == 20
    assert "aten::maximum" not in str(plain.df)


def test_saved_arrays_at_run_time_agree_with_the_gradient_structure() -> None:
    def measured(fn: Any) -> int:
        sizes: list[int] = []

        def pack(array: np.ndarray) -> np.ndarray:
            sizes.append(array.nbytes)
            return array

        with ad.saved_value_hooks(pack, lambda array: array):
            ad.grad(fn)(PARAMS, X)
        return sum(sizes)

    # the hook sees the arguments df reads as well, the biases more with checkpoint
    assert measured(checkpointed_residual_loss) < measured(residual_loss)


def test_a_random_draw_in_a_checkpointed_call_is_kept_not_drawn_again() -> None:
    @ad.checkpoint
    def noisy(x, W):
        return np.tanh(x @ W) * np.random.default_rng(0).standard_normal(x.shape)

    def loss(W, x):
        return np.sum(noisy(noisy(x, W), W) ** 2)

    def plain(W, x):
        return np.sum(noisy.fn(noisy.fn(x, W), W) ** 2)

    W = PARAMS[0][0]
    np.testing.assert_array_equal(ad.grad(loss)(W, X), ad.grad(plain)(W, X))


# -- higher order ---------------------------------------------------------------------------


def test_second_derivatives_through_checkpointed_calls() -> None:
    params = PARAMS[:3]

    def loss(b, x):
        for W1, _, W2 in params:
            x = checkpointed_block(x, W1, b, W2)
        return np.mean(x**2)

    def plain(b, x):
        for W1, _, W2 in params:
            x = block(x, W1, b, W2)
        return np.mean(x**2)

    b = params[0][1]
    np.testing.assert_allclose(
        ad.hessian(loss)(b, X), ad.hessian(plain)(b, X), rtol=1e-10, atol=1e-14
    )
    gradient = ad.grad(loss)
    ad.gradcheck(lambda v: np.sum(np.sin(gradient(v, X))), b)
    assert "aten::_checkpoint_in" in str(
        ad.grad(lambda v: np.sum(gradient(v, X) ** 2)).gradient_for(b).df
    )


# -- the IR -----------------------------------------------------------------------------------


def test_dump_stage_df_shows_the_recomputation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "layers.py"
    source.write_text(
        textwrap.dedent(
            """
            import numpy as np
            import autodiff as ad

            @ad.checkpoint
            def layer(x, w):
                return np.sin(x * w) * w

            def loss(x, w):
                return np.sum(layer(layer(x, w), w))
            """
        )
    )
    args = [f"{source}:loss", "--stage", "df", "--arg", "x=f64[3]", "--arg", "w=f64[3]"]
    assert main(["dump", *args]) == 0
    df = capsys.readouterr().out
    # each layer's product x * w is recomputed (as a copy of its marks reads), not kept by f
    assert df.count("aten::_checkpoint_in") >= 2
    assert df.count("aten::mul") > 2
    assert "aten::sin" in df


def test_writes_into_arguments_and_results_reach_the_callers_arrays() -> None:
    @ad.checkpoint
    def bump(x):
        x[0] = 5.0
        return x * 2.0

    @ad.checkpoint
    def same(x):
        return x

    def loss(x):
        y = x * 1.0
        z = bump(y)  # writes y[0], as the plain function does
        w = same(z)
        w[1] = 0.0  # w is z itself
        return np.sum(z * y)

    def plain(x):
        y = x * 1.0
        z = bump.fn(y)
        w = same.fn(z)
        w[1] = 0.0
        return np.sum(z * y)

    x = np.arange(1.0, 4.0)
    value, grad = ad.value_and_grad(loss)(x)
    assert value == plain(x)
    np.testing.assert_allclose(grad, central_differences(plain, x), atol=1e-7)


def test_the_function_differentiated_is_not_itself_checkpointed() -> None:
    with pytest.raises(ad.ScriptError, match=r"ad\.checkpoint marks the calls") as caught:
        ad.grad(ad.checkpoint(residual_loss))(PARAMS, X)
    assert "docs/language.md#functions" in str(caught.value)


def test_a_long_checkpointed_function_compiles(tmp_path: Path) -> None:
    straight_line = load_straight_line(600, tmp_path)  # 600 elementwise operations
    deep = ad.checkpoint(straight_line)

    def loss(x):
        return deep(x) * 2.0

    def plain(x):
        return straight_line(x) * 2.0

    x = np.linspace(-0.5, 0.5, 3)
    np.testing.assert_array_equal(ad.grad(loss)(x), ad.grad(plain)(x))
    assert "aten::_checkpoint_in" in str(ad.grad(loss).gradient_for(x).df)


def test_the_gradient_agrees_with_jax_checkpoint() -> None:
    """Optional cross-check: JAX's ``jax.checkpoint`` of the same layer (skipped without JAX)."""
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy

    @jax.checkpoint
    def jax_block(x, W1, b1, W2):
        h = jnp.maximum(x @ W1 + b1, 0.0)
        return x + jnp.tanh(h @ W2)

    def jax_loss(params, x):
        for W1, b1, W2 in params:
            x = jax_block(x, W1, b1, W2)
        return jnp.mean(x**2)

    expected = jax.grad(jax_loss)(PARAMS, X)
    assert_trees_close(ad.grad(checkpointed_residual_loss)(PARAMS, X), expected, rtol=1e-10)


class Residual:
    """A layer object whose method is checkpointed."""

    def __init__(self, W1: np.ndarray, b1: np.ndarray, W2: np.ndarray) -> None:
        self.W1, self.b1, self.W2 = W1, b1, W2

    @ad.checkpoint
    def apply(self, x):
        return block(x, self.W1, self.b1, self.W2)


def test_a_checkpointed_method() -> None:
    first, second, third = (Residual(*p) for p in PARAMS[:3])

    def loss(x):
        x = first.apply(x)
        x = second.apply(x)
        return np.mean(third.apply(x) ** 2)

    def plain(x):
        for W1, b1, W2 in PARAMS[:3]:
            x = block(x, W1, b1, W2)
        return np.mean(x**2)

    assert loss(X) == plain(X)
    np.testing.assert_array_equal(ad.grad(loss)(X), ad.grad(plain)(X))
    assert "aten::_checkpoint_in" in str(ad.grad(loss).gradient_for(X).df)
