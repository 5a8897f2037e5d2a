"""Realistic loss functions for the backend tests: each runs unchanged on NumPy, Dask and
Array API arrays (logistic regression, an MLP with a softmax cross-entropy, in-place writes,
loops and a branch on data)."""

from __future__ import annotations

import numpy as np


def logistic_regression(w, X, y):
    z = X @ w
    p = 1 / (1 + np.exp(-z))
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))


def mlp_softmax_cross_entropy(params, X, Y):
    h = X
    for W, b in params[:-1]:
        h = np.tanh(h @ W + b)
    W, b = params[-1]
    logits = h @ W + b
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    log_normaliser = np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.mean(np.sum(Y * (shifted - log_normaliser), axis=1))


def in_place_writes(w, X):
    h = X @ w
    out = np.zeros(h.shape)
    out[1:] = h[:-1]
    out[0] = 2.0
    h2 = h.copy()
    h2[2:4] += 1.0
    return np.sum(out * h2) + np.sum(np.where(h > 0, h, 0.1 * h) ** 2)


def loop_and_branch(w, X):
    h = X @ w
    s = 0.0
    for i in range(3):
        s = s + np.sum(np.sin(h * i))
    if np.sum(h) > 0:
        s = s * 2
    return s


def problem(seed: int = 0):
    """Arguments for each function above, as NumPy arrays: 10 rows, 3 features."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((10, 3))
    y = (rng.random(10) > 0.5) * 1.0
    Y = np.eye(2)[(rng.random(10) > 0.5).astype(int)]
    w = rng.standard_normal(3)
    params = [
        (rng.standard_normal((3, 4)), rng.standard_normal(4)),
        (rng.standard_normal((4, 2)), rng.standard_normal(2)),
    ]
    return {
        logistic_regression: (w, X, y),
        mlp_softmax_cross_entropy: (params, X, Y),
        in_place_writes: (w, X),
        loop_and_branch: (w, X),
    }
