"""Derivatives of derivatives: ``grad(grad(f))``, `hessian`, `jacobian` and Hessian-vector
products written as a scripted call of what ``ad.grad`` returned, each against central finite
differences of the compiled gradient (itself checked against finite differences elsewhere)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import autodiff as ad
from autodiff.higher_order import gradient_graph
from ir.types import TENSOR

EPS = 1e-6
RTOL = 1e-6  # of max(|numeric|, 1)

A = np.array([[2.0, 0.5, -1.0], [0.3, 1.0, 0.2], [-0.4, 0.7, 3.0]])
B = np.array([[1.0, -2.0, 0.5], [0.25, 1.5, -1.0], [2.0, 0.1, 0.3]])
FEATURES = np.array([[0.5, -1.0, 2.0], [1.5, 0.3, -0.2], [-0.7, 0.8, 0.4], [0.1, 0.2, 0.3]])
LABELS = np.array([1.0, -1.0, -1.0, 1.0])


def tanh_sum(x):
    return np.sum(np.tanh(x))


def exp_sin(x):
    return np.sum(np.exp(x) * np.sin(x))


def polynomial(x):
    return np.sum(x**3 - 2.0 * x**2 + 0.5 * x)


def softplus(x):
    return np.sum(np.log1p(np.exp(x)))


def logistic_loss(w, features, labels):
    return np.mean(np.log1p(np.exp(-labels * (features @ w))))


def quadratic_form(x, a):
    return x @ a @ x


def euclidean_norm(x):
    return np.sqrt(np.sum(x * x))


def broadcast_products(x, b):
    return np.sum(np.reshape(x, (3, 1)) * x * b)


def reduction_with_axis(x):
    return np.sum(np.mean(np.exp(x), axis=0) ** 2) + np.sum(np.max(x * x, axis=1))


def indexing(x):
    return np.sum(x[0] * x[1:] ** 2) + np.sum(np.sin(x[::2]))


def transposed_product(x, b):
    return np.sum(np.tanh(x.T @ b))


def one_d_dot(x):
    return np.dot(np.sin(x), np.cos(x)) * np.sum(x)


def scans_and_traces(x):
    return np.sum(np.cumsum(x * x, axis=0) ** 2) + np.trace(np.reshape(x, (3, 1)) * x) ** 2


def joined(x):
    return np.sum(np.concatenate([x, np.sin(x)]) ** 3) + np.sum(np.stack([x, x * x], axis=1) ** 2)


def tiled(x):
    return np.sum(np.tile(np.sin(x), (2, 2)) ** 3)


def padded(x):
    reflected = np.pad(np.sin(x), (2, 1), "reflect")
    return np.sum(reflected**3) + np.sum(np.pad(x * x, 1, "constant", constant_values=0.5) ** 2)


def stacked(x):
    rows = np.vstack([np.sin(x), x * x])
    return np.sum(np.hstack([x[0], np.cos(x), x[1:] ** 2]) ** 3) + np.sum(np.exp(rows) * rows)


def products(x):
    return np.sum(np.prod(x, axis=0) ** 2) + np.prod(np.cos(x), keepdims=True)[0, 0]


def _points() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    return {"vector": rng.standard_normal(3), "matrix": rng.standard_normal((3, 3))}


# Each function, the point (by shape) to differentiate it at, and its other arguments.
CASES: list[tuple[Callable[..., Any], str, tuple[np.ndarray, ...]]] = [
    (tanh_sum, "vector", ()),
    (exp_sin, "vector", ()),
    (polynomial, "vector", ()),
    (softplus, "vector", ()),
    (logistic_loss, "vector", (FEATURES, LABELS)),
    (quadratic_form, "vector", (A,)),
    (euclidean_norm, "vector", ()),
    (broadcast_products, "vector", (B,)),
    (reduction_with_axis, "matrix", ()),
    (indexing, "vector", ()),
    (transposed_product, "matrix", (B,)),
    (one_d_dot, "vector", ()),
    (scans_and_traces, "vector", ()),
    (joined, "vector", ()),
    (tiled, "vector", ()),
    (padded, "vector", ()),
    (stacked, "vector", ()),
    (products, "matrix", ()),
]


def numeric_hessian(fn: Callable[..., Any], x: np.ndarray, *rest: np.ndarray) -> np.ndarray:
    """Central differences of the compiled gradient, one column per element of ``x``."""
    gradient = ad.grad(fn)
    columns = []
    for index in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[index] = EPS
        columns.append((gradient(x + step, *rest) - gradient(x - step, *rest)) / (2 * EPS))
    return np.stack(columns, axis=-1).reshape(x.shape + x.shape)


def assert_close(actual: Any, numeric: Any) -> None:
    actual, numeric = np.asarray(actual), np.asarray(numeric)
    assert actual.shape == numeric.shape
    error = np.abs(actual - numeric) / np.maximum(np.abs(numeric), 1)
    assert error.max() < RTOL, f"relative error {error.max():.2e}"


@pytest.mark.parametrize(("fn", "point", "rest"), CASES, ids=[case[0].__name__ for case in CASES])
def test_hessian_matches_finite_differences_of_the_gradient(
    fn: Callable[..., Any], point: str, rest: tuple[np.ndarray, ...]
) -> None:
    x = _points()[point]
    assert_close(ad.hessian(fn)(x, *rest), numeric_hessian(fn, x, *rest))


@pytest.mark.parametrize("fn", [tanh_sum, exp_sin, polynomial, softplus])
def test_grad_of_grad_at_a_scalar(fn: Callable[..., Any]) -> None:
    x = np.array(0.7)
    gradient = ad.grad(fn)
    numeric = (gradient(x + EPS) - gradient(x - EPS)) / (2 * EPS)
    assert_close(ad.grad(ad.grad(fn))(x), numeric)


def test_grad_of_grad_of_a_python_float() -> None:
    def cube(x: float) -> float:
        return x**3

    assert ad.grad(ad.grad(cube))(2.0) == pytest.approx(12.0)


def test_third_derivative() -> None:
    assert ad.grad(ad.grad(ad.grad(exp_sin)))(np.array(0.3)) == pytest.approx(
        2 * np.exp(0.3) * (np.cos(0.3) - np.sin(0.3))
    )


def test_hessian_of_a_quadratic_form_is_a_plus_its_transpose() -> None:
    x = np.array([0.3, -1.2, 2.0])
    np.testing.assert_allclose(ad.hessian(quadratic_form)(x, A), A + A.T, atol=1e-14)


def test_hessian_keeps_float32() -> None:
    x = np.array([0.3, -1.2, 2.0], dtype=np.float32)
    hessian = ad.hessian(tanh_sum)(x)
    assert hessian.dtype == np.float32
    np.testing.assert_allclose(hessian, np.diag(-2 * np.tanh(x) * (1 - np.tanh(x) ** 2)), 1e-5)


def test_hessian_blocks_for_several_arguments() -> None:
    def bilinear(x, y):
        return np.sum(x * y * y)

    x, y = np.array([1.0, 2.0]), np.array([3.0, -1.0])
    (xx, xy), (yx, yy) = ad.hessian(bilinear, argnums=(0, 1))(x, y)
    np.testing.assert_allclose(xx, np.zeros((2, 2)))
    np.testing.assert_allclose(xy, np.diag(2 * y))
    np.testing.assert_allclose(yx, np.diag(2 * y))
    np.testing.assert_allclose(yy, np.diag(2 * x))


def test_hessian_of_a_product_with_a_zero_divides_by_nothing() -> None:
    def product(x):
        return np.prod(x)

    x = np.array([0.0, 2.0, -1.5, 0.5])
    expected = np.zeros((4, 4))
    for i, j in np.ndindex(4, 4):
        if i != j:
            expected[i, j] = np.prod(np.delete(x, [i, j]))
    np.testing.assert_allclose(ad.hessian(product)(x), expected, atol=1e-15)


def test_jacobian_of_an_elementwise_map_is_diagonal() -> None:
    def squash(x):
        return np.tanh(x) * 2.0

    x = np.array([0.1, -0.5, 1.5, 0.0])
    np.testing.assert_allclose(ad.jacobian(squash)(x), np.diag(2 * (1 - np.tanh(x) ** 2)))


def test_jacobian_of_a_matrix_product() -> None:
    def product(w, x):
        return x @ w

    w, x = np.ones((3, 2)), FEATURES
    jacobian = ad.jacobian(product, argnums=(0, 1))(w, x)
    assert jacobian[0].shape == (4, 2, 3, 2)
    np.testing.assert_allclose(jacobian[0][1, 0, :, 0], x[1])
    np.testing.assert_allclose(jacobian[1][2, 1, 2], w[:, 1])


# A Hessian-vector product as the design writes it: a module-level gradient called from a
# scripted function, which is differentiated in turn.
quadratic_gradient = ad.grad(quadratic_form)
exp_sin_gradient = ad.grad(exp_sin)


def quadratic_hvp(x, a, v):
    return np.sum(quadratic_gradient(x, a) * v)


def exp_sin_hvp(x, v):
    return np.sum(exp_sin_gradient(x) * v)


def einsum_cubic(x, b):
    return np.einsum("i,ij,j->", np.sin(x), b, x * x) + np.sum(np.einsum("ij,j->i", b, x) ** 3)


einsum_cubic_gradient = ad.grad(einsum_cubic)


def einsum_hvp(x, b, v):
    return np.sum(einsum_cubic_gradient(x, b) * v)


def test_hessian_of_a_hessian_vector_product_through_einsum() -> None:
    """Third derivatives: the gradient of an einsum-based function's Hessian-vector product
    differentiates einsum's double backward."""
    x, v = _points()["vector"], np.array([1.0, 0.5, -2.0])
    assert_close(ad.hessian(einsum_hvp)(x, B, v), numeric_hessian(einsum_hvp, x, B, v))


def test_hessian_vector_product_of_a_quadratic_form() -> None:
    x, v = np.array([0.3, -1.2, 2.0]), np.array([1.0, 0.5, -2.0])
    np.testing.assert_allclose(ad.grad(quadratic_hvp)(x, A, v), (A + A.T) @ v, atol=1e-14)


def test_hessian_vector_product_equals_hessian_times_vector() -> None:
    x, v = _points()["vector"], np.array([1.0, 0.5, -2.0])
    assert_close(ad.grad(exp_sin_hvp)(x, v), numeric_hessian(exp_sin, x) @ v)


def test_scripted_function_calls_a_gradient() -> None:
    scripted = ad.script(exp_sin_hvp)
    x, v = _points()["vector"], np.array([1.0, 0.5, -2.0])
    np.testing.assert_allclose(scripted(x, v), np.sum(exp_sin_gradient(x) * v), rtol=1e-14)


def sine_product(x, y):
    return np.sum(np.sin(x) * y)


sine_value_and_grads = ad.value_and_grad(sine_product, argnums=(0, 1))


def value_plus_gradient_product(x, y):
    value, grads = sine_value_and_grads(x, y)
    dx, dy = grads
    return value + np.sum(dx * dy)


def test_scripted_function_calls_value_and_grad_with_several_argnums() -> None:
    x, y = np.array([0.3, 0.5]), np.array([1.0, 2.0])
    expected = np.sum(np.sin(x) * y) + np.sum(np.cos(x) * y * np.sin(x))
    assert ad.script(value_plus_gradient_product)(x, y) == pytest.approx(expected, rel=1e-14)
    numeric = np.zeros(2)
    for index, step in enumerate(np.eye(2) * EPS):
        ahead = value_plus_gradient_product(x + step, y)
        behind = value_plus_gradient_product(x - step, y)
        numeric[index] = (ahead - behind) / (2 * EPS)
    assert_close(ad.grad(value_plus_gradient_product)(x, y), numeric)


def test_gradient_graph_has_no_reverse_nodes() -> None:
    graph = gradient_graph(ad.script(reduction_with_axis).graph, [TENSOR], [0], several=False)
    kinds = {node.kind for node in graph.all_nodes()}
    assert not kinds & {"prim::Reverse", "prim::GradOf", "prim::AutogradAdd", "prim::AutogradZero"}


def test_gradient_with_aux_cannot_be_differentiated_again() -> None:
    def with_aux(x):
        return np.sum(x * x), x

    with pytest.raises(ad.DifferentiationError, match="has_aux"):
        ad.grad(ad.grad(with_aux, has_aux=True))(np.array(1.0))


# ---- derivatives of any order through control flow (issue 15, item 10) -------------------------
# A gradient of a gradient is built for the declared (shapeless) argument types, where a zero
# gradient cannot be materialised from its type: the third derivative through a loop kept
# prim::GradOf, prim::AutogradAdd and prim::AutogradZero and was refused (Note [Gradients of
# gradients at generic types] in `autodiff.higher_order`).


def sine_for_loop(x):
    s = x
    for _ in range(3):
        s = np.sin(s)
    return np.sum(s)


def sine_while_loop(x):
    s = x
    k = 0
    while k < 3:
        s = np.sin(s) * 1.5
        k = k + 1
    return np.sum(s)


def branches_in_a_loop(x):
    s = x
    u = x * 0.5
    for i in range(4):
        if i % 2 == 0:
            s = np.sin(s) * u
        else:
            u = u * np.cos(s)
    return np.sum(s * u)


def branch_on_the_argument(x):
    if x > 0.5:  # noqa: SIM108 (a statement: a prim::If with blocks)
        s = np.sin(x) * x
    else:
        s = np.exp(x)
    return np.sum(s)


def weights_and_a_list_in_a_loop(t, w):
    hs = []
    h = w * t
    for _ in range(3):
        h = np.tanh(h * w + t)
        hs.append(h)
    return np.sum(np.stack(hs)) + np.sum(hs[0] * hs[-1])


def _jax_sine_for_loop(jnp: Any, x: Any) -> Any:
    s = x
    for _ in range(3):
        s = jnp.sin(s)
    return jnp.sum(s)


def _jax_sine_while_loop(jnp: Any, x: Any) -> Any:
    s = x
    for _ in range(3):
        s = jnp.sin(s) * 1.5
    return jnp.sum(s)


def _jax_branches_in_a_loop(jnp: Any, x: Any) -> Any:
    s = x
    u = x * 0.5
    for i in range(4):
        if i % 2 == 0:
            s = jnp.sin(s) * u
        else:
            u = u * jnp.cos(s)
    return jnp.sum(s * u)


def _jax_branch_on_the_argument(jnp: Any, x: Any) -> Any:
    return jnp.where(x > 0.5, jnp.sin(x) * x, jnp.exp(x))


CONTROL_FLOW = [
    (sine_for_loop, _jax_sine_for_loop),
    (sine_while_loop, _jax_sine_while_loop),
    (branches_in_a_loop, _jax_branches_in_a_loop),
    (branch_on_the_argument, _jax_branch_on_the_argument),
]


def _nested_grads(fn: Callable[..., Any], orders: int) -> list[Callable[..., Any]]:
    grads = [fn]
    for _ in range(orders):
        grads.append(ad.grad(grads[-1]))
    return grads


@pytest.mark.parametrize(
    "fn", [case[0] for case in CONTROL_FLOW], ids=[case[0].__name__ for case in CONTROL_FLOW]
)
def test_third_and_fourth_derivatives_through_control_flow(fn: Callable[..., Any]) -> None:
    grads = _nested_grads(fn, 4)
    for order, point in ((3, 0.3), (4, 0.3), (3, 0.7), (4, 0.7)):
        eps = 1e-5
        numeric = (grads[order - 1](point + eps) - grads[order - 1](point - eps)) / (2 * eps)
        np.testing.assert_allclose(grads[order](point), numeric, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(("fn", "jax_fn"), CONTROL_FLOW, ids=[c[0].__name__ for c in CONTROL_FLOW])
def test_derivatives_through_control_flow_match_jax(
    fn: Callable[..., Any], jax_fn: Callable[..., Any]
) -> None:
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jax_grad: Callable[..., Any] = functools.partial(jax_fn, jax.numpy)
    grads = _nested_grads(fn, 4)
    for order in range(1, 5):
        jax_grad = jax.grad(jax_grad)
        np.testing.assert_allclose(grads[order](0.7), float(jax_grad(0.7)), rtol=1e-12)


def test_fourth_derivative_through_a_loop_with_weights_and_a_list() -> None:
    w = np.array([0.3, -0.5, 0.8])
    grads = _nested_grads(weights_and_a_list_in_a_loop, 4)
    eps = 1e-5
    for order in (3, 4):
        numeric = (grads[order - 1](0.4 + eps, w) - grads[order - 1](0.4 - eps, w)) / (2 * eps)
        np.testing.assert_allclose(grads[order](0.4, w), numeric, rtol=1e-6)
