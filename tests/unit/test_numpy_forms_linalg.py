"""NumPy forms added for issue 19 among products, linear algebra and transforms (cross with
axes, einsum with ``...`` and sublists, np.gradient, eigh of the upper triangle, eig, the real
transforms over several axes and ``s=``) and the second order of norm, svd and the split
family, end to end through `ad.grad` and `ad.hessian` (`tests.numpy_form_checks`)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import autodiff as ad
from tests.numpy_form_checks import check

RNG = np.random.default_rng(23)
X = RNG.standard_normal(3)
Y = RNG.standard_normal(3)
M = RNG.standard_normal((3, 4))
N = RNG.standard_normal((3, 4))

# ---- np.cross with axes ----------------------------------------------------------------------


def cross_of_columns(a, b):
    return np.sum(np.cross(a, b, axisa=0, axisb=0, axisc=0) ** 2 * np.arange(1.0, 4.0)[:, None])


def cross_along_one_axis(a, b):
    return np.sum(np.sin(np.cross(a, b[:, :1], axis=0)))


def cross_of_mixed_axes(a, b):
    return np.sum(np.cross(a.T, b, axisa=-1, axisb=0, axisc=1) ** 3)


@pytest.mark.parametrize(
    ("fn", "args"),
    [
        (cross_of_columns, (M[:, :2], N[:, :2])),
        (cross_along_one_axis, (M, N)),
        (cross_of_mixed_axes, (M[:, :2], N[:, :2])),
    ],
)
def test_cross_with_axes(fn: Callable[..., Any], args: Any) -> None:
    check(fn, *args, wrt=(0, 1))


# ---- np.einsum: ellipsis and the sublist form -------------------------------------------------

CUBE = RNG.standard_normal((2, 3, 3))
SQUARE = RNG.standard_normal((3, 3))


def einsum_batched_products(a, b):
    return np.sum(np.einsum("...ij,...jk->...ik", a, b) ** 2)


def einsum_implicit_ellipsis(a, b):
    return np.sum(np.sin(np.einsum("i...,i...", a, b)))


def einsum_trace_of_ellipsis(a):
    return np.sum(np.einsum("...ii->...i", a) ** 3) + np.einsum("...", a[0, 0]) @ a[1, 1]


def einsum_sublists(a, b):
    return np.sum(np.einsum(a, [0, 1, 2], b, [2, 3], [0, 1, 3]) ** 2)


def einsum_sublists_implicit_and_ellipsis(a, b):
    return np.sum(np.einsum(a, [..., 1, 2], b, (2, 1)) ** 2) + np.sum(np.einsum(b, [5, 0]) * b)


@pytest.mark.parametrize(
    ("fn", "args"),
    [
        (einsum_batched_products, (CUBE, SQUARE)),
        (einsum_implicit_ellipsis, (SQUARE[:2], CUBE)),
        (einsum_trace_of_ellipsis, (CUBE,)),
        (einsum_sublists, (CUBE, SQUARE)),
        (einsum_sublists_implicit_and_ellipsis, (CUBE, SQUARE)),
    ],
)
def test_einsum_forms(fn: Callable[..., Any], args: Any) -> None:
    check(fn, *args, wrt=tuple(range(len(args))))


def einsum_sublist_of_a_variable(a, n: int):
    return np.einsum(a, [0, n])


def test_a_sublist_must_be_written_in_the_call() -> None:
    with pytest.raises(ad.AutodiffError, match=re.escape("a sublist of np.einsum must be written")):
        ad.script(einsum_sublist_of_a_variable)(SQUARE, 1)


# ---- eigh of the upper triangle --------------------------------------------------------------


def eigh_of_upper(a):
    w, v = np.linalg.eigh(a, UPLO="U")
    return np.sum(w**3) + np.sum(v[0] ** 2 * w)


def eigh_of_lower(a):
    w, v = np.linalg.eigh(a, "L")
    return np.sum(np.sin(w)) + np.sum(v[1] ** 2 * w)


@pytest.mark.parametrize("fn", [eigh_of_upper, eigh_of_lower])
def test_eigh_reads_the_triangle_it_is_told(fn: Callable[..., Any]) -> None:
    # Not symmetric: each triangle gives another matrix, and finite differences see which.
    a = np.diag([1.0, 2.5, 4.0]) + 0.3 * RNG.standard_normal((3, 3))
    check(fn, a)


# ---- np.gradient -----------------------------------------------------------------------------


def gradient_of_vector(x):
    return np.sum(np.gradient(x**2) ** 2 * np.arange(1.0, 5.0))


def gradient_second_order_edges(x):
    return np.sum(np.sin(np.gradient(x * x, 0.5, edge_order=2)))


def gradient_of_matrix(m):
    rows, cols = np.gradient(m**2, 2.0, 0.5)
    return np.sum(rows**2) + np.sum(np.cos(cols) * m)


def gradient_along_one_axis(m):
    return np.sum(np.gradient(np.exp(m), axis=-1, edge_order=2) ** 2)


def gradient_along_axes(m):
    across, down = np.gradient(m**3, 0.25, axis=(1, 0))
    return np.sum(across * down)


@pytest.mark.parametrize(
    ("fn", "args"),
    [
        (gradient_of_vector, (np.append(X, 0.4),)),
        (gradient_second_order_edges, (np.append(X, 0.4),)),
        (gradient_of_matrix, (M,)),
        (gradient_along_one_axis, (M,)),
        (gradient_along_axes, (M,)),
    ],
)
def test_gradient(fn: Callable[..., Any], args: Any) -> None:
    check(fn, *args)


# Unevenly spaced samples: the coordinates of each axis as a 1-D array.
TIMES = np.array([0.0, 0.4, 1.1, 1.5])
HEIGHTS = np.array([0.0, 1.0, 2.5])


def gradient_at_coordinates(x):
    return np.sum(np.gradient(x**2, TIMES) ** 2 * np.arange(1.0, 5.0))


def gradient_at_coordinates_per_axis(m):
    down, across = np.gradient(np.sin(m), HEIGHTS, TIMES, edge_order=2)
    _, backwards = np.gradient(m, 0.5, TIMES[::-1], axis=(0, 1))
    return np.sum(down * across) + np.sum(backwards**2)


@pytest.mark.parametrize(
    ("fn", "args"),
    [(gradient_at_coordinates, (np.append(X, 0.4),)), (gradient_at_coordinates_per_axis, (M,))],
)
def test_gradient_with_coordinate_arrays(fn: Callable[..., Any], args: Any) -> None:
    check(fn, *args)


def gradient_with_coordinates(x, at):
    return np.gradient(x, at)


def test_gradient_refuses_mismatched_or_complex_coordinates() -> None:
    with pytest.raises(ad.AutodiffError, match="distances must match the length"):
        ad.script(gradient_with_coordinates)(X, np.cumsum(Y**2)[:2])
    with pytest.raises(ad.AutodiffError, match="real coordinates"):
        ad.script(gradient_with_coordinates)(X, np.arange(3.0) + 1j)


# ---- real transforms over several axes, with s= -------------------------------------------------


def rfftn_power(m):
    return np.sum(np.abs(np.fft.rfftn(m * m)) ** 2)


def rfft2_padded(m):
    return np.sum(np.abs(np.fft.rfft2(np.sin(m), s=(4, 6), norm="ortho")) ** 2)


def irfftn_round_trip(m):
    spectrum = np.fft.rfftn(m, axes=(0, 1))
    return np.sum(np.fft.irfftn(spectrum * spectrum, s=m.shape, axes=(0, 1)) ** 2)


def irfft2_of_spectrum(m):
    return np.sum(np.cos(np.fft.irfft2(np.fft.rfft2(m) * 0.5, s=(5, 3))))


@pytest.mark.parametrize("fn", [rfftn_power, rfft2_padded, irfftn_round_trip, irfft2_of_spectrum])
def test_real_transforms_over_several_axes(fn: Callable[..., Any]) -> None:
    check(fn, M)


def fftn_padded(m):
    return np.sum(
        np.abs(np.fft.fftn(m, s=(4, 6), axes=(0, 1))) ** 2 * np.arange(24.0).reshape(4, 6)
    )


def ifft2_truncated(m):
    return np.sum(np.real(np.fft.ifft2(m * m, s=(2, 3), norm="ortho")) ** 3)


def fftn_on_some_axes(m):
    return np.sum(np.imag(np.fft.fftn(np.sin(m), s=[5], axes=[0])) ** 2)


@pytest.mark.parametrize("fn", [fftn_padded, ifft2_truncated, fftn_on_some_axes])
def test_complex_transforms_with_s(fn: Callable[..., Any]) -> None:
    check(fn, M)


# ---- already supported, checked here: matrix norms, svd and split at second order ----------------


def nuclear_norm(m):
    return np.linalg.norm(m, "nuc")


def spectral_norm(m):
    return np.linalg.norm(m * m, 2)


def smallest_singular_value(m):
    return np.linalg.norm(m, -2) ** 2


def frobenius_and_batched_norms(m):
    return np.linalg.norm(m) + np.sum(
        np.linalg.norm(m[None] * m[:, :, None][:, :1], ord="nuc", axis=(1, 2))
    )


def singular_values(m):
    return np.sum(np.linalg.svd(m, compute_uv=False) ** 3)


def singular_vectors(m):
    u, s, vt = np.linalg.svd(m, full_matrices=False)
    return np.sum(s**2) + np.sum((u[:, 0] * u[:, 1]) ** 2) + np.sum(vt[0] ** 4)


def full_singular_vectors(m):
    # The default full_matrices=True: u is 3x3 and vh 4x4, of which the loss reads the
    # first min(m, n) = 3 rows of vh only.
    u, s, vh = np.linalg.svd(m)
    return np.sum(s**2) + np.sum((u[:, 0] * u[:, 1]) ** 2) + np.sum(vh[:3] ** 4)


def square_singular_vectors(m):
    u, s, vh = np.linalg.svd(m[:, :3] + 3.0 * np.eye(3))
    return np.sum(np.abs(u) ** 3) + np.sum(vh[1] ** 4) + np.sum(np.log(s))


def split_parts(x):
    a, b, c = np.split(x, 3)
    return np.sum(a**2 * b) + np.sum(np.sin(c) * a)


def split_list_items(m):
    parts = np.array_split(m, 2, axis=1)
    rows = np.vsplit(m, 3)
    return np.sum(parts[0] ** 2 * parts[1]) + np.sum(rows[2] ** 3) + np.sum(np.hsplit(m, 4)[3] * m)


@pytest.mark.parametrize(
    ("fn", "args"),
    [
        (nuclear_norm, (M,)),
        (spectral_norm, (M,)),
        (smallest_singular_value, (M,)),
        (frobenius_and_batched_norms, (M,)),
        (singular_values, (M,)),
        (singular_vectors, (M,)),
        (full_singular_vectors, (M,)),
        (square_singular_vectors, (M,)),
        (split_parts, (np.append(X, Y * 2.0)[:6],)),
        (split_list_items, (RNG.standard_normal((3, 4)),)),
    ],
)
def test_second_order_of_norms_svd_and_splits(fn: Callable[..., Any], args: Any) -> None:
    check(fn, *args)


def reads_the_arbitrary_columns(m):
    _, _, vh = np.linalg.svd(m)
    return np.sum(vh[3] ** 2 * np.arange(4.0))


def test_svd_refuses_a_gradient_of_the_columns_past_min_m_n() -> None:
    """Row 3 of a 4x4 vh spans the null space of a 3x4 matrix: any unit vector there will do, so
    a loss reading it has no gradient, at first order as at second."""
    with pytest.raises(ad.AutodiffError, match="full_matrices=False"):
        ad.grad(reads_the_arbitrary_columns)(M)
    with pytest.raises(ad.AutodiffError, match="full_matrices=False"):
        ad.hessian(reads_the_arbitrary_columns)(M)


# ---- np.linalg.eig -----------------------------------------------------------------------------

# Distinct eigenvalues, two of them a complex pair.
GENERAL = np.array([[1.0, 2.0, 0.3], [-1.5, 0.5, 0.2], [0.4, -0.1, 3.0]])


def eigenvalues(a):
    w, _ = np.linalg.eig(a)
    return np.sum(np.real(w) ** 2 + np.imag(w) ** 3)


def eigenvector_magnitudes(a):
    # |v_ik| does not depend on the phase NumPy picks for each eigenvector.
    w, v = np.linalg.eig(a)
    return np.sum(np.abs(v) ** 2 * np.arange(9.0).reshape(3, 3)) + np.sum(np.abs(w))


@pytest.mark.parametrize("fn", [eigenvalues, eigenvector_magnitudes])
def test_eig_has_complex_results_and_gradients(fn: Callable[..., Any]) -> None:
    check(fn, GENERAL)


def eig_values_only(a):
    return np.linalg.eig(a)[0]


def test_eig_is_complex_even_when_the_eigenvalues_are_real() -> None:
    values = ad.script(eig_values_only)(np.diag([1.0, 2.0]))
    assert values.dtype == np.complex128
    np.testing.assert_allclose(values, [1.0, 2.0])


# ---- JAX, where installed: an optional cross-check --------------------------------------------


def test_gradients_agree_with_jax() -> None:
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    jax.config.update("jax_enable_x64", True)
    twins = [
        (
            cross_of_mixed_axes,
            lambda a, b: jnp.sum(jnp.cross(a.T, b, axisa=-1, axisb=0, axisc=1) ** 3),
            (M[:, :2], N[:, :2]),
        ),
        (
            rfft2_padded,
            lambda m: jnp.sum(jnp.abs(jnp.fft.rfft2(jnp.sin(m), s=(4, 6), norm="ortho")) ** 2),
            (M,),
        ),
        (
            einsum_batched_products,
            lambda a, b: jnp.sum(jnp.einsum("...ij,...jk->...ik", a, b) ** 2),
            (CUBE, SQUARE),
        ),
    ]
    for ours, theirs, args in twins:
        for i in range(len(args)):
            expected = jax.grad(theirs, argnums=i)(*args)
            np.testing.assert_allclose(ad.grad(ours, argnums=i)(*args), expected, rtol=1e-9)
