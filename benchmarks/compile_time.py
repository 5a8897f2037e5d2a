"""The compile-time workload: a generated straight-line function of N elementwise operations,
written to a module file and imported (the frontend reads a function's source from its file),
timed from a fresh function object to its first gradient."""

from __future__ import annotations

import importlib.util
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import autodiff as ad

# One line per operation, cycling through these; each keeps values bounded, so any N runs.
_OPERATIONS = (
    "h = np.sin(h)",
    "h = h * 1.5",
    "h = np.tanh(h)",
    "h = h + x",
    "h = h * 0.5",
)


def straight_line_source(n_ops: int) -> str:
    """A module defining ``f(x)``: ``n_ops`` elementwise operations on ``h``, then its sum."""
    lines = ["import numpy as np", "", "", "def f(x):", "    h = x"]
    lines += [f"    {_OPERATIONS[i % len(_OPERATIONS)]}" for i in range(n_ops)]
    lines.append("    return np.sum(h)")
    return "\n".join(lines) + "\n"


def load_straight_line(n_ops: int, folder: Path) -> Callable[..., Any]:
    """``f`` of `straight_line_source`, imported from a file in ``folder``."""
    name = f"_straight_line_{n_ops}"
    path = folder / f"{name}.py"
    path.write_text(straight_line_source(n_ops))
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    fn: Callable[..., Any] = module.f
    return fn


def time_to_first_gradient(
    n_ops: int, size: int = 16, clock: Callable[[], float] = time.perf_counter
) -> float:
    """Seconds from source text to the first value and gradient of the N-op function."""
    x = np.random.default_rng(0).standard_normal(size)
    with tempfile.TemporaryDirectory() as folder:
        start = clock()
        fn = load_straight_line(n_ops, Path(folder))
        ad.value_and_grad(fn)(x)
        return clock() - start
