"""Adjoints of the np.linalg operators of `ir.ops.linalg_decompositions` whose formulas branch on a
result's structure or ord."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ir.ops.registry import register_op
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


def norm_backward(grad: Any, x: Any, out: Any, order: Any, axis: Any, keepdims: bool) -> Any:
    """The gradient of ``np.linalg.norm``: vector norms (p-norms, inf, -inf), the Frobenius
    norm, and the 1 and inf matrix norms; ties in a max share the gradient evenly."""
    x = np.asarray(x)
    axes = tuple(range(x.ndim)) if axis is None else normalize_axes(axis, x.ndim)
    if not keepdims:
        grad = np.expand_dims(grad, axes)
        out = np.expand_dims(out, axes)
    if order is None or order == "fro" or (len(axes) == 1 and order == 2):
        slope = np.where(out == 0, 0, np.conj(x) / np.where(out == 0, 1, out))
        return (grad * slope).astype(x.dtype)
    if len(axes) == 1:
        return (grad * _vector_norm_slope(x, out, order, axes)).astype(x.dtype)
    if order in (1, -1, np.inf, -np.inf):
        # Matrix 1/inf norms: the extreme column (row) sum of absolute values. ``axis`` is
        # (row axis, column axis) in the order given, which ``axes`` (sorted) forgets.
        rows, columns = axes if axis is None else (normalize_axis(int(a), x.ndim) for a in axis)
        summed = rows if order in (1, -1) else columns
        sums = np.sum(np.abs(x), axis=summed, keepdims=True)
        hits = (sums == out).astype(out.dtype)
        hits = hits / np.sum(hits, axis=axes, keepdims=True)
        return (grad * hits * _abs_slope(x)).astype(x.dtype)
    if order in (2, -2, "nuc"):
        return (grad * _singular_norm_slope(x, order, axes)).astype(x.dtype)
    raise ValueError(f"the gradient of a matrix norm with ord={order!r} is not supported")


def _singular_norm_slope(x: Any, order: Any, axes: tuple[int, ...]) -> Any:
    """The slope of the spectral (ord 2), smallest-singular-value (-2) and nuclear norms of
    the matrices over ``axes``, with those axes kept: ``conj(u_i vh_i)`` summed over the
    singular pairs the norm takes (the conjugate is the slope's in Note [Complex gradients]).
    A largest or smallest value several pairs share gives each of them an equal part, and the
    nuclear norm takes the pairs whose value is not 0: the least-norm subgradient, as for the
    other norms' ties (docs/conventions.md)."""
    matrices = np.moveaxis(x, axes, (-2, -1))
    u, s, vh = np.linalg.svd(matrices, full_matrices=False)
    if order == "nuc":
        taken = (s > 0).astype(s.dtype)
    else:
        extreme = s[..., :1] if order == 2 else s[..., -1:]
        taken = (s == extreme).astype(s.dtype)
        taken = taken / np.sum(taken, axis=-1, keepdims=True)
    slope = np.conj((u * taken[..., None, :]) @ vh)
    return np.moveaxis(slope, (-2, -1), axes)


# The formulas of np.linalg.norm's gradient (`norm_kind`).
NORM_EUCLIDEAN, NORM_POWER, NORM_LARGEST, NORM_COUNT, NORM_OTHER = range(5)


def norm_kind(order: Any, axis: Any, ndim: int) -> int:
    """Which of its formulas the gradient of ``np.linalg.norm(x, order, axis)`` takes, for an
    ``x`` of rank ``ndim`` (a constant once ranks are known, so the formula's branches fold):
    `NORM_EUCLIDEAN` (the 2-norm of vectors, the Frobenius norm), `NORM_POWER` (another
    vector p-norm), `NORM_LARGEST` (vector ``inf``/``-inf``), `NORM_COUNT` (``ord=0``), and
    `NORM_OTHER` for the matrix norms the `norm_backward` kernel computes, whose gradient is
    not written in differentiable operators (no second derivative).

    >>> norm_kind(None, None, 2), norm_kind(3, None, 1), norm_kind(2, None, 2)
    (0, 1, 4)
    """
    vector = len(normalize_axes(axis, ndim)) == 1
    if order is None or (isinstance(order, str) and order == "fro") or (vector and order == 2):
        return NORM_EUCLIDEAN
    if not vector or isinstance(order, str):
        return NORM_OTHER
    if order in (np.inf, -np.inf):
        return NORM_LARGEST
    return NORM_COUNT if order == 0 else NORM_POWER


def _abs_slope(x: Any) -> Any:
    """The gradient of ``|x|`` elementwise: ``sign(x)``, and ``conj(x) / |x|`` for a complex
    ``x`` (Note [Complex gradients] in `autodiff.formulas`); 0 at 0."""
    return np.conj(np.sign(x))


def _vector_norm_slope(x: Any, out: Any, order: Any, axes: tuple[int, ...]) -> Any:
    if order in (np.inf, -np.inf):
        hits = (np.abs(x) == out).astype(out.dtype)
        return _abs_slope(x) * hits / np.sum(hits, axis=axes, keepdims=True)
    if order == 0:
        return np.zeros_like(x)
    p = float(order)
    safe = np.where(out == 0, 1, out)
    return np.where(out == 0, 0, _abs_slope(x) * (np.abs(x) / safe) ** (p - 1))


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
)(svd_backward)


register_op(
    "aten::_norm_backward(Tensor grad, Tensor self, Tensor out, Any ord, Any axis, bool keepdims)"
    " -> Tensor",
    shape=_like_operand(1),
)(norm_backward)


register_op(
    "aten::_norm_kind(Any ord, Any axis, int ndim) -> int", shape=fixed(INT), differentiable=False
)(norm_kind)
