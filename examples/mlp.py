"""A two-layer perceptron's softmax cross-entropy loss, in plain NumPy, compiled with ad.script.

    python examples/mlp.py
    autodiff dump examples/mlp.py:loss --stage typed --arg w1=f64[4,8] --arg b1=f64[8] \\
        --arg w2=f64[8,3] --arg b2=f64[3] --arg x=f64[16,4] --arg y=f64[16,3]
"""

from __future__ import annotations

import numpy as np

import autodiff as ad


def loss(w1, b1, w2, b2, x, y):
    """Mean cross-entropy of softmax(tanh(x @ w1 + b1) @ w2 + b2) against one-hot rows y."""
    h = np.tanh(x @ w1 + b1)
    logits = h @ w2 + b2
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    log_probs = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.mean(np.sum(y * log_probs, axis=1))


def main() -> None:
    rng = np.random.default_rng(0)
    w1, b1 = rng.standard_normal((4, 8)) * 0.5, np.zeros(8)
    w2, b2 = rng.standard_normal((8, 3)) * 0.5, np.zeros(3)
    x = rng.standard_normal((16, 4))
    y = np.eye(3)[rng.integers(0, 3, size=16)]

    scripted = ad.script(loss)
    print(f"plain:    {loss(w1, b1, w2, b2, x, y):.12f}")
    print(f"scripted: {scripted(w1, b1, w2, b2, x, y):.12f}")


if __name__ == "__main__":
    main()
