"""Backend kernels of the Fourier transforms and their gradients (Note [Array backends] in
`ir.backends`): the standard's ``fft`` extension, whose Dask functions transform an axis only
when it is one chunk, so each kernel first rechunks the transformed axes (`whole_axes`):
every block then holds whole lines, and the transform of each is exact."""

from __future__ import annotations

from typing import Any

import numpy as np

from ir.backend_kernel_parts import (
    Kernel,
    KernelFactory,
    TableEntry,
    along,
    axis_tuple,
    dask_array,
    whole_axes,
)
from ir.errors import BackendError
from ir.ops.fourier import transform_axes

# -- Fourier transforms: along whole axes --


def _fft_module(xp: Any) -> Any:
    """The namespace's ``fft``, whose Dask functions want each transformed axis in one
    chunk (Dask's FFT refuses a chunked axis): the callers rechunk with `whole_axes`."""
    return xp.fft


def _fft_1d(name: str, real_input: bool = False) -> KernelFactory:
    def factory(xp: Any) -> Kernel:
        da = dask_array(xp)

        def transform(x: Any, n: int | None = None, axis: int = -1, norm: Any = None) -> Any:
            if real_input and xp.isdtype(x.dtype, "complex floating"):
                raise BackendError(f"{name} of a complex array: use fft")
            if da is not None:
                x = whole_axes(x, [axis])
            if name in ("fft", "ifft"):
                x = _complex(xp, x)
            return getattr(_fft_module(xp), name)(x, n=n, axis=axis, norm=norm or "backward")

        return transform

    return factory


def _fft_nd(name: str, default_axes: Any) -> KernelFactory:
    def factory(xp: Any) -> Kernel:
        da = dask_array(xp)

        def transform(x: Any, s: Any = None, axes: Any = default_axes, norm: Any = None) -> Any:
            chosen, lengths = transform_axes(x.ndim, axis_tuple(s), axis_tuple(axes))
            if da is not None:
                x = whole_axes(x, chosen)
            if name in ("fftn", "ifftn"):
                x = _complex(xp, x)
            return getattr(_fft_module(xp), name)(
                x, s=lengths, axes=chosen, norm=norm or "backward"
            )

        return transform

    return factory


def _complex(xp: Any, x: Any) -> Any:
    """``x`` as the complex array NumPy's complex transforms take a real one as (the Array
    API's take complex arrays only): float32 becomes complex64, the rest complex128."""
    if xp.isdtype(x.dtype, "complex floating"):
        return x
    return xp.astype(x, xp.complex64 if x.dtype == xp.float32 else xp.complex128)


def _resized(xp: Any, grad: Any, length: int, axis: int) -> Any:
    """`ir.ops.fourier._resized`: truncated or zero-padded along ``axis`` to ``length``."""
    have = grad.shape[axis]
    if have >= length:
        return grad[along(axis, slice(0, length))]
    shape = list(grad.shape)
    shape[axis] = length - have
    return xp.concat([grad, xp.zeros(tuple(shape), dtype=grad.dtype)], axis=axis)


def _grad_like(xp: Any, grad: Any, like: Any) -> Any:
    """`ir.ops.fourier.grad_like`: the real part for a real ``like``, in its dtype."""
    if xp.isdtype(like.dtype, "complex floating"):
        return xp.astype(grad, like.dtype)
    real = xp.real(grad) if xp.isdtype(grad.dtype, "complex floating") else grad
    return xp.astype(real, like.dtype if xp.isdtype(like.dtype, "real floating") else xp.float64)


def _real_part(xp: Any, x: Any, part: str) -> Any:
    """``np.real``/``np.imag``, which take a real array too (the Array API's do not): it is
    its own real part, and its imaginary part is zeros."""
    x = xp.asarray(x)
    if xp.isdtype(x.dtype, "complex floating"):
        return getattr(xp, part)(x)
    return x if part == "real" else xp.zeros_like(x)


def _fft_backward(xp: Any) -> Kernel:
    transform = {inverse: _fft_1d("ifft" if inverse else "fft")(xp) for inverse in (False, True)}

    def fft_backward(grad: Any, like: Any, n: Any, axis: int, norm: Any, inverse: bool) -> Any:
        out = transform[inverse](grad, None, axis, norm)
        return _grad_like(xp, _resized(xp, out, like.shape[axis], axis), like)

    return fft_backward


def _fftn_backward(xp: Any) -> Kernel:
    transform = {inverse: _fft_nd("ifftn" if inverse else "fftn", None)(xp) for inverse in (0, 1)}

    def fftn_backward(grad: Any, like: Any, s: Any, axes: Any, norm: Any, inverse: bool) -> Any:
        chosen, _ = transform_axes(like.ndim, axis_tuple(s), axis_tuple(axes))
        out = transform[int(inverse)](grad, None, chosen, norm)
        for axis in chosen:
            out = _resized(xp, out, like.shape[axis], axis)
        return _grad_like(xp, out, like)

    return fftn_backward


def _rfft_backward(xp: Any) -> Kernel:
    fft = _fft_1d("fft")(xp)

    def rfft_backward(grad: Any, like: Any, n: Any, axis: int, norm: Any) -> Any:
        full = like.shape[axis] if n is None else n
        out = fft(grad, full, axis, norm)
        return _grad_like(xp, _resized(xp, out, like.shape[axis], axis), like)

    return rfft_backward


def _irfft_backward(xp: Any) -> Kernel:
    ifft = _fft_1d("ifft")(xp)

    def irfft_backward(grad: Any, like: Any, n: Any, axis: int, norm: Any) -> Any:
        full = grad.shape[axis]
        half = full // 2 + 1
        out = _resized(xp, ifft(grad, None, axis, norm), half, axis)
        weights = np.full(half, 2.0)  # a constant: how often irfft counts each coefficient
        weights[0] = 1.0
        if full % 2 == 0:
            weights[-1] = 1.0
        shape = [1] * out.ndim
        shape[axis] = half
        out = out * xp.asarray(weights.reshape(shape))
        return _grad_like(xp, _resized(xp, out, like.shape[axis], axis), like)

    return irfft_backward


def _fft_shift(name: str) -> KernelFactory:
    def factory(xp: Any) -> Kernel:
        def shift(x: Any, axes: Any = None) -> Any:
            chosen = tuple(range(x.ndim)) if axes is None else axis_tuple(axes)
            chosen = (chosen,) if isinstance(chosen, int) else chosen
            return getattr(xp.fft, name)(x, axes=chosen)

        return shift

    return factory


FOURIER_KERNELS: dict[str, TableEntry] = {
    "aten::fft_fft": _fft_1d("fft"),
    "aten::fft_ifft": _fft_1d("ifft"),
    "aten::fft_rfft": _fft_1d("rfft", real_input=True),
    "aten::fft_irfft": _fft_1d("irfft"),
    "aten::fft_fftn": _fft_nd("fftn", None),
    "aten::fft_ifftn": _fft_nd("ifftn", None),
    "aten::fft_fft2": _fft_nd("fftn", (-2, -1)),
    "aten::fft_ifft2": _fft_nd("ifftn", (-2, -1)),
    "aten::fft_rfftn": _fft_nd("rfftn", None),
    "aten::fft_irfftn": _fft_nd("irfftn", None),
    "aten::fft_rfft2": _fft_nd("rfftn", (-2, -1)),
    "aten::fft_irfft2": _fft_nd("irfftn", (-2, -1)),
    "aten::fft_fftshift": _fft_shift("fftshift"),
    "aten::real": lambda xp: lambda x: _real_part(xp, x, "real"),
    "aten::imag": lambda xp: lambda x: _real_part(xp, x, "imag"),
    "aten::_grad_like": lambda xp: lambda grad, like: _grad_like(xp, grad, like),
    "aten::_imag_backward": lambda xp: lambda grad, like: _grad_like(xp, -1j * grad, like),
    "aten::fft_ifftshift": _fft_shift("ifftshift"),
    "aten::_fft_backward": _fft_backward,
    "aten::_fftn_backward": _fftn_backward,
    "aten::_rfft_backward": _rfft_backward,
    "aten::_irfft_backward": _irfft_backward,
}
"""The kernels of `ir.backend_kernels.NAMESPACE_KERNELS` for Fourier transforms."""
