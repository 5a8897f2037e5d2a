"""The benchmark table: per workload, µs per value-and-gradient call for ours and for the
hand-written NumPy reference (medians of interleaved rounds), their ratio, the peak memory of
one call of each, and the first-call time; then the compile time of generated straight-line
functions. Run as ``python -m benchmarks`` (see benchmarks/README.md)."""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
import tracemalloc
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import optree

import autodiff as ad
from benchmarks import forward_mode, native, others
from benchmarks.checkpoint_memory import format_memory_table
from benchmarks.checkpoint_memory import measure as checkpoint_memory
from benchmarks.compile_time import time_to_first_gradient
from benchmarks.workloads import BY_NAME, WORKLOADS, Workload, assert_agree, rosenbrock

COMPILE_SIZES = (100, 1_000, 5_000)
COMPILE_TARGETS = {100: 0.3, 1_000: 1.0, 5_000: 3.0}  # seconds, from the issue
THREAD_VARIABLES = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "NUMEXPR_NUM_THREADS",
)


@dataclass(frozen=True)
class Settings:
    rounds: int  # interleaved rounds; each times a block of calls of ours, then of the reference
    round_seconds: float  # about how long one block runs
    clock: Callable[[], float] = time.perf_counter  # or time.process_time: see --clock
    systems: list[str] = field(default_factory=list)
    native: bool = False  # the native column: benchmarks/native.py


@dataclass
class Row:
    workload: Workload
    ours_us: float
    reference_us: float
    ours_peak: int
    reference_peak: int
    first_call_s: float
    graphs_us: float | None  # f then df run directly, without the call's own work
    others_us: dict[str, float | None]
    floor_us: float | None = None  # the kernels any implementation calls: Note [Kernel floor]
    native_us: float | None = None  # ours with the native tier on
    native_compile_s: float | None = None  # numba's compile time of f and df

    def native_target(self) -> str:
        """The issue's target for the native tier, and whether it is met."""
        if self.workload.native_target is None or self.native_us is None:
            return "—"
        column, bound = self.workload.native_target
        base = self.reference_us if column == "numpy" else self.others_us.get(column)
        if base is None:
            return f"≤ {bound:g} x {column} (no {column})"
        met = "met" if self.native_us <= bound * base else "not met"
        return f"≤ {bound:g} x {column} ({met}: {self.native_us / base:.2f})"

    @property
    def ratio(self) -> float:
        return self.ours_us / self.reference_us

    @property
    def compile_s(self) -> float:
        """The first call less a steady-state one: scripting, specialising, differentiating."""
        return self.first_call_s - self.ours_us * 1e-6


def fresh_function(fn: Callable[..., Any]) -> Callable[..., Any]:
    """A new function object with ``fn``'s code: nothing compiled for ``fn`` is reused."""
    assert isinstance(fn, types.FunctionType)
    fresh = types.FunctionType(
        fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__
    )
    fresh.__qualname__ = fn.__qualname__
    return fresh


def peak_bytes(call: Callable[[], Any]) -> int:
    """The tracemalloc peak of one call, the result it returns included."""
    tracing = tracemalloc.is_tracing()  # under `python -X tracemalloc`, leave it on
    if not tracing:
        tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        result = call()
        peak = tracemalloc.get_traced_memory()[1]
        del result
    finally:
        if not tracing:
            tracemalloc.stop()
    return peak - base


def calls_per_block(call: Callable[[], Any], seconds: float, clock: Callable[[], float]) -> int:
    start = clock()
    call()
    once = clock() - start
    return max(1, round(seconds / max(once, 1e-9)))


def interleaved_medians(calls: Sequence[Callable[[], Any]], settings: Settings) -> list[float]:
    """µs per call of each of ``calls``: in every round each runs a block of calls in turn;
    the median over rounds of each one's time per call."""
    blocks = [calls_per_block(call, settings.round_seconds, settings.clock) for call in calls]
    samples: list[list[float]] = [[] for _ in calls]
    for _ in range(settings.rounds):
        for call, count, times in zip(calls, blocks, samples, strict=True):
            start = settings.clock()
            for _ in range(count):
                call()
            times.append((settings.clock() - start) / count)
    return [statistics.median(times) * 1e6 for times in samples]


def graphs_only(ours: Any, inputs: Sequence[Any]) -> Callable[[], Any] | None:
    """One run of the compiled ``f`` then ``df`` for these inputs, fed as a call of ``ours``
    feeds them (the seed, unless ``df`` has it folded in, then what ``f`` captured) but without
    the cache lookup, checking the loss, or shaping the gradients: the generated functions and
    the least glue between them. None if the compiled code is not laid out as expected (it
    reaches into `autodiff.unit` and `autodiff.runtime`)."""
    try:
        (compiled,) = ours.compiled_gradients()
        runtime = compiled.runtime
        # The one df a call runs: it may write into what f saved (Note [Owned temporaries]).
        run_f, run_df, gradient = runtime.f.run, runtime.df.run, runtime.gradient
        folded = runtime.seeded_at is not None
        vjps = [i for i in gradient.df_input_vjps if not (i == 0 and folded)]
        captured_inputs = gradient.df_input_captured_inputs
        captured_outputs = gradient.df_input_captured_outputs
        real_outputs = gradient.f_real_outputs
    except (AttributeError, ValueError):
        return None
    values = optree.tree_leaves(tuple(inputs), none_is_leaf=False)  # a pytree's leaves
    one = np.ones_like(np.asarray(run_f(list(values))[0]))  # the seed, copied per run

    def call() -> Any:
        outputs = run_f(list(values))
        df_inputs = [one.copy() if i == 0 else np.zeros_like(outputs[i]) for i in vjps]
        df_inputs += [values[i] for i in captured_inputs]
        df_inputs += [outputs[i] for i in captured_outputs]
        del outputs[real_outputs:]
        return run_df(df_inputs)

    return call


def measure(workload: Workload, settings: Settings, notes: list[str]) -> Row:
    inputs = workload.inputs()
    start = settings.clock()
    fresh = fresh_function(workload.function)
    first = ad.value_and_grad(fresh, argnums=workload.argnums, native=False)
    ours_result = first(*inputs)
    first_call_s = settings.clock() - start
    expected = workload.reference(*inputs)
    assert_agree(workload, ours_result, expected)

    ours = ad.value_and_grad(workload.function, argnums=workload.argnums, native=False)
    ours(*inputs)  # compiled before timing

    def run_ours() -> Any:
        return ours(*inputs)

    def run_reference() -> Any:
        return workload.reference(*inputs)

    calls = [run_ours, run_reference]
    graphs = graphs_only(ours, inputs)
    if graphs is not None:
        calls.append(graphs)
    floor = workload.floor
    if floor is not None:
        calls.append(lambda: floor(*inputs))
    prepared: dict[str, Callable[[], Any]] = {}
    native_run = None
    if settings.native:
        native_run = native.prepare(workload, inputs, fresh_function(workload.function))
        notes.append(f"native tier on {workload.name}: {native_run.status}")
        try:
            assert_agree(workload, native_run.result, expected)
        except AssertionError as error:
            notes.append(f"native on {workload.name} disagrees, not timed: {error}")
            native_run = None
        else:
            prepared["native"] = native_run.call
    for system in settings.systems:
        try:
            call = others.SYSTEMS[system](workload, inputs)
            call()
        except Exception as error:  # a system that cannot run this workload: an empty cell
            notes.append(f"{system} on {workload.name}: {type(error).__name__}: {error}")
            continue
        prepared[system] = call
    medians = interleaved_medians([*calls, *prepared.values()], settings)
    others_us: dict[str, float | None] = {system: None for system in settings.systems}
    others_us.update(zip(prepared, medians[len(calls) :], strict=True))
    native_us = others_us.pop("native", None)
    return Row(
        workload,
        ours_us=medians[0],
        reference_us=medians[1],
        ours_peak=peak_bytes(run_ours),
        reference_peak=peak_bytes(run_reference),
        first_call_s=first_call_s,
        graphs_us=medians[2] if graphs is not None else None,
        others_us=others_us,
        floor_us=medians[len(calls) - 1] if floor is not None else None,
        native_us=native_us,
        native_compile_s=None if native_run is None else native_run.compile_s,
    )


def _microseconds(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:.1f}"


def _megabytes(value: int) -> str:
    return f"{value / 1e6:.2f}" if value < 10e6 else f"{value / 1e6:.0f}"


def format_table(rows: Sequence[Row], systems: Sequence[str], with_native: bool = False) -> str:
    header = [
        "workload",
        "ours µs",
        "numpy µs",
        "ratio",
        "target",
        "peak ours MB",
        "peak numpy MB",
        "peak ratio",
        "first call s",
        "compile s",
        "call overhead µs",
    ]
    if with_native:
        header += ["native µs", "native ratio", "native compile s", "native target"]
    header += [f"{system} ratio" for system in systems]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in rows:
        target = row.workload.target
        met = "met" if target is not None and row.ratio <= target else "not met"
        cells = [
            row.workload.name,
            _microseconds(row.ours_us),
            _microseconds(row.reference_us),
            f"{row.ratio:.2f}",
            "—" if target is None else f"≤ {target:g} ({met})",
            _megabytes(row.ours_peak),
            _megabytes(row.reference_peak),
            f"{row.ours_peak / row.reference_peak:.2f}",
            f"{row.first_call_s:.3f}",
            f"{row.compile_s:.3f}",
            "n/a" if row.graphs_us is None else f"{row.ours_us - row.graphs_us:.1f}",
        ]
        if with_native:
            us, compile_s = row.native_us, row.native_compile_s
            cells += [
                "—" if us is None else _microseconds(us),
                "—" if us is None else f"{us / row.reference_us:.2f}",
                "—" if compile_s is None else f"{compile_s:.2f}",
                row.native_target(),
            ]
        for system in systems:
            us = row.others_us.get(system)
            cells.append("—" if us is None else f"{us / row.reference_us:.2f}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def format_compile_table(times: dict[int, float]) -> str:
    lines = ["| N ops | seconds | µs per op | target s |", "|---|---|---|---|"]
    for n, seconds in times.items():
        target = COMPILE_TARGETS.get(n)
        met = ""
        if target is not None:
            met = f"≤ {target:g} ({'met' if seconds <= target else 'not met'})"
        lines.append(f"| {n:,} | {seconds:.2f} | {seconds / n * 1e6:,.0f} | {met} |")
    return "\n".join(lines)


def environment() -> str:
    threads = ", ".join(f"{name}={os.environ.get(name, 'unset')}" for name in THREAD_VARIABLES[:3])
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    return (
        f"Python {platform.python_version()}, NumPy {np.__version__}, "
        f"{os.cpu_count()} CPUs, load average {load}, {threads}"
    )


def warm_up(clock: Callable[[], float]) -> float:
    """Seconds the library's one-time set-up takes (the derivative formulas are compiled on
    first use), so that no workload's first call pays for it."""
    start = clock()
    ad.value_and_grad(fresh_function(rosenbrock))(np.ones(3))
    return clock() - start


def parse_arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description="Time value-and-gradient calls against hand-written NumPy.",
    )
    parser.add_argument(
        "--quick", action="store_true", help="few short rounds and N <= 1,000: a smoke run"
    )
    parser.add_argument(
        "--only",
        action="append",
        choices=[*BY_NAME, "compile", "checkpoint", "forward"],
        metavar="NAME",
        help=f"run only this workload (repeatable): {', '.join(BY_NAME)}, compile, checkpoint, "
        "or forward (a tall Jacobian by forward and by reverse mode)",
    )
    parser.add_argument("--rounds", type=int, help="interleaved rounds (default 15, quick 3)")
    parser.add_argument(
        "--max-n", type=int, help="largest N of the compile-time workload (default 5000)"
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="BLAS/OpenMP threads, set before NumPy is imported (default 1)",
    )
    parser.add_argument(
        "--clock",
        choices=["wall", "cpu"],
        default="wall",
        help="wall: time.perf_counter (default); cpu: time.process_time, this process's CPU "
        "time, steadier on a machine that other work loads (with one BLAS thread)",
    )
    parser.add_argument(
        "--no-others", action="store_true", help="skip JAX, autograd and torch even if installed"
    )
    parser.add_argument(
        "--no-native", action="store_true", help="skip the native column even if numba is installed"
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_arguments(argv)
    selected = args.only or [*BY_NAME, "compile", "checkpoint", "forward"]
    rounds = args.rounds or (3 if args.quick else 15)
    systems = [] if args.no_others else others.available()
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    with_native = not args.no_native and native.available()
    settings = Settings(rounds, 0.01 if args.quick else 0.1, clock, systems, with_native)
    print(environment())
    print(f"clock: {args.clock}; {rounds} interleaved rounds")
    print(f"optional systems found: {', '.join(systems) or 'none (jax, autograd, torch)'}")
    print(f"one-time library set-up (formulas compiled): {warm_up(clock):.2f} s")
    if with_native:
        setup = native.setup_seconds(clock)
        print(f"one-time native set-up (numba imported and initialised): {setup:.2f} s")
    else:
        print("native tier: off (--no-native, or numba not installed)")
    notes: list[str] = []
    rows = []
    for workload in WORKLOADS:
        if workload.name in selected:
            rows.append(measure(workload, settings, notes))
            print(f"  measured {workload.name}", flush=True)
    if rows:
        print()
        print(format_table(rows, systems, with_native))
        for row in rows:
            print(f"  {row.workload.name}: {row.workload.description}")
        for row in rows:
            if row.floor_us is not None:
                print(
                    f"  {row.workload.name}: the NumPy kernels any implementation calls "
                    f"(Note [Kernel floor]) take {_microseconds(row.floor_us)} µs, "
                    f"{row.floor_us / row.reference_us:.2f} of numpy"
                )
    if "compile" in selected:
        max_n = args.max_n or (1_000 if args.quick else 5_000)
        times = {}
        for n in COMPILE_SIZES:
            if n <= max_n:
                times[n] = time_to_first_gradient(n, clock=settings.clock)
                print(f"  compiled N = {n:,}", flush=True)
        print()
        print("compile time, source to first gradient, straight-line function of N ops:")
        print(format_compile_table(times))
    if "checkpoint" in selected:
        size = 32 if args.quick else 256
        print()
        print(f"ad.checkpoint, 20 residual layers of width {size}, batch {size}:")
        print(format_memory_table(checkpoint_memory(peak_bytes, size, size, settings.clock)))
    if "forward" in selected:
        jacobians = forward_mode.calls(args.quick, with_jax="jax" in systems)
        times = interleaved_medians(list(jacobians.values()), settings)
        print()
        print(forward_mode.format_table(args.quick, dict(zip(jacobians, times, strict=True))))
    for note in notes:
        print(f"note: {note}")
    return 0
