"""An implicit layer: its output is the fixed point x* = tanh(W x* + b), found by plain Python
iteration that the compiler never reads, and its gradient comes from the implicit function
theorem, written by hand with ad.custom_vjp. The loss around it is compiled as usual; the
gradient is checked against central finite differences, and the backward graph printed shows
the custom node.

    python examples/implicit_layer.py
    autodiff dump examples/implicit_layer.py:loss --stage df --arg W=f64[4,4] --arg b=f64[4] \\
        --arg y=f64[4]
"""

import sys

import numpy as np

import autodiff as ad


@ad.custom_vjp
def fixed_point(W, b):
    """x with x = tanh(W x + b), by iteration (W small enough to make it a contraction)."""
    x = np.zeros(len(b))
    for _ in range(500):
        new = np.tanh(W @ x + b)
        if np.max(np.abs(new - x)) < 1e-14:
            return new
        x = new
    return x


def fixed_point_fwd(W, b):
    x = fixed_point(W, b)
    return x, (W, x)


def fixed_point_bwd(residuals, g):
    """With F(x, W, b) = x - tanh(W x + b) = 0 and D = diag(1 - x**2), dx = (I - D W)^-1 D (dW x
    + db): the vjp solves (I - D W)^T u = g once, and then db = D u and dW = (D u) x^T."""
    W, x = residuals
    d = 1 - x**2
    u = np.linalg.solve((np.eye(len(x)) - d[:, None] * W).T, g)
    return np.outer(d * u, x), d * u


fixed_point.defvjp(fixed_point_fwd, fixed_point_bwd)


def loss(W, b, y):
    x = fixed_point(W, b)
    return np.sum((x - y) ** 2) + 0.1 * np.sum(W**2)


def numerical_grad(f, x, eps=1e-6):
    """Central differences of the scalar function f at the array x."""
    grad = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[index] = eps
        grad[index] = (f(x + step) - f(x - step)) / (2 * eps)
    return grad


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    W, b, y = 0.3 * rng.standard_normal((4, 4)), rng.standard_normal(4), rng.standard_normal(4)
    value_and_grads = ad.value_and_grad(loss, argnums=(0, 1))
    value, (dW, db) = value_and_grads(W, b, y)
    print(f"loss {value:.6f}")
    numeric_W = numerical_grad(lambda W: loss(W, b, y), W)
    numeric_b = numerical_grad(lambda b: loss(W, b, y), b)
    worst = max(np.max(np.abs(dW - numeric_W)), np.max(np.abs(db - numeric_b)))
    passed = np.allclose(dW, numeric_W, rtol=1e-5, atol=1e-8) and np.allclose(
        db, numeric_b, rtol=1e-5, atol=1e-8
    )
    print(value_and_grads.gradient_for(W, b, y).df)
    verdict = "passed" if passed else "FAILED"
    print(f"gradient check: max abs error {worst:.1e} vs central differences: {verdict}")
    sys.exit(0 if passed else 1)
