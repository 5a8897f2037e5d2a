"""The same NumPy loss functions differentiated on Dask arrays (Note [Array backends] in
`ir.backends`), against NumPy: lazy results, chunks that cross every reduced or sliced axis,
pytrees of Dask arrays, NumPy weights with Dask data, a LocalCluster, and located refusals."""

from __future__ import annotations

import collections

import numpy as np
import pytest

import autodiff as ad
from ir.errors import BackendError
from tests.backends.backend_corpus import (
    logistic_regression,
    problem,
)

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
pytest.importorskip("array_api_compat")


@pytest.fixture(autouse=True)
def no_conversion_to_numpy(monkeypatch):
    """Any np.asarray of a Dask array while compiling or building the graphs fails the test:
    it would compute the array (a 40 GB one too)."""

    def refuse(self, *args, **kwargs):
        raise AssertionError("a Dask array was converted to NumPy")

    monkeypatch.setattr(da.Array, "__array__", refuse)


def chunked(a: np.ndarray):
    """``a`` as Dask, in chunks of about a third along every axis, so that chunk boundaries
    cross every axis the functions reduce or slice."""
    return da.from_array(a, chunks=tuple(max(1, n // 3) for n in a.shape))


def to_dask(tree):
    if isinstance(tree, list):
        return [tuple(chunked(leaf) for leaf in pair) for pair in tree]
    return chunked(tree)


def leaves(tree):
    if isinstance(tree, list):
        return [leaf for pair in tree for leaf in pair]
    return [tree]


CASES = problem()


@pytest.mark.parametrize("function", list(CASES), ids=lambda f: f.__name__)
def test_value_and_gradient_match_numpy_and_stay_lazy(function):
    args = CASES[function]
    expected_value, expected_grad = ad.value_and_grad(function)(*args)
    value, grad = ad.value_and_grad(function)(*(to_dask(a) for a in args))
    assert all(isinstance(g, da.Array) for g in leaves(grad))
    assert isinstance(value, da.Array)
    value, grad = dask.compute(value, grad)
    np.testing.assert_allclose(value, expected_value, rtol=1e-12)
    for got, want in zip(leaves(grad), leaves(expected_grad), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_numpy_weights_with_dask_data_give_a_lazy_gradient():
    w, X, y = CASES[logistic_regression]
    expected = ad.grad(logistic_regression)(w, X, y)
    grad = ad.grad(logistic_regression)(w, chunked(X), chunked(y))
    assert isinstance(grad, da.Array)
    np.testing.assert_allclose(grad.compute(), expected, rtol=1e-10)


def test_gradients_w_r_t_several_arguments_and_the_plain_call():
    w, X, y = CASES[logistic_regression]
    expected = ad.grad(logistic_regression, argnums=(0, 1))(w, X, y)
    grads = ad.grad(logistic_regression, argnums=(0, 1))(chunked(w), chunked(X), chunked(y))
    for got, want in zip(dask.compute(*grads), expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-10)
    value = ad.script(logistic_regression)(chunked(w), chunked(X), chunked(y))
    assert isinstance(value, da.Array)
    np.testing.assert_allclose(value.compute(), logistic_regression(w, X, y), rtol=1e-12)


def test_numpy_and_dask_calls_compile_apart():
    w, X, y = CASES[logistic_regression]
    grad = ad.grad(logistic_regression)
    assert type(grad(w, X, y)) is np.ndarray
    assert isinstance(grad(chunked(w), chunked(X), chunked(y)), da.Array)
    assert type(grad(w, X, y)) is np.ndarray


def test_a_gradient_on_a_local_cluster():
    distributed = pytest.importorskip("distributed")
    w, X, y = CASES[logistic_regression]
    expected = ad.grad(logistic_regression)(w, X, y)
    with (
        distributed.LocalCluster(
            n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster),
    ):
        value, grad = ad.value_and_grad(logistic_regression)(w, chunked(X), chunked(y))
        value, grad = dask.compute(value, grad)
    np.testing.assert_allclose(grad, expected, rtol=1e-10)
    np.testing.assert_allclose(value, logistic_regression(w, X, y), rtol=1e-12)


def test_an_operator_without_a_dask_kernel_is_refused_where_it_is_written():
    scipy_linalg = pytest.importorskip("scipy.linalg")

    def uses_expm(w):
        return np.sum(scipy_linalg.expm(np.outer(w, w)))

    with pytest.raises(BackendError) as error:
        ad.grad(uses_expm)(chunked(np.arange(6.0)))
    message = str(error.value)
    assert "aten::scipy_expm has no implementation on the dask backend" in message
    assert "test_dask_backend.py:" in message
    assert "scipy_linalg.expm(np.outer(w, w))" in message


def test_a_write_to_a_dask_argument_is_refused():
    def writes_argument(x):
        x[0] = 1.0
        return np.sum(x)

    with pytest.raises(BackendError, match=r"prim::WriteBack.*dask"):
        ad.grad(writes_argument)(chunked(np.arange(6.0)))


def test_compute_true_gives_computed_value_and_gradients():
    w, X, y = CASES[logistic_regression]
    expected_value, expected_grad = ad.value_and_grad(logistic_regression)(w, X, y)
    value, grad = ad.value_and_grad(logistic_regression, compute=True)(
        chunked(w), chunked(X), chunked(y)
    )
    assert isinstance(grad, np.ndarray)
    np.testing.assert_allclose(value, expected_value, rtol=1e-12)
    np.testing.assert_allclose(grad, expected_grad, rtol=1e-10)


def test_taps_on_dask_are_refused_where_written():
    """Retained taps hand NumPy hook code the gradient (Note [Backend runs refuse
    instrumentation] in autodiff.runtime); vjp, Jacobians and Hessians run:
    tests/backends/test_backend_apis.py."""

    def layer(w, X):
        return np.sum(ad.tap(np.tanh(X @ w), "h"))

    w, X, _ = CASES[logistic_regression]
    with pytest.raises(BackendError, match=r"_tap_hooked.*dask") as error:
        ad.grad(layer, retain="h")(chunked(w), chunked(X))
    assert "test_dask_backend.py:" in str(error.value)


def test_anomaly_mode_on_dask_is_refused():
    w, X, y = CASES[logistic_regression]
    with ad.detect_anomaly(), pytest.raises(BackendError, match="anomaly mode"):
        ad.grad(logistic_regression)(chunked(w), chunked(X), chunked(y))


def test_value_and_gradients_computed_together_read_each_block_once():
    """``f`` and ``df`` build one task graph (Note [Lazy gradients]): the data blocks ``df``
    reads again (``X`` in ``X.T @ g``) are the tasks ``f`` read, computed once."""
    w, X, y = CASES[logistic_regression]
    loads: collections.Counter[tuple[int, ...]] = collections.Counter()

    def load(block, block_info=None):
        if block_info is not None:
            loads[tuple(block_info[0]["chunk-location"])] += 1
        return block

    data = chunked(X).map_blocks(load, dtype=X.dtype, meta=np.empty((0, 0)))
    value, grad = ad.value_and_grad(logistic_regression)(w, data, chunked(y))
    value, grad = dask.compute(value, grad, scheduler="synchronous")
    blocks = data.numblocks[0] * data.numblocks[1]
    assert len(loads) == blocks
    assert set(loads.values()) == {1}
    np.testing.assert_allclose(grad, ad.grad(logistic_regression)(w, X, y), rtol=1e-10)
