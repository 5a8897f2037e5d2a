"""Backend kernels of the operators that need a whole axis or a whole matrix at once: sorts,
Fourier transforms, matrix factorisations, triangles (Note [Array
backends] in `ir.backends`).

On a strict Array API namespace (and CuPy's) each calls the standard's own function (its
``linalg`` and ``fft`` extensions, ``sort``). Dask splits arrays into chunks, and none of
these operations can be computed chunk by chunk along the axes they work on; they are
computed along every other axis, though. So on Dask each runs the NumPy function per block
after rechunking the axes it works on to one chunk (`whole_axes`): a block then holds whole
lines or whole matrices, and the NumPy result on it is exactly that block of the result. The
arrays stay lazy Dask arrays; only those axes are gathered, and a chunk then holds a whole
matrix (a factorisation of a matrix larger than memory is refused by running out of it, as
in plain Dask: Dask's own ``tsqr`` covers tall-and-skinny QR only).
"""

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
    safe_reshape,
    whole_axes,
)
from ir.errors import BackendError
from ir.ops import OPS
from ir.ops.fourier import transform_axes


def _numpy_kernel(name: str) -> Kernel:
    kernel = OPS[name].kernel
    assert kernel is not None
    return kernel


# -- matrices: NumPy's kernel per stack of whole matrices on Dask, the standard's elsewhere --

# operator -> its generalised-ufunc signature over the last two axes (NumPy's linalg
# broadcasts over the leading ones, which Dask's apply_gufunc keeps chunked)
_MATRIX_SIGNATURES = {
    "aten::linalg_inv": "(i,i)->(i,i)",
    "aten::linalg_det": "(i,i)->()",
    "aten::linalg_slogdet": "(i,i)->(),()",
    "aten::linalg_cholesky": "(i,i)->(i,i)",
    "aten::linalg_eigh": "(i,i)->(i),(i,i)",
    "aten::linalg_pinv": "(m,n)->(n,m)",
    "aten::linalg_eig": "(i,i)->(i),(i,i)",
    "aten::scipy_det": "(i,i)->()",
    "aten::scipy_cholesky": "(i,i)->(i,i)",
}


def _per_matrix(name: str, standard: Any) -> TableEntry:
    """``name``'s kernel: on Dask, NumPy's per block of whole matrices (`apply_gufunc`
    rechunks the matrix axes to one chunk, ``allow_rechunk``); elsewhere ``standard(xp)``."""
    signature = _MATRIX_SIGNATURES[name]
    numpy_kernel = _numpy_kernel(name)

    def factory(xp: Any) -> Kernel | None:
        da = dask_array(xp)
        if da is None:
            kernel: Kernel | None = standard(xp)
            return kernel

        def per_matrix(x: Any, *options: Any) -> Any:
            result = da.apply_gufunc(
                lambda block: numpy_kernel(block, *options),
                signature,
                x,
                allow_rechunk=True,
                output_dtypes=_output_dtypes(numpy_kernel, x, options),
            )
            return result

        return per_matrix

    return factory


def _output_dtypes(numpy_kernel: Kernel, x: Any, options: tuple[Any, ...]) -> Any:
    """The dtypes of NumPy's result, from its kernel on a 1x1 identity of ``x``'s dtype (every
    factorisation exists for it)."""
    sample = numpy_kernel(np.eye(1, dtype=x.dtype), *options)
    if isinstance(sample, tuple):
        return [np.asarray(part).dtype for part in sample]
    return np.asarray(sample).dtype


def _standard_eigh(xp: Any) -> Kernel:
    def eigh(a: Any, UPLO: str = "L") -> tuple[Any, Any]:
        if UPLO.upper() == "U":  # the upper triangle is the lower one of the adjoint
            a = xp.linalg.matrix_transpose(a)
            a = xp.conj(a) if xp.isdtype(a.dtype, "complex floating") else a
        values, vectors = xp.linalg.eigh(a)
        return values, vectors

    return eigh


def _standard_eig(xp: Any) -> Kernel | None:
    """The standard's ``eig`` (an extension newer than some namespaces), complex as NumPy's
    kernel makes it."""
    if not hasattr(xp.linalg, "eig"):
        return None

    def eig(a: Any) -> tuple[Any, Any]:
        values, vectors = xp.linalg.eig(a)
        return values, vectors

    return eig


def _standard_slogdet(xp: Any) -> Kernel:
    def slogdet(a: Any) -> tuple[Any, Any]:
        sign, logabsdet = xp.linalg.slogdet(a)
        return sign, logabsdet

    return slogdet


def _svd(xp: Any) -> Kernel:
    da = dask_array(xp)

    def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True) -> Any:
        if da is None:
            if not compute_uv:
                return xp.linalg.svdvals(a)
            u, s, vh = xp.linalg.svd(a, full_matrices=full_matrices)
            return u, s, vh
        m, n = a.shape[-2:]
        k = min(m, n)
        numpy_kernel = _numpy_kernel("aten::linalg_svd")
        if not compute_uv:
            signature, sizes = "(m,n)->(k)", {"k": k}
        elif full_matrices:
            signature, sizes = "(m,n)->(m,m),(k),(n,n)", {"k": k}
        else:
            signature, sizes = "(m,n)->(m,k),(k),(k,n)", {"k": k}
        result = da.apply_gufunc(
            lambda block: numpy_kernel(block, full_matrices, compute_uv),
            signature,
            a,
            allow_rechunk=True,
            output_sizes=sizes,
            output_dtypes=_output_dtypes(numpy_kernel, a, (full_matrices, compute_uv)),
        )
        return tuple(result) if compute_uv else result

    return svd


def _solve(xp: Any) -> Kernel:
    """``np.linalg.solve``: ``b`` a vector (a 1-d ``b``) or a stack of matrices."""
    da = dask_array(xp)

    def solve(a: Any, b: Any) -> Any:
        if da is None:
            if b.ndim == 1:
                return xp.linalg.solve(a, xp.expand_dims(b, axis=-1))[..., 0]
            return xp.linalg.solve(a, b)
        signature = "(i,i),(i)->(i)" if b.ndim == 1 else "(i,i),(i,k)->(i,k)"
        dtype = np.result_type(a.dtype, b.dtype, np.float64 if a.dtype.kind in "iub" else a.dtype)
        return da.apply_gufunc(
            np.linalg.solve, signature, a, b, allow_rechunk=True, output_dtypes=dtype
        )

    return solve


def _scipy_solver(name: str) -> TableEntry:
    """``scipy.linalg.solve_triangular``/``solve`` on Dask: SciPy's per block holding the
    whole matrix and whole right-hand sides (the standard has neither: none elsewhere)."""
    numpy_kernel = _numpy_kernel(name)

    def factory(xp: Any) -> Kernel | None:
        da = dask_array(xp)
        return None if da is None else _solver_per_block(da, numpy_kernel)

    return factory


def _solver_per_block(da: Any, numpy_kernel: Kernel) -> Kernel:
    def solve(a: Any, b: Any, *options: Any) -> Any:
        if a.ndim != 2 or b.ndim not in (1, 2):
            raise BackendError("a SciPy solve on Dask takes one matrix and a 1-d or 2-d b")
        signature = "(i,i),(i)->(i)" if b.ndim == 1 else "(i,i),(i,k)->(i,k)"
        sample = numpy_kernel(np.eye(1, dtype=a.dtype), np.ones((1,) * b.ndim, b.dtype), *options)
        return da.apply_gufunc(
            lambda matrix, rhs: numpy_kernel(matrix, rhs, *options),
            signature,
            a,
            b,
            allow_rechunk=True,
            output_dtypes=sample.dtype,
        )

    return solve


def _solve_read_mask(xp: Any) -> Kernel | None:
    """`ir.ops.scipy_linalg.solve_read_mask` on Dask: a NumPy constant (Dask mixes with
    NumPy), of the matrix's size and dtype, read from a stand-in of that shape."""
    if dask_array(xp) is None:
        return None
    numpy_kernel = _numpy_kernel("aten::_solve_read_mask")
    return lambda assume_a, like: numpy_kernel(assume_a, np.empty(like.shape[-1:], like.dtype))


def _norm(xp: Any) -> Kernel:
    """``np.linalg.norm``: NumPy's per block of whole reduced axes on Dask; the standard's
    vector and matrix norms elsewhere (``ord`` as NumPy names them)."""
    da = dask_array(xp)
    numpy_kernel = _numpy_kernel("aten::linalg_norm")

    def norm(x: Any, order: Any = None, axis: Any = None, keepdims: bool = False) -> Any:
        if axis is None and (order is None or x.ndim == 1):
            flat = safe_reshape(xp, x, (-1,))
            result = xp.linalg.vector_norm(flat, ord=2 if order is None else order)
            return xp.reshape(result, (1,) * x.ndim) if keepdims else result
        if da is not None and _line_sums(order, axis, x.ndim):
            return _extreme_line_sum(xp, x, order, axis, keepdims)
        if da is not None:
            axes = tuple(range(x.ndim)) if axis is None else axis
            axes = (axes,) if isinstance(axes, int) else tuple(axes)
            dropped = () if keepdims else tuple(a % x.ndim for a in axes)
            dtype = np.result_type(x.dtype, np.float64 if x.dtype.kind in "iub" else x.dtype)
            dtype = np.empty(0, dtype).real.dtype
            return da.map_blocks(
                lambda block: numpy_kernel(block, order, axis, keepdims),
                whole_axes(x, axes),
                drop_axis=dropped,
                chunks=_kept_chunks(whole_axes(x, axes), axes, keepdims),
                dtype=dtype,
            )
        if isinstance(axis, int) or (isinstance(axis, tuple | list) and len(axis) == 1):
            return xp.linalg.vector_norm(
                x, axis=axis, keepdims=keepdims, ord=2 if order is None else order
            )
        return _standard_matrix_norm(xp, x, order, axis, keepdims)

    return norm


def _line_sums(order: Any, axis: Any, ndim: int) -> bool:
    """Whether ``np.linalg.norm(x, order, axis)`` is a matrix norm by column or row sums."""
    matrix = (axis is None and ndim == 2) or (isinstance(axis, tuple | list) and len(axis) == 2)
    return matrix and order in (1, -1, np.inf, -np.inf)


def _extreme_line_sum(xp: Any, x: Any, order: Any, axis: Any, keepdims: bool) -> Any:
    """The 1 and inf matrix norms on Dask, summed as its gradient formula sums them again
    (``np.sum(np.abs(x), axis, keepdims=True)``) and compares with the norm for ties: the
    same Dask reduction gives the same rounding, which NumPy's kernel per block need not."""
    which = _numpy_kernel("aten::_matrix_norm_axis")
    summed = which(axis, x.ndim, 0 if order in (1, -1) else 1)
    other = which(axis, x.ndim, 1 if order in (1, -1) else 0)
    sums = xp.sum(xp.abs(x), axis=summed, keepdims=True)
    extreme = xp.max if order > 0 else xp.min
    result = extreme(sums, axis=other, keepdims=True)
    return result if keepdims else xp.squeeze(result, axis=(summed, other))


def _logsumexp(xp: Any) -> Kernel:
    """SciPy's ``logsumexp``: on Dask, SciPy's per block of whole reduced axes (``b`` a
    number: an array ``b`` would need its own chunks aligned, and is refused); elsewhere
    spelled as its definition, shifted by the largest finite element."""
    da = dask_array(xp)
    numpy_kernel = _numpy_kernel("aten::special_logsumexp")

    def logsumexp(a: Any, axis: Any = None, b: Any = 1.0, keepdims: bool = False, *_: Any) -> Any:
        axes = tuple(range(a.ndim)) if axis is None else axis_tuple(axis)
        axes = (axes,) if isinstance(axes, int) else axes
        if da is not None:
            if hasattr(b, "shape") and getattr(b, "ndim", 0) > 0:
                raise BackendError("scipy.special.logsumexp with an array b has no Dask kernel")
            whole = whole_axes(a, axes)
            dtype = np.result_type(a.dtype, np.float64 if a.dtype.kind in "iub" else a.dtype)
            return da.map_blocks(
                lambda block: numpy_kernel(block, axis, b, keepdims, False),
                whole,
                drop_axis=() if keepdims else tuple(i % a.ndim for i in axes),
                chunks=_kept_chunks(whole, axes, keepdims),
                dtype=dtype,
            )
        largest = xp.max(a, axis=axes, keepdims=True)
        largest = xp.where(xp.isfinite(largest), largest, xp.zeros_like(largest))
        total = xp.sum(b * xp.exp(a - largest), axis=axes, keepdims=True)
        result = xp.log(total) + largest
        return result if keepdims else xp.squeeze(result, axis=axes)

    return logsumexp


def _kept_chunks(x: Any, axes: tuple[int, ...], keepdims: bool) -> tuple[Any, ...]:
    reduced = {a % x.ndim for a in axes}
    return tuple(
        ((1,) if keepdims else None) if i in reduced else chunks
        for i, chunks in enumerate(x.chunks)
        if keepdims or i not in reduced
    )


def _standard_matrix_norm(xp: Any, x: Any, order: Any, axis: Any, keepdims: bool) -> Any:
    rows, columns = (a % x.ndim for a in (axis if axis is not None else (-2, -1)))
    moved = xp.moveaxis(x, (rows, columns), (-2, -1))
    result = xp.linalg.matrix_norm(moved, ord="fro" if order is None else order)
    if keepdims:
        for position in sorted((rows, columns)):
            result = xp.expand_dims(result, axis=position)
    return result


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


# -- sorting and triangles --


def _sorting(name: str) -> KernelFactory:
    """``np.sort``/``np.argsort``, stable (NumPy's default kind is not, but only ties tell
    them apart). Dask's namespace sorts by rechunking the axis to one chunk, as above."""

    def factory(xp: Any) -> Kernel:
        function = getattr(xp, name)

        def sort(x: Any, axis: Any = -1, kind: Any = None, stable: Any = None) -> Any:
            if axis is None:
                x, axis = safe_reshape(xp, x, (-1,)), 0
            return function(x, axis=axis, stable=True)

        return sort

    return factory


WHOLE_AXIS_KERNELS: dict[str, TableEntry] = {
    "aten::linalg_inv": _per_matrix("aten::linalg_inv", lambda xp: xp.linalg.inv),
    "aten::linalg_det": _per_matrix("aten::linalg_det", lambda xp: xp.linalg.det),
    "aten::linalg_slogdet": _per_matrix("aten::linalg_slogdet", _standard_slogdet),
    "aten::linalg_cholesky": _per_matrix("aten::linalg_cholesky", lambda xp: xp.linalg.cholesky),
    "aten::linalg_eigh": _per_matrix("aten::linalg_eigh", _standard_eigh),
    "aten::linalg_pinv": _per_matrix("aten::linalg_pinv", lambda xp: xp.linalg.pinv),
    "aten::linalg_eig": _per_matrix("aten::linalg_eig", _standard_eig),
    "aten::scipy_det": _per_matrix("aten::scipy_det", lambda xp: None),
    "aten::scipy_cholesky": _per_matrix("aten::scipy_cholesky", lambda xp: None),
    "aten::linalg_svd": _svd,
    "aten::linalg_solve": _solve,
    "aten::scipy_solve_triangular": _scipy_solver("aten::scipy_solve_triangular"),
    "aten::scipy_solve": _scipy_solver("aten::scipy_solve"),
    "aten::_solve_read_mask": _solve_read_mask,
    "aten::linalg_norm": _norm,
    "aten::special_logsumexp": _logsumexp,
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
    "aten::sort": _sorting("sort"),
    "aten::argsort": _sorting("argsort"),
    "aten::tril": lambda xp: lambda x, k=0: xp.tril(x, k=k),
    "aten::triu": lambda xp: lambda x, k=0: xp.triu(x, k=k),
}
"""The kernels of `ir.backend_kernels.NAMESPACE_KERNELS` that need whole axes or matrices."""
