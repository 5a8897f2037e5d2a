"""``ad.custom_vjp``: an opaque function with a hand-written vjp, called from scripted code
(Note [Custom vjp] in `autodiff.custom_vjp`), and its scripted form (Note [Scripted custom
vjp] in `autodiff.scripted_vjp`)."""

from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest

import autodiff as ad
from autodiff.cli import main
from ir.errors import AutodiffError

# ---- an opaque body: Python over .tolist(), which the compiler never reads -------------------

CALLS = {"fwd": 0, "bwd": 0}


@ad.custom_vjp
def cube(x):
    return np.array([v**3 for v in x.tolist()])


def cube_fwd(x):
    CALLS["fwd"] += 1
    return cube(x), x


def cube_bwd(x, g):
    CALLS["bwd"] += 1
    return (3 * x**2 * g,)


cube.defvjp(cube_fwd, cube_bwd)


def loss_of_cube(x):
    return np.sum(np.sin(cube(x)))


X = np.array([0.3, -0.5, 1.1])


def test_an_opaque_body_runs_as_one_node_with_the_value_of_the_plain_function() -> None:
    assert ad.script(loss_of_cube)(X) == pytest.approx(loss_of_cube(X))
    graph = str(ad.script(loss_of_cube).graph_for(X))
    assert "prim::CustomVjp(%fn, %x)" in graph
    assert f'"cube@test_custom_vjp.py:{cube.__wrapped__.__code__.co_firstlineno}"' in graph


def test_its_gradient_is_the_one_bwd_gives() -> None:
    before = dict(CALLS)
    dx = ad.grad(loss_of_cube)(X)
    np.testing.assert_allclose(dx, np.cos(X**3) * 3 * X**2, rtol=1e-12)
    assert CALLS["fwd"] == before["fwd"] + 1
    assert CALLS["bwd"] == before["bwd"] + 1
    ad.gradcheck(loss_of_cube, X)


def test_the_custom_function_itself_is_differentiated_by_its_rule() -> None:
    (dx,) = ad.vjp(cube, X)[1](np.ones(3))
    np.testing.assert_allclose(dx, 3 * X**2)
    np.testing.assert_allclose(ad.jacobian(cube)(X), np.diag(3 * X**2))


def test_f_runs_fwd_and_df_runs_bwd() -> None:
    gradient = ad.grad(loss_of_cube).gradient_for(X)
    assert "prim::CustomVjpFwd(%fn, %x)" in str(gradient.f)
    assert "prim::CustomVjpBwd(%fn, %residuals," in str(gradient.df)
    assert "CustomVjpFwd" not in str(gradient.df)


@pytest.mark.parametrize(("stage", "node"), [("f", "CustomVjpFwd"), ("df", "CustomVjpBwd")])
def test_autodiff_dump_shows_the_custom_nodes(stage: str, node: str) -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = main(["dump", f"{__file__}:loss_of_cube", "--stage", stage, "--arg", "x=f64[3]"])
    assert status == 0
    assert f"prim::{node}(%fn" in out.getvalue()
    assert "cube@test_custom_vjp.py" in out.getvalue()


# ---- pytrees, loops and branches -------------------------------------------------------------


@ad.custom_vjp
def affine(p, x):
    return np.array(
        [v * a + float(p["b"]) for v, a in zip(x.tolist(), p["a"].tolist(), strict=True)]
    )


def affine_fwd(p, x):
    return affine(p, x), {"a": p["a"], "x": x}  # pytree residuals


def affine_bwd(residuals, g):
    return {"a": g * residuals["x"], "b": np.sum(g)}, g * residuals["a"]


affine.defvjp(affine_fwd, affine_bwd)


def in_a_loop(a, b, x, n: int):
    for _ in range(n):
        x = np.tanh(affine({"a": a, "b": b}, x))
    return np.sum(x**2)


def in_a_branch(a, b, x):
    if np.sum(x) > 0:
        y = affine({"a": a, "b": b}, x)
        y = y * 2.0
    else:
        y = np.sin(x)
    return np.sum(y**2)


A, B = np.array([0.5, -0.3, 0.8]), np.array(0.1)


def test_pytree_arguments_and_residuals_in_a_loop_with_a_run_time_count() -> None:
    ad.gradcheck(in_a_loop, A, B, X, 3)
    gradient = ad.grad(in_a_loop, argnums=(0, 1, 2)).gradient_for(A, B, X, 3)
    assert "prim::Loop" in str(gradient.df)  # not unrolled: the residuals are taped
    assert "prim::CustomVjpBwd" in str(gradient.df)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_in_a_branch(sign: float) -> None:
    ad.gradcheck(in_a_branch, A, B, sign * X)


def test_a_dict_argument_gets_a_dict_gradient() -> None:
    def loss(p, x):
        return np.sum(affine(p, x) ** 2)

    dp = ad.grad(loss)({"a": A, "b": B}, X)
    y = A * X + B
    np.testing.assert_allclose(dp["a"], 2 * y * X)
    np.testing.assert_allclose(dp["b"], np.sum(2 * y))


# ---- an implicit gradient: a fixed point solved by opaque iteration --------------------------


@ad.custom_vjp
def fixed_point(W, b):
    x = np.zeros(len(b))
    for _ in range(200):  # x* = tanh(W x* + b), a contraction for a small W
        x = np.tanh(W @ x + b)
    return x


def fixed_point_fwd(W, b):
    x = fixed_point(W, b)
    return x, (W, x)


def fixed_point_bwd(residuals, g):
    # F(x, W, b) = x - tanh(W x + b) = 0, so dx = (I - D W)^-1 D (dW x + db), D = 1 - x**2:
    # the vjp solves (I - D W)^T u = g, and then db = D u, dW = outer(D u, x).
    W, x = residuals
    d = 1 - x**2
    u = np.linalg.solve((np.eye(len(x)) - d[:, None] * W).T, g)
    return np.outer(d * u, x), d * u


fixed_point.defvjp(fixed_point_fwd, fixed_point_bwd)


def fixed_point_loss(W, b):
    return np.sum(fixed_point(W, b) ** 2)


def test_an_implicit_function_gradient_matches_central_differences() -> None:
    rng = np.random.default_rng(0)
    W = 0.3 * rng.standard_normal((4, 4))
    b = rng.standard_normal(4)
    dW, db = ad.grad(fixed_point_loss, argnums=(0, 1))(W, b)
    eps = 1e-6
    for arg, grad in ((W, dW), (b, db)):
        for index in np.ndindex(arg.shape):
            saved = arg[index]
            arg[index] = saved + eps
            up = fixed_point_loss(W, b)
            arg[index] = saved - eps
            down = fixed_point_loss(W, b)
            arg[index] = saved
            assert grad[index] == pytest.approx((up - down) / (2 * eps), rel=1e-6, abs=1e-9)


# ---- errors ----------------------------------------------------------------------------------


def _two_argument(fwd_bwd):
    @ad.custom_vjp
    def product(x, y):
        return x * y

    product.defvjp(lambda x, y: (x * y, (x, y)), fwd_bwd)
    return product


def test_bwd_returning_the_wrong_number_of_cotangents_is_located_and_named() -> None:
    product = _two_argument(lambda r, g: (g * r[1],))

    def loss(x, y):
        return np.sum(product(x, y))

    with pytest.raises(AutodiffError) as info:
        ad.grad(loss)(X, X)
    message = str(info.value)
    assert "(the bwd of _two_argument.<locals>.product@test_custom_vjp.py:" in message
    assert "returned 1 cotangents; it returns a tuple of 2" in message
    assert info.value.source_range is not None
    assert "return np.sum(product(x, y))" in message  # the caller's line, with a caret


def test_bwd_returning_a_wrong_shape_is_located_and_named() -> None:
    product = _two_argument(lambda r, g: (np.sum(g * r[1]), g * r[0]))

    def loss(x, y):
        return np.sum(product(x, y))

    with pytest.raises(AutodiffError, match=r"bwd of .*product.*shape \(\) for argument 0"):
        ad.grad(loss)(X, X)


def test_none_is_no_gradient() -> None:
    product = _two_argument(lambda r, g: (g * r[1], None))

    def loss(x, y):
        return np.sum(product(x, y))

    dx, dy = ad.grad(loss, argnums=(0, 1))(X, 2 * X)
    np.testing.assert_allclose(dx, 2 * X)
    np.testing.assert_array_equal(dy, np.zeros(3))


def test_differentiating_without_defvjp_is_refused_where_it_is_called() -> None:
    @ad.custom_vjp
    def bare(x):
        return x * 2

    def loss(x):
        return np.sum(bare(x))

    assert ad.script(loss)(X) == pytest.approx(2 * np.sum(X))
    with pytest.raises(ad.DifferentiationError, match="call its defvjp"):
        ad.grad(loss)(X)


def test_a_second_derivative_through_an_opaque_rule_is_refused() -> None:
    with pytest.raises(ad.DifferentiationError, match="scripted=True"):
        ad.hessian(loss_of_cube)(X)


def test_a_function_that_cannot_run_on_samples_asks_for_result_shape() -> None:
    @ad.custom_vjp
    def picky(x):
        if x[0] != 7.0:
            raise ValueError("only 7")
        return x

    def loss(x):
        return np.sum(picky(x))

    with pytest.raises(AutodiffError, match=r"result_shape=ad\.ShapeDtype"):
        ad.script(loss)(np.array([7.0, 1.0]))

    declared = ad.custom_vjp(picky.__wrapped__, result_shape=ad.ShapeDtype((2,), np.float64))

    def declared_loss(x):
        return np.sum(declared(x))

    assert ad.script(declared_loss)(np.array([7.0, 1.0])) == 8.0


# ---- scripted: fwd and bwd compiled, so higher derivatives go through them -------------------


@ad.custom_vjp(scripted=True)
def softplus(x):
    return np.log1p(np.exp(x))


def softplus_fwd(x):
    return np.log1p(np.exp(x)), {"sigmoid": 1 / (1 + np.exp(-x))}


def softplus_bwd(residuals, g):
    return (g * residuals["sigmoid"],)


softplus.defvjp(softplus_fwd, softplus_bwd)


def softplus_loss(x):
    return np.sum(softplus(x) ** 2)


def test_scripted_first_and_second_derivatives() -> None:
    ad.gradcheck(softplus_loss, X)
    s, y = 1 / (1 + np.exp(-X)), np.log1p(np.exp(X))
    hessian = ad.hessian(softplus_loss)(X)
    np.testing.assert_allclose(hessian, np.diag(2 * (s * s + y * s * (1 - s))), rtol=1e-12)
    df = str(ad.grad(softplus_loss).gradient_for(X).df)
    assert "CustomVjpBwd" not in df  # inlined: bwd's own nodes


@ad.custom_vjp(scripted=True)
def scaled_identity(x):
    return x


scaled_identity.defvjp(lambda x: (x, None), lambda residuals, g: (3.0 * g,))


def test_scripted_second_derivatives_go_through_the_custom_rule() -> None:
    # d/dx sum(f(x)**2) = bwd(2 f(x)) = 6 x: the rule's, not the identity's 2 x; and its
    # derivative, through fwd and bwd, is 6 I
    def loss(x):
        return np.sum(scaled_identity(x) ** 2)

    np.testing.assert_allclose(ad.grad(loss)(X), 6 * X)
    np.testing.assert_allclose(ad.hessian(loss)(X), 6 * np.eye(3))


def test_scripted_in_a_loop_and_twice() -> None:
    def loss(x, n: int):
        total = 0.0
        for _ in range(n):
            total = total + np.sum(softplus(x * total + x))
        return total

    ad.gradcheck(loss, X, 3)
    ad.gradcheck(ad.grad(lambda x: loss(x, 3)), X)


def test_a_scripted_bwd_with_the_wrong_count_is_refused_while_compiling() -> None:
    @ad.custom_vjp(scripted=True)
    def pair(x, y):
        return x * y

    def pair_fwd(x, y):
        return x * y, (x, y)

    def pair_bwd(residuals, g):
        return (g * residuals[1],)

    pair.defvjp(pair_fwd, pair_bwd)

    def loss(x, y):
        return np.sum(pair(x, y))

    with pytest.raises(ad.DifferentiationError, match=r"pair_bwd.*a tuple of 2 cotangents"):
        ad.grad(loss)(X, X)


def test_against_jax_custom_vjp() -> None:
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy

    @jax.custom_vjp
    def jax_cube(x):
        return x**3

    jax_cube.defvjp(lambda x: (x**3, x), lambda x, g: (3 * x**2 * g,))
    expected = jax.grad(lambda x: jnp.sum(jnp.sin(jax_cube(x))))(X)
    np.testing.assert_allclose(ad.grad(loss_of_cube)(X), np.asarray(expected), rtol=1e-12)


# ---- a declared container result ----------------------------------------------------------

RESULT = {"y": ad.ShapeDtype((3,), np.float64), "total": ad.ShapeDtype((), np.float64)}


@ad.custom_vjp(result_shape=RESULT)
def doubled_and_total(x):
    return {"y": np.array([v * 2 for v in x.tolist()]), "total": np.float64(sum(x.tolist()))}


doubled_and_total.defvjp(
    lambda x: (doubled_and_total(x), None), lambda residuals, g: (2 * g["y"] + g["total"],)
)


def test_a_declared_dict_result_and_its_dict_cotangent() -> None:
    def loss(x):
        parts = doubled_and_total(x)
        return np.sum(parts["y"] ** 2) + 3.0 * parts["total"]

    def only_y(x):
        return np.sum(doubled_and_total(x)["y"] ** 2)

    assert ad.script(loss)(X) == pytest.approx(loss(X))
    np.testing.assert_allclose(ad.grad(loss)(X), 8 * X + 3)
    np.testing.assert_allclose(ad.grad(only_y)(X), 8 * X)  # "total" gets a zero cotangent


def test_a_custom_function_passed_to_a_helper() -> None:
    def layer(x, act=np.tanh):
        return act(x) + 1.0

    def loss(x):
        return np.sum(layer(x, cube) * layer(x))

    ad.gradcheck(loss, X)
    assert "prim::CustomVjpBwd" in str(ad.grad(loss).gradient_for(X).df)


def test_gradients_of_callers_called_from_scripted_code() -> None:
    gradient = ad.grad(loss_of_cube)

    def weighted(x):
        return np.sum(gradient(x) * x)

    assert ad.script(weighted)(X) == pytest.approx(np.sum(np.cos(X**3) * 3 * X**3))
    scripted_gradient = ad.grad(softplus_loss)

    def hvp(x, v):  # a Hessian-vector product through the scripted rule
        return np.sum(scripted_gradient(x) * v)

    v = np.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(ad.grad(hvp)(X, v), ad.hessian(softplus_loss)(X) @ v, rtol=1e-12)


@ad.custom_vjp(scripted=True)
def scripted_affine(p, x):
    return p["a"] * x + p["b"]


def scripted_affine_fwd(p, x):
    return p["a"] * x + p["b"], (p["a"], x)


def scripted_affine_bwd(residuals, g):
    a, x = residuals
    return {"b": np.sum(g), "a": g * x}, g * a  # keys in another order than the argument's


scripted_affine.defvjp(scripted_affine_fwd, scripted_affine_bwd)


def scripted_in_a_branch(a, b, x):
    if np.sum(x) > 0:
        y = scripted_affine({"a": a, "b": b}, x)
        y = np.sin(y)
    else:
        y = x * 2.0
    return np.sum(y**2)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_scripted_with_a_dict_argument_in_a_branch_twice(sign: float) -> None:
    x = sign * X
    ad.gradcheck(scripted_in_a_branch, A, B, x)
    ad.gradcheck(ad.grad(scripted_in_a_branch, argnums=(0, 2)), A, B, x)


@ad.custom_vjp
def _summed_scale(y, t):
    return y * np.sum(np.asarray(t))


def _summed_scale_fwd(y, t):
    return _summed_scale(y, t), (y, t)


def _summed_scale_bwd(residuals, g):
    _, t = residuals
    return g * np.sum(np.asarray(t)), None


_summed_scale.defvjp(_summed_scale_fwd, _summed_scale_bwd)


def _list_literal_in_a_loop(y0, n):
    total = 0.0
    for _ in range(n):
        total = total + np.sum(_summed_scale(y0, [0.0, 1.0, 2.0]))
    return total


def test_a_list_literal_argument_inside_a_loop_verifies(monkeypatch: pytest.MonkeyPatch) -> None:
    """The zero gradient made for the call's result read the replaced node, which the loop's
    reverse taped: the graph failed the verifier (found by the odeint helper)."""
    monkeypatch.setenv("AUTODIFF_VERIFY", "each")
    np.testing.assert_allclose(
        ad.grad(_list_literal_in_a_loop)(np.array([1.0, 2.0]), 3), [9.0, 9.0]
    )


@ad.custom_vjp(scripted=True)
def _scripted_summed_scale(y, t):
    return y * (t[0] + t[1] + t[2])


_scripted_summed_scale.defvjp(
    lambda y, t: (y * (t[0] + t[1] + t[2]), t[0] + t[1] + t[2]),
    lambda total, g: (g * total, None),
)


def _scripted_list_literal_in_a_loop(y0, n):
    total = 0.0
    for _ in range(n):
        total = total + np.sum(_scripted_summed_scale(y0, [0.0, 1.0, 2.0]))
    return total


def test_a_scripted_rule_given_a_list_literal_inside_a_loop_verifies(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AUTODIFF_VERIFY", "each")
    grad = ad.grad(_scripted_list_literal_in_a_loop)(np.array([1.0, 2.0]), 3)
    np.testing.assert_allclose(grad, [9.0, 9.0])


# ---- residuals that hold an argument the function then writes ---------------------------------


@ad.custom_vjp
def wave(x, w):
    return x * np.sin(w)


def wave_fwd(x, w):
    return wave(x, w), {"x": x, "w": w}  # the residuals hold the operands themselves


def wave_bwd(r, g):
    return g * np.sin(r["w"]), g * r["x"] * np.cos(r["w"])


wave.defvjp(wave_fwd, wave_bwd)


def wave_then_write(a):
    t = wave(a[:, 0], a[:, 0])
    a += 0.5  # after fwd kept views of ``a`` in its residuals
    return np.sum(t)


def test_residuals_holding_a_view_of_an_argument_written_afterwards() -> None:
    # Found by the fuzzer's custom_vjps idiom: bwd read the written values (a silent wrong
    # gradient); fwd now receives copies (Note [Arguments written to] in autodiff.lambda_lift).
    a = np.random.default_rng(0).uniform(-1, 1, (3, 4))
    x = a[:, 0].copy()
    written = a.copy()
    gradient = ad.grad(wave_then_write)(written)
    expected = np.zeros_like(a)
    expected[:, 0] = np.sin(x) + x * np.cos(x)
    np.testing.assert_allclose(gradient, expected, rtol=1e-12)
    np.testing.assert_array_equal(written, a + 0.5)  # the write still reaches the caller
