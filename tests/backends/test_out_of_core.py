"""The out-of-core path of benchmarks/out_of_core.py at small size, on a
``LocalCluster(processes=False)``: lazily generated data, the logistic regression and the MLP
trained for a few steps, their Dask gradients equal to NumPy's on the same rows computed; and,
where dask-glm is installed (it is not in CI), our logistic-regression value, gradient and
Hessian against its hand-written ones."""

from __future__ import annotations

import numpy as np
import pytest

import autodiff as ad
from benchmarks import out_of_core

dask = pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")
pytest.importorskip("array_api_compat")


@pytest.fixture(scope="module")
def client():
    with (
        distributed.LocalCluster(
            n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client


MODELS = {
    "logistic": (out_of_core.logistic_loss, lambda d: np.full(d, 0.05)),
    "mlp": (out_of_core.mlp_loss, lambda d: out_of_core.mlp_parameters(d, 8, seed=2)),
}


@pytest.mark.parametrize("model", list(MODELS))
def test_gradients_on_lazily_generated_data_match_numpy(client, model):
    loss, parameters = MODELS[model]
    X, y = out_of_core.lazy_data(3_000, 10, 700, model)  # chunks that split the rows unevenly
    params = parameters(10)
    value, grads = ad.value_and_grad(loss, compute=True)(params, X, y)
    expected_value, expected = ad.value_and_grad(loss)(params, *dask.compute(X, y))
    np.testing.assert_allclose(value, expected_value, rtol=1e-12)
    for got, want in zip(
        grads if isinstance(grads, tuple) else [grads],
        expected if isinstance(expected, tuple) else [expected],
        strict=True,
    ):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("model", list(MODELS))
def test_training_steps_lower_the_loss(client, model, capsys):
    loss, parameters = MODELS[model]
    X, y = out_of_core.lazy_data(3_000, 10, 700, model)
    out_of_core.train(loss, parameters(10), X, y, steps=3, rate=0.5, sample=700)
    printed = capsys.readouterr().out
    assert "Dask vs NumPy: max abs difference 0.0e+00" in printed
    losses = [
        float(line.split("loss ")[1].split(",")[0])
        for line in printed.splitlines()
        if line.startswith("step")
    ]
    assert len(losses) == 3
    assert losses[2] < losses[0]


def test_our_logistic_regression_matches_dask_glm(client):
    families = pytest.importorskip("dask_glm.families")
    X, y = out_of_core.lazy_data(3_000, 10, 700, "logistic")
    w = np.random.default_rng(4).standard_normal(10) * 0.1
    n = X.shape[0]
    Logistic = families.Logistic
    value, grad = dask.compute(*ad.value_and_grad(out_of_core.logistic_loss)(w, X, y))
    hessian = dask.compute(ad.hessian(out_of_core.logistic_loss)(w, X, y))[0]
    their_value, their_grad, their_hessian = dask.compute(
        Logistic.pointwise_loss(w, X, y),
        Logistic.pointwise_gradient(w, X, y),
        Logistic.hessian(X.dot(w), X),
    )
    np.testing.assert_allclose(value, their_value / n, rtol=1e-12)
    np.testing.assert_allclose(grad, their_grad / n, rtol=1e-10, atol=1e-15)
    np.testing.assert_allclose(hessian, their_hessian / n, rtol=1e-10, atol=1e-15)
