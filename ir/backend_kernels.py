"""The kernels of the Array API backends, one per operator, each made from a namespace
(Note [Array backends] in `ir.backends`). Each follows the operator's NumPy kernel in
`ir.ops`, spelled with Array API functions only, so that it never converts an array to
NumPy; NumPy's rules the Array API leaves out (a bool array in arithmetic, ``np.sum`` of
bools, flat indexing without an ellipsis) are spelled out here.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ir.backend_kernel_parts import (
    Kernel,
    KernelFactory,
    TableEntry,
    along,
    axis_tuple,
    dtype_in,
    safe_reshape,
    shape_tuple,
)
from ir.backend_kernels_elementwise import ELEMENTWISE_KERNELS
from ir.backend_kernels_fourier import FOURIER_KERNELS
from ir.backend_kernels_indexing import INDEXING_KERNELS, index_kernel
from ir.backend_kernels_indexing_gradients import INDEXING_GRADIENT_KERNELS
from ir.backend_kernels_products import PRODUCT_KERNELS
from ir.backend_kernels_scans import SCAN_KERNELS
from ir.backend_kernels_whole import WHOLE_AXIS_KERNELS
from ir.errors import BackendError
from ir.ops.shape_rules import normalize_axes


def _reduction(name: str) -> KernelFactory:
    def factory(xp: Any) -> Kernel:
        function = getattr(xp, name)

        def reduce(x: Any, axis: Any, keepdims: bool) -> Any:
            if name in ("sum", "prod") and x.dtype == xp.bool:  # NumPy counts: an int64 sum
                x = xp.astype(x, xp.int64)
            return function(x, axis=axis_tuple(axis), keepdims=keepdims)

        return reduce

    return factory


def _sum_to_size(xp: Any) -> Kernel:
    def sum_to_size(x: Any, shape: Any) -> Any:
        if shape is None:
            return x
        target = tuple(shape) if isinstance(shape, tuple | list) else (shape,)
        if tuple(x.shape) == target:
            return x
        lead = x.ndim - len(target)
        stretched = [lead + i for i, d in enumerate(target) if d == 1 and x.shape[lead + i] != 1]
        summed = xp.sum(x, axis=tuple(range(lead)) + tuple(stretched), keepdims=True)
        return xp.reshape(summed, target)

    return sum_to_size


def _unreduce(xp: Any) -> Kernel:
    def unreduce(grad: Any, shape: Any, axis: Any, keepdims: bool) -> Any:
        grad = xp.asarray(grad)
        if not keepdims and axis is not None:
            for position in sorted(normalize_axes(axis, len(shape))):
                grad = xp.expand_dims(grad, axis=position)
        return xp.broadcast_to(grad, tuple(shape))

    return unreduce


def _matmul_backward(which: str) -> KernelFactory:
    def factory(xp: Any) -> Kernel:
        sum_to = _sum_to_size(xp)

        def backward(grad: Any, a: Any, b: Any) -> Any:
            a2 = xp.expand_dims(a, axis=0) if a.ndim == 1 else a
            b2 = xp.expand_dims(b, axis=-1) if b.ndim == 1 else b
            g2 = grad  # the result's axes, with the ones matmul dropped for a vector restored
            if a.ndim == 1:
                g2 = xp.expand_dims(g2, axis=g2.ndim - (b.ndim != 1))
            if b.ndim == 1:
                g2 = xp.expand_dims(g2, axis=g2.ndim)
            if which == "self":
                result = xp.matmul(g2, xp.matrix_transpose(b2))
                result = xp.squeeze(result, axis=-2) if a.ndim == 1 else result
                return sum_to(result, tuple(a.shape))
            result = xp.matmul(xp.matrix_transpose(a2), g2)
            result = xp.squeeze(result, axis=-1) if b.ndim == 1 else result
            return sum_to(result, tuple(b.shape))

        return backward

    return factory


def _scatter(item: Callable[..., Any]) -> KernelFactory:
    """``x`` with ``src`` written at the index ``item(*spec)`` makes, as a new array."""

    def factory(xp: Any) -> Kernel:
        def scatter(x: Any, src: Any, *spec: Any) -> Any:
            result = xp.asarray(x, copy=True)
            result[item(*spec)] = src
            return result

        return scatter

    return factory


def _index_put(xp: Any) -> Kernel:
    def index_put(x: Any, values: Any, *indices: Any) -> Any:
        result = xp.asarray(x, copy=True)
        result[_index_key(indices)] = values
        return result

    return index_put


def _zero_written(xp: Any) -> Kernel:
    def zero_written(grad: Any, indices: Any) -> Any:
        result = xp.asarray(grad, copy=True)
        result[_index_key(indices)] = 0
        return result

    return zero_written


def _tape_write(tape: Any, index: int, value: Any) -> Any:
    if value is not None:
        tape[index, ...] = value  # the Array API indexes every axis or ends with an ellipsis
    return tape


def _slice_backward(xp: Any) -> Kernel:
    def slice_backward(grad: Any, shape: Any, axis: int, *spec: Any) -> Any:
        result = xp.zeros(tuple(shape), dtype=grad.dtype)
        result[along(axis, slice(*spec))] = grad
        return result

    return slice_backward


def _written(xp: Any) -> Kernel:
    def written(target: Any, value: Any) -> Any:
        if not hasattr(target, "shape") or isinstance(target, np.generic):
            return value
        value = xp.asarray(value, dtype=target.dtype) if not hasattr(value, "shape") else value
        return xp.broadcast_to(xp.astype(value, target.dtype), tuple(target.shape))

    return written


def _numeric(xp: Any, value: Any, other: Any) -> Any:
    """A bool array as NumPy promotes it against a number or a numeric array (the Array
    API refuses bools in arithmetic): cast to the other operand's dtype."""
    if getattr(value, "dtype", None) != xp.bool:
        return value
    other_dtype = getattr(other, "dtype", None)
    if other_dtype is not None and other_dtype != xp.bool:
        return xp.astype(value, other_dtype)
    if isinstance(other, float):
        return xp.astype(value, xp.float64)
    return value


def _promoted(xp: Any, value: Any, other: Any) -> Any:
    """An integer array as NumPy promotes it against a floating-point array (the Array API
    leaves mixed kinds to the library; ``array_api_strict`` refuses them): cast to it."""
    dtype, other_dtype = getattr(value, "dtype", None), getattr(other, "dtype", None)
    if dtype is None or other_dtype is None or dtype == other_dtype:
        return value
    if xp.isdtype(dtype, "integral") and xp.isdtype(
        other_dtype, ("real floating", "complex floating")
    ):
        return xp.astype(value, other_dtype)
    return value


def _operator(spell: Callable[[Any, Any], Any], name: str) -> KernelFactory:
    """A binary operator spelled as Python's, which every Array API array takes with a
    Python number on either side (the namespace's function may refuse one)."""

    def factory(xp: Any) -> Kernel:
        function = getattr(xp, name)

        def kernel(a: Any, b: Any) -> Any:
            a, b = _numeric(xp, a, b), _numeric(xp, b, a)
            a, b = _promoted(xp, a, b), _promoted(xp, b, a)
            if hasattr(a, "shape") or hasattr(b, "shape"):
                return spell(a, b)
            return function(xp.asarray(a), b)

        return kernel

    return factory


def _filled(name: str) -> KernelFactory:
    """``np.zeros``/``np.ones``: float64 unless a dtype is named."""
    return lambda xp: (
        lambda shape, dtype=None: getattr(xp, name)(
            shape_tuple(shape), dtype=dtype_in(xp, dtype or "float64")
        )
    )


def _transpose(xp: Any) -> Kernel:
    def transpose(x: Any, axes: Any = None) -> Any:
        order = tuple(reversed(range(x.ndim))) if axes is None else tuple(axes)
        return xp.permute_dims(x, order)

    return transpose


def _tape_array(xp: Any) -> Kernel:
    def tape_array(length: int, row_shape: Any, dtype: str) -> Any:
        return xp.zeros((max(int(length), 0), *row_shape), dtype=dtype_in(xp, dtype))

    return tape_array


def _index_key(indices: Sequence[Any]) -> tuple[Any, ...]:
    """The subscript of ``aten::index`` and the scatters, None standing for ``:``, ending
    with an ellipsis as the Array API wants when it does not name every axis."""
    return (*(slice(None) if item is None else item for item in indices), Ellipsis)


def _where(xp: Any) -> Kernel:
    """``np.where(condition, x, y)``: two Python numbers as NumPy types them (the standard
    takes at most one number)."""

    def where(condition: Any, x: Any, y: Any) -> Any:
        if not hasattr(x, "shape") and not hasattr(y, "shape"):
            x = xp.asarray(
                x, dtype=xp.float64 if isinstance(x, float) or isinstance(y, float) else None
            )
        return xp.where(condition, x, y)

    return where


def _expand_dims(xp: Any) -> Kernel:
    def expand_dims(x: Any, axis: Any) -> Any:
        count = len(axis) if isinstance(axis, tuple | list) else 1
        for position in sorted(normalize_axes(axis, x.ndim + count)):
            x = xp.expand_dims(x, axis=position)
        return x

    return expand_dims


def _squeeze(xp: Any) -> Kernel:
    def squeeze(x: Any, axis: Any = None) -> Any:
        if axis is None:
            axis = tuple(i for i, d in enumerate(x.shape) if d == 1)
        return xp.squeeze(x, axis=axis_tuple(axis))

    return squeeze


def _dot(xp: Any) -> Kernel:
    """``np.dot``: a product for a 0-d operand, else a sum over ``a``'s last axis and
    ``b``'s second-to-last (its only one for a vector), as ``tensordot`` spells it."""

    def dot(a: Any, b: Any) -> Any:
        if getattr(a, "ndim", 0) == 0 or getattr(b, "ndim", 0) == 0:
            return a * b
        if a.ndim <= 2 and b.ndim <= 2:
            return xp.matmul(a, b)
        return xp.tensordot(a, b, axes=([a.ndim - 1], [b.ndim - 2 if b.ndim >= 2 else 0]))

    return dot


def _concatenate(xp: Any) -> Kernel:
    def concatenate(tensors: Any, axis: int | None = 0) -> Any:
        if axis is None:
            return xp.concat([xp.reshape(t, (-1,)) for t in tensors], axis=0)
        return xp.concat(list(tensors), axis=axis)

    return concatenate


def _concatenate_backward(xp: Any) -> Kernel:
    def concatenate_backward(grad: Any, sizes: Any, axis: int | None) -> tuple[Any, ...]:
        pieces = []
        start = 0
        for size in sizes:
            if axis is None:
                count = math.prod(size)
                pieces.append(xp.reshape(grad[start : start + count], tuple(size)))
                start += count
            else:
                pieces.append(grad[along(axis, slice(start, start + size[axis]))])
                start += size[axis]
        return tuple(pieces)

    return concatenate_backward


def _cumsum(xp: Any) -> Kernel:
    def cumsum(x: Any, axis: int | None = None) -> Any:
        if axis is None:
            x, axis = xp.reshape(x, (-1,)), 0
        return xp.cumulative_sum(x, axis=axis)

    return cumsum


def _like(name: str) -> KernelFactory:
    return lambda xp: (
        lambda x, *rest: getattr(xp, name)(
            x, *rest[:-1], dtype=dtype_in(xp, rest[-1]) if rest[-1] is not None else x.dtype
        )
    )


def _moments(name: str) -> KernelFactory:
    return lambda xp: (
        lambda x, axis, keepdims, ddof: getattr(xp, name)(
            x, axis=axis_tuple(axis), keepdims=keepdims, correction=ddof
        )
    )


def _select_backward(xp: Any) -> Kernel:
    def select_backward(grad: Any, shape: Any, axis: int, index: int) -> Any:
        result = xp.zeros(tuple(shape), dtype=grad.dtype)
        result[along(axis, index)] = grad
        return result

    return select_backward


def _transpose_backward(xp: Any) -> Kernel:
    def transpose_backward(grad: Any, axes: Any) -> Any:
        if axes is None:
            return xp.permute_dims(grad, tuple(reversed(range(grad.ndim))))
        order = [axis % grad.ndim for axis in axes]
        return xp.permute_dims(grad, tuple(order.index(i) for i in range(grad.ndim)))

    return transpose_backward


def _size_if_not_equal(x: Any, other: Any) -> Any:
    shape = tuple(getattr(x, "shape", ()))
    return None if shape == tuple(getattr(other, "shape", ())) else shape


def _dot_backward(xp: Any) -> Kernel:
    """`_dot`'s gradients where ``np.dot`` is ``np.matmul`` (operands of at most two axes)
    or a product (a 0-d operand); other ranks are refused when they run."""
    grad_self, grad_other = _matmul_backward("self")(xp), _matmul_backward("other")(xp)
    sum_to = _sum_to_size(xp)

    def dot_backward(grad: Any, a: Any, b: Any) -> tuple[Any, Any]:
        if getattr(a, "ndim", 0) == 0 or getattr(b, "ndim", 0) == 0:
            return sum_to(grad * b, tuple(getattr(a, "shape", ()))), sum_to(
                grad * a, tuple(getattr(b, "shape", ()))
            )
        if a.ndim > 2 or b.ndim > 2:
            raise BackendError(
                "the gradient of np.dot of arrays of more than two axes has no Array API "
                "kernel: write np.tensordot or np.matmul"
            )
        return grad_self(grad, a, b), grad_other(grad, a, b)

    return dot_backward


def _swapped(ndim: int, a: int, b: int) -> tuple[int, ...]:
    order = list(range(ndim))
    order[a], order[b] = order[b], order[a]
    return tuple(order)


def _named(name: str) -> KernelFactory:
    return lambda xp: getattr(xp, name)


# aten name -> the Array API function of the same meaning
_ELEMENTWISE = {name: name for name in ("exp", "log", "sqrt", "sin", "cos", "tan", "tanh")}
_ELEMENTWISE |= {name: name for name in ("abs", "sign", "square", "log1p", "expm1", "sinh")}
_ELEMENTWISE |= {name: name for name in ("cosh", "floor", "ceil", "maximum", "minimum")}
_ELEMENTWISE |= {"arcsin": "asin", "arccos": "acos", "arctan": "atan", "neg": "negative"}
_ELEMENTWISE |= {"matmul": "matmul", "positive": "positive"}
_ELEMENTWISE |= {name: name for name in ("logical_and", "logical_or", "logical_not")}
_ELEMENTWISE |= {"logaddexp": "logaddexp", "clip": "clip"}

NAMESPACE_KERNELS: dict[str, TableEntry] = {
    **{f"aten::{name}": _named(spelled) for name, spelled in _ELEMENTWISE.items()},
    "aten::add": _operator(lambda a, b: a + b, "add"),
    "aten::sub": _operator(lambda a, b: a - b, "subtract"),
    "aten::mul": _operator(lambda a, b: a * b, "multiply"),
    "aten::div": _operator(lambda a, b: a / b, "divide"),
    "aten::pow": _operator(lambda a, b: a**b, "pow"),
    "aten::eq": _operator(lambda a, b: a == b, "equal"),
    "aten::ne": _operator(lambda a, b: a != b, "not_equal"),
    "aten::lt": _operator(lambda a, b: a < b, "less"),
    "aten::le": _operator(lambda a, b: a <= b, "less_equal"),
    "aten::gt": _operator(lambda a, b: a > b, "greater"),
    "aten::ge": _operator(lambda a, b: a >= b, "greater_equal"),
    "aten::floordiv": _operator(lambda a, b: a // b, "floor_divide"),
    "aten::remainder": _operator(lambda a, b: a % b, "remainder"),
    "aten::where": _where,
    "aten::sum": _reduction("sum"),
    "aten::mean": _reduction("mean"),
    "aten::max": _reduction("max"),
    "aten::min": _reduction("min"),
    "aten::prod": _reduction("prod"),
    "aten::var": _moments("var"),
    "aten::std": _moments("std"),
    "aten::argmax": lambda xp: lambda x, axis, keepdims: xp.argmax(x, axis=axis, keepdims=keepdims),
    "aten::argmin": lambda xp: lambda x, axis, keepdims: xp.argmin(x, axis=axis, keepdims=keepdims),
    "aten::cumsum": _cumsum,
    "aten::sum_to_size": _sum_to_size,
    "aten::_unreduce": _unreduce,
    "aten::_matmul_backward_self": _matmul_backward("self"),
    "aten::_matmul_backward_other": _matmul_backward("other"),
    "aten::slice": lambda xp: lambda x, axis, *spec: x[along(axis, slice(*spec))],
    "aten::select": lambda xp: lambda x, axis, index: x[along(axis, index)],
    "aten::slice_scatter": _scatter(lambda axis, *spec: along(axis, slice(*spec))),
    "aten::select_scatter": _scatter(lambda axis, index: along(axis, index)),
    "aten::_slice_backward": _slice_backward,
    "aten::index_put": _index_put,
    "aten::_zero_written": _zero_written,
    "aten::_written": _written,
    "aten::astype": lambda xp: lambda x, dtype: xp.astype(x, dtype_in(xp, dtype)),
    "aten::copy_method": lambda xp: lambda x: xp.asarray(x, copy=True),
    "aten::copy": lambda xp: lambda x: xp.asarray(x, copy=True),
    "aten::zeros": _filled("zeros"),
    "aten::ones": _filled("ones"),
    "aten::transpose": _transpose,
    "aten::reshape": lambda xp: lambda x, shape: safe_reshape(xp, x, shape_tuple(shape)),
    "aten::ravel": lambda xp: lambda x: xp.reshape(x, (-1,)),
    "aten::broadcast_to": lambda xp: lambda x, shape: xp.broadcast_to(x, shape_tuple(shape)),
    "aten::expand_dims": _expand_dims,
    "aten::squeeze": _squeeze,
    "aten::swapaxes": lambda xp: lambda x, a, b: xp.permute_dims(x, _swapped(x.ndim, a, b)),
    "aten::moveaxis": lambda xp: lambda x, source, destination: xp.moveaxis(x, source, destination),
    "aten::flip": lambda xp: lambda x, axis=None: xp.flip(x, axis=axis_tuple(axis)),
    "aten::index": index_kernel,
    "aten::dot": _dot,
    "aten::_dot_backward": _dot_backward,
    "aten::_select_backward": _select_backward,
    "aten::_transpose_backward": _transpose_backward,
    "aten::_size_if_not_equal": lambda xp: _size_if_not_equal,
    "aten::conj": _named("conj"),
    "aten::tensordot": lambda xp: (
        lambda a, b, axes=2: xp.tensordot(
            a, b, axes=axes if isinstance(axes, int) else tuple(tuple(ax) for ax in axes)
        )
    ),
    "aten::concatenate": _concatenate,
    "aten::_concatenate_backward": _concatenate_backward,
    "aten::zeros_like": _like("zeros_like"),
    "aten::ones_like": _like("ones_like"),
    "aten::full_like": _like("full_like"),
    "aten::full": lambda xp: (
        lambda shape, fill, dtype=None: xp.full(shape_tuple(shape), fill, dtype=dtype_in(xp, dtype))
    ),
    "aten::eye": lambda xp: (
        lambda n, m=None, k=0, dtype=None: xp.eye(n, m, k=k, dtype=dtype_in(xp, dtype or "float64"))
    ),
    "aten::arange": lambda xp: (
        lambda start, stop=None, step=None, dtype=None: xp.arange(
            start, stop, 1 if step is None else step, dtype=dtype_in(xp, dtype)
        )
    ),
    "aten::size": lambda xp: lambda x: math.prod(x.shape),
    "aten::shape": lambda xp: lambda x: tuple(x.shape),
    "prim::TapeArray": _tape_array,
    "prim::TapeWrite": lambda xp: _tape_write,
    **INDEXING_KERNELS,
    **INDEXING_GRADIENT_KERNELS,
    **WHOLE_AXIS_KERNELS,
    **FOURIER_KERNELS,
    **PRODUCT_KERNELS,
    **ELEMENTWISE_KERNELS,
    **SCAN_KERNELS,
}
"""Per operator, its kernel made from a backend's namespace (Note [Array backends]). Each
follows the operator's NumPy kernel, spelled with Array API functions only."""
