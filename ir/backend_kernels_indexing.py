"""Backend kernels of indexing and rearranging (Note [Array backends] in `ir.backends`): integer
indexing, ``take``, ``repeat``, ``pad``, ``tile``, ``split``, the stacks, rolls and rotations, and
the permutations of sorting, each a gather of its input's elements. Their gradients, the
scatter-adds, are in `ir.backend_kernels_indexing_gradients`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any, cast

import numpy as np

from ir.backend_kernel_parts import (
    Kernel,
    KernelFactory,
    TableEntry,
    along,
    dask_array,
    positions_of,
    safe_reshape,
)
from ir.errors import BackendError
from ir.ops import OPS
from ir.ops.arrangement import atleast_shape


def _index_key(indices: Sequence[Any]) -> tuple[Any, ...]:
    return (*(slice(None) if item is None else item for item in indices), Ellipsis)


def index_kernel(xp: Any) -> Kernel:
    """``x[indices]``: one integer vector among full slices is a ``take`` along its axis
    (the Array API indexes with an array only when every axis has an integer or an array);
    a list is the integer array NumPy reads it as."""

    def index(x: Any, *indices: Any) -> Any:
        items = [xp.asarray(item) if isinstance(item, list) else item for item in indices]
        arrays = [i for i, item in enumerate(items) if hasattr(item, "ndim")]
        if len(arrays) == 1 and items[arrays[0]].ndim == 1:
            (axis,) = arrays
            alone = all(item is None for i, item in enumerate(items) if i != axis)
            if alone and xp.isdtype(items[axis].dtype, "integral"):
                return xp.take(x, items[axis], axis=axis)
        if arrays and len(items) == x.ndim and all(item is not None for item in items):
            return x[tuple(items)]  # every axis indexed: no ellipsis (the standard wants none)
        return x[_index_key(items)]

    return index


def take_kernel(xp: Any) -> Kernel:
    def take(x: Any, indices: Any, axis: int | None = None) -> Any:
        if axis is None:
            x, axis = safe_reshape(xp, x, (-1,)), 0
        indices = xp.asarray(indices)
        flat = xp.reshape(indices, (-1,))
        taken = xp.take(x, flat, axis=axis)
        axis %= x.ndim
        return xp.reshape(taken, (*x.shape[:axis], *indices.shape, *x.shape[axis + 1 :]))

    return take


def repeat_kernel(xp: Any) -> Kernel:
    """``np.repeat``: a take of each index its count of times (the counts are constants)."""

    def repeat(x: Any, repeats: Any, axis: int | None = None) -> Any:
        if axis is None:
            x, axis = safe_reshape(xp, x, (-1,)), 0
        length = x.shape[axis]
        owners = np.repeat(np.arange(length), np.asarray(repeats))
        return xp.take(x, xp.asarray(owners), axis=axis)

    return repeat


def _pad(xp: Any) -> Kernel:
    """``np.pad``: a take of the positions NumPy's pad gives an array of positions (-1 where
    the constant goes). Dask's own pad serves the constant and edge modes only: its
    reflections come out in the wrong shape when a pad is wider than the chunk it reflects
    (``da.pad`` of a (4, 2) array in chunks of 1, ``((1, 0), (0, 2))``, "reflect": (5, 2)
    where NumPy gives (5, 4))."""
    da = dask_array(xp)

    def pad(x: Any, pad_width: Any, mode: str = "constant", constant_values: Any = 0) -> Any:
        if da is not None and mode in ("constant", "edge"):
            if mode == "constant":
                return da.pad(x, pad_width, mode, constant_values=constant_values)
            return da.pad(x, pad_width, mode)
        owners = pad_owners(tuple(x.shape), pad_width, mode)
        flat = safe_reshape(xp, x, (-1,))
        read = xp.take(flat, xp.asarray(np.maximum(owners, 0).reshape(-1)))
        read = safe_reshape(xp, read, owners.shape)
        if mode != "constant":
            return read
        return xp.where(xp.asarray(owners >= 0), read, xp.asarray(constant_values, dtype=x.dtype))

    return pad


def pad_owners(shape: tuple[int, ...], pad_width: Any, mode: str) -> np.ndarray:
    """Which element each element of the padded array copies (-1: the constant)."""
    origin = np.arange(math.prod(shape)).reshape(shape)
    if mode == "constant":
        constant: np.ndarray = np.pad(origin, pad_width, "constant", constant_values=-1)
        return constant
    padded: np.ndarray = np.pad(origin, pad_width, cast(Any, mode))
    return padded


def _tile(xp: Any) -> Kernel:
    def tile(x: Any, reps: Any) -> Any:
        counts = tuple(int(r) for r in np.ravel(reps))
        if len(counts) > x.ndim:
            x = xp.reshape(x, (1,) * (len(counts) - x.ndim) + tuple(x.shape))
        return xp.tile(x, counts)

    return tile


def _split(kind: str) -> KernelFactory:
    """``np.split`` (``array_split`` when ``kind`` is "array", and the h/v/d spellings) as
    slices along the axis, at the boundaries NumPy computes."""

    def factory(xp: Any) -> Kernel:
        def split(x: Any, indices_or_sections: Any, axis: int = 0) -> list[Any]:
            if kind == "h":
                axis = 1 if x.ndim > 1 else 0
            elif kind in ("v", "d"):
                axis = 0 if kind == "v" else 2
            bounds = _split_bounds(x.shape[axis], indices_or_sections, kind == "array")
            return [x[along(axis, slice(a, b))] for a, b in itertools.pairwise(bounds)]

        return split

    return factory


def _split_bounds(length: int, indices_or_sections: Any, uneven: bool) -> list[int]:
    if isinstance(indices_or_sections, int | np.integer):
        sections = int(indices_or_sections)
        if not uneven and length % sections:
            raise BackendError("array split does not result in an equal division")
        size, extra = divmod(length, sections)
        sizes = [size + 1] * extra + [size] * (sections - extra)
        return [0, *np.cumsum(sizes).tolist()]
    return [0, *(min(int(i), length) for i in indices_or_sections), length]


def _rollaxis(xp: Any) -> Kernel:
    destination = OPS["aten::_rollaxis_destination"].kernel
    assert destination is not None

    def rollaxis(x: Any, axis: int, start: int = 0) -> Any:
        return xp.moveaxis(x, axis, destination(x.ndim, axis, start))

    return rollaxis


def flat_owners(xp: Any, shape: tuple[int, ...], order: Any, axis: int | None) -> Any:
    """The flat position in an array of ``shape`` that ``take_along_axis(x, order, axis)``
    reads for each element: its own position, its index along ``axis`` replaced by
    ``order``'s (flat indices already when ``axis`` is None)."""
    if axis is None:
        return order
    axis %= len(shape)
    stride = math.prod(shape[axis + 1 :])
    line = [1] * len(shape)
    line[axis] = shape[axis]
    own_index = xp.reshape(xp.arange(shape[axis], dtype=xp.int64), tuple(line))
    return positions_of(xp, shape) + (xp.astype(order, xp.int64) - own_index) * stride


def _permute(xp: Any) -> Kernel:
    """`ir.ops.sorting.permute`, ``take_along_axis``, as a take of flat positions (which
    Dask has and its ``take_along_axis`` lacks)."""

    def permute(x: Any, order: Any, axis: int | None) -> Any:
        owners = flat_owners(xp, tuple(x.shape), order, axis)
        flat = xp.take(safe_reshape(xp, x, (-1,)), xp.reshape(owners, (-1,)))
        return xp.reshape(flat, tuple(owners.shape))

    return permute


def _partition(name: str) -> KernelFactory:
    """``np.partition``/``np.argpartition`` as a stable sort: a sorted array is partitioned
    around every ``kth``, and NumPy leaves the order on either side of it unspecified (its
    introselect's order is not one a program may rely on)."""

    def factory(xp: Any) -> Kernel:
        function = getattr(xp, name)

        def partition(x: Any, kth: Any, axis: int | None = -1) -> Any:
            if axis is None:
                x, axis = safe_reshape(xp, x, (-1,)), 0
            return function(x, axis=axis, stable=True)

        return partition

    return factory


def _stacked(kind: str) -> KernelFactory:
    """``np.vstack`` (rows: vectors as 1-row matrices), ``np.hstack`` (along axis 1, axis 0
    for vectors), ``np.column_stack`` (vectors as columns) and ``np.stack``."""

    def factory(xp: Any) -> Kernel:
        def stacked(tensors: Any, axis: int = 0) -> Any:
            arrays = [xp.asarray(t) for t in tensors]
            if kind == "stack":
                return xp.stack(arrays, axis=axis)
            if kind == "v":
                arrays = [xp.reshape(a, (1, -1)) if a.ndim < 2 else a for a in arrays]
                return xp.concat(arrays, axis=0)
            if kind == "column":
                arrays = [xp.reshape(a, (-1, 1)) if a.ndim < 2 else a for a in arrays]
                return xp.concat(arrays, axis=1)
            arrays = [xp.reshape(a, (1,)) if a.ndim == 0 else a for a in arrays]
            return xp.concat(arrays, axis=1 if arrays[0].ndim > 1 else 0)

        return stacked

    return factory


def _roll(xp: Any) -> Kernel:
    def roll(x: Any, shift: Any, axis: Any = None) -> Any:
        shift = tuple(shift) if isinstance(shift, list | tuple) else shift
        axis = tuple(axis) if isinstance(axis, list | tuple) else axis
        return xp.roll(x, shift, axis=axis)

    return roll


def _rot90(xp: Any) -> Kernel:
    """``np.rot90`` as NumPy builds it: flips and a swap of the two axes."""

    def rot90(x: Any, k: int = 1, axes: Any = (0, 1)) -> Any:
        first, second = (a % x.ndim for a in axes)
        order = list(range(x.ndim))
        order[first], order[second] = order[second], order[first]
        k %= 4
        if k == 0:
            return x
        if k == 2:
            return xp.flip(xp.flip(x, axis=first), axis=second)
        if k == 1:
            return xp.permute_dims(xp.flip(x, axis=second), tuple(order))
        return xp.flip(xp.permute_dims(x, tuple(order)), axis=second)

    return rot90


def _atleast(ndim: int) -> KernelFactory:
    """``np.atleast_1d``/``2d``/``3d``: a reshape to the shape NumPy gives."""
    return lambda xp: lambda x: xp.reshape(x, atleast_shape(tuple(x.shape), ndim))


def _python(name: str) -> KernelFactory:
    """An operator on Python values only (shapes, axes, subscripts): NumPy's kernel."""
    kernel = OPS[name].kernel
    assert kernel is not None
    return lambda xp: kernel


INDEXING_KERNELS: dict[str, TableEntry] = {
    "aten::take": take_kernel,
    "aten::repeat": repeat_kernel,
    "aten::pad": _pad,
    "aten::tile": _tile,
    "aten::split": _split("split"),
    "aten::array_split": _split("array"),
    "aten::hsplit": lambda xp: lambda x, sections: _split("h")(xp)(x, sections),
    "aten::vsplit": lambda xp: lambda x, sections: _split("v")(xp)(x, sections),
    "aten::dsplit": lambda xp: lambda x, sections: _split("d")(xp)(x, sections),
    "aten::rollaxis": _rollaxis,
    "aten::_permute": _permute,
    "aten::partition": _partition("sort"),
    "aten::argpartition": _partition("argsort"),
    "aten::stack": _stacked("stack"),
    "aten::vstack": _stacked("v"),
    "aten::hstack": _stacked("h"),
    "aten::column_stack": _stacked("column"),
    "aten::roll": _roll,
    "aten::rot90": _rot90,
    **{f"aten::atleast_{ndim}d": _atleast(ndim) for ndim in (1, 2, 3)},
    "aten::fliplr": lambda xp: lambda x: xp.flip(x, axis=1),
    "aten::flipud": lambda xp: lambda x: xp.flip(x, axis=0),
    "aten::_previous_row": lambda xp: (
        lambda tape, first, index: first if index == 0 else tape[index - 1, ...]
    ),
    "aten::_input_shapes": lambda xp: lambda tensors: tuple(tuple(t.shape) for t in tensors),
    "aten::asarray": lambda xp: lambda x: xp.asarray(x),
    **{
        name: _python(name)
        for name in (
            "aten::_tensordot_subscripts",
            "aten::_inner_subscripts",
            "aten::_rollaxis_destination",
            "aten::_cross_axes",
            "aten::_kron_subscripts",
            "aten::_kron_split",
            "aten::_norm_kind",
            "aten::_matrix_norm_axis",
            "aten::_reads_upper",
        )
    },
}
"""The kernels of `ir.backend_kernels.NAMESPACE_KERNELS` for indexing and rearranging."""
