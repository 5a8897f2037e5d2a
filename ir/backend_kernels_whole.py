"""Backend kernels of the operators that need a whole axis or a whole matrix at once: sorts,
matrix factorisations, norms, triangles (Note [Array backends] in `ir.backends`; Fourier
transforms, which work the same way, are `ir.backend_kernels_fourier`).

On a strict Array API namespace (and CuPy's) each calls the standard's own function (its
``linalg`` extension, ``sort``). Dask splits arrays into chunks, and none of
these operations can be computed chunk by chunk along the axes they work on; they are
computed along every other axis, though. So on Dask each runs the NumPy function per block
after rechunking the axes it works on to one chunk (`whole_axes`): a block then holds whole
lines or whole matrices, and the NumPy result on it is exactly that block of the result. The
arrays stay lazy Dask arrays; only those axes are gathered, and a chunk then holds a whole
matrix: a matrix larger than a worker's memory cannot be factorised this way (nor by Dask,
whose own ``tsqr`` covers tall-and-skinny QR only); stacks of matrices stay chunked along
the stack.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ir.backend_kernel_parts import (
    Kernel,
    KernelFactory,
    TableEntry,
    axis_tuple,
    dask_array,
    safe_reshape,
    whole_axes,
)
from ir.errors import BackendError
from ir.ops import OPS


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
    "aten::sort": _sorting("sort"),
    "aten::argsort": _sorting("argsort"),
    "aten::tril": lambda xp: lambda x, k=0: xp.tril(x, k=k),
    "aten::triu": lambda xp: lambda x, k=0: xp.triu(x, k=k),
}
"""The kernels of `ir.backend_kernels.NAMESPACE_KERNELS` that need whole axes or matrices."""
