"""Train a small classifier end to end with SciPy: a one-hidden-layer network on two noisy
interleaved half circles, its parameters a list of (W, b) pairs raveled into one vector with
ad.flatten, and scipy.optimize.minimize(jac=True) given ad.value_and_grad's value and gradient.

    pip install scipy   # or: pip install -e '.[scipy]'
    python examples/train_lbfgs.py
"""

import sys

import numpy as np
from scipy.optimize import minimize

import autodiff as ad


def predict(params, x):
    """The logit of class 1 for each row of x."""
    for W, b in params[:-1]:
        x = np.tanh(x @ W + b)
    W, b = params[-1]
    return (x @ W + b)[:, 0]


def loss(params, x, y):
    """Mean logistic loss for labels y in {-1, 1}, with a little L2 on the weights."""
    margins = y * predict(params, x)
    penalty = sum(np.sum(W**2) for W, b in params)
    return np.mean(np.logaddexp(0.0, -margins)) + 1e-4 * penalty


def half_circles(n, rng):
    """n points on two interleaved half circles, labelled -1 and 1, with Gaussian noise."""
    angle = rng.uniform(0.0, np.pi, n)
    y = np.where(rng.uniform(size=n) < 0.5, -1.0, 1.0)
    x = np.stack([np.cos(angle) + (y > 0), np.sin(angle) * -y + 0.5 * (y > 0)], axis=1)
    return x + 0.1 * rng.standard_normal((n, 2)), y


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
    x, y = half_circles(200, rng)
    params = [  # 2 inputs, 8 hidden units, 1 logit
        (0.5 * rng.standard_normal((2, 8)), np.zeros(8)),
        (0.5 * rng.standard_normal((8, 1)), np.zeros(1)),
    ]

    vector, unflatten = ad.flatten(params)
    loss_and_grad = ad.value_and_grad(loss)

    def objective(v):
        value, grads = loss_and_grad(unflatten(v), x, y)
        return value, ad.flatten(grads)[0]

    value, grad = objective(vector)
    print(f"loss before: {value:.4f} (gradient norm {np.linalg.norm(grad):.4f})")
    # The gradient at the start, against central differences of the plain loss.
    numeric = numerical_grad(lambda v: loss(unflatten(v), x, y), vector)
    error = np.max(np.abs(grad - numeric))
    checked = np.allclose(grad, numeric, rtol=1e-5, atol=1e-6)
    verdict = "passed" if checked else "FAILED"
    print(f"gradient check: max abs error {error:.1e} vs central differences: {verdict}")

    result = minimize(objective, vector, jac=True, method="L-BFGS-B")
    trained = unflatten(result.x)
    accuracy = np.mean(np.sign(predict(trained, x)) == y)
    print(f"loss after:  {result.fun:.4f} ({result.nit} iterations)")
    print(f"accuracy:    {accuracy:.1%}")
    sys.exit(0 if checked and accuracy > 0.9 else 1)
