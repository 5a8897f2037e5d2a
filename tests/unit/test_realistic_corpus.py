"""Programs written the way HIPS autograd's and JAX's examples write them, compiled unchanged:
parameters in lists and dicts, data closed over, Python loops over layers and time steps,
comprehensions, nested functions, lambdas, print. Each is checked against the plain function,
against central differences, and against HIPS autograd where it is installed."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

import autodiff as ad
from tests.tree_helpers import assert_trees_close, central_differences

RNG = np.random.default_rng(2026)


# ---- an RNN over a dict of parameters, the data closed over --------------------------------------


def make_rnn_loss(inputs, targets):
    def rnn_loss(params):
        hidden = np.zeros(params["W_hh"].shape[0])
        loss = 0.0
        for t in range(inputs.shape[0]):
            hidden = np.tanh(params["W_xh"] @ inputs[t] + params["W_hh"] @ hidden + params["b"])
            prediction = params["W_out"] @ hidden
            loss = loss + np.sum((prediction - targets[t]) ** 2)
        return loss / inputs.shape[0]

    return rnn_loss


def test_an_rnn_over_a_dict_with_its_data_closed_over() -> None:
    inputs, targets = RNG.normal(size=(6, 3)), RNG.normal(size=(6, 2))
    params = {
        "W_xh": RNG.normal(size=(4, 3)) * 0.5,
        "W_hh": RNG.normal(size=(4, 4)) * 0.3,
        "b": np.zeros(4),
        "W_out": RNG.normal(size=(2, 4)) * 0.5,
    }
    loss = make_rnn_loss(inputs, targets)
    dloss = ad.grad(loss)
    assert_trees_close(dloss(params), central_differences(loss, params))
    # the closure's arrays are read at each call: new data, new value
    inputs[:] = RNG.normal(size=inputs.shape)
    assert ad.script(loss)(params) == pytest.approx(loss(params))
    assert_trees_close(dloss(params), central_differences(loss, params))


# ---- a mixture of Gaussians, zip over the components ---------------------------------------------


def mixture_nll(params, data):
    weights = np.exp(params["logits"]) / np.sum(np.exp(params["logits"]))
    likelihood = np.zeros(data.shape[0])
    for k, (mean, log_std) in enumerate(zip(params["means"], params["log_stds"], strict=True)):
        std = np.exp(log_std)
        density = np.exp(-0.5 * ((data - mean) / std) ** 2) / (std * np.sqrt(2 * np.pi))
        likelihood = likelihood + weights[k] * density
    return -np.sum(np.log(likelihood))


def test_a_mixture_model_zips_over_its_components() -> None:
    params = {
        "logits": RNG.normal(size=3),
        "means": [RNG.normal() for _ in range(3)],
        "log_stds": [float(v) for v in RNG.normal(size=3) * 0.2],
    }
    data = RNG.normal(size=20)

    def fn(p: Any) -> Any:
        return mixture_nll(p, data)

    assert ad.script(mixture_nll)(params, data) == pytest.approx(fn(params))
    grads = ad.grad(mixture_nll)(params, data)
    assert isinstance(grads["means"], list)
    assert_trees_close(grads, central_differences(fn, params))


# ---- a VAE-style objective: encoder and decoder as lists of layers, comprehensions ---------------


def mlp(layers, x):
    for W, b in layers[:-1]:
        x = np.tanh(x @ W + b)
    W, b = layers[-1]
    return x @ W + b


def vae_objective(params, x, noise):
    encoded = mlp(params["encoder"], x)
    half = encoded.shape[1] // 2
    mean, log_std = encoded[:, :half], encoded[:, half:]
    z = mean + np.exp(log_std) * noise  # a reparameterised sample, its noise given
    reconstruction = mlp(params["decoder"], z)
    fit = np.sum((reconstruction - x) ** 2)
    kl = 0.5 * np.sum(np.exp(2 * log_std) + mean**2 - 1.0 - 2 * log_std)
    penalty = sum(np.sum(W**2) for part in ("encoder", "decoder") for W, _ in params[part])
    return (fit + kl) / x.shape[0] + 1e-3 * penalty


def init_layers(sizes: list[int]) -> list[tuple[np.ndarray, np.ndarray]]:
    return [
        (RNG.normal(size=(m, n)) / np.sqrt(m), np.zeros(n)) for m, n in itertools.pairwise(sizes)
    ]


def test_a_vae_objective_over_nested_lists_of_layers() -> None:
    params = {"encoder": init_layers([4, 5, 4]), "decoder": init_layers([2, 5, 4])}
    x, noise = RNG.normal(size=(3, 4)), RNG.normal(size=(3, 2))
    value = ad.script(vae_objective)(params, x, noise)
    assert value == pytest.approx(vae_objective(params, x, noise))
    grads = ad.grad(vae_objective)(params, x, noise)
    expected = central_differences(lambda p: vae_objective(p, x, noise), params)
    assert_trees_close(grads, expected)
    autograd = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")

    def reference(params: Any) -> Any:
        def net(layers: Any, h: Any) -> Any:
            for W, b in layers[:-1]:
                h = anp.tanh(anp.dot(h, W) + b)
            W, b = layers[-1]
            return anp.dot(h, W) + b

        encoded = net(params["encoder"], x)
        mean, log_std = encoded[:, :2], encoded[:, 2:]
        z = mean + anp.exp(log_std) * noise
        fit = anp.sum((net(params["decoder"], z) - x) ** 2)
        kl = 0.5 * anp.sum(anp.exp(2 * log_std) + mean**2 - 1.0 - 2 * log_std)
        penalty = sum(anp.sum(W**2) for part in ("encoder", "decoder") for W, _ in params[part])
        return (fit + kl) / x.shape[0] + 1e-3 * penalty

    reference_grads = autograd.grad(reference)(params)
    assert_trees_close(
        grads,
        {k: [tuple(layer) for layer in v] for k, v in reference_grads.items()},
        rtol=1e-9,
        atol=1e-12,
    )


# ---- a Gaussian process with a lambda kernel -----------------------------------------------------


def gp_marginal_likelihood(params, X, y):
    amplitude, length = np.exp(params["log_amplitude"]), np.exp(params["log_length"])
    rbf = lambda a, b: (  # noqa: E731 (as GP code is written)
        amplitude * np.exp(-0.5 * np.sum((a[:, None] - b[None, :]) ** 2, axis=-1) / length**2)
    )
    K = rbf(X, X) + (np.exp(params["log_noise"]) + 1e-6) * np.eye(X.shape[0])
    _, logdet = np.linalg.slogdet(K)
    return 0.5 * y @ np.linalg.solve(K, y) + 0.5 * logdet


def test_a_gaussian_process_with_a_lambda_kernel() -> None:
    params = {"log_amplitude": 0.1, "log_length": -0.2, "log_noise": -1.0}
    X, y = RNG.normal(size=(7, 2)), RNG.normal(size=7)
    grads = ad.grad(gp_marginal_likelihood)(params, X, y)
    assert all(isinstance(g, float) for g in grads.values())
    expected = central_differences(lambda p: gp_marginal_likelihood(p, X, y), params)
    assert_trees_close(grads, expected)


# ---- a diffusion step on a module-level grid -----------------------------------------------------

GRID = np.linspace(0.0, 1.0, 12)


def diffusion_loss(rate, steps: int):
    u = np.sin(np.pi * GRID) + 0.1 * GRID
    for _ in range(steps):
        laplacian = np.zeros_like(u)
        laplacian[1:-1] = u[2:] - 2 * u[1:-1] + u[:-2]
        u = u + rate * laplacian
    return np.sum(u**2)


def test_a_diffusion_on_a_global_grid() -> None:
    value, grad = ad.value_and_grad(diffusion_loss)(0.2, 5)
    assert value == pytest.approx(diffusion_loss(0.2, 5))
    eps = 1e-6
    numeric = (diffusion_loss(0.2 + eps, 5) - diffusion_loss(0.2 - eps, 5)) / (2 * eps)
    assert grad == pytest.approx(numeric, rel=1e-6)


# ---- a training loop that prints -----------------------------------------------------------------


def train_step(params, x, y, step: int):
    prediction = x @ params["w"] + params["b"]
    loss = np.mean((prediction - y) ** 2)
    if step % 2 == 0:
        print(f"step {step}: loss {loss:.3f}")
    return loss


def test_a_training_loop_that_prints(capsys: pytest.CaptureFixture[str]) -> None:
    params = {"w": np.zeros(3), "b": 0.0}
    x = RNG.normal(size=(8, 3))
    y = x @ np.array([1.0, -2.0, 0.5]) + 0.3
    dstep = ad.value_and_grad(train_step)
    losses = []
    for step in range(4):
        loss, grads = dstep(params, x, y, step)
        params = {k: params[k] - 0.1 * grads[k] for k in params}
        losses.append(loss)
    assert losses[-1] < losses[0]
    assert capsys.readouterr().out.splitlines() == [
        f"step 0: loss {losses[0]:.3f}",
        f"step 2: loss {losses[2]:.3f}",
    ]
