"""Arguments that are not C-contiguous (``a.T``, ``a[::2]``, ``np.asfortranarray(a)``, negative
strides): NumPy's reshape and ravel make a view or a copy by the argument's strides, so each
layout compiles its own decision (the signature key holds the strides, Note [Views] in
`ir.ops.views`). Values, the argument's mutation, memory shared with it and gradients are
NumPy's for every layout, also through ``ad.grad``, ``ad.jacobian`` and ``ad.hessian``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import autodiff as ad
from autodiff.specialize import signature_key, strided_inputs
from ir.errors import IRError
from tests.unit.test_views import CASES, MODULES


def fortran(a: np.ndarray) -> np.ndarray:
    return np.array(a, order="F")


def every_other_row(a: np.ndarray) -> np.ndarray:
    return np.repeat(a, 2, axis=0)[::2]


def reversed_axes(a: np.ndarray) -> np.ndarray:
    return np.flip(np.flip(a).copy())


LAYOUTS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "fortran": fortran,
    "every_other_row": every_other_row,
    "reversed": reversed_axes,
}
# The view spellings whose view-or-copy depends on the strides, and a few that do not.
STRIDED = [name for name, (expression, _) in CASES.items() if "reshape" in expression]
STRIDED += [name for name, (expression, _) in CASES.items() if "ravel" in expression]
STRIDED += ["T", "slice", "split", "squeeze", "flatten"]
PROGRAMS = ["write_after", "write_through", "write_through_then_read", "write_then_return"]


def test_the_layouts_are_not_c_contiguous() -> None:
    matrix = np.arange(12.0).reshape(3, 4)
    for name, layout in LAYOUTS.items():
        laid_out = layout(matrix)
        np.testing.assert_array_equal(laid_out, matrix)
        assert not laid_out.flags.c_contiguous, name


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("name", STRIDED)
@pytest.mark.parametrize("program", PROGRAMS)
def test_views_of_arguments_of_any_layout_alias_as_in_numpy(
    program: str, name: str, layout: str
) -> None:
    """A write to the argument is seen through a view of it (not through a copy), a write
    through the view reaches the caller's array exactly when NumPy's does, and a returned view
    shares memory with it exactly when NumPy's does."""
    fn = getattr(MODULES[name], program)
    plain_argument, compiled_argument = (LAYOUTS[layout](CASES[name][1]) for _ in range(2))
    expected = fn(plain_argument)
    actual = ad.script(fn)(compiled_argument)
    np.testing.assert_array_equal(compiled_argument, plain_argument)
    for result, reference in zip(_leaves(actual), _leaves(expected), strict=True):
        np.testing.assert_allclose(result, reference, rtol=1e-12)
        shared = np.shares_memory(reference, plain_argument)
        assert np.shares_memory(result, compiled_argument) == shared


def _leaves(result: Any) -> list[Any]:
    return list(result) if isinstance(result, tuple) else [result]


def _central_differences(
    fn: Callable[[np.ndarray], float], x: np.ndarray, layout: Callable[[np.ndarray], np.ndarray]
) -> np.ndarray:
    """Each point laid out as ``layout`` lays it out, since the function's writes depend on it."""
    gradient = np.zeros(x.shape)
    for index in np.ndindex(x.shape):
        step = np.zeros(x.shape)
        step[index] = 1e-6
        gradient[index] = (fn(layout(x + step)) - fn(layout(x - step))) / 2e-6
    return gradient


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("name", STRIDED)
def test_gradients_through_views_of_arguments_of_any_layout(name: str, layout: str) -> None:
    fn = MODULES[name].write_through_then_read
    argument = CASES[name][1]
    cotangent = tuple(
        np.random.default_rng(3).standard_normal(np.shape(o)) for o in fn(argument.copy())
    )

    def loss(x: np.ndarray) -> float:
        return sum(float(np.sum(o * c)) for o, c in zip(fn(x), cotangent, strict=True))

    _, vjp_fn = ad.vjp(ad.script(fn), LAYOUTS[layout](argument))
    (gradient,) = vjp_fn(cotangent)
    expected = _central_differences(loss, argument, LAYOUTS[layout])
    np.testing.assert_allclose(gradient, expected, rtol=1e-6, atol=1e-7)


def write_through_flattened(x):
    y = x.reshape(-1)  # a view of a C-contiguous x, a copy of x.T
    y[0] = 5.0 * y[1]
    return np.sum(np.sin(x) * x) + np.sum(y * y)


def write_through_flattened_transpose(x):
    y = x.T.reshape(-1)  # a view of an F-contiguous x, a copy of a C-contiguous one
    y[1] = y[0] * 3.0
    return np.sin(x) * x


def read_ravel_after_a_write(x):
    y = x.ravel()
    x[0, 1] = x[1, 1] * 2.0
    return np.sum(y * np.cos(y))


MATRIX = np.arange(12.0).reshape(3, 4) / 7 + 0.3


@pytest.mark.parametrize("layout", ["c", *LAYOUTS])
@pytest.mark.parametrize(
    "fn", [write_through_flattened, read_ravel_after_a_write], ids=lambda fn: fn.__name__
)
def test_grad_of_a_write_through_a_flattened_argument(
    fn: Callable[[np.ndarray], float], layout: str
) -> None:
    """One compiled function called with each layout in turn (the cache keeps them apart):
    the value, the argument's mutation and the gradient are NumPy's for each."""
    value_and_grad = ad.value_and_grad(fn)
    lay_out = LAYOUTS.get(layout, np.copy)
    for _ in range(2):  # the second call takes the cache's hit path
        argument, plain_argument = lay_out(MATRIX), lay_out(MATRIX)
        value, gradient = value_and_grad(argument)
        assert value == pytest.approx(fn(plain_argument), rel=1e-12)
        np.testing.assert_array_equal(argument, plain_argument)
        expected = _central_differences(fn, MATRIX, lay_out)
        np.testing.assert_allclose(gradient, expected, rtol=1e-6, atol=1e-6)


def sum_of_write_through_flattened_transpose(x):
    return np.sum(write_through_flattened_transpose(x))


@pytest.mark.parametrize("layout", ["c", "fortran"])
def test_jacobian_and_hessian_of_a_write_through_a_flattened_transpose(layout: str) -> None:
    """The graphs `ad.jacobian` and `ad.hessian` build are built for the layout too."""
    lay_out = LAYOUTS.get(layout, np.copy)
    fn = write_through_flattened_transpose
    jacobian = ad.jacobian(fn)(lay_out(MATRIX))
    expected = np.zeros((3, 4, 3, 4))
    for index in np.ndindex(3, 4):
        step = np.zeros((3, 4))
        step[index] = 1e-6
        expected[(..., *index)] = (fn(lay_out(MATRIX + step)) - fn(lay_out(MATRIX - step))) / 2e-6
    np.testing.assert_allclose(jacobian, expected, rtol=1e-6, atol=1e-6)
    gradient = ad.grad(sum_of_write_through_flattened_transpose)
    hessian = ad.hessian(sum_of_write_through_flattened_transpose)(lay_out(MATRIX))
    expected = np.zeros((3, 4, 3, 4))
    for index in np.ndindex(3, 4):
        step = np.zeros((3, 4))
        step[index] = 1e-5
        up, down = gradient(lay_out(MATRIX + step)), gradient(lay_out(MATRIX - step))
        expected[(..., *index)] = (up - down) / 2e-5
    np.testing.assert_allclose(hessian, expected, rtol=1e-5, atol=1e-5)


def test_signature_keys_tell_layouts_apart() -> None:
    keys = {signature_key([layout(MATRIX)]) for layout in LAYOUTS.values()}
    assert len(keys | {signature_key([MATRIX])}) == len(LAYOUTS) + 1
    assert strided_inputs([MATRIX, 1.0, fortran(MATRIX)]) == "2:8,24"
    assert strided_inputs([MATRIX[::-1]]) == "0:-32,8"


def reshape_of_a_transposed_product_transposed_back(x):
    y = x.T * 2.0  # NumPy's ufuncs keep the transpose's layout: y is F-contiguous
    v = y.T.reshape(-1)  # so y.T is C-contiguous and this is a view in NumPy
    v[0] = 100.0
    return y


def test_a_reshape_of_a_ufunc_result_follows_numpys_layout_of_it() -> None:
    """y = x.T * 2.0 is Fortran-ordered in NumPy (order 'K', `ufunc_result_strides`), so
    y.T.reshape(-1) is a view of it and the write through it reaches y, as in NumPy (this was
    refused while the compiler did not know y's strides)."""
    plain_argument, compiled_argument = MATRIX.copy(), MATRIX.copy()
    expected = reshape_of_a_transposed_product_transposed_back(plain_argument)
    actual = ad.script(reshape_of_a_transposed_product_transposed_back)(compiled_argument)
    np.testing.assert_array_equal(actual, expected)
    assert actual[0, 0] == 100.0
    for layout in LAYOUTS.values():  # the argument in every layout: decided from its strides
        plain_argument = layout(MATRIX.copy())
        expected = reshape_of_a_transposed_product_transposed_back(plain_argument)
        actual = ad.script(reshape_of_a_transposed_product_transposed_back)(
            layout(MATRIX.copy())
        )
        np.testing.assert_array_equal(actual, expected)


def reshape_of_reversed_product(x):
    y = x.T * 1.0  # F-contiguous in NumPy; its layout is not known at compile time
    w = y[::-1].reshape(-1)  # a copy in every order of y's axes
    y[0] = 0.5
    return np.sum(np.sin(w)) * y


def test_a_reshape_that_copies_in_every_layout_of_a_new_array_is_a_copy() -> None:
    """An array an operator made is contiguous in some order of its axes: a reshape that
    copies (or views) in each of them is decided (found by the fuzzer, views idiom)."""
    plain_argument, compiled_argument = MATRIX.copy(), MATRIX.copy()
    expected = reshape_of_reversed_product(plain_argument)
    np.testing.assert_allclose(
        ad.script(reshape_of_reversed_product)(compiled_argument), expected, rtol=1e-12
    )
    gradient = ad.grad(sum_of_reshape_of_reversed_product)(MATRIX.copy())
    expected_gradient = _central_differences(sum_of_reshape_of_reversed_product, MATRIX, np.copy)
    np.testing.assert_allclose(gradient, expected_gradient, rtol=1e-6, atol=1e-6)


def sum_of_reshape_of_reversed_product(x):
    return np.sum(reshape_of_reversed_product(x))


GRADIENT_OF_A_WRITE_THROUGH_FLATTENED = ad.grad(write_through_flattened)


def gradient_at_transpose(x):
    return GRADIENT_OF_A_WRITE_THROUGH_FLATTENED(x.T) * 1.0


def test_a_gradient_called_from_scripted_code_knows_no_layout() -> None:
    """A scripted caller may pass any view (here x.T, where NumPy's reshape copies): the
    gradient's graph is built for strides not known, and the write through the reshape is
    refused where it is, rather than taken for a view of a C-contiguous array."""
    with pytest.raises(IRError, match="view or a copy") as raised:
        ad.script(gradient_at_transpose)(MATRIX.copy())
    assert "test_argument_layouts.py:" in str(raised.value)
    assert "y[0] = 5.0 * y[1]" in str(raised.value)
