"""The forward-mode workload: a tall Jacobian (few inputs, many outputs), where ``ad.jacfwd``
(one compiled JVP per input) should beat ``ad.jacobian`` (one VJP per output), timed against
the Jacobian written by hand in NumPy and, when installed, JAX's jitted ``jacfwd``."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import numpy as np

import autodiff as ad


def tall(x, a):
    """R^n -> R^m with m >> n: a layer scaled by the input's squared norm."""
    return np.tanh(a @ x) * np.sum(x**2)


def tall_jacobian_by_hand(x: np.ndarray, a: np.ndarray) -> np.ndarray:
    """d/dx of tanh(a x) s with s = |x|^2: diag(1 - t^2) a s + t (2 x)^T."""
    t = np.tanh(a @ x)
    s = np.sum(x**2)
    return (1 - t**2)[:, None] * a * s + np.outer(t, 2 * x)


def inputs(quick: bool) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    outputs = 500 if quick else 2000
    return rng.standard_normal(8), rng.standard_normal((outputs, 8)) / 3


def calls(quick: bool, with_jax: bool) -> dict[str, Callable[[], Any]]:
    """Each way of computing the Jacobian, as a call on fixed inputs, checked to agree."""
    x, a = inputs(quick)
    jacfwd, jacrev = ad.jacfwd(tall), ad.jacrev(tall)  # made once, as JAX's jit is
    found: dict[str, Callable[[], Any]] = {
        "ours jacfwd": lambda: jacfwd(x, a),
        "ours jacrev": lambda: jacrev(x, a),
        "numpy by hand": lambda: tall_jacobian_by_hand(x, a),
    }
    if with_jax:
        try:
            jax = importlib.import_module("jax")
        except ImportError:
            pass
        else:
            jax.config.update("jax_enable_x64", True)
            jnp = importlib.import_module("jax.numpy")
            jitted = jax.jit(jax.jacfwd(lambda x, a: jnp.tanh(a @ x) * jnp.sum(x**2)))
            jx, ja = jnp.asarray(x), jnp.asarray(a)
            found["jax jit jacfwd"] = lambda: jax.block_until_ready(jitted(jx, ja))
    expected = tall_jacobian_by_hand(x, a)
    for name, call in found.items():
        np.testing.assert_allclose(
            np.asarray(call()), expected, rtol=1e-9, atol=1e-12, err_msg=name
        )
    return found


def format_table(quick: bool, times: dict[str, float]) -> str:
    x, a = inputs(quick)
    lines = [
        f"tall Jacobian, {a.shape[0]:,} outputs x {x.size} inputs: "
        "jacfwd runs 8 JVPs, jacrev (ad.jacobian) one VJP per output",
        "| method | µs | / numpy by hand |",
        "|---|---|---|",
    ]
    reference = times["numpy by hand"]
    for name, micro in times.items():
        lines.append(f"| {name} | {micro:,.0f} | {micro / reference:.2f} |")
    return "\n".join(lines)
