"""The real transforms over several axes, ``np.fft.rfftn``/``irfftn`` and ``rfft2``/``irfft2``,
with NumPy's shape argument ``s``, and their adjoints.

``rfftn`` is ``rfft`` along the last of its axes, then ``fft`` along the others in order;
``irfftn`` is ``ifft`` along all but the last, then ``irfft`` along the last. Each vjp runs the
one-axis adjoints of `ir.ops.fourier` backwards through those steps (Note [Complex gradients] in
`autodiff.formulas`), and the vjp of that adjoint is the transform again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ir.errors import ShapeError
from ir.ops.fourier import (
    Norm,
    _check_norm,
    complex_dtype,
    fft_backward,
    grad_like,
    irfft_backward,
    real_dtype,
    rfft_backward,
)
from ir.ops.registry import NOT_CONSTANT, Derivative, register_op
from ir.ops.shape_rules import Shape, as_tensor, normalize_axis, tensor
from ir.types import NONE, Type


def plan(shape: Shape, s: Any, axes: Any, inverse: bool) -> tuple[list[int], list[int | None]]:
    """The axes a real transform runs along and the length of each, as NumPy's ``s`` and
    ``axes`` give them: every axis by default, or the last ``len(s)``; an inverse's last length
    defaults to ``2 * (m - 1)`` of the ``m`` coefficients it reads."""
    ndim = len(shape)
    if axes is None:
        count = ndim if s is None else len(s)
        chosen = list(range(ndim - count, ndim))
    else:
        chosen = [normalize_axis(int(a), ndim) for a in axes]
    if len(set(chosen)) != len(chosen):
        raise ShapeError("repeated axis in the axes of a Fourier transform")
    if not chosen:
        raise ShapeError("a real Fourier transform needs at least one axis")
    if s is not None and len(s) != len(chosen):
        raise ShapeError("Shape and axes have different lengths.")
    lengths: list[int | None] = (
        [shape[a] for a in chosen] if s is None else [None if n is None else int(n) for n in s]
    )
    if s is None and inverse:
        last = shape[chosen[-1]]
        lengths[-1] = None if last is None else 2 * (last - 1)
    for n in lengths:
        if n is not None and n < 1:
            raise ShapeError(f"Invalid number of FFT data points ({n}) specified.")
    return chosen, lengths


def rfftn(x: Any, s: Any, axes: Any, norm: Norm) -> Any:
    if np.iscomplexobj(x):
        raise TypeError("rfftn of a complex array: use fftn")
    return np.fft.rfftn(x, s, axes, norm)


def irfftn(x: Any, s: Any, axes: Any, norm: Norm) -> Any:
    return np.fft.irfftn(x, s, axes, norm)


def _like(shape: Sequence[int], dtype: Any) -> Any:
    """An array standing for an intermediate result: only its shape and dtype are read."""
    return np.broadcast_to(np.zeros((), dtype), tuple(shape))


def rfftn_backward(grad: Any, like: Any, s: Any, axes: Any, norm: Norm) -> Any:
    """The vjp of ``rfftn``: the adjoints of its ``fft`` steps, last first, then of its
    ``rfft``."""
    x_shape = list(np.shape(like))
    chosen, lengths = plan(tuple(x_shape), s, axes, inverse=False)
    shapes = [x_shape]  # the shape before each step
    current = list(x_shape)
    current[chosen[-1]] = int(lengths[-1]) // 2 + 1  # type: ignore[arg-type]
    for axis, n in zip(chosen[:-1], lengths[:-1], strict=True):
        shapes.append(list(current))
        current[axis] = int(n)  # type: ignore[arg-type]
    g = np.asarray(grad)
    for step in range(len(chosen) - 2, -1, -1):
        before = _like(shapes[step + 1], np.complex128)
        g = fft_backward(g, before, lengths[step], chosen[step], norm, False)
    return rfft_backward(g, like, lengths[-1], chosen[-1], norm)


def irfftn_backward(grad: Any, like: Any, s: Any, axes: Any, norm: Norm) -> Any:
    """The vjp of ``irfftn``: the adjoint of its ``irfft`` step, then of its ``ifft`` steps,
    last first."""
    z_shape = list(np.shape(like))
    chosen, lengths = plan(tuple(z_shape), s, axes, inverse=True)
    shapes = []  # the shape before each ifft step
    current = list(z_shape)
    for axis, n in zip(chosen[:-1], lengths[:-1], strict=True):
        shapes.append(list(current))
        current[axis] = int(n)  # type: ignore[arg-type]
    g = irfft_backward(grad, _like(current, np.complex128), lengths[-1], chosen[-1], norm)
    for step in range(len(chosen) - 2, -1, -1):
        g = fft_backward(
            g, _like(shapes[step], np.complex128), lengths[step], chosen[step], norm, True
        )
    return grad_like(g, like)


def _rule(inverse: bool) -> Any:
    def rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
        x = as_tensor(types[0])
        _check_norm(consts[3])
        dtype = real_dtype(x.dtype) if inverse else complex_dtype(x.dtype)
        s = None if types[1] is NONE else consts[1]
        axes = None if types[2] is NONE else consts[2]
        if x.shape is None or s is NOT_CONSTANT or axes is NOT_CONSTANT:
            return tensor(dtype, None)
        chosen, lengths = plan(x.shape, s, axes, inverse)
        shape = list(x.shape)
        for axis, n in zip(chosen, lengths, strict=True):
            shape[axis] = n
        if not inverse and lengths[-1] is not None:
            shape[chosen[-1]] = lengths[-1] // 2 + 1
        return tensor(dtype, tuple(shape))

    return rule


def _like_second(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    like = as_tensor(types[1], 1)
    dtype = like.dtype
    if dtype is not None and np.dtype(dtype).kind not in "fc":
        dtype = "float64"
    return tensor(dtype, like.shape)


# The n-dimensional transforms and their 2-D spellings, which differ only in the default axes.
for _name, _fn, _inverse, _axes in [
    ("rfftn", rfftn, False, "None"),
    ("irfftn", irfftn, True, "None"),
    ("rfft2", rfftn, False, "(-2, -1)"),
    ("irfft2", irfftn, True, "(-2, -1)"),
]:
    register_op(
        f"aten::fft_{_name}(Tensor self, Any s=None, Any axes={_axes}, str? norm=None) -> Tensor",
        shape=_rule(_inverse),
        derivative=Derivative.FORMULA,
        spellings={f"numpy.fft.{_name}": "a:self s axes norm !out"},
    )(_fn)
register_op(
    "aten::_rfftn_backward(Tensor grad, Tensor like, Any s, Any axes, str? norm) -> Tensor",
    shape=_like_second,
    derivative=Derivative.FORMULA,
    read_for_type=("like",),
)(rfftn_backward)
register_op(
    "aten::_irfftn_backward(Tensor grad, Tensor like, Any s, Any axes, str? norm) -> Tensor",
    shape=_like_second,
    derivative=Derivative.FORMULA,
    read_for_type=("like",),
)(irfftn_backward)
