# The programs are written as the examples write them (``input`` as a name, tuples added):
# ruff: noqa: A001, A002, RUF005
"""Programs written the way HIPS autograd's example folder writes them (an LSTM whose helper
takes ``*args``, a GAN-style network over ``params[1:-1]``, a logistic regression whose helper
reads the data as globals, black-box variational inference closing over a RandomState and a
log-density function, an incompressible-flow projection, a convnet-style parser of one weight
vector into layers, an L2 penalty through ``ad.flatten`` inside the loss), run unchanged:
each checked against the plain function, central differences and, when installed, HIPS
autograd itself (issue 17)."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import numpy.random as npr

import autodiff as ad
from tests.autograd_twin import autograd_twin
from tests.tree_helpers import assert_trees_close, central_differences

# ---- an LSTM: a helper with *args, local defs over the parameters, a loop over time steps -------


def sigmoid(x):
    return 0.5 * (np.tanh(x) + 1.0)


def concat_and_multiply(weights, *args):
    cat_state = np.hstack(args + (np.ones((args[0].shape[0], 1)),))
    return np.dot(cat_state, weights)


def log_normalise(a):
    biggest = np.max(a, axis=1, keepdims=True)
    return a - biggest - np.log(np.sum(np.exp(a - biggest), axis=1, keepdims=True))


def lstm_predict(params, inputs):
    def update_lstm(input, hiddens, cells):
        change = np.tanh(concat_and_multiply(params["change"], input, hiddens))
        forget = sigmoid(concat_and_multiply(params["forget"], input, hiddens))
        ingate = sigmoid(concat_and_multiply(params["ingate"], input, hiddens))
        outgate = sigmoid(concat_and_multiply(params["outgate"], input, hiddens))
        cells = cells * forget + ingate * change
        hiddens = outgate * np.tanh(cells)
        return hiddens, cells

    def hiddens_to_output_probs(hiddens):
        return log_normalise(concat_and_multiply(params["predict"], hiddens))

    num_sequences = inputs.shape[1]
    hiddens = np.repeat(params["init hiddens"], num_sequences, axis=0)
    cells = np.repeat(params["init cells"], num_sequences, axis=0)
    output = [hiddens_to_output_probs(hiddens)]
    for input in inputs:
        hiddens, cells = update_lstm(input, hiddens, cells)
        output.append(hiddens_to_output_probs(hiddens))
    return output


def lstm_log_likelihood(params, inputs, targets):
    logprobs = lstm_predict(params, inputs)
    loglik = 0.0
    num_time_steps, num_examples, _ = inputs.shape
    for t in range(num_time_steps):
        loglik += np.sum(logprobs[t] * targets[t])
    return loglik / (num_time_steps * num_examples)


def init_lstm_params(input_size, state_size, output_size, rs):
    def rp(*shape):
        return rs.randn(*shape) * 0.3

    gates = {
        name: rp(input_size + state_size + 1, state_size)
        for name in ("change", "forget", "ingate", "outgate")
    }
    return {
        "init cells": rp(1, state_size),
        "init hiddens": rp(1, state_size),
        **gates,
        "predict": rp(state_size + 1, output_size),
    }


def test_an_lstm_whose_helper_takes_star_args() -> None:
    rs = npr.RandomState(0)
    params = init_lstm_params(4, 3, 4, rs)
    inputs, targets = rs.randn(5, 2, 4), rs.randn(6, 2, 4)
    check(lstm_log_likelihood, params, inputs, targets)


# ---- a GAN-style network: params[0], params[1:-1], params[-1], batch normalisation ---------------


def relu(x):
    return np.maximum(0, x)


def batch_normalize(activations):
    mean = np.mean(activations, axis=0, keepdims=True)
    return (activations - mean) / (np.std(activations, axis=0, keepdims=True) + 1)


def discriminator(params, inputs):
    inW, inb = params[0]
    inputs = relu(np.dot(inputs, inW) + inb)
    for W, b in params[1:-1]:
        inputs = relu(batch_normalize(np.dot(inputs, W) + b))
    outW, outb = params[-1]
    return np.dot(inputs, outW) + outb


def discriminator_loss(params, real):
    return np.mean(np.logaddexp(0, -discriminator(params, real)))


def init_random_params(scale, layer_sizes, rs):
    return [
        (scale * rs.randn(m, n), scale * rs.randn(n)) for m, n in itertools.pairwise(layer_sizes)
    ]


def test_a_gan_discriminator_over_slices_of_its_layers() -> None:
    rs = npr.RandomState(1)
    check(discriminator_loss, init_random_params(0.5, [3, 5, 5, 1], rs), rs.randn(8, 3))


# ---- logistic regression: the helper reads the data as globals ----------------------------------

inputs = np.array(
    [[0.52, 1.12, 0.77], [0.88, -1.08, 0.15], [0.52, 0.06, -1.30], [0.74, -2.49, 1.39]]
)
targets = np.array([True, True, False, True])


def logistic_predictions(weights):
    return sigmoid(np.dot(inputs, weights))


def training_loss(weights):
    preds = logistic_predictions(weights)
    label_probabilities = preds * targets + (1 - preds) * (1 - targets)
    return -np.sum(np.log(label_probabilities))


def test_a_logistic_regression_whose_helper_reads_the_data_as_globals() -> None:
    global inputs
    weights = np.array([0.1, -0.2, 0.3])
    check(training_loss, weights)
    saved = inputs
    try:
        inputs = inputs * 2.0  # new data between calls: seen by the next call
        check(training_loss, weights)
    finally:
        inputs = saved


# ---- black-box variational inference: closures over D, a RandomState and a log density ----------


def black_box_variational_inference(logprob, D, num_samples):
    def unpack_params(params):
        mean, log_std = params[:D], params[D:]
        return mean, log_std

    def gaussian_entropy(log_std):
        return 0.5 * D * (1.0 + np.log(2 * np.pi)) + np.sum(log_std)

    rs = npr.RandomState(0)

    def variational_objective(params, t):
        mean, log_std = unpack_params(params)
        samples = rs.randn(num_samples, D) * np.exp(log_std) + mean
        lower_bound = gaussian_entropy(log_std) + np.mean(logprob(samples, t))
        return -lower_bound

    return variational_objective, rs


def log_density(x, t):
    mu, log_sigma = x[:, 0], x[:, 1]
    sigma_density = -0.5 * (log_sigma / 1.35) ** 2
    mu_density = -0.5 * mu**2 * np.exp(-2 * log_sigma) - log_sigma
    return sigma_density + mu_density


def test_black_box_variational_inference_draws_from_the_closed_over_stream() -> None:
    objective, rs = black_box_variational_inference(log_density, 2, 50)
    params = np.array([0.1, 0.2, -0.3, 0.1])
    compiled = ad.value_and_grad(objective)
    rs.seed(3)
    value, gradient = compiled(params, 0)
    rs.seed(3)
    assert np.isclose(value, objective(params, 0))

    # The same draws for every evaluation: reseed before each, as the sample is a constant.
    def seeded(p: np.ndarray) -> float:
        rs.seed(3)
        return float(objective(p, 0))

    np.testing.assert_allclose(gradient, central_differences(seeded, params), rtol=1e-5, atol=1e-7)


# ---- an incompressible-flow projection on a periodic grid ----------------------------------------


def project(vx, vy, iterations=5):
    p = np.zeros(vx.shape)
    h = 1.0 / vx.shape[0]
    div = (
        -0.5
        * h
        * (
            np.roll(vx, -1, axis=0)
            - np.roll(vx, 1, axis=0)
            + np.roll(vy, -1, axis=1)
            - np.roll(vy, 1, axis=1)
        )
    )
    for _ in range(iterations):
        p = (
            div
            + np.roll(p, 1, axis=0)
            + np.roll(p, -1, axis=0)
            + np.roll(p, 1, axis=1)
            + np.roll(p, -1, axis=1)
        ) / 4.0
    vx = vx - 0.5 * (np.roll(p, -1, axis=0) - np.roll(p, 1, axis=0)) / h
    vy = vy - 0.5 * (np.roll(p, -1, axis=1) - np.roll(p, 1, axis=1)) / h
    return vx, vy


def kinetic_energy_after(vx, vy, num_time_steps):
    for _ in range(num_time_steps):
        vx, vy = project(vx, vy)
    return np.sum(vx**2 + vy**2)


def test_a_flow_projection_on_a_periodic_grid() -> None:
    rs = npr.RandomState(2)
    check(kinetic_energy_after, rs.randn(6, 6), rs.randn(6, 6), 3, argnums=(0, 1))


# ---- an L2 penalty through ad.flatten inside the loss --------------------------------------------


def l2_norm(params):
    flattened, _ = ad.flatten(params)
    return np.dot(flattened, flattened)


def log_posterior(params, inputs, targets, L2_reg):
    log_prior = -L2_reg * l2_norm(params)
    outputs = inputs
    for W, b in params:
        outputs = np.tanh(np.dot(outputs, W) + b)
    return log_prior + np.sum(log_normalise(outputs) * targets)


def test_an_l2_penalty_through_flatten_inside_the_loss() -> None:
    rs = npr.RandomState(4)
    params = init_random_params(0.5, [3, 4, 2], rs)
    check(log_posterior, params, rs.randn(5, 3), rs.randn(5, 2), 0.1)


# ---- checks --------------------------------------------------------------------------------------


def check(fn: Any, *args: Any, argnums: int | tuple[int, ...] = 0) -> None:
    """The compiled value and gradient against the plain function, central differences and,
    when it is installed, HIPS autograd running the same source (`tests.autograd_twin`)."""
    value, gradient = ad.value_and_grad(fn, argnums=argnums)(*args)
    np.testing.assert_allclose(value, fn(*args), rtol=1e-12, atol=1e-12)
    positions = (argnums,) if isinstance(argnums, int) else argnums
    gradients = (gradient,) if isinstance(argnums, int) else gradient
    for position, got in zip(positions, gradients, strict=True):
        rest = list(args)

        def at(tree: Any, position: int = position, rest: list[Any] = rest) -> float:
            rest[position] = tree
            return float(fn(*rest))

        assert_trees_close(got, central_differences(at, args[position]), rtol=1e-5, atol=1e-7)
    autograd, twin = autograd_twin(fn)
    expected = autograd.grad(twin, argnum=positions[0])(*args)
    assert_trees_close(gradients[0], _as_given(expected, args[positions[0]]), 1e-9, 1e-12)


def _as_given(tree: Any, like: Any) -> Any:
    """autograd's gradient of a list of tuples comes back as a list of lists: nested as given."""
    if isinstance(like, tuple):
        return tuple(_as_given(t, item) for t, item in zip(tree, like, strict=True))
    if isinstance(like, list):
        return [_as_given(t, item) for t, item in zip(tree, like, strict=True)]
    if isinstance(like, dict):
        return {k: _as_given(tree[k], like[k]) for k in like}
    return tree
