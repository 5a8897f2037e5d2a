"""``print(...)`` in a scripted function runs at run time, in program order, with the values the
run computed, as the plain function prints them (issue 17, item 5): in loops and branches, in a
gradient's forward run, on every call including cache hits, under either executor, and no pass
drops or moves it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import autodiff as ad
from ir.codegen import EXECUTOR_VARIABLE


def progress(x, n: int):
    y = np.sum(x * x)
    print("start", x.shape, sep=": ")
    for i in range(n):
        y = y * 0.5
        print("step", i, y)
    if n > 2:
        print("long run", end="!\n")
    print(np.tanh(x))  # a value nothing else reads
    return y


def helper_prints(v):
    print("helper got", v)
    return v * 2.0


def calls_a_printing_helper(x):
    h = helper_prints(np.sin(x))
    return np.sum(h)


def flushed(x):
    print(x[0], x[1], sep="", end="|", flush=True)
    print()
    return np.sum(x)


def prints_a_written_array(x):
    y = x * 1.0
    print(y)
    y[0] = 10.0
    print(y)
    return np.sum(y * y)


def returns_what_print_returns(x):
    nothing = print("side effect")
    if nothing is None:
        return np.sum(x)
    return np.sum(x * 2.0)


def formatted(x, n: int):
    y = np.sum(x * x)
    for i in range(n):
        y = y * 0.5
        print(f"step {i}: loss={y:.4f} {{braces}} {x!r} {n=}")
    print(f"shape {x.shape} first {x[0]:+.2e}", f'say "hi"\t{y!s:>12}', "tail")
    label = f"{n:03d}-{y:.1f}"
    print(label, len(label))
    return y


X = np.array([0.5, -1.0, 2.0])


def plain_output(capsys: pytest.CaptureFixture[str], fn: Callable[..., Any], *args: Any) -> str:
    fn(*args)
    return capsys.readouterr().out


@pytest.mark.parametrize(
    ("fn", "args"),
    [
        (progress, (X, 3)),
        (progress, (X, 1)),
        (calls_a_printing_helper, (X,)),
        (flushed, (X,)),
        (prints_a_written_array, (X,)),
        (returns_what_print_returns, (X,)),
        (formatted, (X, 2)),
    ],
    ids=[
        "loop-and-branch",
        "short-loop",
        "helper",
        "sep-end-flush",
        "written",
        "returns-none",
        "f-strings",
    ],
)
@pytest.mark.parametrize("executor", ["codegen", "interpreter"])
def test_print_writes_what_the_plain_function_writes(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    executor: str,
) -> None:
    monkeypatch.setenv(EXECUTOR_VARIABLE, executor)
    expected = plain_output(
        capsys, fn, *(a.copy() if isinstance(a, np.ndarray) else a for a in args)
    )
    assert expected
    scripted = ad.script(fn)
    for _ in range(2):  # the first call compiles, the second is a cache hit
        assert plain_output(capsys, scripted, *args) == expected
    gradient = ad.value_and_grad(fn)
    for _ in range(2):  # a gradient's forward run prints once per call; df prints nothing
        assert plain_output(capsys, gradient, *args) == expected


def test_print_stays_in_the_compiled_graph_after_every_pass() -> None:
    graph = ad.script(progress).graph_for(X, 3)
    prints = [node for node in graph.all_nodes() if node.kind == "prim::Print"]
    assert len(prints) == 4
    gradient = ad.differentiate(ad.script(progress).graph_for(X, 3))
    assert sum(node.kind == "prim::Print" for node in gradient.f.all_nodes()) == 4
    assert not any(node.kind == "prim::Print" for node in gradient.df.all_nodes())


def test_higher_derivatives_print_in_their_forward_run(capsys: pytest.CaptureFixture[str]) -> None:
    hessian = ad.hessian(calls_a_printing_helper)(X)
    out = capsys.readouterr().out
    assert "helper got" in out
    np.testing.assert_allclose(hessian, np.diag(-2.0 * np.sin(X)), rtol=1e-12, atol=1e-15)


def computed_spec(x, width: int):
    print(f"{np.sum(x):{width}}")
    return np.sum(x)


def undefined_in_a_field(x):
    print(f"value {missing_name}")  # noqa: F821
    return np.sum(x)


def file_keyword(x):
    print(x, file=None)
    return np.sum(x)


def computed_separator(x, s: str):
    print(x, sep=s)
    return np.sum(x)


@pytest.mark.parametrize(
    ("fn", "args", "message"),
    [
        (file_keyword, (X,), r"print\(file=\.\.\.\) is not supported"),
        (computed_separator, (X, ","), r"print's sep= must be a string or None written in"),
        (computed_spec, (X, 8), r"a format spec computed in an f-string .* is not supported"),
        (undefined_in_a_field, (X,), r"undefined name 'missing_name'"),
    ],
)
def test_what_print_refuses_is_located(fn: Callable[..., Any], args: Any, message: str) -> None:
    with pytest.raises(ad.ScriptError, match=message) as info:
        ad.script(fn)(*args)
    assert "test_print.py" in str(info.value)
