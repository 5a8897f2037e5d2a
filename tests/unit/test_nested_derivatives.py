"""Nested ``jacobian``/``hessian``/``grad``/``vjp`` compose as JAX's do (issue 15, item 3):
``jacobian(jacobian(f))`` is the (n, n, n) second derivative, not the first one again; the
Hessian of a vector function is (m, n, n). Each case against JAX (``jacrev``/``hessian`` with
x64) where it is installed, and against central differences of the level below."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import autodiff as ad

EPS = 1e-6
X = np.array([0.3, -0.5, 0.7])
Y = np.array([1.2, 0.4])


def sine_times_square(x):
    return np.sin(x) * np.sum(x**2)


def sine_cubed_sum(x):
    return np.sum(np.sin(x) ** 3)


def mixed(x, y):
    return np.sum(np.tanh(x)) * np.sum(y**2) + np.sum(x) * y[0]


def vector_of_two(x, y):
    return np.tanh(x) * np.sum(y**3)


def quartic(t):
    return t**4


def central_jacobian(fn: Callable[..., Any], x: np.ndarray) -> np.ndarray:
    """d fn / d x by central differences: shape fn(x).shape + x.shape."""
    columns = []
    for index in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[index] = EPS
        columns.append((np.asarray(fn(x + step)) - np.asarray(fn(x - step))) / (2 * EPS))
    out_shape = np.shape(fn(x))
    return np.moveaxis(np.stack(columns), 0, -1).reshape(out_shape + x.shape)


@pytest.fixture(scope="module")
def jax() -> Any:
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return jax


def test_jacobian_of_jacobian_is_the_second_derivative(jax: Any) -> None:
    nested = ad.jacobian(ad.jacobian(sine_times_square))(X)
    assert nested.shape == (3, 3, 3)
    jnp = jax.numpy
    expected = jax.jacrev(jax.jacrev(lambda x: jnp.sin(x) * jnp.sum(x**2)))(X)
    np.testing.assert_allclose(nested, expected, rtol=1e-12, atol=1e-14)
    first = ad.jacobian(sine_times_square)
    np.testing.assert_allclose(nested, central_jacobian(first, X), rtol=1e-6, atol=1e-8)


def test_hessian_of_a_vector_function(jax: Any) -> None:
    hessian = ad.hessian(sine_times_square)(X)
    assert hessian.shape == (3, 3, 3)
    jnp = jax.numpy
    expected = jax.hessian(lambda x: jnp.sin(x) * jnp.sum(x**2))(X)
    np.testing.assert_allclose(hessian, expected, rtol=1e-12, atol=1e-14)


def test_hessian_of_a_scalar_function_stays_square(jax: Any) -> None:
    jnp = jax.numpy
    expected = jax.hessian(lambda x: jnp.sum(jnp.sin(x) ** 3))(X)
    np.testing.assert_allclose(ad.hessian(sine_cubed_sum)(X), expected, rtol=1e-12)


def test_jacobian_of_grad(jax: Any) -> None:
    jnp = jax.numpy
    expected = jax.jacrev(jax.grad(lambda x: jnp.sum(jnp.sin(x) ** 3)))(X)
    np.testing.assert_allclose(ad.jacobian(ad.grad(sine_cubed_sum))(X), expected, rtol=1e-12)


def test_vjp_of_grad(jax: Any) -> None:
    jnp = jax.numpy
    cotangent = np.array([1.0, -2.0, 0.5])
    _, vjp_fn = ad.vjp(ad.grad(sine_cubed_sum), X)
    (dx,) = vjp_fn(cotangent)
    _, jax_vjp = jax.vjp(jax.grad(lambda x: jnp.sum(jnp.sin(x) ** 3)), X)
    np.testing.assert_allclose(dx, jax_vjp(cotangent)[0], rtol=1e-12)


def test_vjp_of_jacobian(jax: Any) -> None:
    jnp = jax.numpy
    cotangent = np.arange(9.0).reshape(3, 3)
    out, vjp_fn = ad.vjp(ad.jacobian(sine_times_square), X)
    assert out.shape == (3, 3)
    (dx,) = vjp_fn(cotangent)
    _, jax_vjp = jax.vjp(jax.jacrev(lambda x: jnp.sin(x) * jnp.sum(x**2)), X)
    np.testing.assert_allclose(dx, jax_vjp(cotangent)[0], rtol=1e-12)


def test_third_derivative_of_a_scalar_function() -> None:
    third = ad.grad(ad.grad(ad.grad(quartic)))
    assert third(1.5) == pytest.approx(24 * 1.5, rel=1e-12)
    third_by_jacobians = ad.jacobian(ad.jacobian(ad.jacobian(quartic)))
    assert float(third_by_jacobians(np.array(1.5))) == pytest.approx(36.0, rel=1e-12)


def test_jacobian_of_jacobian_with_argnums_tuples(jax: Any) -> None:
    jnp = jax.numpy
    inner = ad.jacobian(vector_of_two, argnums=1)  # (3, 2)
    nested = ad.jacobian(inner, argnums=(0, 1))(X, Y)
    assert [block.shape for block in nested] == [(3, 2, 3), (3, 2, 2)]

    def jax_vector_of_two(x, y):
        return jnp.tanh(x) * jnp.sum(y**3)

    expected = jax.jacrev(jax.jacrev(jax_vector_of_two, argnums=1), argnums=(0, 1))(X, Y)
    for block, want in zip(nested, expected, strict=True):
        np.testing.assert_allclose(block, want, rtol=1e-12, atol=1e-14)


def test_hessian_with_argnums_tuple_of_a_vector_function(jax: Any) -> None:
    jnp = jax.numpy

    def jax_vector_of_two(x, y):
        return jnp.tanh(x) * jnp.sum(y**3)

    blocks = ad.hessian(vector_of_two, argnums=(0, 1))(X, Y)
    expected = jax.hessian(jax_vector_of_two, argnums=(0, 1))(X, Y)
    for row, want_row in zip(blocks, expected, strict=True):
        for block, want in zip(row, want_row, strict=True):
            assert block.shape == want.shape
            np.testing.assert_allclose(block, want, rtol=1e-12, atol=1e-14)


def test_grad_of_grad_with_argnums_tuple(jax: Any) -> None:
    jnp = jax.numpy

    def jax_mixed(x, y):
        return jnp.sum(jnp.tanh(x)) * jnp.sum(y**2) + jnp.sum(x) * y[0]

    got = ad.jacobian(ad.grad(mixed, argnums=0), argnums=(0, 1))(X, Y)
    expected = jax.jacrev(jax.grad(jax_mixed, argnums=0), argnums=(0, 1))(X, Y)
    for block, want in zip(got, expected, strict=True):
        np.testing.assert_allclose(block, want, rtol=1e-12, atol=1e-14)


def test_nested_jacobian_against_central_differences() -> None:
    first = ad.jacobian(vector_of_two)
    second = ad.jacobian(first)(X, Y)
    np.testing.assert_allclose(
        second, central_jacobian(lambda x: first(x, Y), X), rtol=1e-6, atol=1e-8
    )


sine_jacobian = ad.jacobian(sine_times_square)


def sum_of_the_jacobian(x):
    return np.sum(sine_jacobian(x))


def test_scripted_code_calling_a_jacobian_is_refused_at_the_call() -> None:
    with pytest.raises(ad.DifferentiationError, match="needs the shape") as raised:
        ad.grad(sum_of_the_jacobian)(X)
    message = str(raised.value)
    assert "test_nested_derivatives.py:" in message
    assert "np.sum(sine_jacobian(x))" in message
    assert "^" in message


def sine_loop(x):
    s = x * 1.0
    for _ in range(2):
        s = np.sin(s) * x
    return s


def test_third_jacobian_through_a_loop() -> None:
    second = ad.jacobian(ad.jacobian(sine_loop))
    third = ad.jacobian(second)(Y)
    assert third.shape == (2, 2, 2, 2)
    np.testing.assert_allclose(third, central_jacobian(second, Y), rtol=1e-6, atol=1e-8)


def overwrites_its_argument(x):
    x[0] = 2.0 * x[1]
    return x * x


def test_nested_jacobian_of_a_function_that_writes_its_argument() -> None:
    first = ad.jacobian(overwrites_its_argument)
    second = ad.jacobian(first)(np.array([1.0, 2.0]))
    expected = central_jacobian(lambda z: first(z.copy()), np.array([1.0, 2.0]))
    np.testing.assert_allclose(second, expected, rtol=1e-6, atol=1e-8)


def scales_its_argument_by_its_sine(x):
    x *= np.sin(x)
    return x


def scales_a_row_by_another(a):
    a *= np.sin(a[1])
    return a


@pytest.mark.parametrize("fn", [scales_its_argument_by_its_sine, scales_a_row_by_another])
@pytest.mark.parametrize("executor", ["codegen", "interpreter"])
def test_every_row_of_a_jacobian_reads_the_argument_as_passed(
    fn: Callable[..., Any], executor: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The Jacobian graph inlines f's vjp once per row; each copy wrote the argument back, so
    # every row after the first read the written argument (found by the fuzzer's nested check).
    monkeypatch.setenv("AUTODIFF_EXECUTOR", executor)
    x = np.array([[0.3, -0.5], [0.7, 1.1]])
    first = ad.jacobian(fn)
    second = ad.jacobian(first)(x.copy())
    expected = central_jacobian(lambda z: first(z.copy()), x)
    np.testing.assert_allclose(second, expected, rtol=1e-6, atol=1e-8)
    passed = x.copy()
    first(passed)
    plain = x.copy()
    fn(plain)
    np.testing.assert_array_equal(passed, plain)


# ---- lists of (W, b) tuples built in the function (issue 15, items 3 and 7) -----------------


def mlp_by_index(w1, b1, w2, b2, x):
    params = [(w1, b1), (w2, b2)]
    h = x
    for i in range(len(params)):
        h = np.tanh(h @ params[i][0] + params[i][1])
    return np.sum(h**2)


def mlp_over_the_list(w1, b1, w2, b2, x):
    params = [(w1, b1), (w2, b2)]
    h = x
    for layer in params:
        h = np.tanh(h @ layer[0] + layer[1])
    return np.sum(h**2)


def layers_of_different_shapes(a):
    # The list's element type joins (Double(4, 3), Double(4)) and (Double(3, 4), Double(3)):
    # no shape is known for params[i][0], so its zero gradient cannot come from its type.
    params = [(a.T, a[1]), (a[:, 0:4], a[:, 2])]
    h = a[:, 0]
    for layer in params:
        h = np.tanh(layer[0] @ h + layer[1])
    return np.sum(h) * a[0]


RNG = np.random.default_rng(15)
MLP_ARGS = (
    RNG.normal(size=(3, 4)),
    RNG.normal(size=4),
    RNG.normal(size=(4, 2)),
    RNG.normal(size=2),
    RNG.normal(size=(5, 3)),
)


@pytest.mark.parametrize("fn", [mlp_by_index, mlp_over_the_list])
@pytest.mark.parametrize("argnums", [0, 1, 3, (0, 3)])
def test_hessian_of_an_mlp_whose_params_are_a_list_of_tuples(
    fn: Callable[..., Any], argnums: Any, jax: Any
) -> None:
    # The second differentiation unpacked the list gradient with zeros from aten::shape of
    # each element, a tuple (a ShapeError); then the parts of a list element were taken for
    # possible zero sentinels, and the gradient was refused as a run-time zero-or-not choice.
    jnp = jax.numpy

    def jax_mlp(w1, b1, w2, b2, x):
        h = x
        for w, b in [(w1, b1), (w2, b2)]:
            h = jnp.tanh(h @ w + b)
        return jnp.sum(h**2)

    got = ad.hessian(fn, argnums)(*MLP_ARGS)
    expected = jax.hessian(jax_mlp, argnums)(*MLP_ARGS)
    if isinstance(argnums, int):
        np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)
        return
    for row, want_row in zip(got, expected, strict=True):
        for block, want in zip(row, want_row, strict=True):
            np.testing.assert_allclose(block, want, rtol=1e-10, atol=1e-12)


def test_nested_jacobian_through_a_list_of_tuples_of_different_shapes() -> None:
    a = np.random.default_rng(3).uniform(-1, 1, (3, 4))
    first = ad.jacobian(layers_of_different_shapes)
    second = ad.jacobian(first)(a)
    assert second.shape == (4, 3, 4, 3, 4)
    np.testing.assert_allclose(second, central_jacobian(first, a), rtol=1e-6, atol=1e-8)


def test_third_derivative_through_a_list_of_tuples() -> None:
    x = MLP_ARGS[1]
    second = ad.hessian(mlp_over_the_list, 1)
    third = ad.jacobian(second, 1)(*MLP_ARGS)
    assert third.shape == (4, 4, 4)
    expected = central_jacobian(lambda b: second(MLP_ARGS[0], b, *MLP_ARGS[2:]), x)
    np.testing.assert_allclose(third, expected, rtol=1e-5, atol=1e-7)


# ---- Hessians of norms: np.linalg.norm's gradient in differentiable operators ---------------


def euclidean_norm(x):
    return np.linalg.norm(x)


def cubic_norm(x):
    return np.linalg.norm(x, 3)


def largest_magnitude(x):
    return np.linalg.norm(x, np.inf)


def frobenius_times_norm(a):
    return np.linalg.norm(a, "fro") * np.linalg.norm(a)


def weighted_row_norms(a):
    return np.sum(np.linalg.norm(a, axis=1) ** 2 * np.arange(1.0, 4.0))


def column_four_norms_kept(a):
    return np.sum(np.linalg.norm(a, ord=4, axis=0, keepdims=True) * np.arange(1.0, 5.0))


NORMS = [
    (euclidean_norm, lambda jnp, x: jnp.linalg.norm(x), (4,)),
    (cubic_norm, lambda jnp, x: jnp.linalg.norm(x, 3), (4,)),
    (largest_magnitude, lambda jnp, x: jnp.linalg.norm(x, jnp.inf), (4,)),
    (frobenius_times_norm, lambda jnp, a: jnp.linalg.norm(a, "fro") * jnp.linalg.norm(a), (3, 4)),
    (
        weighted_row_norms,
        lambda jnp, a: jnp.sum(jnp.linalg.norm(a, axis=1) ** 2 * jnp.arange(1.0, 4.0)),
        (3, 4),
    ),
    (
        column_four_norms_kept,
        lambda jnp, a: jnp.sum(
            jnp.linalg.norm(a, ord=4, axis=0, keepdims=True) * jnp.arange(1.0, 5.0)
        ),
        (3, 4),
    ),
]


@pytest.mark.parametrize(("fn", "jax_fn", "shape"), NORMS, ids=[n[0].__name__ for n in NORMS])
def test_hessian_of_a_norm(fn: Callable[..., Any], jax_fn: Any, shape: Any, jax: Any) -> None:
    # The gradient called aten::_norm_backward, which has no derivative: refused.
    x = np.random.default_rng(4).normal(size=shape)
    hessian = ad.hessian(fn)(x)
    np.testing.assert_allclose(hessian, jax.hessian(lambda v: jax_fn(jax.numpy, v))(x), atol=1e-12)
    np.testing.assert_allclose(hessian, central_jacobian(ad.grad(fn), x), rtol=1e-6, atol=1e-8)


def test_hessian_of_a_norm_at_zero_is_zero() -> None:
    # The least-norm subgradient, 0, at 0 (docs/conventions.md), and its derivative 0 there.
    assert not np.any(ad.hessian(euclidean_norm)(np.zeros(3)))


def spectral_values(a):
    return np.sum(np.linalg.svd(a, compute_uv=False))


def matrix_one_norm(a):
    return np.linalg.norm(a, 1)


def test_hessian_of_singular_values(jax: Any) -> None:
    # The values' gradient once called a kernel with no derivative: refused.
    jnp = jax.numpy
    a = np.random.default_rng(5).normal(size=(3, 4))
    hessian = ad.hessian(spectral_values)(a)
    expected = jax.hessian(lambda v: jnp.sum(jnp.linalg.svd(v, compute_uv=False)))(a)
    np.testing.assert_allclose(hessian, expected, atol=1e-10)
    np.testing.assert_allclose(
        hessian, central_jacobian(ad.grad(spectral_values), a), rtol=1e-6, atol=1e-8
    )


def test_third_derivative_of_singular_values() -> None:
    a = np.random.default_rng(5).normal(size=(3, 4))
    hessian = ad.hessian(spectral_values)
    third = ad.jacobian(hessian)(a)
    assert third.shape == (3, 4, 3, 4, 3, 4)
    np.testing.assert_allclose(third, central_jacobian(hessian, a), rtol=1e-6, atol=1e-8)


MATRIX_NORMS = [
    # (ord, axis, shape): rows and columns in the order axis gives; a stack over other axes.
    *[(order, None, (3, 4)) for order in (1, -1, np.inf, -np.inf, 2, -2, "nuc")],
    *[(order, (1, 0), (3, 4)) for order in (1, -1, np.inf, -np.inf, 2, -2, "nuc")],
    (np.inf, (2, 0), (3, 2, 4)),
    (-1, (0, 2), (3, 2, 4)),
    (2, (2, 0), (3, 2, 4)),
    ("nuc", (-1, 1), (2, 3, 4)),
]


@pytest.mark.parametrize(("order", "axis", "shape"), MATRIX_NORMS, ids=str)
def test_hessian_of_a_matrix_norm(order: Any, axis: Any, shape: Any, jax: Any) -> None:
    # The gradient of the 1, inf, 2, -2 and nuclear matrix norms was one kernel,
    # aten::_norm_backward, with no derivative: the Hessian was refused (regression 126).
    x = np.random.default_rng(6).normal(size=shape)
    norms_shape = np.linalg.norm(x, order, axis).shape
    w = np.arange(1.0, 1.0 + np.prod(norms_shape)).reshape(norms_shape)

    def fn(a, w):
        return np.sum(np.linalg.norm(a, order, axis) * w)

    def jax_fn(a: Any) -> Any:
        return jax.numpy.sum(jax.numpy.linalg.norm(a, order, axis) * w)

    hessian = ad.hessian(fn)(x, w)
    np.testing.assert_allclose(hessian, jax.hessian(jax_fn)(x), rtol=1e-9, atol=1e-10)
    expected = central_jacobian(lambda a: ad.grad(fn)(a, w), x)
    np.testing.assert_allclose(hessian, expected, rtol=1e-5, atol=1e-7)


def test_hessian_of_a_matrix_norm_against_differences_without_jax() -> None:
    a = np.random.default_rng(5).normal(size=(3, 4))
    for fn in (matrix_one_norm, spectral_norm, nuclear_norm):
        hessian = ad.hessian(fn)(a)
        expected = central_jacobian(ad.grad(fn), a)
        np.testing.assert_allclose(hessian, expected, rtol=1e-5, atol=1e-7)


def spectral_norm(a):
    return np.linalg.norm(a, 2)


def nuclear_norm(a):
    return np.linalg.norm(a, "nuc")


def python_number_becomes_an_array(a):
    s = 0
    for _ in range(3):
        s /= 2.0 + np.cos(a[0, 2])
    return a[0:1] + np.tanh(s)


def test_jacobian_of_a_python_number_that_becomes_an_array_in_a_loop() -> None:
    # The Jacobian graph needs the result's shape from the arguments' shapes. ``s`` changes
    # from a Python int to a NumPy scalar in the loop: its type was unknown, and the second
    # Jacobian refused; an int joined with a 0-d array is a 0-d array (regression 127).
    a = np.random.default_rng(6).normal(size=(3, 4))
    first = ad.jacobian(python_number_becomes_an_array)
    assert first(a).shape == (1, 4, 3, 4)
    second = ad.jacobian(first)(a)
    np.testing.assert_allclose(second, central_jacobian(first, a), rtol=1e-6, atol=1e-8)


def rows_by_sign(a):
    r = a[0:1] if np.sum(a) > 0.0 else a[0:2]
    return np.tanh(r)


def test_jacobian_of_a_result_of_unknown_shape_is_refused_where_it_is_returned() -> None:
    # A result whose shape the data decides has no shape from the arguments' shapes: the
    # Jacobian of its Jacobian is refused at the return (the refusal had no location).
    a = np.random.default_rng(6).normal(size=(3, 4))
    assert ad.jacobian(rows_by_sign)(a).shape[2:] == (3, 4)
    with pytest.raises(ad.DifferentiationError, match="not known from the shapes") as raised:
        ad.jacobian(ad.jacobian(rows_by_sign))(a)
    message = str(raised.value)
    assert "test_nested_derivatives.py:" in message
    assert "return np.tanh(r)" in message


# ---- ad.hessian with a tuple of argnums composes (issue 15, item 3) ---------------------------


def scaled_tanh(x, y):
    return np.sum(np.tanh(x) * np.sum(y**3))


def test_vjp_of_a_hessian_with_argnums_tuple(jax: Any) -> None:
    # The blocks were a plain closure taking *args: vjp refused to compile it.
    jnp = jax.numpy
    blocks = ad.hessian(scaled_tanh, argnums=(0, 1))
    cotangents = tuple(
        tuple(
            np.random.default_rng(7 + 2 * i + j).normal(size=block.shape)
            for j, block in enumerate(row)
        )
        for i, row in enumerate(blocks(X, Y))
    )
    out, vjp_fn = ad.vjp(blocks, X, Y)
    got = vjp_fn(cotangents)

    def jax_scaled_tanh(x, y):
        return jnp.sum(jnp.tanh(x) * jnp.sum(y**3))

    jax_out, jax_vjp = jax.vjp(jax.hessian(jax_scaled_tanh, argnums=(0, 1)), X, Y)
    for row, want_row in zip(out, jax_out, strict=True):
        for block, want in zip(row, want_row, strict=True):
            np.testing.assert_allclose(block, want, rtol=1e-12, atol=1e-14)
    for grad, want in zip(got, jax_vjp(cotangents), strict=True):
        np.testing.assert_allclose(grad, want, rtol=1e-10, atol=1e-12)


def writes_then_scales(x, y):
    x *= 2.0
    return np.sum(np.sin(x) * y)


@pytest.mark.parametrize("through_vjp", [False, True])
def test_hessian_blocks_read_the_arguments_as_passed(through_vjp: bool) -> None:
    # Each block runs the function, which writes x: every block after the first read the
    # written x (a silent wrong Hessian), and x was written once per block.
    blocks = ad.hessian(writes_then_scales, argnums=(0, 1))
    y = np.array([0.5, -1.5, 2.0])
    x = X.copy()
    got = ad.vjp(blocks, x, y)[0] if through_vjp else blocks(x, y)
    for i in (0, 1):
        for j in (0, 1):
            alone = ad.jacobian(ad.jacobian(writes_then_scales, i), j)(X.copy(), y)
            np.testing.assert_allclose(got[i][j], alone, rtol=1e-12, atol=1e-14)
    np.testing.assert_array_equal(x, X * 2.0)


def eigenvalues_of_a_hermitian_matrix(a, z):
    return np.linalg.eigh(z + np.conj(z).T + np.diag(4.0 * a))[0]


def test_nested_jacobian_of_real_eigenvalues_of_a_complex_matrix() -> None:
    # The eigenvalues (and singular values) of a complex matrix were typed complex, so the
    # jacobian's graph took the real function for a complex one and refused it.
    rng = np.random.default_rng(8)
    a = np.array([1.0, 2.0, 3.5])
    z = rng.normal(size=(3, 3)) + 1j * rng.normal(size=(3, 3))
    first = ad.jacobian(eigenvalues_of_a_hermitian_matrix)
    second = ad.jacobian(first)(a, z)
    assert second.shape == (3, 3, 3)
    np.testing.assert_allclose(
        second, central_jacobian(lambda v: first(v, z), a), rtol=1e-6, atol=1e-8
    )


def magnitudes_of_singular_vectors(a, z):
    separated = a * z + 4.0 * np.eye(4, 3) * np.arange(1.0, 4.0)
    u, s, vh = np.linalg.svd(separated, full_matrices=False)
    rows = np.sum(np.abs(u) ** 2 * np.arange(1.0, 5.0)[:, None])
    return rows + np.sum(np.abs(vh) ** 3 * np.arange(1.0, 4.0)[:, None]) + np.sum(s**2)


@pytest.mark.parametrize("complex_matrix", [False, True])
def test_hessian_through_singular_vectors(complex_matrix: bool) -> None:
    # The gradient through U and V^H once called a kernel with no derivative
    # (the complex idiom's abs(U) read out, differentiated twice): refused.
    rng = np.random.default_rng(9)
    a = rng.normal(size=(4, 3)) * 0.3
    z = rng.normal(size=(4, 3)) + (1j * rng.normal(size=(4, 3)) if complex_matrix else 0.0)
    gradient = ad.grad(magnitudes_of_singular_vectors)
    hessian = ad.hessian(magnitudes_of_singular_vectors)(a, z)
    expected = central_jacobian(lambda v: gradient(v, z), a)
    np.testing.assert_allclose(hessian, expected, rtol=1e-6, atol=1e-7)


# ---- any order through loops and branches (issue 15, item 10) -------------------------------


def accumulates_in_a_branchy_while(x):
    s = 0.0
    k = 0
    while k < 3:
        if np.sum(x) > 0.0:  # noqa: SIM108 (the statement form, a prim::If, is what is tested)
            s = s + np.sum(np.sin(x) * x) * (k + 1)
        else:
            s = s - np.sum(x**3)
        k = k + 1
    return s


def branches_in_a_loop(x):
    h = x * 1.0
    for _ in range(2):
        if h[0] > 0.0:  # noqa: SIM108 (the statement form, a prim::If, is what is tested)
            h = np.tanh(h) * x
        else:
            h = h * h
    return h


@pytest.mark.parametrize("x", [np.array([0.3, -0.2, 0.5]), np.array([-0.3, -0.2, 0.1])])
def test_third_derivatives_through_branches_in_loops(x: np.ndarray) -> None:
    second = ad.hessian(accumulates_in_a_branchy_while)
    np.testing.assert_allclose(
        ad.jacobian(second)(x), central_jacobian(second, x), rtol=1e-6, atol=1e-8
    )
    second = ad.jacobian(ad.jacobian(branches_in_a_loop))
    np.testing.assert_allclose(
        ad.jacobian(second)(x), central_jacobian(second, x), rtol=1e-6, atol=1e-8
    )
