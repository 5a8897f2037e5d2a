"""Property-based tests on generated programs (see `tests.property.programs` and
`tests.property.checks`).

CI runs a fixed, derandomised set of examples per property, so the run is fast and the same
every time. ``AUTODIFF_FUZZ_EXAMPLES=N`` runs N random examples per property instead; for a
long run that saves what it finds, use ``python -m tests.property.fuzz --examples 10000``.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings

from tests.property.checks import PROPERTIES
from tests.property.programs import Program, programs

FUZZ_EXAMPLES = int(os.environ.get("AUTODIFF_FUZZ_EXAMPLES", "0"))
CI_EXAMPLES = {"scripted": 25, "passes": 8, "roundtrip": 25, "gradients": 20}


def property_settings(prop: str) -> settings:
    return settings(
        max_examples=FUZZ_EXAMPLES or CI_EXAMPLES[prop],
        derandomize=not FUZZ_EXAMPLES,
        database=None,
        deadline=None,
        print_blob=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


def make_test(prop: str) -> Callable[[], None]:
    check = PROPERTIES[prop]

    @property_settings(prop)
    @given(programs())
    def test(program: Program) -> None:
        check(program)

    return test


test_scripted_equals_plain = make_test("scripted")
test_passes_preserve_results = make_test("passes")
test_print_parse_print_is_identity = make_test("roundtrip")
test_gradients_match_finite_differences = make_test("gradients")


@pytest.mark.parametrize("prop", sorted(PROPERTIES))
def test_every_property_runs_in_ci(prop: str) -> None:
    assert prop in CI_EXAMPLES
