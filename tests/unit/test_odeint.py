"""``scipy.integrate.odeint`` in compiled code, differentiated by the adjoint method (Note
[Odeint adjoint] in `autodiff.odeint`): SciPy's results, gradients w.r.t. y0, t and args
against central differences (with tight solver tolerances: the gradient is as exact as the
solves), a small neural ODE, and HIPS autograd's odeint where it is installed."""

from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest

pytest.importorskip("scipy")

import scipy.integrate
import scipy.integrate as si
from scipy.integrate import odeint
from scipy.integrate import odeint as solve

import autodiff as ad
from autodiff.cli import main
from ir.errors import AutodiffError

TIGHT = {"rtol": 1e-11, "atol": 1e-11}


def damped(y, t, k, c):
    """A damped oscillator, its spring constant ``k`` an array and ``c`` a float."""
    return np.array([y[1], -k[0] * y[0] - c * y[1] + np.sin(t)])


def oscillator_loss(y0, t, k, c):
    ys = odeint(damped, y0, t, args=(k, c), rtol=1e-11, atol=1e-11)
    return np.sum(ys[:, 0] ** 2) + np.sum(np.cos(ys[:, 1]))


Y0 = np.array([1.0, -0.3])
T = np.array([0.0, 0.4, 1.1, 1.5])
K = np.array([2.0])
C = 0.3


def test_the_result_is_scipys() -> None:
    ys = odeint(damped, Y0, T, args=(K, C), **TIGHT)
    assert ad.script(oscillator_loss)(Y0, T, K, C) == oscillator_loss(Y0, T, K, C)

    def trajectory(y0, t, k, c):
        return odeint(damped, y0, t, args=(k, c), rtol=1e-11, atol=1e-11)

    np.testing.assert_array_equal(ad.script(trajectory)(Y0, T, K, C), ys)


def test_it_is_one_custom_node_naming_the_dynamics() -> None:
    graph = str(ad.script(oscillator_loss).graph_for(Y0, T, K, C))
    assert "prim::CustomVjp(%fn, %y0, %t," in graph
    assert f'"odeint[damped@test_odeint.py:{damped.__code__.co_firstlineno}]' in graph
    assert "Double(4, 2) = prim::CustomVjp" in graph


def test_gradients_wrt_y0_t_and_each_arg_match_central_differences() -> None:
    ad.gradcheck(oscillator_loss, Y0, T, K, C, rtol=1e-5, atol=1e-7)


def test_the_gradient_of_t0_and_of_the_later_times() -> None:
    """dL/dt_i = g_i . f(y_i, t_i) for i > 0, and t_0 shifts the whole solution."""
    dt = ad.grad(oscillator_loss, argnums=1)(Y0, T, K, C)
    eps = 1e-6
    for i in range(len(T)):
        step = np.zeros_like(T)
        step[i] = eps
        expected = (oscillator_loss(Y0, T + step, K, C) - oscillator_loss(Y0, T - step, K, C)) / (
            2 * eps
        )
        assert dt[i] == pytest.approx(expected, rel=1e-5, abs=1e-7)


def aliased(y0, t, k, c):
    a = si.odeint(damped, y0, t, (k, c), rtol=1e-11, atol=1e-11)
    b = solve(damped, y0, t, args=(k, c), rtol=1e-11, atol=1e-11)
    d = scipy.integrate.odeint(damped, y0, t, args=(k, c), rtol=1e-11, atol=1e-11)
    return np.sum(a * b) + np.sum(d)


def test_every_spelling_of_odeint_is_found() -> None:
    assert ad.script(aliased)(Y0, T, K, C) == pytest.approx(aliased(Y0, T, K, C), rel=1e-14)
    assert str(ad.script(aliased).graph).count("prim::CustomVjp(") == 3
    ad.gradcheck(aliased, Y0, T, K, C, rtol=1e-5, atol=1e-7)


def decay_factory(scale):
    def decay(t, y, rate):  # tfirst=True, as solve_ivp's functions are written
        return -scale * rate * y + np.cos(t)

    return decay


DECAY = decay_factory(0.5)


def closure_loss(y0, t, rate):
    ys = odeint(DECAY, y0, t, args=(rate,), tfirst=True, rtol=1e-11, atol=1e-11)
    return np.sum(ys**2)


def test_a_closure_with_tfirst() -> None:
    y0, rate = np.array([0.7, -0.2]), np.array([1.3, 0.4])
    assert ad.script(closure_loss)(y0, T, rate) == closure_loss(y0, T, rate)
    ad.gradcheck(closure_loss, y0, T, rate, rtol=1e-5, atol=1e-7)


def exponential(y, t, k):
    return -k * y


def exponential_loss(y0, t, k):
    return np.sum(odeint(exponential, y0, t, args=(k,), rtol=1e-12, atol=1e-12) ** 2)


@pytest.mark.parametrize("y0", [0.7, np.array(0.7), np.array([0.7])], ids=["float", "0-d", "1-d"])
def test_the_gradients_of_an_exponential_decay_are_its_closed_form(y0) -> None:
    """y_i = y0 exp(-k (t_i - t_0)), L = sum y_i^2: every gradient written out, exact to
    the solver's tolerance (finite differences would only be good to tolerance / step)."""
    t, k = np.array([0.1, 0.5, 1.0]), 1.5
    dy0, dt, dk = ad.grad(exponential_loss, argnums=(0, 1, 2))(y0, t, k)
    assert np.shape(dy0) == np.shape(y0)
    elapsed = t - t[0]
    ys = 0.7 * np.exp(-k * elapsed)
    np.testing.assert_allclose(dy0, np.sum(2 * ys * np.exp(-k * elapsed)), rtol=1e-10)
    assert dk == pytest.approx(np.sum(-2 * elapsed * ys**2), rel=1e-10)
    later = 2 * ys * (-k * ys)  # g_i . f(y_i) for i > 0; t_0 moves them all the other way
    np.testing.assert_allclose(dt, [-np.sum(later[1:]), *later[1:]], rtol=1e-9, atol=1e-12)


def dict_dynamics(y, t, params):
    return params["a"] * np.tanh(y) + params["b"]


def dict_loss(params, y0, t):
    return np.sum(odeint(dict_dynamics, y0, t, args=(params,), rtol=1e-11, atol=1e-11))


def test_pytree_args_get_pytree_gradients() -> None:
    params = {"a": np.array([-0.5, 0.2]), "b": np.array([0.1, 0.3])}
    grads = ad.grad(dict_loss)(params, Y0, T)
    assert set(grads) == {"a", "b"}
    vector, unflatten = ad.flatten(params)
    eps = 1e-6
    expected = [
        (
            dict_loss(unflatten(vector + eps * e), Y0, T)
            - dict_loss(unflatten(vector - eps * e), Y0, T)
        )
        / (2 * eps)
        for e in np.eye(len(vector))
    ]
    np.testing.assert_allclose(ad.flatten(grads)[0], expected, rtol=1e-6)


# ---- a small neural ODE: y' = tanh(W y + b), fit to data --------------------------------------


def neural(y, t, W, b):
    return np.tanh(W @ y + b)


def fit_loss(W, b, y0, t, data):
    ys = odeint(neural, y0, t, args=(W, b), rtol=1e-10, atol=1e-10)
    return np.mean((ys - data) ** 2)


def neural_problem(states: int = 3, times: int = 6) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(1)
    W = rng.normal(size=(states, states)) * 0.6
    b = rng.normal(size=states) * 0.3
    y0 = rng.normal(size=states)
    t = np.linspace(0.0, 2.0, times)
    data = rng.normal(size=(times, states))
    return W, b, y0, t, data


def test_a_neural_ode_fit_against_central_differences() -> None:
    W, b, y0, t, data = neural_problem()
    loss, (dW, db, dy0) = ad.value_and_grad(fit_loss, argnums=(0, 1, 2))(W, b, y0, t, data)
    assert loss == fit_loss(W, b, y0, t, data)
    assert (dW.shape, db.shape, dy0.shape) == (W.shape, b.shape, y0.shape)
    ad.gradcheck(fit_loss, W, b, y0, t, data, rtol=1e-5, atol=1e-8)


def test_a_descent_step_lowers_the_fit_loss() -> None:
    W, b, y0, t, data = neural_problem()
    dW, db = ad.grad(fit_loss, argnums=(0, 1))(W, b, y0, t, data)
    step = 0.1
    assert fit_loss(W - step * dW, b - step * db, y0, t, data) < fit_loss(W, b, y0, t, data)


def test_agrees_with_hips_autograds_odeint() -> None:
    autograd = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")
    aodeint = pytest.importorskip("autograd.scipy.integrate").odeint
    atuple = pytest.importorskip("autograd.builtins").tuple

    def a_neural(y, t, W, b):
        return anp.tanh(anp.dot(W, y) + b)

    def a_loss(W, b, y0, t, data):
        ys = aodeint(a_neural, y0, t, atuple((W, b)), rtol=1e-10, atol=1e-10)
        return anp.mean((ys - data) ** 2)

    W, b, y0, t, data = neural_problem()
    ours = ad.grad(fit_loss, argnums=(0, 1, 2, 3))(W, b, y0, t, data)
    theirs = autograd.grad(a_loss, argnum=(0, 1, 2, 3))(W, b, y0, t, data)
    for mine, other in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(mine, other, rtol=1e-6, atol=1e-9)


# ---- what is refused, located ------------------------------------------------------------------


FIT_GRAD = ad.grad(fit_loss)


def second_order(W, b, y0, t, data):
    return np.sum(FIT_GRAD(W, b, y0, t, data) ** 2)


def test_a_second_derivative_is_refused_saying_why() -> None:
    W, b, y0, t, data = neural_problem()
    with pytest.raises(AutodiffError, match="adjoint method") as caught:
        ad.grad(second_order)(W, b, y0, t, data)
    assert "test_odeint.py" in str(caught.value)


def with_dfun(y0, t):
    return np.sum(odeint(neural, y0, t, Dfun=None))


def with_a_nested_def(y0, t):
    def inner(y, s):
        return -y

    return np.sum(odeint(inner, y0, t))


def with_solve_ivp_events(y0, t):
    return np.sum(scipy.integrate.solve_ivp(damped, (0.0, 1.0), y0, t_eval=t, events=None).y)


@pytest.mark.parametrize(
    ("fn", "message"),
    [
        (with_dfun, "'Dfun' is not supported"),
        (with_a_nested_def, "must be a Python function defined outside"),
        (with_solve_ivp_events, "'events' is not supported"),
    ],
)
def test_refused_where_written(fn, message: str) -> None:
    with pytest.raises(ad.ScriptError, match=message) as caught:
        ad.script(fn)(Y0, T)
    shown = str(caught.value)
    call_line = fn.__code__.co_firstlineno + (4 if fn is with_a_nested_def else 1)
    assert f"test_odeint.py:{call_line}:" in shown
    assert "^" in shown


def test_a_two_dimensional_y0_is_refused() -> None:
    with pytest.raises(AutodiffError, match="1-D y0"):
        ad.grad(oscillator_loss)(np.ones((2, 1)), T, K, C)


def as_a_list(y, t, k):
    return [y[1], -k * y[0]]  # SciPy takes a list from func


def list_loss(y0, k):
    return np.sum(odeint(as_a_list, y0, T, args=(k,), rtol=1e-11, atol=1e-11) ** 2)


def test_dynamics_that_return_a_list() -> None:
    ad.gradcheck(list_loss, Y0, 2.0, rtol=1e-5, atol=1e-7)


def not_in_the_language(y, t):
    try:
        return -y
    except ValueError:
        return y


def unscriptable_loss(y0):
    return np.sum(odeint(not_in_the_language, y0, T))


def test_dynamics_outside_the_language_are_refused_when_differentiated_naming_both_lines() -> None:
    assert ad.script(unscriptable_loss)(Y0) == unscriptable_loss(Y0)  # the forward is SciPy's
    with pytest.raises(AutodiffError, match="'try' statements are not supported") as caught:
        ad.grad(unscriptable_loss)(Y0)
    shown = str(caught.value)
    assert f"test_odeint.py:{not_in_the_language.__code__.co_firstlineno + 1}:" in shown
    assert f"test_odeint.py:{unscriptable_loss.__code__.co_firstlineno + 1}:" in shown


HALF = np.array([0.0, 0.5])


def exponential_in_a_loop(y0, k, n: int):
    total = 0.0
    for _ in range(n):  # a run-time count: a loop in the IR, each call's residuals taped
        y0 = odeint(exponential, y0, HALF, args=(k,), rtol=1e-11, atol=1e-11)[-1]
        if np.sum(y0) > 0.5:
            total = total + np.sum(y0**2)
    return total


def test_in_a_loop_and_a_branch() -> None:
    y0, k = np.array([1.0, 0.5]), np.array([0.4, 0.9])
    assert ad.script(exponential_in_a_loop)(y0, k, 3) == exponential_in_a_loop(y0, k, 3)
    ad.gradcheck(exponential_in_a_loop, y0, k, 3, rtol=1e-5, atol=1e-7)
    gradient = ad.grad(exponential_in_a_loop, argnums=(0, 1)).gradient_for(y0, k, 3)
    assert "prim::Loop" in str(gradient.df)
    assert "prim::CustomVjpBwd" in str(gradient.df)


def time_points_as_a_list(y0, k):
    return np.sum(odeint(exponential, y0, [0.0, 0.5, 1.0], args=(k,), rtol=1e-11, atol=1e-11))


def test_time_points_written_as_a_list() -> None:
    y0, k = np.array([1.0, 0.5]), np.array([0.4, 0.9])
    assert ad.script(time_points_as_a_list)(y0, k) == time_points_as_a_list(y0, k)
    ad.gradcheck(time_points_as_a_list, y0, k, rtol=1e-5, atol=1e-7)


def list_in_a_loop(y0, k, n: int):
    for _ in range(n):
        y0 = odeint(exponential, y0, [0.0, 0.5], args=(k,), rtol=1e-11, atol=1e-11)[-1]
    return np.sum(y0)


def test_a_list_of_time_points_inside_a_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    # A zero gradient made for the custom_vjp call's result read the node it replaced, which a
    # loop's reverse then taped: the verifier after each pass refused the graph.
    monkeypatch.setenv("AUTODIFF_VERIFY", "each")
    y0, k = np.array([1.0, 0.5]), np.array([0.4, 0.9])
    ad.gradcheck(list_in_a_loop, y0, k, 3, rtol=1e-5, atol=1e-7)


def test_autodiff_dump_shows_the_adjoint_in_df() -> None:
    out = io.StringIO()
    arguments = ["--arg", "y0=f64[2]", "--arg", "t=f64[4]", "--arg", "k=f64[1]", "--arg", "c=0.3"]
    with contextlib.redirect_stdout(out):
        status = main(["dump", f"{__file__}:oscillator_loss", "--stage", "df", *arguments])
    assert status == 0
    assert "prim::CustomVjpBwd(%fn" in out.getvalue()
    assert "odeint[damped@test_odeint.py:" in out.getvalue()


def tuple_times_array_atol(y0, k):
    ys = odeint(exponential, y0, (0.0, 0.5, 1.0), args=(k,), rtol=1e-11, atol=np.full(2, 1e-11))
    return np.sum(ys)


def test_time_points_as_a_tuple_and_a_per_component_atol() -> None:
    y0, k = np.array([1.0, 0.5]), np.array([0.4, 0.9])
    ad.gradcheck(tuple_times_array_atol, y0, k, rtol=1e-5, atol=1e-7)
