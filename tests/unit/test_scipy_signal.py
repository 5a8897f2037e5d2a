"""``scipy.signal.convolve``/``correlate``/``convolve2d``/``correlate2d`` and ``np.convolve``/
``np.correlate`` in user code: found under every import alias, forward equal to SciPy and
NumPy, differentiable in both arrays (and ``fillvalue``) to first and second order, for real and
complex values, float32 kept float32, and the uses they are written for: a deconvolution, a
convolution layer, a 3-D template match. The formulas are checked one node at a time in
`tests/unit/test_formulas.py` (`tests/scipy_samples.py`, `tests/formula_samples.py`)."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import autodiff as ad
from ir.errors import ShapeError
from ir.ops.convolution import cotangent_padding, swaps_operands
from tests.scipy_samples import correlate2d_conjugates, found_padding

pytest.importorskip("scipy")
import scipy
import scipy.signal as sg
from scipy.signal import convolve, convolve2d, correlate, correlate2d

RNG = np.random.default_rng(11)


def _complex(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)


# ---- aliases, keywords, modes -------------------------------------------------------------------


def every_spelling(a, b):
    return (
        np.sum(convolve(a, b) ** 2)
        + np.sum(sg.correlate(a, b, "same", method="fft") ** 2)
        + np.sum(scipy.signal.convolve(a, b, mode="valid", method="direct"))
        + np.sum(np.sin(correlate(a, b, mode="valid")))
    )


def two_dimensional(a, b):
    return (
        np.sum(convolve2d(a, b) ** 2)
        + np.sum(sg.correlate2d(a, b, "same", "wrap") ** 2)
        + np.sum(np.cos(scipy.signal.convolve2d(a, b, mode="same", boundary="symm")))
        + np.sum(correlate2d(a, b, boundary="fill", fillvalue=0.5) ** 2)
    )


def numpy_functions(a, b):
    return (
        np.sum(np.convolve(a, b) ** 2)
        + np.sum(np.convolve(b, a, "same") ** 2)
        + np.sum(np.correlate(a, b) ** 2)
        + np.sum(np.correlate(b, a, mode="same") ** 3)
    )


CASES: list[tuple[Callable[..., Any], tuple[Any, ...]]] = [
    (every_spelling, (RNG.standard_normal((4, 5)), RNG.standard_normal((2, 3)))),
    (every_spelling, (RNG.standard_normal((2, 3)), RNG.standard_normal((3, 5)))),  # swapped
    (every_spelling, (RNG.standard_normal(7), RNG.standard_normal(3))),
    (two_dimensional, (RNG.standard_normal((4, 5)), RNG.standard_normal((3, 2)))),
    (numpy_functions, (RNG.standard_normal(6), RNG.standard_normal(4))),
]


@pytest.mark.parametrize(("fn", "args"), CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_forward_equals_scipy_and_gradients_match_central_differences(
    fn: Callable[..., Any], args: tuple[Any, ...]
) -> None:
    np.testing.assert_allclose(ad.script(fn)(*args), fn(*args), rtol=1e-12)
    assert ad.gradcheck(fn, *args).ok


@pytest.mark.parametrize(("fn", "args"), CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_second_order(fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
    gradient = ad.grad(fn, argnums=(0, 1))
    assert ad.gradcheck(gradient, *args, rtol=1e-5, atol=1e-6).ok


def test_fillvalue_is_differentiable() -> None:
    def padded_energy(image, kernel, fill):
        return np.sum(convolve2d(image, kernel, "same", fillvalue=fill) ** 2)

    image, kernel = RNG.standard_normal((4, 4)), RNG.standard_normal((3, 3))
    assert ad.gradcheck(padded_energy, image, kernel, 0.7).ok
    assert ad.gradcheck(ad.grad(padded_energy, argnums=(0, 1, 2)), image, kernel, 0.7).ok


def test_float32_stays_float32() -> None:
    a = RNG.standard_normal((4, 5)).astype(np.float32)
    b = RNG.standard_normal((2, 3)).astype(np.float32)
    grads = ad.grad(every_spelling, argnums=(0, 1))(a, b)
    assert all(g.dtype == np.float32 for g in grads)
    wide = ad.grad(every_spelling, argnums=(0, 1))(a.astype(np.float64), b.astype(np.float64))
    for narrow, exact in zip(grads, wide, strict=True):
        np.testing.assert_allclose(narrow, exact, rtol=1e-3, atol=1e-4)


# ---- complex values (Note [Complex gradients]) --------------------------------------------------


def complex_signals(z, w):
    return (
        np.sum(np.abs(correlate(z, w, "same")) ** 2)
        + np.sum(np.real(convolve(z, w)) ** 3)
        + np.sum(np.abs(correlate2d(z, w, "valid")))
        + np.sum(np.abs(np.correlate(z[0], w[0], "full")) ** 2)
    )


@pytest.mark.parametrize(
    "shapes", [((3, 4), (2, 3)), ((2, 3), (3, 4))], ids=["larger-first", "larger-second"]
)
def test_complex_values_in_the_real_and_imaginary_directions(
    shapes: tuple[tuple[int, ...], tuple[int, ...]],
) -> None:
    z, w = _complex(*shapes[0]), _complex(*shapes[1])
    np.testing.assert_allclose(ad.script(complex_signals)(z, w), complex_signals(z, w))
    assert ad.gradcheck(complex_signals, z, w).ok
    assert ad.gradcheck(ad.grad(complex_signals, argnums=(0, 1)), z, w, rtol=1e-5, atol=1e-6).ok


def test_a_real_kernel_on_a_complex_signal_gets_a_real_gradient() -> None:
    z, kernel = _complex(6), RNG.standard_normal(3)
    grad = ad.grad(complex_signals, argnums=1)(z[None], kernel[None])
    assert grad.dtype == np.float64
    assert ad.gradcheck(complex_signals, z[None], kernel[None]).ok


# ---- the windows, every small shape (Note [Convolution windows]) ---------------------------------


def _pairs(rank: int, largest: int) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    shapes = list(itertools.product(range(1, largest + 1), repeat=rank))
    return [(a, b) for a in shapes for b in shapes]


def _fits(shape1: tuple[int, ...], shape2: tuple[int, ...], mode: str) -> bool:
    """SciPy's 'valid' mode needs one operand at least as large on every axis."""
    pairs = list(zip(shape1, shape2, strict=True))
    return mode != "valid" or all(n >= m for n, m in pairs) or all(m >= n for n, m in pairs)


@pytest.mark.parametrize(
    ("style", "rank", "largest"),
    [
        ("numpy_convolve", 1, 6),
        ("numpy_correlate", 1, 6),
        ("scipy", 1, 6),
        ("scipy", 2, 3),
        ("scipy2d", 2, 3),
        ("scipy_correlate2d", 2, 3),
    ],
)
def test_cotangent_padding_finds_the_result_in_the_full_convolution(
    style: str, rank: int, largest: int
) -> None:
    for shape1, shape2 in _pairs(rank, largest):
        for mode in ("full", "valid", "same"):
            if style.startswith("scipy") and not _fits(shape1, shape2, mode):
                continue
            expected = found_padding(shape1, shape2, mode, style)
            assert cotangent_padding(shape1, shape2, mode, style) == expected, (shape1, shape2)


def test_correlate2d_conjugates_exactly_when_it_swaps() -> None:
    for shape1, shape2 in _pairs(2, 3):
        for mode in ("full", "valid", "same"):
            if _fits(shape1, shape2, mode):
                expected = correlate2d_conjugates(shape1, shape2, mode)
                assert swaps_operands(shape1, shape2, mode) == expected, (shape1, shape2, mode)


# ---- uses ---------------------------------------------------------------------------------------


def test_deconvolution_least_squares_gradient_vanishes_at_the_solution() -> None:
    """Recover a signal blurred by a known kernel: the least-squares gradient is zero at the
    solution of the normal equations, built from the convolution matrix column by column."""
    kernel = np.array([0.25, 0.5, 0.25])
    signal = RNG.standard_normal(12)
    observed = convolve(signal, kernel) + 0.01 * RNG.standard_normal(14)
    penalty = 1e-3

    def loss(x):
        residual = convolve(x, kernel, mode="full") - observed
        return 0.5 * np.sum(residual**2) + 0.5 * penalty * np.sum(x**2)

    matrix = np.column_stack([np.convolve(e, kernel) for e in np.eye(12)])
    solution = np.linalg.solve(matrix.T @ matrix + penalty * np.eye(12), matrix.T @ observed)
    np.testing.assert_allclose(ad.grad(loss)(solution), 0.0, atol=1e-10)
    # and the Hessian is the normal equations' matrix
    np.testing.assert_allclose(
        ad.hessian(loss)(signal), matrix.T @ matrix + penalty * np.eye(12), atol=1e-12
    )


def conv_layer_loss(kernels, bias, images, targets):
    """A small convolution layer: each image through each kernel ('same'), a ReLU-free smooth
    activation, summed over kernels, against a target image."""
    loss = 0.0
    for i in range(images.shape[0]):
        hidden = 0.0
        for k in range(kernels.shape[0]):
            hidden = hidden + np.tanh(convolve2d(images[i], kernels[k], mode="same") + bias[k])
        loss = loss + np.mean((hidden - targets[i]) ** 2)
    return loss / len(images)


def _layer_data() -> tuple[np.ndarray, ...]:
    return (
        0.5 * RNG.standard_normal((2, 3, 3)),
        0.1 * RNG.standard_normal(2),
        RNG.standard_normal((3, 6, 6)),
        RNG.standard_normal((3, 6, 6)),
    )


def test_convolution_layer_first_and_second_order() -> None:
    kernels, bias, images, targets = _layer_data()
    np.testing.assert_allclose(
        ad.script(conv_layer_loss)(kernels, bias, images, targets),
        conv_layer_loss(kernels, bias, images, targets),
        rtol=1e-12,
    )
    assert ad.gradcheck(conv_layer_loss, kernels, bias, images, targets).ok
    gradient = ad.grad(conv_layer_loss, argnums=(0, 1))
    assert ad.gradcheck(gradient, kernels, bias, images, targets, rtol=1e-5, atol=1e-7).ok


def template_match(volume, template):
    """How well a 3-D template matches everywhere it fits: correlation normalised by the
    template's energy."""
    scores = correlate(volume, template, mode="valid")
    return np.sum(scores**2) / np.sum(template**2)


def test_three_dimensional_correlation() -> None:
    volume, template = RNG.standard_normal((5, 4, 6)), RNG.standard_normal((2, 3, 2))
    np.testing.assert_allclose(
        ad.script(template_match)(volume, template), template_match(volume, template)
    )
    assert ad.gradcheck(template_match, volume, template).ok
    assert ad.gradcheck(
        ad.grad(template_match, argnums=(0, 1)), volume, template, rtol=1e-5, atol=1e-7
    ).ok


# ---- refusals -----------------------------------------------------------------------------------


def neither_larger(a, b):
    return np.sum(convolve(a, b, mode="valid"))


def unknown_boundary(a, b):
    return np.sum(convolve2d(a, b, boundary="reflect"))


def ranks_differ(a, b):
    return np.sum(correlate(a, b))


@pytest.mark.parametrize(
    ("fn", "message"),
    [
        (neither_larger, "one must be at least as large as the other"),
        (unknown_boundary, "Acceptable boundary flags"),
        (ranks_differ, "should have the same dimensionality"),
    ],
)
def test_located_errors(fn: Callable[..., Any], message: str) -> None:
    a = RNG.standard_normal((2, 3))
    b = RNG.standard_normal((3, 2)) if fn is not ranks_differ else RNG.standard_normal(3)
    with pytest.raises(ShapeError, match=message) as caught:
        ad.grad(fn)(a, b)
    assert "test_scipy_signal.py" in str(caught.value)
    assert "^" in str(caught.value)


def test_signal_function_without_scipy_is_a_located_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import frontend.calls

    monkeypatch.setattr(frontend.calls, "scipy_installed", lambda: False)

    def needs_scipy(a, b):
        return np.sum(sg.convolve2d(a, b))

    with pytest.raises(ad.ScriptError) as caught:
        ad.grad(needs_scipy)(RNG.standard_normal((3, 3)), RNG.standard_normal((2, 2)))
    message = str(caught.value)
    assert "scipy.signal.convolve2d needs SciPy, which is not installed" in message
    assert "test_scipy_signal.py" in message


# ---- JAX ----------------------------------------------------------------------------------------


def test_gradients_agree_with_jax_where_installed() -> None:
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jsg = pytest.importorskip("jax.scipy.signal")
    jnp = jax.numpy

    def ours(a, b, c):
        return (
            np.sum(convolve(a, b, "same") ** 2)
            + np.sum(correlate(a, b, "valid") ** 2)
            + np.sum(convolve2d(a, b) ** 2)
            + np.sum(np.convolve(c, c[:3], "same") ** 2)
            + np.sum(np.correlate(c, c[:3], "full") ** 2)
        )

    def theirs(a, b, c):
        return (
            jnp.sum(jsg.convolve(a, b, "same") ** 2)
            + jnp.sum(jsg.correlate(a, b, "valid") ** 2)
            + jnp.sum(jsg.convolve2d(a, b) ** 2)
            + jnp.sum(jnp.convolve(c, c[:3], "same") ** 2)
            + jnp.sum(jnp.correlate(c, c[:3], "full") ** 2)
        )

    args = (RNG.standard_normal((5, 6)), RNG.standard_normal((2, 3)), RNG.standard_normal(7))
    mine = ad.grad(ours, argnums=(0, 1, 2))(*args)
    expected = jax.grad(theirs, argnums=(0, 1, 2))(*args)
    for got, want in zip(mine, expected, strict=True):
        np.testing.assert_allclose(got, np.asarray(want), rtol=1e-9, atol=1e-12)
    volume, template = RNG.standard_normal((4, 5, 3)), RNG.standard_normal((2, 2, 2))
    mine = ad.grad(template_match, argnums=(0, 1))(volume, template)

    def jax_template_match(volume, template):
        scores = jsg.correlate(volume, template, mode="valid")
        return jnp.sum(scores**2) / jnp.sum(template**2)

    expected = jax.grad(jax_template_match, argnums=(0, 1))(volume, template)
    for got, want in zip(mine, expected, strict=True):
        np.testing.assert_allclose(got, np.asarray(want), rtol=1e-9, atol=1e-12)


def test_gradients_agree_with_hips_autograd_where_installed() -> None:
    """HIPS autograd's ``scipy.signal.convolve`` (modes full and valid, all axes)."""
    autograd = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")
    asg = pytest.importorskip("autograd.scipy.signal")

    def ours(a, b):
        return np.sum(convolve(a, b) ** 2) + np.sum(np.sin(convolve(a, b, mode="valid")))

    def theirs(a, b):
        return anp.sum(asg.convolve(a, b) ** 2) + anp.sum(anp.sin(asg.convolve(a, b, mode="valid")))

    a, b = RNG.standard_normal((5, 4, 3)), RNG.standard_normal((2, 3, 2))
    mine = ad.grad(ours, argnums=(0, 1))(a, b)
    expected = autograd.grad(theirs, argnum=(0, 1))(a, b)
    for got, want in zip(mine, expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
