"""Property-based tests on generated programs (see `tests.property.programs`,
`tests.property.idioms` and `tests.property.checks`).

CI runs a fixed, derandomised set of examples per property, so the run is fast and the same
every time, and a few programs per idiom, each starting with that idiom.
``AUTODIFF_FUZZ_EXAMPLES=N`` runs N random examples per property and idiom instead; for a long
run that saves what it finds, use ``python -m tests.property.fuzz --examples 10000``.
Every idiom and property runs in CI: a bug one finds is fixed, not left out.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings

from tests.property.checks import PROPERTIES, numpy_error
from tests.property.idioms import IDIOMS
from tests.property.programs import Program, programs

FUZZ_EXAMPLES = int(os.environ.get("AUTODIFF_FUZZ_EXAMPLES", "0"))
CI_EXAMPLES = {
    "scripted": 25,
    "aliasing": 15,
    "passes": 8,
    "roundtrip": 25,
    "gradients": 20,
    "nested": 5,
    "native": 6,
}
CI_IDIOM_EXAMPLES = 6  # per idiom, every property but passes and nested
IDIOM_PROPERTIES = ("scripted", "aliasing", "roundtrip", "gradients")

CI_IDIOMS = tuple(IDIOMS)


def property_settings(examples: int) -> settings:
    return settings(
        max_examples=FUZZ_EXAMPLES or examples,
        derandomize=not FUZZ_EXAMPLES,
        database=None,
        deadline=None,
        print_blob=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


def make_test(prop: str) -> Callable[[], None]:
    check = PROPERTIES[prop]

    @property_settings(CI_EXAMPLES[prop])
    @given(programs(CI_IDIOMS))
    def test(program: Program) -> None:
        check(program)

    return test


test_scripted_equals_plain = make_test("scripted")
test_results_alias_as_numpy_does = make_test("aliasing")
test_passes_preserve_results = make_test("passes")
test_print_parse_print_is_identity = make_test("roundtrip")
test_gradients_match_finite_differences = make_test("gradients")
test_nested_jacobians_match_finite_differences = make_test("nested")
test_native_tier_equals_numpy_tier = make_test("native")


@pytest.mark.parametrize("idiom", list(IDIOMS))
def test_idiom(idiom: str) -> None:
    """Programs that start with ``idiom`` have every property but the costly two."""

    @property_settings(CI_IDIOM_EXAMPLES)
    @given(programs([idiom], focus=idiom))
    def run(program: Program) -> None:
        for prop in IDIOM_PROPERTIES:
            PROPERTIES[prop](program)

    run()


@pytest.mark.parametrize("idiom", list(IDIOMS))
def test_idiom_programs_are_numpy_programs(idiom: str) -> None:
    """The generator's side of the bargain: NumPy runs what an idiom
    writes, or, for ``readonly_writes``, refuses it for its write through a read-only view."""

    @property_settings(10)
    @given(programs([idiom], focus=idiom))
    def run(program: Program) -> None:
        error = numpy_error(program)
        if idiom == "readonly_writes":
            assert isinstance(error, ValueError), error
            assert "read-only" in str(error), error
        else:
            assert error is None, f"{error!r} in\n{program.body}"

    run()


@pytest.mark.parametrize("prop", sorted(PROPERTIES))
def test_every_property_runs_in_ci(prop: str) -> None:
    assert prop in CI_EXAMPLES
