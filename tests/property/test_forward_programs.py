"""Forward mode on generated programs (`tests.property.programs`): the JVP of ``f`` w.r.t. its
first argument ``a`` equals its reverse-mode Jacobian times the tangent, and ``ad.jacfwd`` the
Jacobian, through the branches, loops, writes and views the generator draws. The Jacobian is
checked against central differences by the ``nested`` property; here forward mode is checked
against it (Note [Forward mode by transposition] in `autodiff.jvp_graphs`)."""

from __future__ import annotations

import numpy as np
from hypothesis import given

import autodiff as ad
from tests.property.checks import fresh, loaded, numpy_runs
from tests.property.programs import Program, programs
from tests.property.test_properties import CI_IDIOMS, property_settings

# Refusals forward mode shares with the Jacobian graph: a result the data shapes, or one that
# is not floating (a count), each located where the value is computed.
REFUSALS = ("not known until it runs", "needs floating-point results")


def assert_close(actual: object, expected: object, where: str) -> None:
    expected_array = np.asarray(expected)
    scale = max(1.0, float(np.max(np.abs(expected_array), initial=0.0)))
    np.testing.assert_allclose(actual, expected_array, rtol=1e-8, atol=1e-10 * scale, err_msg=where)


@property_settings(12)
@given(programs(CI_IDIOMS))
def test_forward_mode_equals_the_jacobian(program: Program) -> None:
    if not numpy_runs(program):
        return
    module = loaded(program)
    args = program.arguments()
    if np.iscomplexobj(module.f(*fresh(args))) or np.iscomplexobj(args[0]):
        return  # refused by forward mode, naming them (tests/unit/test_forward_mode.py)
    tangent = np.random.default_rng(program.seed).uniform(-1.0, 1.0, np.shape(args[0]))
    tangents = (tangent, *(None for _ in args[1:]))
    refusal: ad.DifferentiationError | None = None
    try:
        out, derivative = ad.jvp(module.f, fresh(args), tangents)
    except ad.DifferentiationError as error:
        refusal = error
    if refusal is not None:
        assert any(reason in str(refusal) for reason in REFUSALS), refusal
        assert refusal.source_range is not None, f"a refusal without a location: {refusal}"
        return
    np.testing.assert_allclose(out, module.f(*fresh(args)), rtol=1e-12, atol=1e-14)
    jacobian = np.asarray(ad.jacobian(module.f)(*fresh(args)), dtype=np.float64)
    flat = jacobian.reshape((*np.shape(out), -1))
    assert_close(derivative, flat @ tangent.reshape(-1), f"jvp of\n{program.body}")
    columns: object = None
    try:
        columns = ad.jacfwd(module.f)(*fresh(args))
    except ad.DifferentiationError as error:
        refusal = error
    if refusal is not None:  # each column would draw its own numbers: refused where drawn
        assert "random draws" in str(refusal), refusal
        assert refusal.source_range is not None, f"a refusal without a location: {refusal}"
        return
    assert_close(columns, jacobian, f"jacfwd of\n{program.body}")
