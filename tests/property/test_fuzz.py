"""The fuzz command's bookkeeping: a failure is saved as a program the regression test replays,
and its key makes the next run reject that failure rather than shrink it again."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from tests.property.checks import PROPERTIES, fresh
from tests.property.fuzz import (
    Failure,
    detailed_key,
    error_key,
    fuzz,
    fuzz_batch,
    known_keys,
    save_regression,
)
from tests.property.programs import LAYOUTS, Program, load_program

PROGRAM = Program(
    "def f(a, n):\n    return np.tanh(a)\n\n\ndef loss(a, n):\n    return np.sum(f(a, n))\n",
    (("a", (3, 4)), ("n", "int=2")),
    7,
    (("a", "transposed"),),
)


def test_a_saved_failure_is_a_program_with_its_property_and_key(tmp_path: Path) -> None:
    error = AssertionError("gradient w.r.t. a: relative error 2.00e+00 at (1, 2)")
    first = save_regression(Failure.of(PROGRAM, "gradients", error), tmp_path)
    second = save_regression(Failure.of(PROGRAM, "scripted", ValueError("x")), tmp_path)
    assert [first.name, second.name] == ["001.py", "002.py"]
    text = first.read_text()
    assert "PROPERTY = 'gradients'" in text
    assert "XFAIL = None" in text
    assert Program.from_source(text) == PROGRAM
    assert known_keys(tmp_path) == set()  # fixed: a failure like these is reported again
    second.write_text(second.read_text().replace("XFAIL = None", "XFAIL = 'a known bug'"))
    assert known_keys(tmp_path) == {error_key(ValueError("x"))}
    assert load_program(Program.from_source(text)).f(*PROGRAM.arguments()).shape == (3, 4)


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_arguments_in_another_layout_keep_their_values_and_strides_when_copied(
    layout: str,
) -> None:
    c_ordered = replace(PROGRAM, layouts=()).arguments()[0]
    (argument, _) = replace(PROGRAM, layouts=(("a", layout),)).arguments()
    assert not argument.flags.c_contiguous
    np.testing.assert_array_equal(argument, c_ordered)
    (copied,) = fresh([argument])
    assert copied.strides == argument.strides
    assert not np.shares_memory(copied, argument)
    np.testing.assert_array_equal(copied, c_ordered)


def test_error_keys_ignore_locations_names_and_numbers() -> None:
    one = ValueError("<generated-program-4>:14:5: error: operand 1: %y4 is used before it")
    two = ValueError("<generated-program-9>:3:9: error: operand 0: %t1.2 is used before it")
    assert error_key(one) == error_key(two) == "ValueError: operand N: %_ is used before it"


def test_a_run_tells_mismatches_apart_by_what_was_compared() -> None:
    one = AssertionError("\nNot equal to tolerance rtol=1e-10\nafter cse: results[0]\nx 1")
    two = AssertionError("\nNot equal to tolerance rtol=1e-10\nresult\nx 2")
    assert error_key(one) == error_key(two)
    assert detailed_key(one) != detailed_key(two)
    assert detailed_key(one) == detailed_key(AssertionError(str(one).replace("0]", "1]")))


def boom(program: Program) -> None:
    raise RuntimeError("always fails")


def test_a_known_failure_is_rejected_not_returned(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(PROPERTIES, "boom", boom)
    key = error_key(RuntimeError("always fails"))
    ran, failure = fuzz_batch(5, seed=0, properties=["boom"], known={key})
    assert (ran, failure) == (5, None)


def test_batches_in_processes_count_every_program_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("tests.property.fuzz.BATCH", 3)
    runs = fuzz(7, 0, ["scripted"], set(), jobs=2, idioms=())
    counts = [ran for _, ran, failure in runs if not failure]
    assert sum(counts) == 7


def test_second_derivatives_are_checked_at_a_coarser_step_only_on_a_mismatch() -> None:
    """Rounding in a large gradient, divided by the step, is not a wrong Hessian
    (regression 125); a Hessian off by one percent fails at both steps."""
    import numpy as np

    import autodiff as ad
    from tests.property.checks import (
        assert_close_to_differences_of,
        assert_close_to_numeric,
        differences_of,
    )

    def loss(x: np.ndarray) -> np.ndarray:
        return np.sum(1000.0 * x + np.tanh(7.0 + np.sum(x**3)))

    x = np.linspace(-1.0, 1.0, 4)
    gradient, exact = ad.grad(loss), ad.hessian(loss)(x)
    with pytest.raises(AssertionError):  # the fine step alone is a false alarm here
        assert_close_to_numeric(exact, differences_of(gradient, [x], 0), "hessian")
    assert_close_to_differences_of(exact, gradient, [x], "hessian")
    with pytest.raises(AssertionError, match="hessian: relative error"):
        assert_close_to_differences_of(exact * 1.01, gradient, [x], "hessian")
