"""The kernels of ir/backend_kernels_*.py against NumPy where the corpora do not reach:
factorisations of stacks of matrices chunked across the matrix axes, transforms with ``n``
and ``s`` that pad or truncate, norms of every order, pads wider than a chunk, sorts of the
flattened array, SciPy's elementwise functions; values and gradients, on Dask (no conversion
to NumPy: ``__array__`` raises) and on ``array_api_strict``."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
import scipy.special
import scipy.stats

import autodiff as ad
from tests.backends.corpus_runs import OK, convert_arrays, gradient_call, outcome


def factorisations(A, b):
    sign, logdet = np.linalg.slogdet(A)
    values, vectors = np.linalg.eigh(A, UPLO="U")
    return (
        np.sum(np.linalg.inv(A) ** 2)
        + np.sum(sign * logdet)
        + np.sum(np.linalg.det(A))
        + np.sum(np.linalg.cholesky(A))
        + np.sum(values * np.arange(4.0))
        + np.sum((vectors * vectors) @ np.arange(4.0))
        + np.sum(np.linalg.solve(A, b[:, :, None]) ** 2)
        + np.sum(np.linalg.solve(A[1], b[0]) ** 3)
        + np.sum(np.linalg.svd(A, compute_uv=False))
        + np.sum(np.linalg.pinv(A[0, :, :3]) ** 2)
    )


def singular_vectors(M):
    u, s, vh = np.linalg.svd(M, full_matrices=False)
    return np.sum((u * s) @ vh * M) + np.sum(s**2)


def norms(M, v):
    return (
        np.sum(np.linalg.norm(M, axis=1))
        + np.linalg.norm(M)
        + np.linalg.norm(M, ord=1)
        + np.linalg.norm(M, ord=np.inf)
        + np.linalg.norm(v, ord=3)
        + np.sum(np.linalg.norm(M, axis=(0, 1), keepdims=True))
    )


def transforms(x, M):
    padded = np.fft.rfft(x, n=10, norm="ortho")
    truncated = np.fft.fft(x, n=4)
    back = np.fft.irfft(np.fft.rfft(x) * 2.0, n=7)
    plane = np.fft.fftn(M, s=(4, 6), axes=(0, 1))
    return (
        np.sum(np.abs(padded) ** 2)
        + np.sum(np.real(truncated) * np.imag(truncated))
        + np.sum(back**2)
        + np.sum(np.abs(plane))
    )


def pads(M):
    return (
        np.sum(np.pad(M, ((4, 1), (0, 3)), mode="reflect") * 1.5)
        + np.sum(np.pad(M, ((2, 2), (1, 5)), mode="wrap") ** 2)
        + np.sum(np.pad(M, ((3, 0), (2, 2)), mode="symmetric") ** 3)
        + np.sum(np.pad(M, 2, mode="constant", constant_values=0.5) ** 2)
    )


def sorts(M):
    flat = np.sort(M, axis=None)
    columns = np.sort(M, axis=0)
    order = np.argsort(M[:, 0])
    return (
        np.sum(flat * np.arange(flat.shape[0]))
        + np.sum(columns[-1])
        + np.sum(M[order, 1] * M[:, 1])
    )


def rearrangements(M, v):
    return (
        np.sum(np.repeat(v, 2) * np.arange(12.0))
        + np.sum(np.tile(v, (2, 1)) ** 2)
        + np.sum(np.array_split(M, 3, axis=1)[2] ** 2)
        + np.sum(np.roll(M, 2, axis=0) * M)
        + np.trace(M[:, :5], offset=1)
        + np.sum(np.diag(v[:5], k=-1) @ np.diag(v))
        + np.sum(np.kron(v[:2], M[:2, :2]) ** 2)
        + np.sum(np.outer(v, v[:3]))
    )


def log_sum_exp(M):
    return (
        np.sum(scipy.special.logsumexp(M, axis=1))
        + scipy.special.logsumexp(M * 2.0, b=0.5)
        + np.sum(scipy.special.logsumexp(M, axis=0, keepdims=True) ** 2)
    )


def special_functions(x, y):
    return np.sum(
        scipy.special.gammaln(x + 1.0)
        + scipy.stats.t.logpdf(y, 3.0, 0.5, 2.0)
        + scipy.special.expit(y) * np.log10(x)
        + np.arctan2(x, y)
    )


def scans_and_joins(x, M):
    cleaned = np.nan_to_num(np.log(np.abs(x) - 0.5))
    joined = np.column_stack([x[:5], M[:, 0]])
    rows = np.hstack([x, M[0]])
    return (
        np.sum(np.diff(x, n=2) ** 2)
        + np.sum(np.cumsum(M, axis=1) * M)
        + np.sum(np.round(M, 2) * M)
        + np.sum(cleaned * x)
        + np.sum(joined**2)
        + np.sum(rows * np.arange(12.0))
        + np.sum(M.flatten() ** 3)
        + np.sum(np.where(np.all(M > -5.0, axis=1), 1.0, 0.0))
        + np.sum(np.angle(x + 0j) * x)
    )


def triangular_solves(A, b, B):
    L = np.tril(A) + 4.0 * np.eye(4)
    lower = scipy.linalg.solve_triangular(L, b, lower=True)
    S = A @ A.T + 4.0 * np.eye(4)
    return (
        np.sum(lower**2)
        + np.sum(scipy.linalg.solve_triangular(L.T, B, trans=1) ** 3)
        + np.sum(scipy.linalg.solve(S, b, assume_a="pos") ** 2)
        + np.sum(scipy.linalg.solve(A + 3.0 * np.eye(4), B) ** 3)
        + np.sum(scipy.linalg.solve(np.triu(A) + 4.0 * np.eye(4), b, assume_a="upper triangular"))
    )


def _spd(rng):
    B = rng.standard_normal((3, 4, 4))
    return B @ np.swapaxes(B, 1, 2) + 4 * np.eye(4)


CASES = {
    factorisations: lambda rng: (_spd(rng), rng.standard_normal((3, 4))),
    singular_vectors: lambda rng: (rng.standard_normal((6, 4)),),
    norms: lambda rng: (rng.standard_normal((5, 6)), rng.standard_normal(7)),
    transforms: lambda rng: (rng.standard_normal(6), rng.standard_normal((3, 5))),
    pads: lambda rng: (rng.standard_normal((4, 2)),),
    sorts: lambda rng: (rng.standard_normal((5, 4)),),
    rearrangements: lambda rng: (rng.standard_normal((6, 6)), rng.standard_normal(6)),
    special_functions: lambda rng: (rng.random(6) + 0.5, rng.standard_normal(6)),
    log_sum_exp: lambda rng: (rng.standard_normal((5, 6)),),
    triangular_solves: lambda rng: (
        rng.standard_normal((4, 4)),
        rng.standard_normal(4),
        rng.standard_normal((4, 3)),
    ),
    scans_and_joins: lambda rng: (rng.standard_normal(6), rng.standard_normal((5, 6))),
}


def _dask(monkeypatch):
    dask = pytest.importorskip("dask")
    da = pytest.importorskip("dask.array")
    pytest.importorskip("array_api_compat")

    def refuse(self, *args, **kwargs):
        raise AssertionError("a Dask array was converted to NumPy")

    monkeypatch.setattr(da.Array, "__array__", refuse)

    def convert(args):  # chunks of 1 and 2: every factorised, transformed or padded axis split
        return [da.from_array(a, chunks=tuple(min(2, n) for n in a.shape)) for a in args]

    def to_numpy(value):
        (computed,) = dask.compute(value)
        return np.asarray(computed)

    return convert, to_numpy


def _strict(monkeypatch):
    xp = pytest.importorskip("array_api_strict")
    return (lambda args: convert_arrays(args, xp.asarray)), np.from_dlpack


@pytest.mark.parametrize("backend", [_dask, _strict], ids=["dask", "array_api_strict"])
@pytest.mark.parametrize("function", list(CASES), ids=lambda f: f.__name__)
def test_values_and_gradients_match_numpy(backend, function, monkeypatch):
    if backend is _strict and function in (special_functions, triangular_solves):
        pytest.skip("SciPy's functions have no Array API kernel: refused, as the corpus tests")
    convert, to_numpy = backend(monkeypatch)
    args = CASES[function](np.random.default_rng(0))

    class Case:
        fn = staticmethod(function)

    expected, run = gradient_call(Case, args)
    assert outcome(run, expected, convert(args), to_numpy) == OK


def test_dask_results_stay_lazy(monkeypatch):
    """Building the graphs of a factorisation, a transform, a sort and a scatter-add on Dask
    gives Dask arrays, computed only by dask.compute."""
    da = pytest.importorskip("dask.array")
    convert, _ = _dask(monkeypatch)
    A, b = CASES[factorisations](np.random.default_rng(1))
    value, grads = ad.value_and_grad(factorisations, argnums=(0, 1))(*convert((A, b)))
    assert isinstance(value, da.Array)
    assert all(isinstance(g, da.Array) for g in grads)


def real_transforms(M):
    back = np.fft.irfftn(np.fft.rfftn(M) * 2.0, s=M.shape, axes=(0, 1))
    return back + np.sum(np.abs(np.fft.rfft2(M, s=(4, 8)))[:, :3])


@pytest.mark.parametrize("backend", [_dask, _strict], ids=["dask", "array_api_strict"])
def test_real_transforms_of_several_axes_match_numpy(backend, monkeypatch):
    """rfftn and irfftn run (their gradients have no backend kernel yet: refused)."""
    convert, to_numpy = backend(monkeypatch)
    M = np.random.default_rng(2).standard_normal((4, 6))
    got = to_numpy(ad.script(real_transforms)(*convert((M,))))
    np.testing.assert_allclose(got, real_transforms(M), rtol=1e-12, atol=1e-12)
