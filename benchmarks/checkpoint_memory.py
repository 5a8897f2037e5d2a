"""Rematerialisation: peak memory and time of a 20-layer residual loss's value and gradient,
with and without ``ad.checkpoint`` on its layer (issue 20; Note [Checkpoints] in
`autodiff.checkpoints`)."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

import autodiff as ad

LAYERS = 20


def residual_block(x, W1, b1, W2):
    h = np.maximum(x @ W1 + b1, 0.0)
    return x + np.tanh(h @ W2)


checkpointed_block = ad.checkpoint(residual_block)


def residual_loss(params, x):
    for W1, b1, W2 in params:
        x = residual_block(x, W1, b1, W2)
    return np.mean(x**2)


def checkpointed_residual_loss(params, x):
    for W1, b1, W2 in params:
        x = checkpointed_block(x, W1, b1, W2)
    return np.mean(x**2)


def inputs(batch: int, width: int) -> tuple[list[tuple[Any, ...]], np.ndarray]:
    rng = np.random.default_rng(0)
    params = [
        (
            rng.standard_normal((width, width)) / math.sqrt(width),
            rng.standard_normal(width) / 10,
            rng.standard_normal((width, width)) / math.sqrt(width),
        )
        for _ in range(LAYERS)
    ]
    return params, rng.standard_normal((batch, width))


@dataclass(frozen=True)
class MemoryRow:
    name: str
    saved_values: int  # arrays f computes and keeps for df (the Gradient's captured outputs)
    saved_bytes: int
    peak_bytes: int  # tracemalloc peak of one value-and-gradient call
    microseconds: float


def saved_by_f(gradient: ad.Gradient) -> tuple[int, int]:
    """How many arrays ``f`` keeps for ``df`` and their bytes, from the types of ``f``."""
    count = total = 0
    for index in gradient.df_input_captured_outputs:
        ty = gradient.f.outputs[index].ty
        shape, dtype = getattr(ty, "shape", None), getattr(ty, "dtype", None)
        count += 1
        if shape is not None and dtype is not None and None not in shape:
            total += math.prod(shape) * np.dtype(dtype).itemsize
    return count, total


def measure(
    peak_bytes: Callable[[Callable[[], Any]], int],
    batch: int = 256,
    width: int = 256,
    clock: Callable[[], float] = time.perf_counter,
) -> list[MemoryRow]:
    """Both losses, checked to give the same gradient, each measured once for its peak and
    timed over a few calls on ``clock``."""
    params, x = inputs(batch, width)
    rows = []
    results = []
    for name, loss in (("plain", residual_loss), ("checkpoint", checkpointed_residual_loss)):
        value_and_grad = ad.value_and_grad(loss)
        results.append(value_and_grad(params, x))
        saved_values, saved_bytes = saved_by_f(ad.grad(loss).gradient_for(params, x))
        peak = peak_bytes(lambda fn=value_and_grad: fn(params, x))  # type: ignore[misc]
        start = clock()
        for _ in range(5):
            value_and_grad(params, x)
        seconds = (clock() - start) / 5
        rows.append(MemoryRow(name, saved_values, saved_bytes, peak, seconds * 1e6))
    (plain_value, plain_grads), (value, grads) = results
    assert plain_value == value
    for plain_layer, layer in zip(plain_grads, grads, strict=True):
        for a, b in zip(plain_layer, layer, strict=True):
            np.testing.assert_array_equal(a, b)  # the same operators: the same bits
    return rows


def format_memory_table(rows: list[MemoryRow]) -> str:
    lines = [
        "| 20-layer residual loss | arrays f keeps | MB f keeps | peak MB | µs per call |",
        "|---|---|---|---|---|",
    ]
    for row in rows:
        lines.append(
            f"| {row.name} | {row.saved_values} | {row.saved_bytes / 1e6:.1f} | "
            f"{row.peak_bytes / 1e6:.1f} | {row.microseconds:,.0f} |"
        )
    return "\n".join(lines)
