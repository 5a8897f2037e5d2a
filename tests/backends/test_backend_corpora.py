"""The equivalence and gradient corpora on Dask arrays (chunked so that chunk boundaries cross
every axis) and on `array_api_strict` arrays, against NumPy: every case gives NumPy's values
and gradients or a located refusal naming the operator and backend, never a wrong result
and never a conversion of a Dask array to NumPy (Note [Array backends] in `ir.backends`)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.backends.corpus_runs import OK, convert_floats, gradient_call, outcome, plain_call
from tests.equivalence.corpus import CASES as EQUIVALENCE_CASES
from tests.gradients.corpus import CASES as GRADIENT_CASES

# Realistic programs that must work on every backend: models, loops, branches on data.
MUST_WORK = {
    "mlp_softmax_cross_entropy",
    "logistic_regression",
    "layer_norm",
    "self_attention",
    "tanh_rnn_fixed_steps",
    "newton_square_root",
    "branch_on_data_inside_a_loop",
    "loop_inside_a_branch_on_data",
    "accumulators_over_rows",
    "break_when_small",
}


def dask_backend(monkeypatch: pytest.MonkeyPatch):
    dask = pytest.importorskip("dask")
    da = pytest.importorskip("dask.array")
    pytest.importorskip("array_api_compat")

    def refuse(self, *args, **kwargs):
        raise AssertionError("a Dask array was converted to NumPy")

    monkeypatch.setattr(da.Array, "__array__", refuse)

    def chunked(a: np.ndarray):
        return da.from_array(a, chunks=tuple(max(1, n // 3) for n in a.shape))

    def to_numpy(value):
        (computed,) = dask.compute(value)
        return np.asarray(computed)

    return chunked, to_numpy


def strict_backend(monkeypatch: pytest.MonkeyPatch):
    xp = pytest.importorskip("array_api_strict")
    return xp.asarray, np.from_dlpack


BACKENDS = {"dask": dask_backend, "array_api_strict": strict_backend}


def cases(corpus, make_args):
    return [pytest.param(case, make_args, id=case.name) for case in corpus if not case.xfail]


@pytest.mark.parametrize("backend", list(BACKENDS))
@pytest.mark.parametrize(
    ("case", "make_args"),
    cases(EQUIVALENCE_CASES, lambda case: case.make(np.random.default_rng(0), 5)),
)
def test_plain_calls_match_numpy_or_are_refused(backend, case, make_args, monkeypatch):
    asarray, to_numpy = BACKENDS[backend](monkeypatch)
    args = make_args(case)
    converted = convert_floats(args, asarray)
    if all(c is a for c, a in zip(converted, args, strict=True)):
        pytest.skip("no floating-point array argument")
    expected, run = plain_call(case, args)
    outcome(run, expected, converted, to_numpy)


@pytest.mark.parametrize("backend", list(BACKENDS))
@pytest.mark.parametrize(
    ("case", "make_args"), cases(GRADIENT_CASES, lambda case: case.make(np.random.default_rng(0)))
)
def test_gradients_match_numpy_or_are_refused(backend, case, make_args, monkeypatch):
    asarray, to_numpy = BACKENDS[backend](monkeypatch)
    args = make_args(case)
    converted = convert_floats(args, asarray)
    if all(c is a for c, a in zip(converted, args, strict=True)):
        pytest.skip("no floating-point array argument")
    expected, run = gradient_call(case, args)
    result = outcome(run, expected, converted, to_numpy)
    if case.name in MUST_WORK:
        assert result == OK, result
