"""The benchmark workloads at tiny sizes: each hand-written NumPy reference gives
``ad.value_and_grad``'s value and gradients, so the benchmark compares like with like. No
timings are asserted."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import optree
import pytest

import autodiff as ad
from autodiff import tiering
from benchmarks import native, run
from benchmarks.checkpoint_memory import format_memory_table
from benchmarks.checkpoint_memory import measure as checkpoint_memory
from benchmarks.compile_time import load_straight_line, straight_line_source
from benchmarks.workloads import WORKLOADS, Workload, assert_agree
from ir.codegen import CompiledGraph


@pytest.mark.parametrize("workload", WORKLOADS, ids=lambda w: w.name)
def test_reference_equals_value_and_grad(workload: Workload) -> None:
    inputs = workload.inputs(tiny=True)
    ours = ad.value_and_grad(workload.function, argnums=workload.argnums)(*inputs)
    assert_agree(workload, ours, workload.reference(*inputs))


@pytest.mark.parametrize("workload", WORKLOADS, ids=lambda w: w.name)
def test_reference_leaves_its_inputs_alone(workload: Workload) -> None:
    inputs = workload.inputs(tiny=True)
    leaves = optree.tree_leaves(inputs)  # the arrays of pytree arguments too
    copies = [np.copy(value) for value in leaves]
    workload.reference(*inputs)
    for value, copy in zip(leaves, copies, strict=True):
        np.testing.assert_array_equal(value, copy)


def test_straight_line_function_has_n_operations(tmp_path: Path) -> None:
    assert straight_line_source(7).count("\n    h = ") == 8
    fn = load_straight_line(7, tmp_path)
    x = np.linspace(-1.0, 1.0, 4)
    value, _ = ad.value_and_grad(fn)(x)
    np.testing.assert_allclose(value, fn(x), rtol=1e-12)
    assert ad.gradcheck(fn, x).ok


def test_command_prints_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--quick", "--rounds", "1", "--only", "rosenbrock", "--only", "compile"]
    assert run.main([*argv, "--max-n", "100", "--no-others", "--no-native"]) == 0
    out = capsys.readouterr().out
    assert "| workload | ours µs | numpy µs | ratio |" in out
    assert "| rosenbrock |" in out
    assert "| 100 |" in out
    assert "| 1,000 |" not in out


def test_the_kernel_floor_is_printed(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A workload with a kernel floor (Note [Kernel floor]) gets a line saying what share of
    the reference NumPy's own kernels take; here at its tiny size, to be quick."""
    floored = [workload for workload in WORKLOADS if workload.floor is not None]
    assert [workload.name for workload in floored] == ["chain-large"]
    tiny = tuple(dataclasses.replace(w, sizes=w.tiny) for w in WORKLOADS)
    monkeypatch.setattr(run, "WORKLOADS", tiny)
    argv = ["--quick", "--rounds", "1", "--only", "chain-small", "--only", "chain-large"]
    assert run.main([*argv, "--no-others", "--no-native"]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if "Kernel floor" in line]
    assert len(lines) == 1
    assert lines[0].strip().startswith("chain-large:")
    assert lines[0].endswith(" of numpy")


def test_the_native_column_is_printed(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the native tier available (here a fake one running the NumPy tier's code, so
    that the test needs no numba), the table gains the native columns and each workload's
    tier status; its target compares with the column it names."""
    monkeypatch.setattr(native, "available", lambda: True)
    monkeypatch.setattr(native, "setup_seconds", lambda clock: 0.0)
    monkeypatch.setattr(tiering, "numba_installed", lambda: True)
    monkeypatch.setattr(tiering, "native_runnable", CompiledGraph)
    tiny = tuple(dataclasses.replace(w, sizes=w.tiny) for w in WORKLOADS)
    monkeypatch.setattr(run, "WORKLOADS", tiny)
    argv = ["--quick", "--rounds", "1", "--only", "chain-small", "--no-others"]
    assert run.main(argv) == 0
    out = capsys.readouterr().out
    assert "| native µs | native ratio | native compile s | native target |" in out
    (row,) = [line for line in out.splitlines() if line.startswith("| chain-small |")]
    assert "≤ 0.3 x numpy (" in row
    assert "note: native tier on chain-small: native: always (not measured)" in out


def test_checkpoint_memory_rows_keep_less_for_the_same_gradient() -> None:
    """The rematerialisation benchmark at a small size: `measure` itself checks that both
    losses give the same gradient, to the bit."""

    plain, checkpointed = checkpoint_memory(run.peak_bytes, batch=16, width=16)
    assert (plain.name, checkpointed.name) == ("plain", "checkpoint")
    assert checkpointed.saved_values < plain.saved_values
    assert checkpointed.saved_bytes < plain.saved_bytes
    assert "| checkpoint | 20 |" in format_memory_table([plain, checkpointed])
