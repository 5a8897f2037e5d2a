"""Python ``complex`` numbers: arguments, literals, module constants and container items are 0-d
complex128 arrays (Note [Python complex numbers] in `ir.types`), differentiated under Note
[Complex gradients] and checked against central differences along the real and imaginary parts."""

from __future__ import annotations

from typing import Any

import numpy as np

import autodiff as ad
from ir.parser import parse_module
from ir.printer import print_module
from tests.unit.test_complex_gradients import check_complex_gradient, numeric_gradient

ROTATION = 0.6 - 0.8j


def energy(z):
    return np.real(z * np.conj(z)) + np.real(1j * z)


def test_python_complex_argument() -> None:
    grad = ad.grad(energy)(1.1 + 1.2j)
    assert type(grad) is complex
    # |z|^2 - Im z: dL/dx - 1j dL/dy = 2x - 1j (2y - 1)
    np.testing.assert_allclose(grad, 2.2 - 1.4j)
    check_complex_gradient(energy, 1.1 + 1.2j)


def test_scripted_function_of_a_python_complex() -> None:
    assert ad.script(energy)(2j) == 4.0 - 2.0


def literals(x, s):
    return np.sum(np.abs(np.exp(1j * x) * (2 - 0.5j) + s * x) ** 2)


def test_complex_literals_with_real_and_complex_arguments() -> None:
    x = np.random.default_rng(0).standard_normal(4)
    check_complex_gradient(literals, x, 0.3 + 0.7j, argnums=(0, 1))
    assert ad.grad(literals)(x, 0.3 + 0.7j).dtype == np.float64


def rotated(z):
    return np.sum(np.real(z * ROTATION) ** 3)


def test_module_constant() -> None:
    z = np.array([1.0 + 2.0j, -0.5j])
    check_complex_gradient(rotated, z)
    np.testing.assert_allclose(ad.script(rotated)(z), rotated(z))


def of_a_dict(p):
    return np.real(np.sum(p["a"] * p["b"])) + np.abs(p["a"]) ** 2


def test_complex_items_of_a_container() -> None:
    b = np.array([1.0 + 1.0j, 2.0])
    grads = ad.grad(of_a_dict)({"a": 1.0 + 2.0j, "b": b})
    # d/da: sum(b) + 2 conj(a); d/db: a (holomorphic: the plain transpose)
    np.testing.assert_allclose(grads["a"], np.sum(b) + 2 * np.conj(1.0 + 2.0j))
    assert isinstance(grads["a"], complex)
    np.testing.assert_allclose(grads["b"], [1.0 + 2.0j, 1.0 + 2.0j])


def test_list_of_complex_numbers_is_an_array() -> None:
    def total(zs):
        return np.sum(np.abs(zs) ** 2)

    np.testing.assert_allclose(ad.script(total)([1j, 2.0 + 0j]), 5.0)


def cubic(z):
    return np.real(z**3 * (1 + 1j)) + np.abs(z * 2j) ** 3


def test_second_order_of_a_python_complex() -> None:
    """``vjp(grad(f))`` at a Python complex, with a complex cotangent ``v``: the gradient of
    ``Re(v * grad(f)(z))``."""
    z, v = 0.7 - 0.4j, 0.3 + 1.1j
    gradient = ad.grad(cubic)
    _, vjp_fn = ad.vjp(gradient, z)
    (got,) = vjp_fn(v)

    def projected(z: Any) -> float:
        return float(np.real(v * gradient(complex(z))))

    np.testing.assert_allclose(got, numeric_gradient(projected, (z,), 0), rtol=1e-6)


def test_complex_constant_in_the_ir_reads_back() -> None:
    text = print_module([ad.script(literals).graph])
    assert "tensor<ComplexDouble()>[complex(0., 1.)]" in text
    assert print_module(parse_module(text).values()) == text


def magnitude_cubed(z):
    return np.sum(np.abs(z) ** 3)


def squares(z):
    return z * z


def test_gradcheck_moves_complex_arguments_along_both_parts() -> None:
    # Its cotangent is standard normal from default_rng(0): 3 |z| conj(z) scaled by it.
    scale = float(np.random.default_rng(0).standard_normal(()))
    for z in (0.6 - 0.8j, np.array([1.0 + 1.0j, -0.5j]), np.array([2.0 - 1.0j], np.complex64)):
        result = ad.gradcheck(magnitude_cubed, z)
        expected = scale * 3 * np.abs(z) * np.conj(z)
        assert result.ok
        np.testing.assert_allclose(result.numeric, np.asarray(expected)[result.index], rtol=1e-4)
        np.testing.assert_allclose(result.analytic, result.numeric, rtol=1e-4)
    # A complex result takes a complex cotangent.
    assert ad.gradcheck(squares, np.array([0.3 + 0.1j, -1.0 + 2.0j])).ok
