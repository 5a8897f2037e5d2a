"""The equivalence and gradient corpora on Dask arrays (chunked so that chunk boundaries cross
every axis) and on `array_api_strict` arrays, against NumPy: every case gives NumPy's values
and gradients or a located refusal naming the operator and backend, never a wrong result
and never a conversion of a Dask array to NumPy (Note [Array backends] in `ir.backends`)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.backends.corpus_runs import (
    OK,
    convert_arrays,
    convert_floats,
    gradient_call,
    outcome,
    plain_call,
)
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
    # whole-axis kernels: linalg, FFT, sort (ir/backend_kernels_whole.py)
    "eigh_gauge_invariant",
    "gaussian_log_likelihood",
    "inverse_det_and_norms",
    "pinv_and_vector_norms",
    "svd_reconstruction",
    "fft2_shifted_magnitudes",
    "fft_real_part_weighted",
    "fftn_ifftn_complex_chain",
    "float32_rfft_power",
    "rfft_filter_irfft_round_trip",
    "rfft_power_spectrum",
    "trimmed_mean_by_sort_and_partition",
    # indexing, rearranging (ir/backend_kernels_indexing.py) and their scatter-adds
    # (ir/backend_kernels_indexing_gradients.py)
    "integer_and_slice_indexing",
    "negative_step_slices",
    "rosenbrock",
    "repeat_tile_and_flip",
    "split_stack_and_pad",
    "concatenate_and_stack",
    "moved_and_rolled_axes",
    "reshapes",
    "transpose_axes",
    "axis_tuple_reductions",
    "product_log_sqrt",
    "inner_products_of_vectors",
    "diagonals_and_triangles",
    "array_of_a_list",
    "numpy_reductions_of_python_floats",
    # loops over rows with a run-time count, values growing in a loop
    "rnn_over_an_int_count",
    "rnn_of_no_steps",
    "growing_value_in_a_loop",
    "loop_grows_and_sizes_a_fresh_array",
    # integer index arrays and their scatter-adds
    "take_with_repeated_indices",
    "integer_array_index_with_repeats",
    "broadcast_three_ways",
    # einsum and its gradient (ir/backend_kernels_products.py)
    "einsum_chain_and_transpose",
    "einsum_broadcast_batch",
    "einsum_broadcast_batch_of_the_second",
    "einsum_broadcast_each_operand",
    "einsum_broadcast_summed_labels",
    "tensordot_inner_outer",
    "cross_and_kron",
}
# Plain calls of the equivalence corpus that must match NumPy on every backend.
PLAIN_MUST_WORK = {
    "arange_times",
    "integer_array_index",
    "array_of_a_list_of_numbers_and_arrays",
    "list_index",
    "reshape_and_ravel",
    "stack_lists",
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
# Dask mixes with NumPy: only the float arrays become Dask arrays, the rest stay NumPy. A
# strict namespace does not: its users convert every NumPy array, index arrays included.
CONVERT = {"dask": convert_floats, "array_api_strict": convert_arrays}


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
    converted = CONVERT[backend](args, asarray)
    if all(c is a for c, a in zip(convert_floats(args, asarray), args, strict=True)):
        pytest.skip("no floating-point array argument")
    expected, run = plain_call(case, args)
    result = outcome(run, expected, converted, to_numpy)
    if case.name in PLAIN_MUST_WORK:
        assert result == OK, result


@pytest.mark.parametrize("backend", list(BACKENDS))
@pytest.mark.parametrize(
    ("case", "make_args"), cases(GRADIENT_CASES, lambda case: case.make(np.random.default_rng(0)))
)
def test_gradients_match_numpy_or_are_refused(backend, case, make_args, monkeypatch):
    asarray, to_numpy = BACKENDS[backend](monkeypatch)
    args = make_args(case)
    converted = CONVERT[backend](args, asarray)
    if all(c is a for c, a in zip(convert_floats(args, asarray), args, strict=True)):
        pytest.skip("no floating-point array argument")
    expected, run = gradient_call(case, args)
    result = outcome(run, expected, converted, to_numpy)
    if case.name in MUST_WORK:
        assert result == OK, result
