"""The Rosenbrock function in n dimensions, written with slices, compiled with ad.script.

Run it with ``python examples/rosenbrock.py``; print its IR with
``autodiff dump examples/rosenbrock.py:rosenbrock --stage typed --arg x=f64[5]``.
"""

from __future__ import annotations

import numpy as np

import autodiff as ad


@ad.script
def rosenbrock(x):
    """Sum of 100 (x[i+1] - x[i]^2)^2 + (1 - x[i])^2; its minimum, 0, is at x = (1, ..., 1)."""
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def main() -> None:
    plain = rosenbrock.__wrapped__
    for x in (np.array([-1.2, 1.0, -1.2, 1.0, -1.2]), np.ones(5), np.linspace(-2.0, 2.0, 8)):
        print(f"x = {np.array2string(x, precision=2)}")
        print(f"  plain:    {plain(x):.12f}")
        print(f"  scripted: {rosenbrock(x):.12f}")


if __name__ == "__main__":
    main()
