"""Backend kernels of differences, cumulative sums' gradients, joins, truth reductions,
rounding, and the helpers of gradient formulas that read only shapes and dtypes (Note [Array
backends] in `ir.backends`)."""

from __future__ import annotations

import math
from typing import Any

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
from ir.ops import OPS
from ir.ops.arrangement import atleast_shape, column_shape


def _diff(xp: Any) -> Kernel:
    """``np.diff``: ``n`` times the difference of each element and the one before it."""

    def diff(x: Any, n: int = 1, axis: int = -1) -> Any:
        for _ in range(n):
            x = x[along(axis, slice(1, None))] - x[along(axis, slice(None, -1))]
        return x

    return diff


def _diff_backward(xp: Any) -> Kernel:
    """`ir.ops.gradients.scans.diff_backward`: ``n`` times the adjoint of one difference,
    ``g[j - 1] - g[j]`` with zeros beyond either end."""

    def diff_backward(grad: Any, shape: Any, n: int, axis: int) -> Any:
        if n >= shape[axis]:
            return xp.zeros(tuple(shape), dtype=grad.dtype)
        for _ in range(n):
            edge = list(grad.shape)
            edge[axis] = 1
            zeros = xp.zeros(tuple(edge), dtype=grad.dtype)
            padded = xp.concat([zeros, grad, zeros], axis=axis)
            grad = padded[along(axis, slice(None, -1))] - padded[along(axis, slice(1, None))]
        return grad

    return diff_backward


def _cumsum_backward(xp: Any) -> Kernel:
    """The gradient of ``np.cumsum``: a cumulative sum from the other end."""

    def cumsum_backward(grad: Any, shape: Any, axis: int | None) -> Any:
        along_axis = 0 if axis is None else axis
        flipped = xp.flip(grad, axis=along_axis)
        summed = xp.flip(xp.cumulative_sum(flipped, axis=along_axis), axis=along_axis)
        return safe_reshape(xp, summed, tuple(shape))

    return cumsum_backward


def _truth(name: str) -> KernelFactory:
    def factory(xp: Any) -> Kernel:
        function = getattr(xp, name)
        return lambda x, axis=None, keepdims=False: function(
            x, axis=axis_tuple(axis), keepdims=keepdims
        )

    return factory


def _round(xp: Any) -> Kernel:
    """``np.round``: to ``decimals`` as NumPy does it, scaling by a power of ten, rounding
    half to even, and scaling back."""

    def round_(x: Any, decimals: int = 0) -> Any:
        if decimals == 0 or not xp.isdtype(x.dtype, "real floating"):
            return xp.round(x)
        if decimals > 0:
            scale = 10.0**decimals
            return xp.round(x * scale) / scale
        scale = 10.0**-decimals
        return xp.round(x / scale) * scale

    return round_


def _angle(xp: Any) -> Kernel:
    def angle(z: Any, deg: bool = False) -> Any:
        z = xp.asarray(z)
        if xp.isdtype(z.dtype, "complex floating"):
            result = xp.atan2(xp.imag(z), xp.real(z))
        else:
            result = xp.atan2(xp.zeros_like(z, dtype=xp.float64), xp.astype(z, xp.float64))
        return result * (180 / math.pi) if deg else result

    return angle


def _nan_to_num(xp: Any) -> Kernel:
    """``np.nan_to_num``: NaN to ``nan``, infinities to ``posinf``/``neginf`` (the dtype's
    largest and smallest finite values by default); a complex array part by part."""

    def nan_to_num(x: Any, nan: Any = 0.0, posinf: Any = None, neginf: Any = None) -> Any:
        x = xp.asarray(x)
        if xp.isdtype(x.dtype, "complex floating"):
            real = nan_to_num(xp.real(x), nan, posinf, neginf)
            imag = nan_to_num(xp.imag(x), nan, posinf, neginf)
            return xp.astype(real, x.dtype) + 1j * xp.astype(imag, x.dtype)
        if not xp.isdtype(x.dtype, "real floating"):
            return x
        info = xp.finfo(x.dtype)
        high = info.max if posinf is None else posinf
        low = info.min if neginf is None else neginf
        x = xp.where(xp.isnan(x), xp.asarray(nan, dtype=x.dtype), x)
        x = xp.where(x == math.inf, xp.asarray(high, dtype=x.dtype), x)
        return xp.where(x == -math.inf, xp.asarray(low, dtype=x.dtype), x)

    return nan_to_num


def _joined(shape_for: Any) -> KernelFactory:
    """`ir.ops.arrangement.join`/``column_join``: each array reshaped as ``np.hstack``,
    ``np.vstack`` or ``np.column_stack`` shapes it, concatenated along ``axis``."""

    def factory(xp: Any) -> Kernel:
        def join(tensors: Any, axis: int, ndim: int | None = None) -> Any:
            shaped = [
                xp.reshape(t, shape_for(tuple(t.shape), ndim)) for t in map(xp.asarray, tensors)
            ]
            return xp.concat(shaped, axis=axis)

        return join

    return factory


def _column_join_backward(xp: Any) -> Kernel:
    def column_join_backward(grad: Any, shapes: Any, axis: int) -> tuple[Any, ...]:
        pieces, start = [], 0
        for shape in shapes:
            length = column_shape(tuple(shape))[axis]
            piece = grad[along(axis, slice(start, start + length))]
            pieces.append(safe_reshape(xp, piece, tuple(shape)))
            start += length
        return tuple(pieces)

    return column_join_backward


def _dtype_name(xp: Any, x: Any) -> str:
    """NumPy's name of ``x``'s dtype (``float64`` for a Python float, as NumPy types it)."""
    if isinstance(x, bool):
        return "bool"
    if isinstance(x, int):
        return "int64"
    if isinstance(x, float):
        return "float64"
    if isinstance(x, complex):
        return "complex128"
    dtype = x.dtype
    name = getattr(dtype, "name", None)
    return name if isinstance(name, str) else str(dtype).rsplit(".", 1)[-1]


def _zeros_like_value(xp: Any) -> Kernel:
    def zeros_like_value(value: Any) -> Any:
        if isinstance(value, list | tuple):
            return type(value)(zeros_like_value(item) for item in value)
        if hasattr(value, "shape") and hasattr(value, "dtype"):
            return xp.zeros_like(value)
        return 0.0 if not isinstance(value, complex) else 0j

    return zeros_like_value


def _along_axis_of(name: str) -> TableEntry:
    """SciPy's ``softmax``/``log_softmax`` on Dask: SciPy's per block of whole ``axis``
    lines (the normaliser reads the whole line); no kernel elsewhere."""
    numpy_kernel = OPS[name].kernel
    assert numpy_kernel is not None

    def factory(xp: Any) -> Kernel | None:
        da = dask_array(xp)
        if da is None:
            return None

        def along_axis(x: Any, axis: Any = None) -> Any:
            axes = tuple(range(x.ndim)) if axis is None else axis_tuple(axis)
            axes = (axes,) if isinstance(axes, int) else axes
            return da.map_blocks(
                lambda block: numpy_kernel(block, axis), whole_axes(x, axes), dtype=x.dtype
            )

        return along_axis

    return factory


def _python(name: str) -> KernelFactory:
    """An operator on Python values only (shifts, flags, shapes): NumPy's kernel."""
    kernel = OPS[name].kernel
    assert kernel is not None
    return lambda xp: kernel


SCAN_KERNELS: dict[str, TableEntry] = {
    "aten::diff": _diff,
    "aten::_diff_backward": _diff_backward,
    "aten::_cumsum_backward": _cumsum_backward,
    "aten::all": _truth("all"),
    "aten::any": _truth("any"),
    "aten::round": _round,
    "aten::angle": _angle,
    "aten::nan_to_num": _nan_to_num,
    "aten::flatten": lambda xp: lambda x: safe_reshape(xp, x, (-1,)),
    "aten::ndim": lambda xp: lambda x: x.ndim,
    "aten::stop_gradient": lambda xp: lambda value: value,
    "aten::_join": _joined(atleast_shape),
    "aten::_column_join": _joined(lambda shape, ndim: column_shape(shape)),
    "aten::_column_join_backward": _column_join_backward,
    "aten::_is_complex": lambda xp: lambda x: _dtype_name(xp, x).startswith("complex"),
    "aten::_is_real": lambda xp: lambda x: not _dtype_name(xp, x).startswith("complex"),
    "aten::_dtype_of": lambda xp: lambda x: _dtype_name(xp, x),
    "aten::_zeros_like_value": _zeros_like_value,
    "aten::special_softmax": _along_axis_of("aten::special_softmax"),
    "aten::special_log_softmax": _along_axis_of("aten::special_log_softmax"),
    **{
        name: _python(name)
        for name in (
            "aten::_negated",
            "aten::_is_list",
            "aten::_transposes",
            "aten::_swaps_operands",
            "aten::_reads_one_triangle",
        )
    },
}
"""The kernels of `ir.backend_kernels.NAMESPACE_KERNELS` for scans, joins and helpers."""
