"""``scipy.integrate.solve_ivp`` with ``t_eval`` in compiled code, differentiated by the adjoint
(Note [solve_ivp adjoint] in `autodiff.solve_ivp`): SciPy's results, gradients w.r.t. y0,
t_span[0], t_eval and args against central differences, for explicit and implicit methods."""

from __future__ import annotations

import numpy as np
import pytest

import autodiff as ad
from ir.errors import AutodiffError

pytest.importorskip("scipy")

from scipy.integrate import solve_ivp


def damped(t, y, k, c):
    return np.array([y[1], -k[0] * y[0] - c * y[1] + np.sin(t)])


def loss(y0, t_eval, k, c):
    sol = solve_ivp(damped, (0.0, 2.0), y0, t_eval=t_eval, args=(k, c), rtol=1e-11, atol=1e-11)
    return np.sum(sol.y[0] ** 2) + np.sum(np.cos(sol.y[1])) + np.sum(sol.t**2)


Y0 = np.array([1.0, -0.3])
T_EVAL = np.array([0.1, 0.4, 1.1, 1.5])
K = np.array([2.0])
C = 0.3


def test_the_result_is_scipys_and_one_custom_node() -> None:
    assert ad.script(loss)(Y0, T_EVAL, K, C) == loss(Y0, T_EVAL, K, C)
    graph = str(ad.script(loss).graph_for(Y0, T_EVAL, K, C))
    assert "(Double(4), Double(2, 4)) = prim::CustomVjp" in graph
    assert f"solve_ivp[damped@test_solve_ivp.py:{damped.__code__.co_firstlineno}]" in graph


def test_gradients_wrt_y0_t_eval_and_args_match_central_differences() -> None:
    ad.gradcheck(loss, Y0, T_EVAL, K, C, rtol=1e-5, atol=1e-7)


def with_a_method(y0, span, k, c, method: str):
    sol = solve_ivp(
        damped, span, y0, method, np.array([0.5, 1.0, 1.9]), args=(k, c), rtol=1e-10, atol=1e-10
    )
    return np.sum(sol.y**2)


@pytest.mark.parametrize("method", ["RK45", "DOP853", "Radau", "LSODA"])
def test_each_method_and_the_start_of_t_span(method: str) -> None:
    span = np.array([0.0, 2.0])
    assert ad.script(with_a_method)(Y0, span, K, C, method) == with_a_method(Y0, span, K, C, method)
    dspan = ad.grad(with_a_method, argnums=1)(Y0, span, K, C, method)
    assert dspan[1] == 0.0  # t_span[1] only bounds the interval
    ad.gradcheck(with_a_method, Y0, span, K, C, method, rtol=1e-4, atol=1e-6)


def without_args(y0):
    t_eval = np.array([0.5, 1.0])
    return np.sum(solve_ivp(lambda_free, (0.0, 1.0), y0, t_eval=t_eval, rtol=1e-10, atol=1e-10).y)


def lambda_free(t, y):
    return -y


def test_without_args() -> None:
    ad.gradcheck(without_args, Y0, rtol=1e-4, atol=1e-6)


def without_t_eval(y0):
    return np.sum(solve_ivp(lambda_free, (0.0, 1.0), y0).y)


def with_dense_output(y0):
    return np.sum(solve_ivp(lambda_free, (0.0, 1.0), y0, dense_output=True).y)


@pytest.mark.parametrize(
    ("fn", "message"),
    [(without_t_eval, "needs t_eval"), (with_dense_output, "'dense_output' is not supported")],
)
def test_refused_where_written(fn, message: str) -> None:
    with pytest.raises(ad.ScriptError, match=message) as caught:
        ad.script(fn)(Y0)
    assert f"test_solve_ivp.py:{fn.__code__.co_firstlineno + 1}:" in str(caught.value)


LOSS_GRAD = ad.grad(loss)


def second_order(y0, t_eval, k, c):
    return np.sum(LOSS_GRAD(y0, t_eval, k, c) ** 2)


def test_a_second_derivative_is_refused_saying_why() -> None:
    with pytest.raises(AutodiffError, match="adjoint method"):
        ad.grad(second_order)(Y0, T_EVAL, K, C)


def tuple_t_eval_array_atol(y0, k, c):
    sol = solve_ivp(
        damped, (0.0, 1.0), y0, t_eval=(0.5, 1.0), args=(k, c), rtol=1e-11, atol=np.full(2, 1e-11)
    )
    return np.sum(sol.y)


def test_t_eval_as_a_tuple_and_a_per_component_atol() -> None:
    ad.gradcheck(tuple_t_eval_array_atol, Y0, K, C, rtol=1e-5, atol=1e-7)
