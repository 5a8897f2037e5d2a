"""The equivalence and gradient corpora on the native tier: every function scripted with
``native=True`` (compiled by numba on its first call: Note [Tiering] in autodiff/tiering.py)
gives the NumPy tier's results, types, dtypes and shapes, and leaves its arguments as the NumPy
tier does; every gradient with ``native=True`` equals the NumPy tier's. The tolerance is Note
[Native numerics]'s (ir/native_kernels.py): libm calls and sums in another order differ by a
few ulps. Skipped without numba."""

from __future__ import annotations

import copy
import os
from typing import Any

import numpy as np
import pytest

import autodiff as ad
from autodiff.tiering import NativeTier
from tests.equivalence import corpus as equivalence
from tests.gradients import corpus as gradients
from tests.gradients.test_gradient_corpus import differentiated_positions

pytest.importorskip("numba")
# One worker runs the whole module, in order, when pytest-xdist spreads the suite
# (``--dist loadgroup``), so that the last test sees every case's status.
pytestmark = pytest.mark.xdist_group("native-corpora")

RTOL = {8: 1e-10, 4: 1e-5}  # by itemsize
ATOL = 1e-12  # of the largest element, for elements that cancel to near zero
STATUS: dict[str, str] = {}  # per test, the native tier's status after it
AT_IMPORT = len(equivalence.CASES) + len(gradients.CASES)  # the cases parametrized below


def assert_twin(actual: Any, expected: Any, where: str) -> None:
    """Same Python types, dtypes and shapes; values to Note [Native numerics]'s tolerance."""
    assert type(actual) is type(expected), f"{where}: {type(actual)} != {type(expected)}"
    if isinstance(expected, tuple | list):
        assert len(actual) == len(expected), f"{where}: lengths differ"
        for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
            assert_twin(a, e, f"{where}[{i}]")
        return
    if isinstance(expected, dict):
        assert actual.keys() == expected.keys(), f"{where}: keys differ"
        for key in expected:
            assert_twin(actual[key], expected[key], f"{where}[{key!r}]")
        return
    if isinstance(expected, np.ndarray | np.generic):
        assert actual.dtype == expected.dtype, f"{where}: dtype {actual.dtype} != {expected.dtype}"
        assert actual.shape == expected.shape, f"{where}: shape {actual.shape} != {expected.shape}"
        if expected.dtype.kind in "fc":
            scale = float(np.max(np.abs(expected), initial=0.0))
            rtol = RTOL[expected.dtype.itemsize if expected.dtype.kind == "f" else 8]
            np.testing.assert_allclose(
                actual, expected, rtol=rtol, atol=ATOL * scale, err_msg=where
            )
        else:
            np.testing.assert_array_equal(actual, expected, err_msg=where)
        return
    if isinstance(expected, float):
        assert actual == pytest.approx(expected, rel=RTOL[8], nan_ok=True), where
        return
    assert actual == expected, where


def params(cases: list[Any]) -> list[Any]:
    marks = []
    for case in cases:
        xfail = [pytest.mark.xfail(reason=case.xfail, strict=True)] if case.xfail else []
        marks.append(pytest.param(case, id=case.name, marks=xfail))
    return marks


@pytest.mark.parametrize("case", params(equivalence.CASES))
def test_scripted_on_the_native_tier_equals_the_numpy_tier(case: equivalence.Case) -> None:
    numpy_args = case.make(np.random.default_rng(0), 3)
    native_args = case.make(np.random.default_rng(0), 3)
    expected = ad.script(case.fn, native=False)(*numpy_args)
    scripted = ad.script(case.fn, native=True)
    actual = scripted(*native_args)
    assert_twin(actual, expected, "result")
    assert_twin(native_args, numpy_args, "arguments after the call")
    (unit,) = scripted.cache.values()
    STATUS[f"script {case.name}"] = unit.native.status if unit.native else "no tier"


def gradient_on_both_tiers(case: gradients.Case) -> NativeTier | None:
    """Value, gradients and arguments after the call of ``case`` on the native tier, checked
    against the NumPy tier's; the native tier the call had."""
    numpy_args = case.make(np.random.default_rng(0))
    native_args = copy.deepcopy(numpy_args)
    argnums = differentiated_positions(numpy_args)
    expected = ad.value_and_grad(case.fn, argnums=argnums, native=False)(*numpy_args)
    native = ad.value_and_grad(case.fn, argnums=argnums, native=True)
    actual = native(*native_args)
    assert_twin(actual, expected, "value and gradients")
    assert_twin(native_args, numpy_args, "arguments after the call")
    (compiled,) = native.compiled_gradients()
    tier: NativeTier | None = compiled.runtime.native
    return tier


@pytest.mark.parametrize("case", params(gradients.CASES))
def test_gradient_on_the_native_tier_equals_the_numpy_tier(case: gradients.Case) -> None:
    tier = gradient_on_both_tiers(case)
    STATUS[f"gradient {case.name}"] = tier.status if tier else "no tier"


def test_most_of_the_corpora_ran_natively() -> None:
    """The comparisons above say something only where code ran natively: most functions of
    the corpora have a region numba compiled (run after them, as pytest runs a file in
    order). Those that have none use what stays on the NumPy tier by design: float32, astype,
    arange (Note [Native numerics])."""
    cases = len(equivalence.CASES) + len(gradients.CASES)
    if len(STATUS) < cases:
        # CI has seen this skip under `-n auto` where a local run does not: say why
        pytest.skip(
            f"runs after the whole of the corpora only: {len(STATUS)} of {cases} ran in "
            f"process {os.getpid()} ({AT_IMPORT} cases when the module was imported)"
        )
    native = [name for name, status in STATUS.items() if status.startswith("native")]
    assert 3 * len(native) >= 2 * cases, sorted(set(STATUS) - set(native))
