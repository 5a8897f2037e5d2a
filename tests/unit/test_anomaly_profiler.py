"""Issue #9, parts 3-6: anomaly mode, saved-value hooks, the profiler, and df releasing what f
saved as it goes; with the interpreter's observer that anomaly mode and the profiler use."""

from __future__ import annotations

import inspect
import json
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import autodiff as ad
from autodiff.runtime import CompiledGradient
from ir.graph import Graph, Node
from ir.interpreter import Executable
from ir.ops import OPS
from ir.parser import parse_graph
from ir.source import shown_path

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


@pytest.fixture(autouse=True)
def interpreter(monkeypatch: pytest.MonkeyPatch) -> None:
    """Observers and release-as-you-go are the interpreter's."""
    monkeypatch.setenv("AUTODIFF_EXECUTOR", "interpreter")


def log_sum(x):  # type: ignore[no-untyped-def]
    y = np.log(x)
    return np.sum(y)


def sqrt_sum(x):  # type: ignore[no-untyped-def]
    y = np.sqrt(x)
    return np.sum(y * 2.0)


def loop_sqrt(x, n: int):  # type: ignore[no-untyped-def]
    s = np.zeros(3)
    for i in range(n):
        s = s + np.sqrt(x * i)
    return np.sum(s)


def mlp(w, x, y):  # type: ignore[no-untyped-def]
    h = np.tanh(x @ w)
    return np.mean((h - y) ** 2)


def chain(x):  # type: ignore[no-untyped-def]
    a = np.sin(x)
    b = np.sin(a)
    c = np.sin(b)
    d = np.sin(c)
    return np.sum(d)


def line_of(fn: Callable[..., Any], text: str) -> int:
    """The file line of the first line of ``fn`` containing ``text``."""
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def compiled_for(fn: Callable[..., Any], *args: Any, wrt: tuple[int, ...] = (0,)) -> Any:
    return ad.grad(fn, argnums=wrt).compiled_for(list(args), wrt).runtime


def kernel_kinds(graph: Graph) -> set[str]:
    return {n.kind for n in graph.all_nodes() if OPS[n.kind].kernel is not None}


# -- 3. anomaly mode -------------------------------------------------------------------------


def test_anomaly_in_f_names_the_operation_and_line() -> None:
    with ad.detect_anomaly(), pytest.raises(ad.AnomalyError) as info:
        ad.grad(log_sum)(np.array([-1.0, 1.0]))
    error = info.value
    assert error.source_range is not None
    assert error.source_range.line == line_of(log_sum, "np.log")
    text = str(error)
    assert "aten::log produced nan in f" in text
    assert "y = np.log(x)" in text
    assert "^^^^^^^^^" in text.splitlines()[-1]


def test_anomaly_in_df_names_the_forward_operation_with_a_caret() -> None:
    with ad.detect_anomaly(), pytest.raises(ad.AnomalyError) as info:
        ad.grad(sqrt_sum)(np.array([0.0, 1.0, 4.0]))
    error = info.value
    assert error.source_range is not None
    assert error.source_range.line == line_of(sqrt_sum, "np.sqrt")
    text = str(error)
    assert "the gradient of aten::sqrt produced inf" in text
    assert "in df" in text
    source, caret = text.splitlines()[-2:]
    assert source.strip() == "y = np.sqrt(x)"
    assert caret.strip() == "^" * len("np.sqrt(x)")
    assert caret.index("^") == source.index("np.sqrt")


def test_anomaly_in_a_reverse_loop_names_the_forward_operation() -> None:
    with ad.detect_anomaly(), pytest.raises(ad.AnomalyError) as info:
        ad.grad(loop_sqrt)(np.array([1.0, 2.0, 3.0]), 3)
    assert "the gradient of aten::sqrt" in str(info.value)
    assert info.value.source_range is not None
    assert info.value.source_range.line == line_of(loop_sqrt, "np.sqrt")


dsqrt_sum = ad.grad(sqrt_sum)


def sum_of_gradient(x):  # type: ignore[no-untyped-def]
    return np.sum(dsqrt_sum(x))


def test_anomaly_in_a_gradient_taken_inside_f_names_its_forward_operation() -> None:
    with ad.detect_anomaly(), pytest.raises(ad.AnomalyError) as info:
        ad.grad(sum_of_gradient)(np.array([0.0, 1.0]))
    assert "the gradient of aten::sqrt produced inf (in f" in str(info.value)
    assert info.value.source_range is not None
    assert info.value.source_range.line == line_of(sqrt_sum, "np.sqrt")


def test_anomaly_mode_changes_nothing_when_all_is_finite() -> None:
    x = np.array([0.5, 1.0, 4.0])
    with ad.detect_anomaly():
        inside = ad.grad(sqrt_sum)(x)
    np.testing.assert_array_equal(inside, ad.grad(sqrt_sum)(x))


def test_without_anomaly_mode_non_finite_gradients_pass() -> None:
    dx = ad.grad(sqrt_sum)(np.array([0.0, 1.0]))
    assert np.isinf(dx[0])


def test_every_kernel_node_of_df_knows_its_forward_operation() -> None:
    rng = np.random.default_rng(0)
    w, x, y = rng.normal(size=(4, 2)), rng.normal(size=(5, 4)), rng.normal(size=(5, 2))
    df = compiled_for(mlp, w, x, y).gradient.df
    forward_ops = [
        n.source_range.gradient_of
        for n in df.all_nodes()
        if n.kind.startswith("aten::") and n.source_range is not None
    ]
    assert forward_ops
    assert all(forward_ops)
    assert {"aten::tanh", "aten::matmul", "aten::pow", "aten::mean"} <= set(forward_ops)


def test_gradient_tag_is_not_part_of_a_range() -> None:
    df = compiled_for(sqrt_sum, np.ones(3)).gradient.df
    tagged = next(n.source_range for n in df.nodes() if n.kind == "aten::div")
    assert tagged.gradient_of == "aten::sqrt"
    plain = tagged.of_gradient("aten::exp")
    assert plain == tagged
    assert hash(plain) == hash(tagged)
    assert str(plain) == str(tagged)


# -- 4. saved-value hooks --------------------------------------------------------------------


def test_identity_hooks_change_nothing() -> None:
    rng = np.random.default_rng(1)
    w, x, y = rng.normal(size=(4, 2)), rng.normal(size=(5, 4)), rng.normal(size=(5, 2))
    packed: list[np.ndarray] = []
    unpacked: list[Any] = []

    def pack(array: np.ndarray) -> np.ndarray:
        packed.append(array)
        return array

    def unpack(value: Any) -> Any:
        unpacked.append(value)
        return value

    expected = ad.value_and_grad(mlp, argnums=(0, 1))(w, x, y)
    compiled = compiled_for(mlp, w, x, y, wrt=(0, 1))
    _, plain = compiled.forward([w, x, y])
    with ad.saved_value_hooks(pack, unpack):
        got = ad.value_and_grad(mlp, argnums=(0, 1))(w, x, y)
        _, saved = compiled.forward([w, x, y])
    assert got[0] == expected[0]
    for a, b in zip(got[1], expected[1], strict=True):
        np.testing.assert_array_equal(a, b)
    captured = plain.captured_inputs + plain.captured_outputs
    arrays = sum(isinstance(v, np.ndarray) for v in captured)
    assert len(packed) == 2 * arrays
    assert len(unpacked) == arrays
    assert saved.temporary_bytes() == plain.temporary_bytes()


def test_compressing_hooks_lower_the_bytes_held_between_f_and_df() -> None:
    rng = np.random.default_rng(2)
    x = rng.uniform(0.5, 1.5, size=10_000)

    def pack(array: np.ndarray) -> tuple[np.dtype[Any], np.ndarray]:
        return array.dtype, array.astype(np.float16)

    def unpack(packed: tuple[np.dtype[Any], np.ndarray]) -> np.ndarray:
        dtype, half = packed
        return half.astype(dtype)

    compiled = compiled_for(chain, x)
    _, plain = compiled.forward([x])
    with ad.saved_value_hooks(pack, unpack):
        _, compressed = compiled.forward([x])
    # f keeps a, b and c (float64); packed, they and the packed argument are float16.
    assert plain.temporary_bytes() == 3 * x.nbytes
    assert compressed.temporary_bytes() == 4 * x.nbytes // 4
    assert compressed.temporary_bytes() < plain.temporary_bytes()
    # df unpacks with the hooks of the forward run, after the with block.
    (dx,) = compiled.backward(compressed, [np.ones(())])
    (exact,) = compiled.backward(plain, [np.ones(())])
    assert dx.dtype == np.float64
    np.testing.assert_allclose(dx, exact, rtol=1e-2, atol=1e-3)


def test_hooks_reach_arrays_in_a_loop_tape() -> None:
    kinds: list[str] = []

    def pack(array: np.ndarray) -> np.ndarray:
        kinds.append(type(array).__name__)
        return array.copy()

    x = np.array([1.0, 2.0, 3.0])
    with ad.saved_value_hooks(pack, lambda a: a):
        dx = ad.grad(loop_sqrt)(x, 4)
    np.testing.assert_allclose(dx, ad.grad(loop_sqrt)(x, 4))
    assert kinds
    assert set(kinds) == {"ndarray"}


def test_vjp_with_hooks_unpacks_on_each_backward() -> None:
    counts = {"unpack": 0}

    def unpack(value: Any) -> Any:
        counts["unpack"] += 1
        return value

    x = np.array([0.5, 1.0])
    with ad.saved_value_hooks(lambda a: a, unpack):
        _, vjp_fn = ad.vjp(sqrt_sum, x)
    first = vjp_fn(1.0)
    after_one = counts["unpack"]
    np.testing.assert_array_equal(vjp_fn(1.0)[0], first[0])
    assert after_one > 0
    assert counts["unpack"] == 2 * after_one


# -- 5. the profiler -------------------------------------------------------------------------


def mlp_args() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(3)
    return rng.normal(size=(8, 3)), rng.normal(size=(16, 8)), rng.normal(size=(16, 3))


def test_profile_has_every_node_of_f_and_df_with_forward_attribution() -> None:
    w, x, y = mlp_args()
    prof = ad.profile(mlp, w, x, y)
    _value, dw = prof.result
    np.testing.assert_allclose(dw, ad.grad(mlp)(w, x, y))
    gradient = compiled_for(mlp, w, x, y).gradient
    entries = prof.entries()
    assert {e.op for e in entries if e.graph == "f"} == kernel_kinds(gradient.f)
    assert {e.op for e in entries if e.graph == "df"} == kernel_kinds(gradient.df)
    for entry in entries:
        if entry.graph == "f":
            assert entry.forward_op == entry.op
        elif entry.op.startswith("aten::"):
            assert entry.forward_op is not None
            assert entry.forward_op.startswith("aten::")
            assert entry.location.startswith(f"{shown_path(__file__)}:")
            assert entry.source_line
    tanh_grad = [e for e in entries if e.graph == "df" and e.forward_op == "aten::tanh"]
    assert tanh_grad
    assert all(e.source_line == "h = np.tanh(x @ w)" for e in tanh_grad)
    assert all(e.calls == 1 and e.time_ns >= 0 for e in entries)
    matmul = next(e for e in entries if e.graph == "f" and e.op == "aten::matmul")
    assert matmul.bytes == 16 * 3 * 8
    mean = next(e for e in entries if e.graph == "f" and e.op == "aten::mean")
    assert mean.bytes == 8  # a NumPy scalar
    views = [e for e in entries if e.op == "prim::TupleUnpack"]
    assert all(e.bytes == 0 for e in views)


def test_profile_table_lists_every_entry() -> None:
    prof = ad.profile(mlp, *mlp_args())
    table = prof.table()
    assert str(prof) == table
    lines = table.splitlines()
    assert lines[0].split()[:3] == ["graph", "op", "forward"]
    for entry in prof.entries():
        assert any(entry.op in line and line.startswith(entry.graph) for line in lines)
    assert "total" in lines[-1]
    assert len(prof.table(limit=2).splitlines()) == 2 + 2 + 2  # header, rule, 2 rows, totals


def test_profile_sorts() -> None:
    prof = ad.profile(mlp, *mlp_args())
    by_time = prof.entries(sort_by="time")
    assert [e.time_ns for e in by_time] == sorted((e.time_ns for e in by_time), reverse=True)
    by_bytes = prof.entries(sort_by="bytes")
    assert [e.bytes for e in by_bytes] == sorted((e.bytes for e in by_bytes), reverse=True)
    assert by_bytes[0].bytes > 0
    assert sorted(prof.entries(), key=id) != []
    assert len(by_time) == len(prof.entries())
    table_lines = prof.table(sort_by="bytes").splitlines()[2:]
    assert table_lines[0].split()[1] == by_bytes[0].op
    with pytest.raises(ValueError, match="sort_by"):
        prof.entries(sort_by="name")


def test_chrome_trace_loads_as_json(tmp_path: Path) -> None:
    prof = ad.profile(mlp, *mlp_args())
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(path)
    events = json.loads(path.read_text())
    assert isinstance(events, list)
    assert len(events) == len(prof.events) > 0
    for event in events:
        assert {"name", "ph", "ts", "dur", "pid", "tid", "args"} <= set(event)
        assert event["ph"] == "X"
        assert event["dur"] >= 0
        assert event["ts"] >= 0
    assert {e["args"]["graph"] for e in events} == {"f", "df"}
    df_names = {(e["name"], e["args"]["forward_op"]) for e in events if e["args"]["graph"] == "df"}
    assert any(forward == "aten::tanh" for _, forward in df_names)
    starts = [e["ts"] for e in events]
    assert starts == sorted(starts)


def profiled_ops(prof: ad.Profile) -> list[tuple[str, str]]:
    return [(entry.graph, entry.op) for entry in prof.entries()]


@pytest.mark.parametrize("gradient", [ad.grad, ad.value_and_grad], ids=["grad", "value_and_grad"])
def test_profile_of_a_gradient_profiles_the_function_it_differentiates(
    gradient: Callable[..., Any],
) -> None:
    w, x, y = mlp_args()
    prof = ad.profile(gradient(mlp, argnums=(0, 2)), w, x, y)
    value, (dw, dy) = prof.result
    assert value == pytest.approx(mlp(w, x, y))
    expected_dw, expected_dy = ad.grad(mlp, argnums=(0, 2))(w, x, y)
    np.testing.assert_allclose(dw, expected_dw)
    np.testing.assert_allclose(dy, expected_dy)
    assert profiled_ops(prof) == profiled_ops(ad.profile(mlp, w, x, y, argnums=(0, 2)))
    assert {entry.graph for entry in prof.entries()} == {"f", "df"}


def test_profile_of_a_gradient_keeps_its_has_aux() -> None:
    def with_aux(w, x, y):  # type: ignore[no-untyped-def]
        h = np.tanh(x @ w)
        return np.mean((h - y) ** 2), h

    w, x, y = mlp_args()
    (value, h), dw = ad.profile(ad.grad(with_aux, has_aux=True), w, x, y).result
    assert value == pytest.approx(mlp(w, x, y))
    np.testing.assert_allclose(h, np.tanh(x @ w))
    np.testing.assert_allclose(dw, ad.grad(mlp)(w, x, y))


def test_profile_of_a_gradient_refuses_other_argnums() -> None:
    with pytest.raises(ad.DifferentiationError, match="argnums=1 for a gradient taken with"):
        ad.profile(ad.grad(mlp), *mlp_args(), argnums=1)


def test_profile_of_a_scripted_function() -> None:
    w, x, y = mlp_args()
    _value, dw = ad.profile(ad.script(mlp), w, x, y).result
    np.testing.assert_allclose(dw, ad.grad(mlp)(w, x, y))


def test_profiler_context_manager_sums_runs_and_loops() -> None:
    x = np.array([1.0, 2.0, 3.0])
    with ad.profiler() as prof:
        for _ in range(3):
            ad.grad(loop_sqrt)(x, 4)
    sqrt = [e for e in prof.entries() if e.graph == "f" and e.op == "aten::sqrt"]
    assert len(sqrt) == 1
    assert sqrt[0].calls == 3 * 4
    assert any(e.forward_op == "aten::sqrt" and e.graph == "df" for e in prof.entries())
    after = len(prof.events)
    ad.grad(loop_sqrt)(x, 4)
    assert len(prof.events) == after  # off outside the block


def test_profiler_and_anomaly_mode_nest() -> None:
    with ad.profiler() as prof, ad.detect_anomaly(), pytest.raises(ad.AnomalyError):
        ad.grad(sqrt_sum)(np.array([0.0, 1.0]))
    assert any(e.graph == "df" for e in prof.events)


def test_nothing_enabled_runs_the_uninstrumented_executables() -> None:
    x = np.array([1.0, 2.0])
    compiled = compiled_for(sqrt_sum, x)
    ad.grad(sqrt_sum)(x)
    assert compiled.observed is None
    assert compiled.executables() == (compiled.f, compiled.df)
    assert compiled.f.observer is None
    assert compiled.df.observer is None
    with ad.profiler():
        f, df = compiled.executables()
    assert f.observer is not None
    assert df.observer is not None
    with ad.detect_anomaly():
        assert compiled.executables() == (f, df)  # one cached instrumented pair


# -- the interpreter's observer --------------------------------------------------------------

LOOP = """
graph(%x : Double(3), %n : int):
  %t : bool = prim::Constant[value=1]()
  %y : Double(3) = aten::sin(%x)
  %z : Double(3) = prim::Loop(%n, %t, %y)
    block0(%i : int, %c : Double(3)):
      %d : Double(3) = aten::mul(%c, %x)
      -> (%t, %d)
  return (%z)
"""


def test_observer_sees_every_kernel_node_and_may_not_change_results() -> None:
    graph = parse_graph(LOOP)
    seen: list[str] = []

    def observe(node: Node, kernel: Callable[..., Any], args: tuple[Any, ...]) -> Any:
        seen.append(node.kind)
        return kernel(*args)

    x = np.array([0.5, 1.0, 2.0])
    (observed,) = Executable(graph, observer=observe)(x, 3)
    (plain,) = Executable(graph)(x, 3)
    np.testing.assert_array_equal(observed, plain)
    assert seen == ["aten::sin"] + ["aten::mul"] * 3


def test_unobserved_plans_have_no_observer_steps() -> None:
    graph = parse_graph(LOOP)
    plain = Executable(graph).plan.steps
    observed = Executable(graph, observer=lambda n, k, a: k(*a)).plan.steps
    assert all(step.__name__ != "observed" for step in plain)
    assert observed[0].__name__ == "observed"


def test_run_empties_the_argument_list() -> None:
    graph = parse_graph(LOOP)
    args: list[Any] = [np.ones(3), 2]
    (result,) = Executable(graph).run(args)
    assert args == []
    np.testing.assert_allclose(result, np.sin(1.0) * np.ones(3))


# -- 6. release as you go --------------------------------------------------------------------


def df_peak_bytes(compiled: CompiledGradient, x: np.ndarray, hold: bool) -> int:
    """Bytes allocated above what f left behind, at the peak of one df run."""
    tracemalloc.start()
    try:
        outputs, saved = compiled.forward([x])
        del outputs
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        seeds = [np.ones(())]
        if hold:  # every captured value held until df returns, as in a plain call
            compiled.df(*compiled._df_inputs(saved, seeds, False))
        else:
            compiled.backward(saved, seeds)
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def test_df_releases_captured_values_after_their_last_use() -> None:
    x = np.random.default_rng(4).uniform(size=200_000)
    compiled = compiled_for(chain, x)
    assert len(compiled.gradient.df_input_captured_outputs) == 3  # a, b and c
    held = df_peak_bytes(compiled, x, hold=True)
    released = df_peak_bytes(compiled, x, hold=False)
    assert released <= held - x.nbytes // 2
