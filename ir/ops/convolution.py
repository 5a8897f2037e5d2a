"""``np.convolve`` and ``np.correlate``, and where every convolution's result lies in the full
convolution of its operands: the window the derivative formulas pad a cotangent back from.

Note [Convolution windows]
Each of these operators (``np.convolve``, ``np.correlate``, SciPy's ``convolve``, ``correlate``,
``convolve2d`` and ``correlate2d``) is a window, axis by axis, of one full convolution
``full(x, k)`` of length ``len(x) + len(k) - 1``, where ``k`` is the second operand (flipped and
conjugated for a correlation) and ``x`` the first (for the 2-D functions, padded on each side
by ``len(k) - 1`` values as ``boundary`` says, except in 'valid' mode). Only the window's start
differs between them, and only in 'same' mode (checked against NumPy and SciPy, every pair of
lengths up to 6):

    mode    start                                               length
    full    0                                                   n + m - 1
    valid   min(n, m) - 1                                       |n - m| + 1
    same    scipy.signal convolve/correlate/convolve2d:         n
              (m - 1) // 2
            scipy.signal correlate2d: m // 2                    n
            np.convolve: (min(n, m) - 1) // 2                   max(n, m)
            np.correlate: (m - 1) // 2, or n // 2 if m > n      max(n, m)

(for the 2-D functions in 'full' and 'same' mode, ``len(k) - 1`` more, the padding). So the
gradient of a result is the cotangent padded with zeros to the full convolution's shape
(`cotangent_padding`), then a 'valid' convolution with the other operand flipped: the
transpose of convolving with it (Note [Complex gradients]: transposed, never conjugated).

>>> convolve(np.array([1.0, 2.0]), np.array([1.0, 1.0, 1.0]), "same")
array([3., 3., 2.])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ir.errors import ShapeError
from ir.ops.promotion import probe_dtype
from ir.ops.registry import NOT_CONSTANT, Derivative, ShapeRule, register_op
from ir.ops.shape_rules import as_array_like, fixed, tensor
from ir.types import ANY, BOOL, Type, type_of_value

MODES = ("full", "valid", "same")
Shape = tuple[int, ...]

# The 'same' window's start, by operator style: (len(x), len(k)) -> start
_SAME_START = {
    "scipy": lambda n, m: (m - 1) // 2,
    "scipy_correlate2d": lambda n, m: m // 2,
    "numpy_convolve": lambda n, m: (min(n, m) - 1) // 2,
    "numpy_correlate": lambda n, m: n // 2 if m > n else (m - 1) // 2,
}


def check_mode(mode: Any) -> None:
    if mode not in MODES:
        raise ShapeError(f"acceptable mode flags are 'valid', 'same', or 'full', got {mode!r}")


def check_valid_sizes(shape1: Sequence[int], shape2: Sequence[int]) -> None:
    """SciPy's 'valid' mode needs one operand at least as large as the other on every axis."""
    if not (
        all(n >= m for n, m in zip(shape1, shape2, strict=True))
        or all(m >= n for n, m in zip(shape1, shape2, strict=True))
    ):
        raise ShapeError(
            "For 'valid' mode, one must be at least as large as the other in every dimension"
        )


def _window(n: int, m: int, mode: str, style: str) -> tuple[int, int]:
    """(start, length) of the result within the full convolution along one axis."""
    if mode == "full":
        return 0, n + m - 1
    if mode == "valid":
        return min(n, m) - 1, abs(n - m) + 1
    length = max(n, m) if style.startswith("numpy") else n
    return _SAME_START[style](n, m), length


def result_shape(shape1: Sequence[int], shape2: Sequence[int], mode: str, style: str) -> Shape:
    """The shape of the result (Note [Convolution windows])."""
    return tuple(_window(n, m, mode, style)[1] for n, m in zip(shape1, shape2, strict=True))


def boundary_widths(shape2: Sequence[int], mode: str) -> tuple[tuple[int, int], ...]:
    """How far the 2-D functions pad their first operand on each side, ``len(k) - 1`` per axis
    (none in 'valid' mode, which never reads past its edges)."""
    return tuple((0, 0) if mode == "valid" else (m - 1, m - 1) for m in shape2)


def cotangent_padding(
    shape1: Sequence[int], shape2: Sequence[int], mode: str, style: str
) -> tuple[tuple[int, int], ...]:
    """The zeros to pad a result's cotangent with, before and after on each axis, to the
    shape of the full convolution (Note [Convolution windows]). For the 2-D styles
    (``scipy2d``, ``scipy_correlate2d``) the full convolution is the padded first operand's.

    >>> cotangent_padding((5,), (3,), "valid", "scipy")
    ((2, 2),)
    """
    if style.startswith("numpy"):
        shape1, shape2 = (int(np.prod(shape1)),), (int(np.prod(shape2)),)
    widths = []
    for n, m in zip(shape1, shape2, strict=True):
        if style in ("scipy2d", "scipy_correlate2d") and mode != "valid":
            start, length = _window(n, m, mode, "scipy" if style == "scipy2d" else style)
            start, full = start + m - 1, n + 3 * (m - 1)
        else:
            start, length = _window(n, m, mode, style)
            full = n + m - 1
        widths.append((start, full - start - length))
    return tuple(widths)


def swaps_operands(shape1: Sequence[int], shape2: Sequence[int], mode: str) -> bool:
    """Whether SciPy's 'valid' mode swaps the operands: when the first is smaller on some
    axis. ``correlate2d`` then correlates the second with the first and flips the result,
    which for complex values is the conjugate of the correlation ``correlate`` computes.

    >>> swaps_operands((2, 3), (3, 4), "valid"), swaps_operands((2, 3), (3, 4), "full")
    (True, False)
    """
    return mode == "valid" and any(n < m for n, m in zip(shape1, shape2, strict=True))


# ---- np.convolve and np.correlate ---------------------------------------------------------------


def convolve(a: Any, v: Any, mode: Any) -> Any:
    return np.convolve(a, v, mode)


def correlate(a: Any, v: Any, mode: Any) -> Any:
    return np.correlate(a, v, mode)


def _length(shape: tuple[int | None, ...] | None) -> int | None:
    """The length of a 1-d operand as NumPy's convolution takes it (a 0-d one has 1)."""
    if shape is None:
        return None
    return shape[0] if shape else 1


def _numpy_rule(style: str) -> ShapeRule:
    def rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
        a, v = as_array_like(types[0], 0), as_array_like(types[1], 1)
        dtype = probe_dtype(np.convolve, [a, v], (1, 1))
        mode = consts[2]
        if mode is not NOT_CONSTANT:
            check_mode(mode)
        if (a.rank or 0) > 1 or (v.rank or 0) > 1:
            raise ShapeError("object too deep for desired array")
        if style == "numpy_correlate" and 0 in (a.rank, v.rank):
            raise ShapeError("object of too small depth for desired array")
        lengths = [_length(ty.shape) for ty in (a, v)]
        if 0 in lengths:
            raise ShapeError("a and v cannot be empty")
        if mode is NOT_CONSTANT or None in lengths:
            return tensor(dtype, (None,))
        n, m = (int(length or 0) for length in lengths)
        return tensor(dtype, result_shape((n,), (m,), mode, style))

    return rule


register_op(
    "aten::convolve(Any self, Any other, str mode='full') -> Tensor",
    shape=_numpy_rule("numpy_convolve"),
    derivative=Derivative.FORMULA,
    spellings={"numpy.convolve": "a:self v:other mode"},
)(convolve)
register_op(
    "aten::correlate(Any self, Any other, str mode='valid') -> Tensor",
    shape=_numpy_rule("numpy_correlate"),
    derivative=Derivative.FORMULA,
    spellings={"numpy.correlate": "a:self v:other mode"},
)(correlate)

# ---- compile-time helpers of the derivative formulas ---------------------------------------------


def _known_once_constant(kernel: Any) -> ShapeRule:
    """A helper of shapes and flags: its result's type is its value's once every operand is
    known while compiling (as shapes are, once specialised), Any before."""

    def rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
        if any(const is NOT_CONSTANT for const in consts):
            return [ANY]
        return [type_of_value(kernel(*consts))]

    return rule


register_op(
    "aten::_cotangent_padding(Any shape1, Any shape2, str mode, str style) -> Any",
    shape=_known_once_constant(cotangent_padding),
    derivative=Derivative.NONE,
)(cotangent_padding)
register_op(
    "aten::_swaps_operands(Any shape1, Any shape2, str mode) -> bool",
    shape=fixed(BOOL),
    derivative=Derivative.NONE,
)(swaps_operands)
register_op(
    "aten::_boundary_widths(Any shape2, str mode) -> Any",
    shape=_known_once_constant(boundary_widths),
    derivative=Derivative.NONE,
)(boundary_widths)
