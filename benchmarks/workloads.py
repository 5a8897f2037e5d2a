"""The workloads of the speed issues (8 and 22): each a plain NumPy function (the source a user
would hand to ``ad.value_and_grad``), a hand-written NumPy forward and backward returning the same
``(value, gradients)``, and a maker of inputs at a given size (full for timing, tiny for the
smoke test).

The references are written as one would by hand for speed: no autodiff bookkeeping, in-place
updates where a buffer is dead, batched matrix products where a loop allows it. They are
checked against ``ad.value_and_grad`` (``tests/unit/test_benchmarks.py``, and at the start of
every benchmark run), so that the ratio compares like with like.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import optree

Inputs = tuple[Any, ...]
Reference = Callable[..., tuple[Any, tuple[Any, ...]]]


@dataclass(frozen=True)
class Workload:
    """One benchmark: ``function(*inputs)`` is differentiated w.r.t. the arguments at
    ``argnums``; ``reference(*inputs)`` returns the value and those gradients by hand."""

    name: str
    description: str
    function: Callable[..., Any]
    reference: Reference
    make_inputs: Callable[[np.random.Generator, dict[str, int]], Inputs]
    argnums: tuple[int, ...]
    sizes: dict[str, int]  # the sizes the issue times
    tiny: dict[str, int]  # the sizes the smoke test runs
    target: float | None = 1.0  # the target for ours / hand-written NumPy, if any
    floor: Callable[..., Any] | None = None
    """The NumPy kernel calls that any value-and-gradient code of ``function`` has to make,
    given the same inputs: a lower bound for a runtime that calls NumPy's kernels (ours, and
    the hand-written reference). See Note [Kernel floor]."""

    jax_function: Callable[..., Any] | None = None
    """The source JAX's column runs instead of ``function`` (``np`` bound to ``jax.numpy``),
    when JAX cannot compile ``function`` as it is: a long plain loop, which JAX unrolls."""
    native_target: tuple[str, float] | None = None
    """The issue's target for the native tier (issue 22): its time at most this many times
    the column named, ``numpy`` (the hand-written reference) or ``jax``."""

    def inputs(self, *, tiny: bool = False, seed: int = 0) -> Inputs:
        return self.make_inputs(np.random.default_rng(seed), self.tiny if tiny else self.sizes)


# ----------------------------------------------------------------------------------------------
# MLP 784-256-10, batch 128, softmax cross-entropy


def mlp_loss(w1, b1, w2, b2, x, y):
    h = np.tanh(x @ w1 + b1)
    logits = h @ w2 + b2
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    log_probs = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.mean(np.sum(y * log_probs, axis=1))


def mlp_reference(w1, b1, w2, b2, x, y):
    n = x.shape[0]
    h = np.tanh(x @ w1 + b1)
    logits = h @ w2
    logits += b2
    logits -= logits.max(axis=1, keepdims=True)
    e = np.exp(logits)
    s = e.sum(axis=1, keepdims=True)
    logits -= np.log(s)
    value = -np.sum(y * logits) / n
    dlogits = e
    dlogits *= y.sum(axis=1, keepdims=True) / (n * s)
    dlogits -= y / n
    dw2 = h.T @ dlogits
    db2 = dlogits.sum(axis=0)
    dz = dlogits @ w2.T
    dz *= 1.0 - h * h
    dw1 = x.T @ dz
    db1 = dz.sum(axis=0)
    return value, (dw1, db1, dw2, db2)


def mlp_inputs(rng: np.random.Generator, size: dict[str, int]) -> Inputs:
    batch, n_in, n_hidden, n_out = size["batch"], size["inputs"], size["hidden"], size["outputs"]
    w1 = rng.standard_normal((n_in, n_hidden)) / np.sqrt(n_in)
    b1 = rng.standard_normal(n_hidden) * 0.1
    w2 = rng.standard_normal((n_hidden, n_out)) / np.sqrt(n_hidden)
    b2 = rng.standard_normal(n_out) * 0.1
    x = rng.standard_normal((batch, n_in))
    y = np.eye(n_out)[rng.integers(0, n_out, size=batch)]
    return w1, b1, w2, b2, x, y


# ----------------------------------------------------------------------------------------------
# A chain of 50 elementwise operations: ten lines of five each, then the sum


def chain(x):
    h = 0.5 * (np.tanh(1.5 * np.sin(x)) + x)
    h = 0.5 * (np.tanh(1.5 * np.sin(h)) + x)
    h = 0.5 * (np.tanh(1.5 * np.sin(h)) + x)
    h = 0.5 * (np.tanh(1.5 * np.sin(h)) + x)
    h = 0.5 * (np.tanh(1.5 * np.sin(h)) + x)
    h = 0.5 * (np.tanh(1.5 * np.sin(h)) + x)
    h = 0.5 * (np.tanh(1.5 * np.sin(h)) + x)
    h = 0.5 * (np.tanh(1.5 * np.sin(h)) + x)
    h = 0.5 * (np.tanh(1.5 * np.sin(h)) + x)
    h = 0.5 * (np.tanh(1.5 * np.sin(h)) + x)
    return np.sum(h)


CHAIN_LINES = 10


def chain_reference(x):
    saved = []
    h = x
    for _ in range(CHAIN_LINES):
        t = np.sin(h)
        t *= 1.5
        np.tanh(t, out=t)
        saved.append((h, t))
        h = t + x
        h *= 0.5
    value = np.sum(h)
    g = np.full_like(x, 0.5)  # d value / d (t + x) of the last line
    dx = np.zeros_like(x)
    for i in range(CHAIN_LINES - 1, -1, -1):
        h_in, t = saved[i]
        if i < CHAIN_LINES - 1:
            g *= 0.5
        dx += g
        t *= t
        np.subtract(1.0, t, out=t)
        g *= t
        g *= 1.5
        g *= np.cos(h_in)
    dx += g
    return value, (dx,)


# Note [Kernel floor]
# The large chain spends most of its time in NumPy's float64 sin and cos, which are scalar libm
# calls (several times slower per element than tanh, which NumPy vectorises): the value needs
# sin(h) on each line, the gradient cos(h) on each line, and tanh the forward. Any code that
# calls NumPy's kernels makes these 30 calls on 2,000,000 elements whatever else it saves
# (allocations, memory traffic, temporaries), so their time over the reference's is the lowest
# ratio reachable without writing a faster sine than NumPy's. The benchmark reports it.


def chain_floor(x):
    for _ in range(CHAIN_LINES):
        np.sin(x)
        np.tanh(x)
        np.cos(x)


def chain_inputs(rng: np.random.Generator, size: dict[str, int]) -> Inputs:
    return (rng.standard_normal(size["n"]),)


# ----------------------------------------------------------------------------------------------
# Rosenbrock with slices


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def rosenbrock_reference(x):
    head = x[:-1]
    d = x[1:] - head * head
    e = 1.0 - head
    value = np.sum(100.0 * (d * d) + e * e)
    dx = np.zeros_like(x)
    d *= 200.0
    dx[1:] = d
    dx[:-1] -= 2.0 * (d * head + e)
    return value, (dx,)


def rosenbrock_inputs(rng: np.random.Generator, size: dict[str, int]) -> Inputs:
    return (rng.uniform(-2.0, 2.0, size["n"]),)


# ----------------------------------------------------------------------------------------------
# Logistic regression


def logistic_loss(w, b, x, y):
    z = x @ w + b
    return np.mean(np.logaddexp(0.0, z) - y * z)


def logistic_reference(w, b, x, y):
    n = x.shape[0]
    z = x @ w
    z += b
    softplus = np.logaddexp(0.0, z)
    value = np.mean(softplus - y * z)
    r = z
    r -= softplus
    np.exp(r, out=r)  # the sigmoid of z
    r -= y
    r /= n
    return value, (r @ x, r.sum())


def logistic_inputs(rng: np.random.Generator, size: dict[str, int]) -> Inputs:
    n, d = size["n"], size["features"]
    w = rng.standard_normal(d) / np.sqrt(d)
    b = np.array(0.1)
    x = rng.standard_normal((n, d))
    y = (rng.uniform(size=n) < 0.5).astype(np.float64)
    return w, b, x, y


# ----------------------------------------------------------------------------------------------
# A tanh RNN over a sequence, with a Python loop over time


def rnn_loss(x, h0, w_in, w_h, w_out, y):
    h = h0
    for t in range(x.shape[0]):
        h = np.tanh(x[t] @ w_in + h @ w_h)
    return np.mean((h @ w_out - y) ** 2)


def rnn_reference(x, h0, w_in, w_h, w_out, y):
    steps, batch, features = x.shape
    hidden = h0.shape[1]
    flat_x = x.reshape(steps * batch, features)
    hs = np.empty((steps + 1, batch, hidden))
    hs[0] = h0
    hs[1:] = (flat_x @ w_in).reshape(steps, batch, hidden)  # every step's input at once
    for t in range(steps):
        hs[t + 1] += hs[t] @ w_h
        np.tanh(hs[t + 1], out=hs[t + 1])
    error = hs[steps] @ w_out - y
    value = np.mean(error * error)
    error *= 2.0 / error.size
    dw_out = hs[steps].T @ error
    dz = np.empty((steps, batch, hidden))
    dh = error @ w_out.T
    for t in range(steps - 1, -1, -1):
        h = hs[t + 1]
        np.multiply(dh, 1.0 - h * h, out=dz[t])
        dh = dz[t] @ w_h.T
    flat_dz = dz.reshape(steps * batch, hidden)
    dw_in = flat_x.T @ flat_dz
    dw_h = hs[:steps].reshape(steps * batch, hidden).T @ flat_dz
    return value, (dw_in, dw_h, dw_out)


def rnn_inputs(rng: np.random.Generator, size: dict[str, int]) -> Inputs:
    steps, batch, n_in, hidden = size["steps"], size["batch"], size["inputs"], size["hidden"]
    x = rng.standard_normal((steps, batch, n_in))
    h0 = np.zeros((batch, hidden))
    w_in = rng.standard_normal((n_in, hidden)) / np.sqrt(n_in)
    w_h = rng.standard_normal((hidden, hidden)) / np.sqrt(hidden)
    w_out = rng.standard_normal((hidden, 1)) / np.sqrt(hidden)
    y = rng.standard_normal((batch, 1))
    return x, h0, w_in, w_h, w_out, y


# ----------------------------------------------------------------------------------------------
# Self-attention (one head) with a residual connection and layer norm


def attention_loss(x, wq, wk, wv, gamma, beta, target):
    q = x @ wq
    k = x @ wk
    v = x @ wv
    scores = (q @ k.T) / np.sqrt(x.shape[1])
    scores = scores - np.max(scores, axis=1, keepdims=True)
    p = np.exp(scores)
    p = p / np.sum(p, axis=1, keepdims=True)
    h = x + p @ v
    centred = h - np.mean(h, axis=1, keepdims=True)
    var = np.mean(centred * centred, axis=1, keepdims=True)
    out = centred / np.sqrt(var + 1e-5) * gamma + beta
    return np.mean((out - target) ** 2)


def attention_reference(x, wq, wk, wv, gamma, beta, target):
    scale = 1.0 / np.sqrt(x.shape[1])
    q = x @ wq
    k = x @ wk
    v = x @ wv
    scores = q @ k.T
    scores *= scale
    scores -= scores.max(axis=1, keepdims=True)
    p = np.exp(scores)
    p /= p.sum(axis=1, keepdims=True)
    h = p @ v
    h += x
    h -= h.mean(axis=1, keepdims=True)
    rstd = 1.0 / np.sqrt(np.mean(h * h, axis=1, keepdims=True) + 1e-5)
    xhat = h
    xhat *= rstd
    diff = xhat * gamma
    diff += beta
    diff -= target
    value = np.mean(diff * diff)
    dout = diff
    dout *= 2.0 / diff.size
    dgamma = np.sum(dout * xhat, axis=0)
    dbeta = dout.sum(axis=0)
    dxhat = dout * gamma
    dh = dxhat - dxhat.mean(axis=1, keepdims=True)
    dh -= xhat * np.mean(dxhat * xhat, axis=1, keepdims=True)
    dh *= rstd
    dv = p.T @ dh
    dp = dh @ v.T
    dp -= np.sum(dp * p, axis=1, keepdims=True)
    dp *= p
    dp *= scale
    dq = dp @ k
    dk = dp.T @ q
    return value, (x.T @ dq, x.T @ dk, x.T @ dv, dgamma, dbeta)


def attention_inputs(rng: np.random.Generator, size: dict[str, int]) -> Inputs:
    n, d = size["tokens"], size["width"]
    x = rng.standard_normal((n, d))
    wq, wk, wv = (rng.standard_normal((d, d)) / np.sqrt(d) for _ in range(3))
    gamma = 1.0 + 0.1 * rng.standard_normal(d)
    beta = 0.1 * rng.standard_normal(d)
    target = rng.standard_normal((n, d))
    return x, wq, wk, wv, gamma, beta, target


# ----------------------------------------------------------------------------------------------
# An MLP whose parameters are a list of (W, b) pairs, as HIPS autograd's examples write it: five
# small layers, ten leaves, so that the cost of taking a pytree apart and back shows


def mlp_tree_loss(params, x, y):
    for W, b in params:
        x = np.tanh(x @ W + b)
    return np.mean((x - y) ** 2)


def mlp_tree_reference(params, x, y):
    activations = [x]
    for W, b in params:
        x = x @ W
        x += b
        np.tanh(x, out=x)
        activations.append(x)
    error = x - y
    value = np.mean(error**2)
    grad = error * (2.0 / error.size)
    grads = []
    for (W, _), inputs, outputs in zip(
        reversed(params), reversed(activations[:-1]), reversed(activations[1:]), strict=True
    ):
        grad *= 1.0 - outputs * outputs
        grads.append((inputs.T @ grad, grad.sum(axis=0)))
        grad = grad @ W.T
    return value, (grads[::-1],)


def mlp_tree_inputs(rng: np.random.Generator, size: dict[str, int]) -> Inputs:
    width, layers, batch = size["width"], size["layers"], size["batch"]
    params = [
        (rng.standard_normal((width, width)) / np.sqrt(width), rng.standard_normal(width) * 0.1)
        for _ in range(layers)
    ]
    return params, rng.standard_normal((batch, width)), rng.standard_normal((batch, width))


# ----------------------------------------------------------------------------------------------
# An ODE integrated by explicit Euler, written as a new user would: a plain Python ``for`` loop of
# T = 1000 steps over a small state. Per-operator overhead is all there is (issue 22).

EULER_STEPS = 1000
EULER_DT = 0.01


def euler(theta, x0):
    x = x0
    dt = 0.01
    for _ in range(1000):
        dx = np.tanh(theta @ x) - 0.1 * x
        x = x + dt * dx
    return np.sum(x**2)


def euler_fori_loop(theta, x0):
    """`euler` as JAX compiles it: with ``lax.fori_loop`` (JAX unrolls a plain loop, and
    cannot compile 1,000 steps of it in reasonable time). Run with ``np`` bound to
    ``jax.numpy`` (`benchmarks.others`)."""
    from jax import lax

    def step(_, x):
        dx = np.tanh(theta @ x) - 0.1 * x
        return x + EULER_DT * dx

    x = lax.fori_loop(0, EULER_STEPS, step, x0)
    return np.sum(x**2)


def euler_reference(theta, x0):
    n = x0.shape[0]
    xs = np.empty((EULER_STEPS + 1, n))  # the states, for the backward
    slopes = np.empty((EULER_STEPS, n))  # 1 - tanh(theta x)^2, times dt
    xs[0] = x0
    x = x0
    for t in range(EULER_STEPS):
        a = np.tanh(theta @ x)
        x = x + EULER_DT * (a - 0.1 * x)
        xs[t + 1] = x
        np.multiply(a, a, out=slopes[t])
    value = np.sum(x * x)
    slopes *= -EULER_DT
    slopes += EULER_DT  # dt (1 - a^2)
    g = 2.0 * x
    dz = np.empty((EULER_STEPS, n))  # d value / d (theta x_t)
    keep = 1.0 - 0.1 * EULER_DT  # d x_{t+1} / d x_t, besides the tanh term
    for t in range(EULER_STEPS - 1, -1, -1):
        np.multiply(g, slopes[t], out=dz[t])
        g = keep * g + theta.T @ dz[t]
    dtheta = dz.T @ xs[:EULER_STEPS]  # the sum over steps of outer(dz_t, x_t)
    return value, (dtheta, g)


def euler_inputs(rng: np.random.Generator, size: dict[str, int]) -> Inputs:
    n = size["n"]
    return rng.standard_normal((n, n)) / np.sqrt(n), rng.standard_normal(n)


# ----------------------------------------------------------------------------------------------

WORKLOADS: tuple[Workload, ...] = (
    Workload(
        "mlp",
        "MLP 784-256-10, batch 128, softmax CE",
        mlp_loss,
        mlp_reference,
        mlp_inputs,
        (0, 1, 2, 3),
        {"batch": 128, "inputs": 784, "hidden": 256, "outputs": 10},
        {"batch": 4, "inputs": 6, "hidden": 5, "outputs": 3},
    ),
    Workload(
        "chain-small",
        "chain of 50 elementwise ops, 16 elements",
        chain,
        chain_reference,
        chain_inputs,
        (0,),
        {"n": 16},
        {"n": 3},
        native_target=("numpy", 0.3),
    ),
    Workload(
        "chain-256",
        "same chain, 256 elements",
        chain,
        chain_reference,
        chain_inputs,
        (0,),
        {"n": 256},
        {"n": 4},
    ),
    Workload(
        "chain-large",
        "same chain, 2,000,000 elements",
        chain,
        chain_reference,
        chain_inputs,
        (0,),
        {"n": 2_000_000},
        {"n": 5},
        target=0.6,
        floor=chain_floor,
    ),
    Workload(
        "rosenbrock",
        "Rosenbrock with slices, n = 10,000",
        rosenbrock,
        rosenbrock_reference,
        rosenbrock_inputs,
        (0,),
        {"n": 10_000},
        {"n": 4},
    ),
    Workload(
        "logistic",
        "logistic regression 10,000 x 100",
        logistic_loss,
        logistic_reference,
        logistic_inputs,
        (0, 1),
        {"n": 10_000, "features": 100},
        {"n": 6, "features": 3},
    ),
    Workload(
        "rnn",
        "tanh RNN, 50 steps (a Python loop)",
        rnn_loss,
        rnn_reference,
        rnn_inputs,
        (2, 3, 4),
        {"steps": 50, "batch": 32, "inputs": 64, "hidden": 128},
        {"steps": 3, "batch": 2, "inputs": 3, "hidden": 4},
    ),
    Workload(
        "attention",
        "self-attention + layer norm, 64 x 128",
        attention_loss,
        attention_reference,
        attention_inputs,
        (1, 2, 3, 4, 5),
        {"tokens": 64, "width": 128},
        {"tokens": 3, "width": 4},
    ),
    Workload(
        "mlp-pytree",
        "MLP over a list of 5 (W, b) pairs, 32 x 64",
        mlp_tree_loss,
        mlp_tree_reference,
        mlp_tree_inputs,
        (0,),
        {"layers": 5, "width": 64, "batch": 32},
        {"layers": 2, "width": 3, "batch": 2},
    ),
    Workload(
        "ode-3",
        "explicit Euler, T = 1,000 (a Python loop), 3-element state",
        euler,
        euler_reference,
        euler_inputs,
        (0, 1),
        {"n": 3},
        {"n": 2},
        target=None,
        jax_function=euler_fori_loop,
        native_target=("jax", 2.0),
    ),
    Workload(
        "ode-64",
        "explicit Euler, T = 1,000 (a Python loop), 64-element state",
        euler,
        euler_reference,
        euler_inputs,
        (0, 1),
        {"n": 64},
        {"n": 5},
        target=None,
        jax_function=euler_fori_loop,
    ),
)

BY_NAME: dict[str, Workload] = {workload.name: workload for workload in WORKLOADS}


def assert_agree(workload: Workload, ours: Any, reference: Any) -> None:
    """Ours and the reference give the same value and gradients: rtol 1e-9 elementwise, and
    an atol of 1e-12 of the largest element, for elements that cancel to near zero in a sum
    that the two add up in a different order."""
    (value, grads), (ref_value, ref_grads) = ours, reference
    np.testing.assert_allclose(value, ref_value, rtol=1e-9, err_msg=f"{workload.name}: value")
    for index, got_tree, expected_tree in zip(workload.argnums, grads, ref_grads, strict=True):
        # a gradient of a pytree argument is compared leaf by leaf, in the same structure
        assert optree.tree_structure(got_tree) == optree.tree_structure(expected_tree)
        for got, expected in zip(
            optree.tree_leaves(got_tree), optree.tree_leaves(expected_tree), strict=True
        ):
            _assert_close(workload, index, got, expected)


def _assert_close(workload: Workload, index: int, got: Any, expected: Any) -> None:
    scale = float(np.max(np.abs(expected)))
    np.testing.assert_allclose(
        got, expected, rtol=1e-9, atol=1e-12 * scale, err_msg=f"{workload.name}: d/d arg {index}"
    )
