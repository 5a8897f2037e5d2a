"""Differentiating loops and branches as they run (Note [Control-flow derivatives] in
`autodiff.control_flow`): the IR does not grow with the trip count, what the forward keeps
grows linearly with it, and the gradients are exact. Finite-difference checks of many more
control-flow functions are in the gradient corpus (`tests/gradients/corpus.py`)."""

# The if/else statements are the point: each is a prim::If to differentiate.
# ruff: noqa: SIM108

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import autodiff as ad
from autodiff.pipeline import Stages, compile_gradient
from autodiff.specialize import argument_type
from ir.graph import Graph

STATE = 8


def rnn(h, w, u, xs):
    for t in range(xs.shape[0]):
        h = np.tanh(h @ w + xs[t] @ u)
    return np.sum(h * h)


def rnn_inputs(steps: int) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(steps)
    h = rng.standard_normal(STATE)
    w = rng.standard_normal((STATE, STATE)) * 0.3
    u = rng.standard_normal((3, STATE)) * 0.3
    xs = rng.standard_normal((steps, 3))
    return h, w, u, xs


def rnn_by_hand(h, w, u, xs):
    """Backpropagation through time, written out: the reference gradient."""
    states = [h]
    for t in range(xs.shape[0]):
        states.append(np.tanh(states[-1] @ w + xs[t] @ u))
    dh = 2 * states[-1]
    dw, du, dxs = np.zeros_like(w), np.zeros_like(u), np.zeros_like(xs)
    for t in reversed(range(xs.shape[0])):
        da = dh * (1 - states[t + 1] ** 2)
        dw += np.outer(states[t], da)
        du += np.outer(xs[t], da)
        dxs[t] = u @ da
        dh = w @ da
    return dh, dw, du, dxs


def stages_of(fn: Any, *args: Any) -> Stages:
    types = [argument_type(fn.__name__, str(i), a) for i, a in enumerate(args)]
    wrt = tuple(i for i, a in enumerate(args) if isinstance(a, np.ndarray))
    return compile_gradient(ad.script(fn).graph, types, wrt)


def node_count(graph: Graph) -> int:
    return sum(1 for _ in graph.all_nodes())


def saved_bytes(fn: Any, *args: Any) -> int:
    wrt = tuple(i for i, a in enumerate(args) if isinstance(a, np.ndarray))
    _, saved = ad.grad(fn, argnums=wrt).compiled_for(args, wrt).forward(args)
    return saved.temporary_bytes()


# ---- the done-when: a 1000-step RNN -----------------------------------------------------


@pytest.mark.parametrize("steps", [1, 10, 1000])
def test_rnn_gradient_is_exact(steps: int) -> None:
    args = rnn_inputs(steps)
    grads = ad.grad(rnn, argnums=(0, 1, 2, 3))(*args)
    for actual, expected in zip(grads, rnn_by_hand(*args), strict=True):
        np.testing.assert_allclose(actual, expected, rtol=1e-6, atol=1e-12)


def test_rnn_ir_does_not_grow_with_the_number_of_steps() -> None:
    short, long = stages_of(rnn, *rnn_inputs(10)), stages_of(rnn, *rnn_inputs(1000))
    for stage in ("typed", "grad", "optimized"):
        assert node_count(getattr(short, stage)) == node_count(getattr(long, stage)), stage
    assert node_count(short.gradient.f) == node_count(long.gradient.f)
    assert node_count(short.gradient.df) == node_count(long.gradient.df)


def test_rnn_saved_bytes_grow_linearly_with_the_number_of_steps() -> None:
    b10, b100, b1000 = (saved_bytes(rnn, *rnn_inputs(steps)) for steps in (10, 100, 1000))
    assert b1000 - b100 == 10 * (b100 - b10)
    # O(T x state): per step, the state after tanh (the state before it is the step before's:
    # Note [Shared carried tapes]); not the input row xs[t], which the reverse reads from xs
    # itself, and nothing of the weights' size.
    assert (b1000 - b10) // 990 == STATE * 8


def test_loop_invariant_weights_are_captured_once() -> None:
    gradient = stages_of(rnn, *rnn_inputs(50)).gradient
    assert 1 in gradient.df_input_captured_inputs  # w, read directly by the reverse loop
    assert 2 in gradient.df_input_captured_inputs  # u
    df_text = str(gradient.df)
    assert "Double(50, 8, 8)" not in df_text
    assert "Double(50, 3, 8)" not in df_text


def invariants_inside(h, w, b, steps):
    for _ in range(steps):
        h = np.tanh(h @ w.T + np.exp(b))
    return np.sum(h)


def test_values_the_loop_does_not_change_are_hoisted_and_saved_once() -> None:
    h, w, *_ = rnn_inputs(1)
    b = np.linspace(-1.0, 1.0, STATE)
    ad.gradcheck(invariants_inside, h, w, b, 5)
    ten, twenty = (saved_bytes(invariants_inside, h, w, b, n) for n in (10, 20))
    # Per step, the state after tanh (Note [Shared carried tapes]); w.T and exp(b) are
    # computed and kept once.
    assert twenty - ten == 10 * STATE * 8
    typed = str(stages_of(invariants_inside, h, w, b, 3).typed)
    loop_body = typed[typed.index("prim::Loop") :]
    assert "aten::exp" not in loop_body
    assert "aten::transpose" not in loop_body


def test_tapes_of_fixed_shape_values_are_preallocated_arrays() -> None:
    gradient = stages_of(rnn, *rnn_inputs(20)).gradient
    kinds = {node.kind for node in gradient.f.all_nodes()}
    assert "prim::TapeArray" in kinds
    assert "prim::TapeList" not in kinds


def test_an_int_trip_count_is_a_run_time_value() -> None:
    def steps(h, w, n):
        for _ in range(n):
            h = np.sin(h @ w)
        return np.sum(h)

    h, w, *_ = rnn_inputs(3)
    dsteps = ad.grad(steps, argnums=(0, 1))
    for n in (0, 1, 5, 40):
        ad.gradcheck(steps, h, w, n)
        dsteps(h, w, n)
    assert len(dsteps.cache) == 1


# ---- while loops: lists, and the count they carry -----------------------------------------------


def newton(a):
    x = a
    while np.max(np.abs(x * x - a)) > 1e-12:
        x = 0.5 * (x + a / x)
    return np.sum(x)


def test_newton_iterations_converge_to_the_derivative_of_the_square_root() -> None:
    a = np.array([0.5, 2.0, 9.0, 100.0])
    np.testing.assert_allclose(ad.grad(newton)(a), 0.5 / np.sqrt(a), rtol=1e-10)


def test_a_while_loop_tapes_into_lists_and_saves_per_iteration() -> None:
    gradient = stages_of(newton, np.ones(4) * 2.0).gradient
    kinds = {node.kind for node in gradient.f.all_nodes()}
    assert "prim::TapeList" in kinds
    assert "prim::TapeArray" not in kinds
    few = saved_bytes(newton, np.full(4, 2.0))
    many = saved_bytes(newton, np.full(4, 1e12))  # many more Newton steps from far away
    assert many > 3 * few


# ---- branches -----------------------------------------------------------------------------------


def relu_or_square(x):
    if np.sum(x) > 0:
        y = np.maximum(x, 0.0) * x
    else:
        y = x * x * x
    return np.sum(y)


def test_each_branch_captures_only_what_its_own_reverse_reads() -> None:
    x = np.array([0.5, -1.5, 2.0])
    np.testing.assert_allclose(ad.grad(relu_or_square)(x), [1.0, 0.0, 4.0], rtol=1e-15)
    np.testing.assert_allclose(ad.grad(relu_or_square)(-x), 3 * x**2, rtol=1e-15)
    f_text = str(stages_of(relu_or_square, x).gradient.f)
    assert "prim::Uninitialized" in f_text


def test_a_carried_value_of_unknown_type_still_carries_the_gradient() -> None:
    # `y` is an int before the loop and an array in it: its carried type is Any, and the
    # reverse loop carries its gradient all the same (zero iterations give zero).
    def mixed(x, n):
        y = 0
        for _ in range(n):
            y = y * x + x
        return np.sum(y)

    x = np.full(3, 0.5)
    ad.gradcheck(mixed, x, 3)
    np.testing.assert_allclose(ad.grad(mixed)(x, 3), np.full(3, 2.75), rtol=1e-15)
    np.testing.assert_allclose(ad.grad(mixed)(x, 0), np.zeros(3), rtol=1e-15)


# ---- gradients that are zero in one iteration and not in another (issue 15, item 9b) ----------


def growing_carried_read_by_a_condition(x, n):
    # `s` grows, so its type is Double(*). Its only use before being rebound is a condition:
    # its gradient in the reverse body is zero, and with no shape in its type it was left as
    # the AUTOGRAD_ZERO sentinel, which the next reverse iteration received as the gradient of
    # the grown `s` (aten::_concatenate_backward: tuple index out of range; with one
    # iteration, aten::add of the sentinel).
    s = x * 1.0
    t = x * 1.0
    for i in range(n):
        if np.sum(s) > 0.0:
            t = t * 1.0
            t[0] = 2.0
        s = np.concatenate([t, x[:i]])
    return np.sum(s**2)


def scalar_gradient_lost_its_dtype(x, v, c, n):
    # The gradient of a list element through np.concatenate has no dtype in its type, so `q`'s
    # gradient joins to Tensor(); the branch that does not read `q` returned the sentinel,
    # which was not materialised (aten::add: unsupported operand ... 'AutogradZeroType').
    s = c[None] * v
    t = v * 1.0
    parts = [x]
    q = x[1]
    for _ in range(3):
        if n <= 1:
            q = s[0]
        if n > 1:
            t = t * q
        parts.append(np.sin(t))
    return np.sum(np.concatenate(parts)) + np.sum(s)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_a_zero_gradient_of_a_growing_carried_value_is_materialised(n: int) -> None:
    x = np.array([0.4, -0.3, 0.9])
    assert ad.gradcheck(growing_carried_read_by_a_condition, x, n).ok


@pytest.mark.parametrize("n", [0, 2])
def test_a_zero_gradient_whose_joined_type_lost_its_dtype_is_materialised(n: int) -> None:
    rng = np.random.default_rng(n)
    args = (rng.standard_normal(3), rng.standard_normal(3), np.array(0.3), n)
    assert ad.gradcheck(scalar_gradient_lost_its_dtype, *args).ok


# ---- sizes read from a carried value whose shape changes (issue 15, item 9b) -------------------
# Shape propagation kept what it learnt in the loop's first round, while the carried `s` still
# had its initial shape: the arrays sized by `s.shape` were typed with that shape, and the
# reverse program, which trusts the types (loop tapes, sums back to an operand's shape), failed
# in the second iteration.


def sized_by_a_growing_value_in_a_while(x, c, n):
    s = x * c
    i = 0
    while i < n:
        w = np.ones(s.shape[:1]) * c
        s = np.concatenate([(s + w)[None].reshape(-1), c[None]])
        i = i + 1
    return np.sum(s * s)


def broadcast_against_a_growing_value(x, c, n):
    s = x * c
    for _ in range(n):
        w = np.ones((s.shape[0], 1)) * c
        s = np.concatenate([np.sum(s + w, axis=0), c[None]])
    return np.sum(s * s)


@pytest.mark.parametrize(
    "fn", [sized_by_a_growing_value_in_a_while, broadcast_against_a_growing_value]
)
@pytest.mark.parametrize("n", [1, 2, 3])
def test_sizes_of_a_growing_carried_value_are_read_each_iteration(fn: Any, n: int) -> None:
    x = np.array([0.1, -0.2, 0.3])
    assert ad.gradcheck(fn, x, np.array(0.3), n).ok
