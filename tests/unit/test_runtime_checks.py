"""``raise`` and ``assert`` in scripted code are checks made at run time, raising the program's
own exception at its line (Note [Run-time checks] in `frontend.checks`)."""

from __future__ import annotations

import numpy as np
import pytest

import autodiff as ad


def checked_sqrt(x, n: int):
    assert n > 0, "n must be positive"
    if np.min(x) < 0:
        raise ValueError(f"negative input: {np.min(x)}")
    if n > 5:
        y = x * 2.0
    else:
        raise RuntimeError("n too small")
    return np.sum(np.sqrt(y))


def test_checks_pass_silently_and_gradients_flow() -> None:
    x = np.array([1.0, 4.0])
    assert ad.script(checked_sqrt)(x, 6) == pytest.approx(checked_sqrt(x, 6))
    np.testing.assert_allclose(ad.grad(checked_sqrt)(x, 6), 1.0 / np.sqrt(2.0 * x))


@pytest.mark.parametrize(
    ("x", "n", "kind", "message", "line"),
    [
        (np.array([-1.0, 2.0]), 6, ValueError, "ValueError: negative input: -1.0", 3),
        (np.ones(2), 0, AssertionError, "AssertionError: n must be positive", 1),
        (np.ones(2), 3, RuntimeError, "RuntimeError: n too small", 7),
    ],
)
def test_a_failed_check_raises_the_programs_exception_at_its_line(
    x: np.ndarray, n: int, kind: type[Exception], message: str, line: int
) -> None:
    first = checked_sqrt.__code__.co_firstlineno
    for run in (ad.script(checked_sqrt), ad.grad(checked_sqrt)):
        with pytest.raises(kind) as info:
            run(x, n)
        error = info.value
        assert isinstance(error, ad.AutodiffError)
        assert error.message == message
        assert error.source_range is not None
        assert error.source_range.line == first + line
    assert ad.script(checked_sqrt)(np.ones(2), 6) == pytest.approx(2.0 * np.sqrt(2.0))


def test_a_check_inside_a_loop_runs_each_iteration() -> None:
    def fn(x, steps: int):
        total = 0.0
        for i in range(steps):
            total = total + np.sum(x) * i
            if total > 100.0:
                raise OverflowError("diverged")
        return total

    assert ad.script(fn)(np.ones(2), 5) == fn(np.ones(2), 5)
    with pytest.raises(OverflowError, match="diverged"):
        ad.script(fn)(np.full(2, 10.0), 5)


def test_only_builtin_exceptions_are_raised() -> None:
    class Custom(Exception):
        pass

    def fn(x):
        raise Custom("no")

    with pytest.raises(ad.ScriptError, match="Python's own exceptions"):
        ad.script(fn)(np.ones(2))
