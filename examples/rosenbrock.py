"""The Rosenbrock function in n dimensions, written with slices: its value and gradient with
ad.value_and_grad at a few points, checked against central finite differences.

    python examples/rosenbrock.py
    autodiff dump examples/rosenbrock.py:rosenbrock --stage df --arg x=f64[5]
"""

import sys

import numpy as np

import autodiff as ad


def rosenbrock(x):
    """Sum of 100 (x[i+1] - x[i]^2)^2 + (1 - x[i])^2; its minimum, 0, is at x = (1, ..., 1)."""
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def numerical_grad(f, x, eps=1e-6):
    """Central differences of the scalar function f at the vector x."""
    grad = np.zeros_like(x)
    for i in range(x.size):
        step = np.zeros_like(x)
        step[i] = eps
        grad[i] = (f(x + step) - f(x - step)) / (2 * eps)
    return grad


if __name__ == "__main__":
    rosenbrock_and_grad = ad.value_and_grad(rosenbrock)
    worst, passed = 0.0, True
    for x in (np.array([-1.2, 1.0, -1.2, 1.0, -1.2]), np.ones(5), np.linspace(-2.0, 2.0, 8)):
        value, grad = rosenbrock_and_grad(x)
        print(f"x = {np.array2string(x, precision=2)}")
        print(f"  f(x) = {value:.6f}, grad f(x) = {np.array2string(grad, precision=2)}")
        numeric = numerical_grad(rosenbrock, x)
        worst = max(worst, np.max(np.abs(grad - numeric)))
        passed = passed and np.allclose(grad, numeric, rtol=1e-5, atol=1e-6)
    verdict = "passed" if passed else "FAILED"
    print(f"gradient check: max abs error {worst:.1e} vs central differences: {verdict}")
    sys.exit(0 if passed else 1)
