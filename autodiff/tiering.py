"""Tiering: when a compiled function runs on the native tier (numba) instead of the generated
NumPy code, and the swap from one to the other.

# Note [Tiering]
# A signature's first calls run the generated NumPy code exactly as without a native tier:
# nothing more is compiled, imported or measured for them. Then, per `native_mode`:
#
# - ``off``: always the NumPy tier.
# - ``auto`` (the default): once a signature has been called `CALLS_BEFORE_COMPILING` times
#   and its graphs are candidates (Note [Native candidates]), a background thread imports
#   numba and compiles them with `autodiff.native_tier.native_runnable` (one graph at a
#   time, one thread for the process); calls go on on the NumPy tier meanwhile, never
#   waiting for it. When it is ready, the next calls alternate between the tiers,
#   `MEASURED_CALLS` each, timed, and the tier with the lower median time is kept: the call
#   stored for the signature is replaced by that tier's own, so the chosen tier runs with
#   no tiering cost left per call.
# - ``always`` (``AUTODIFF_NATIVE=always``, or ``native=True`` on `ad.grad`,
#   `ad.value_and_grad`, `ad.script`): the first call compiles the native tier itself,
#   synchronously, and every call runs it, unmeasured. This is for tests, and for a user
#   who knows the function is made of small arrays and long loops.
#
# The native tier is never a different result beyond the tolerance of Note [Native
# numerics] (`ir.native_kernels`) and never an error: numba not installed, a graph with no
# region worth compiling (`native_runnable` returns None) or a compile that fails leave the
# signature on the NumPy tier. What happened is kept in `NativeTier.status` (and, for a
# failure, `NativeTier.error`): ``compiled.runtime.native.status`` for a gradient
# (``grad_fn.compiled_gradients()``), ``unit.native.status`` for a plain call.
#
# What tiers: the calls of `ad.grad`/`ad.value_and_grad` (the stored `GradientCall`, Note
# [Gradient calls] in `autodiff.gradient_call`) and plain calls of a scripted function. ``ad.vjp``,
# Jacobians, forward mode, taps, hooks, instrumented runs and other array backends run the
# NumPy tier as before.
#
# Per gradient, ``f`` and ``df`` are compiled separately; one that has no native region
# stays the NumPy tier's. A NumPy ``df`` after a native ``f`` is compiled without owning
# ``f``'s temporaries (Note [Owned temporaries] in `autodiff.runtime`): which outputs are
# private was read from the NumPy ``f``'s code, and says nothing of the native one's.

# Note [Native candidates]
# numba pays where Python's cost per operator dominates: small arrays, long loops. Without
# running anything, `is_candidate` estimates the elements an average kernel call touches,
# each node weighted by the trip counts of the loops around it (an unknown trip count counts
# as `UNKNOWN_TRIPS`), each node's elements the largest of its results (a tape write counts
# the row it writes, not the tape). A graph whose average is at most `CANDIDATE_ELEMENTS`
# (where NumPy's ~1 µs of dispatch per call is worth ~1,000 elements of work) is a
# candidate; a value of unknown shape counts as large. The estimate only decides whether to
# spend a background compile: the measurement decides which tier runs, so a large-array
# graph stays on NumPy unless native measures faster.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import queue
import statistics
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, Literal, Protocol

from ir.codegen import Runnable
from ir.errors import AutodiffError
from ir.graph import Block, Graph, Node
from ir.types import TensorType

NATIVE_VARIABLE = "AUTODIFF_NATIVE"
NativeMode = Literal["off", "auto", "always"]
MODES: tuple[NativeMode, ...] = ("off", "auto", "always")
CALLS_BEFORE_COMPILING = 3
MEASURED_CALLS = 3  # per tier
CANDIDATE_ELEMENTS = 1024
UNKNOWN_TRIPS = 10
UNKNOWN_ELEMENTS = 1 << 30
_NOT_COUNTED = frozenset(
    {"prim::Constant", "prim::TapeArray", "prim::Loop", "prim::If", "prim::Native"}
)


class NativeTierError(AutodiffError):
    """A bad ``AUTODIFF_NATIVE`` value."""


def native_mode(native: bool | None = None) -> NativeMode:
    """The tiering mode: ``native=True`` is ``always``, ``False`` is ``off``, None reads
    ``AUTODIFF_NATIVE`` (default ``auto``). See Note [Tiering].

    >>> native_mode(True)
    'always'
    """
    if native is not None:
        return "always" if native else "off"
    mode = os.environ.get(NATIVE_VARIABLE) or "auto"
    for known in MODES:
        if mode == known:
            return known
    raise NativeTierError(f"unknown {NATIVE_VARIABLE}={mode!r}: expected 'off', 'auto' or 'always'")


def numba_installed() -> bool:
    """Whether numba can be imported here, without importing it (that takes seconds)."""
    try:
        return importlib.util.find_spec("numba") is not None
    except (ImportError, ValueError):  # ValueError: sys.modules["numba"] is None
        return False


def is_candidate(graphs: Sequence[Graph]) -> bool:
    """Whether the native tier may pay for these graphs: Note [Native candidates]."""
    calls = 0.0
    elements = 0.0
    for graph in graphs:
        for weight, node in _weighted_nodes(graph.block, 1.0):
            calls += weight
            elements += weight * _elements(node)
    return calls > 0 and elements / calls <= CANDIDATE_ELEMENTS


def _weighted_nodes(block: Block, weight: float) -> list[tuple[float, Node]]:
    found: list[tuple[float, Node]] = []
    for node in block.nodes():
        if node.kind == "prim::Loop":
            trips = node.inputs[0].node
            count = trips.attr("value") if trips.kind == "prim::Constant" else None
            inner = weight * (count if isinstance(count, int) else UNKNOWN_TRIPS)
            for body in node.blocks:
                found.extend(_weighted_nodes(body, inner))
        else:
            for body in node.blocks:
                found.extend(_weighted_nodes(body, weight))
        if node.kind not in _NOT_COUNTED:
            found.append((weight, node))
    return found


def _elements(node: Node) -> int:
    values = [node.inputs[2]] if node.kind == "prim::TapeWrite" else node.outputs
    largest = 1
    for value in values:
        ty = value.ty
        if isinstance(ty, TensorType):
            if ty.shape is None or any(d is None for d in ty.shape):
                return UNKNOWN_ELEMENTS
            size = 1
            for d in ty.shape:
                size *= d or 1
            largest = max(largest, size)
    return largest


def native_runnable(graph: Graph) -> Runnable | None:
    """``graph`` on the native tier (`autodiff.native_tier.native_runnable`), or None where it
    has no region worth it. Imports numba: seconds, once per process."""
    module = importlib.import_module("autodiff.native_tier")
    return module.native_runnable(graph)  # type: ignore[no-any-return]


class NativeTier:
    """The native code of one compiled function: one Runnable or None per graph (``f`` and
    ``df`` of a gradient, or a plain call's graph), compiled once, in the background or now.

    >>> tier = NativeTier([gradient.f, df_graph]); tier.compile()
    >>> tier.status, tier.runnables
    ('native: compiled, not measured yet', [<f>, <df>])
    """

    def __init__(self, graphs: Sequence[Graph]) -> None:
        self.graphs = list(graphs)
        self.status = "numpy: not compiled"
        """What happened, in words: Note [Tiering]."""
        self.error: BaseException | None = None
        """The exception a failed native compile raised."""
        self.runnables: list[Runnable | None] | None = None
        """Per graph, its native Runnable or None (not native); None until compiled."""
        self.compile_seconds: float | None = None
        self.candidate: bool | None = None
        self.done = threading.Event()
        self._started = False
        self._compiling = False
        self._lock = threading.Lock()

    def worth_compiling(self) -> bool:
        """Whether the graphs are candidates (Note [Native candidates]), worked out once."""
        if self.candidate is None:
            self.candidate = is_candidate(self.graphs)
            if not self.candidate:
                self.status = "numpy: not a candidate (Note [Native candidates])"
        return self.candidate

    def start(self) -> None:
        """Compile on the background thread, once."""
        with self._lock:
            if self._started:
                return
            self._started = True
        self.status = "numpy: compiling native code in the background"
        _background().put(self.compile)

    def compile(self) -> None:
        """Compile in this thread (once: later calls wait for the first)."""
        with self._lock:
            first = not self._compiling
            self._compiling = True
        if not first:
            self.done.wait()
            return
        start = time.perf_counter()
        try:
            # native_runnable reads the graph and compiles a copy: the caller's graphs are
            # never changed after compiling, so the thread may read them while calls run.
            found = [native_runnable(graph) for graph in self.graphs]
        except ImportError as error:
            self.error = error
            self.status = f"numpy: the native tier needs numba ({error})"
        except Exception as error:  # numba refused: Note [Tiering], never the user's error
            self.error = error
            self.status = f"numpy: native compile failed: {type(error).__name__}: {error}"
        else:
            self.compile_seconds = time.perf_counter() - start
            if any(runnable is not None for runnable in found):
                self.runnables = found
                self.status = "native: compiled, not measured yet"
            else:
                self.status = "numpy: no region worth running natively"
        finally:
            self.done.set()


_QUEUE: queue.SimpleQueue[Callable[[], None]] | None = None
_QUEUE_LOCK = threading.Lock()


def _background() -> queue.SimpleQueue[Callable[[], None]]:
    """The one background thread's queue of compiles (a daemon: exit does not wait)."""
    global _QUEUE
    with _QUEUE_LOCK:
        if _QUEUE is None:
            jobs: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()

            def work() -> None:
                while True:
                    jobs.get()()

            threading.Thread(target=work, name="autodiff-native", daemon=True).start()
            _QUEUE = jobs
    return _QUEUE


Call = Callable[[Any], Any]


class TieredCall:
    """A call of one signature that starts on the NumPy tier and settles on the faster tier,
    then hands ``install`` the settled tier's own call (Note [Tiering]). ``make_native``
    builds the native tier's call from the compiled `NativeTier` (None: nothing native).

    >>> call = TieredCall(tier, numpy_call, make_native, install, "auto")
    >>> call(values)  # as numpy_call(values), until it settles
    """

    def __init__(
        self,
        tier: NativeTier,
        numpy_call: Call,
        make_native: Callable[[NativeTier], Call | None],
        install: Callable[[Call], None],
        mode: NativeMode,
    ) -> None:
        self.tier = tier
        self.numpy_call = numpy_call
        self.make_native = make_native
        self.install = install
        self.mode = mode
        self.calls = 0
        self.settled: Call | None = None
        self.native_call: Call | None = None
        self.times: dict[str, list[float]] = {"numpy": [], "native": []}
        if mode == "always":
            tier.compile()
            self._ready()

    def __call__(self, args: Any) -> Any:
        if self.settled is not None:
            return self.settled(args)
        native = self.native_call
        if native is None:
            if not self.tier.done.is_set():
                self.calls += 1
                if self.calls >= CALLS_BEFORE_COMPILING:
                    if self.tier.worth_compiling():
                        self.tier.start()
                    else:
                        self._settle(self.numpy_call)
                return self.numpy_call(args)
            native = self._ready()
            if native is None:
                return self.numpy_call(args)
        return self._measure(native, args)

    def _ready(self) -> Call | None:
        """The native call once the tier is compiled; settles on NumPy when there is none."""
        native = self.make_native(self.tier) if self.tier.runnables is not None else None
        if native is None:
            self._settle(self.numpy_call)
        elif self.mode == "always":
            self.tier.status = "native: always (not measured)"
            self._settle(native)
        else:
            self.native_call = native
        return native

    def _measure(self, native: Call, args: Any) -> Any:
        numpy_times, native_times = self.times["numpy"], self.times["native"]
        on_native = len(native_times) <= len(numpy_times)
        start = time.perf_counter()
        try:
            result = native(args) if on_native else self.numpy_call(args)
        except AutodiffError:
            raise  # the user's error, which both tiers raise alike
        except Exception as error:
            if not on_native:
                raise
            self.tier.error = error
            self.tier.status = f"numpy: a native run failed: {type(error).__name__}: {error}"
            self._settle(self.numpy_call)
            return self.numpy_call(args)
        (native_times if on_native else numpy_times).append(time.perf_counter() - start)
        if len(numpy_times) >= MEASURED_CALLS and len(native_times) >= MEASURED_CALLS:
            native_us = statistics.median(native_times) * 1e6
            numpy_us = statistics.median(numpy_times) * 1e6
            faster = native_is_faster(native_us, numpy_us)
            self.tier.status = (
                f"{'native' if faster else 'numpy'}: measured native {native_us:,.1f} µs, "
                f"numpy {numpy_us:,.1f} µs per call"
            )
            self._settle(native if faster else self.numpy_call)
        return result

    def _settle(self, call: Call) -> None:
        self.settled = call
        self.native_call = None
        self.install(call)


def native_is_faster(native_us: float, numpy_us: float) -> bool:
    """The measurement's verdict: the native tier's median time per call below NumPy's."""
    return native_us < numpy_us


def tiered(
    mode: NativeMode,
    tier: Callable[[], NativeTier],
    numpy_call: Call,
    make_native: Callable[[NativeTier], Call | None],
    install: Callable[[Call], None],
) -> Call:
    """The call to store for a signature: ``numpy_call`` itself when the native tier is off
    or numba is not installed, else a `TieredCall` (which settles on ``numpy_call`` at once
    if the graphs are no candidates: Note [Native candidates])."""
    if mode == "off" or not numba_installed():
        return numpy_call
    return TieredCall(tier(), numpy_call, make_native, install, mode)


class HoldsExecutable(Protocol):
    """A compilation unit, as far as a plain call's tiering uses it."""

    executable: Runnable | None
    native: NativeTier | None


class TieredRunnable:
    """A plain call's `Runnable` that tiers as `TieredCall` does; once settled, the unit
    holds the chosen tier's Runnable instead of this one."""

    def __init__(self, numpy: Runnable, call: Call) -> None:
        self.graph = numpy.graph
        self.call = call

    def __call__(self, *args: Any) -> list[Any]:
        return self.call(list(args))  # type: ignore[no-any-return]

    def run(self, args: list[Any]) -> list[Any]:
        return self.call(args)  # type: ignore[no-any-return]


def tiered_runnable(numpy: Runnable, unit: HoldsExecutable, mode: NativeMode) -> Runnable:
    """What ``unit`` runs for plain calls: ``numpy``, or a `TieredRunnable` over it that
    puts the settled tier's Runnable in ``unit.executable`` (Note [Tiering])."""
    runnables: dict[Call, Runnable] = {}
    numpy_run = numpy.run
    runnables[numpy_run] = numpy

    def make_native(tier: NativeTier) -> Call | None:
        assert tier.runnables is not None
        (native,) = tier.runnables
        if native is None:
            return None
        native_run = native.run
        runnables[native_run] = native
        return native_run

    def install(settled: Call) -> None:
        unit.executable = runnables[settled]

    def tier() -> NativeTier:
        if unit.native is None:
            unit.native = NativeTier([numpy.graph])
        return unit.native

    call = tiered(mode, tier, numpy_run, make_native, install)
    return numpy if call is numpy_run else TieredRunnable(numpy, call)
