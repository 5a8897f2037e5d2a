"""A two-layer perceptron's softmax cross-entropy loss, in plain NumPy: its value and gradient
with ad.value_and_grad, checked against central finite differences.

    python examples/mlp.py
    autodiff dump examples/mlp.py:loss --stage df --arg w1=f64[4,8] --arg b1=f64[8] \\
        --arg w2=f64[8,3] --arg b2=f64[3] --arg x=f64[16,4] --arg y=f64[16,3]
"""

import sys

import numpy as np

import autodiff as ad


def loss(w1, b1, w2, b2, x, y):
    """Mean cross-entropy of softmax(tanh(x @ w1 + b1) @ w2 + b2) against one-hot rows y."""
    h = np.tanh(x @ w1 + b1)
    logits = h @ w2 + b2
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    log_probs = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.mean(np.sum(y * log_probs, axis=1))


def numerical_grad(f, x, eps=1e-6):
    """Central differences of the scalar function f at the vector x."""
    grad = np.zeros_like(x)
    for i in range(x.size):
        step = np.zeros_like(x)
        step[i] = eps
        grad[i] = (f(x + step) - f(x - step)) / (2 * eps)
    return grad


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    w1, w2 = rng.standard_normal((4, 8)) * 0.5, rng.standard_normal((8, 3)) * 0.5
    params = (w1, np.zeros(8), w2, np.zeros(3))
    x = rng.standard_normal((16, 4))
    y = np.eye(3)[rng.integers(0, 3, size=16)]

    value, grads = ad.value_and_grad(loss, argnums=(0, 1, 2, 3))(*params, x, y)
    print(f"loss: {value:.6f}")
    print("d loss / d b2:", grads[3])

    # All four gradients as one vector, against finite differences of the loss of one vector.
    vector, unflatten = ad.flatten(params)
    numeric = numerical_grad(lambda v: loss(*unflatten(v), x, y), vector)
    analytic = ad.flatten(grads)[0]
    error = np.max(np.abs(analytic - numeric))
    passed = np.allclose(analytic, numeric, rtol=1e-5, atol=1e-6)
    verdict = "passed" if passed else "FAILED"
    print(f"gradient check: max abs error {error:.1e} vs central differences: {verdict}")
    sys.exit(0 if passed else 1)
