"""Pieces the backend kernel tables share (Note [Array backends] in `ir.backends`): how an
operator's arguments read in Array API terms, and how a kernel tells Dask's namespace apart
for the operations Dask runs per block."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

Kernel = Callable[..., Any]
KernelFactory = Callable[[Any], Kernel]  # the namespace -> the kernel
# an entry of the table: the namespace -> the kernel, or None when the namespace has nothing
# to make it of (the operator is then refused there)
TableEntry = Callable[[Any], Kernel | None]


def along(axis: int, item: Any) -> tuple[Any, ...]:
    """`ir.ops.indexing._along` as the Array API indexes: every axis, or an ellipsis."""
    if axis >= 0:
        return (*(slice(None),) * axis, item, Ellipsis)
    return (Ellipsis, item, *(slice(None),) * (-axis - 1))


def axis_tuple(axis: Any) -> Any:
    return tuple(axis) if isinstance(axis, list) else axis


def shape_tuple(shape: Any) -> tuple[int, ...]:
    return tuple(shape) if isinstance(shape, tuple | list) else (shape,)


def dtype_in(xp: Any, name: str | None) -> Any:
    return None if name is None else getattr(xp, name)


def dask_array(xp: Any) -> Any | None:
    """``dask.array`` when ``xp`` is Dask's namespace, else None: the kernels that run a
    NumPy function per block (`whole_axes`) need Dask's own ``map_blocks``."""
    if not getattr(xp, "__name__", "").startswith("array_api_compat.dask"):
        return None
    import dask.array

    return dask.array


def whole_axes(x: Any, axes: Any) -> Any:
    """Dask array ``x`` rechunked so that each of ``axes`` is one chunk: then a NumPy
    function that works along those axes only (a sort, a transform, a factorisation of each
    matrix) gives, on every block, exactly that block of the whole result."""
    ndim = x.ndim
    return x.rechunk({axis % ndim: -1 for axis in axes})


def size_of(shape: Any) -> int:
    return math.prod(shape_tuple(shape))


def safe_reshape(xp: Any, x: Any, shape: tuple[int, ...]) -> Any:
    """``reshape``; on Dask, through the flat array when the new axes split the chunked
    ones unevenly (Dask's reshape merges or splits axes evenly only): flattening merges
    every axis and the flat array splits into any shape, both exact."""
    if dask_array(xp) is None:
        return xp.reshape(x, shape)
    try:
        return xp.reshape(x, shape)
    except NotImplementedError:
        return xp.reshape(xp.reshape(x, (-1,)), shape)


def positions_of(xp: Any, shape: Any) -> Any:
    """Each element's flat position, as an array of ``shape``: an operator applied to it says
    which input element each result element reads (Note [Scatter-adds on backends] in
    `ir.backend_kernels_indexing_gradients`)."""
    shape = shape_tuple(shape)
    return xp.reshape(xp.arange(math.prod(shape), dtype=xp.int64), shape)
