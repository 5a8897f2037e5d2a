"""Generators made inside a compiled function (``np.random.default_rng(seed)``, ``RandomState``,
``Generator(PCG64(seed))``) and ``np.random.seed`` in the loss: a fresh generator each call,
seeded as the plain function seeds it (Note [Generators made inside] in `ir.ops.random`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import autodiff as ad
from autodiff.pipeline import compile_gradient
from ir.graph import Graph, Node
from ir.source import shown_path
from ir.types import INT, TensorType
from ir.verify import verify
from tests.tree_helpers import central_differences

RNG = np.random.default_rng(21)


def noisy(x, seed: int):
    a = np.random.default_rng(seed)
    b = np.random.RandomState(seed)
    c = np.random.Generator(np.random.PCG64(seed))
    d = np.random.Generator(np.random.Philox(seed))
    return (
        np.sum(x * a.standard_normal(x.shape))
        + np.sum(x * b.randn(3))
        + np.sum(x * c.uniform(size=3))
        + np.sum(x * d.integers(0, 5, size=3))
    )


def constant_seeds(x):
    r = np.random.default_rng(11)
    s = np.random.RandomState(12)
    return np.sum(x * r.normal(size=3)) + np.sum(x * s.normal(size=3)) + r.choice(x)


def test_a_generator_made_inside_draws_what_the_plain_function_draws() -> None:
    x = RNG.normal(size=3)
    scripted = ad.script(noisy)
    assert scripted(x, 5) == noisy(x, 5)  # bit for bit
    assert scripted(x, 5) == noisy(x, 5)  # a fresh generator each call: the same again
    assert scripted(x, 6) == noisy(x, 6)  # a run-time seed, not baked in
    assert ad.script(constant_seeds)(x) == constant_seeds(x)


def test_the_same_seed_gives_the_same_gradient_as_central_differences() -> None:
    x = RNG.normal(size=3)
    np.testing.assert_allclose(
        ad.grad(noisy)(x, 5), central_differences(noisy, x, 5), rtol=1e-6, atol=1e-9
    )
    np.testing.assert_allclose(
        ad.grad(constant_seeds)(x), central_differences(constant_seeds, x), rtol=1e-6
    )


def test_no_seed_is_fresh_entropy_each_call() -> None:
    def fresh(x):
        rng = np.random.default_rng()
        return np.sum(x * rng.normal(size=3))

    x = np.ones(3)
    scripted = ad.script(fresh)
    assert len({scripted(x) for _ in range(3)}) == 3


def reseeded(x, seed: int):
    before = np.random.normal(size=3)
    np.random.seed(seed)
    after = np.random.normal(size=3)
    np.random.seed(seed)  # the same numbers again
    again = np.random.normal(size=3)
    return np.sum(x * before) + np.sum(x * after) * np.sum(again)


def test_np_random_seed_reseeds_the_global_stream_in_program_order() -> None:
    x = RNG.normal(size=3)
    results = []
    for run in (reseeded, ad.script(reseeded)):
        np.random.seed(1)
        results.append((run(x, 9), np.random.rand()))  # and what the stream gives next
    assert results[0] == results[1]
    np.random.seed(1)
    expected = central_differences(lambda v: (np.random.seed(1), reseeded(v, 9))[1], x)
    np.random.seed(1)
    np.testing.assert_allclose(ad.grad(reseeded)(x, 9), expected, rtol=1e-6)


# ---- no pass folds, merges, hoists or recomputes a generator or a draw ------------------------


def twins(x, steps: int):
    total = 0.0
    for _ in range(steps):
        r = np.random.default_rng(3)  # the same seed each step: the same draws each step
        s = np.random.default_rng(3)  # an equal construction: a second generator
        total = total + np.sum(x * r.normal(size=3)) - 0.5 * np.sum(x * s.normal(size=3))
    return total


def _kinds(graph: Graph) -> list[str]:
    return [n.kind for n in graph.all_nodes() if n.kind in ("prim::MakeGenerator", "prim::Draw")]


def _enclosing(node: Node) -> Node:
    owner = node.owning_block.owning_node
    assert owner is not None
    return owner


def test_passes_keep_every_generator_and_draw_where_it_is_written() -> None:
    stages = compile_gradient(ad.script(twins).graph, [TensorType("float64", (3,)), INT], [0])
    written = ["prim::MakeGenerator", "prim::MakeGenerator", "prim::Draw", "prim::Draw"]
    for graph in (stages.typed, stages.optimized, stages.gradient.f):
        verify(graph)
        assert _kinds(graph) == written  # none folded, merged or dropped, in program order
        for node in graph.all_nodes():
            if node.kind in ("prim::MakeGenerator", "prim::Draw"):
                assert _enclosing(node).kind == "prim::Loop"  # none hoisted out of the loop
    verify(stages.gradient.df)
    assert _kinds(stages.gradient.df) == []  # df reads the draws f made, never draws again
    x = RNG.normal(size=3)
    assert ad.script(twins)(x, 3) == twins(x, 3)
    np.testing.assert_allclose(
        ad.grad(twins)(x, 3), central_differences(twins, x, 3), rtol=1e-6, atol=1e-9
    )


# ---- a reparameterised VAE with its own generator ---------------------------------------------


def encoder_decoder_elbo(params, x, seed: int):
    """One pass of a variational autoencoder: encode, draw z = mu + sigma * eps from a
    generator seeded in the loss, decode, and the negative ELBO."""
    rng = np.random.default_rng(seed)
    h = np.tanh(x @ params["W_enc"] + params["b_enc"])
    mu = h @ params["W_mu"]
    log_sigma = h @ params["W_sigma"]
    eps = rng.standard_normal(size=mu.shape)
    z = mu + np.exp(log_sigma) * eps
    logits = z @ params["W_dec"]
    log_likelihood = np.sum(x * logits - np.logaddexp(0.0, logits))
    kl = 0.5 * np.sum(np.exp(2 * log_sigma) + mu**2 - 1.0 - 2 * log_sigma)
    return -(log_likelihood - kl) / x.shape[0]


def _vae_params() -> dict[str, np.ndarray]:
    return {
        "W_enc": RNG.normal(size=(6, 5)) * 0.4,
        "b_enc": RNG.normal(size=5) * 0.1,
        "W_mu": RNG.normal(size=(5, 2)) * 0.4,
        "W_sigma": RNG.normal(size=(5, 2)) * 0.2,
        "W_dec": RNG.normal(size=(2, 6)) * 0.4,
    }


def test_a_vae_with_its_own_seeded_generator_matches_central_differences() -> None:
    params, x = _vae_params(), (RNG.uniform(size=(4, 6)) > 0.5).astype(float)
    value, grads = ad.value_and_grad(encoder_decoder_elbo)(params, x, 7)
    assert value == encoder_decoder_elbo(params, x, 7)
    # each evaluation seeds its own generator: the same sample, so differences are valid
    expected = central_differences(encoder_decoder_elbo, params, x, 7)
    for name in params:
        np.testing.assert_allclose(grads[name], expected[name], rtol=1e-5, atol=1e-8)
    other = ad.grad(encoder_decoder_elbo)(params, x, 8)  # another seed, another sample
    assert not np.allclose(other["W_mu"], grads["W_mu"])


def test_a_vae_gradient_matches_autograd_with_the_same_sample() -> None:
    autograd = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")
    params, x = _vae_params(), (RNG.uniform(size=(4, 6)) > 0.5).astype(float)
    eps = np.random.default_rng(7).standard_normal(size=(4, 2))

    def reference(p: dict[str, Any]) -> Any:
        h = anp.tanh(x @ p["W_enc"] + p["b_enc"])
        mu, log_sigma = h @ p["W_mu"], h @ p["W_sigma"]
        logits = (mu + anp.exp(log_sigma) * eps) @ p["W_dec"]
        log_likelihood = anp.sum(x * logits - anp.logaddexp(0.0, logits))
        kl = 0.5 * anp.sum(anp.exp(2 * log_sigma) + mu**2 - 1.0 - 2 * log_sigma)
        return -(log_likelihood - kl) / x.shape[0]

    expected = autograd.grad(reference)(params)
    grads = ad.grad(encoder_decoder_elbo)(params, x, 7)
    for name in params:
        np.testing.assert_allclose(grads[name], expected[name], rtol=1e-10, atol=1e-12)


# ---- what is refused -----------------------------------------------------------------------

REFUSED: list[tuple[Callable[..., Any], str]] = []


def _refused(message: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        REFUSED.append((fn, message))
        return fn

    return register


@_refused(r"np\.random\.PCG64\(\) alone is not supported: .*Generator\(np\.random\.PCG64")
def bit_generator_alone(x):
    bits = np.random.PCG64(0)
    return x, bits


@_refused(r"np\.random\.Generator\(\.\.\.\) is supported of a bit generator made here")
def generator_of_a_seed(x):
    rng = np.random.Generator(3)
    return x * rng.normal()


@_refused(r"a seed must be an int or None here, not float: pass int\(seed\)")
def float_seed(x):
    rng = np.random.default_rng(1.5)
    return x * rng.normal()


@_refused(r"a seed must be an int or None here, not .*: pass int\(seed\)")
def array_seed(x):
    rng = np.random.RandomState(x)
    return x * rng.normal()


@_refused(r"PCG64\(\) takes seed here, not 'entropy'")
def seed_by_another_name(x):
    rng = np.random.Generator(np.random.PCG64(entropy=3))
    return x * rng.normal()


@pytest.mark.parametrize(("fn", "message"), REFUSED, ids=[fn.__name__ for fn, _ in REFUSED])
def test_refused_constructions_are_located(fn: Callable[..., Any], message: str) -> None:
    with pytest.raises(ad.ScriptError, match=message) as error:
        ad.script(fn)(np.ones(3))
    assert f"{shown_path(fn.__code__.co_filename)}:{fn.__code__.co_firstlineno + 2}:" in str(
        error.value
    )
