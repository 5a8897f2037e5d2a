"""The native column: the same value-and-gradient call with the native tier on
(``native=True``: compiled by numba on the first call, Note [Tiering] in `autodiff.tiering`),
when numba is installed. The "ours" column runs with ``native=False``."""

from __future__ import annotations

import importlib
import importlib.util
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import autodiff as ad
from autodiff import tiering
from benchmarks.workloads import Workload


def available() -> bool:
    """Whether numba and the native tier are installed here (neither is imported: that is
    what `setup_seconds` times)."""
    return (
        tiering.numba_installed() and importlib.util.find_spec("autodiff.native_tier") is not None
    )


def setup_seconds(clock: Callable[[], float] = time.perf_counter) -> float:
    """Seconds numba's import and its initialisation take, once per process (in ``auto``
    mode the background thread pays them): importing the native tier and compiling a trivial
    function, whose first compile sets numba's own machinery up."""
    start = clock()
    numba = importlib.import_module("numba")
    importlib.import_module("autodiff.native_tier")
    numba.njit("float64(float64)")(lambda x: x + 1.0)
    return clock() - start


@dataclass
class NativeRun:
    call: Callable[[], Any]  # one steady-state call, compiled beforehand
    result: Any  # the first call's value and gradients
    compile_s: float | None  # numba's compile time of f and df (None: nothing native)
    status: str  # which tier the call settled on, and why


def prepare(workload: Workload, inputs: tuple[Any, ...], fresh: Callable[..., Any]) -> NativeRun:
    """``fresh`` (a new function object of ``workload.function``) with ``native=True``,
    called once: compiling both tiers."""
    fn = ad.value_and_grad(fresh, argnums=workload.argnums, native=True)
    result = fn(*inputs)
    (compiled,) = fn.compiled_gradients()
    tier = compiled.runtime.native
    compile_s = None if tier is None else tier.compile_seconds
    status = "numpy: numba not installed" if tier is None else tier.status
    return NativeRun(lambda: fn(*inputs), result, compile_s, status)
