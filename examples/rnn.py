"""A tanh recurrent network over a sequence, with a Python loop over time: the loop becomes a
prim::Loop in the IR, and its gradient a loop that runs the steps backwards, reading what the
forward loop kept per step from preallocated tapes. Prints the loss and its gradient, checked
against central finite differences.

    python examples/rnn.py
    autodiff dump examples/rnn.py:rnn_loss --stage df --arg x=f64[10,2,3] --arg h0=f64[2,4] \\
        --arg w_in=f64[3,4] --arg w_h=f64[4,4] --arg w_out=f64[4,1] --arg y=f64[2,1]
"""

import sys

import numpy as np

import autodiff as ad


def step(h, x_t, w_in, w_h):
    return np.tanh(x_t @ w_in + h @ w_h)


def rnn_loss(x, h0, w_in, w_h, w_out, y):
    """Run the cell over x[0], ..., x[T-1] (x is time x batch x features); the mean squared
    error of a linear read-out of the last state."""
    T = x.shape[0]
    h = h0
    for t in range(T):
        h = step(h, x[t], w_in, w_h)
    prediction = h @ w_out
    return np.mean((prediction - y) ** 2)


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
    x = rng.standard_normal((10, 2, 3))
    h0 = np.zeros((2, 4))
    weights = {
        "w_in": rng.standard_normal((3, 4)) * 0.5,
        "w_h": rng.standard_normal((4, 4)) * 0.5,
        "w_out": rng.standard_normal((4, 1)),
    }
    y = rng.standard_normal((2, 1))

    def loss(weights):
        return rnn_loss(x, h0, weights["w_in"], weights["w_h"], weights["w_out"], y)

    value, grads = ad.value_and_grad(loss)(weights)  # a dict of gradients, like weights
    print(f"loss: {value:.6f}")
    print("d loss / d w_h:")
    print(grads["w_h"])

    vector, unflatten = ad.flatten(weights)
    numeric = numerical_grad(lambda v: loss(unflatten(v)), vector)
    analytic = ad.flatten(grads)[0]
    error = np.max(np.abs(analytic - numeric))
    passed = np.allclose(analytic, numeric, rtol=1e-5, atol=1e-6)
    verdict = "passed" if passed else "FAILED"
    print(f"gradient check: max abs error {error:.1e} vs central differences: {verdict}")
    sys.exit(0 if passed else 1)
