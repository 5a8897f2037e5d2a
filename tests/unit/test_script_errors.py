"""The error catalogue of ``ad.script``: code outside the subset is refused when it is scripted,
with the message, the line as counted in this file, the column and a caret; bad calls name the
argument; shape and kernel failures name the operation and the user's line. After every error
the next good call works."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import autodiff as ad
from frontend.parse import parse_source
from ir.errors import AutodiffError, InterpreterError, ShapeError
from ir.source import shown_path

THIS_FILE = Path(__file__).read_text(encoding="utf-8").splitlines()


def position_of(fn: Any, marker: str, within: str | None = None) -> tuple[int, int]:
    """The 1-based line and column, as counted in this file, of ``marker`` in ``fn``'s source:
    on the one line of ``fn`` containing ``within`` (``marker`` itself when None)."""
    lines, first = inspect.getsourcelines(fn)
    found = [i for i, text in enumerate(lines, start=first) if (within or marker) in text]
    assert len(found) == 1, f"{within or marker!r} must occur on exactly one line of {fn}"
    line = found[0]
    return line, THIS_FILE[line - 1].index(marker) + 1


def check_located(
    error: AutodiffError, message: str, fn: Any, marker: str, within: str | None = None
) -> None:
    """``error`` says ``message`` at ``marker``'s position in ``fn``, with the source line and
    a caret starting under the marker."""
    line, col = position_of(fn, marker, within)
    assert error.message == message
    assert error.source_range is not None
    assert Path(error.source_range.filename).name == "test_script_errors.py"
    assert (error.source_range.line, error.source_range.col) == (line, col)
    text = str(error)
    assert f"test_script_errors.py:{line}:{col}: error: {message}" in text
    lines = text.splitlines()
    if isinstance(error, ad.ScriptError):  # last, the section of docs/language.md on it
        assert lines.pop() == f"  see {error.link}"
    source, caret = lines[-2:]
    assert source == f"    {THIS_FILE[line - 1]}"
    assert caret.startswith(" " * (4 + col - 1) + "^")


def script_error(fn: Any) -> ad.ScriptError:
    with pytest.raises(ad.ScriptError) as info:
        ad.script(fn)
    return info.value


# ---- refused constructs ----------------------------------------------------------------------


def uses_lambda(x):
    return np.sum((lambda v: v * v)(x))


def uses_with(x):
    with open("f") as handle:
        return x + handle
    return x


def uses_try(x):
    try:
        y = x * 2
    except ValueError:
        y = x
    return y


def uses_yield(x):
    yield x * 2


def uses_global(x):
    global COUNTER
    return x


def uses_class(x):
    class Inner:
        pass

    return x


def uses_comprehension(x):
    return {v * 2 for v in x}


def uses_fstring(x, width: int):
    label = f"value {x:{width}}"
    return label


def formats_with_percent(x, n: int):
    label = "step %d" % n  # noqa: UP031 (the construct refused)
    return x * len(label)


def formats_in_place(x, n: int):
    label = "step %d"
    label %= n
    return x * len(label)


def uses_unknown_name(x):
    return x * undefined_thing  # noqa: F821


def uses_unknown_numpy_function(x):
    return np.frobnicate(x)


def calls_unknown_function(x):
    return frobnicate(x)  # noqa: F821


def calls_unknown_method(x):
    return x.frobnicate()


def uses_wrong_arity(x):
    return np.tanh(x, x, x)


def uses_wrong_keyword(x):
    return np.sum(x, axes=0)


def writes_into_tuple(x):
    t = (x, x)
    t[0] = 1
    return t


def writes_into_list(x):
    hs = [x]
    hs[0] += 1.0
    return hs


def assigns_attribute(x):
    x.shape = (3, 2)
    return x


def updates_attribute(x):
    x.real += 1.0
    return x


def annotates_subscript(x):
    x[0]: float = 1.0
    return x


def arrays_an_empty_list(x):
    return np.array([]) + x


def arrays_with_a_dtype(x):
    return np.array([x, x], dtype=np.float32)


def arrays_a_shape(x):
    return np.array([x, x.shape])


@pytest.mark.parametrize(
    ("fn", "message", "marker", "within"),
    [
        (
            writes_into_tuple,
            "cannot assign into an element of a tuple: lists and tuples are values here, build "
            "a new one",
            "t[0]",
            None,
        ),
        (
            writes_into_list,
            "cannot assign into an element of a list: lists and tuples are values here, build "
            "a new one",
            "hs[0]",
            None,
        ),
        (assigns_attribute, "assignment to an attribute is not supported", "x.shape", None),
        (updates_attribute, "assignment to an attribute is not supported", "x.real", None),
        (annotates_subscript, "an annotated assignment needs a name", "x[0]", None),
        (
            uses_lambda,
            "a lambda here would be a value: assign it to a name (f = lambda x: ...) and call it",
            "(lambda v",
            None,
        ),
        (uses_with, "'with' statements are not supported", "with", 'with open("f")'),
        (uses_try, "'try' statements are not supported", "try", "try:"),
        (uses_yield, "yield is not supported", "yield", "yield x * 2"),
        (uses_global, "'global' statements are not supported", "global", "global COUNTER"),
        (uses_class, "class definitions are not supported", "class", "class Inner"),
        (
            uses_comprehension,
            "set comprehensions are not supported",
            "{v * 2",
            "{v * 2 for v in x}",
        ),
        (
            uses_fstring,
            "a format spec computed in an f-string ({x:{width}}) is not supported: write the "
            "spec out",
            'f"value',
            None,
        ),
        (
            formats_with_percent,
            "string formatting with '%' is not supported",
            '"step %d" % n',
            None,
        ),
        (formats_in_place, "string formatting with '%' is not supported", "label %= n", None),
        (uses_unknown_name, "undefined name 'undefined_thing'", "undefined_thing", None),
        (
            uses_unknown_numpy_function,
            "module 'numpy' has no attribute 'frobnicate'",
            "np.frobnicate",
            None,
        ),
        (calls_unknown_function, "undefined name 'frobnicate'", "frobnicate", None),
        (calls_unknown_method, "ndarray.frobnicate is not supported", "x.frobnicate", None),
        (
            uses_wrong_arity,
            "numpy.tanh() takes 1 positional argument but 3 were given",
            "x, x)",
            "np.tanh(x, x, x)",
        ),
        (
            uses_wrong_keyword,
            "numpy.sum() got an unexpected keyword argument 'axes'",
            "axes",
            None,
        ),
        (
            arrays_an_empty_list,
            "np.array of an empty list is not supported: its shape and dtype are unknown",
            "[])",
            None,
        ),
        (
            arrays_with_a_dtype,
            "np.array() takes only the array-like here: no dtype or options",
            "dtype",
            "dtype=np.float32",
        ),
        (
            arrays_a_shape,
            "an item of an array literal must be an array or a number, not int[]",
            "x.shape",
            "np.array([x, x.shape])",
        ),
    ],
    ids=lambda item: item.__name__ if callable(item) else None,
)
def test_refused_construct(fn: Any, message: str, marker: str, within: str | None) -> None:
    check_located(script_error(fn), message, fn, marker, within)


def test_source_not_found() -> None:
    namespace: dict[str, Any] = {"np": np}
    exec("def made_by_exec(x):\n    return x\n", namespace)
    error = script_error(namespace["made_by_exec"])
    assert "made_by_exec" in error.message
    assert "source" in error.message


# ---- syntax errors ---------------------------------------------------------------------------
# A file Python cannot parse cannot be imported, so its functions never reach ad.script (see
# tests/unit/test_cli_errors.py for `autodiff dump` on such a file); what ad.script parses is
# the function's text, given here as a file's.


@pytest.mark.parametrize(
    ("body", "message", "col"),
    [
        ("    return x +", "invalid syntax: unexpected end of line", 15),
        ("    y = (1]", "invalid syntax: unexpected ']'", 11),
        ("    y = x y", "invalid syntax: unexpected name 'y'", 11),
        ("    y = $", "invalid character '$'", 9),
        ("    y = 'abc", "unterminated string literal", 9),
    ],
)
def test_syntax_error_names_file_line_column_and_caret(body: str, message: str, col: int) -> None:
    text = f"def f(x):\n    z = x\n{body}\n"
    with pytest.raises(ad.ScriptError) as info:
        parse_source(text, "model.py", first_line=7)
    error = info.value
    assert error.message == message
    assert error.source_range is not None
    assert (error.source_range.filename, error.source_range.line) == ("model.py", 9)
    assert error.source_range.col == col
    first, source, caret, link = str(error).splitlines()
    assert link == "  see docs/language.md"
    assert first == f"model.py:9:{col}: error: {message}"
    assert source == f"    {body}"
    assert caret == " " * (4 + col - 1) + "^"


# ---- bad call arguments ------------------------------------------------------------------------


def mean_of_product(x, y):
    return np.mean(x * y)


@pytest.fixture
def scripted() -> ad.ScriptFunction:
    return ad.script(mean_of_product)


def works(scripted: ad.ScriptFunction) -> None:
    assert scripted(np.ones(3), np.full(3, 2.0)) == 2.0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            (np.ones(3),),
            "mean_of_product() missing 1 required positional argument: 'y'",
        ),
        (
            (np.ones(3), np.ones(3), np.ones(3)),
            "mean_of_product() takes 2 positional arguments but 3 were given",
        ),
        (
            ([[1.0, 2.0], [3.0]], np.ones(3)),
            "argument 'x' of mean_of_product() is a ragged list",
        ),
    ],
)
def test_bad_arguments_are_named(
    scripted: ad.ScriptFunction, args: tuple[Any, ...], message: str
) -> None:
    with pytest.raises(ad.ArgumentError) as info:
        scripted(*args)
    assert info.value.message.startswith(message)
    works(scripted)


def test_a_none_argument_fails_where_python_does(scripted: ad.ScriptFunction) -> None:
    # None is an argument like any other (an empty pytree: `if bias is None` is decided
    # while compiling), so using it as an array fails where the plain function fails.
    with pytest.raises(ShapeError) as info:
        scripted(None, np.ones(3))
    assert info.value.message == "unsupported operand type(s) for *: 'NoneType' and 'float'"
    line, col = position_of(mean_of_product, "x * y")
    assert info.value.source_range is not None
    assert (info.value.source_range.line, info.value.source_range.col) == (line, col)
    works(scripted)


def test_a_string_argument_fails_where_it_is_used_as_an_array(
    scripted: ad.ScriptFunction,
) -> None:
    # A string is known while compiling (Note [Strings known while compiling] in
    # frontend.trees): the error is where it meets an array, and says which string it was.
    with pytest.raises(ShapeError) as info:
        scripted(np.ones(3), "text")
    assert info.value.message == "operand 1 must be an array, got a value of type str"
    assert "in mean_of_product(x: Double(3), y='text')" in str(info.value)
    works(scripted)


def test_unknown_keyword(scripted: ad.ScriptFunction) -> None:
    with pytest.raises(ad.ArgumentError) as info:
        scripted(np.ones(3), z=np.ones(3))
    assert info.value.message == "mean_of_product() got an unexpected keyword argument 'z'"
    works(scripted)


# ---- errors at specialisation and at run time ---------------------------------------------------


def mismatched(x, y):
    z = x + 1.0
    return np.concatenate([z, y], axis=1)


def test_shape_mismatch_names_the_operation_line_and_shapes() -> None:
    scripted = ad.script(mismatched)
    with pytest.raises(ShapeError) as info:
        scripted(np.ones((2, 3)), np.ones((4, 3)))
    error = info.value
    line, col = position_of(mismatched, "np.concatenate")
    assert error.source_range is not None
    assert (error.source_range.line, error.source_range.col) == (line, col)
    text = str(error)
    assert f"test_script_errors.py:{line}:{col}: error:" in text
    assert "concatenate" in text
    assert "(2, 3)" in text
    assert "(4, 3)" in text
    assert f"    {THIS_FILE[line - 1]}" in text
    assert not scripted.cache
    result = scripted(np.ones((2, 3)), np.ones((2, 1)))
    assert result.shape == (2, 4)


def pick_row(x, k: int):
    return x[k] * 2.0


def test_kernel_failure_names_the_operation_and_line() -> None:
    scripted = ad.script(pick_row)
    with pytest.raises(InterpreterError) as info:
        scripted(np.ones((2, 3)), 5)
    line, _ = position_of(pick_row, "x[k] * 2.0")
    error = info.value
    assert error.source_range is not None
    assert error.source_range.line == line
    text = str(error)
    assert "aten::select" in text
    assert f"test_script_errors.py:{line}:" in text
    np.testing.assert_array_equal(scripted(np.ones((2, 3)), 1), np.full(3, 2.0))


def broadcasts(x, y):
    z = x * 2.0
    return np.sum(z + y)


def test_broadcast_mismatch_reads_as_numpy_at_the_source_line() -> None:
    scripted = ad.script(broadcasts)
    with pytest.raises(ShapeError) as info:
        scripted(np.ones(3), np.ones(4))
    error = info.value
    assert error.message == "operands could not be broadcast together with shapes (3,) (4,)"
    line, col = position_of(broadcasts, "z + y")
    assert error.source_range is not None
    assert (error.source_range.line, error.source_range.col) == (line, col)
    text = str(error)
    where = f"{shown_path(error.source_range.filename)}:{line}:{col}"
    assert text.startswith(f"{where}: error: {error.message}")
    source, caret = text.splitlines()[-2:]
    assert source == f"    {THIS_FILE[line - 1]}"
    assert caret == " " * (4 + col - 1) + "^" * len("z + y")
    assert scripted(np.ones(3), np.ones(3)) == 9.0


# ---- what grad refuses ---------------------------------------------------------------------------


def scaled_power(x, n: int):
    return np.sum(x**n)


def doubled(x):
    return x * 2.0


@pytest.mark.parametrize(
    ("make", "args", "message", "located_at"),
    [
        (
            lambda: ad.grad(scaled_power, argnums=1),
            (np.ones(3), 2),
            "cannot differentiate scaled_power() with respect to argument 'n' of type int: "
            "only floating-point arrays and Python floats have gradients",
            None,
        ),
        (
            lambda: ad.grad(scaled_power),
            (np.arange(3), 2),
            "cannot differentiate scaled_power() with respect to argument 'x' of type Long(3): "
            "only floating-point arrays and Python floats have gradients",
            None,
        ),
        (
            lambda: ad.grad(doubled),
            (np.ones((2, 3)),),
            "grad requires doubled() to return a scalar (a 0-d or one-element array), but it "
            "returned shape (2, 3); use ad.vjp for non-scalar outputs",
            (doubled, "x * 2.0"),  # the value returned
        ),
    ],
    ids=["int-argument", "integer-array", "non-scalar-output"],
)
def test_grad_refusals_name_the_argument_or_the_output_shape(
    make: Any, args: tuple[Any, ...], message: str, located_at: tuple[Any, str] | None
) -> None:
    with pytest.raises(ad.DifferentiationError) as info:
        make()(*args)
    if located_at is not None:
        check_located(info.value, message, *located_at)
    else:
        assert info.value.message == message
        assert str(info.value) == f"error: {message}"


# ---- no state is lost after an error ------------------------------------------------------------
# Each error at call time, then a good call on the same scripted function or gradient: it works,
# and the cache holds the good call's compiled code only (a failed specialisation is not kept).

GOOD = (np.ones((2, 3)), np.full((2, 3), 2.0))

BAD_CALLS: list[tuple[str, tuple[Any, ...], dict[str, Any], type[Exception]]] = [
    ("too-few", (np.ones(3),), {}, ad.ArgumentError),
    ("too-many", (np.ones(3),) * 3, {}, ad.ArgumentError),
    ("unknown-keyword", (np.ones(3),), {"z": np.ones(3)}, ad.ArgumentError),
    ("string", (np.ones(3), "text"), {}, ShapeError),
    ("none", (None, np.ones(3)), {}, ShapeError),
    ("ragged", ([[1.0, 2.0], [3.0]], np.ones(3)), {}, ad.ArgumentError),
    ("shape-mismatch", (np.ones(3), np.ones(4)), {}, ShapeError),
]


@pytest.mark.parametrize(
    ("args", "kwargs", "kind"),
    [case[1:] for case in BAD_CALLS],
    ids=[case[0] for case in BAD_CALLS],
)
def test_a_scripted_function_works_after_an_error(
    args: tuple[Any, ...], kwargs: dict[str, Any], kind: type[Exception]
) -> None:
    scripted = ad.script(mean_of_product)
    with pytest.raises(kind):
        scripted(*args, **kwargs)
    assert not scripted.cache
    assert scripted(*GOOD) == 2.0
    assert len(scripted.cache) == 1
    with pytest.raises(kind):
        scripted(*args, **kwargs)
    assert len(scripted.cache) == 1
    assert scripted(*GOOD) == 2.0


@pytest.mark.parametrize(
    ("args", "kwargs", "kind"),
    [case[1:] for case in BAD_CALLS],
    ids=[case[0] for case in BAD_CALLS],
)
def test_a_gradient_works_after_an_error(
    args: tuple[Any, ...], kwargs: dict[str, Any], kind: type[Exception]
) -> None:
    gradient = ad.grad(mean_of_product)
    with pytest.raises(kind):
        gradient(*args, **kwargs)
    assert not gradient.cache
    np.testing.assert_allclose(gradient(*GOOD), GOOD[1] / 6)
    assert len(gradient.cache) == 1
    with pytest.raises(kind):
        gradient(*args, **kwargs)
    assert len(gradient.cache) == 1
    np.testing.assert_allclose(gradient(*GOOD), GOOD[1] / 6)


def test_a_gradient_works_after_refusing_an_integer_argument() -> None:
    gradient = ad.grad(scaled_power, argnums=(0, 1))
    with pytest.raises(ad.DifferentiationError):
        gradient(np.ones(3), 2)
    assert not gradient.cache
    with pytest.raises(ad.DifferentiationError):
        ad.grad(scaled_power)(np.arange(3), 2)
    first = ad.grad(scaled_power)
    np.testing.assert_allclose(first(np.full(3, 2.0), 2), np.full(3, 4.0))


def test_a_gradient_works_after_a_non_scalar_output() -> None:
    gradient = ad.grad(doubled)
    with pytest.raises(ad.DifferentiationError):
        gradient(np.ones(3))
    # What compiled for shape (3,) is a correct gradient; the refusal is of its output.
    assert gradient(np.ones(1)) == 2.0
    np.testing.assert_allclose(gradient(np.float64(3.0)), 2.0)


def test_a_scripted_function_works_after_a_kernel_failure() -> None:
    scripted = ad.script(pick_row)
    with pytest.raises(InterpreterError):
        scripted(np.ones((2, 3)), 5)
    np.testing.assert_array_equal(scripted(np.ones((2, 3)), 1), np.full(3, 2.0))
    gradient = ad.grad(pick_row_sum)
    with pytest.raises(InterpreterError):
        gradient(np.ones((2, 3)), 5)
    expected = np.zeros((2, 3))
    expected[1] = 2.0
    np.testing.assert_array_equal(gradient(np.ones((2, 3)), 1), expected)


def pick_row_sum(x, k: int):
    return np.sum(x[k] * 2.0)


def test_scripting_again_after_a_script_error_in_a_helper() -> None:
    # The helper's failure is not remembered for a caller whose call compiles.
    with pytest.raises(ad.ScriptError):
        ad.script(calls_refused_helper)
    np.testing.assert_array_equal(ad.script(calls_good_helper)(np.ones(2)), np.full(2, 3.0))
    with pytest.raises(ad.ScriptError):
        ad.script(calls_refused_helper)


def refused_helper(x):
    return {v for v in x}


def good_helper(x):
    return x * 3.0


def calls_refused_helper(x):
    return refused_helper(x) + good_helper(x)


def calls_good_helper(x):
    return good_helper(x)


@pytest.mark.parametrize("argnums", ["x", None, 0.5, (0, "y"), True])
def test_argnums_that_are_no_ints_are_refused(argnums: Any) -> None:
    with pytest.raises(ad.DifferentiationError) as info:
        ad.grad(doubled, argnums=argnums)(np.ones(()))
    assert info.value.message == f"argnums must be an int or a tuple of ints, got {argnums!r}"
