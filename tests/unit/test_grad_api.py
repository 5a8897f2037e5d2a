"""The gradient API: argnums, has_aux, scalar checks and error messages, gradient types, vjp,
the compilation cache, what may be differentiated, and gradcheck's report."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import autodiff as ad
from autodiff.grad import GradFunction

RNG = np.random.default_rng(0)
X = RNG.standard_normal((3, 4))
Y = RNG.standard_normal(4)

SCALE = 2.0  # read by `scaled_sum` when it is compiled; a test changes it afterwards


def loss(x, y):
    return np.sum(np.tanh(x * y) * x)


def loss_grads(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """d loss / dx and d loss / dy, by hand."""
    t = np.tanh(x * y)
    inner = x * (1.0 - t * t)
    return t + inner * y, np.sum(inner * x, axis=0)


def loss_with_aux(x, y):
    z = x * y
    return np.sum(z * z), z


def nested_aux(x):
    a = x * 2.0
    return np.sum(x * x), (a, (np.sum(a), 3))


def elementwise(x):
    return x * 2.0


def pair(x):
    return np.sum(x), x


def step(x, lr: float):
    return np.sum((x - lr * x) ** 2) * lr


def unannotated_step(x, lr):
    return np.sum((x - lr * x) ** 2) * lr


def power(x, n: int):
    return np.sum(x**n)


def branch_on_int(x, k: int):
    if k > 1:
        return np.sum(np.sin(x) * k)
    return np.sum(x * x)


def branch_on_data(x):
    if np.sum(x) > 0:
        return np.sum(x * x)
    return np.sum(x)


def loop_on_data(x):
    y = x
    while np.max(np.abs(y)) > 0.5:
        y = y * 0.5
    return np.sum(y)


def scaled_sum(x):
    return np.sum(x * x * SCALE)


def unused(x, y):
    return np.sum(x * 3.0)


def one_element(x):
    return np.sum(x, axis=1, keepdims=True)[:1, :]


def mixed(x, n: int, y):
    return x * n + y


def cube(x):
    return np.sum(x * x * x)


def mismatched(x, y):
    return np.sum(x * y)


# ---- argnums ------------------------------------------------------------------------------------


def test_argnums_int_tuple_and_negative() -> None:
    dx, dy = loss_grads(X, Y)
    np.testing.assert_allclose(ad.grad(loss)(X, Y), dx, rtol=1e-12)
    np.testing.assert_allclose(ad.grad(loss, argnums=1)(X, Y), dy, rtol=1e-12)
    np.testing.assert_allclose(ad.grad(loss, argnums=-1)(X, Y), dy, rtol=1e-12)
    both = ad.grad(loss, argnums=(0, 1))(X, Y)
    assert isinstance(both, tuple)
    assert len(both) == 2
    np.testing.assert_allclose(both[0], dx, rtol=1e-12)
    np.testing.assert_allclose(both[1], dy, rtol=1e-12)
    (only,) = ad.grad(loss, argnums=(1,))(X, Y)
    np.testing.assert_allclose(only, dy, rtol=1e-12)
    reordered = ad.grad(loss, argnums=(-1, 0))(X, Y)
    np.testing.assert_allclose(reordered[0], dy, rtol=1e-12)
    np.testing.assert_allclose(reordered[1], dx, rtol=1e-12)


def test_keyword_arguments_bind_as_in_python() -> None:
    np.testing.assert_allclose(ad.grad(loss, argnums=1)(X, y=Y), loss_grads(X, Y)[1])


@pytest.mark.parametrize("argnums", [2, -3, (0, 2)])
def test_argnums_out_of_range(argnums: Any) -> None:
    with pytest.raises(ad.DifferentiationError, match=r"argnums .* out of range.* 2 parameters"):
        ad.grad(loss, argnums=argnums)(X, Y)


def test_value_and_grad() -> None:
    value, (dx, dy) = ad.value_and_grad(loss, argnums=(0, 1))(X, Y)
    assert value == pytest.approx(loss(X, Y), rel=1e-14)
    assert type(value) is type(loss(X, Y))
    np.testing.assert_allclose(dx, loss_grads(X, Y)[0], rtol=1e-12)
    np.testing.assert_allclose(dy, loss_grads(X, Y)[1], rtol=1e-12)


# ---- has_aux ------------------------------------------------------------------------------------


def test_value_and_grad_with_aux() -> None:
    (value, aux), dx = ad.value_and_grad(loss_with_aux, has_aux=True)(X, Y)
    expected_value, expected_aux = loss_with_aux(X, Y)
    assert value == pytest.approx(expected_value, rel=1e-14)
    np.testing.assert_allclose(aux, expected_aux, rtol=1e-14)
    np.testing.assert_allclose(dx, 2.0 * X * Y * Y, rtol=1e-12)


def test_grad_with_aux() -> None:
    (dx, dy), aux = ad.grad(loss_with_aux, argnums=(0, 1), has_aux=True)(X, Y)
    np.testing.assert_allclose(aux, X * Y, rtol=1e-14)
    np.testing.assert_allclose(dx, 2.0 * X * Y * Y, rtol=1e-12)
    np.testing.assert_allclose(dy, np.sum(2.0 * X * X * Y, axis=0), rtol=1e-12)


def test_aux_may_nest_tuples() -> None:
    (value, (a, (total, three))), dx = ad.value_and_grad(nested_aux, has_aux=True)(Y)
    assert value == pytest.approx(np.sum(Y * Y), rel=1e-14)
    np.testing.assert_allclose(a, 2.0 * Y, rtol=1e-14)
    assert total == pytest.approx(np.sum(2.0 * Y), rel=1e-14)
    assert three == 3
    np.testing.assert_allclose(dx, 2.0 * Y, rtol=1e-14)


def test_has_aux_needs_a_pair() -> None:
    with pytest.raises(ad.DifferentiationError, match=r"has_aux=True needs loss\(\) to return"):
        ad.grad(loss, has_aux=True)(X, Y)


# ---- what can be differentiated -----------------------------------------------------------------


def test_grad_of_a_non_scalar_names_the_shape() -> None:
    with pytest.raises(ad.DifferentiationError, match=r"elementwise\(\).*shape \(3, 4\)"):
        ad.grad(elementwise)(X)


def test_grad_of_a_tuple_suggests_has_aux() -> None:
    with pytest.raises(ad.DifferentiationError, match=r"returned a tuple of 2.*has_aux=True"):
        ad.grad(pair)(Y)


def test_one_element_output_is_accepted() -> None:
    value, dx = ad.value_and_grad(one_element)(X)
    assert np.shape(value) == (1, 1)
    expected = np.zeros_like(X)
    expected[0] = 1.0
    np.testing.assert_array_equal(dx, expected)


def test_int_argument_cannot_be_differentiated() -> None:
    with pytest.raises(ad.DifferentiationError, match="argument 'n' of type int"):
        ad.grad(power, argnums=1)(Y, 3)


def test_annotations_are_checked_as_for_a_plain_call() -> None:
    with pytest.raises(ad.ArgumentError, match=r"argument 'n' of power\(\) is annotated int"):
        ad.grad(power)(Y, np.ones(4))
    with pytest.raises(ad.ArgumentError, match=r"argument 'lr' of step\(\) is annotated float"):
        ad.grad(step, argnums=1)(Y, np.float32(0.5))


def test_integer_array_cannot_be_differentiated() -> None:
    with pytest.raises(ad.DifferentiationError, match="argument 'x'"):
        ad.grad(power)(np.arange(4), 2)


def test_python_float_argument_gets_a_float() -> None:
    dx, dlr = ad.grad(step, argnums=(0, 1))(Y, 0.25)
    assert type(dlr) is float
    # d/dlr [lr * (1 - lr)^2 * sum(x^2)] = ((1 - lr)^2 - 2 lr (1 - lr)) * sum(x^2)
    assert dlr == pytest.approx((0.75**2 - 0.5 * 0.75) * np.sum(Y * Y), rel=1e-12)
    np.testing.assert_allclose(dx, 2 * 0.25 * 0.75**2 * Y, rtol=1e-12)


@pytest.mark.parametrize("scalar", [np.float64(1.5), np.float32(1.5)])
def test_numpy_scalar_argument_gets_a_numpy_scalar(scalar: np.floating[Any]) -> None:
    dlr = ad.grad(unannotated_step, argnums=1)(Y.astype(scalar.dtype), scalar)
    assert type(dlr) is type(scalar)
    expected = (0.25 - 2 * 1.5 * -0.5) * np.sum(Y * Y)
    assert float(dlr) == pytest.approx(expected, rel=1e-12 if scalar.dtype == np.float64 else 1e-5)


def test_float32_in_float32_out() -> None:
    x32, y32 = X.astype(np.float32), Y.astype(np.float32)
    value, (dx, dy) = ad.value_and_grad(loss, argnums=(0, 1))(x32, y32)
    assert np.asarray(value).dtype == np.float32
    assert dx.dtype == np.float32
    assert dx.shape == X.shape
    assert dy.dtype == np.float32
    assert dy.shape == Y.shape
    np.testing.assert_allclose(dx, loss_grads(X, Y)[0], rtol=1e-4, atol=1e-5)


def test_unused_input_gets_zeros() -> None:
    dx, dy = ad.grad(unused, argnums=(0, 1))(X, Y)
    np.testing.assert_array_equal(dx, np.full_like(X, 3.0))
    np.testing.assert_array_equal(dy, np.zeros_like(Y))
    assert dy.dtype == Y.dtype


def test_data_dependent_if_takes_the_branch_that_ran() -> None:
    dbranch = ad.grad(branch_on_data)
    np.testing.assert_allclose(dbranch(np.abs(Y)), 2 * np.abs(Y), rtol=1e-15)
    np.testing.assert_allclose(dbranch(-np.abs(Y)), np.ones_like(Y), rtol=1e-15)
    assert len(dbranch.cache) == 1


def test_data_dependent_loop_runs_its_iterations_backwards() -> None:
    x = np.array([5.0, 0.1, -1.0, 0.2])  # halved four times: 0.3125
    np.testing.assert_allclose(ad.grad(loop_on_data)(x), np.full(4, 0.0625), rtol=1e-15)
    np.testing.assert_allclose(ad.grad(loop_on_data)(x / 100), np.ones(4), rtol=1e-15)


def test_data_dependent_control_flow_still_runs_forward() -> None:
    assert ad.script(branch_on_data)(Y) == pytest.approx(branch_on_data(Y))


# ---- vjp ----------------------------------------------------------------------------------------


def test_vjp_returns_the_result_and_a_function_of_the_cotangent() -> None:
    out, vjp_fn = ad.vjp(mixed, X, 3, Y)
    np.testing.assert_allclose(out, mixed(X, 3, Y), rtol=1e-14)
    cotangent = RNG.standard_normal(out.shape)
    dx, dn, dy = vjp_fn(cotangent)
    assert dn is None
    np.testing.assert_allclose(dx, 3 * cotangent, rtol=1e-14)
    np.testing.assert_allclose(dy, cotangent.sum(axis=0), rtol=1e-14)
    again = vjp_fn(2.0 * cotangent)
    np.testing.assert_allclose(again[0], 6 * cotangent, rtol=1e-14)
    np.testing.assert_allclose(again[2], 2.0 * cotangent.sum(axis=0), rtol=1e-14)


def test_vjp_of_a_tuple_result() -> None:
    out, vjp_fn = ad.vjp(pair, Y)
    assert isinstance(out, tuple)
    assert len(out) == 2
    (dy,) = vjp_fn((2.0, np.ones(4)))
    np.testing.assert_allclose(dy, np.full(4, 3.0))
    (dy,) = vjp_fn((None, np.arange(4.0)))
    np.testing.assert_allclose(dy, np.arange(4.0))


def test_vjp_of_a_nested_tuple_result() -> None:
    out, vjp_fn = ad.vjp(nested_aux, Y)
    assert out[1][1][1] == 3
    (dy,) = vjp_fn((1.0, (np.ones(4), (2.0, None))))
    np.testing.assert_allclose(dy, 2.0 * Y + 2.0 + 4.0, rtol=1e-14)
    (dy,) = vjp_fn((None, (np.ones(4), None)))
    np.testing.assert_allclose(dy, np.full(4, 2.0))
    with pytest.raises(ad.DifferentiationError, match="must nest like the result"):
        vjp_fn((1.0, np.ones(4)))


def test_vjp_checks_the_cotangent_shape() -> None:
    _, vjp_fn = ad.vjp(elementwise, X)
    with pytest.raises(ad.DifferentiationError, match=r"shape \(4,\).*shape \(3, 4\)"):
        vjp_fn(np.ones(4))


# ---- cache --------------------------------------------------------------------------------------


def test_second_call_compiles_nothing_new() -> None:
    dloss = ad.grad(loss, argnums=(0, 1))
    dloss(X, Y)
    assert len(dloss.cache) == 1
    (compiled,) = dloss.cache.values()
    dloss(X + 1.0, Y * 2.0)
    assert len(dloss.cache) == 1
    assert next(iter(dloss.cache.values())) is compiled


def test_other_shapes_dtypes_and_argnums_compile_anew() -> None:
    dloss = ad.grad(loss)
    dloss(X, Y)
    dloss(X[:2], Y)
    dloss(X.astype(np.float32), Y.astype(np.float32))
    assert len(dloss.cache) == 3
    dy = ad.grad(loss, argnums=1)
    dy(X, Y)
    assert len(dy.cache) == 1
    (unit,) = dy.cache.values()
    assert [wrt for wrt, _, _ in unit.gradients] == [(1,)]
    # one scripted function, two argnums: one unit for the signature, a gradient for each
    scripted = ad.script(loss)
    ad.grad(scripted)(X, Y)
    ad.grad(scripted, argnums=1)(X, Y)
    (unit,) = scripted.cache.values()
    assert sorted(wrt for wrt, _, _ in unit.gradients) == [(0,), (1,)]


def test_int_values_share_a_gradient_without_control_flow() -> None:
    dpower = ad.grad(power)
    np.testing.assert_allclose(dpower(Y, 2), 2 * Y, rtol=1e-12)
    np.testing.assert_allclose(dpower(Y, 3), 3 * Y**2, rtol=1e-12)
    assert len(dpower.cache) == 1


def test_int_values_do_not_join_the_key_when_control_flow_carries_the_gradient() -> None:
    # A branch on an int is differentiated as a branch, compiled once (Note [Control-flow
    # derivatives] in `autodiff.control_flow`).
    dbranch = ad.grad(branch_on_int)
    np.testing.assert_allclose(dbranch(Y, 3), 3 * np.cos(Y), rtol=1e-12)
    np.testing.assert_allclose(dbranch(Y, 1), 2 * Y, rtol=1e-12)
    np.testing.assert_allclose(dbranch(Y, 2), 2 * np.cos(Y), rtol=1e-12)
    assert len(dbranch.cache) == 1


def test_failed_compile_leaves_nothing_and_next_call_works() -> None:
    dmismatched = ad.grad(mismatched)
    with pytest.raises(ad.AutodiffError, match="broadcast"):
        dmismatched(X, np.ones(5))
    assert dmismatched.cache == {}
    np.testing.assert_allclose(dmismatched(X, Y), np.broadcast_to(Y, X.shape))
    assert len(dmismatched.cache) == 1


def test_undecorated_function_and_script_function_both_accepted() -> None:
    scripted = ad.script(loss)
    assert isinstance(scripted, ad.ScriptFunction)
    from_plain = ad.grad(loss)
    from_scripted = ad.grad(scripted)
    assert isinstance(from_plain, GradFunction)
    assert from_scripted.scripted is scripted
    np.testing.assert_allclose(from_plain(X, Y), from_scripted(X, Y), rtol=1e-14)
    assert from_plain.__name__ == "loss"


# ---- gradcheck ----------------------------------------------------------------------------------


def test_gradcheck_reports_the_worst_element() -> None:
    result = ad.gradcheck(loss, X, Y)
    assert result.ok
    assert result.argument in (0, 1)
    assert len(result.index) == (X.ndim if result.argument == 0 else Y.ndim)
    assert result.analytic == pytest.approx(result.numeric, rel=1e-5, abs=1e-8)
    assert "gradients match; worst element: argument" in str(result)


def test_gradcheck_of_float32_arguments() -> None:
    assert ad.gradcheck(loss, X.astype(np.float32), Y.astype(np.float32)).ok


def test_gradcheck_fails_when_finite_differences_disagree() -> None:
    # d/dx x^3 = 3x^2, but a central difference with step h gives 3x^2 + h^2.
    # gradcheck projects on a random cotangent c: numeric = c (3x^2 + h^2), analytic = c 3x^2.
    result = ad.gradcheck(cube, Y, eps=0.1, raise_on_failure=False)
    assert not result.ok
    x = Y[result.index]
    assert result.numeric / result.analytic == pytest.approx(1.0 + 0.01 / (3 * x * x), rel=1e-8)
    with pytest.raises(ad.DifferentiationError, match="gradients differ; worst element"):
        ad.gradcheck(cube, Y, eps=0.1)


def test_gradcheck_compares_against_the_plain_function(monkeypatch: pytest.MonkeyPatch) -> None:
    # A global number read when compiling is checked at each call: after SCALE changes the
    # function compiles again, and agrees with the plain one (it used to keep the old value;
    # Note [Values read once] in `frontend.compile`).
    scripted = ad.script(scaled_sum)
    assert ad.gradcheck(scripted, Y).ok
    monkeypatch.setattr(f"{__name__}.SCALE", 3.0)
    assert ad.gradcheck(scripted, Y).ok
    np.testing.assert_allclose(ad.grad(scripted)(Y), 6.0 * Y, rtol=1e-14)
    # A compiled function that is not the plain one gradcheck differentiates numerically is
    # caught: here the plain function is swapped for another after compiling.
    monkeypatch.setattr(scripted, "fn", lambda x: np.sum(x * x * 5.0))
    with pytest.raises(ad.DifferentiationError, match="gradients differ"):
        ad.gradcheck(scripted, Y)


def test_vjp_compiles_once_per_signature() -> None:
    x = np.linspace(0.0, 1.0, 5)
    ad.vjp(vjp_target, x)
    ad.vjp(vjp_target, x * 2.0)
    from autodiff.script import scripted_for

    assert len(scripted_for(vjp_target).cache) == 1


def vjp_target(x):
    return np.sin(x) * 2.0


def clip_in_place(x):
    x[x > 1] = 1.0
    return np.sum(x**2)


def test_gradcheck_of_a_function_that_writes_its_argument() -> None:
    # Issue 15, item 6: each evaluation gets fresh copies, so the point does not move.
    x = np.array([0.5, -0.25, 2.0, 3.0])
    given = x.copy()
    result = ad.gradcheck(clip_in_place, x)
    assert result.ok
    np.testing.assert_array_equal(x, given)  # the caller's argument is left as it was


# ---- parameters left to their defaults (issue 15, item 11) -----------------------------------


def scaled_by_default(x, k: float = 0.5):
    return np.sum(x * x) * k


def test_vjp_returns_one_cotangent_per_argument_passed() -> None:
    _, vjp_fn = ad.vjp(scaled_by_default, Y)
    grads = vjp_fn(1.0)
    assert len(grads) == 1
    np.testing.assert_allclose(grads[0], Y, rtol=1e-14)
    dx, dk = ad.vjp(scaled_by_default, Y, 0.25)[1](1.0)
    np.testing.assert_allclose(dx, 0.5 * Y, rtol=1e-14)
    assert dk == pytest.approx(np.sum(Y * Y), rel=1e-14)


def test_gradcheck_of_a_function_with_a_default() -> None:
    assert ad.gradcheck(scaled_by_default, Y).ok


@pytest.mark.parametrize("argnums", [1, -1, (0, 1)])
def test_argnums_at_a_parameter_left_to_its_default_is_refused(argnums: Any) -> None:
    for make in (ad.grad, ad.value_and_grad, ad.jacobian, ad.hessian):
        with pytest.raises(ad.DifferentiationError, match=r"parameter 'k' .* not passed"):
            make(scaled_by_default, argnums=argnums)(Y)


def test_argnums_at_a_default_passed_by_keyword_or_position() -> None:
    expected = np.sum(Y * Y)
    assert ad.grad(scaled_by_default, argnums=1)(Y, k=0.25) == pytest.approx(expected)
    assert ad.grad(scaled_by_default, argnums=1)(Y, 0.25) == pytest.approx(expected)
    np.testing.assert_allclose(ad.grad(scaled_by_default)(Y), Y, rtol=1e-14)
    np.testing.assert_allclose(ad.jacobian(scaled_by_default)(Y), Y, rtol=1e-14)
    np.testing.assert_allclose(ad.hessian(scaled_by_default)(Y), np.eye(4), rtol=1e-14)
