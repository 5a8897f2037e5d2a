"""A formula that gives an operand no gradient is refused when the user differentiates with
respect to that operand (Note [No gradient is not a zero gradient] in
`autodiff.differentiate`). Each case below once returned a zero gradient, silently, where
central differences say otherwise."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import autodiff as ad
from ir.ops import OPS

try:
    import scipy.special as special
except ImportError:  # scipy is in the test extra; without it the Bessel case skips
    special = None

Y = np.arange(1.0, 6.0) ** 2


def spacing_of_gradient(h, y):
    return np.sum(np.gradient(y, h) ** 2)


def order_of_norm(p, y):
    return np.linalg.norm(y, p)


def order_of_bessel(v, y):
    return np.sum(special.iv(v, y) + special.jv(v, y))


CASES = [
    (spacing_of_gradient, "aten::gradient", "spacing", 0.5),
    (order_of_norm, "aten::linalg_norm", "ord", 3.0),
]


@pytest.mark.parametrize(("fn", "op", "operand", "value"), CASES)
def test_refused_where_the_result_varies_with_the_operand(
    fn: Callable[..., Any], op: str, operand: str, value: float
) -> None:
    slope = (fn(value + 1e-6, Y) - fn(value - 1e-6, Y)) / 2e-6
    assert abs(slope) > 1e-3, "the result varies with it: a zero gradient would be wrong"
    with pytest.raises(ad.DifferentiationError, match=f"{op} .* operand '{operand}'") as info:
        ad.grad(fn)(value, Y)
    assert "test_no_gradient.py" in str(info.value)
    # The same call differentiates with respect to the array.
    assert ad.gradcheck(lambda y: fn(value, y), Y).ok


@pytest.mark.skipif(special is None, reason="needs scipy")
def test_bessel_order_is_refused() -> None:
    with pytest.raises(ad.DifferentiationError, match="operand 'order'"):
        ad.grad(order_of_bessel)(0.5, Y)
    assert ad.gradcheck(lambda y: order_of_bessel(0.5, y), Y / 10.0).ok


def test_operands_read_for_their_type_are_named_in_the_schema() -> None:
    for op in OPS.values():
        names = {argument.name for argument in op.schema.arguments}
        assert set(op.read_for_type) <= names, op.name
