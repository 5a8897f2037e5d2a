"""Complex gradients against central differences along the real and the imaginary parts.

The convention (Note [Complex gradients] in `autodiff.formulas`, docs/conventions.md): for a real
loss ``L`` of a complex ``z = x + iy`` the gradient is ``g = dL/dx - 1j * dL/dy``, so that a step
``dz`` changes the loss by ``Re(sum(g * dz))``; a real argument's gradient is real. It is JAX's
convention exactly (``jax.grad`` of a real function of a complex argument); PyTorch's and HIPS
autograd's is its conjugate, ``dL/dx + 1j * dL/dy``.

The table-driven part walks every operator that has a derivative formula: each either takes
complex operands (`COMPLEX_CAPABLE`, checked on every sample of `tests/formula_samples.py` with
its operands made complex, all of them and then only the first) or is listed in `REAL_ONLY` with
the reason. The second part checks whole functions a user writes, first and second derivatives.
`tests/unit/test_complex_operators.py` checks every operator at second order and in complex64.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

import autodiff as ad
from autodiff.derivatives import all_formulas
from ir.ops.scipy_linalg import LINALG_OPS
from ir.ops.scipy_stats_multivariate import HELPER_OPS as STATS_HELPER_OPS
from tests.formula_samples import SAMPLES, Operands, Sample
from tests.scipy_samples import SCIPY_REAL_ONLY, SCIPY_SAMPLES
from tests.unit.test_formulas import RTOL, check_gradients

SAMPLES = {**SAMPLES, **SCIPY_SAMPLES}

EPS = 1e-6

# ---- the checker ---------------------------------------------------------------------------


def numeric_gradient(fn: Callable[..., Any], args: Sequence[Any], position: int) -> np.ndarray:
    """``dL/dRe - 1j * dL/dIm`` of the real ``fn(*args)`` w.r.t. ``args[position]`` by central
    differences (only ``dL/dRe`` for a real argument)."""
    base = np.asarray(args[position])
    directions = (1.0, 1j) if np.iscomplexobj(base) else (1.0,)
    numeric = np.zeros(base.shape, complex if np.iscomplexobj(base) else float)
    for index in np.ndindex(base.shape):
        for direction in directions:
            values = []
            for step in (EPS, -EPS):
                moved = base.astype(complex if np.iscomplexobj(base) else float)
                moved[index] += step * direction
                call = list(args)
                call[position] = moved
                values.append(float(np.real(fn(*call))))
            # The derivative along ``direction`` times its conjugate: 1 for Re, -1j for Im.
            numeric[index] += (values[0] - values[1]) / (2 * EPS) * np.conj(direction)
    return numeric


def check_complex_gradient(
    fn: Callable[..., Any], *args: Any, argnums: Sequence[int] = (0,), rtol: float = 1e-6
) -> None:
    """``ad.grad(fn)`` against central differences along the real and imaginary parts of each
    argument in ``argnums``: a real argument's gradient must be real, in its dtype, and a step
    ``dz`` must change the loss by ``Re(sum(g * dz))``."""
    grads = ad.grad(fn, argnums=tuple(argnums))(*args)
    for position, grad in zip(argnums, grads, strict=True):
        argument = args[position]
        if isinstance(argument, float):
            assert isinstance(grad, float), f"argument {position}: {type(grad)}"
        else:
            assert np.result_type(grad) == np.result_type(argument), f"argument {position}"
        numeric = numeric_gradient(fn, args, position)
        error = np.abs(np.asarray(grad) - numeric) / np.maximum(np.abs(numeric), 1)
        assert error.max() < rtol, (
            f"argument {position}: formula {np.asarray(grad)!r}, central differences "
            f"{numeric!r} (relative error {error.max():.2e})"
        )


# ---- every operator with a formula: complex-capable, or real-only and why --------------------

# NumPy orders complex numbers lexicographically: a tie of real parts (the samples' ties and
# conventions) is a jump. tests/unit/test_complex_operators.py checks them away from ties.
_ORDERED = "orders its operands (lexicographically for complex ones: checked away from ties)"
REAL_ONLY: dict[str, str] = {
    "aten::maximum": _ORDERED,
    "aten::minimum": _ORDERED,
    "aten::fmax": _ORDERED,
    "aten::fmin": _ORDERED,
    "aten::max": _ORDERED,
    "aten::min": _ORDERED,
    "aten::clip": _ORDERED,
    "aten::sort": _ORDERED,
    "aten::partition": _ORDERED,
    "aten::arctan2": "NumPy refuses complex operands",
    "aten::hypot": "NumPy refuses complex operands",
    "aten::logaddexp": "NumPy refuses complex operands",
    "aten::logaddexp2": "NumPy refuses complex operands",
    "aten::remainder": "NumPy refuses complex operands",
    "aten::fabs": "NumPy refuses complex operands",
    "aten::frexp": "NumPy refuses complex operands",
    "aten::deg2rad": "NumPy refuses complex operands",
    "aten::rad2deg": "NumPy refuses complex operands",
    # Their complex vectors are unique up to a phase each: a random cotangent is a loss that
    # depends on that phase and has no gradient. Complex inputs are checked below through
    # losses that do not (abs of the vectors, the values).
    "aten::linalg_eigh": "checked by test_user_functions (phase-free losses)",
    "aten::linalg_svd": "checked by test_user_functions (phase-free losses)",
    "aten::linalg_eig": "checked in tests/unit/test_numpy_forms.py (phase-free losses)",
    # Complex Hermitian input needs a Hermitian positive definite sample of its own.
    "aten::linalg_cholesky": "checked by test_cholesky_of_a_hermitian_matrix",
    # Lists and tuples of arrays: the samples' items are complexified through the operators
    # that build and read them (concatenate, stack, split, ListIndex, ...).
    "aten::_add_lists": "list plumbing, checked through the list operators",
    "aten::_list_head": "list plumbing, checked through the list operators",
    "aten::_sequence_as": "list plumbing, checked through the list operators",
    # Helpers of the transforms, sampled complex already in tests/formula_samples.py.
    "aten::_grad_like": "sampled with complex operands in tests/formula_samples.py",
    "aten::_imag_backward": "sampled with complex operands in tests/formula_samples.py",
    "aten::_fft_backward": "sampled with complex operands in tests/formula_samples.py",
    "aten::_rfft_backward": "sampled with complex operands in tests/formula_samples.py",
    "aten::_irfft_backward": "sampled with complex operands in tests/formula_samples.py",
    "aten::fft_rfft": "NumPy's rfft discards an imaginary part (rfft of a complex array warns)",
    "aten::fft_irfft": "sampled with complex operands in tests/formula_samples.py",
    "aten::real_if_close": "refused for complex arrays: the values decide the result's dtype",
    "aten::_fftn_backward": "sampled with complex operands in tests/formula_samples.py",
    "aten::_rfftn_backward": "sampled with complex operands in tests/formula_samples.py",
    "aten::_irfftn_backward": "sampled with complex operands in tests/formula_samples.py",
    "aten::fft_rfftn": "NumPy's rfftn discards an imaginary part (rfftn of a complex array warns)",
    "aten::fft_rfft2": "NumPy's rfft2 discards an imaginary part (rfft2 of a complex array warns)",
    "aten::fft_irfftn": "sampled with complex operands in tests/formula_samples.py",
    "aten::fft_irfft2": "sampled with complex operands in tests/formula_samples.py",
    # The SciPy operators whose complex operands are refused, and why: checked to be refused
    # with a located error in tests/unit/test_scipy_complex.py (those with a formula: the
    # cdf of multivariate_normal has none).
    **{op: why for op, why in SCIPY_REAL_ONLY.items() if op in all_formulas()},
    **dict.fromkeys(STATS_HELPER_OPS, "scipy.stats: real arguments only (formula helpers)"),
    # Note [Real scipy.linalg]: refused for complex matrices when shapes are propagated.
    **dict.fromkeys(LINALG_OPS & set(all_formulas()), "scipy.linalg: real matrices only"),
}

COMPLEX_CAPABLE = sorted(set(all_formulas()) - set(REAL_ONLY))


def test_every_formula_is_classified() -> None:
    assert set(REAL_ONLY) <= set(all_formulas())
    assert set(SAMPLES) == set(all_formulas())


def _complexified(operand: Any, rng: np.random.Generator) -> Any:
    """A float array with an imaginary part added (tuples and lists item by item)."""
    if isinstance(operand, tuple | list):
        return type(operand)(_complexified(item, rng) for item in operand)
    if isinstance(operand, np.ndarray) and operand.dtype.kind == "f":
        return operand + 0.5j * rng.standard_normal(operand.shape)
    return operand


def _complex_operands(sample: Sample, first_only: bool) -> Operands:
    operands = sample.make(np.random.default_rng(0))
    rng = np.random.default_rng(7)
    # Every floating operand, or (first_only) the first one differentiated and the ones that
    # are not differentiated (a write's target: NumPy writes no complex value into a real
    # array).
    kept_real = (*sample.real, *sample.wrt[1:]) if first_only else sample.real
    return tuple(
        operand if position in kept_real else _complexified(operand, rng)
        for position, operand in enumerate(operands)
    )


def _has_complex(operands: Operands, wrt: tuple[int, ...]) -> bool:
    def complex_in(value: Any) -> bool:
        if isinstance(value, tuple | list):
            return any(complex_in(v) for v in value)
        return isinstance(value, np.ndarray) and value.dtype.kind == "c"

    return any(complex_in(operands[position]) for position in wrt)


def _complex_params(first_only: bool) -> list[Any]:
    params = []
    for op in COMPLEX_CAPABLE:
        for sample in SAMPLES[op]:
            if sample.xfail:
                continue
            if first_only and len(sample.wrt) < 2:
                continue
            # A sample whose differentiated operands are ints or bools has nothing to complexify.
            if not _has_complex(_complex_operands(sample, first_only), sample.wrt):
                continue
            label = f"{op.removeprefix('aten::')}-{sample.label}"
            params.append(pytest.param(op, sample, id=label))
    return params


@pytest.mark.parametrize(("op", "sample"), _complex_params(first_only=False))
def test_formula_with_complex_operands(op: str, sample: Sample) -> None:
    operands = _complex_operands(sample, first_only=False)
    check_gradients(op, operands, sample.wrt, RTOL)


@pytest.mark.parametrize(("op", "sample"), _complex_params(first_only=True))
def test_formula_with_real_and_complex_operands(op: str, sample: Sample) -> None:
    """Only the first operand complex: the others' gradients are real parts, in their dtypes
    (Note [Real operands of complex operators] in `autodiff.differentiate`)."""
    operands = _complex_operands(sample, first_only=True)
    check_gradients(op, operands, sample.wrt, RTOL)


def _hermitian_positive_definite(rng: np.random.Generator, *shape: int) -> np.ndarray:
    b = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    return b @ np.conj(np.swapaxes(b, -1, -2)) + np.eye(shape[-1])


# Operators whose complex operands must be Hermitian positive definite: (operator, shape).
HERMITIAN_CHECKS = [("aten::linalg_cholesky", (3, 3)), ("aten::linalg_cholesky", (2, 3, 3))]


@pytest.mark.parametrize(("op", "shape"), HERMITIAN_CHECKS)
def test_cholesky_of_a_hermitian_matrix(op: str, shape: tuple[int, ...]) -> None:
    # NumPy reads the lower triangle (the real part of the diagonal): the other entries get 0.
    operands = (_hermitian_positive_definite(np.random.default_rng(0), *shape),)
    check_gradients(op, operands, (0,), RTOL)


# ---- functions as users write them -----------------------------------------------------------


def _complex(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def variance(z):
    return np.var(z)


def deviation(z):
    return np.std(z)


def deviations_along_rows(z):
    return np.sum(np.std(z, axis=1, ddof=1) * np.var(z, axis=1))


def norm(z):
    return np.linalg.norm(z)


def norm_1(z):
    return np.linalg.norm(z, 1)


def norm_2(z):
    return np.linalg.norm(z, 2)


def norm_3(z):
    return np.linalg.norm(z, 3)


def norm_4(z):
    return np.linalg.norm(z, 4)


def norm_half(z):
    return np.linalg.norm(z, 0.5)


def norm_inf(z):
    return np.linalg.norm(z, np.inf)


def norm_minus_inf(z):
    return np.linalg.norm(z, -np.inf)


def frobenius(z):
    return np.linalg.norm(z, "fro")


def row_norms(z):
    return np.sum(np.linalg.norm(z, axis=1) ** 2)


def column_norms_3(z):
    return np.sum(np.linalg.norm(z, 3, axis=0, keepdims=True))


def matrix_norm_1(z):
    return np.linalg.norm(z, 1)


def matrix_norm_inf(z):
    return np.linalg.norm(z, np.inf)


def singular_values(z):
    return np.sum(np.linalg.svd(z, compute_uv=False) ** 2 * np.arange(1.0, 4.0))


def singular_vectors(z):
    u, s, vh = np.linalg.svd(z, full_matrices=False)
    return np.sum(np.abs(u) ** 3) + np.sum(np.abs(vh) * s[:, None]) + np.sum(s)


def eigenvalues(h):
    w, _ = np.linalg.eigh(h)
    return np.sum(w**3)


def eigenvectors(h):
    w, v = np.linalg.eigh(h)
    return np.sum(np.abs(v) ** 4 * w) + np.sum(np.abs(v[:, 0]) ** 2)


def magnitude_cubed(z):
    return np.sum(np.abs(z) ** 3)


def phases(z):
    return np.sum(np.real(np.sign(z)) * np.imag(np.sign(z) ** 2))


def power_with_complex_base(z, w):
    return np.sum(np.abs(z**w) ** 2)


def slogdet_phase(z):
    sign, logabsdet = np.linalg.slogdet(z)
    return np.real(sign) + 2.0 * np.imag(sign) + logabsdet


def pseudo_inverse(z):
    return np.sum(np.abs(np.linalg.pinv(z)) ** 2)


def products(z, w):
    return np.sum(np.abs(z @ w) ** 2) + np.sum(np.abs(np.einsum("ij,jk->ik", z, w)))


def transforms(z):
    return np.sum(np.abs(np.fft.fft(z)) ** 2) + np.sum(np.real(np.fft.ifft2(z)) ** 3)


def _square_near_identity(rng: np.random.Generator) -> np.ndarray:
    return _complex(rng, 3, 3) + 3.0 * np.eye(3)


def _hermitian(rng: np.random.Generator) -> np.ndarray:
    # Eigenvalues well apart, so eigh is differentiable.
    q, _ = np.linalg.qr(_complex(rng, 3, 3))
    return (q * np.array([-1.0, 0.5, 2.0])) @ np.conj(q.T)


Make = Callable[[np.random.Generator], tuple[Any, ...]]
USER_FUNCTIONS: list[tuple[Callable[..., Any], Make]] = [
    (variance, lambda r: (_complex(r, 5),)),
    (deviation, lambda r: (_complex(r, 5),)),
    (deviations_along_rows, lambda r: (_complex(r, 3, 4),)),
    (norm, lambda r: (_complex(r, 5),)),
    (norm_1, lambda r: (_complex(r, 5),)),
    (norm_2, lambda r: (_complex(r, 5),)),
    (norm_3, lambda r: (_complex(r, 5),)),
    (norm_4, lambda r: (_complex(r, 5),)),
    (norm_half, lambda r: (_complex(r, 5),)),
    (norm_inf, lambda r: (_complex(r, 5),)),
    (norm_minus_inf, lambda r: (_complex(r, 5),)),
    (frobenius, lambda r: (_complex(r, 3, 4),)),
    (row_norms, lambda r: (_complex(r, 3, 4),)),
    (column_norms_3, lambda r: (_complex(r, 3, 4),)),
    (matrix_norm_1, lambda r: (_complex(r, 3, 4),)),
    (matrix_norm_inf, lambda r: (_complex(r, 3, 4),)),
    (singular_values, lambda r: (_complex(r, 3, 4),)),
    (singular_values, lambda r: (_complex(r, 4, 3),)),
    (singular_vectors, lambda r: (_complex(r, 3, 4),)),
    (singular_vectors, lambda r: (_complex(r, 4, 3),)),
    (singular_vectors, lambda r: (_complex(r, 3, 3),)),
    (eigenvalues, lambda r: (_hermitian(r),)),
    (eigenvectors, lambda r: (_hermitian(r),)),
    (magnitude_cubed, lambda r: (_complex(r, 5),)),
    (phases, lambda r: (_complex(r, 5),)),
    (power_with_complex_base, lambda r: (_complex(r, 4), _complex(r, 4) * 0.5)),
    (slogdet_phase, lambda r: (_square_near_identity(r),)),
    (pseudo_inverse, lambda r: (_complex(r, 4, 3),)),
    (pseudo_inverse, lambda r: (_complex(r, 3, 4),)),
    (products, lambda r: (_complex(r, 3, 4), r.standard_normal((4, 2)))),
    (transforms, lambda r: (_complex(r, 3, 4),)),
]


def _user_params() -> list[Any]:
    def label(fn: Callable[..., Any], make: Make) -> str:
        shape = np.shape(make(np.random.default_rng(0))[0])
        return f"{fn.__name__}-{'x'.join(map(str, shape))}"

    return [pytest.param(fn, make, id=label(fn, make)) for fn, make in USER_FUNCTIONS]


@pytest.mark.parametrize(("fn", "make"), _user_params())
def test_user_functions(fn: Callable[..., Any], make: Callable[..., tuple[Any, ...]]) -> None:
    args = make(np.random.default_rng(3))
    check_complex_gradient(fn, *args, argnums=tuple(range(len(args))), rtol=1e-5)


def scaled_energy(z, a: float):
    return np.sum(np.abs(z * a) ** 2)


def test_python_float_beside_a_complex_array() -> None:
    # Crashed in the final cast: the float's gradient was complex (float() argument must be...).
    z = _complex(np.random.default_rng(0), 4)
    check_complex_gradient(scaled_energy, z, 1.5, argnums=(0, 1))
    _, vjp_fn = ad.vjp(scaled_energy, z, 1.5)
    _, da = vjp_fn(1.0)
    assert isinstance(da, float)
    np.testing.assert_allclose(da, 2 * 1.5 * np.sum(np.abs(z) ** 2))


def doubled_sum_of_first(x, z):
    return np.sum(x * 2.0)


def test_unreached_complex_argument_gets_a_complex_zero_without_a_warning() -> None:
    # Its zero gradient was made by casting the argument to float: a ComplexWarning per call.
    z = _complex(np.random.default_rng(2), 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dx, dz = ad.grad(doubled_sum_of_first, argnums=(0, 1))(np.ones(3), z)
    np.testing.assert_array_equal(dx, [2.0, 2.0, 2.0])
    assert dz.dtype == z.dtype
    assert not np.any(dz)


def mixed(x, z):
    return np.sum(np.abs(x * z) ** 2) + np.sum(np.sin(x) * np.real(z))


def test_real_argument_mixed_with_a_complex_one() -> None:
    rng = np.random.default_rng(1)
    x, z = rng.standard_normal(3), _complex(rng, 3)
    check_complex_gradient(mixed, x, z, argnums=(0, 1))


def test_vjp_of_a_gradient_keeps_a_real_argument_real() -> None:
    # ad.vjp(ad.grad(h)) returned the first-order value complex (an imaginary part of 0).
    rng = np.random.default_rng(1)
    x, z = rng.standard_normal(3), _complex(rng, 3)
    gradient = ad.grad(mixed)
    value, vjp_fn = ad.vjp(gradient, x, z)
    assert value.dtype == np.float64
    np.testing.assert_allclose(value, gradient(x, z))
    cotangent = rng.standard_normal(3)
    dx, dz = vjp_fn(cotangent)
    assert dx.dtype == np.float64
    assert dz.dtype == np.complex128

    def projected(x, z):
        return float(np.sum(cotangent * gradient(x, z)))

    np.testing.assert_allclose(dx, numeric_gradient(projected, (x, z), 0), rtol=1e-6)
    np.testing.assert_allclose(dz, numeric_gradient(projected, (x, z), 1), rtol=1e-6)


def energy_of_gradient(x, z):
    return np.sum(_MIXED_GRADIENT(x, z) ** 2)


_MIXED_GRADIENT = ad.grad(mixed)


def test_gradient_called_from_scripted_code_is_real_for_a_real_argument() -> None:
    # Built for generic types, the gradient graph did not know x was real: the caller's value
    # came out complex.
    rng = np.random.default_rng(2)
    x, z = rng.standard_normal(3), _complex(rng, 3)
    value = ad.script(energy_of_gradient)(x, z)
    assert np.result_type(value) == np.float64
    np.testing.assert_allclose(value, np.sum(_MIXED_GRADIENT(x, z) ** 2))
    check_complex_gradient(energy_of_gradient, x, z, argnums=(0, 1), rtol=1e-5)


# ---- second derivatives ----------------------------------------------------------------------


def through_magnitude(x, c):
    return np.sum(np.abs(np.sin(x) * c + 1.0))


def through_magnitude_cubed(x, c):
    return np.sum(np.abs(x * c) ** 3)


def through_deviation(x, c):
    return np.std(x * c) + np.var(np.exp(x) * c)


def through_norm_of_transform(x, c):
    return np.sum(np.abs(np.fft.fft(x * c)) ** 3)


SECOND_ORDER_REAL = [
    through_magnitude,
    through_magnitude_cubed,
    through_deviation,
    through_norm_of_transform,
]


@pytest.mark.parametrize("fn", SECOND_ORDER_REAL, ids=[f.__name__ for f in SECOND_ORDER_REAL])
def test_hessian_of_a_real_argument_through_complex_values(fn: Callable[..., Any]) -> None:
    # The Hessian of abs(...) through complex values was wrong (the real-valued gradient of
    # |z| flowed back with an imaginary part).
    rng = np.random.default_rng(4)
    x, c = rng.standard_normal(4), _complex(rng, 4)
    hessian = np.asarray(ad.hessian(fn)(x, c))
    gradient = ad.grad(fn)
    columns = [(gradient(x + EPS * e, c) - gradient(x - EPS * e, c)) / (2 * EPS) for e in np.eye(4)]
    numeric = np.stack(columns, axis=-1)
    assert hessian.dtype == np.float64
    np.testing.assert_allclose(hessian, numeric, rtol=1e-6, atol=1e-6)


def magnitude(z):
    return np.sum(np.abs(z))


def magnitude_squared_cubed(z):
    return np.sum(np.abs(z) ** 3) + np.sum(np.abs(z * z))


def complex_deviation(z):
    return np.std(z) + np.var(z * z) + np.sum(np.abs(np.sin(z)) ** 2)


SECOND_ORDER_COMPLEX = [magnitude, magnitude_squared_cubed, complex_deviation]


@pytest.mark.parametrize("fn", SECOND_ORDER_COMPLEX, ids=[f.__name__ for f in SECOND_ORDER_COMPLEX])
def test_gradient_of_a_complex_gradient(fn: Callable[..., Any]) -> None:
    """``vjp(grad(f))`` with a complex cotangent ``v`` is the gradient of the real loss
    ``Re(sum(v * grad(f)(z)))``: the same check one order up. It was twice the true one for
    ``abs``."""
    rng = np.random.default_rng(5)
    z, v = _complex(rng, 4), _complex(rng, 4)
    gradient = ad.grad(fn)
    _, vjp_fn = ad.vjp(gradient, z)
    (got,) = vjp_fn(v)

    def projected(z):
        return float(np.real(np.sum(v * gradient(z))))

    np.testing.assert_allclose(got, numeric_gradient(projected, (z,), 0), rtol=1e-6, atol=1e-7)


# ---- JAX: the same convention ------------------------------------------------------------------


def _jax() -> Any:
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return jax


JAX_FUNCTIONS = [
    ("var", variance, lambda jnp, z: jnp.var(z)),
    ("std", deviation, lambda jnp, z: jnp.std(z)),
    ("norm", norm, lambda jnp, z: jnp.linalg.norm(z)),
    ("norm-3", norm_3, lambda jnp, z: jnp.linalg.norm(z, 3)),
    ("norm-inf", norm_inf, lambda jnp, z: jnp.linalg.norm(z, jnp.inf)),
    ("abs-cubed", magnitude_cubed, lambda jnp, z: jnp.sum(jnp.abs(z) ** 3)),
    ("rows", row_norms, lambda jnp, z: jnp.sum(jnp.linalg.norm(z, axis=1) ** 2)),
]


@pytest.mark.parametrize(("fn", "jax_fn"), [pytest.param(f, j, id=n) for n, f, j in JAX_FUNCTIONS])
def test_matches_jax(fn: Callable[..., Any], jax_fn: Callable[..., Any]) -> None:
    """``jax.grad`` of a real function of a complex argument is ``dL/dx - 1j * dL/dy`` too, so
    the gradients are equal (PyTorch's would be the conjugate)."""
    jax = _jax()
    import jax.numpy as jnp

    z = (
        _complex(np.random.default_rng(6), 3, 4)
        if fn is row_norms
        else _complex(np.random.default_rng(6), 5)
    )
    expected = np.asarray(jax.grad(lambda q: jax_fn(jnp, q))(jnp.asarray(z)))
    np.testing.assert_allclose(ad.grad(fn)(z), expected, rtol=1e-10, atol=1e-12)


def test_singular_values_match_jax() -> None:
    jax = _jax()
    import jax.numpy as jnp

    z = _complex(np.random.default_rng(7), 3, 4)
    weights = np.arange(1.0, 4.0)
    expected = jax.grad(lambda q: jnp.sum(jnp.linalg.svd(q, compute_uv=False) ** 2 * weights))(
        jnp.asarray(z)
    )
    np.testing.assert_allclose(ad.grad(singular_values)(z), np.asarray(expected), rtol=1e-8)


def spectral_norm(x):
    return np.linalg.norm(x, 2)


def nuclear_norm(x):
    return np.linalg.norm(x, "nuc")


def test_singular_value_norms_take_the_least_norm_subgradient() -> None:
    # The spectral norm's gradient was refused at run time (ord=2 unsupported); ties share it
    # as JAX's max of the singular values does, and the nuclear norm leaves out zero values.
    tied = np.vstack([np.diag([2.0, 2.0, 1.0]), np.zeros((1, 3))])
    np.testing.assert_allclose(ad.grad(spectral_norm)(tied), tied * (tied == 2.0) / 4.0)
    rank_two = np.diag([2.0, 1.0, 0.0])
    np.testing.assert_allclose(ad.grad(nuclear_norm)(rank_two), np.diag([1.0, 1.0, 0.0]))


# ---- values of unknown dtype next to complex ones (regression 128) ---------------------------


def magnitude_plus_a_number_counted_up(a, u):
    # ``s`` is an int or a float64 (the loop may not run): its type has no dtype, and so has
    # every value computed from it, also in the derivative's graph.
    t = np.abs(np.sum(u + a))
    s = 0
    for _ in range(1):
        s += np.sum(a[0])
    return t + s * s


def magnitude_plus_a_constant_counted_up(a, u):
    t = np.abs(np.sum(u + a))
    s = 0
    for _ in range(1):
        s += 1.0
    return np.tanh(t) + s


@pytest.mark.parametrize(
    "fn", [magnitude_plus_a_number_counted_up, magnitude_plus_a_constant_counted_up]
)
def test_hessian_through_values_of_unknown_dtype_next_to_complex_ones(
    fn: Callable[..., Any],
) -> None:
    # The reverse of ``y = x * conj(z)`` with ``x`` of unknown dtype left the gradient of the
    # next node's real operand complex: the Hessian of |sum(u + a)| came out doubled.
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (3, 4))
    u = rng.uniform(-1, 1, (3, 4)) + 1j * rng.uniform(-1, 1, (3, 4))
    hessian = ad.hessian(fn)(a, u)
    gradient = ad.grad(fn)
    eps, columns = 1e-5, []
    for index in np.ndindex(a.shape):
        step = np.zeros_like(a)
        step[index] = eps
        columns.append((gradient(a + step, u) - gradient(a - step, u)) / (2 * eps))
    expected = np.stack(columns, axis=-1).reshape(hessian.shape)
    np.testing.assert_allclose(hessian, expected, rtol=1e-6, atol=1e-8)
