"""``scipy.signal`` as operators: ``convolve`` and ``correlate`` of arrays of any rank (modes
full, valid and same, ``method`` passed on to SciPy), ``convolve2d`` and ``correlate2d`` (every
``boundary``, any ``fillvalue``), each differentiable in both arrays (and ``fillvalue``), for
real and complex values.

Each kernel calls SciPy's function, imported when it first runs, so results are SciPy's, bit for
bit, whatever ``method`` picks. The derivative formulas rest on one fact (Note [Convolution
windows] in `ir.ops.convolution`): each result is a window of one full convolution, and the
2-D functions' ``boundary`` is `np.pad` of the first operand (``fill`` is mode 'constant' with
``fillvalue``, ``wrap`` is 'wrap', ``symm`` is 'symmetric'), checked against SciPy for every
pair of shapes up to 5 x 5.

>>> float(signal_convolve([1.0, 2.0], [3.0], "full", "direct")[1])
6.0
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

from ir.errors import ShapeError
from ir.ops.convolution import check_mode, check_valid_sizes, result_shape
from ir.ops.promotion import probe_dtype
from ir.ops.registry import NOT_CONSTANT, Derivative, ShapeRule, register_op
from ir.ops.shape_rules import as_array_like, fixed, tensor
from ir.types import STR, Type


def _signal() -> ModuleType:
    return importlib.import_module("scipy.signal")


def signal_convolve(in1: Any, in2: Any, mode: str, method: str) -> Any:
    return _signal().convolve(in1, in2, mode, method)


def signal_correlate(in1: Any, in2: Any, mode: str, method: str) -> Any:
    return _signal().correlate(in1, in2, mode, method)


def signal_convolve2d(in1: Any, in2: Any, mode: str, boundary: str, fillvalue: Any) -> Any:
    return _signal().convolve2d(in1, in2, mode, boundary, fillvalue)


def signal_correlate2d(in1: Any, in2: Any, mode: str, boundary: str, fillvalue: Any) -> Any:
    return _signal().correlate2d(in1, in2, mode, boundary, fillvalue)


# SciPy's boundary names -> np.pad's mode that pads the first operand the same way
PAD_MODES = {
    "fill": "constant",
    "pad": "constant",
    "wrap": "wrap",
    "circular": "wrap",
    "symm": "symmetric",
    "symmetric": "symmetric",
}


def boundary_pad_mode(boundary: str) -> str:
    """The `np.pad` mode that pads like SciPy's 2-D ``boundary``."""
    if boundary not in PAD_MODES:
        raise ShapeError(
            f"Acceptable boundary flags are 'fill', 'wrap' and 'symm', not {boundary!r}"
        )
    return PAD_MODES[boundary]


# ---- shape rules --------------------------------------------------------------------------------


def _rule(kernel: Callable[..., Any], name: str, rank: int | None) -> ShapeRule:
    """Operands of one rank (``rank`` when given), never 0-d nor empty; the mode's window."""

    def rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
        in1, in2 = as_array_like(types[0], 0), as_array_like(types[1], 1)
        mode = consts[2]
        if mode is not NOT_CONSTANT:
            check_mode(mode)
        if rank == 2 and consts[3] is not NOT_CONSTANT:
            boundary_pad_mode(consts[3])
        if rank is None and consts[3] not in (NOT_CONSTANT, "auto", "direct", "fft"):
            raise ShapeError("acceptable method flags are 'auto', 'direct', or 'fft'.")
        ranks = {ty.rank for ty in (in1, in2) if ty.rank is not None}
        if rank is not None and ranks - {rank}:
            raise ShapeError(f"{name} inputs must both be 2-D arrays")
        if len(ranks) > 1:
            raise ShapeError("in1 and in2 should have the same dimensionality")
        if ranks == {0}:
            raise ShapeError(f"{name} of 0-d operands is their product: write in1 * in2")
        known_rank = rank or (min(ranks) if ranks else None)
        ndim = known_rank or 1
        dtype = probe_dtype(_probe(kernel), [in1, in2], (ndim, ndim))
        shape1, shape2 = _static(in1.shape), _static(in2.shape)
        if shape1 is None or shape2 is None or mode is NOT_CONSTANT:
            return tensor(dtype, None if known_rank is None else (None,) * known_rank)
        if 0 in (*shape1, *shape2):
            raise ShapeError(f"{name} of an empty array is not supported")
        if mode == "valid":
            check_valid_sizes(shape1, shape2)
        return tensor(dtype, result_shape(shape1, shape2, mode, "scipy"))

    return rule


def _static(shape: tuple[int | None, ...] | None) -> tuple[int, ...] | None:
    if shape is None or None in shape:
        return None
    return tuple(d for d in shape if d is not None)


def _probe(kernel: Callable[..., Any]) -> Callable[..., Any]:
    if kernel in (signal_convolve, signal_correlate):
        return lambda a, b: kernel(a, b, "full", "direct")
    return lambda a, b: kernel(a, b, "full", "fill", 0)


# ---- records ------------------------------------------------------------------------------------

for _nd in (signal_convolve, signal_correlate):
    _name = _nd.__name__.removeprefix("signal_")
    register_op(
        f"aten::{_nd.__name__}(Any in1, Any in2, str mode='full', str method='auto') -> Tensor",
        shape=_rule(_nd, _name, None),
        derivative=Derivative.FORMULA,
        spellings={f"scipy.signal.{_name}": "in1 in2 mode method"},
    )(_nd)

for _2d in (signal_convolve2d, signal_correlate2d):
    _name = _2d.__name__.removeprefix("signal_")
    register_op(
        f"aten::{_2d.__name__}(Any in1, Any in2, str mode='full', str boundary='fill',"
        " Any fillvalue=0) -> Tensor",
        shape=_rule(_2d, _name, 2),
        derivative=Derivative.FORMULA,
        spellings={f"scipy.signal.{_name}": "in1 in2 mode boundary fillvalue"},
    )(_2d)

register_op(
    "aten::_boundary_pad_mode(str boundary) -> str", shape=fixed(STR), derivative=Derivative.NONE
)(boundary_pad_mode)

SIGNAL_OPS = frozenset(
    f"aten::{kernel.__name__}"
    for kernel in (signal_convolve, signal_correlate, signal_convolve2d, signal_correlate2d)
)
"""The operators whose kernels call ``scipy.signal``."""
