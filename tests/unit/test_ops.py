"""The operator table: schemas round-trip through text, and every kernel equals NumPy (or Python)
spelled the way user code spells it."""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from ir.errors import IRError, ProgramRaised, located_user_exception
from ir.ops import (
    AUTOGRAD_ZERO,
    NO_DEFAULT,
    OPS,
    Argument,
    Derivative,
    lookup_op,
    parse_schema,
    register_op,
)
from ir.ops.opaque import OPAQUE_CALLS
from ir.types import ANY, BOOL, INT, STR, TENSOR, ListType, OptionalType, TupleType
from tests.scipy_samples import correlate2d_conjugates, found_padding

RNG = np.random.default_rng(0)
A = RNG.standard_normal((3, 4))
F32 = RNG.standard_normal((3, 4)).astype(np.float32)
CUBE = RNG.standard_normal((2, 3, 4))
V = RNG.standard_normal(4)
POS = RNG.uniform(0.5, 2.0, (3, 4))
INTS = np.arange(12).reshape(3, 4)
MASK = A > 0
IDX = np.array([2, 0])
SQUARE = RNG.standard_normal((3, 3))
COMPLEX = RNG.standard_normal((3, 4)) + 1j * RNG.standard_normal((3, 4))
MASK3 = np.array([1.0, 0.0, 1.0])
SIMPLEX = POS[:, :3] / np.sum(POS[:, :3], axis=0)  # three columns on the simplex (axis 0)


def _scipy(reference: Callable[..., Any]) -> Callable[..., Any]:
    """``reference(scipy.special, *operands)``, SciPy imported only when a case runs."""

    def run(*operands: Any) -> Any:
        return reference(pytest.importorskip("scipy.special"), *operands)

    return run


def _scipy_stats(reference: Callable[..., Any]) -> Callable[..., Any]:
    """``reference(scipy.stats, *operands)``, SciPy imported only when a case runs."""

    def run(*operands: Any) -> Any:
        return reference(pytest.importorskip("scipy.stats"), *operands)

    return run


def _scipy_signal(reference: Callable[..., Any]) -> Callable[..., Any]:
    """``reference(scipy.signal, *operands)``, SciPy imported only when a case runs."""

    def run(*operands: Any) -> Any:
        return reference(pytest.importorskip("scipy.signal"), *operands)

    return run


def _scipy_linalg(reference: Callable[..., Any]) -> Callable[..., Any]:
    """``reference(scipy.linalg, *operands)``, SciPy imported only when a case runs."""

    def run(*operands: Any) -> Any:
        return reference(pytest.importorskip("scipy.linalg"), *operands)

    return run


def _row_swaps(piv: np.ndarray, like: np.ndarray) -> np.ndarray:
    """P with ``a = P L U`` for LAPACK's pivots: the identity's rows swapped in order, P^T."""
    swapped = np.eye(len(piv))
    for i, j in enumerate(piv):
        swapped[[i, j]] = swapped[[j, i]]
    return swapped.T


SPD = SQUARE @ SQUARE.T + np.eye(3)
_TRI = np.subtract.outer(np.arange(3), np.arange(3))  # i - j
WELL = SQUARE + 3 * np.eye(3)
LU_PAIR = (WELL, np.array([2, 1, 2], dtype=np.int32))


# (operator, operands in schema order, the same computation as user code writes it)
class ReseededStream(np.random.RandomState):
    """A RandomState that seeds itself afresh before each draw."""

    def normal(self, *args: Any) -> Any:
        self.seed(0)
        return super().normal(*args)

    def randint(self, *args: Any, **kwargs: Any) -> Any:
        self.seed(0)
        return super().randint(*args, **kwargs)

    def choice(self, *args: Any) -> Any:
        self.seed(0)
        return super().choice(*args)


def _reseeded_ints(size: int) -> Any:
    return np.random.RandomState(0).randint(0, 10, size)


def _reseeded_choice(n: int, size: int) -> Any:
    return np.random.RandomState(0).choice(n, size)


def _rfftn_vjp(g: Any) -> Any:
    """The vjp of rfftn of a (2, 3, 4) array for the cotangent ``g``, column by column of the
    transform's matrix: the real part of sum(g * rfftn(e_k)) for each unit array e_k."""
    columns = [np.sum(g * np.fft.rfftn(np.eye(24)[k].reshape(2, 3, 4))) for k in range(24)]
    return np.real(np.array(columns)).reshape(2, 3, 4)


def _irfftn_vjp(g: Any) -> Any:
    """The vjp of irfftn of (2, 3, 4) coefficients for the cotangent ``g``: the change of
    sum(g * result) along each real direction minus 1j times along each imaginary one."""
    unit = np.eye(24).reshape(24, 2, 3, 4)
    real = [np.sum(g * np.fft.irfftn(u)) for u in unit]
    imag = [np.sum(g * np.fft.irfftn(1j * u)) for u in unit]
    return (np.array(real) - 1j * np.array(imag)).reshape(2, 3, 4)


RFFTN_COTANGENT = RNG.standard_normal((2, 3, 3)) + 1j * RNG.standard_normal((2, 3, 3))
IRFFTN_COTANGENT = RNG.standard_normal((2, 3, 6))


class _Doubling:
    """An opaque function for the kernels of `ir.ops.opaque`: ``2 x``, with its vjp."""

    def result_types(self, arg_types: Any) -> list[Any]:
        return [arg_types[0]]

    def call(self, x: Any) -> Any:
        return 2 * x

    def forward(self, x: Any) -> tuple[Any, Any]:
        return 2 * x, x

    def backward(self, residuals: Any, grad: Any) -> tuple[Any, ...]:
        return (2 * grad,)


OPAQUE_CALLS["test_ops.doubling"] = _Doubling()


CASES: list[tuple[str, tuple[Any, ...], Callable[..., Any]]] = [
    ("aten::add", (A, V), lambda a, b: a + b),
    ("aten::add", (2.0, F32), lambda a, b: a + b),
    ("aten::sub", (A, 1), lambda a, b: a - b),
    ("aten::mul", (F32, 2.0), lambda a, b: a * b),
    ("aten::div", (INTS, 3), lambda a, b: a / b),
    ("aten::floordiv", (INTS, 5), lambda a, b: a // b),
    ("aten::remainder", (INTS, 5), lambda a, b: a % b),
    ("aten::pow", (POS, 2.5), lambda a, b: a**b),
    ("aten::maximum", (A, V), np.maximum),
    ("aten::minimum", (A, 0.0), np.minimum),
    ("aten::eq", (INTS, 3), lambda a, b: a == b),
    ("aten::ne", (INTS, 3), lambda a, b: a != b),
    ("aten::lt", (A, V), lambda a, b: a < b),
    ("aten::le", (A, V), lambda a, b: a <= b),
    ("aten::gt", (A, 0), lambda a, b: a > b),
    ("aten::ge", (A, 0), lambda a, b: a >= b),
    ("aten::logical_and", (MASK, ~MASK), lambda a, b: a & b),
    ("aten::logical_or", (MASK, ~MASK), lambda a, b: a | b),
    ("aten::logical_not", (MASK,), lambda a: ~a),
    ("aten::neg", (A,), lambda a: -a),
    ("aten::positive", (A,), lambda a: +a),
    ("aten::exp", (A,), np.exp),
    ("aten::log", (POS,), np.log),
    ("aten::sqrt", (POS,), np.sqrt),
    ("aten::sin", (A,), np.sin),
    ("aten::cos", (A,), np.cos),
    ("aten::tan", (A,), np.tan),
    ("aten::tanh", (F32,), np.tanh),
    ("aten::abs", (A,), abs),
    ("aten::sign", (A,), np.sign),
    ("aten::reciprocal", (POS,), lambda a: 1 / a),
    ("aten::square", (A,), lambda a: a * a),
    ("aten::where", (MASK, A, 0.0), np.where),
    ("aten::clip", (A, -0.5, None), lambda a, lo, hi: a.clip(lo, hi)),
    ("aten::logical_xor", (MASK, A > 0.5), np.logical_xor),
    ("aten::bitwise_and", (MASK, A > 0.5), lambda a, b: a & b),
    ("aten::bitwise_or", (INTS, 5), lambda a, b: a | b),
    ("aten::bitwise_xor", (MASK, True), lambda a, b: a ^ b),
    ("aten::invert", (MASK,), lambda a: ~a),
    ("aten::invert", (INTS,), lambda a: ~a),
    ("aten::arctan2", (A, V), np.arctan2),
    ("aten::hypot", (F32, 2.0), np.hypot),
    ("aten::logaddexp", (A, V), np.logaddexp),
    ("aten::logaddexp2", (A, 0.5), np.logaddexp2),
    ("aten::fmax", (np.array([1.0, np.nan, 3.0]), np.array([np.nan, 2.0, 0.0])), np.fmax),
    ("aten::fmin", (A, V), np.fmin),
    ("aten::exp2", (A,), np.exp2),
    ("aten::expm1", (F32,), np.expm1),
    ("aten::log2", (POS,), np.log2),
    ("aten::log10", (POS,), np.log10),
    ("aten::log1p", (POS,), np.log1p),
    ("aten::arcsin", (POS / 2,), np.arcsin),
    ("aten::arccos", (POS / 2,), np.arccos),
    ("aten::arctan", (A,), np.arctan),
    ("aten::sinh", (A,), np.sinh),
    ("aten::cosh", (A,), np.cosh),
    ("aten::arcsinh", (A,), np.arcsinh),
    ("aten::arccosh", (POS + 1,), np.arccosh),
    ("aten::arctanh", (POS / 2,), np.arctanh),
    ("aten::sinc", (A,), np.sinc),
    ("aten::sinc", (0.0,), np.sinc),
    ("aten::deg2rad", (A,), np.radians),
    ("aten::rad2deg", (A,), np.degrees),
    ("aten::fabs", (INTS,), np.fabs),
    ("aten::floor", (A,), np.floor),
    ("aten::frexp", (A,), np.frexp),
    ("aten::frexp", (F32,), np.frexp),
    ("aten::ceil", (F32,), np.ceil),
    ("aten::trunc", (A,), np.trunc),
    ("aten::isnan", (np.array([1.0, np.nan]),), np.isnan),
    ("aten::isfinite", (np.array([1.0, np.inf, np.nan]),), np.isfinite),
    ("aten::isinf", (np.array([-np.inf, 0.0]),), np.isinf),
    ("aten::isposinf", (np.array([-np.inf, np.inf, 0.0]),), np.isposinf),
    ("aten::isneginf", (np.array([-np.inf, np.inf, 0.0]),), np.isneginf),
    ("aten::signbit", (np.array([-0.0, 1.0, -2.0]),), np.signbit),
    ("aten::round", (A * 10, 0), lambda a, d: a.round()),
    ("aten::round", (A, 2), lambda a, d: np.around(a, 2)),
    ("aten::round", (2.5, 0), lambda a, d: np.round(a)),
    (
        "aten::nan_to_num",
        (np.array([np.nan, np.inf, -np.inf, 1.0]), 0.0, None, None),
        lambda a, *r: np.nan_to_num(a),
    ),
    (
        "aten::nan_to_num",
        (np.array([np.nan, np.inf, -np.inf], np.float32), 1, 9.0, None),
        lambda a, *r: np.nan_to_num(a, nan=1, posinf=9.0),
    ),
    ("aten::sum", (A, None, False), lambda a, axis, keep: a.sum()),
    ("aten::sum", (CUBE, (0, 2), True), lambda a, axis, keep: a.sum(axis=(0, 2), keepdims=True)),
    ("aten::sum", (CUBE, [0, 1], False), lambda a, axis, keep: a.sum(axis=(0, 1))),
    ("aten::mean", (INTS, 1, False), lambda a, axis, keep: a.mean(axis=1)),
    ("aten::max", (A, 0, False), lambda a, axis, keep: a.max(axis=0)),
    ("aten::min", (A, -1, True), lambda a, axis, keep: a.min(axis=-1, keepdims=True)),
    ("aten::prod", (POS, None, False), lambda a, axis, keep: np.prod(a)),
    ("aten::var", (A, None, False, 0), lambda a, *r: np.var(a)),
    ("aten::var", (CUBE, (0, 2), True, 1), lambda a, *r: a.var(axis=(0, 2), ddof=1, keepdims=True)),
    ("aten::var", (INTS, 1, False, 0), lambda a, *r: np.var(a, axis=1)),
    ("aten::std", (F32, 0, False, 1), lambda a, *r: np.std(a, 0, ddof=1)),
    ("aten::std", (CUBE, [1, 2], False, 0), lambda a, *r: a.std(axis=(1, 2))),
    ("aten::argmax", (A, None, False), lambda a, axis, keep: np.argmax(a)),
    ("aten::any", (MASK, None, False), lambda a, axis, keep: np.any(a)),
    ("aten::any", (A, 1, True), lambda a, axis, keep: a.any(1, keepdims=True)),
    ("aten::all", (MASK, 0, False), lambda a, axis, keep: np.all(a, axis=0)),
    ("aten::argmax", (CUBE, -1, True), lambda a, axis, keep: a.argmax(-1, keepdims=True)),
    ("aten::argmin", (A, 0, False), lambda a, axis, keep: np.argmin(a, axis=0)),
    ("aten::cumsum", (CUBE, None), lambda a, axis: np.cumsum(a)),
    ("aten::cumsum", (INTS.astype(np.int32), 1), lambda a, axis: a.cumsum(axis=1)),
    ("aten::cumsum", (F32, -1), lambda a, axis: np.cumsum(a, -1)),
    ("aten::diff", (A, 1, -1), lambda a, n, axis: np.diff(a)),
    ("aten::diff", (CUBE, 2, 1), lambda a, n, axis: np.diff(a, 2, axis=1)),
    ("aten::diff", (V, 6, 0), lambda a, n, axis: np.diff(a, 6)),
    ("aten::diff", (MASK, 1, 0), lambda a, n, axis: np.diff(a, axis=0)),
    ("aten::argsort", (A, -1, None, None), lambda a, *r: np.argsort(a)),
    ("aten::argsort", (A, None, None, True), lambda a, *r: np.argsort(a, axis=None, stable=True)),
    ("aten::argsort", (CUBE, 0, "stable", None), lambda a, *r: a.argsort(0, kind="stable")),
    ("aten::matmul", (A, V), lambda a, b: a @ b),
    ("aten::matmul", (A.T, A), lambda a, b: a @ b),
    ("aten::dot", (V, V), np.dot),
    ("aten::dot", (2.0, A), np.dot),
    ("aten::reshape", (A, (2, -1)), lambda a, s: a.reshape(2, -1)),
    ("aten::reshape", (A, [12]), lambda a, s: a.reshape(12)),
    ("aten::transpose", (A, None), lambda a, axes: a.T),
    ("aten::transpose", (CUBE, (2, 0, 1)), lambda a, axes: a.transpose(2, 0, 1)),
    ("aten::squeeze", (A[None], 0), lambda a, axis: a.squeeze(0)),
    ("aten::squeeze", (A[None, :, None], [0, 2]), lambda a, axis: a.squeeze((0, 2))),
    ("aten::expand_dims", (A, 1), lambda a, axis: a[:, None]),
    ("aten::expand_dims", (A, [0, 3]), lambda a, axis: a[None, :, :, None]),
    ("aten::ravel", (A,), lambda a: a.ravel()),
    ("aten::flatten", (A.T,), lambda a: A.T.flatten()),
    ("aten::broadcast_to", (V, (3, 4)), np.broadcast_to),
    ("aten::sum_to_size", (A, (1, 4)), lambda a, s: a.sum(axis=0, keepdims=True)),
    ("aten::sum_to_size", (A, (4,)), lambda a, s: a.sum(axis=0)),
    ("aten::sum_to_size", (CUBE, (3, 1)), lambda a, s: a.sum(axis=(0, 2))[:, None]),
    ("aten::sum_to_size", (A, None), lambda a, s: a),
    # The gradient of a Python number (``b + b`` with ``b: float``) is summed to no size.
    ("aten::sum_to_size", (2.5, None), lambda a, s: a),
    ("aten::sum_to_size", (2.5, ()), lambda a, s: a),
    ("aten::_size_if_not_equal", (V, A), lambda a, b: (4,)),
    ("aten::_size_if_not_equal", (A, A), lambda a, b: None),
    ("aten::_size_if_not_equal", (2.0, A), lambda a, b: ()),
    ("aten::_unreduce", (V[None, :], (3, 4), 0, True), lambda g, s, a, k: np.tile(g, (3, 1))),
    ("aten::_unreduce", (V, (3, 4), 0, False), lambda g, s, a, k: np.tile(V, (3, 1))),
    ("aten::_unreduce", (np.float64(2.0), (3, 4), None, False), lambda *_: np.full((3, 4), 2.0)),
    ("aten::_transpose_backward", (A.T, None), lambda g, axes: A),
    ("aten::_transpose_backward", (CUBE.transpose(2, 0, 1), (2, 0, 1)), lambda g, axes: CUBE),
    ("aten::_matmul_backward_self", (A @ V, A, V), lambda g, a, b: np.outer(g, b)),
    ("aten::_matmul_backward_other", (A @ V, A, V), lambda g, a, b: a.T @ g),
    ("aten::_dot_backward", (A @ V, A, V), lambda g, a, b: (np.outer(g, b), a.T @ g)),
    (
        "aten::_dot_backward",
        (V * 2.0, V, 2.0),
        lambda g, a, b: (g * 2.0, np.asarray(np.sum(g * a))),
    ),
    ("aten::_matmul_backward_self", (np.float64(2.0), V, V), lambda g, a, b: 2.0 * V),
    ("aten::_matmul_backward_other", (np.float64(2.0), V, V), lambda g, a, b: 2.0 * V),
    (
        "aten::_dot_backward",
        (np.ones((2, 3, 5, 2)), CUBE, np.ones((5, 4, 2))),
        lambda g, a, b: (
            np.full((2, 3, 4), 10.0),
            np.broadcast_to(CUBE.sum((0, 1)), (5, 2, 4)).transpose(0, 2, 1),
        ),
    ),
    (
        "aten::_prod_backward",
        (np.ones(3), np.array([[2.0, 0.0], [3.0, 4.0], [0.0, 0.0]]), 1, False),
        lambda *_: np.array([[0.0, 2.0], [4.0, 3.0], [0.0, 0.0]]),
    ),
    (
        "aten::_prod_double_backward",
        (np.ones(3), np.array(2.0), np.array([2.0, 3.0, 0.0]), None, False),
        lambda *_: (np.array(6.0), np.array([6.0, 4.0, 10.0])),
    ),
    ("aten::_dtype_of", (F32,), lambda a: "float32"),
    ("aten::_dtype_of", (2.0,), lambda a: "float64"),
    ("aten::_is_complex", (A,), lambda a: False),
    ("aten::_is_complex", (A + 1j,), lambda a: True),
    ("aten::_is_complex", (2.0,), lambda a: False),
    ("aten::_is_real", (A + 1j,), np.isrealobj),
    ("aten::_is_real", (2.0,), np.isrealobj),
    ("aten::iscomplex", (np.array([1.0, 1j, 2 + 0j]),), np.iscomplex),
    ("aten::real_if_close", (A, 100), lambda a, tol: np.real_if_close(a)),
    ("aten::isreal", (np.array([1.0, 1j, 2 + 0j]),), np.isreal),
    ("aten::isreal", (A,), np.isreal),
    ("aten::angle", (A + 1j * POS, False), lambda z, deg: np.angle(z)),
    ("aten::angle", (A, True), lambda x, deg: np.angle(x, deg=True)),
    ("aten::_select_backward", (V, (3, 4), 0, 1), lambda g, s, a, i: np.eye(3)[:, 1:2] * V),
    (
        "aten::_slice_backward",
        (A[:, 1:3], (3, 4), 1, 1, 3, None),
        lambda g, s, a, b, e, st: A * (np.arange(4) >= 1) * (np.arange(4) < 3),
    ),
    (
        "aten::_scatter_slices",
        ((A[:, 1:], A[:, :-1], V), (3, 4), ((1, 1, None, None), (1, None, -1, None), (0, 2))),
        lambda *_: (
            np.pad(A[:, 1:], ((0, 0), (1, 0)))
            + np.pad(A[:, :-1], ((0, 0), (0, 1)))
            + np.eye(3)[:, 2:3] * V
        ),
    ),
    ("aten::_previous_row", (CUBE, A, 0), lambda t, first, i: first),
    ("aten::_previous_row", (CUBE, A, 2), lambda t, first, i: t[1]),
    (
        "aten::_index_backward",
        (np.ones(3), (4,), (np.array([0, 0, 2]),)),
        lambda *_: np.array([2.0, 0.0, 1.0, 0.0]),
    ),
    (
        "aten::_concatenate_backward",
        (np.arange(6.0), ((2,), (4,)), 0),
        lambda *_: (np.arange(2.0), np.arange(2.0, 6.0)),
    ),
    ("aten::_index_tuple", (A, (np.array([2, 0]), None)), lambda a, t: a[[2, 0]]),
    ("aten::_input_shapes", ((A, V),), lambda xs: ((3, 4), (4,))),
    ("aten::_stack_backward", (np.stack([V, V]), 0), lambda g, axis: (V, V)),
    ("aten::_list_index_backward", (V, [A, V], 1), lambda *_: [np.zeros_like(A), V]),
    ("aten::_is_list", ([A],), lambda s: True),
    ("aten::_is_list", ((A,),), lambda s: False),
    # Which formula np.linalg.norm's gradient takes (NORM_EUCLIDEAN, NORM_POWER, ...).
    ("aten::_norm_kind", (None, None, 2), lambda o, a, n: 0),
    ("aten::_norm_kind", ("fro", (0, 1), 3), lambda o, a, n: 0),
    ("aten::_norm_kind", (2, None, 1), lambda o, a, n: 0),
    ("aten::_norm_kind", (3, 1, 2), lambda o, a, n: 1),
    ("aten::_norm_kind", (-np.inf, None, 1), lambda o, a, n: 2),
    ("aten::_norm_kind", (0, -1, 2), lambda o, a, n: 3),
    ("aten::_norm_kind", (1, None, 2), lambda o, a, n: 4),
    ("aten::_norm_kind", (-np.inf, (1, 0), 2), lambda o, a, n: 5),
    ("aten::_norm_kind", (2, None, 2), lambda o, a, n: 6),
    ("aten::_norm_kind", (-2, (0, 2), 3), lambda o, a, n: 7),
    ("aten::_norm_kind", ("nuc", (1, 2), 3), lambda o, a, n: 8),
    # A matrix norm's row (0) and column (1) axis, in the order the axis argument gives.
    ("aten::_matrix_norm_axis", ((1, 0), 2, 0), lambda a, n, w: 1),
    ("aten::_matrix_norm_axis", ((-1, 0), 3, 0), lambda a, n, w: 2),
    ("aten::_matrix_norm_axis", (None, 3, 1), lambda a, n, w: 2),
    # Scatters (Note [Scatters]): each returns a new array; the operand stays as it was.
    ("aten::_written", (F32, V), lambda t, v: np.broadcast_to(V, (3, 4)).astype(np.float32)),
    ("aten::_written", (INTS, 7), lambda t, v: np.full((3, 4), 7)),
    ("aten::select_scatter", (A, V, 0, -1), lambda a, v, axis, i: np.vstack([A[:2], V])),
    ("aten::select_scatter", (INTS, 2.7, 1, 0), lambda *_: np.where(np.arange(4) == 0, 2, INTS)),
    (
        "aten::slice_scatter",
        (A, 0.0, 1, None, None, 2),
        lambda *_: A * (np.arange(4) % 2 == 1),
    ),
    ("aten::slice_scatter", (V, V[::-1], 0, None, None, -1), lambda *_: V),
    ("aten::_einsum_view", (SQUARE, "ii->i"), lambda a, s: np.diagonal(SQUARE)),
    ("aten::_einsum_view", (A, "ji"), lambda a, s: A.T),
    ("aten::_einsum_scatter", (SQUARE, V[:3], "ii->i"), lambda *_: _on_diagonal(SQUARE, V[:3])),
    ("aten::_einsum_scatter", (A, A.T * 2, "ij->ji"), lambda *_: A * 2),
    ("aten::_real_scatter", (COMPLEX, V), lambda *_: V + 1j * COMPLEX.imag),
    ("aten::_imag_scatter", (COMPLEX, 2.0), lambda *_: COMPLEX.real + 2.0j),
    ("aten::index_put", (V, np.array([1.0, 2.0]), IDX), lambda *_: _put(V, IDX, [1.0, 2.0])),
    ("aten::index_put", (A, 0.0, None, IDX), lambda a, v, i, j: A * (np.arange(4) % 2 == 1)),
    ("aten::index_put", (A, 9.0, MASK), lambda a, v, m: np.where(MASK, 9.0, A)),
    (
        "aten::index_put",
        (np.zeros(3), np.array([1.0, 2.0, 3.0]), np.array([0, 0, 2])),
        lambda *_: np.array([2.0, 0.0, 3.0]),
    ),
    ("aten::add_at", (np.zeros(3), 1.0, np.array([0, 0, 2])), lambda *_: np.array([2.0, 0, 1])),
    ("aten::add_at", (A, V, IDX), lambda a, v, i: A + np.outer([1, 0, 1], V)),
    (
        "aten::_index_put_tuple",
        (np.zeros(3), 1.0, (np.array([0, 0]),)),
        lambda *_: np.array([1.0, 0, 0]),
    ),
    ("aten::_add_at_tuple", (np.zeros(3), 1.0, (np.array([0, 0]),)), lambda *_: np.eye(3)[0] * 2),
    ("aten::_zero_written", (A, (None, IDX)), lambda g, i: A * (np.arange(4) % 2 == 1)),
    (
        "aten::_gather_last_written",
        (np.arange(4.0), (np.array([1, 3, 1, 0, 3]),)),
        lambda *_: np.array([0.0, 0.0, 1.0, 0.0, 3.0]),
    ),
    (
        "aten::_scatter_last_written",
        (np.array([5.0, 6.0, 7.0]), (4,), (np.array([1, 3, 1]),)),
        lambda *_: np.array([0.0, 7.0, 0.0, 6.0]),
    ),
    ("aten::_gradient_dtype", (F32, A), lambda *_: "float32"),
    ("aten::_gradient_dtype", (2.0, F32), lambda *_: "float32"),
    ("aten::_sequence_as", ((A, V), True), lambda *_: [A, V]),
    ("aten::_sequence_as", ([A, V], False), lambda *_: (A, V)),
    ("aten::_list_head", ([A, V, A],), lambda lst: [A, V]),
    ("aten::_list_head", ((1, 2),), lambda t: [1]),
    ("aten::_add_lists", ([A, V], [A, V]), lambda a, b: [2 * A, 2 * V]),
    (
        "aten::_cumsum_backward",
        (np.array([1.0, 2.0, 3.0]), (3,), 0),
        lambda *_: np.array([6.0, 5.0, 3.0]),
    ),
    (
        "aten::_cumsum_backward",
        (np.arange(4.0), (2, 2), None),
        lambda *_: np.array([[6.0, 6.0], [5.0, 3.0]]),
    ),
    (
        "aten::_diff_backward",
        (np.array([[1.0, 2.0]]), (1, 3), 1, -1),
        lambda *_: np.array([[-1.0, -1.0, 2.0]]),
    ),
    (
        "aten::_diff_backward",
        (np.ones((0, 2)), (2, 2), 3, 0),
        lambda *_: np.zeros((2, 2)),
    ),
    ("aten::concatenate", ((A, A), 0), lambda xs, axis: np.concatenate(xs)),
    ("aten::concatenate", ([A, F32], 1), lambda xs, axis: np.concatenate(xs, axis=1)),
    ("aten::concatenate", ((A, V), None), lambda xs, axis: np.concatenate(xs, axis=None)),
    ("aten::stack", ((V, V, V), 1), lambda xs, axis: np.stack(xs, axis=1)),
    ("aten::moveaxis", (CUBE, 0, -1), lambda a, s, d: np.moveaxis(a, 0, -1)),
    ("aten::moveaxis", (CUBE, [0, 1], (2, 0)), lambda a, s, d: np.moveaxis(a, [0, 1], [2, 0])),
    ("aten::swapaxes", (CUBE, 0, 2), lambda a, i, j: a.swapaxes(0, 2)),
    ("aten::rollaxis", (CUBE, 2, 0), lambda a, axis, start: np.rollaxis(a, 2)),
    ("aten::rollaxis", (CUBE, 0, -1), lambda a, axis, start: np.rollaxis(a, 0, -1)),
    ("aten::_rollaxis_destination", (3, 0, 3), lambda ndim, axis, start: 2),
    ("aten::_negated", ((1, -2),), lambda shift: (-1, 2)),
    ("aten::_negated", (3,), lambda shift: -3),
    ("aten::atleast_1d", (np.asarray(2.0),), lambda a: a.reshape(1)),
    ("aten::atleast_2d", (V,), lambda a: a[None]),
    ("aten::atleast_3d", (V,), lambda a: a[None, :, None]),
    ("aten::atleast_3d", (A,), lambda a: a[:, :, None]),
    ("aten::hstack", ((V, V[:2]),), lambda xs: np.concatenate(xs)),
    ("aten::hstack", ((A, A[:, :1]),), lambda xs: np.concatenate(xs, axis=1)),
    ("aten::vstack", ((A, V),), lambda xs: np.concatenate([A, V[None]])),
    ("aten::column_stack", ((A, A[:, 0]),), lambda xs: np.concatenate([A, A[:, :1]], axis=1)),
    ("aten::append", (A, V, None), lambda a, v, axis: np.concatenate([A.ravel(), V])),
    ("aten::append", (A, A[:1], 0), lambda a, v, axis: np.concatenate([A, A[:1]])),
    ("aten::_append_cut", (A, None), lambda a, axis: 12),
    ("aten::_append_cut", (A, -1), lambda a, axis: 4),
    ("aten::_append_axis", (None,), lambda axis: 0),
    ("aten::_append_axis", (1,), lambda axis: 1),
    # The split family returns NumPy's list of pieces.
    ("aten::split", (A, 2, 1), lambda a, s, axis: [a[:, :2], a[:, 2:]]),
    ("aten::split", (V, (1, 3), 0), lambda a, s, axis: [a[:1], a[1:3], a[3:]]),
    ("aten::array_split", (V, 3, 0), lambda a, s, axis: [a[:2], a[2:3], a[3:]]),
    ("aten::hsplit", (A, 2), lambda a, s: [a[:, :2], a[:, 2:]]),
    ("aten::vsplit", (A, [1]), lambda a, s: [a[:1], a[1:]]),
    ("aten::dsplit", (CUBE, 2), lambda a, s: [a[..., :2], a[..., 2:]]),
    ("aten::repeat", (A, 2, None), lambda a, r, axis: a.repeat(2)),
    ("aten::repeat", (A, (1, 0, 2), 0), lambda a, r, axis: a.repeat([1, 0, 2], axis=0)),
    ("aten::tile", (V, (2, 1, 2)), lambda a, reps: np.tile(a, (2, 1, 2))),
    ("aten::tile", (CUBE, 2), lambda a, reps: np.concatenate([a, a], axis=-1)),
    ("aten::pad", (A, 1, "constant", 0.5), lambda a, *r: np.pad(a, 1, constant_values=0.5)),
    (
        "aten::pad",
        (A, ((0, 1), (2, 3)), "reflect", 0),
        lambda a, *r: np.pad(a, ((0, 1), (2, 3)), mode="reflect"),
    ),
    ("aten::flip", (CUBE, None), lambda a, axis: a[::-1, ::-1, ::-1]),
    ("aten::flip", (CUBE, (0, -1)), lambda a, axis: a[::-1, :, ::-1]),
    ("aten::fliplr", (A,), lambda a: a[:, ::-1]),
    ("aten::flipud", (A,), lambda a: a[::-1]),
    ("aten::rot90", (A, 1, (0, 1)), lambda a, k, axes: np.rot90(a)),
    ("aten::rot90", (CUBE, -1, [2, 0]), lambda a, k, axes: np.rot90(a, -1, (2, 0))),
    ("aten::roll", (A, 1, None), lambda a, shift, axis: np.roll(a, 1)),
    ("aten::roll", (A, (1, -1), (0, 1)), lambda a, shift, axis: np.roll(a, (1, -1), (0, 1))),
    ("aten::fft_fftshift", (A, None), lambda a, axes: np.fft.fftshift(a)),
    ("aten::fft_fftshift", (CUBE, [0, 2]), lambda a, axes: np.fft.fftshift(a, axes=(0, 2))),
    ("aten::fft_ifftshift", (CUBE, -1), lambda a, axes: np.fft.ifftshift(a, axes=-1)),
    ("aten::fft_fft", (A, None, -1, None), lambda a, *r: np.fft.fft(a)),
    ("aten::fft_fft", (F32, 6, 0, "ortho"), lambda a, *r: np.fft.fft(a, 6, 0, "ortho")),
    ("aten::fft_ifft", (A + 1j * POS, 3, 1, None), lambda a, *r: np.fft.ifft(a, 3)),
    (
        "aten::fft_rfft",
        (CUBE, None, 1, "forward"),
        lambda a, *r: np.fft.rfft(a, axis=1, norm="forward"),
    ),
    ("aten::fft_rfft", (F32, 5, -1, None), lambda a, *r: np.fft.rfft(a, 5)),
    ("aten::fft_irfft", (A + 1j * POS, None, -1, None), lambda a, *r: np.fft.irfft(a)),
    ("aten::fft_rfftn", (CUBE, None, None, None), lambda a, *r: np.fft.rfftn(a)),
    ("aten::fft_rfftn", (CUBE, (4, 6), (0, 2), "ortho"), lambda a, *r: np.fft.rfftn(a, *r)),
    ("aten::fft_rfft2", (CUBE, (3, 3), (-2, -1), None), lambda a, *r: np.fft.rfft2(a, (3, 3))),
    ("aten::fft_irfftn", (CUBE + 1j, None, None, None), lambda a, *r: np.fft.irfftn(a)),
    ("aten::fft_irfft2", (CUBE + 1j, (2, 5), (0, 1), None), lambda a, *r: np.fft.irfft2(a, *r)),
    (
        "aten::_rfftn_backward",
        (RFFTN_COTANGENT, CUBE, None, None, None),
        lambda g, x, *r: _rfftn_vjp(g),
    ),
    (
        "aten::_irfftn_backward",
        (IRFFTN_COTANGENT, CUBE + 1j, None, None, None),
        lambda g, z, *r: _irfftn_vjp(g),
    ),
    ("aten::fft_irfft", (A, 5, 0, "ortho"), lambda a, *r: np.fft.irfft(a, 5, 0, "ortho")),
    ("aten::fft_fft2", (CUBE, None, (-2, -1), None), lambda a, *r: np.fft.fft2(a)),
    (
        "aten::fft_ifft2",
        (CUBE, None, (0, 2), "ortho"),
        lambda a, *r: np.fft.ifft2(a, axes=(0, 2), norm="ortho"),
    ),
    ("aten::fft_fftn", (F32, None, None, None), lambda a, *r: np.fft.fftn(a)),
    ("aten::fft_ifftn", (CUBE, None, [1], None), lambda a, *r: np.fft.ifftn(a, axes=(1,))),
    ("aten::fft_fftn", (CUBE, (3, 2), (0, 2), None), lambda a, *r: np.fft.fftn(a, *r)),
    ("aten::fft_fft2", (CUBE, [5, 6], (-2, -1), None), lambda a, *r: np.fft.fft2(a, (5, 6))),
    (
        "aten::_fftn_backward",
        (COMPLEX, A[:2, :3], (3, 4), (0, 1), None, False),
        lambda g, like, *r: np.real(np.fft.fftn(COMPLEX)[:2, :3]),
    ),
    ("aten::real", (A + 1j * POS,), lambda z: A),
    ("aten::real", (F32,), lambda a: a),
    ("aten::imag", (A + 1j * POS,), lambda z: POS),
    ("aten::conj", (A + 1j * POS,), lambda z: A - 1j * POS),
    ("aten::_grad_like", (A + 1j * POS, F32), lambda g, like: A.astype(np.float32)),
    ("aten::_imag_backward", (A, A + 1j * POS), lambda g, like: -1j * A),
    (
        "aten::_fft_backward",
        (np.fft.fft(A, 6), A, 6, -1, None, False),
        lambda g, a, *r: np.real(np.fft.fft(g))[:, :4],
    ),
    (
        "aten::_rfft_backward",
        (np.fft.rfft(A), A, None, -1, None),
        lambda g, a, *r: np.real(np.fft.fft(g, 4)),
    ),
    (
        "aten::_irfft_backward",
        (A, A[:, :3] + 0j, None, -1, None),
        lambda g, z, *r: np.fft.ifft(g)[:, :3] * np.array([1.0, 2.0, 1.0]),
    ),
    ("aten::diag", (V, 1), lambda v, k: np.diag(v, 1)),
    ("aten::diag", (A, -1), lambda a, k: np.array([A[1, 0], A[2, 1]])),
    ("aten::diagonal", (CUBE, 1, 2, 0), lambda a, *r: a.diagonal(1, 2, 0)),
    ("aten::trace", (A, 0, 0, 1), lambda a, *r: a.trace()),
    ("aten::trace", (INTS.astype(np.int32), 1, 0, 1), lambda a, *r: np.int64(1 + 6 + 11)),
    ("aten::tril", (A, -1), lambda a, k: np.tril(a, -1)),
    ("aten::triu", (V, 0), lambda v, k: np.triu(np.broadcast_to(v, (4, 4)))),
    ("aten::take", (A, IDX, None), lambda a, i, axis: a.ravel()[[2, 0]]),
    (
        "aten::select_by_conditions",
        ((MASK, A < -0.5), (A, V), 0.5),
        lambda c, x, d: np.where(MASK, A, np.where(A < -0.5, V, 0.5)),
    ),
    ("aten::_select_index", ((MASK, A < -0.5), A), lambda c, out: np.select(c, [0, 1], 2)),
    (
        "aten::_select_choices_backward",
        (A, np.select([MASK], [0], 1) + 0 * INTS, ((3, 4), (4,))),
        lambda g, taken, shapes: (np.where(MASK, A, 0), np.where(MASK, 0, A).sum(0)),
    ),
    (
        "aten::_select_choices_join",
        ((A, V), np.select([MASK, A < -0.5], [0, 1], 2)),
        lambda pieces, taken: np.select([MASK, A < -0.5], [A, V], 0.0),
    ),
    ("aten::take", (CUBE, np.array([[0, 2], [1, 1]]), -1), lambda a, i, axis: a[..., i]),
    ("aten::take", (A, 1, 0), lambda a, i, axis: a[1]),
    ("aten::linalg_inv", (A[:, :3] + 3 * np.eye(3),), np.linalg.inv),
    ("aten::linalg_inv", (F32[:, :3] + np.eye(3, dtype=np.float32),), np.linalg.inv),
    ("aten::linalg_det", (CUBE[..., :3],), np.linalg.det),
    ("aten::linalg_slogdet", (A[:, :3],), lambda a: tuple(np.linalg.slogdet(a))),
    ("aten::linalg_solve", (A[:, :3] + 3 * np.eye(3), V[:3]), np.linalg.solve),
    ("aten::linalg_solve", (CUBE[..., :3] + 3 * np.eye(3), A[:, :2]), np.linalg.solve),
    ("aten::linalg_cholesky", (A @ A.T + np.eye(3),), np.linalg.cholesky),
    ("aten::linalg_eigh", (A @ A.T, "L"), lambda a, uplo: tuple(np.linalg.eigh(a))),
    ("aten::linalg_eigh", (SQUARE, "U"), lambda a, uplo: tuple(np.linalg.eigh(np.triu(a), "U"))),
    ("aten::_reads_upper", ("U",), lambda uplo: True),
    (
        "aten::linalg_eig",
        (SQUARE,),
        lambda a: tuple(x.astype(complex) for x in np.linalg.eig(a)),
    ),
    ("aten::gradient", (V, (), None, 1), lambda f, *rest: np.gradient(f)),
    (
        "aten::gradient",
        (A, (0.5, 2.0), None, 2),
        lambda f, *rest: np.gradient(f, 0.5, 2.0, edge_order=2),
    ),
    (
        "aten::gradient",
        (CUBE, (0.5,), (2, 0), 1),
        lambda f, *rest: np.gradient(f, 0.5, axis=(2, 0)),
    ),
    (
        "aten::_gradient_backward",
        (np.ones(4), (), None, 1),
        lambda *args: np.gradient(np.eye(4), axis=0).sum(0),
    ),
    ("aten::_reads_upper", ("L",), lambda uplo: False),
    ("aten::linalg_svd", (A, False, True), lambda a, *_: tuple(np.linalg.svd(a, False))),
    ("aten::linalg_svd", (CUBE, True, False), lambda a, *_: np.linalg.svd(a, compute_uv=False)),
    ("aten::linalg_pinv", (A,), np.linalg.pinv),
    ("aten::linalg_norm", (A, None, None, False), lambda x, *_: np.linalg.norm(x)),
    ("aten::linalg_norm", (CUBE, "fro", (0, 2), True), lambda x, *r: np.linalg.norm(x, *r)),
    ("aten::linalg_norm", (INTS, 1, 0, False), lambda x, *_: np.linalg.norm(x, 1, axis=0)),
    (
        "aten::_svd_leading",
        (np.arange(12.0).reshape(3, 4) * [1.0, 1.0, 0.0, 0.0], 2, -1),
        lambda g, *_: g[:, :2],
    ),
    (
        "aten::_join_backward",
        (np.arange(7.0), ((4,), (), (2,)), 0),
        lambda *_: (np.arange(4.0), np.array(4.0), np.arange(5.0, 7.0)),
    ),
    (
        "aten::_join_backward",
        (np.ones((3, 4)), ((4,), (2, 4)), 0),
        lambda *_: (np.ones(4), np.ones((2, 4))),
    ),
    ("aten::_join", ((np.arange(4.0), np.ones((2, 4))), 0, 2), lambda t, a, n: np.vstack(t)),
    (
        "aten::_column_join_backward",
        (A, ((3, 2), (3,), (3, 1)), 1),
        lambda g, shapes, axis: (A[:, :2], A[:, 2], A[:, 3:]),
    ),
    (
        "aten::_column_join",
        ((V, A.T), 1),
        lambda t, axis: np.concatenate([V[:, None], A.T], axis=1),
    ),
    ("aten::r_concatenate", ((V, A[0], V[:1]),), lambda t: np.r_[V, A[0], V[:1]]),
    ("aten::r_concatenate", ((A, A[:1]),), lambda t: np.r_[A, A[:1]]),
    ("aten::c_concatenate", ((A, A[:, 0]),), lambda t: np.c_[A, A[:, 0]]),
    ("aten::c_concatenate", ((CUBE, CUBE),), lambda t: np.c_[CUBE, CUBE]),
    ("aten::_join", ((np.array(1.0), np.arange(2.0)), 0, 1), lambda t, a, n: np.hstack(t)),
    ("aten::_repeat_backward", (np.arange(6.0), (3,), 2, None), lambda *_: np.array([1.0, 5, 9])),
    (
        "aten::_repeat_backward",
        (np.ones((3, 2)), (2, 2), (1, 2), 0),
        lambda *_: np.array([[1.0, 1.0], [2.0, 2.0]]),
    ),
    ("aten::_tile_backward", (np.ones((2, 6)), (3,), (2, 2)), lambda *_: np.full(3, 4.0)),
    (
        "aten::_pad_backward",
        (np.ones((4, 5)), (2, 3), 1, "constant"),
        lambda *_: (np.ones((2, 3)), np.array(14.0)),
    ),
    (
        "aten::_pad_backward",
        (np.ones(5), (3,), 1, "edge"),
        lambda *_: (np.array([2.0, 1.0, 2.0]), np.array(0.0)),
    ),
    (
        "aten::_diagonal_backward",
        (np.array([1.0, 2.0]), (2, 3), 1, 0, 1),
        lambda *_: np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 2.0]]),
    ),
    (
        "aten::_diag_backward",
        (np.arange(9.0).reshape(3, 3), (2,), 1),
        lambda *_: np.array([1.0, 5.0]),
    ),
    (
        "aten::_diag_backward",
        (np.array([1.0, 2.0]), (2, 3), 1),
        lambda *_: np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 2.0]]),
    ),
    (
        "aten::_take_backward",
        (np.ones(3), (4,), np.array([0, 0, 3]), None),
        lambda *_: np.array([2.0, 0.0, 0.0, 1.0]),
    ),
    (
        "aten::_take_backward",
        (np.ones((2, 3)), (2, 2), np.array([1, 1, 0]), 1),
        lambda *_: np.array([[1.0, 2.0], [1.0, 2.0]]),
    ),
    ("aten::tensordot", (CUBE, A.T, 1), lambda a, b, n: np.tensordot(a, b, 1)),
    ("aten::tensordot", (CUBE, A, ((1, 2), (0, 1))), lambda a, b, ax: np.tensordot(a, b, ax)),
    ("aten::einsum", ("ij,j->i", (A, V)), lambda s, ops: np.einsum(s, *ops)),
    ("aten::einsum", ("ii", (A[:, :3],)), lambda s, ops: np.einsum(s, *ops)),
    ("aten::einsum", ("...j,j...", (CUBE, V)), lambda s, ops: np.einsum(s, *ops)),
    ("aten::inner", (A, V), np.inner),
    ("aten::outer", (V, A), np.outer),
    ("aten::kron", (A, V), np.kron),
    ("aten::cross", (A[:, :3], V[:3], -1, -1, -1, None), lambda a, b, *axes: np.cross(a, b)),
    (
        "aten::cross",
        (A[:, :3].T, V[:3], 0, 0, 0, None),
        lambda a, b, *axes: np.cross(A[:, :3], V[:3]).T,
    ),
    (
        "aten::cross",
        (CUBE[:, :, :3], CUBE[:1, :, :3], 1, -1, 0, 2),
        lambda a, b, *axes: np.moveaxis(np.cross(a, b), -1, 2),
    ),
    ("aten::_cross_axes", (0, 1, -1, None), lambda *axes: (0, 1, -1)),
    ("aten::_cross_axes", (0, 1, -1, 1), lambda *axes: (1, 1, 1)),
    ("aten::sort", (A, 0, None, None), lambda a, axis, *_: np.sort(a, axis=0)),
    ("aten::sort", (A, None, "stable", None), lambda a, *_: np.sort(a, axis=None)),
    ("aten::partition", (V, (0, 1, 2, 3), -1), lambda a, kth, axis: np.sort(a)),
    ("aten::argpartition", (V, (0, 1, 2, 3), -1), lambda a, kth, axis: np.argsort(a)),
    (
        "aten::_einsum_backward",
        (np.ones(3), "ij,j->i", (np.zeros((3, 2)), np.array([1.0, 2.0]))),
        lambda *_: (np.array([[1.0, 2.0]] * 3), np.zeros(2)),
    ),
    (
        "aten::_einsum_backward",
        (np.array([1.0, 2.0]), "ii->i", (np.zeros((2, 2)),)),
        lambda *_: (np.array([[1.0, 0.0], [0.0, 2.0]]),),
    ),
    (
        "aten::_einsum_double_backward",
        ((np.ones((3, 2)), np.ones(2)), np.ones(3), "ij,j->i", (np.ones((3, 2)), np.ones(2))),
        lambda *_: (np.full(3, 4.0), (np.full((3, 2), 1.0), np.full(2, 3.0))),
    ),
    (
        # E = g * a.b: its gradients (u b + g Vb, u a + g Va), ca.Vb + Va.cb, (u cb, u ca).
        "aten::_einsum_triple_backward",
        (
            np.array(1.0),
            (np.array([1.0, 0.0]), np.array([0.0, 1.0])),
            (np.array([1.0, 1.0]), np.array([2.0, 2.0])),
            np.array(2.0),
            "i,i->",
            (np.array([1.0, 2.0]), np.array([3.0, 4.0])),
        ),
        lambda *_: (
            (np.array([3.0, 6.0]), np.array([3.0, 2.0])),
            np.array(3.0),
            (np.array([2.0, 2.0]), np.array([1.0, 1.0])),
        ),
    ),
    ("aten::_tensordot_subscripts", (3, 2, 1), lambda *_: "abc,ce->abe"),
    ("aten::_tensordot_subscripts", (2, 2, ((0,), (-1,))), lambda *_: "ab,ca->bc"),
    ("aten::_inner_subscripts", (2, 1), lambda *_: "ab,b->a"),
    ("aten::_inner_subscripts", (0, 2), lambda *_: ",ab->ab"),
    ("aten::_kron_subscripts", (2, 1), lambda *_: "ab,d->abd"),
    ("aten::_kron_split", ((2, 3), (4,)), lambda *_: (2, 3, 4)),
    (
        "aten::_permute",
        (np.array([[1.0, 2.0, 3.0]]), np.array([[2, 0, 1]]), -1),
        lambda *_: np.array([[3.0, 1.0, 2.0]]),
    ),
    ("aten::_permute", (np.eye(2), np.array([3, 0]), None), lambda *_: np.array([1.0, 1.0])),
    (
        "aten::_unpermute",
        (np.array([10.0, 20.0, 30.0]), (3,), np.array([2, 0, 1]), -1),
        lambda *_: np.array([20.0, 30.0, 10.0]),
    ),
    (
        "aten::_unpermute",
        (np.array([10.0, 20.0, 30.0, 40.0]), (2, 2), np.array([3, 0, 2, 1]), None),
        lambda *_: np.array([[20.0, 40.0], [30.0, 10.0]]),
    ),
    ("aten::astype", (A, "float32"), lambda a, dtype: a.astype(np.float32)),
    ("aten::cast", (A, "float32"), lambda a, dtype: np.float32(a)),
    ("aten::cast", (np.asarray(2.5), "int64"), lambda a, dtype: np.int64(2)),
    ("aten::asarray", (2.5,), np.asarray),
    ("aten::shape", (CUBE,), lambda a: a.shape),
    ("aten::ndim", (CUBE,), lambda a: a.ndim),
    ("aten::size", (CUBE,), lambda a: a.size),
    ("aten::zeros", ((2, 3), None), lambda s, dtype: np.zeros((2, 3))),
    ("aten::zeros", (3, "float32"), lambda s, dtype: np.zeros(3, dtype=np.float32)),
    ("aten::ones", ([2], "int32"), lambda s, dtype: np.ones(2, dtype=np.int32)),
    ("aten::full", ((2,), 1.5, None), lambda s, v, dtype: np.full(2, 1.5)),
    ("aten::arange", (5, None, None, None), lambda *a: np.arange(5)),
    ("aten::arange", (1.0, 2.0, 0.25, None), lambda *a: np.arange(1.0, 2.0, 0.25)),
    ("aten::arange", (0, 10, 3, "float32"), lambda *a: np.arange(0, 10, 3, dtype=np.float32)),
    ("aten::eye", (3, None, 0, None), lambda *a: np.eye(3)),
    ("aten::eye", (3, 4, 1, "int32"), lambda *a: np.eye(3, 4, k=1, dtype=np.int32)),
    ("aten::zeros_like", (F32, None), lambda a, dtype: np.zeros_like(a)),
    ("aten::ones_like", (INTS, "float64"), lambda a, dtype: np.ones_like(a, dtype=np.float64)),
    ("aten::full_like", (A, 7, None), lambda a, v, dtype: np.full_like(a, 7)),
    (
        "aten::linspace",
        (V, 2.0, 5, False, None, 1),
        lambda *a: np.linspace(V, 2.0, 5, False, axis=1),
    ),
    ("aten::select", (A, 0, 1), lambda a, axis, i: a[1]),
    ("aten::select", (A, 1, -1), lambda a, axis, i: a[:, -1]),
    ("aten::select", (CUBE, -1, 0), lambda a, axis, i: a[..., 0]),
    ("aten::select", (V, 0, 2), lambda a, axis, i: a[2]),
    ("aten::slice", (A, 0, 1, None, None), lambda a, *b: a[1:]),
    ("aten::slice", (A, 1, None, None, -2), lambda a, *b: a[:, ::-2]),
    ("aten::slice", (CUBE, -1, 0, 2, None), lambda a, *b: a[..., 0:2]),
    ("aten::index", (A, IDX), lambda a, i: a[[2, 0]]),
    ("aten::index", (A, None, np.array([3, 1])), lambda a, *i: a[:, [3, 1]]),
    ("aten::index", (A, MASK), lambda a, m: a[m]),
    ("aten::index", (CUBE, np.array([1]), None, 0), lambda a, *i: a[[1], :, 0]),
    ("prim::TupleConstruct", (1, 2.0), lambda *xs: (1, 2.0)),
    ("prim::TupleUnpack", ((1, 2),), tuple),
    ("prim::TupleIndex", ((1, 2, 3), -1), operator.getitem),
    ("prim::TupleSlice", ((1, 2, 3), 1, None, None), lambda t, *b: t[1:]),
    ("prim::TupleConcat", ((2, 3), (1,)), lambda a, b: (2, 3, 1)),
    ("prim::ListConstruct", (A, V), lambda *xs: [A, V]),
    ("prim::ListUnpack", ([1, 2],), tuple),
    ("prim::ListIndex", ([4, 5], 1), operator.getitem),
    ("prim::ListAppend", ([A], V), lambda lst, v: [A, V]),
    ("prim::ListAppend", ([], 3), lambda lst, v: [3]),
    ("prim::ListAppend", ((1, 2), 3), lambda t, v: [1, 2, 3]),
    ("prim::AutogradAdd", (A, V), lambda a, b: a + b),
    ("prim::add", (2, 3), lambda a, b: a + b),
    ("prim::add", (True, True), lambda a, b: a + b),
    ("prim::sub", (2, 0.5), lambda a, b: a - b),
    ("prim::mul", (3, 4), lambda a, b: a * b),
    ("prim::truediv", (7, 2), lambda a, b: a / b),
    ("prim::floordiv", (7, 2), lambda a, b: a // b),
    ("prim::mod", (-7, 3), lambda a, b: a % b),
    ("prim::bitand", (6, 3), lambda a, b: a & b),
    ("prim::bitor", (True, False), lambda a, b: a | b),
    ("prim::bitxor", (-5, 3), lambda a, b: a ^ b),
    ("prim::invert", (5,), lambda a: ~a),
    ("prim::pow", (2, -1), lambda a, b: a**b),
    ("prim::min", (1, 2.5), min),
    ("prim::max", (1, 2.5), max),
    ("prim::eq", (1, 1.0), lambda a, b: a == b),
    ("prim::ne", (1, 2), lambda a, b: a != b),
    ("prim::lt", (1, 2), lambda a, b: a < b),
    ("prim::le", (2, 2), lambda a, b: a <= b),
    ("prim::gt", (1, 2), lambda a, b: a > b),
    ("prim::ge", (3, 2), lambda a, b: a >= b),
    ("prim::neg", (3,), lambda a: -a),
    ("prim::abs", (-2.5,), abs),
    ("prim::int", (3.7,), int),
    ("prim::int", (np.float64(2.0),), int),
    ("prim::float", (2,), float),
    ("prim::bool", (0,), bool),
    ("prim::not", (0,), lambda a: not a),
    ("prim::sequence_eq", ((3, 4), (3, 4)), operator.eq),
    ("prim::sequence_eq", ((3, 4), [3, 4]), operator.eq),
    ("prim::len", ((1, 2, 3),), len),
    ("prim::len", (A,), len),
    # Tapes (Note [Loop tapes]): the writes fill their operand in place and return it.
    ("prim::TapeArray", (0, (3,), "float32"), lambda *_: np.empty((0, 3), np.float32)),
    ("prim::TapeArray", (-2, (), "float64"), lambda *_: np.empty((0,))),
    (
        "prim::TapeWrite",
        (np.zeros((2, 2)), 1, np.array([1.0, 2.0])),
        lambda *_: np.array([[0.0, 0.0], [1.0, 2.0]]),
    ),
    ("prim::TapeWrite", (np.zeros((1, 2)), 0, None), lambda *_: np.zeros((1, 2))),
    ("prim::TapeList", (), lambda: []),
    ("prim::TapePush", ([1.5], 2.5), lambda *_: [1.5, 2.5]),
    ("prim::Uninitialized", (), lambda: None),
    # The caller's array receives the final contents (Note [Functionalisation]).
    ("prim::WriteBack", (np.zeros(2), np.ones(2)), lambda *_: ()),
    # print(...) and f-strings, at run time (issue 17, item 5).
    ("prim::Print", (None, None, False, "value", A), lambda *_: ()),
    ("prim::Format", ("{:.2f} and {!r}", 1.5, V), lambda t, *v: t.format(*v)),
    # A random draw (issue 17, item 4): from a stream seeded afresh for each draw, so that the
    # case and its reference draw the same numbers however often they run.
    (
        "prim::Draw",
        (ReseededStream(), "normal", 0.5, 2.0, (2, 3)),
        lambda *_: np.random.RandomState(0).normal(0.5, 2.0, (2, 3)),
    ),
    ("prim::Draw", (ReseededStream(), "randint", 0, 10, 4), lambda *_: _reseeded_ints(4)),
    # Positions of rows (Note [Draws of rows] in `ir.ops.random`): those of choice(len(a)).
    (
        "prim::Draw",
        (ReseededStream(), "choice_rows", (5,), 3, True, None),
        lambda *_: _reseeded_choice(5, 3),
    ),
    # A generator made inside (Note [Generators made inside] in `ir.ops.random`): a new one,
    # seeded as NumPy seeds it.
    ("prim::MakeGenerator", ("default_rng", 7), lambda *_: np.random.default_rng(7)),
    ("prim::MakeGenerator", ("RandomState", 7), lambda *_: np.random.RandomState(7)),
    ("prim::MakeGenerator", ("Philox", 7), lambda *_: np.random.Generator(np.random.Philox(7))),
    # What df reads, saved before the write-back (Note [Arguments written to]): arrays in it
    # that may share memory with a written argument are copies, the others the arrays given.
    # The argument once written back (Note [Returned arguments]): its target, which then holds
    # its value.
    ("prim::WrittenArgument", (A, A.copy()), lambda v, _: v),
    ("prim::CopyIfShared", (A[1], A), lambda v, _: v.copy()),
    ("prim::CopyIfShared", ((A, [V, 2.0]), V), lambda *_: (A, [V.copy(), 2.0])),
    ("prim::CopyIfShared", (np.float64(1.5), A, V), lambda *_: np.float64(1.5)),
    ("aten::_zeros_like_value", ([A, (2.5, V)],), lambda v: [0 * A, (0.0, 0 * V)]),
    # Writes (Note [In-place operators]): each case owns the array its kernel fills, and the
    # reference builds the expected result without reading that array.
    ("aten::copy", (A,), lambda a: a.copy()),
    ("aten::copy", (np.float64(0.5),), lambda s: np.array(0.5)),
    # ``x.copy()`` keeps a NumPy scalar a NumPy scalar, as NumPy's method does.
    ("aten::copy_method", (A,), lambda a: a.copy()),
    ("aten::copy_method", (np.float32(0.5),), lambda s: np.float32(0.5)),
    ("aten::copy_", (np.zeros((2, 3)), np.arange(3.0)), lambda *_: np.tile(np.arange(3.0), (2, 1))),
    ("aten::copy_", (np.zeros(3, np.int64), np.array([1, 2, 3])), lambda *_: np.array([1, 2, 3])),
    ("aten::copy_", (np.float64(1.0), np.float64(2.5)), lambda *_: np.float64(2.5)),
    (
        "aten::index_put_",
        (np.zeros((3, 2)), 1.0, np.array([2, 2]), None),
        lambda *_: np.array([[0.0, 0.0], [0.0, 0.0], [1.0, 1.0]]),
    ),
    ("aten::index_put_", (np.zeros(3), 5.0, np.array([True, False, True])), lambda *_: 5.0 * MASK3),
    (
        "aten::add_at_",
        (np.zeros(3), 1.0, np.array([0, 0, 2])),
        lambda *_: np.array([2.0, 0.0, 1.0]),
    ),
    (
        "aten::add_at_",
        (np.zeros((2, 2)), np.array([1.0, 2.0]), np.array([1, 1]), np.array([0, 0])),
        lambda *_: np.array([[0.0, 0.0], [3.0, 0.0]]),
    ),
    # Taps (Note [Taps] in `autodiff.taps`): the identity; with no hooks active, _run_hooks too.
    ("aten::_tap", (A, "h"), lambda a, _: a),
    ("aten::_tap_hooked", (A, "h"), lambda a, _: a),
    ("aten::stop_gradient", (A,), lambda a: a),
    ("prim::CustomVjp", ("test_ops.doubling", A), lambda _, a: 2 * a),
    ("prim::CustomVjpFwd", ("test_ops.doubling", A), lambda _, a: (2 * a, a)),
    ("prim::CustomVjpBwd", ("test_ops.doubling", None, A), lambda _, r, g: (2 * g,)),
    ("prim::PureCallback", ("test_ops.doubling", A), lambda _, a: 2 * a),
    ("aten::_checkpoint_in", (A, "layer"), lambda a, _: a),
    ("aten::_checkpoint_out", (A, "layer"), lambda a, _: a),
    ("aten::_run_hooks", (A, "h"), lambda a, _: a),
    # scipy.special (skipped without SciPy): the reference calls SciPy as user code spells it
    *[
        (f"aten::special_{name}", (operand,), _scipy(lambda sp, x, name=name: getattr(sp, name)(x)))
        for name, operand in [
            ("expit", F32),
            ("logit", POS / 3.0),
            ("gammaln", POS),
            ("gamma", POS),
            ("digamma", F32),
            ("erf", A),
            ("erfc", A),
            ("erfinv", np.tanh(F32)),
            ("erfcinv", POS / 2.0),
            ("ndtr", A),
            ("log_ndtr", 2.0),
            ("ndtri", POS / 3.0),
            ("entr", POS),
            ("i0", A),
            ("i1", F32),
            ("i0e", A),
            ("i1e", A),
            ("j0", A),
            ("j1", A),
            ("y0", POS),
            ("y1", POS),
        ]
    ],
    ("aten::special_betaln", (POS, V + 3.0), _scipy(lambda sp, a, b: sp.betaln(a, b))),
    ("aten::special_beta", (F32, 2.0), _scipy(lambda sp, a, b: sp.beta(a, b))),
    ("aten::special_xlogy", (A, POS), _scipy(lambda sp, x, y: sp.xlogy(x, y))),
    ("aten::special_xlog1py", (V, POS), _scipy(lambda sp, x, y: sp.xlog1py(x, y))),
    ("aten::special_rel_entr", (POS, F32), _scipy(lambda sp, x, y: sp.rel_entr(x, y))),
    ("aten::special_polygamma", (2, POS), _scipy(lambda sp, n, x: sp.polygamma(n, x))),
    ("aten::special_jv", (1.5, POS), _scipy(lambda sp, v, x: sp.jn(v, x))),
    ("aten::special_yn", (IDX, POS[:, :2]), _scipy(lambda sp, n, x: sp.yn(n, x))),
    ("aten::special_yv", (0.5, POS), _scipy(lambda sp, v, x: sp.yv(v, x))),
    ("aten::special_iv", (2.5, F32), _scipy(lambda sp, v, x: sp.iv(v, x))),
    ("aten::special_ive", (1.0, A), _scipy(lambda sp, v, x: sp.ive(v, x))),
    ("aten::special_multigammaln", (POS + 2.0, 3), _scipy(lambda sp, a, d: sp.multigammaln(a, d))),
    (
        "aten::special_logsumexp",
        (CUBE, (0, 2), 1.0, True, False),
        _scipy(lambda sp, a, axis, b, keep, sign: sp.logsumexp(a, axis=axis, keepdims=keep)),
    ),
    (
        "aten::special_logsumexp",
        (A, [1], POS, False, False),
        _scipy(lambda sp, a, axis, b, keep, sign: sp.logsumexp(a, axis=(1,), b=b)),
    ),
    (
        "aten::special_logsumexp_signed",
        (A, 0, A, True),
        _scipy(lambda sp, a, axis, b, keep: sp.logsumexp(a, 0, b, keep, return_sign=True)),
    ),
    ("aten::special_softmax", (F32, None), _scipy(lambda sp, x, axis: sp.softmax(x))),
    ("aten::special_log_softmax", (CUBE, -1), _scipy(lambda sp, x, axis: sp.log_softmax(x, -1))),
    *[
        (
            f"aten::stats_norm_{method}",
            (F32, V, POS),
            _scipy_stats(lambda st, x, loc, scale, m=method: getattr(st.norm, m)(x, loc, scale)),
        )
        for method in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf")
    ],
    (
        "aten::stats_norm_logpdf",
        (2.0, 0.0, 1.0),
        _scipy_stats(lambda st, x, loc, scale: st.norm.logpdf(x)),
    ),
    *[
        (
            f"aten::stats_{name}_{method}",
            operands,
            _scipy_stats(lambda st, *ops, n=name, m=method: getattr(getattr(st, n), m)(*ops)),
        )
        for name, operands in (
            ("t", (F32, 3.0, V, POS)),
            ("gamma", (POS, 2.5, 0.1, 1.5)),
            ("beta", (POS / 2.0, POS, 3.0, 0.0, 1.0)),
            ("chi2", (POS, 3.0, 0.0, 1.0)),
        )
        for method in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf")
    ],
    *[
        (
            f"aten::stats_poisson_{method}",
            (INTS.astype(float), POS, 1.0),
            _scipy_stats(lambda st, k, mu, loc, m=method: getattr(st.poisson, m)(k, mu, loc)),
        )
        for method in ("logpmf", "pmf", "cdf", "logcdf", "sf", "logsf")
    ],
    *[
        (
            f"aten::stats_multivariate_normal_{method}",
            operands,
            _scipy_stats(
                lambda st, x, mean, cov, singular, m=method: getattr(st.multivariate_normal, m)(
                    x, mean, cov, singular
                )
            ),
        )
        for method in ("logpdf", "pdf", "cdf", "logcdf")  # SciPy's cdf is exact in 2-d
        for operands in (
            (A[:, :2], V[:2], SPD[:2, :2], False),
            (V[:2], np.zeros(2), SPD[:2, :2] + np.triu(SQUARE[:2, :2], 1), False),
            (V, np.zeros(1), 2.0, False),
        )
    ],
    (
        "aten::stats_multivariate_normal_logpdf",
        (CUBE, V[:4], POS[0], True),
        _scipy_stats(lambda st, x, mean, cov, s: st.multivariate_normal.logpdf(x, mean, cov, s)),
    ),
    *[
        (
            f"aten::stats_dirichlet_{method}",
            operands,
            _scipy_stats(lambda st, x, alpha, m=method: getattr(st.dirichlet, m)(x, alpha)),
        )
        for method in ("logpdf", "pdf")
        for operands in ((SIMPLEX, POS[:, 0]), (SIMPLEX[:, 0], POS[:, 1]), (SIMPLEX[:2], POS[:, 2]))
    ],
    ("aten::_stats_mvn_covariance", (SQUARE, 0.0), lambda c, m: np.tril(c) + np.tril(c, -1).T),
    ("aten::_stats_mvn_covariance", (V, 0.0), lambda c, m: np.diag(c)),
    ("aten::_stats_mvn_covariance", (2.0, V[:3]), lambda c, m: 2.0 * np.eye(3)),
    (
        "aten::_stats_mvn_covariance_backward",
        (SQUARE, SQUARE, 0.0),
        lambda g, c, m: np.tril(g) + np.tril(g.T, -1),
    ),
    ("aten::_stats_mvn_covariance_backward", (SQUARE, V[:3], 0.0), lambda g, c, m: np.diag(g)),
    ("aten::_stats_mvn_covariance_backward", (SQUARE, 2.0, 0.0), lambda g, c, m: np.trace(g)),
    (
        "aten::_stats_dirichlet_complete",
        (SIMPLEX[:2], V[:3], 1.0),
        lambda x, alpha, total: SIMPLEX[:3],
    ),
    ("aten::_stats_dirichlet_complete", (SIMPLEX, V[:3], 1.0), lambda x, alpha, total: x),
    (
        "aten::_stats_dirichlet_complete_backward",
        (SIMPLEX, SIMPLEX[:2], V[:3]),
        lambda g, x, alpha: g[:2] - g[2],
    ),
    ("aten::convolve", (V, MASK3, "same"), lambda a, v, mode: np.convolve(a, v, mode)),
    ("aten::convolve", (MASK3, V, "valid"), lambda a, v, mode: np.convolve(a, v, mode)),
    ("aten::correlate", (MASK3, V, "same"), lambda a, v, mode: np.correlate(a, v, mode)),
    ("aten::correlate", (V, COMPLEX[0], "full"), lambda a, v, mode: np.correlate(a, v, mode)),
    (
        "aten::signal_convolve",
        (CUBE, A[:2, :2, None], "same", "direct"),
        _scipy_signal(lambda sg, a, b, mode, method: sg.convolve(a, b, mode, method)),
    ),
    (
        "aten::signal_convolve",
        (F32[:2], F32, "valid", "fft"),
        _scipy_signal(lambda sg, a, b, mode, method: sg.convolve(a, b, mode, method=method)),
    ),
    (
        "aten::signal_correlate",
        (COMPLEX, A[:2, :3], "full", "auto"),
        _scipy_signal(lambda sg, a, b, mode, method: sg.correlate(a, b)),
    ),
    (
        "aten::signal_convolve2d",
        (A, SQUARE[:2], "same", "wrap", 0.0),
        _scipy_signal(lambda sg, a, b, mode, bd, fv: sg.convolve2d(a, b, mode, boundary=bd)),
    ),
    (
        "aten::signal_correlate2d",
        (A, SQUARE[:2], "full", "fill", 1.5),
        _scipy_signal(lambda sg, a, b, mode, bd, fv: sg.correlate2d(a, b, fillvalue=fv)),
    ),
    (
        "aten::_boundary_pad_mode",
        ("symm",),
        lambda boundary: "symmetric",
    ),
    *[
        (
            "aten::_cotangent_padding",
            (shape1, shape2, mode, style),
            _scipy_signal(lambda sg, s1, s2, mode, style: found_padding(s1, s2, mode, style)),
        )
        for shape1, shape2 in (((5, 2), (2, 3)), ((2, 3), (4, 3)))
        for mode in ("full", "valid", "same")
        for style in ("scipy", "scipy2d", "scipy_correlate2d")
        if mode != "valid" or shape1 == (2, 3)
    ],
    *[
        (
            "aten::_cotangent_padding",
            ((n,), (m,), mode, style),
            _scipy_signal(lambda sg, s1, s2, mode, style: found_padding(s1, s2, mode, style)),
        )
        for n, m in ((5, 2), (2, 5), (4, 4))
        for mode in ("full", "valid", "same")
        for style in ("numpy_convolve", "numpy_correlate")
    ],
    *[
        (
            "aten::_swaps_operands",
            (shape1, shape2, mode),
            _scipy_signal(lambda sg, s1, s2, mode: correlate2d_conjugates(s1, s2, mode)),
        )
        for shape1, shape2, mode in (
            ((2, 3), (3, 4), "valid"),
            ((2, 4), (2, 3), "valid"),
            ((3, 3), (3, 3), "valid"),
            ((2, 3), (3, 4), "same"),
        )
    ],
    ("aten::_boundary_widths", ((2, 3), "same"), lambda shape, mode: ((1, 1), (2, 2))),
    ("aten::_boundary_widths", ((2, 3), "valid"), lambda shape, mode: ((0, 0), (0, 0))),
    # scipy.linalg (skipped without SciPy)
    (
        "aten::scipy_solve_triangular",
        (WELL, A[:, :2], "T", True, False, True),
        _scipy_linalg(lambda sl, a, b, *opts: sl.solve_triangular(a, b, trans="T", lower=True)),
    ),
    (
        "aten::scipy_solve_triangular",
        (WELL.astype(np.float32), F32[:, 0], 0, False, True, False),
        _scipy_linalg(
            lambda sl, a, b, *opts: sl.solve_triangular(
                a, b, unit_diagonal=True, check_finite=False
            )
        ),
    ),
    ("aten::scipy_cholesky", (SPD, False, True), _scipy_linalg(lambda sl, a, *o: sl.cholesky(a))),
    (
        "aten::scipy_cholesky",
        (SPD.astype(np.float32), True, True),
        _scipy_linalg(lambda sl, a, *o: sl.cholesky(a, lower=True)),
    ),
    (
        "aten::scipy_cho_factor",
        (SPD, False, True),
        _scipy_linalg(lambda sl, a, *o: sl.cho_factor(a)),
    ),
    (
        "aten::scipy_cho_factor",
        (np.stack([SPD, 2 * SPD]), True, True),
        # SciPy returns a stack's pair as a list, a matrix's as a tuple: the kernel, a tuple
        _scipy_linalg(lambda sl, a, *o: tuple(sl.cho_factor(a, lower=True))),
    ),
    (
        "aten::scipy_cho_solve",
        ((np.linalg.cholesky(SPD), True), A[:, :2], True),
        _scipy_linalg(lambda sl, c, b, *o: sl.cho_solve(c, b)),
    ),
    ("aten::scipy_lu_factor", (SQUARE, True), _scipy_linalg(lambda sl, a, *o: sl.lu_factor(a))),
    (
        "aten::scipy_lu_solve",
        (LU_PAIR, CUBE[..., :3, :2], 1, True),
        _scipy_linalg(lambda sl, lu, b, trans, *o: sl.lu_solve(lu, b, trans=1)),
    ),
    ("aten::scipy_expm", (SQUARE,), _scipy_linalg(lambda sl, a: sl.expm(a))),
    ("aten::scipy_expm", (F32[:, :3],), _scipy_linalg(lambda sl, a: sl.expm(a))),
    ("aten::scipy_sqrtm", (SPD,), _scipy_linalg(lambda sl, a: sl.sqrtm(a))),
    (
        "aten::scipy_solve_sylvester",
        (WELL, WELL[:2, :2], A[:, :2]),
        _scipy_linalg(lambda sl, a, b, q: sl.solve_sylvester(a, b, q)),
    ),
    ("aten::scipy_det", (SQUARE, True), _scipy_linalg(lambda sl, a, *o: sl.det(a))),
    ("aten::scipy_det", (F32[:, :3], True), _scipy_linalg(lambda sl, a, *o: sl.det(a))),
    (
        "aten::scipy_solve",
        (WELL, V[:3], False, True, None, True),
        _scipy_linalg(lambda sl, a, b, *o: sl.solve(a, b, transposed=True)),
    ),
    ("aten::_lu_permutation", (np.array([2, 2, 2], dtype=np.int32), SQUARE), _row_swaps),
    ("aten::_transposes", ("C",), lambda trans: trans in (1, 2, "T", "C")),
    ("aten::_transposes", (0,), lambda trans: trans in (1, 2, "T", "C")),
    ("aten::_reads_one_triangle", ("pos",), lambda assume_a: assume_a in ("sym", "her", "pos")),
    ("aten::_reads_one_triangle", (None,), lambda assume_a: assume_a in ("sym", "her", "pos")),
    ("aten::_solve_read_mask", ("tridiagonal", SQUARE), lambda a, like: (np.abs(_TRI) < 2) * 1.0),
    ("aten::_solve_read_mask", ("pos", F32[:, :3]), lambda a, like: np.ones((3, 3), np.float32)),
    (
        "aten::scipy_solve",
        (SPD, CUBE[..., :3, :2], True, True, "pos", False),
        _scipy_linalg(lambda sl, a, b, *o: sl.solve(a, b, lower=True, assume_a="pos")),
    ),
]


def assert_same(actual: Any, expected: Any) -> None:
    """Equal values of the same Python type, and for NumPy values the same dtype and shape."""
    assert type(actual) is type(expected), (type(actual), type(expected))
    if isinstance(expected, tuple | list):
        assert len(actual) == len(expected)
        for a, e in zip(actual, expected, strict=True):
            assert_same(a, e)
    elif isinstance(expected, np.random.Generator):  # the same kind, in the same state
        assert_same(actual.bit_generator.state, expected.bit_generator.state)
    elif isinstance(expected, np.random.RandomState):
        assert_same(actual.get_state(legacy=False), expected.get_state(legacy=False))
    elif isinstance(expected, dict):
        assert actual.keys() == expected.keys()
        for key in expected:
            assert_same(actual[key], expected[key])
    elif isinstance(expected, np.ndarray | np.generic):
        assert actual.dtype == expected.dtype
        assert np.shape(actual) == np.shape(expected)
        np.testing.assert_allclose(actual, expected, rtol=1e-12)
    else:
        assert actual == expected


def _on_diagonal(x: np.ndarray, values: Any) -> np.ndarray:
    result = x.copy()
    np.fill_diagonal(result, values)
    return result


def _put(x: np.ndarray, index: Any, values: Any) -> np.ndarray:
    """``x[index] = values`` on a copy: the reference of the scatters."""
    result = x.copy()
    result[index] = values
    return result


@pytest.mark.parametrize(
    ("kind", "operands", "reference"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)]
)
def test_kernel_matches_numpy(kind: str, operands: tuple[Any, ...], reference: Any) -> None:
    kernel = OPS[kind].kernel
    assert kernel is not None
    expected = reference(*operands)  # skips a SciPy case without SciPy, before the kernel runs
    assert_same(kernel(*operands), expected)


def test_every_kernel_has_a_case() -> None:
    with_kernel = {name for name, op in OPS.items() if op.kernel is not None}
    raising = {"prim::RaiseException"}  # its case: the test below
    assert with_kernel - {c[0] for c in CASES} - raising == set()


def test_raise_exception_raises_what_the_program_names() -> None:
    kernel = OPS["prim::RaiseException"].kernel
    assert kernel is not None
    with pytest.raises(ProgramRaised) as info:
        kernel("ValueError", "bad input")
    assert (info.value.kind, info.value.message) == ("ValueError", "bad input")
    located = located_user_exception(info.value, None)
    assert isinstance(located, ValueError)
    assert str(located) == "error: ValueError: bad input"
    assert not OPS["prim::RaiseException"].pure


def test_copy_if_shared_copies_exactly_the_arrays_that_share_memory() -> None:
    kernel = OPS["prim::CopyIfShared"].kernel
    assert kernel is not None
    x, y = np.arange(6.0), np.ones(3)
    saved = kernel([x[::2], (y, x.reshape(2, 3).T)], x)
    assert not np.shares_memory(saved[0], x)
    assert not np.shares_memory(saved[1][1], x)
    assert saved[1][0] is y
    np.testing.assert_array_equal(saved[1][1], x.reshape(2, 3).T)
    untouched = (y, [y])
    assert kernel(untouched, x) is untouched
    assert not OPS["prim::CopyIfShared"].pure


def test_written_argument_is_its_target_and_impure() -> None:
    """What the function returns as a written argument is that very array (Note [Returned
    arguments]); no pass may merge or move the node."""
    kernel = OPS["prim::WrittenArgument"].kernel
    assert kernel is not None
    target = np.zeros(3)
    assert kernel(np.ones(3), target) is target
    assert not OPS["prim::WrittenArgument"].pure


def test_in_place_kernels_fill_their_operand_and_return_it() -> None:
    target = np.zeros((2, 2))
    for kind, operands in [
        ("aten::copy_", (target, 1.0)),
        ("aten::index_put_", (target, 2.0, 0)),
        ("aten::add_at_", (target, 1.0, np.array([1, 1]))),
    ]:
        kernel = OPS[kind].kernel
        assert kernel is not None
        assert kernel(*operands) is target
        assert not OPS[kind].pure
        # functionalisation rewrites them before differentiation (Note [Derivatives])
        assert OPS[kind].derivative is Derivative.STRUCTURAL
    np.testing.assert_array_equal(target, [[2.0, 2.0], [3.0, 3.0]])
    copied = OPS["aten::copy"].kernel
    assert copied is not None
    assert not np.shares_memory(copied(target), target)


def test_basic_indexing_kernels_return_views() -> None:
    for kind, operands in [("aten::select", (A, 0, 1)), ("aten::slice", (A, 1, 0, 2, None))]:
        kernel = OPS[kind].kernel
        assert kernel is not None
        assert np.shares_memory(kernel(*operands), A)


def test_autograd_add_truth_table() -> None:
    add = OPS["prim::AutogradAdd"].kernel
    assert add is not None
    assert add(AUTOGRAD_ZERO, V) is V
    assert add(V, AUTOGRAD_ZERO) is V
    assert add(AUTOGRAD_ZERO, AUTOGRAD_ZERO) is AUTOGRAD_ZERO
    np.testing.assert_array_equal(add(V, V), 2 * V)


@pytest.mark.parametrize("kind", sorted(OPS))
def test_schema_round_trips_through_text(kind: str) -> None:
    schema = OPS[kind].schema
    assert schema.name == kind
    text = str(schema)
    assert parse_schema(text) == schema
    assert str(parse_schema(text)) == text


def test_parse_schema_reads_every_form() -> None:
    schema = parse_schema(
        'test::f(Tensor self, int[]? axis=None, *, (int, bool) pair, str s="a, b") -> (Tensor, int)'
    )
    assert schema.arguments == (
        Argument("self", TENSOR),
        Argument("axis", OptionalType(ListType(INT)), None),
        Argument("pair", TupleType((INT, BOOL)), kwarg_only=True),
        Argument("s", STR, "a, b", kwarg_only=True),
    )
    assert schema.returns == (TENSOR, INT)
    assert str(schema) == (
        'test::f(Tensor self, int[]? axis=None, *, (int, bool) pair, str s="a, b") -> (Tensor, int)'
    )
    assert schema.arguments[0].default is NO_DEFAULT
    assert not schema.arguments[0].has_default
    assert schema.arguments[1].has_default


def test_variadic_arguments_and_results() -> None:
    schema = parse_schema("prim::TupleUnpack(Any tup) -> Any...")
    assert schema.variadic_returns
    assert schema.returns == (ANY,)
    assert OPS["prim::TupleUnpack"].num_outputs == -1
    assert OPS["prim::TupleConstruct"].schema.variadic
    assert OPS["aten::mul"].num_outputs == 1
    assert str(parse_schema("test::g() -> ((int, int))")) == "test::g() -> ((int, int))"
    assert parse_schema("test::h() -> ()").returns == ()


@pytest.mark.parametrize(
    "text",
    [
        "aten::mul(Tensor self",
        "mul(Tensor self) -> Tensor",
        "aten::mul(Tensor) -> Tensor",
        "aten::mul(Widget self) -> Tensor",
        "aten::f(Any... xs, int y) -> Tensor",
        "aten::f(int x=[1,) -> Tensor",
    ],
)
def test_malformed_schemas_are_rejected(text: str) -> None:
    with pytest.raises(IRError):
        parse_schema(text)


def test_registry_rejects_duplicates_and_names_unknown_ops() -> None:
    with pytest.raises(IRError, match=r"aten::mul is registered twice"):
        register_op(
            "aten::mul(Any self, Any other) -> Tensor", shape=None, derivative=Derivative.FORMULA
        )(np.multiply)
    with pytest.raises(IRError, match=r"unknown operator aten::frobnicate"):
        lookup_op("aten::frobnicate")
    assert lookup_op("aten::mul").kernel is np.multiply


def test_purity_and_blocks_of_structural_ops() -> None:
    assert OPS["prim::If"].num_blocks == 2
    assert OPS["prim::If"].kernel is None
    assert OPS["prim::Loop"].num_blocks == 1
    assert OPS["prim::GradOf"].num_blocks == 1
    assert not OPS["prim::CallFunction"].pure
    assert OPS["aten::mul"].pure
    assert OPS["aten::mul"].derivative is Derivative.FORMULA
    assert OPS["aten::eq"].derivative is Derivative.NONE
