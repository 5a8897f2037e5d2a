"""``np.linalg``: inverses, determinants, solves, decompositions (cholesky, eigh, svd), the
pseudo-inverse and norms, as ``aten::linalg_*`` operators (TorchScript's names).

Kernels return plain tuples where NumPy returns a named tuple (``EighResult``), so a result is
unpacked like any other tuple. Every operator works on stacks of matrices as NumPy does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ir.errors import ShapeError
from ir.ops.fourier import complex_dtype, real_dtype
from ir.ops.promotion import probe_dtype
from ir.ops.registry import NOT_CONSTANT, Derivative, register_op
from ir.ops.shape_rules import Shape, as_tensor, broadcast_shapes, fixed, normalize_axes, tensor
from ir.types import ANY, BOOL, TensorType, TupleType, Type


def _float_dtype(x: TensorType) -> str | None:
    """The dtype ``np.linalg`` computes in: float32 stays float32, integers become float64."""
    return probe_dtype(np.linalg.inv, [x], [2])


def _matrices(x: TensorType, square: bool = True) -> Shape | None:
    """The shape of a stack of (square) matrices, checked as NumPy's LinAlgError does."""
    if x.shape is None:
        return None
    if len(x.shape) < 2:
        raise ShapeError(
            f"{len(x.shape)}-dimensional array given. Array must be at least two-dimensional"
        )
    rows, cols = x.shape[-2:]
    if square and rows is not None and cols is not None and rows != cols:
        raise ShapeError("Last 2 dimensions of the array must be square")
    return x.shape


def _like_matrices(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    x = as_tensor(types[0])
    return tensor(_float_dtype(x), _matrices(x))


def _pinv_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    x = as_tensor(types[0])
    shape = _matrices(x, square=False)
    swapped = None if shape is None else (*shape[:-2], shape[-1], shape[-2])
    return tensor(_float_dtype(x), swapped)


def _det_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    x = as_tensor(types[0])
    shape = _matrices(x)
    return tensor(_float_dtype(x), None if shape is None else shape[:-2])


def _slogdet_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    (det,) = _det_rule(types, consts)
    assert isinstance(det, TensorType)
    # The log of the absolute determinant is real: float32 for a complex64 matrix, as NumPy has it.
    real = None if det.dtype is None else np.zeros((), det.dtype).real.dtype.name
    return [TupleType((det, TensorType(real, det.shape)))]


def _solve_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    a, b = as_tensor(types[0], 0), as_tensor(types[1], 1)
    dtype = probe_dtype(np.linalg.solve, [a, b], [2, 2])
    shape_a = _matrices(a)
    if shape_a is None or b.shape is None:
        return tensor(dtype, None)
    if len(b.shape) == 1:  # NumPy 2: a 1-d b is one vector, broadcast against a's stack
        _check_rows(shape_a[-1], b.shape[0])
        return tensor(dtype, shape_a[:-1])
    _check_rows(shape_a[-1], b.shape[-2])
    batch = broadcast_shapes(shape_a[:-2], b.shape[:-2])
    return tensor(dtype, None if batch is None else (*batch, shape_a[-1], b.shape[-1]))


def _check_rows(n: int | None, rows: int | None) -> None:
    if n is not None and rows is not None and n != rows:
        raise ShapeError(
            f"solve: Input operand 1 has a mismatch in its core dimension 0 (size {rows} is "
            f"different from {n})"
        )


def _eigh_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    x = as_tensor(types[0])
    shape = _matrices(x)
    dtype = _float_dtype(x)
    # A Hermitian matrix's eigenvalues are real, as NumPy returns them.
    values = TensorType(real_dtype(dtype), None if shape is None else shape[:-1])
    return [TupleType((values, TensorType(dtype, shape)))]


def _eig_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    x = as_tensor(types[0])
    shape = _matrices(x)
    dtype = complex_dtype(_float_dtype(x))
    values = TensorType(dtype, None if shape is None else shape[:-1])
    return [TupleType((values, TensorType(dtype, shape)))]


def _svd_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    x = as_tensor(types[0])
    shape = _matrices(x, square=False)
    dtype = _float_dtype(x)
    values_dtype = real_dtype(dtype)  # singular values are real, as NumPy returns them
    full, compute_uv = consts[1], consts[2]
    if shape is None:
        s = TensorType(values_dtype, None)
        u = vh = TensorType(dtype, None)
    else:
        *batch, m, n = shape
        k = None if m is None or n is None else min(m, n)
        s = TensorType(values_dtype, (*batch, k))
        if full is NOT_CONSTANT:
            u = TensorType(dtype, (*batch, m, None))
            vh = TensorType(dtype, (*batch, None, n))
        else:
            u = TensorType(dtype, (*batch, m, m if full else k))
            vh = TensorType(dtype, (*batch, n if full else k, n))
    if compute_uv is NOT_CONSTANT:
        return [ANY]
    return [TupleType((u, s, vh))] if compute_uv else [s]


def _norm_axes(ndim: int, ord_: Any, axis: Any) -> tuple[int, ...]:
    """The axes ``np.linalg.norm`` reduces: every axis when ``axis`` is None."""
    if axis is None:
        if ord_ is not None and ndim > 2:
            raise ShapeError("Improper number of dimensions to norm.")
        return tuple(range(ndim))
    axes = normalize_axes(axis, ndim)
    if len(axes) > 2:
        raise ShapeError("Improper number of dimensions to norm.")
    return axes


def _norm_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    x = as_tensor(types[0])
    dtype = probe_dtype(np.linalg.norm, [x], [1])
    ord_, axis, keepdims = consts[1], consts[2], consts[3]
    if x.shape is None or axis is NOT_CONSTANT or keepdims is NOT_CONSTANT:
        return tensor(dtype, None)
    # An ord known at run time only is a number (not None): the axes do not depend on which.
    axes = _norm_axes(len(x.shape), 2 if ord_ is NOT_CONSTANT else ord_, axis)
    if keepdims:
        return tensor(dtype, tuple(1 if i in axes else d for i, d in enumerate(x.shape)))
    return tensor(dtype, tuple(d for i, d in enumerate(x.shape) if i not in axes))


def slogdet(a: Any) -> tuple[Any, Any]:
    """``np.linalg.slogdet``: (sign, log of the absolute determinant)."""
    sign, logabsdet = np.linalg.slogdet(a)
    return sign, logabsdet


def eigh(a: Any, UPLO: str) -> tuple[Any, Any]:
    """``np.linalg.eigh`` of the lower (``UPLO="L"``) or upper (``"U"``) triangle: ascending
    eigenvalues and the eigenvectors as columns."""
    values, vectors = np.linalg.eigh(a, "U" if reads_upper(UPLO) else "L")
    return values, vectors


def reads_upper(UPLO: str) -> bool:
    """Whether ``np.linalg.eigh`` reads the upper triangle; refuses what NumPy refuses."""
    if UPLO.upper() not in ("L", "U"):
        raise ValueError("UPLO argument must be 'L' or 'U'")
    return UPLO.upper() == "U"


def eig(a: Any) -> tuple[Any, Any]:
    """``np.linalg.eig``, always complex: NumPy returns real arrays when every eigenvalue
    happens to be real, a dtype the values decide, which a compiled graph cannot follow."""
    values, vectors = np.linalg.eig(a)
    dtype = np.result_type(values.dtype, np.complex64)
    return values.astype(dtype), vectors.astype(dtype)


def svd(a: Any, full_matrices: bool, compute_uv: bool) -> Any:
    """``np.linalg.svd``: (u, s, vh), or s alone when ``compute_uv`` is False."""
    if not compute_uv:
        return np.linalg.svd(a, full_matrices, compute_uv=False)
    u, s, vh = np.linalg.svd(a, full_matrices)
    return u, s, vh


def pinv(a: Any) -> Any:
    """``np.linalg.pinv`` with its default cut-off for small singular values."""
    return np.linalg.pinv(a)


def norm(x: Any, order: Any, axis: Any, keepdims: bool) -> Any:
    """``np.linalg.norm`` (its ``ord`` is ``order`` here, off Python's builtin)."""
    return np.linalg.norm(x, order, axis, keepdims)


register_op(
    "aten::linalg_inv(Tensor self) -> Tensor",
    shape=_like_matrices,
    derivative=Derivative.FORMULA,
    may_raise=True,
    spellings={
        "numpy.linalg.inv": "a:self",
        "scipy.linalg.inv": "a:self !overwrite_a !check_finite * !assume_a !lower",
    },
)(np.linalg.inv)
register_op(
    "aten::linalg_det(Tensor self) -> Tensor",
    shape=_det_rule,
    derivative=Derivative.FORMULA,
    spellings={"numpy.linalg.det": "a:self"},
)(np.linalg.det)
register_op(
    "aten::linalg_slogdet(Tensor self) -> Tensor[]",
    shape=_slogdet_rule,
    derivative=Derivative.FORMULA,
    spellings={"numpy.linalg.slogdet": "a:self"},
)(slogdet)
register_op(
    "aten::linalg_solve(Tensor self, Tensor other) -> Tensor",
    shape=_solve_rule,
    derivative=Derivative.FORMULA,
    may_raise=True,
    spellings={"numpy.linalg.solve": "a:self b:other"},
)(np.linalg.solve)
register_op(
    "aten::linalg_cholesky(Tensor self) -> Tensor",
    shape=_like_matrices,
    derivative=Derivative.FORMULA,
    may_raise=True,
    spellings={"numpy.linalg.cholesky": "a:self / * !upper"},
)(np.linalg.cholesky)
register_op(
    "aten::linalg_eigh(Tensor self, str UPLO='L') -> Tensor[]",
    shape=_eigh_rule,
    derivative=Derivative.FORMULA,
    may_raise=True,
    spellings={"numpy.linalg.eigh": "a:self UPLO"},
)(eigh)
register_op(
    "aten::linalg_eig(Tensor self) -> Tensor[]",
    shape=_eig_rule,
    derivative=Derivative.FORMULA,
    may_raise=True,
    spellings={"numpy.linalg.eig": "a:self"},
)(eig)
register_op(
    "aten::_reads_upper(str UPLO) -> bool",
    shape=fixed(BOOL),
    derivative=Derivative.NONE,
    may_raise=True,
)(reads_upper)
register_op(
    "aten::linalg_svd(Tensor self, bool full_matrices=True, bool compute_uv=True) -> Any",
    shape=_svd_rule,
    derivative=Derivative.FORMULA,
    may_raise=True,
    spellings={"numpy.linalg.svd": "a:self full_matrices compute_uv !hermitian"},
)(svd)
register_op(
    "aten::linalg_pinv(Tensor self) -> Tensor",
    shape=_pinv_rule,
    derivative=Derivative.FORMULA,
    may_raise=True,
    spellings={"numpy.linalg.pinv": "a:self !rcond !hermitian * !rtol"},
)(pinv)
register_op(
    "aten::linalg_norm(Tensor self, Any ord=None, Any axis=None, bool keepdims=False) -> Tensor",
    shape=_norm_rule,
    derivative=Derivative.FORMULA,
    spellings={"numpy.linalg.norm": "x:self ord axis keepdims"},
)(norm)
