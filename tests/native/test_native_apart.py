"""The gradient corpus with ``f`` and ``df`` compiled and run apart on the native tier, as
calls whose ``df`` takes more vjps than the loss's seed run them (an aux array, say). A
``grad`` call of each corpus function runs the two joined (Note [Joined f and df] in
`autodiff.gradient`), which `test_native_corpora` checks; this module keeps the separate
path, the packed results between the two graphs (Note [Packed results]) included, as well
checked."""

from __future__ import annotations

import copy
import importlib

import numpy as np
import pytest

import autodiff as ad
from tests.gradients import corpus as gradients
from tests.gradients.test_gradient_corpus import differentiated_positions
from tests.native.test_native_corpora import assert_twin, params

pytest.importorskip("numba")
runtime_module = importlib.import_module("autodiff.runtime")


@pytest.mark.parametrize("case", params(gradients.CASES))
def test_gradient_with_f_and_df_apart_equals_the_numpy_tier(
    case: gradients.Case, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runtime_module, "joined_graph", lambda gradient, df: None)
    numpy_args = case.make(np.random.default_rng(0))
    native_args = copy.deepcopy(numpy_args)
    argnums = differentiated_positions(numpy_args)
    expected = ad.value_and_grad(case.fn, argnums=argnums, native=False)(*numpy_args)
    native = ad.value_and_grad(case.fn, argnums=argnums, native=True)
    actual = native(*native_args)
    assert_twin(actual, expected, "value and gradients")
    assert_twin(native_args, numpy_args, "arguments after the call")
    (compiled,) = native.compiled_gradients()
    tier = compiled.runtime.native
    assert tier is not None
    assert len(tier.graphs) == 2  # f and df apart
