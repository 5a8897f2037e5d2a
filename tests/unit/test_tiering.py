"""Tiering between the NumPy tier and the native tier (Note [Tiering] in autodiff/tiering.py),
with a fake native compile: one that waits until the test releases it and hands back the
NumPy tier's own code, so these tests need no numba and check only when compiling starts,
that calls never wait for it, and the swap."""

from __future__ import annotations

import sys
import threading
import time

import numpy as np
import pytest

import autodiff as ad
from autodiff import tiering
from ir.codegen import CompiledGraph, Runnable
from ir.graph import Graph

# A held compile waits this long at most; a call that waited for it would take as long.
HELD_AT_MOST = 30.0


def euler(theta, x0):
    x = x0
    dt = 0.01
    for _ in range(100):
        dx = np.tanh(theta @ x) - 0.1 * x
        x = x + dt * dx
    return np.sum(x**2)


def big(x):
    return np.sum(np.sin(x) * x)


class FakeNative:
    """A native tier that compiles once ``release`` is set (at once unless a test clears it)
    and runs NumPy's code, counting the graphs it compiled and the runs of what it made."""

    def __init__(self, *, fail: bool = False) -> None:
        self.fail = fail
        self.release = threading.Event()
        self.release.set()
        self.compiled: list[Graph] = []
        self.runs = 0
        self.threads: list[str] = []

    def __call__(self, graph: Graph) -> Runnable:
        self.threads.append(threading.current_thread().name)
        if not self.release.wait(HELD_AT_MOST):
            raise RuntimeError("the test never released the compile")
        if self.fail:
            raise RuntimeError("numba refused this region")
        self.compiled.append(graph)
        inner = CompiledGraph(graph)
        fake = self

        class Counted:
            graph = inner.graph

            def __call__(self, *args: object) -> list[object]:
                return self.run(list(args))

            def run(self, args: list[object]) -> list[object]:
                fake.runs += 1
                return inner.run(args)

        return Counted()


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeNative:
    native = FakeNative()
    monkeypatch.setattr(tiering, "native_runnable", native)
    monkeypatch.setattr(tiering, "numba_installed", lambda: True)
    monkeypatch.setenv("AUTODIFF_NATIVE", "auto")
    return native


def inputs() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    return rng.standard_normal((3, 3)) / 3, rng.standard_normal(3)


def status(fn: ad.GradFunction) -> str:
    (compiled,) = fn.compiled_gradients()
    tier = compiled.runtime.native
    assert tier is not None
    return tier.status


def settle(fn: ad.GradFunction, args: tuple[object, ...], expected: object) -> None:
    """Calls until the signature settled, each giving the expected result."""
    for _ in range(2 * tiering.MEASURED_CALLS + 1):
        value, grads = fn(*args)
        np.testing.assert_allclose(value, expected[0], rtol=1e-12)
        for got, want in zip(grads, expected[1], strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("faster", [True, False], ids=["native-faster", "numpy-faster"])
def test_first_calls_never_wait_and_the_faster_tier_is_swapped_in(
    fake: FakeNative, monkeypatch: pytest.MonkeyPatch, faster: bool
) -> None:
    monkeypatch.setattr(tiering, "native_is_faster", lambda native, numpy: faster)
    theta, x0 = inputs()
    expected = ad.value_and_grad(euler, argnums=(0, 1), native=False)(theta, x0)
    fn = ad.value_and_grad(euler, argnums=(0, 1))
    fake.release.clear()  # the compile waits until the calls below have run
    for call in range(1, tiering.CALLS_BEFORE_COMPILING + 3):
        start = time.perf_counter()
        fn(theta, x0)
        assert time.perf_counter() - start < HELD_AT_MOST / 2  # never waits for the compile
        assert not fake.compiled  # held
        if call < tiering.CALLS_BEFORE_COMPILING:
            assert status(fn) == "numpy: not compiled"
        else:
            assert status(fn) == "numpy: compiling native code in the background"
    fake.release.set()
    (compiled,) = fn.compiled_gradients()
    tier = compiled.runtime.native
    assert tier is not None
    assert tier.done.wait(HELD_AT_MOST)
    # f and df joined into one graph (Note [Joined f and df]), compiled in the background
    assert fake.threads == ["autodiff-native"]
    assert [graph.name for graph in fake.compiled] == ["f_and_df"]
    settle(fn, (theta, x0), expected)
    assert status(fn).startswith("native: measured" if faster else "numpy: measured")
    # the stored call is the settled tier's own: the fake's runs count only native calls
    runs = fake.runs
    fn(theta, x0)
    assert fake.runs == runs + (1 if faster else 0)  # f and df joined
    unit = next(iter(fn.cache.values()))
    assert all(not isinstance(call, tiering.TieredCall) for call in unit.calls.values())


def test_native_true_compiles_on_the_first_call_and_runs_native(fake: FakeNative) -> None:
    theta, x0 = inputs()
    expected = ad.value_and_grad(euler, argnums=(0, 1), native=False)(theta, x0)
    fn = ad.value_and_grad(euler, argnums=(0, 1), native=True)
    settle(fn, (theta, x0), expected)
    assert fake.threads == ["MainThread"]
    assert status(fn) == "native: always (not measured)"
    assert fake.runs == 2 * tiering.MEASURED_CALLS + 1


def euler_with_path(theta, x0):
    x = x0
    for _ in range(20):
        x = x + 0.01 * np.tanh(theta @ x)
    return np.sum(x**2), x


def test_a_df_that_takes_more_vjps_than_the_seed_runs_f_and_df_apart(fake: FakeNative) -> None:
    """An aux array output has a vjp of its own (zeros), made between f and df: the two are
    compiled and run apart (Note [Joined f and df])."""
    theta, x0 = inputs()
    fn = ad.value_and_grad(euler_with_path, argnums=(0, 1), has_aux=True, native=True)
    (value, path), grads = fn(theta, x0)
    (expected_value, expected_path), expected_grads = ad.value_and_grad(
        euler_with_path, argnums=(0, 1), has_aux=True, native=False
    )(theta, x0)
    assert [graph.name for graph in fake.compiled] == ["f", "df"]
    assert fake.runs == 2
    np.testing.assert_allclose(value, expected_value, rtol=1e-12)
    np.testing.assert_allclose(path, expected_path, rtol=1e-12)
    for got, want in zip(grads, expected_grads, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_a_failed_native_compile_stays_on_numpy_and_says_why(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    failing = FakeNative(fail=True)
    monkeypatch.setattr(tiering, "native_runnable", failing)
    monkeypatch.setattr(tiering, "numba_installed", lambda: True)
    theta, x0 = inputs()
    expected = ad.value_and_grad(euler, argnums=(0, 1), native=False)(theta, x0)
    fn = ad.value_and_grad(euler, argnums=(0, 1), native=True)
    settle(fn, (theta, x0), expected)
    assert status(fn) == "numpy: native compile failed: RuntimeError: numba refused this region"
    (compiled,) = fn.compiled_gradients()
    assert isinstance(compiled.runtime.native.error, RuntimeError)  # type: ignore[union-attr]


def test_a_large_array_graph_is_no_candidate(fake: FakeNative) -> None:
    x = np.linspace(0.0, 1.0, 100_000)
    fn = ad.value_and_grad(big)
    for _ in range(tiering.CALLS_BEFORE_COMPILING + 2):
        fn(x)
    assert status(fn) == "numpy: not a candidate (Note [Native candidates])"
    assert not fake.threads


def test_plain_calls_of_a_script_tier_too(fake: FakeNative) -> None:
    theta, x0 = inputs()
    scripted = ad.script(euler, native=True)
    assert scripted(theta, x0) == pytest.approx(euler(theta, x0), rel=1e-12)
    (unit,) = scripted.cache.values()
    assert unit.native is not None
    assert unit.native.status == "native: always (not measured)"
    assert fake.runs == 1
    scripted(theta, x0)
    assert fake.runs == 2


def test_without_numba_everything_runs_as_today(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "numba", None)  # `import numba` raises ImportError
    assert not tiering.numba_installed()
    theta, x0 = inputs()
    expected = ad.value_and_grad(euler, argnums=(0, 1), native=False)(theta, x0)
    for native in (True, None):
        fn = ad.value_and_grad(euler, argnums=(0, 1), native=native)
        settle(fn, (theta, x0), expected)
        (compiled,) = fn.compiled_gradients()
        assert compiled.runtime.native is None  # nothing was tried


def test_an_unknown_mode_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUTODIFF_NATIVE", "sometimes")
    theta, x0 = inputs()
    with pytest.raises(tiering.NativeTierError, match="AUTODIFF_NATIVE='sometimes'"):
        ad.grad(euler)(theta, x0)


def test_the_candidate_estimate() -> None:
    theta, x0 = inputs()
    small = ad.grad(euler).gradient_for(theta, x0)
    assert tiering.is_candidate([small.f, small.df])
    large = ad.grad(big).gradient_for(np.ones(100_000))
    assert not tiering.is_candidate([large.f, large.df])
