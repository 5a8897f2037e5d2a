"""The backend mechanism is generic (Note [Array backends] in `ir.backends`): the same loss
functions on `array_api_strict` arrays, a strict Array API namespace, against NumPy; and on
CuPy when a GPU is present."""

from __future__ import annotations

import numpy as np
import pytest

import autodiff as ad
from ir.errors import BackendError
from tests.backends.backend_corpus import logistic_regression, problem

CASES = problem()


def leaves(tree):
    if isinstance(tree, list):
        return [leaf for pair in tree for leaf in pair]
    return [tree]


def convert(tree, asarray):
    if isinstance(tree, list):
        return [tuple(asarray(leaf) for leaf in pair) for pair in tree]
    return asarray(tree)


def check_against_numpy(function, asarray, to_numpy, array_type):
    args = CASES[function]
    expected_value, expected_grad = ad.value_and_grad(function)(*args)
    value, grad = ad.value_and_grad(function)(*(convert(a, asarray) for a in args))
    assert all(isinstance(g, array_type) for g in leaves(grad))
    np.testing.assert_allclose(to_numpy(value), expected_value, rtol=1e-12)
    for got, want in zip(leaves(grad), leaves(expected_grad), strict=True):
        np.testing.assert_allclose(to_numpy(got), want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("function", list(CASES), ids=lambda f: f.__name__)
def test_array_api_strict_matches_numpy(function):
    xp = pytest.importorskip("array_api_strict")
    check_against_numpy(function, xp.asarray, np.from_dlpack, type(xp.asarray(0.0)))


def test_numpy_arrays_next_to_strict_arrays_are_refused():
    xp = pytest.importorskip("array_api_strict")
    w, X, y = CASES[logistic_regression]
    with pytest.raises(BackendError, match="mix NumPy and array_api_strict"):
        ad.grad(logistic_regression)(w, xp.asarray(X), xp.asarray(y))


def test_an_operator_the_standard_lacks_is_refused_where_it_is_written():
    xp = pytest.importorskip("array_api_strict")

    special = pytest.importorskip("scipy.special")

    def uses_erf(w):
        return np.sum(special.erf(w))

    with pytest.raises(BackendError, match=r"aten::special_erf.*array_api_strict backend"):
        ad.grad(uses_erf)(xp.asarray(np.arange(3.0)))


def _gpu_present() -> bool:
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


@pytest.mark.skipif(not _gpu_present(), reason="CuPy with a GPU is not available")
@pytest.mark.parametrize("function", list(CASES), ids=lambda f: f.__name__)
def test_cupy_matches_numpy(function):
    import cupy

    check_against_numpy(function, cupy.asarray, cupy.asnumpy, cupy.ndarray)
