"""Start here: the gradient of an ordinary NumPy function, checked, and the graph it ran.

    python examples/quickstart.py
    autodiff dump examples/quickstart.py:loss --stage df \\
        --arg w=f64[3,2] --arg b=f64[2] --arg x=f64[8,3] --arg y=f64[8,2]
"""

import numpy as np

import autodiff as ad


def loss(w, b, x, y):
    """Mean squared error of a one-layer tanh network."""
    prediction = np.tanh(x @ w + b)
    return np.mean((prediction - y) ** 2)


def main():
    rng = np.random.default_rng(0)
    w, b = rng.standard_normal((3, 2)), np.zeros(2)
    x, y = rng.standard_normal((8, 3)), rng.standard_normal((8, 2))

    value, (dw, db) = ad.value_and_grad(loss, argnums=(0, 1))(w, b, x, y)
    print(f"loss = {value:.6f}")
    print("d loss / d w =")
    print(dw)
    print("d loss / d b =", db)

    # The same gradient by central finite differences, one coordinate of w at a time.
    eps = 1e-6
    numeric = np.zeros_like(w)
    for i in np.ndindex(w.shape):
        step = np.zeros_like(w)
        step[i] = eps
        numeric[i] = (loss(w + step, b, x, y) - loss(w - step, b, x, y)) / (2 * eps)
    error = np.max(np.abs(dw - numeric))
    passed = error < 1e-6
    verdict = "passed" if passed else "FAILED"
    print(f"gradient check: max abs error {error:.1e} vs central differences: {verdict}")

    # What ran: the backward graph df, specialised to these shapes (gradient.f is the forward).
    gradient = ad.grad(loss, argnums=(0, 1)).gradient_for(w, b, x, y)
    print()
    print(gradient.df)
    if not passed:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
