"""Second derivatives through ``np.fft`` and complex intermediates (Note [Complex gradients] in
`autodiff.formulas`): Hessians against central finite differences of the compiled gradient."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import autodiff as ad

EPS = 1e-6
RTOL = 1e-6  # of max(|numeric|, 1)


def power_spectrum(x):
    return np.sum(np.abs(np.fft.rfft(x)) ** 2)


def cubed_real_part(x):
    return np.sum(np.real(np.fft.fft(x, 7)) ** 3)


def imaginary_and_round_trip(x):
    z = np.fft.fft2(x, norm="ortho")
    spectrum = np.fft.rfft(x)
    round_trip = np.fft.irfft(spectrum * np.conj(spectrum))
    return np.sum(np.imag(z) ** 2 * np.real(z)) + np.sum(round_trip**2)


def shifted_products(x):
    return np.sum(np.fft.fftshift(x) ** 3 * np.fft.ifftshift(x, axes=0))


def inverse_transforms(x):
    z = np.fft.ifftn(np.fft.fft(x, axis=0) ** 2, axes=(0,))
    return np.sum(np.abs(z) ** 3)


FUNCTIONS = [
    power_spectrum,
    cubed_real_part,
    imaginary_and_round_trip,
    shifted_products,
    inverse_transforms,
]


def numeric_hessian(fn: Callable[..., Any], x: np.ndarray) -> np.ndarray:
    gradient = ad.grad(fn)
    columns = []
    for index in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[index] = EPS
        columns.append((gradient(x + step) - gradient(x - step)) / (2 * EPS))
    return np.stack(columns, axis=-1).reshape(x.shape + x.shape)


@pytest.mark.parametrize("fn", FUNCTIONS, ids=[fn.__name__ for fn in FUNCTIONS])
def test_hessian_matches_finite_differences_of_the_gradient(fn: Callable[..., Any]) -> None:
    x = np.random.default_rng(0).standard_normal((3, 4))
    hessian = np.asarray(ad.hessian(fn)(x))
    numeric = numeric_hessian(fn, x)
    assert hessian.dtype == np.float64
    error = np.abs(hessian - numeric) / np.maximum(np.abs(numeric), 1)
    assert error.max() < RTOL, f"relative error {error.max():.2e}"
