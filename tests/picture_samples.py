"""Functions to draw, for the tests of pictures and networkx graphs (`tests/unit/test_dot.py`,
`test_dump_pictures.py`, `test_networkx_graphs.py`, `test_notebook_display.py`): an MLP loss, a
loop and a branch, with their `autodiff dump` argument types and NumPy arguments."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

PATH = Path(__file__)


def mlp_loss(w1, b1, w2, x, y):  # type: ignore[no-untyped-def]
    h = np.tanh(x @ w1 + b1)
    logits = h @ w2
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    log_probs = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.mean(np.sum(y * log_probs, axis=1))


def looped(x, w, n: int):  # type: ignore[no-untyped-def]
    h = x
    for i in range(n):
        h = np.tanh(h * w) + 0.1 * i
    return np.sum(h * h)


def branchy(x, c):  # type: ignore[no-untyped-def]
    if c > 0.0:  # noqa: SIM108 (a statement, to draw a prim::If)
        y = np.exp(x) * 2.0
    else:
        y = x + 1.0
    return np.sum(y)


# Per function: `autodiff dump` --arg values, and NumPy arguments of those types.
ARG_TYPES: dict[str, list[str]] = {
    "mlp_loss": ["w1=f64[4,5]", "b1=f64[5]", "w2=f64[5,3]", "x=f64[6,4]", "y=f64[6,3]"],
    "looped": ["x=f64[3]", "w=f64[3]", "n=4"],
    "branchy": ["x=f64[3]", "c=0.5"],
}


def arguments(name: str) -> tuple[Any, ...]:
    rng = np.random.default_rng(0)
    if name == "mlp_loss":
        y = np.eye(3)[rng.integers(0, 3, size=6)]
        return (
            rng.standard_normal((4, 5)),
            rng.standard_normal(5),
            rng.standard_normal((5, 3)),
            rng.standard_normal((6, 4)),
            y,
        )
    if name == "looped":
        return rng.standard_normal(3), rng.standard_normal(3), 4
    return rng.standard_normal(3), 0.5
