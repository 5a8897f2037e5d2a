"""Adjoints of the np.linalg operators of `ir.ops.linalg_decompositions` whose formulas branch on a
result's structure or ord."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ir.ops.registry import Derivative, register_op
from ir.ops.shape_rules import (
    as_tensor,
    fixed,
    normalize_axes,
    normalize_axis,
    tensor,
)
from ir.types import (
    INT,
    Type,
)


def _swap(x: Any) -> Any:
    return np.swapaxes(x, -1, -2)


def _adjoint(x: Any) -> Any:
    return np.conj(np.swapaxes(x, -1, -2))


def svd_backward(grad: Any, a: Any, out: Any, full_matrices: bool, compute_uv: bool) -> Any:
    """The gradient of ``np.linalg.svd`` for distinct non-zero singular values. With
    ``full_matrices`` the columns past ``min(m, n)`` are not unique: they must get no gradient.

    A complex ``a`` (Wan and Zhang 2019; PyTorch's ``svd_backward``): the formula below is the
    one in the conjugate convention (dL/dRe + i dL/dIm), so the cotangents are conjugated on
    the way in and the result on the way out (Note [Complex gradients] in
    `autodiff.formulas`). A loss that depends on the phases of the singular vectors (which
    are arbitrary) has no gradient; the formula assumes one that does not, as ``abs(u)``."""
    a = np.asarray(a)
    m, n = a.shape[-2:]
    k = min(m, n)
    if compute_uv:
        u, s, vh = out
        grad_u, grad_s, grad_vh = (np.conj(np.asarray(g)) for g in grad)
        if full_matrices and (np.any(grad_u[..., k:]) or np.any(grad_vh[..., k:, :])):
            raise ValueError(
                "the gradient of svd with full_matrices=True is not defined for the columns of "
                "u or rows of vh past min(m, n): pass full_matrices=False"
            )
        u, grad_u = u[..., :k], grad_u[..., :k]
        vh, grad_vh = vh[..., :k, :], grad_vh[..., :k, :]
    else:
        u, s, vh = np.linalg.svd(a, full_matrices=False)
        grad_s = np.asarray(grad)
        grad_u, grad_vh = np.zeros_like(u), np.zeros_like(vh)
    v, grad_v = _adjoint(vh), _adjoint(grad_vh)
    eye = np.eye(k, dtype=s.dtype)
    squares = s[..., None, :] ** 2 - s[..., :, None] ** 2  # s_j^2 - s_i^2
    f = (1 - eye) / (squares + eye)
    uhgu = _adjoint(u) @ grad_u
    vhgv = _adjoint(v) @ grad_v
    sigma = s[..., None, :] * eye
    core = (f * (uhgu - _adjoint(uhgu))) @ sigma + sigma @ (f * (vhgv - _adjoint(vhgv)))
    core = core + grad_s[..., None, :] * eye
    inverse = (1 / s)[..., None, :]
    if np.iscomplexobj(u):
        # The phase of each singular pair: i Im(diag(U^H gU)) / s.
        core = core + 1j * np.imag(uhgu) * eye * inverse
    result = u @ core @ vh
    if m > k:
        result = result + ((grad_u - u @ uhgu) * inverse) @ vh
    if n > k:
        result = result + u @ _adjoint((grad_v - v @ vhgv) * inverse)
    return np.conj(result).astype(a.dtype, copy=False)


# The formulas of np.linalg.norm's gradient (`norm_kind`).
(
    NORM_EUCLIDEAN,
    NORM_POWER,
    NORM_LARGEST,
    NORM_COUNT,
    NORM_COLUMN_SUMS,
    NORM_ROW_SUMS,
    NORM_LARGEST_SINGULAR,
    NORM_SMALLEST_SINGULAR,
    NORM_NUCLEAR,
) = range(9)


def norm_kind(order: Any, axis: Any, ndim: int) -> int:
    """Which of its formulas the gradient of ``np.linalg.norm(x, order, axis)`` takes, for an
    ``x`` of rank ``ndim`` (a constant once ranks are known, so the formula's branches fold):
    `NORM_EUCLIDEAN` (the 2-norm of vectors, the Frobenius norm), `NORM_POWER` (another
    vector p-norm), `NORM_LARGEST` (vector ``inf``/``-inf``), `NORM_COUNT` (``ord=0``), and
    the matrix norms: `NORM_COLUMN_SUMS` (``ord`` 1, -1), `NORM_ROW_SUMS` (``inf``, ``-inf``),
    `NORM_LARGEST_SINGULAR` (2), `NORM_SMALLEST_SINGULAR` (-2) and `NORM_NUCLEAR`.

    >>> norm_kind(None, None, 2), norm_kind(3, None, 1), norm_kind(2, None, 2)
    (0, 1, 6)
    """
    vector = len(normalize_axes(axis, ndim)) == 1
    if order is None or (isinstance(order, str) and order == "fro") or (vector and order == 2):
        return NORM_EUCLIDEAN
    if isinstance(order, str):
        return NORM_NUCLEAR
    if not vector:
        if order in (1, -1):
            return NORM_COLUMN_SUMS
        if order in (np.inf, -np.inf):
            return NORM_ROW_SUMS
        return NORM_LARGEST_SINGULAR if order == 2 else NORM_SMALLEST_SINGULAR
    if order in (np.inf, -np.inf):
        return NORM_LARGEST
    return NORM_COUNT if order == 0 else NORM_POWER


def matrix_norm_axis(axis: Any, ndim: int, which: int) -> int:
    """The row (``which`` 0) or column (1) axis of a matrix norm over ``axis``, in the order
    given: ``axis=(1, 0)`` makes axis 1 the rows, and the 1 and inf norms tell them apart.
    Shapes are propagated through the branches of the norm's formula that are not taken as
    well, so a vector (``axis`` None or one axis) gets the axes of ``np.atleast_2d`` of it.

    >>> matrix_norm_axis((1, 0), 2, 0), matrix_norm_axis(None, 3, 1), matrix_norm_axis(0, 1, 1)
    (1, 2, 1)
    """
    if axis is None or np.ndim(axis) == 0 or ndim < 2:
        return max(ndim, 2) - 2 + which
    return normalize_axis(int(axis[which]), ndim)


def _like_operand(position: int) -> Any:
    """A rule: a tensor like operand ``position`` (its dtype and shape)."""

    def rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
        operand = as_tensor(types[position], position)
        return tensor(operand.dtype, operand.shape)

    return rule


register_op(
    "aten::_svd_backward(Any grad, Tensor self, Any out, bool full_matrices, bool compute_uv)"
    " -> Tensor",
    shape=_like_operand(1),
    derivative=Derivative.REFUSED,
)(svd_backward)


register_op(
    "aten::_norm_kind(Any ord, Any axis, int ndim) -> int",
    shape=fixed(INT),
    derivative=Derivative.NONE,
)(norm_kind)


register_op(
    "aten::_matrix_norm_axis(Any axis, int ndim, int which) -> int",
    shape=fixed(INT),
    derivative=Derivative.NONE,
)(matrix_norm_axis)
