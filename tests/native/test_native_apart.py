"""The gradient corpus with ``f`` and ``df`` compiled and run apart on the native tier, as
calls whose ``df`` takes more vjps than the loss's seed run them (an aux array, say). A
``grad`` call of each corpus function runs the two joined (Note [Joined f and df] in
`autodiff.gradient`), which `test_native_corpora` checks; this module keeps the separate
path, the packed results between the two graphs (Note [Packed results]) included, as well
checked."""

from __future__ import annotations

import importlib

import pytest

from tests.gradients import corpus as gradients
from tests.native.test_native_corpora import gradient_on_both_tiers, params

pytest.importorskip("numba")
runtime_module = importlib.import_module("autodiff.runtime")


@pytest.mark.parametrize("case", params(gradients.CASES))
def test_gradient_with_f_and_df_apart_equals_the_numpy_tier(
    case: gradients.Case, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runtime_module, "joined_graph", lambda gradient, df: None)
    tier = gradient_on_both_tiers(case)
    assert tier is not None
    assert len(tier.graphs) == 2  # f and df apart
