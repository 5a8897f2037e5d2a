"""Every operator's derivative formula differentiated once more, on the operands of the samples
`tests/unit/test_formulas.py` gathers (real, or complex where a sample is written so): the vjp
of the operator's gradient graph against central differences of that gradient, one node at a
time.

`tests/unit/test_complex_operators.py` makes the same check with the operands made complex; this
one is the second order of the real operators, and the column "Orders tested" of
`docs/operators.md` reads which operators it reaches (`tests/order_coverage.py`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from ir.ops.scipy_special import SCIPY_OPS
from ir.ops.scipy_stats import STATS_OPS
from tests.formula_samples import Operands, Sample
from tests.unit.test_complex_operators import (
    RTOL,
    SECOND_ORDER_LEFT_OUT,
    FirstOrder,
    _numeric_second,
)
from tests.unit.test_formulas import SAMPLES, _cotangent, _wide, operand_at

_LIST_RESULT = "its result is a list, which the loss of this check does not multiply"
LEFT_OUT: dict[str, str] = {
    **SECOND_ORDER_LEFT_OUT,
    "aten::_add_lists": _LIST_RESULT,
    "aten::_list_head": _LIST_RESULT,
    "aten::_sequence_as": _LIST_RESULT,
}
"""Operators whose second order is not checked here, and why (`docs/operators.md` shows it)."""

# Samples at a point where the first derivative is a convention (a tie of maximum, relu at 0,
# hypot at the origin): the gradient jumps there, and has no derivative to compare.
_NON_SMOOTH = ("tie", "at-zero", "origin")
# Samples where central differences of the gradient lose digits: sinc's gradient near 0 is a
# difference of nearly equal terms divided by x, so its differences lose about 1e-5.
LOOSER: dict[tuple[str, str], float] = {("aten::sinc", "zeros"): 1e-4}
KNOWN_GAPS: dict[tuple[str, str], str] = {}
"""(operator, sample label) -> why its second order fails: a strict expected failure."""


def _differentiates_floats(operands: Operands, wrt: tuple[int, ...]) -> bool:
    """Whether some differentiated operand holds floating-point (or complex) values."""

    def inexact(value: Any) -> bool:
        if isinstance(value, tuple | list):
            return any(inexact(v) for v in value)
        return isinstance(value, float) or (
            isinstance(value, np.ndarray) and value.dtype.kind in "fc"
        )

    return any(inexact(operands[position]) for position in wrt)


def second_order_params() -> list[Any]:
    """The (operator, sample) pairs this module checks."""
    params = []
    for op in sorted(SAMPLES):
        if op in LEFT_OUT:
            continue
        for sample in SAMPLES[op]:
            if sample.xfail:
                continue
            if any(word in sample.label for word in _NON_SMOOTH):
                continue
            if not _differentiates_floats(sample.make(np.random.default_rng(0)), sample.wrt):
                continue
            label = f"{op.removeprefix('aten::')}-{sample.label}"
            gap = KNOWN_GAPS.get((op, sample.label))
            marks = [pytest.mark.xfail(strict=True, reason=gap)] if gap else []
            params.append(pytest.param(op, sample, id=label, marks=marks))
    return params


@pytest.mark.parametrize(("op", "sample"), second_order_params())
def test_second_order_of_every_sample(op: str, sample: Sample) -> None:
    """The vjp of the gradient for a direction ``v`` against central differences of
    ``Re(sum(v * grad))``."""
    if op in SCIPY_OPS or op in STATS_OPS:
        pytest.importorskip("scipy")
    operands = sample.make(np.random.default_rng(0))
    first = FirstOrder(op, operands, sample.wrt)
    base = first.gradients(operands)
    rng = np.random.default_rng(2)
    directions = [_cotangent(rng, np.asarray(g)) for g in base]
    second = first.second(directions)
    for grad, slot in zip(second, first.call.slots, strict=True):
        operand = operand_at(operands, slot)
        where = f"{op} operand {slot[0]}" + ("" if slot[1] is None else f" item {slot[1]}")
        assert np.shape(grad) == np.shape(operand), f"{where}: second-order gradient shape"
        numeric = _numeric_second(first, operands, slot, directions)
        error = np.abs(np.asarray(grad, _wide(grad)) - numeric) / np.maximum(np.abs(numeric), 1)
        assert error.max(initial=0.0) < LOOSER.get((op, sample.label), RTOL), (
            f"{where}: second order {np.asarray(grad)!r}, central differences {numeric!r}"
        )
