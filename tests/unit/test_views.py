"""NumPy's view rules (Note [Views] in `ir.ops.views`, Note [Functionalisation]): every NumPy
function that returns a view of its argument aliases it exactly as NumPy's does once compiled —
a write to the base after the view is taken is seen through the view, a write through the view
reaches the base (and the caller's array), the gradient matches central differences, and the
result shares memory with the argument exactly when NumPy's does. A write into a read-only view
is refused where it is written, as NumPy raises."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import autodiff as ad
from ir.errors import IRError
from ir.ops.views import ufunc_result_strides
from tests.property.programs import load

X = np.arange(12.0).reshape(3, 4) / 7 + 0.3
SQUARE = np.arange(9.0).reshape(3, 3) / 7 + 0.3
VECTOR = np.arange(6.0) / 7 + 0.3
CUBE = np.arange(24.0).reshape(2, 3, 4) / 11 + 0.3

# Each spelling's view of ``x``, and the argument it is taken of.
VIEWS: dict[str, tuple[str, np.ndarray]] = {
    "flip": ("np.flip(x)", X),
    "flip_axis": ("np.flip(x, 0)", X),
    "flip_axes": ("np.flip(x, (0, 2))", CUBE),
    "fliplr": ("np.fliplr(x)", X),
    "flipud": ("np.flipud(x)", X),
    "rot90": ("np.rot90(x)", X),
    "rot90_k3": ("np.rot90(x, 3)", X),
    "rot90_axes": ("np.rot90(x, 2, axes=(1, 2))", CUBE),
    "rollaxis": ("np.rollaxis(x, 2)", CUBE),
    "moveaxis": ("np.moveaxis(x, 0, -1)", CUBE),
    "swapaxes": ("np.swapaxes(x, 0, 1)", X),
    "swapaxes_method": ("x.swapaxes(0, 2)", CUBE),
    "T": ("x.T", X),
    "transpose_axes": ("np.transpose(x, (1, 2, 0))", CUBE),
    "atleast_1d": ("np.atleast_1d(x)", VECTOR),
    "atleast_2d": ("np.atleast_2d(x)", VECTOR),
    "atleast_3d": ("np.atleast_3d(x)", X),
    "atleast_3d_of_1d": ("np.atleast_3d(x)", VECTOR),
    "split": ("np.split(x, 3)[1]", X),
    "array_split": ("np.array_split(x, 3, axis=1)[0]", X),
    "hsplit": ("np.hsplit(x, 2)[1]", X),
    "vsplit": ("np.vsplit(x, [1])[1]", X),
    "dsplit": ("np.dsplit(x, 2)[1]", CUBE),
    "einsum_transpose": ("np.einsum('ij->ji', x)", X),
    "einsum_implicit": ("np.einsum('ji', x)", X),
    "einsum_same": ("np.einsum('ij', x)", X),
    "einsum_diagonal": ("np.einsum('ii->i', x)", SQUARE),
    "real_of_real": ("np.real(x)", X),
    "reshape_of_reversed": ("x[::-1].reshape(-1)", VECTOR),
    "reshape_of_strided": ("x[:, ::2].reshape(-1)", X),
    "reshape_of_columns": ("x[:, 1:3].reshape(3, 2, 1)", X),
    "reshape_of_transposed_row": ("x.T[1].reshape(3, 1)", X),
    "ravel": ("x.ravel()", X),
    "ravel_of_rows": ("np.ravel(x[1:])", X),
    "squeeze": ("np.squeeze(x[:, None])", X),
    "expand_dims": ("np.expand_dims(x, 1)", X),
    "slice": ("x[1:, ::2]", X),
    # Views of views: each write is scattered back through the whole chain.
    "split_of_flipped_transpose": ("np.split(np.flip(x).T, 2)[1]", X),
    "einsum_of_moved_then_sliced": ("np.einsum('ij->ji', np.moveaxis(x, 0, 1))[::2]", X),
    "atleast_3d_of_fliplr_then_selected": ("np.atleast_3d(np.fliplr(x))[:, 1]", X),
    "rollaxis_of_expanded_then_sliced": ("np.rollaxis(np.expand_dims(x, 0), 2)[1:3]", X),
}

# Spellings NumPy makes a copy for, which must stay copies.
COPIES: dict[str, tuple[str, np.ndarray]] = {
    "reshape_of_transpose": ("x.T.reshape(-1)", X),
    "reshape_of_strided_rows": ("x[::2, 1:].reshape(-1)", X),
    "ravel_of_strided": ("x[:, ::2].ravel()", X),
    "ravel_of_transpose": ("np.ravel(x.T)", X),
    "flatten": ("x.flatten()", X),
    "einsum_sum": ("np.einsum('ij->i', x)", X),
    "einsum_trace": ("np.einsum('ii', x)", SQUARE),
    "diag_of_vector": ("np.diag(x)", VECTOR),
    "reshape_of_rotated_rows": ("np.rot90(x)[1:].reshape(-1)", X),
    "ravel_of_a_piece_of_flipud": ("np.array_split(np.flipud(x), 2, axis=1)[0].ravel()", X),
}


def _source(expression: str) -> str:
    return f"""import numpy as np


def write_after(x):
    v = {expression}
    x[0] += 5.0
    return v * 1.0, x * 1.0


def write_through(x):
    v = {expression}
    v += 3.0
    return v * 1.0, x * 1.0


def write_through_then_read(x):
    v = {expression}
    v *= 2.0
    x += 1.0
    return np.sin(v), x


def view(x):
    return {expression}


def write_then_return(x):
    x[0] += 5.0
    return {expression}
"""


CASES = {**VIEWS, **COPIES}
MODULES = {
    name: load(_source(expression), f"<views-{name}>") for name, (expression, _) in CASES.items()
}


def _run_both(
    fn: Callable[..., Any], argument: np.ndarray
) -> tuple[Any, Any, np.ndarray, np.ndarray]:
    plain_argument, compiled_argument = argument.copy(), argument.copy()
    expected = fn(plain_argument)
    actual = ad.script(fn)(compiled_argument)
    return actual, expected, compiled_argument, plain_argument


def _assert_close(actual: Any, expected: Any) -> None:
    if isinstance(expected, tuple):
        for a, e in zip(actual, expected, strict=True):
            _assert_close(a, e)
    else:
        np.testing.assert_allclose(actual, expected, rtol=1e-12)
        assert np.shape(actual) == np.shape(expected)


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("program", ["write_after", "write_through", "write_through_then_read"])
def test_writes_alias_as_in_numpy(name: str, program: str) -> None:
    """(a) a write to the base is seen through the view; (b) a write through it reaches the
    base and the caller's array, exactly as NumPy's (a copy is left alone)."""
    fn = getattr(MODULES[name], program)
    actual, expected, mutated, reference = _run_both(fn, CASES[name][1])
    _assert_close(actual, expected)
    np.testing.assert_array_equal(mutated, reference)


def _central_differences(
    fn: Callable[..., Any], x: np.ndarray, cotangent: tuple[Any, ...]
) -> np.ndarray:
    def loss(point: np.ndarray) -> float:
        outputs = fn(point.copy())  # each point on a fresh copy: the function writes it
        return sum(float(np.sum(o * c)) for o, c in zip(outputs, cotangent, strict=True))

    gradient = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[index] = 1e-6
        gradient[index] = (loss(x + step) - loss(x - step)) / 2e-6
    return gradient


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("program", ["write_after", "write_through", "write_through_then_read"])
def test_gradients_through_views_match_central_differences(name: str, program: str) -> None:
    """(c) the gradient w.r.t. the values passed in, through the view and the writes."""
    fn = getattr(MODULES[name], program)
    argument = CASES[name][1]
    outputs, vjp_fn = ad.vjp(ad.script(fn), argument.copy())
    rng = np.random.default_rng(3)
    cotangent = tuple(rng.standard_normal(np.shape(o)) for o in outputs)
    (gradient,) = vjp_fn(cotangent)
    expected = _central_differences(fn, argument, cotangent)
    np.testing.assert_allclose(gradient, expected, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", list(CASES))
def test_returned_view_shares_memory_as_in_numpy(name: str) -> None:
    """(d) the result shares memory with the argument exactly when NumPy's does."""
    actual, expected, compiled_argument, plain_argument = _run_both(
        MODULES[name].view, CASES[name][1]
    )
    _assert_close(actual, expected)
    assert np.shares_memory(actual, compiled_argument) == np.shares_memory(expected, plain_argument)


@pytest.mark.parametrize("executor", ["codegen", "interpreter"])
@pytest.mark.parametrize("name", list(CASES))
def test_view_returned_after_a_write_shares_memory_as_in_numpy(
    name: str, executor: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A view of an argument returned after a write to the argument is NumPy's view of the
    argument (Note [Returned arguments]): it shares memory exactly when NumPy's does, and the
    caller's write into it changes the argument exactly when NumPy's does."""
    monkeypatch.setenv("AUTODIFF_EXECUTOR", executor)
    actual, expected, compiled_argument, plain_argument = _run_both(
        MODULES[name].write_then_return, CASES[name][1]
    )
    _assert_close(actual, expected)
    np.testing.assert_array_equal(compiled_argument, plain_argument)
    assert np.shares_memory(actual, compiled_argument) == np.shares_memory(expected, plain_argument)
    assert actual.flags.writeable == expected.flags.writeable
    if expected.flags.writeable:
        expected[...] += 100.0
        actual[...] += 100.0
        np.testing.assert_array_equal(compiled_argument, plain_argument)


@pytest.mark.parametrize("name", list(VIEWS))
def test_gradient_of_a_view_returned_after_a_write(name: str) -> None:
    """Returning the argument's own memory leaves the gradient w.r.t. the values passed in."""
    fn = MODULES[name].write_then_return
    argument = CASES[name][1]
    outputs, vjp_fn = ad.vjp(ad.script(fn), argument.copy())
    cotangent = np.random.default_rng(5).standard_normal(np.shape(outputs))
    (gradient,) = vjp_fn(cotangent)
    expected = _central_differences(lambda x: (fn(x),), argument, (cotangent,))
    np.testing.assert_allclose(gradient, expected, rtol=1e-6, atol=1e-7)


def test_the_table_says_what_numpy_does() -> None:
    """The spellings listed as views are views in NumPy, and the copies are copies."""
    for table, shares in ((VIEWS, True), (COPIES, False)):
        for name, (_, argument) in table.items():
            x = argument.copy()
            assert np.shares_memory(MODULES[name].view(x), x) == shares, name


# ---- complex parts ----------------------------------------------------------------------------

Z = np.array([1.0 + 2.0j, -0.5 + 0.25j, 3.0 - 1.0j])


def write_real_part(z):
    r = np.real(z)
    r[0] = 7.0
    r *= 2.0
    return z * 1.0


def write_imaginary_part(z):
    i = np.imag(z)
    i += 1.5
    return z * 1.0


def parts_after_write(z, w):
    r = np.real(z)
    i = np.imag(z)
    z[1] = w[0]
    return r * 1.0, i * 1.0


def real_of_complex(z):
    return np.real(z)


@pytest.mark.parametrize("fn", [write_real_part, write_imaginary_part])
def test_writes_through_complex_parts_reach_the_array(fn: Callable[..., Any]) -> None:
    actual, expected, mutated, reference = _run_both(fn, Z)
    np.testing.assert_array_equal(actual, expected)
    np.testing.assert_array_equal(mutated, reference)


def test_complex_parts_see_a_later_write() -> None:
    z, w = Z.copy(), Z[::-1].copy()
    expected = parts_after_write(z.copy(), w)
    actual = ad.script(parts_after_write)(z, w)
    _assert_close(actual, expected)


def test_real_part_of_a_complex_array_is_a_view() -> None:
    z = Z.copy()
    assert np.shares_memory(ad.script(real_of_complex)(z), z)


def _complex_central_differences(
    fn: Callable[..., Any], z: np.ndarray, cotangent: np.ndarray
) -> np.ndarray:
    """dL/dRe z - 1j dL/dIm z for L = Re sum(cotangent * f(z)) (Note [Complex gradients]),
    from central differences in the real and the imaginary directions."""

    def loss(point: np.ndarray) -> float:
        return float(np.real(np.sum(fn(point.copy()) * cotangent)))

    gradient = np.zeros_like(z)
    for index in np.ndindex(z.shape):
        for direction, weight in ((1.0, 1.0), (1.0j, -1.0j)):
            step = np.zeros_like(z)
            step[index] = 1e-6 * direction
            gradient[index] += weight * (loss(z + step) - loss(z - step)) / 2e-6
    return gradient


@pytest.mark.parametrize("fn", [write_real_part, write_imaginary_part])
def test_gradients_through_complex_parts(fn: Callable[..., Any]) -> None:
    """L = Re sum(c * f(z)) has the cotangent c for f(z) under the convention."""
    _, vjp_fn = ad.vjp(ad.script(fn), Z.copy())
    cotangent = np.array([0.5 - 1.0j, 2.0 + 0.5j, -1.0 + 0.0j])
    (gradient,) = vjp_fn(cotangent)
    np.testing.assert_allclose(gradient, _complex_central_differences(fn, Z, cotangent), atol=1e-7)


# ---- read-only views --------------------------------------------------------------------------


def write_into_diagonal(x):
    d = np.diagonal(x)
    d[0] = 1.0
    return x


def update_diag_of_matrix(x):
    d = np.diag(x)
    d += 1.0
    return x


def write_into_method_diagonal_of_transpose(x):
    d = x.T.diagonal()
    d[1] = 1.0
    return x


def write_into_broadcast(v):
    b = np.broadcast_to(v, (2, 3))
    b[0] = 1.0
    return b


def write_into_imaginary_part_of_real(x):
    i = np.imag(x)
    i[0] = 1.0
    return x


def diag_of_vector_is_writable(v):
    d = np.diag(v)
    d[0, 0] = 5.0
    return d, v


def read_only_views_see_writes(x, v):
    d = np.diagonal(x)
    b = np.broadcast_to(v, (2, 3))
    x[1, 1] = 9.0
    v[0] = -2.0
    return d * 1.0, b * 1.0


@pytest.mark.parametrize(
    ("fn", "argument", "line"),
    [
        (write_into_diagonal, SQUARE, "    d[0] = 1.0"),
        (update_diag_of_matrix, SQUARE, "    d += 1.0"),
        (write_into_method_diagonal_of_transpose, SQUARE, "    d[1] = 1.0"),
        (write_into_broadcast, VECTOR[:3], "    b[0] = 1.0"),
        (write_into_imaginary_part_of_real, VECTOR, "    i[0] = 1.0"),
    ],
)
def test_writes_into_read_only_views_are_refused_where_written(
    fn: Callable[..., Any], argument: np.ndarray, line: str
) -> None:
    with pytest.raises(ValueError, match="read-only"):
        fn(argument.copy())  # NumPy refuses it at run time
    with pytest.raises(IRError, match="assignment destination is read-only") as raised:
        ad.script(fn)(argument.copy())
    message = str(raised.value)
    assert f"test_views.py:{_line_of(fn, line)}:5" in message
    assert line.strip() in message


def _line_of(fn: Callable[..., Any], line: str) -> int:
    import inspect

    lines, first = inspect.getsourcelines(fn)
    return first + [text.rstrip("\n") for text in lines].index(line)


def test_writable_and_read_only_views_as_in_numpy() -> None:
    actual, expected, mutated, reference = _run_both(diag_of_vector_is_writable, VECTOR[:3])
    _assert_close(actual, expected)
    np.testing.assert_array_equal(mutated, reference)
    x, v = SQUARE.copy(), VECTOR[:3].copy()
    expected = read_only_views_see_writes(x.copy(), v.copy())
    _assert_close(ad.script(read_only_views_see_writes)(x, v), expected)


# ---- reshapes the compiler cannot decide ------------------------------------------------------


def reshape_in_loop(x, n: int):
    y = x
    for _ in range(n):
        y = np.concatenate([y, y])
    z = y + 0.0
    v = z[:, ::2].reshape(-1)
    v[0] = 1.0
    return z


def test_a_reshape_of_unknown_strides_refuses_a_write_through_it() -> None:
    """The loop makes ``y``'s shape unknown at compile time, so whether NumPy's reshape is a
    view or a copy is too: the write through it is refused where it is."""
    with pytest.raises(IRError, match="view or a copy") as raised:
        ad.script(reshape_in_loop)(X.copy(), 2)
    assert f"test_views.py:{_line_of(reshape_in_loop, '    v[0] = 1.0')}:5" in str(raised.value)


def reshape_of_a_transposed_product(x):
    y = x.T * 2.0  # NumPy's ufuncs keep the transpose's layout: y is F-contiguous
    v = y.reshape(-1)  # so this is a copy in NumPy
    v[0] = 100.0
    return y


def reshape_of_a_product(x):
    y = x * 2.0  # C-contiguous, as x is
    v = y.reshape(-1)  # a view
    v[0] = 100.0
    return y


def test_a_reshape_of_a_ufunc_of_a_transpose_is_the_copy_numpy_makes() -> None:
    # y's strides follow the transpose's (NumPy's order 'K': `ufunc_result_strides`), so the
    # reshape is known to copy and the write through it leaves y alone (it used to be refused).
    actual, expected, mutated, reference = _run_both(reshape_of_a_transposed_product, X)
    _assert_close(actual, expected)
    np.testing.assert_array_equal(mutated, reference)


def reshape_of_a_broadcast_sum(x, row):
    y = x + row  # two array operands: the strides are NumPy's choice, not known here
    v = y.T.reshape(-1)
    v[0] = 100.0
    return y


def test_a_reshape_of_an_array_of_unknown_layout_refuses_a_write_through_it() -> None:
    with pytest.raises(IRError, match="view or a copy") as raised:
        ad.script(reshape_of_a_broadcast_sum)(X.T.copy().T, X[0].copy())
    line = _line_of(reshape_of_a_broadcast_sum, "    v[0] = 100.0")
    assert f"test_views.py:{line}:5" in str(raised.value)


def test_a_reshape_of_an_array_made_of_contiguous_operands_is_a_view() -> None:
    actual, expected, mutated, reference = _run_both(reshape_of_a_product, X)
    _assert_close(actual, expected)
    np.testing.assert_array_equal(mutated, reference)


def write_through_real_attribute(z):
    r = z.real
    r[0] = 7.0
    z.imag[1:] = 2.0
    return z * 1.0, z.imag * 1.0


def real_attribute_of_real(x):
    return x.real


def test_real_and_imag_attributes_are_views() -> None:
    actual, expected, mutated, reference = _run_both(write_through_real_attribute, Z)
    _assert_close(actual, expected)
    np.testing.assert_array_equal(mutated, reference)
    x = X.copy()
    assert ad.script(real_attribute_of_real)(x) is not None
    assert np.shares_memory(ad.script(real_attribute_of_real)(x), x)


def write_into_a_piece_chosen_at_run_time(x, i: int):
    parts = np.split(x, 3)
    p = parts[i]
    p[0] = 100.0
    return x


def test_a_write_into_a_piece_chosen_at_run_time_is_refused_where_written() -> None:
    """Which rows of x the piece is depends on i: the scatter cannot be built statically."""
    with pytest.raises(IRError, match="known at compile time") as raised:
        ad.script(write_into_a_piece_chosen_at_run_time)(X.copy(), 1)
    line = _line_of(write_into_a_piece_chosen_at_run_time, "    p[0] = 100.0")
    assert f"test_views.py:{line}:5" in str(raised.value)


def write_through_flip_and_rotation(x):
    v = np.flip(x)
    v[0] = v[1] * v[2]
    w = np.rot90(x)
    w[-1] *= x[1, 1]
    return np.sum(np.sin(x) * x)


def test_hessian_through_writes_into_views() -> None:
    """A gradient differentiated again is built for arguments of unknown shape: the writes back
    through the views must not need the rank."""
    x = SQUARE.copy()
    hessian = ad.hessian(write_through_flip_and_rotation)(x.copy()).reshape(9, 9)
    gradient = ad.grad(write_through_flip_and_rotation)
    expected = np.zeros((9, 9))
    for index in range(9):
        step = np.zeros(9)
        step[index] = 1e-5
        step_up = gradient(x + step.reshape(3, 3))
        step_down = gradient(x - step.reshape(3, 3))
        expected[:, index] = ((step_up - step_down) / 2e-5).ravel()
    np.testing.assert_allclose(hessian, expected, rtol=1e-5, atol=1e-6)


def saved_flip_of_written_argument(x):
    v = np.flip(x)
    y = np.sum(np.sin(v) * v)
    x[0] = 0.0
    return y


def saved_piece_of_written_argument(x):
    v = np.split(x, 3)[1]
    y = np.sum(v**3)
    x[:] = 1.0
    return y


@pytest.mark.parametrize("fn", [saved_flip_of_written_argument, saved_piece_of_written_argument])
def test_gradient_reads_views_of_an_argument_as_passed(fn: Callable[..., Any]) -> None:
    """The backward pass reads the view as it was before the write to the argument (Note
    [Arguments written to]): it is copied because it is known to be a view."""
    gradient = ad.grad(fn)(X.copy())
    expected = _central_differences(lambda x: (fn(x),), X, (1.0,))
    np.testing.assert_allclose(gradient, expected, rtol=1e-6, atol=1e-7)


def test_a_ufunc_result_has_the_strides_numpy_gives_it() -> None:
    """`ufunc_result_strides` against NumPy on random layouts: transposed, Fortran-ordered,
    strided and reversed operands of ranks 1 to 4, some axes of length 1 (whose strides NumPy
    does not read: compared on the longer axes). Regressions 132 to 135."""
    rng = np.random.default_rng(0)
    checked = 0
    for _ in range(500):
        rank = int(rng.integers(1, 5))
        shape = tuple(int(rng.integers(1, 5)) for _ in range(rank))
        x = np.zeros(tuple(2 * d for d in shape))[tuple(slice(None, None, 2) for _ in shape)]
        if rng.random() < 0.5:
            x = np.ascontiguousarray(x)
        if rng.random() < 0.3:
            x = np.asfortranarray(x)
        x = np.transpose(x, rng.permutation(rank))
        x = x[tuple(slice(None, None, -1) if rng.random() < 0.3 else slice(None) for _ in shape)]
        predicted = ufunc_result_strides(x.strides, x.shape, x.itemsize)
        assert predicted is not None
        for result in (np.tanh(x), x * 1.5, np.add(x, np.float64(2.0))):
            longer = [axis for axis, d in enumerate(x.shape) if d > 1]
            assert [predicted[a] for a in longer] == [result.strides[a] for a in longer]
            checked += 1
    assert checked == 1500
    # Two longer axes with strides of one size (a broadcast operand): NumPy's choice, unknown.
    assert ufunc_result_strides((0, 8), (3, 4), 8) is None
