"""``ad.vjp``, ``jacobian``/``jacrev``/``jacfwd``, ``hessian``, ``jvp`` and ``hvp`` on Dask and
``array_api_strict`` arrays, against the same calls on NumPy (Note [Jacobians on backends] in
`autodiff.jacobians`): results are the backend's arrays, lazy on Dask, and nothing is
converted to NumPy on the way. What stays refused on a backend (taps, anomaly mode, the
profiler, saved-value hooks) is refused with a BackendError at the function's result."""

from __future__ import annotations

import collections

import numpy as np
import pytest

import autodiff as ad
from autodiff import jacobians
from ir.errors import BackendError

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
pytest.importorskip("array_api_compat")
xs = pytest.importorskip("array_api_strict")


@pytest.fixture(autouse=True)
def no_conversion_to_numpy(monkeypatch):
    """np.asarray of a Dask array anywhere in a call fails the test: it would compute it."""

    def refuse(self, *args, **kwargs):
        raise AssertionError("a Dask array was converted to NumPy")

    monkeypatch.setattr(da.Array, "__array__", refuse)


def logistic_loss(w, X, y):
    p = 1 / (1 + np.exp(-(X @ w)))
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))


def predictions(w, X):
    return np.tanh(X @ w)


def feature_responses(w, X):
    """One output per feature of Dask data: the small Jacobian the common case asks for."""
    return X.T @ np.tanh(X @ w) / X.shape[0]


RNG = np.random.default_rng(7)
X = RNG.standard_normal((12, 5))
Y = (RNG.random(12) > 0.5) * 1.0
W = RNG.standard_normal(5) * 0.3
V = RNG.standard_normal(5)


def on_dask(a):
    """Chunks of about a third of every axis, so that boundaries cross what is reduced."""
    return da.from_array(a, chunks=tuple(max(1, n // 3) for n in a.shape))


def data_on(backend: str, *arrays):
    if backend == "dask":
        return tuple(on_dask(a) for a in arrays)
    return tuple(xs.asarray(a) for a in arrays)


def weights_on(backend: str, w):
    """Dask mixes with NumPy, so a NumPy weight vector stays one (the common case); a strict
    namespace does not, so the weights are its arrays too."""
    return w if backend == "dask" else xs.asarray(w)


def as_numpy(value, backend: str):
    if isinstance(value, tuple):
        return tuple(as_numpy(v, backend) for v in value)
    if backend == "dask":
        assert isinstance(value, da.Array), type(value)
        return computed(value)
    assert isinstance(value, xs._array_object.Array), type(value)
    return np.asarray(value)


def computed(value):
    (result,) = dask.compute(value)
    return result


BACKENDS = ["dask", "array_api_strict"]

# (name, call, arguments): each call on NumPy arrays, then on the backend's
CALLS = [
    ("jacobian", lambda w, X, y, v: ad.jacobian(feature_responses)(w, X)),
    ("jacrev", lambda w, X, y, v: ad.jacrev(predictions)(w, X)),
    ("jacfwd", lambda w, X, y, v: ad.jacfwd(predictions)(w, X)),
    ("hessian", lambda w, X, y, v: ad.hessian(logistic_loss)(w, X, y)),
    ("jacobian of grad", lambda w, X, y, v: ad.jacobian(ad.grad(logistic_loss))(w, X, y)),
    ("jacfwd of grad", lambda w, X, y, v: ad.jacfwd(ad.grad(logistic_loss))(w, X, y)),
    ("hvp", lambda w, X, y, v: ad.hvp(logistic_loss)(w, X, y, v)),
    ("jvp", lambda w, X, y, v: ad.jvp(predictions, (w, X), (v, None))),
    ("hessian w.r.t. w and X", lambda w, X, y, v: ad.hessian(logistic_loss, (0, 2))(w, X, y)),
]


@pytest.mark.parametrize(
    ("backend", "call"),
    [
        pytest.param(backend, call, id=f"{name}-{backend}")
        for name, call in CALLS
        for backend in BACKENDS
    ],
)
def test_a_derivative_on_a_backend_matches_numpy(backend, call):
    expected = call(W, X, Y, V)
    Xb, Yb = data_on(backend, X, Y)
    got = call(weights_on(backend, W), Xb, Yb, weights_on(backend, V))
    flat_got = _flatten(got)
    flat_expected = _flatten(expected)
    assert len(flat_got) == len(flat_expected)
    for g, e in zip(flat_got, flat_expected, strict=True):
        np.testing.assert_allclose(as_numpy(g, backend), e, rtol=1e-10, atol=1e-12)


def _flatten(value):
    if isinstance(value, tuple):
        return [leaf for part in value for leaf in _flatten(part)]
    return [value]


@pytest.mark.parametrize("backend", BACKENDS)
def test_vjp_on_a_backend_matches_numpy_with_numpy_and_backend_cotangents(backend):
    out, vjp_fn = ad.vjp(predictions, W, X)
    cotangent = RNG.standard_normal(out.shape)
    expected = vjp_fn(cotangent)
    (Xb,) = data_on(backend, X)
    out_b, vjp_b = ad.vjp(predictions, weights_on(backend, W), Xb)
    np.testing.assert_allclose(as_numpy(out_b, backend), out, rtol=1e-12)
    (cotangent_b,) = data_on(backend, cotangent)
    for seed in [cotangent_b, cotangent] if backend == "dask" else [cotangent_b]:
        for got, want in zip(vjp_b(seed), expected, strict=True):
            np.testing.assert_allclose(as_numpy(got, backend), want, rtol=1e-10, atol=1e-12)
    # a second cotangent: the forward run is kept (retained), as on NumPy
    for got, want in zip(vjp_b(cotangent_b), expected, strict=True):
        np.testing.assert_allclose(as_numpy(got, backend), want, rtol=1e-10, atol=1e-12)


def test_a_gradient_that_is_zero_is_zeros_of_the_backend():
    def ignores_w(w, X):
        return np.sin(X) * 2.0

    _, vjp_fn = ad.vjp(ignores_w, W, on_dask(X))
    dw, dX = vjp_fn(np.ones(X.shape))
    assert isinstance(dw, da.Array)
    np.testing.assert_array_equal(computed(dw), np.zeros(5))
    np.testing.assert_allclose(computed(dX), 2.0 * np.cos(X), rtol=1e-12)


def test_a_jacobian_on_dask_is_one_lazy_graph_reading_the_data_once():
    """The rows of a Jacobian (and a Hessian's) are vjps of one forward run: computing the
    result reads each block of the data once."""
    loads: collections.Counter[tuple[int, ...]] = collections.Counter()

    def load(block, block_info=None):
        if block_info is not None:
            loads[tuple(block_info[0]["chunk-location"])] += 1
        return block

    data = on_dask(X).map_blocks(load, dtype=X.dtype, meta=np.empty((0, 0)))
    hessian = ad.hessian(logistic_loss)(W, data, on_dask(Y))
    assert isinstance(hessian, da.Array)
    (result,) = dask.compute(hessian, scheduler="synchronous")
    assert len(loads) == data.numblocks[0] * data.numblocks[1]
    assert set(loads.values()) == {1}
    np.testing.assert_allclose(result, ad.hessian(logistic_loss)(W, X, Y), rtol=1e-10)


def test_a_reverse_jacobian_as_long_as_the_data_is_refused_on_dask(monkeypatch):
    monkeypatch.setattr(jacobians, "DASK_JACOBIAN_ROWS", 6)
    with pytest.raises(BackendError, match=r"one vjp per element.*ad\.jacfwd"):
        ad.jacobian(predictions)(W, on_dask(X))
    # five rows are fine
    assert isinstance(ad.jacobian(feature_responses)(W, on_dask(X)), da.Array)


def test_a_jacobian_of_a_result_of_unknown_length_is_refused():
    def selected_predictions(w, X):
        return np.tanh(X[X[:, 0] > 0] @ w)  # as many rows as are selected: known once computed

    with pytest.raises(BackendError, match=r"one vjp per element.*known only once computed"):
        ad.jacobian(selected_predictions)(W, on_dask(X))


def tapped(w, X):
    return np.sum(ad.tap(np.tanh(X @ w), "h"))


@pytest.mark.parametrize(
    ("what", "run"),
    [
        ("_tap_hooked has no implementation", lambda w, X: ad.grad(tapped, retain="h")(w, X)),
        ("anomaly mode", lambda w, X: _inside(ad.detect_anomaly(), w, X)),
        ("anomaly mode", lambda w, X: _inside(ad.profiler(), w, X)),
        ("saved-value hooks", lambda w, X: _inside(ad.saved_value_hooks(id, id), w, X)),
    ],
    ids=["taps", "anomaly", "profiler", "saved-value-hooks"],
)
def test_instrumented_runs_on_a_backend_are_refused_at_the_result(what, run):
    with pytest.raises(BackendError, match=what) as error:
        run(W, on_dask(X))
    assert "test_backend_apis.py:" in str(error.value)


def _inside(context, w, X):
    with context:
        return ad.vjp(tapped, w, X)


def mlp_loss(params, X, y):
    W1, b1, W2, b2 = params
    h = np.tanh(X @ W1 + b1)
    return np.mean((h @ W2 + b2 - y) ** 2)


def test_an_mlp_value_and_gradients_computed_together_read_each_block_once():
    """As the logistic regression's (test_dask_backend.py): ``f`` and ``df`` of the MLP of
    benchmarks/out_of_core.py are one task graph, so that ``X @ W1`` (forward) and
    ``X.T @ dh`` (backward) read each block of X once."""
    loads: collections.Counter[tuple[int, ...]] = collections.Counter()

    def load(block, block_info=None):
        if block_info is not None:
            loads[tuple(block_info[0]["chunk-location"])] += 1
        return block

    rng = np.random.default_rng(3)
    params = (rng.standard_normal((5, 4)), rng.standard_normal(4), rng.standard_normal(4), 0.5)
    data = da.from_array(X, chunks=(4, 5)).map_blocks(load, dtype=X.dtype, meta=np.empty((0, 0)))
    value, grads = ad.value_and_grad(mlp_loss)(params, data, on_dask(Y))
    assert all(isinstance(g, da.Array) for g in grads)
    value, grads = dask.compute(value, grads, scheduler="synchronous")
    assert len(loads) == data.numblocks[0]
    assert set(loads.values()) == {1}
    expected_value, expected = ad.value_and_grad(mlp_loss)(params, X, Y)
    np.testing.assert_allclose(value, expected_value, rtol=1e-12)
    for got, want in zip(grads, expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def branch_on_a_reduction(w, X):
    h = X @ w
    if np.sum(h) > 0:
        return np.sum(h**2)
    return np.sum(np.sin(h))


@pytest.mark.parametrize("sign", [1.0, -1.0], ids=["taken", "not-taken"])
def test_an_if_on_a_reduction_of_dask_data_computes_its_condition(sign):
    """The condition is computed when the call runs, as ``if`` on a Dask array is in plain
    Dask (Note [Lazy gradients] in autodiff.backend_calls); the value and the gradient of
    the branch it chose stay lazy. Both branches, against NumPy."""
    loads: collections.Counter[tuple[int, ...]] = collections.Counter()

    def load(block, block_info=None):
        if block_info is not None:
            loads[tuple(block_info[0]["chunk-location"])] += 1
        return block

    w = sign * np.abs(W)
    rows = np.abs(X)  # every row's h has the sign of w
    data = on_dask(rows).map_blocks(load, dtype=X.dtype, meta=np.empty((0, 0)))
    value, grad = ad.value_and_grad(branch_on_a_reduction)(w, data)
    assert sum(loads.values()) > 0  # the condition was computed by the call
    assert isinstance(value, da.Array)
    assert isinstance(grad, da.Array)
    expected_value, expected = ad.value_and_grad(branch_on_a_reduction)(w, rows)
    np.testing.assert_allclose(computed(value), expected_value, rtol=1e-12)
    np.testing.assert_allclose(computed(grad), expected, rtol=1e-10)
    taken = 2 * (rows @ w) @ rows
    np.testing.assert_allclose(expected, taken if sign > 0 else np.cos(rows @ w) @ rows)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_missing_cotangent_is_zeros_of_the_backend(backend):
    """None for one output's cotangent: ``df`` gets the backend's zeros (Note [Missing vjps]
    in autodiff.runtime), made from the output's shape without computing it."""

    def two_outputs(w, X):
        h = X @ w
        return np.tanh(h), np.sum(h * h)

    (out, _), vjp_fn = ad.vjp(two_outputs, W, X)
    cotangent = RNG.standard_normal(out.shape)
    expected = vjp_fn((cotangent, None))
    (Xb, cotangent_b) = data_on(backend, X, cotangent)
    _, vjp_b = ad.vjp(two_outputs, weights_on(backend, W), Xb)
    for got, want in zip(vjp_b((cotangent_b, None)), expected, strict=True):
        np.testing.assert_allclose(as_numpy(got, backend), want, rtol=1e-10, atol=1e-12)
