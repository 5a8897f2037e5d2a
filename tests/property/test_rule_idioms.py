"""The checks of programs that call ``ad.custom_vjp`` functions (`tests.property.rule_idioms`):
a rule that is not the function's derivative fails the ``gradients`` property, and the one
refusal ``nested`` lets through is the located refusal of a second derivative through an
opaque rule."""

from __future__ import annotations

import pytest

import autodiff as ad
from tests.property import checks
from tests.property.programs import Program
from tests.property.rule_idioms import OPAQUE_SECOND_ORDER

RULE = """import autodiff as ad


@ad.custom_vjp{options}
def soft(x):
    return 2.0 * np.tanh(x)


def fwd(x):
    y = np.tanh(x)
    return 2.0 * y, (y,)


def bwd(r, g):
    (y,) = r
    return (g * {factor} * (1.0 - y * y),)


soft.defvjp(fwd, bwd)


def f(a):
    c = a
    for _ in range(2):
        c = 0.5 * soft(c)
    return c


def loss(a):
    return np.sum(f(a))
"""


def program(factor: str, options: str = "") -> Program:
    return Program(RULE.format(factor=factor, options=options), (("a", (3, 4)),), seed=3)


def test_a_rule_that_is_not_the_derivative_fails_the_gradients_check() -> None:
    checks.check_gradients(program("2.0"))
    with pytest.raises(AssertionError, match="gradient"):
        checks.check_gradients(program("2.5"))


def test_nested_accepts_only_the_refusal_of_an_opaque_rule_and_checks_a_scripted_one() -> None:
    opaque = program("2.0")
    with pytest.raises(ad.DifferentiationError, match=OPAQUE_SECOND_ORDER):
        ad.hessian(checks.loaded(opaque).loss)(*opaque.arguments())
    checks.check_nested(opaque)  # refused, located, and passed over
    checks.check_nested(program("2.0", "(scripted=True)"))  # differentiated again, checked
