"""Backend kernels of the gradients of indexing and rearranging (Note [Array backends] in
`ir.backends`): the scatter-adds that are the gradients of integer indexing, ``take``, ``repeat``,
``pad`` and sorting's permutations, and the backward kernels of ``tile``, the joins and ``prod``.

Note [Scatter-adds on backends]
NumPy's gradient of ``x[idx]`` adds into zeros in place (``np.add.at``), which neither Dask
nor the Array API has. Here every scatter-add is made from one question, "which element of
the input did each element of the result come from?": the same operator applied to an array
of positions, ``reshape(arange(size), shape)``, answers it (``owners``), on the backend
itself, lazily. The gradient is then the sum of the result's gradient per owner:
- on Dask, ``bincount(owners, weights=grad, minlength=size)``: chunk by chunk, then summed;
  exact up to the order of additions (its result is one chunk as long as the input);
- elsewhere, a one-hot matrix product ``grad @ (owners[:, None] == arange(size))``, whose
  memory grows with the number of elements read times the input's size: meant for the
  parameter-sized arrays an Array API test runs, not for large data.
A complex gradient is summed as its real and imaginary parts.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ir.backend_kernel_parts import (
    Kernel,
    TableEntry,
    along,
    dask_array,
    positions_of,
    safe_reshape,
    shape_tuple,
)
from ir.backend_kernels_indexing import (
    flat_owners,
    index_kernel,
    pad_owners,
    repeat_kernel,
    take_kernel,
)
from ir.ops.arrangement import atleast_shape
from ir.ops.shape_rules import normalize_axes


def _sum_per_owner(xp: Any, owners: Any, grad: Any, size: int) -> Any:
    """A flat array of ``size``: per position, the sum of ``grad`` where ``owners`` names
    it (Note [Scatter-adds on backends])."""
    da = dask_array(xp)
    owners = safe_reshape(xp, xp.asarray(owners), (-1,))
    values = safe_reshape(xp, grad, (-1,))
    if xp.isdtype(values.dtype, "complex floating"):
        real = _sum_per_owner(xp, owners, xp.real(values), size)
        imag = _sum_per_owner(xp, owners, xp.imag(values), size)
        return xp.astype(real, values.dtype) + 1j * xp.astype(imag, values.dtype)
    if da is not None:
        owners = da.asarray(owners).rechunk(values.chunks)
        summed = da.bincount(owners, weights=values, minlength=size)
        return xp.astype(summed, values.dtype)
    one_hot = xp.astype(
        xp.expand_dims(owners, axis=1)
        == xp.expand_dims(xp.arange(size, dtype=owners.dtype), axis=0),
        values.dtype,
    )
    return xp.matmul(values, one_hot)


def scattered(xp: Any, owners: Any, grad: Any, shape: Any) -> Any:
    """Zeros of ``shape`` with each element of ``grad`` added at the flat position its
    owner names (Note [Scatter-adds on backends])."""
    shape = shape_tuple(shape)
    grad = xp.broadcast_to(grad, tuple(owners.shape))
    return xp.reshape(_sum_per_owner(xp, owners, grad, math.prod(shape)), shape)


def _index_backward(xp: Any) -> Kernel:
    index = index_kernel(xp)

    def index_backward(grad: Any, shape: Any, indices: Any) -> Any:
        owners = index(positions_of(xp, shape), *indices)
        return scattered(xp, owners, grad, shape)

    return index_backward


def _scatter_slices(xp: Any) -> Kernel:
    """`ir.ops.gradients.indexing.scatter_slices`: every gradient summed into its slice."""

    def scatter_slices(grads: Any, shape: Any, keys: Any) -> Any:
        positions = positions_of(xp, shape)
        owners, values = [], []
        for grad, (axis, *place) in zip(grads, keys, strict=True):
            item = slice(*place) if len(place) == 3 else place[0]
            read = positions[along(axis, item)]
            owners.append(xp.reshape(read, (-1,)))
            values.append(safe_reshape(xp, xp.broadcast_to(grad, tuple(read.shape)), (-1,)))
        dtype = xp.result_type(*(v.dtype for v in values))
        values = [xp.astype(v, dtype) for v in values]
        return scattered(xp, xp.concat(owners), xp.concat(values), shape)

    return scatter_slices


def _take_backward(xp: Any) -> Kernel:
    take = take_kernel(xp)

    def take_backward(grad: Any, shape: Any, indices: Any, axis: int | None) -> Any:
        return scattered(xp, take(positions_of(xp, shape), indices, axis), grad, shape)

    return take_backward


def _repeat_backward(xp: Any) -> Kernel:
    repeat = repeat_kernel(xp)

    def repeat_backward(grad: Any, shape: Any, repeats: Any, axis: int | None) -> Any:
        return scattered(xp, repeat(positions_of(xp, shape), repeats, axis), grad, shape)

    return repeat_backward


def _pad_backward(xp: Any) -> Kernel:
    def pad_backward(grad: Any, shape: Any, pad_width: Any, mode: str) -> tuple[Any, Any]:
        owners = pad_owners(shape_tuple(shape), pad_width, mode).reshape(-1)
        copied = owners >= 0  # constants: NumPy arrays of positions, not of data
        flat = safe_reshape(xp, grad, (-1,))
        kept = xp.take(flat, xp.asarray(np.flatnonzero(copied)))
        filled = xp.take(flat, xp.asarray(np.flatnonzero(~copied)))
        result = scattered(xp, xp.asarray(owners[copied]), kept, shape)
        return result, xp.sum(filled)

    return pad_backward


def _tile_backward(xp: Any) -> Kernel:
    def tile_backward(grad: Any, shape: Any, reps: Any) -> Any:
        shape = tuple(shape)
        counts = tuple(int(r) for r in np.ravel(reps))
        rank = max(len(counts), len(shape))
        base = (1,) * (rank - len(shape)) + shape
        counts = (1,) * (rank - len(counts)) + counts
        split = tuple(n for pair in zip(counts, base, strict=True) for n in pair)
        tiles = xp.sum(safe_reshape(xp, grad, split), axis=tuple(range(0, 2 * rank, 2)))
        return xp.reshape(tiles, shape)

    return tile_backward


def _unpermute(xp: Any) -> Kernel:
    """`ir.ops.sorting.unpermute`: each gradient summed back where `ir.backend_kernels_indexing`'s
    ``_permute`` read it."""

    def unpermute(grad: Any, shape: Any, order: Any, axis: int | None) -> Any:
        return scattered(xp, flat_owners(xp, shape_tuple(shape), order, axis), grad, shape)

    return unpermute


def _join_backward(xp: Any) -> Kernel:
    """`ir.ops.gradients.shape_ops.join_backward`: the gradient of ``hstack``/``vstack``
    sliced back into one piece per input, in its own shape."""

    def join_backward(grad: Any, shapes: Any, axis: int) -> tuple[Any, ...]:
        pieces, start = [], 0
        for shape in shapes:
            length = atleast_shape(tuple(shape), grad.ndim)[axis]
            piece = grad[along(axis, slice(start, start + length))]
            pieces.append(safe_reshape(xp, piece, tuple(shape)))
            start += length
        return tuple(pieces)

    return join_backward


def _prod_backward(xp: Any) -> Kernel:
    """`ir.ops.gradients.reductions.prod_backward`: each element's gradient is the product
    of the others, as the running products before and after it (no division)."""

    def prod_backward(grad: Any, x: Any, axis: Any, keepdims: bool) -> Any:
        reduced = normalize_axes(axis, x.ndim)
        kept = [i for i in range(x.ndim) if i not in reduced]
        moved = xp.permute_dims(x, (*kept, *reduced))
        count = math.prod(x.shape[i] for i in reduced)
        spread = grad
        if not keepdims:
            for position in sorted(reduced):
                spread = xp.expand_dims(spread, axis=position)
        spread = xp.broadcast_to(spread, tuple(x.shape))
        if count == 0:
            return xp.zeros_like(spread)
        flat = safe_reshape(xp, moved, (*moved.shape[: len(kept)], count))
        ones = xp.ones((*flat.shape[:-1], 1), dtype=flat.dtype)
        before = xp.cumulative_prod(xp.concat([ones, flat[..., :-1]], axis=-1), axis=-1)
        after = xp.cumulative_prod(
            xp.concat([ones, xp.flip(flat[..., 1:], axis=-1)], axis=-1), axis=-1
        )
        others = safe_reshape(xp, before * xp.flip(after, axis=-1), tuple(moved.shape))
        order = [*kept, *reduced]
        return spread * xp.permute_dims(others, tuple(order.index(i) for i in range(x.ndim)))

    return prod_backward


INDEXING_GRADIENT_KERNELS: dict[str, TableEntry] = {
    "aten::_index_backward": _index_backward,
    "aten::_scatter_slices": _scatter_slices,
    "aten::_take_backward": _take_backward,
    "aten::_repeat_backward": _repeat_backward,
    "aten::_pad_backward": _pad_backward,
    "aten::_tile_backward": _tile_backward,
    "aten::_prod_backward": _prod_backward,
    "aten::_unpermute": _unpermute,
    "aten::_join_backward": _join_backward,
    "aten::_stack_backward": lambda xp: (
        lambda grad, axis: tuple(grad[along(axis, i)] for i in range(grad.shape[axis]))
    ),
}
"""The kernels of `ir.backend_kernels.NAMESPACE_KERNELS` for the gradients of indexing and
rearranging."""
