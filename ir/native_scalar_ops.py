"""The operator table of `ir.native_scalar`: how each operator acts on small arrays held as one
scalar expression per element (`Elements` of `ir.native_scalar_values`), resolved while the
numba source is generated.

An elementwise operator is a template (``"np.tanh({0})"``, ``"({0} + {1})"``) applied to every
element after broadcasting; views (transpose, reshape, select, slice, expand_dims, ...) only
rearrange the element names; reductions and products write out their sums in the order of
Note [Scalarized numerics] in `ir.native_scalar`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

from ir.native_scalar_values import (
    NUMERIC_DTYPES,
    Elements,
    Unsupported,
    cast,
    literal,
    weak_sample,
)


class Lines(Protocol):
    """What an operator rule may ask of the emitter: a fresh local holding an expression."""

    def assign(self, expression: str, hint: str = "v") -> str: ...

    def line(self, text: str) -> None: ...


# ---- elementwise ------------------------------------------------------------------------------

# How NumPy picks the dtype an elementwise loop computes in: that of the result, the common
# dtype of the operands (comparisons: the result is bool), or bool (logical operators).
RESULT, COMMON, LOGICAL = "result", "common", "logical"

_UNARY_UFUNCS = (
    *("exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "cbrt"),
    *("sin", "cos", "tan", "arcsin", "arccos", "arctan"),
    *("sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh"),
    *("floor", "ceil", "trunc", "rint"),
)
# aten:: name -> (template over the operands, the dtype the loop computes in). A division is
# ``np.true_divide`` so that x / 0 is inf or nan (IEEE, NumPy's answer) whatever error model
# numba compiles with; the other calls are the ufuncs numba implements on scalars.
ELEMENTWISE: dict[str, tuple[str, str]] = {
    "aten::add": ("({0} + {1})", RESULT),
    "aten::sub": ("({0} - {1})", RESULT),
    "aten::mul": ("({0} * {1})", RESULT),
    "aten::div": ("np.true_divide({0}, {1})", RESULT),
    "aten::pow": ("np.power({0}, {1})", RESULT),
    "aten::maximum": ("np.maximum({0}, {1})", RESULT),
    "aten::minimum": ("np.minimum({0}, {1})", RESULT),
    "aten::fmax": ("np.fmax({0}, {1})", RESULT),
    "aten::fmin": ("np.fmin({0}, {1})", RESULT),
    "aten::arctan2": ("np.arctan2({0}, {1})", RESULT),
    "aten::hypot": ("np.hypot({0}, {1})", RESULT),
    "aten::eq": ("({0} == {1})", COMMON),
    "aten::ne": ("({0} != {1})", COMMON),
    "aten::lt": ("({0} < {1})", COMMON),
    "aten::le": ("({0} <= {1})", COMMON),
    "aten::gt": ("({0} > {1})", COMMON),
    "aten::ge": ("({0} >= {1})", COMMON),
    "aten::logical_and": ("({0} and {1})", LOGICAL),
    "aten::logical_or": ("({0} or {1})", LOGICAL),
    "aten::logical_xor": ("({0} != {1})", LOGICAL),
    "aten::logical_not": ("(not {0})", LOGICAL),
    "aten::neg": ("(-{0})", RESULT),
    "aten::positive": ("(+{0})", RESULT),
    "aten::square": ("({0} * {0})", RESULT),
    "aten::abs": ("np.abs({0})", RESULT),
    "aten::sign": ("np.sign({0})", RESULT),
    "aten::reciprocal": ("np.true_divide(1.0, {0})", RESULT),
    "aten::where": ("({1} if {0} else {2})", RESULT),
    "aten::clip": ("np.minimum(np.maximum({0}, {1}), {2})", RESULT),
    **{f"aten::{name}": (f"np.{name}({{0}})", RESULT) for name in _UNARY_UFUNCS},
}
# prim:: operators on Python numbers: Python's own operators, which numba implements with
# Python's semantics (floor division and modulo of negative ints, int / int a float).
PYTHON_OPERATORS: dict[str, str] = {
    "prim::add": "({0} + {1})",
    "prim::sub": "({0} - {1})",
    "prim::mul": "({0} * {1})",
    "prim::truediv": "({0} / {1})",
    "prim::floordiv": "({0} // {1})",
    "prim::mod": "({0} % {1})",
    "prim::neg": "(-{0})",
    "prim::abs": "abs({0})",
    "prim::min": "min({0}, {1})",
    "prim::max": "max({0}, {1})",
    "prim::eq": "({0} == {1})",
    "prim::ne": "({0} != {1})",
    "prim::lt": "({0} < {1})",
    "prim::le": "({0} <= {1})",
    "prim::gt": "({0} > {1})",
    "prim::ge": "({0} >= {1})",
    "prim::not": "(not {0})",
    "prim::bool": "bool({0})",
    "prim::int": "int({0})",
    "prim::float": "float({0})",
}
# Ops whose operands are not all computed in the loop's dtype: where's condition is a bool.
_BOOL_OPERANDS = {"aten::where": (0,)}
# Float-only templates: on ints NumPy computes them in float64 (the result type says so).
_FLOAT_RESULT = frozenset({"aten::div", "aten::reciprocal"})
# NumPy raises for an int to a negative int power, where numba computes something: ints stay
# with the generic emitter.
_FLOAT_ONLY = frozenset({"aten::pow"})


def broadcast(operands: Sequence[Elements]) -> list[np.ndarray[Any, Any]]:
    try:
        return list(np.broadcast_arrays(*(e.items for e in operands)))
    except ValueError as error:
        raise Unsupported(f"shapes do not broadcast: {error}") from None


def elementwise(
    lines: Lines, kind: str, operands: Sequence[Elements], result_dtype: str
) -> Elements:
    """One local per element of the result: the template over the broadcast operands, each
    converted to the dtype the loop computes in."""
    template, loop = ELEMENTWISE[kind]
    if result_dtype not in NUMERIC_DTYPES:
        raise Unsupported(f"dtype {result_dtype}")
    if loop == RESULT:
        loop_dtype = result_dtype
    elif loop == LOGICAL:
        loop_dtype = "bool"
    else:
        loop_dtype = np.result_type(*(weak_sample(e.dtype) for e in operands)).name
    if loop == RESULT and loop_dtype == "bool" and kind != "aten::where":
        # NumPy's bool + bool is a logical or; Python's (and numba's) is an int
        raise Unsupported(f"{kind} computing in bool")
    if kind in _FLOAT_RESULT | _FLOAT_ONLY and loop_dtype not in ("float64", "float32", "float"):
        raise Unsupported(f"{kind} computing in {loop_dtype}")
    bool_positions = _BOOL_OPERANDS.get(kind, ())
    spread = broadcast(operands)
    result = np.empty(spread[0].shape, dtype=object)
    for index in np.ndindex(result.shape):
        arguments = [
            cast(str(items[index]), e.dtype, "bool" if position in bool_positions else loop_dtype)
            for position, (items, e) in enumerate(zip(spread, operands, strict=True))
        ]
        expression = cast(template.format(*arguments), loop_dtype, result_dtype)
        result[index] = lines.assign(expression)
    return Elements(result, result_dtype)


def converted(lines: Lines, value: Elements, dtype: str) -> Elements:
    """``value.astype(dtype)``."""
    items = np.empty(value.shape, dtype=object)
    for index in np.ndindex(value.shape):
        expression = cast(value.at(index), value.dtype, dtype)
        items[index] = expression if expression == value.items[index] else lines.assign(expression)
    return Elements(items, dtype)


# ---- sums and products ------------------------------------------------------------------------


def pairwise_sum(items: Sequence[str], zero: str = "0.0") -> str:
    """NumPy's order for a contiguous run (``pairwise_sum`` in its add loop): one by one
    below 8 elements; from 8, eight running sums combined as a tree, then the rest one by
    one; the run's sum is added to the reduction's initial 0.0 (so -0.0 sums to 0.0)."""
    items = list(items)
    if len(items) > 128:
        raise Unsupported("a sum of more than 128 elements (NumPy splits it recursively)")
    if len(items) < 8:
        return f"({zero} + {sequential(items, '+', zero)})"
    stop = len(items) - len(items) % 8
    partial = [sequential(items[start:stop:8], "+", zero) for start in range(8)]
    tree = (
        f"(({partial[0]} + {partial[1]}) + ({partial[2]} + {partial[3]})) + "
        f"(({partial[4]} + {partial[5]}) + ({partial[6]} + {partial[7]}))"
    )
    return f"({zero} + {sequential([f'({tree})', *items[stop:]], '+', zero)})"


def sequential(items: Sequence[str], symbol: str, empty: str) -> str:
    if not items:
        return empty
    return "(" + f" {symbol} ".join(items) + ")"


def dot_product(left: Sequence[str], right: Sequence[str], zero: str) -> str:
    """``sum_k left[k] * right[k]`` one term after another (Note [Scalarized numerics])."""
    terms = [f"{a} * {b}" for a, b in zip(left, right, strict=True)]
    return sequential(terms, "+", zero)


def normalize_axes(axis: Any, rank: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(rank))
    axes = axis if isinstance(axis, tuple | list) else (axis,)
    if not all(isinstance(a, int) and -rank <= a < rank for a in axes):
        raise Unsupported(f"axis {axis!r} of a rank-{rank} array")
    return tuple(sorted(a % rank for a in axes))


REDUCTIONS = {"aten::sum": "+", "aten::mean": "+", "aten::prod": "*", "aten::max": "max",
              "aten::min": "min"}  # fmt: skip


def reduce(
    lines: Lines, kind: str, value: Elements, axes: tuple[int, ...], keepdims: bool, dtype: str
) -> Elements:
    """``np.sum`` (mean, prod, max, min) over ``axes``: per result element, the reduced
    elements in row-major order. A sum over trailing axes adds them as NumPy adds a
    contiguous run (`pairwise_sum`); over leading axes NumPy adds whole rows in turn, which is
    the sequential order; other axis sets are summed in sequence (a documented tolerance)."""
    rank = len(value.shape)
    kept = [a for a in range(rank) if a not in axes]
    moved = np.transpose(value.items, [*kept, *axes])
    kept_shape = moved.shape[: len(kept)]
    count = int(np.prod(moved.shape[len(kept) :], dtype=np.int64))
    flat = moved.reshape((*kept_shape, count))
    accumulate = "float64" if kind == "aten::mean" and dtype == "float64" else dtype
    trailing = axes == tuple(range(rank - len(axes), rank))
    result = np.empty(kept_shape, dtype=object)
    for index in np.ndindex(kept_shape):
        items = [cast(item, value.dtype, accumulate) for item in flat[index]]
        if kind in ("aten::max", "aten::min"):
            if not items:
                raise Unsupported(f"{kind} of an empty array")
            expression = items[0]
            for item in items[1:]:
                expression = (
                    f"np.{'maximum' if kind == 'aten::max' else 'minimum'}({expression}, {item})"
                )
        elif kind == "aten::prod":
            expression = sequential(items, "*", cast("1", "int", accumulate))
        elif trailing and accumulate.startswith("float"):
            expression = pairwise_sum(items, cast("0.0", "float", accumulate))
        else:
            expression = sequential(items, "+", cast("0", "int", accumulate))
        if kind == "aten::mean":
            count_literal = cast(literal(float(count)), "float", accumulate)
            expression = f"np.true_divide({expression}, {count_literal})"
        result[index] = lines.assign(cast(expression, accumulate, dtype))
    if keepdims:
        result = result.reshape([1 if a in axes else d for a, d in enumerate(value.shape)])
    return Elements(result, dtype)


def sum_to_shape(lines: Lines, value: Elements, shape: tuple[int, ...]) -> Elements:
    """`sum_to_size`: sum over the axes that broadcasting ``shape`` up to the value's added
    (leading) or stretched (size 1 in ``shape``)."""
    if value.shape == shape:
        return value
    lead = len(value.shape) - len(shape)
    if lead < 0:
        raise Unsupported("sum_to_size to a larger rank")
    stretched = [lead + i for i, d in enumerate(shape) if d == 1 and value.shape[lead + i] != 1]
    axes = tuple(range(lead)) + tuple(stretched)
    summed = reduce(lines, "aten::sum", value, axes, True, value.dtype)
    return Elements(summed.items.reshape(shape), value.dtype)


def matmul(lines: Lines, a: Elements, b: Elements, dtype: str) -> Elements:
    """``a @ b`` with NumPy's rules for 1-d operands and stacks of matrices."""
    if not a.shape or not b.shape:
        raise Unsupported("matmul of a 0-d operand")
    a_items = a.items[None, :] if a.items.ndim == 1 else a.items
    b_items = b.items[:, None] if b.items.ndim == 1 else b.items
    if a_items.shape[-1] != b_items.shape[-2]:
        raise Unsupported("matmul of operands whose inner sizes differ")
    batch = np.broadcast_shapes(a_items.shape[:-2], b_items.shape[:-2])
    a_items = np.broadcast_to(a_items, (*batch, *a_items.shape[-2:]))
    b_items = np.broadcast_to(b_items, (*batch, *b_items.shape[-2:]))
    rows, cols = a_items.shape[-2], b_items.shape[-1]
    zero = cast("0", "int", dtype)
    result = np.empty((*batch, rows, cols), dtype=object)
    for index in np.ndindex(result.shape):
        *stack, i, j = index
        left = [cast(x, a.dtype, dtype) for x in a_items[(*stack, i)]]
        right = [cast(x, b.dtype, dtype) for x in b_items[(*stack, slice(None), j)]]
        result[index] = lines.assign(dot_product(left, right, zero))
    if b.items.ndim == 1:
        result = result[..., 0]
    if a.items.ndim == 1:
        result = result[..., 0, :] if b.items.ndim > 1 else result[..., 0]
    return Elements(result, dtype)


def matmul_backward(lines: Lines, grad: Elements, a: Elements, b: Elements, wrt: int) -> Elements:
    """`matmul_backward_self` (``wrt`` 0) or `_other` (1) of `ir.ops.gradients.linalg`,
    written with the same steps on element names."""
    a2 = a.items[None, :] if a.items.ndim == 1 else a.items
    b2 = b.items[:, None] if b.items.ndim == 1 else b.items
    g2 = grad.items[..., None] if b.items.ndim == 1 else grad.items
    if a.items.ndim == 1:
        g2 = np.expand_dims(g2, -2)
    g = Elements(g2, grad.dtype)
    if wrt == 0:
        result = matmul(lines, g, Elements(np.swapaxes(b2, -1, -2), b.dtype), grad.dtype)
        if a.items.ndim == 1:
            result = Elements(np.squeeze(result.items, -2), result.dtype)
        return sum_to_shape(lines, result, a.shape)
    result = matmul(lines, Elements(np.swapaxes(a2, -1, -2), a.dtype), g, grad.dtype)
    if b.items.ndim == 1:
        result = Elements(np.squeeze(result.items, -1), result.dtype)
    return sum_to_shape(lines, result, b.shape)


# ---- views and placements ---------------------------------------------------------------------

Rearrange = Callable[..., np.ndarray[Any, Any]]


def _transpose(items: np.ndarray[Any, Any], axes: Any = None) -> np.ndarray[Any, Any]:
    return np.transpose(items, axes)


def _transpose_backward(items: np.ndarray[Any, Any], axes: Any) -> np.ndarray[Any, Any]:
    return np.transpose(items, None if axes is None else np.argsort(axes))


def _select(items: np.ndarray[Any, Any], axis: int, index: int) -> np.ndarray[Any, Any]:
    taken: np.ndarray[Any, Any] = np.take(items, index, axis=axis)
    return taken


def _slice(
    items: np.ndarray[Any, Any], axis: int, start: Any, stop: Any, step: Any
) -> np.ndarray[Any, Any]:
    key = [slice(None)] * items.ndim
    key[axis] = slice(start, stop, step)
    return items[tuple(key)]


def _squeeze(items: np.ndarray[Any, Any], axis: Any = None) -> np.ndarray[Any, Any]:
    return np.squeeze(items, axis)


# Operators that only rearrange elements: the same function on the object array of names,
# given the static operands after the first.
VIEWS: dict[str, Rearrange] = {
    "aten::transpose": _transpose,
    "aten::_transpose_backward": _transpose_backward,
    "aten::reshape": np.reshape,
    "aten::ravel": np.ravel,
    "aten::expand_dims": np.expand_dims,
    "aten::squeeze": _squeeze,
    "aten::swapaxes": np.swapaxes,
    "aten::moveaxis": np.moveaxis,
    "aten::select": _select,
    "aten::slice": _slice,
    "aten::broadcast_to": np.broadcast_to,
    "aten::conj": lambda items: items,  # of a real array (the dtype is checked)
    "aten::real": lambda items: items,
}


def placed(grad: Elements, shape: tuple[int, ...], key: tuple[Any, ...], zero: str) -> Elements:
    """Zeros of ``shape`` with ``grad`` at ``key`` (`select_backward`, `slice_backward`)."""
    result = np.full(shape, zero, dtype=object)
    result[key] = grad.items
    return Elements(result, grad.dtype)


def along(axis: int, item: Any, rank: int) -> tuple[Any, ...]:
    key: list[Any] = [slice(None)] * rank
    key[axis] = item
    return tuple(key)
