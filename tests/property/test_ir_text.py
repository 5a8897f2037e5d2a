"""`autodiff opt` on mutated IR text (see `tests.property.ir_text`): a result that parses back
or one located error, never a traceback or a hang.

CI runs a fixed, derandomised few dozen cases in process and a few as a subprocess;
``AUTODIFF_FUZZ_EXAMPLES=N`` runs N random cases instead. For a long run, use
``python -m tests.property.fuzz_ir --examples 20000``.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.property.ir_text import MUTATIONS, IRText, check_opt, ir_texts, seeds

FUZZ_EXAMPLES = int(os.environ.get("AUTODIFF_FUZZ_EXAMPLES", "0"))


def ir_settings(examples: int) -> settings:
    return settings(
        max_examples=FUZZ_EXAMPLES or examples,
        derandomize=not FUZZ_EXAMPLES,
        database=None,
        deadline=None,
        print_blob=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


@ir_settings(60)
@given(ir_texts())
def test_opt_on_mutated_ir_succeeds_or_reports_one_located_error(case: IRText) -> None:
    check_opt(case)


@ir_settings(4)
@given(ir_texts())
def test_opt_as_a_subprocess_on_mutated_ir(case: IRText) -> None:
    check_opt(case, subprocess_run=True)


@ir_settings(len(MUTATIONS) * 2)
@given(st.data())
def test_every_mutation_alone(data: st.DataObject) -> None:
    name = data.draw(st.sampled_from(sorted(MUTATIONS)))
    seed = data.draw(st.sampled_from(seeds()))
    mutated = MUTATIONS[name](data.draw, seed.text.encode())
    check_opt(IRText(seed.name, seed.pipeline, mutated, (name,)))


def test_the_seeds_pass_unchanged() -> None:
    for seed in seeds():
        check_opt(IRText(seed.name, seed.pipeline, seed.text.encode(), ()))
