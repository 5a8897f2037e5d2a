"""A tanh recurrent network over a sequence, with a Python loop over time, compiled with
ad.script; the loop becomes a prim::Loop in the IR, and its gradient a prim::Loop that runs the
steps backwards, reading what the forward loop kept per step from preallocated tapes.

    python examples/rnn.py
    autodiff dump examples/rnn.py:rnn_loss --stage df --arg x=f64[10,2,3] --arg h0=f64[2,4] \\
        --arg w_in=f64[3,4] --arg w_h=f64[4,4] --arg w_out=f64[4,1] --arg y=f64[2,1]
"""

from __future__ import annotations

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


def main() -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((10, 2, 3))
    h0 = np.zeros((2, 4))
    w_in = rng.standard_normal((3, 4)) * 0.5
    w_h = rng.standard_normal((4, 4)) * 0.5
    w_out = rng.standard_normal((4, 1))
    y = rng.standard_normal((2, 1))

    scripted = ad.script(rnn_loss)
    print(f"plain:    {rnn_loss(x, h0, w_in, w_h, w_out, y):.12f}")
    print(f"scripted: {scripted(x, h0, w_in, w_h, w_out, y):.12f}")
    grads = ad.grad(rnn_loss, argnums=(2, 3, 4))(x, h0, w_in, w_h, w_out, y)
    print("d loss / d w_h:")
    print(grads[1])
    print(ad.gradcheck(rnn_loss, x, h0, w_in, w_h, w_out, y))


if __name__ == "__main__":
    main()
