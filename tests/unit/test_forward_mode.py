"""Forward mode (`autodiff.forward_mode`): ``jvp``, ``jacfwd``, ``linearize`` and ``hvp``, against
central differences of the plain function and against reverse mode (``ad.jacobian``,
``ad.hessian``), through loops, branches and in-place writes; optionally against JAX."""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import autodiff as ad
from autodiff.forward_mode import BATCHED_COLUMNS
from autodiff.script import scripted_for

EPS = 1e-6
RNG = np.random.default_rng(20)


def central_difference(fn: Callable[..., Any], primals: tuple[Any, ...], tangents: tuple[Any, ...]):
    """(f(x + eps v) - f(x - eps v)) / 2 eps of the plain function, on copies of the primals."""

    def moved(sign: float) -> Any:
        args = [
            copy.deepcopy(p) if t is None else p + sign * EPS * t
            for p, t in zip(primals, tangents, strict=True)
        ]
        return np.asarray(fn(*args), dtype=np.float64)

    return (moved(1.0) - moved(-1.0)) / (2 * EPS)


def close(a: Any, b: Any, tol: float = 1e-6) -> None:
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def sin_times(x, y):
    return np.sin(x) * y + x @ y


def power_loop(x, n: int):
    s = x
    for _ in range(n):
        s = np.sin(s) * x
    return s


def newton_sqrt(a):
    x = a
    while np.max(np.abs(x * x - a)) > 1e-12:
        x = 0.5 * (x + a / x)
    return x * np.tanh(a)


def branchy(x):
    if np.sum(x) > 0:
        return x**2 * np.exp(-x)
    return np.cos(x) * x[0]


def accumulate(x, n: int):
    y = np.zeros(3)
    for i in range(n):
        y[i % 3] += np.sin(x[i % 3]) * x[0]
    return y


def writes_argument(x, w):
    x[1:] *= w  # the caller's x is written, as NumPy writes it
    return np.tanh(x)


def breaks_out(x, n: int):
    s = x
    for _ in range(n):
        s = np.tanh(s) + x
        if np.sum(s) > 4.0:
            break
    return s


CASES = [
    (sin_times, lambda: (RNG.standard_normal(3), RNG.standard_normal(3))),
    (power_loop, lambda: (RNG.standard_normal(3), 4)),
    (newton_sqrt, lambda: (RNG.uniform(1.0, 3.0, 4),)),
    (branchy, lambda: (np.abs(RNG.standard_normal(3)),)),
    (branchy, lambda: (-np.abs(RNG.standard_normal(3)),)),
    (accumulate, lambda: (RNG.standard_normal(3), 5)),
    (writes_argument, lambda: (RNG.standard_normal(4), RNG.standard_normal(3))),
    (breaks_out, lambda: (RNG.uniform(0.5, 1.0, 3), 6)),
]
IDS = [
    "straight",
    "loop",
    "while",
    "branch-then",
    "branch-else",
    "index-add",
    "argument-written",
    "break",
]


def tangents_for(primals: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(
        RNG.standard_normal(np.shape(p)) if isinstance(p, np.ndarray) else None for p in primals
    )


@pytest.mark.parametrize(("fn", "make"), CASES, ids=IDS)
def test_jvp_matches_central_differences(fn: Callable[..., Any], make: Any) -> None:
    primals = make()
    tangents = tangents_for(primals)
    expected_out = fn(*copy.deepcopy(primals))
    numeric = central_difference(fn, primals, tangents)
    out, tangent = ad.jvp(fn, copy.deepcopy(primals), tangents)
    close(out, expected_out, 1e-12)
    close(tangent, numeric)


@pytest.mark.parametrize(("fn", "make"), CASES, ids=IDS)
def test_jacfwd_equals_jacobian(fn: Callable[..., Any], make: Any) -> None:
    primals = make()
    forward = ad.jacfwd(fn)(*copy.deepcopy(primals))
    reverse = ad.jacrev(fn)(*copy.deepcopy(primals))
    assert (
        forward.shape
        == reverse.shape
        == np.shape(fn(*copy.deepcopy(primals))) + (np.shape(primals[0]))
    )
    close(forward, reverse, 1e-10)


def test_jvp_and_jacfwd_write_the_arguments_once_as_the_function_does() -> None:
    x, w = np.array([1.0, 2.0, 3.0, 4.0]), np.array([0.5, -1.0, 2.0])
    expected = x.copy()
    writes_argument(expected, w)
    given = x.copy()
    ad.jvp(writes_argument, (given, w), (np.ones(4), None))
    np.testing.assert_array_equal(given, expected)
    given = x.copy()
    jacobian = ad.jacfwd(writes_argument, argnums=(0, 1))(given, w)
    np.testing.assert_array_equal(given, expected)
    close(jacobian[1], ad.jacobian(writes_argument, argnums=1)(x.copy(), w), 1e-12)


def tanh_cubed(w, x):
    return np.sum(np.tanh(x @ w) ** 3) + np.sum(w**4) / 4


def test_jacfwd_of_grad_is_the_hessian() -> None:
    w, x = RNG.standard_normal(3), RNG.standard_normal((5, 3))
    close(ad.jacfwd(ad.grad(tanh_cubed))(w, x), ad.hessian(tanh_cubed)(w, x), 1e-10)


def test_hvp_is_hessian_times_vector_forward_over_reverse() -> None:
    w, x, v = RNG.standard_normal(3), RNG.standard_normal((5, 3)), RNG.standard_normal(3)
    close(ad.hvp(tanh_cubed)(w, x, v), ad.hessian(tanh_cubed)(w, x) @ v, 1e-10)
    numeric = central_difference(ad.grad(tanh_cubed), (w, x), (v, None))
    close(ad.hvp(tanh_cubed)(w, x, v), numeric)
    dx = RNG.standard_normal((5, 3))
    by_x = ad.hvp(tanh_cubed, argnums=1)(w, x, dx)  # d/dx of d/dx, along dx
    close(by_x, central_difference(ad.grad(tanh_cubed, argnums=1), (w, x), (None, dx)))


def test_hvp_through_a_loop() -> None:
    def loss(x, n: int):
        return np.sum(power_loop(x, n) ** 2)

    x, v = RNG.standard_normal(3), RNG.standard_normal(3)
    close(ad.hvp(loss)(x, 3, v), ad.hessian(loss)(x, 3) @ v, 1e-10)


def layer(params, x):
    return np.tanh(x @ params["W"] + params["b"]), np.sum(params["b"] ** 2)


def test_pytrees_of_primals_and_tangents() -> None:
    params = {"W": RNG.standard_normal((3, 2)), "b": RNG.standard_normal(2)}
    tangent = {"W": RNG.standard_normal((3, 2)), "b": RNG.standard_normal(2)}
    x = RNG.standard_normal((4, 3))
    (out, penalty), (dout, dpenalty) = ad.jvp(layer, (params, x), (tangent, None))
    assert isinstance(out, np.ndarray)
    assert out.shape == (4, 2)

    def plain(p):
        return layer(p, x)

    def moved(sign: float) -> Any:
        return plain({k: params[k] + sign * EPS * tangent[k] for k in params})

    close(dout, (moved(1.0)[0] - moved(-1.0)[0]) / (2 * EPS))
    close(dpenalty, 2 * params["b"] @ tangent["b"])
    close(penalty, np.sum(params["b"] ** 2), 1e-14)


def test_python_float_and_float32_primals() -> None:
    def f(x, s):
        return np.sin(x) * s**2

    x = RNG.standard_normal(3).astype(np.float32)
    out, tangent = ad.jvp(f, (x, 1.5), (np.ones(3, np.float32), 0.0))
    assert out.dtype == np.float32
    assert tangent.dtype == np.float32
    close(tangent, np.cos(x) * 2.25, 1e-6)
    _out, tangent = ad.jvp(f, (x, 1.5), (np.zeros(3, np.float32), 1.0))
    close(tangent, np.sin(x) * 3.0, 1e-6)


def test_linearize_runs_the_jvp_at_the_point_it_was_given() -> None:
    x, y = RNG.standard_normal(3), RNG.standard_normal(3)
    out, f_jvp = ad.linearize(sin_times, x, y)
    close(out, sin_times(x, y), 1e-15)
    v, w = RNG.standard_normal(3), RNG.standard_normal(3)
    close(f_jvp(v, w), ad.jvp(sin_times, (x, y), (v, w))[1], 1e-15)


def test_a_second_call_reuses_the_compiled_jvp() -> None:
    def f(x):
        return np.exp(x) * 2.0

    x = RNG.standard_normal(3)
    ad.jvp(f, (x,), (x,))
    (unit,) = scripted_for(f).cache.values()
    first = unit.calls[("jvp", (0,))]
    ad.jvp(f, (x + 1,), (x,))
    assert unit.calls[("jvp", (0,))] is first


def test_the_jvp_graph_keeps_no_reverse_program() -> None:
    """Note [Forward mode by transposition]: the VJP of the seed is dead code, so a straight-line
    function's JVP graph is its forward nodes and one tangent node per operator."""
    from autodiff.jvp_graphs import jvp_graph
    from ir.types import TensorType

    scripted = ad.script(sin_times)
    types = [TensorType("float64", (3,)), TensorType("float64", (3,))]
    graph = jvp_graph(scripted.graph, types, [0, 1]).graph
    kinds = [node.kind for node in graph.nodes() if node.kind != "prim::Constant"]
    for reverse_only in ("aten::zeros_like", "aten::ones_like", "aten::_unreduce"):
        assert reverse_only not in kinds
    assert kinds.count("aten::sin") == 1
    assert kinds.count("aten::cos") == 1
    assert len(kinds) <= 15, graph  # 4 forward, 3 + 2 * 2 + 2 tangent (a broadcast_to)


@pytest.mark.parametrize(
    ("tangents", "message"),
    [
        ((np.ones(4), None), r"tangent of argument 'x' of sin_times\(\) has shape \(4,\)"),
        ((np.ones(3, np.float32), None), r"is float32, but the argument is float64"),
        (("a", None), r"must be an array or a float, not"),
        ((np.ones(3),), r"got 2 primals and 1 tangents"),
    ],
)
def test_bad_tangents_are_refused_naming_the_argument(tangents: Any, message: str) -> None:
    x, y = np.ones(3), np.ones(3)
    with pytest.raises(ad.ArgumentError, match=message):
        ad.jvp(sin_times, (x, y), tangents)


def test_an_integer_argument_takes_no_tangent() -> None:
    with pytest.raises(ad.ArgumentError, match=r"argument 'n' of power_loop\(\) is of type int"):
        ad.jvp(power_loop, (np.ones(3), 2), (np.ones(3), 1.0))
    _out, tangent = ad.jvp(power_loop, (np.ones(3), 2), (np.ones(3), None))
    assert tangent.shape == (3,)


def test_a_tangent_tree_of_another_structure_is_refused() -> None:
    params = {"W": np.ones((3, 2)), "b": np.ones(2)}
    with pytest.raises(ad.ArgumentError, match=r"tangent of argument 'params"):
        ad.jvp(layer, (params, np.ones((4, 3))), ({"W": np.ones((3, 2))}, None))


def test_complex_primals_are_refused() -> None:
    with pytest.raises(ad.ArgumentError, match=r"complex argument 'x'.*real and imaginary"):
        ad.jvp(sin_times, (np.ones(3) + 1j, np.ones(3)), (np.ones(3) + 0j, None))


def test_a_complex_result_is_refused_where_it_is_computed() -> None:
    def f(x):
        return x * (1.0 + 2.0j)

    with pytest.raises(ad.DifferentiationError, match="complex result") as info:
        ad.jvp(f, (np.ones(3),), (np.ones(3),))
    assert "test_forward_mode.py" in str(info.value)


def test_jacfwd_refuses_random_draws_where_they_are_drawn() -> None:
    def noisy(x):
        return x * np.random.standard_normal(3)

    with pytest.raises(ad.DifferentiationError, match="random draws") as info:
        ad.jacfwd(noisy)(np.ones(3))
    assert "test_forward_mode.py" in str(info.value)


def test_jacfwd_shapes_of_matrices_and_scalars() -> None:
    def f(a, s):
        return np.tanh(a @ a.T) * s

    a = RNG.standard_normal((2, 3))
    forward = ad.jacfwd(f, argnums=(0, 1))(a, 0.7)
    reverse = ad.jacobian(f, argnums=(0, 1))(a, 0.7)
    assert forward[0].shape == (2, 2, 2, 3)
    assert forward[1].shape == (2, 2)
    close(forward[0], reverse[0], 1e-12)
    close(forward[1], reverse[1], 1e-12)


def test_against_jax() -> None:
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy

    def ours(x, y):
        return np.tanh(x * y) @ np.cos(y)

    def theirs(x, y):
        return jnp.tanh(x * y) @ jnp.cos(y)

    x, y = RNG.standard_normal((4, 3)), RNG.standard_normal(3)
    v, w = RNG.standard_normal((4, 3)), RNG.standard_normal(3)
    out, tangent = ad.jvp(ours, (x, y), (v, w))
    jax_out, jax_tangent = jax.jvp(theirs, (x, y), (v, w))
    close(out, np.asarray(jax_out), 1e-12)
    close(tangent, np.asarray(jax_tangent), 1e-12)
    close(ad.jacfwd(ours, argnums=1)(x, y), np.asarray(jax.jacfwd(theirs, 1)(x, y)), 1e-12)


def test_the_function_runs_once_its_draws_and_prints_as_a_call() -> None:
    """Note [Forward mode by transposition]: the results come out of the graph of the tangents,
    so one draw serves both and a print prints once."""

    def noisy(x):
        print("step")
        return x * np.random.standard_normal(3)

    np.random.seed(7)
    out, tangent = ad.jvp(noisy, (np.full(3, 2.0),), (np.ones(3),))
    after = np.random.standard_normal()
    np.random.seed(7)
    expected = noisy(np.full(3, 2.0))
    close(out, expected, 0.0)
    close(tangent, expected / 2.0, 0.0)
    assert np.random.standard_normal() == after


def test_print_runs_once(capsys: pytest.CaptureFixture[str]) -> None:
    def loud(x, n: int):
        for i in range(n):
            print("iteration", i)
            x = np.sin(x)
        return x

    ad.jvp(loud, (np.ones(2), 2), (np.ones(2), None))
    assert capsys.readouterr().out == "iteration 0\niteration 1\n"


def test_an_integer_result_is_refused_where_it_is_computed() -> None:
    def counts(x):
        return np.sin(x), np.argmax(x)

    with pytest.raises(ad.DifferentiationError, match="floating-point results") as info:
        ad.jvp(counts, (np.ones(3),), (np.ones(3),))
    assert "test_forward_mode.py" in str(info.value)


def test_the_benchmark_jacobians_agree() -> None:
    """`python -m benchmarks --only forward` times jacfwd, jacrev and the Jacobian by hand,
    after checking that they agree (here without JAX, at the quick size)."""
    from benchmarks import forward_mode

    calls = forward_mode.calls(quick=True, with_jax=False)
    assert set(calls) == {"ours jacfwd", "ours jacrev", "numpy by hand"}
    table = forward_mode.format_table(True, dict.fromkeys(calls, 1.0))
    assert "| ours jacfwd | 1 | 1.00 |" in table


def test_variadic_arguments_take_tangents_as_jax_does() -> None:
    def scaled(a, *xs):
        return a * np.sin(xs[0][0]) * xs[1]

    x, y = RNG.standard_normal(2), RNG.standard_normal(2)
    dx = RNG.standard_normal(2)
    out, tangent = ad.jvp(scaled, (2.0, [x], y), (1.0, [dx], None))
    close(out, 2.0 * np.sin(x) * y, 1e-15)
    close(tangent, np.sin(x) * y + 2.0 * np.cos(x) * dx * y, 1e-14)


def sin_scaled(x):
    return np.sin(x) * np.sum(x**2)


@pytest.mark.parametrize(
    ("outer", "inner"),
    [(ad.jacfwd, ad.jacfwd), (ad.jacrev, ad.jacfwd), (ad.jacfwd, ad.jacrev)],
    ids=["fwd-fwd", "rev-fwd", "fwd-rev"],
)
def test_jacobians_nest_in_either_mode(outer: Any, inner: Any) -> None:
    """Note [Forward Jacobian graphs]: a jacfwd is a graph that either mode differentiates."""
    x = RNG.standard_normal(3)
    expected = ad.jacobian(ad.jacobian(sin_scaled))(x)
    close(outer(inner(sin_scaled))(x), expected, 1e-12)
    looped = outer(inner(power_loop))(x, 3)
    close(looped, ad.jacobian(ad.jacobian(power_loop))(x, 3), 1e-12)


def test_a_nested_jacfwd_writes_the_argument_once() -> None:
    def doubles(x):
        x *= 2.0
        return np.sin(x)

    x = RNG.standard_normal(3)
    given = x.copy()
    second = ad.jacfwd(ad.jacfwd(doubles))(given)
    np.testing.assert_array_equal(given, 2.0 * x)
    expected = np.zeros((3, 3, 3))
    for i in range(3):
        expected[i, i, i] = -4.0 * np.sin(2.0 * x[i])
    close(second, expected, 1e-12)


def test_few_columns_run_as_one_graph_kept_by_the_function() -> None:
    """Note [Batched columns]: a jacfwd of few columns and no loop is one compiled graph, kept
    in the function's compilation unit, so a jacfwd made anew each call compiles once."""

    def few(x, y):
        return np.tanh(np.outer(x, y)).ravel() * np.sum(x**2)

    x, y = RNG.standard_normal(3), RNG.standard_normal(4)
    first = ad.jacfwd(few, argnums=(0,))(x, y)
    (unit,) = scripted_for(few).cache.values()
    (kept,) = [call for key, call in unit.calls.items() if key[0] == "jacfwd"]
    again = ad.jacfwd(few, argnums=(0,))(x, y)
    assert [call for key, call in unit.calls.items() if key[0] == "jacfwd"] == [kept]
    assert isinstance(first, tuple)
    close(first[0], ad.jacobian(few)(x, y), 1e-12)
    close(again[0], first[0], 0.0)
    many = RNG.standard_normal(BATCHED_COLUMNS + 1)
    close(ad.jacfwd(few)(many, y), ad.jacobian(few)(many, y), 1e-12)


def test_hvp_refuses_containers_naming_the_argument() -> None:
    def loss(p, x):
        return np.sum(np.tanh(x @ p["W"]) ** 2)

    with pytest.raises(ad.DifferentiationError, match=r"loss\(\) with argument 'p' a list"):
        ad.hvp(loss)({"W": np.ones((3, 2))}, np.ones((4, 3)), {"W": np.ones((3, 2))})


def test_dump_jvp_prints_the_forward_graph_and_refuses_an_int_wrt(
    tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    from autodiff.cli import main

    source = tmp_path / "model.py"
    source.write_text("import numpy as np\n\ndef f(x, n: int):\n    return np.sin(x) * n\n")
    target = f"{source}:f"
    assert main(["dump", target, "--stage", "jvp", "--arg", "x=f64[3]", "--arg", "n=2"]) == 0
    out = capsys.readouterr().out
    # a function named f compiled before in this process makes this graph f~N
    assert re.match(r"graph @f(~\d+)?\(%x : Double\(3\), %n : int, %dx : Double\(3\)\):", out)
    assert "aten::cos(%x)" in out
    last = out.rstrip().splitlines()[-1]
    assert last.startswith("  return (%")
    assert last.count("%") == 2  # the result and its tangent
    status = main(
        ["dump", target, "--stage", "jvp", "--arg", "x=f64[3]", "--arg", "n=2", "--wrt", "n"]
    )
    assert status == 1
    assert "cannot differentiate f() with respect to argument 'n'" in capsys.readouterr().err


def test_a_loop_jvp_is_one_loop_carrying_the_tangent_without_tapes() -> None:
    """Note [Tape maps] and Note [Tangent loops]: what transposition leaves (a forward loop
    filling tapes, a loop mapping them, a tangent loop reading them) becomes one loop that
    carries the tangent beside the primal, as forward mode by hand does."""
    from autodiff.jvp_graphs import jvp_graph
    from ir.types import INT, TensorType

    for fn in (power_loop, accumulate):
        scripted = ad.script(fn)
        types = [TensorType("float64", (3,)), INT]
        graph = jvp_graph(scripted.graph, types, [0]).graph
        kinds = [node.kind for node in graph.all_nodes()]
        assert kinds.count("prim::Loop") == 1
        assert not [kind for kind in kinds if kind.startswith("prim::Tape")]
