"""Operators that rearrange and pick elements (`ir.ops.arrangement`, `ir.ops.selection`): their
NumPy spellings, NumPy's errors at specialisation, operators that return several arrays
(``np.split``), and the gradients of the tuples those return."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import autodiff as ad
from autodiff.pipeline import compile_gradient
from ir.errors import ShapeError
from ir.ops import AUTOGRAD_ZERO, NOT_CONSTANT, OPS
from ir.types import INT, NONE, STR, TensorType, TupleType, Type

RNG = np.random.default_rng(0)
X = RNG.standard_normal((3, 4))
CUBE = RNG.standard_normal((2, 3, 4))


def rule(kind: str, *operands: tuple[Type, Any]) -> list[Type]:
    shape = OPS[kind].shape
    assert shape is not None
    return list(shape([t for t, _ in operands], [c for _, c in operands]))


def array(*shape: int) -> tuple[Type, Any]:
    return TensorType("float64", shape), NOT_CONSTANT


def const(ty: Type, value: Any) -> tuple[Type, Any]:
    return ty, value


PAIR = TupleType((INT, INT))


@pytest.mark.parametrize(
    ("kind", "operands", "message"),
    [
        ("aten::moveaxis", [array(2, 3), const(INT, 0), const(INT, 5)], r"axis 5 is out of bounds"),
        (
            "aten::moveaxis",
            [array(2, 3), const(PAIR, (0, 1)), const(INT, 0)],
            r"`source` and `destination` arguments must have the same number of elements",
        ),
        ("aten::swapaxes", [array(3), const(INT, 0), const(INT, 1)], r"axis 1 is out of bounds"),
        (
            "aten::rollaxis",
            [array(2, 3), const(INT, 0), const(INT, 5)],
            r"'start' arg requires -2 <= start < 3, but 5 was passed in",
        ),
        (
            "aten::hstack",
            [const(TupleType((TensorType("float64", (2, 3)), TensorType("float64", (3,)))), None)],
            r"must have same number of dimensions",
        ),
        ("aten::vstack", [const(TupleType(()), ())], r"need at least one array to concatenate"),
        (
            "aten::split",
            [array(5), const(INT, 2), const(INT, 0)],
            r"array split does not result in an equal division",
        ),
        (
            "aten::array_split",
            [array(5), const(INT, 0), const(INT, 0)],
            r"number sections must be larger than 0\.",
        ),
        ("aten::hsplit", [array(), const(INT, 2)], r"hsplit only works on arrays of 1 or more"),
        ("aten::vsplit", [array(4), const(INT, 2)], r"vsplit only works on arrays of 2 or more"),
        ("aten::dsplit", [array(4, 2), const(INT, 2)], r"dsplit only works on arrays of 3 or more"),
        (
            "aten::repeat",
            [array(3), const(PAIR, (1, 2)), const(INT, 0)],
            r"could not be broadcast together with shape \(3,\) \(2,\)",
        ),
        ("aten::tile", [array(3), const(INT, -1)], r"negative dimensions are not allowed"),
        (
            "aten::pad",
            [array(3), const(INT, 1), const(STR, "mean"), const(INT, 0)],
            r"np.pad mode 'mean' is not supported",
        ),
        (
            "aten::pad",
            [array(3), const(INT, -1), const(STR, "constant"), const(INT, 0)],
            r"index can't contain negative values",
        ),
        (
            "aten::pad",
            [array(0), const(INT, 1), const(STR, "edge"), const(INT, 0)],
            r"can't extend empty axis 0 using modes other than 'constant' or 'empty'",
        ),
        (
            "aten::pad",
            [array(3), const(INT, 1), const(STR, "constant"), array(2)],
            r"constant_values must be a number or a 0-d array here",
        ),
        ("aten::fliplr", [array(3)], r"Input must be >= 2-d\."),
        (
            "aten::rot90",
            [array(3, 3), const(INT, 1), const(PAIR, (0, -2))],
            r"Axes must be different\.",
        ),
        ("aten::roll", [array(3), const(INT, 1), const(INT, 1)], r"axis 1 is out of bounds"),
        ("aten::diag", [array(2, 2, 2), const(INT, 0)], r"Input must be 1- or 2-d\."),
        (
            "aten::diagonal",
            [array(3, 3), const(INT, 0), const(INT, 1), const(INT, -1)],
            r"axis1 and axis2 cannot be the same",
        ),
        (
            "aten::trace",
            [array(3), const(INT, 0), const(INT, 0), const(INT, 1)],
            r"at least two dimensions",
        ),
        (
            "aten::take",
            [array(3), const(INT, 5), const(NONE, None)],
            r"index 5 is out of bounds for axis 0 with size 3",
        ),
        (
            "aten::take",
            [array(3), (TensorType("float64", (2,)), NOT_CONSTANT), const(NONE, None)],
            r"Cannot cast array data from dtype\('float64'\)",
        ),
    ],
)
def test_rules_refuse_what_numpy_refuses(
    kind: str, operands: list[tuple[Type, Any]], message: str
) -> None:
    with pytest.raises(ShapeError, match=message):
        rule(kind, *operands)


def test_split_rule_counts_pieces_whose_lengths_are_unknown() -> None:
    piece = TensorType("float64", (None,))
    cuts = TensorType("int64", (2,))
    assert rule("aten::split", array(6), (cuts, NOT_CONSTANT), const(INT, 0)) == [
        TupleType((piece,) * 3)
    ]
    assert rule(
        "aten::split", (TensorType("float64", (None,)), NOT_CONSTANT), const(INT, 3), const(INT, 0)
    ) == [TupleType((piece,) * 3)]


# ---- spellings: compiled code computes what NumPy does --------------------------------------


def moves(x):
    return np.moveaxis(x, 0, -1) + np.swapaxes(x, 0, 2).transpose(2, 1, 0).transpose(1, 2, 0)


def rolls(x):
    return np.rollaxis(x, 2) * 2.0 + np.roll(x, (1, -1), axis=(0, 2)).transpose(2, 0, 1)


def ranks(x):
    flat = np.atleast_3d(x[0, 0])[0, :, 0] + np.atleast_2d(x[0, 1])[0]
    return flat + np.atleast_1d(x[0, 0, 0]) + np.atleast_3d(x[0])[1, :, 0] + np.atleast_2d(x)[1, 2]


def stacks(x):
    rows = np.hstack([x[0], x[1]])[:, :4] * np.vstack((x[0, 0], x[1]))[1:]
    return rows + np.sum(np.hstack((x[0, 0], x[1, 1, 1], x[1, 2])))


def splits(x):
    a, b = np.split(x, 2, axis=-1)
    first, rest = np.array_split(x[0], [1], axis=0)
    pieces = np.hsplit(x[1], 2)
    return np.sum(a * b) + np.sum(first) * np.sum(rest) + np.sum(pieces[-1] * pieces[0])


def more_splits(x):
    top, bottom = np.vsplit(x[0], (1,))
    front, back = np.dsplit(x, 2)
    return np.sum(top) + np.sum(bottom**2) + np.sum(front * back)


def repeats(x):
    return (
        np.sum(np.repeat(x, 2) ** 2)
        + np.sum(x.repeat((1, 0, 3), axis=1))
        + np.sum(np.tile(x[0], (2, 1, 2)))
    )


def pads(x):
    return np.sum(np.pad(x, ((0, 1), (1, 2), (2, 0)), mode="reflect") ** 2) + np.sum(
        np.pad(x[0], 1, constant_values=0.5)
    )


def flips(x):
    return np.flip(x) + np.flip(x, axis=(0, 2)) + np.fliplr(x) + np.flipud(x)


def rotations(x):
    return np.rot90(x[0]) @ np.rot90(x[1], k=3, axes=(1, 0)).T


def diagonals(x):
    return (
        np.sum(np.diag(x[0], 1))
        + np.sum(np.diag(np.diag(x[1])))
        + np.sum(x.diagonal(1, 0, 2))
        + np.trace(x[0])
        + np.sum(x.trace(axis1=1, axis2=2))
        + np.sum(np.tril(x, -1) * np.triu(x))
    )


def takes(x):
    return np.sum(np.take(x, [0, 5, 5])) + np.sum(x.take([2, 0, 2], axis=-1) ** 2)


PROGRAMS: list[Callable[..., Any]] = [
    moves,
    rolls,
    ranks,
    stacks,
    splits,
    more_splits,
    repeats,
    pads,
    flips,
    rotations,
    diagonals,
    takes,
]


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda fn: fn.__name__)
def test_spellings_compute_what_numpy_does(fn: Callable[..., Any]) -> None:
    np.testing.assert_allclose(ad.script(fn)(CUBE), fn(CUBE), rtol=1e-12)


def test_unpacking_too_few_names_is_an_error_at_the_line() -> None:
    def three_into_two(x):
        a, b = np.split(x, 3)
        return np.sum(a * b)

    with pytest.raises(ShapeError, match=r"cannot unpack a tuple of 3 values into 2 names"):
        ad.script(three_into_two)(np.ones(6))


# ---- gradients of tuple parts ---------------------------------------------------------------


def _df_inputs(fn: Callable[..., Any], *shapes: tuple[int, ...]) -> list[str]:
    types = [TensorType("float64", shape) for shape in shapes]
    df = compile_gradient(ad.script(fn).graph, types, [0]).gradient.df
    return [str(value.ty) for value in df.inputs]


def test_unused_pieces_get_zeros_that_capture_nothing() -> None:
    def last_piece(x):
        _a, _b, c = np.array_split(x, 3)
        return np.sum(c**2)

    x = np.arange(7.0)
    np.testing.assert_array_equal(ad.grad(last_piece)(x), [0, 0, 0, 0, 0, 10, 12])
    # df reads the vjp and c (for c**2), never a, b or x: their zeros have constant shapes.
    assert _df_inputs(last_piece, (7,)) == ["Double()", "Double(2)"]


def test_subscripted_pieces_accumulate_into_one_tuple_gradient() -> None:
    def ends(x):
        parts = np.split(x, 3)
        return np.sum(parts[0] * parts[-1]) + np.sum(parts[0])

    x = np.arange(6.0)
    np.testing.assert_array_equal(ad.grad(ends)(x), [5, 6, 0, 0, 0, 1])


def test_gradient_of_a_piece_keeps_float32() -> None:
    def halves(x):
        a, b = np.split(x, 2, axis=1)
        return np.sum(a * b)

    x = RNG.standard_normal((2, 4)).astype(np.float32)
    grad = ad.grad(halves)(x)
    assert grad.dtype == np.float32
    np.testing.assert_allclose(grad, np.concatenate([x[:, 2:], x[:, :2]], axis=1))


def test_autograd_add_of_tuples_adds_element_by_element() -> None:
    add = OPS["prim::AutogradAdd"].kernel
    assert add is not None
    one, two = np.ones(2), np.full(3, 2.0)
    total = add((one, two), (two[:2], AUTOGRAD_ZERO))
    assert isinstance(total, tuple)
    np.testing.assert_array_equal(total[0], [3.0, 3.0])
    assert total[1] is two


# ---- the pieces are a list, as NumPy's (issue 15) -------------------------------------------


def split_pieces(x):
    return np.split(x, 2, axis=1)


def array_split_pieces(x):
    return np.array_split(x, [1, 3], axis=2)


def hsplit_pieces(x):
    return np.hsplit(x, [1])


def vsplit_pieces(x):
    return np.vsplit(x, 2)


def dsplit_pieces(x):
    return np.dsplit(x, [3])


def pieces_from_a_branch(x, flag: bool):
    pieces = np.split(x, 2) if flag else np.split(x[::-1] * 2.0, 2)
    return pieces


SPLITTERS = [split_pieces, array_split_pieces, hsplit_pieces, vsplit_pieces, dsplit_pieces]
CUBE_4 = RNG.standard_normal((2, 4, 4))


def _assert_same_pieces(got: Any, want: list[Any]) -> None:
    assert type(got) is list
    assert type(want) is list
    assert len(got) == len(want)
    for piece, expected in zip(got, want, strict=True):
        assert type(piece) is np.ndarray
        np.testing.assert_array_equal(piece, expected)


@pytest.mark.parametrize("fn", SPLITTERS, ids=lambda fn: fn.__name__)
def test_split_family_returns_a_list_of_pieces(fn: Callable[..., Any]) -> None:
    want = fn(CUBE_4)
    _assert_same_pieces(ad.script(fn)(CUBE_4), want)
    out, vjp_fn = ad.vjp(fn, CUBE_4)
    _assert_same_pieces(out, want)
    # A cotangent per piece, given as a list or a tuple: the pieces put back where they were.
    cotangents = [RNG.standard_normal(piece.shape) for piece in want]
    backward = np.concatenate if fn is not dsplit_pieces else np.dstack
    axis = {split_pieces: 1, array_split_pieces: 2, hsplit_pieces: 1, vsplit_pieces: 0}
    expected = (
        np.dstack(cotangents) if backward is np.dstack else np.concatenate(cotangents, axis[fn])
    )
    for given in (cotangents, tuple(cotangents)):
        (grad,) = vjp_fn(given)
        np.testing.assert_array_equal(grad, expected)


@pytest.mark.parametrize("flag", [True, False])
def test_pieces_chosen_by_an_if_are_returned_as_a_list(flag: bool) -> None:
    x = np.arange(6.0)
    want = pieces_from_a_branch(x, flag)
    _assert_same_pieces(ad.script(pieces_from_a_branch)(x, flag), want)
    out, vjp_fn = ad.vjp(pieces_from_a_branch, x, flag)
    _assert_same_pieces(out, want)
    grad, _ = vjp_fn([np.ones(3), np.zeros(3)])
    np.testing.assert_array_equal(grad, [1, 1, 1, 0, 0, 0] if flag else [0, 0, 0, 2, 2, 2])


def test_pieces_nested_in_a_result_stay_a_list() -> None:
    def pieces_and_sum(x):
        return np.split(x, 3), np.sum(x)

    x = np.arange(6.0)
    out, vjp_fn = ad.vjp(pieces_and_sum, x)
    _assert_same_pieces(out[0], pieces_and_sum(x)[0])
    (grad,) = vjp_fn(([np.ones(2), None, 2 * np.ones(2)], 1.0))
    np.testing.assert_array_equal(grad, [2, 2, 1, 1, 3, 3])


def test_for_loop_iterates_over_pieces() -> None:
    def weighted(x, n: int):
        total = 0.0
        for piece in np.split(x, n):
            total = total + np.sum(np.sin(piece)) * len(piece)
        return total

    x = np.arange(6.0)
    for n in (2, 3):
        assert ad.script(weighted)(x, n) == weighted(x, n)
    # The index into the pieces is only known at run time: refused where it is written.
    with pytest.raises(ad.DifferentiationError, match=r"only known at run time") as caught:
        ad.grad(weighted)(x, 3)
    assert "for piece in np.split(x, n):" in str(caught.value)


def pieces_looped(x):
    total = 0.0
    for piece in np.array_split(x, 3):
        total = total + np.sum(np.sin(piece)) * len(piece)
    return total


def tuple_looped(x):
    total = 0.0
    for part in (x, x * 2.0, x[::-1]):
        total = total + np.sum(part * part[0])
    return total


def pieces_written_in_a_loop(x):
    for piece in np.split(x, 2):
        piece[0] = piece[1] * 3.0
    return np.sum(x * x)


def pieces_read_after_the_base_is_written(x):
    pieces = np.split(x, 3)
    x[0] = 5.0
    total = 0.0
    for piece in pieces:
        total = total + piece[0] * piece[1]
    return total


@pytest.mark.parametrize(
    "fn",
    [pieces_looped, tuple_looped, pieces_written_in_a_loop, pieces_read_after_the_base_is_written],
    ids=lambda fn: fn.__name__,
)
def test_loops_over_sequences_of_known_length_are_unrolled_and_differentiated(
    fn: Callable[..., Any],
) -> None:
    # A loop read each item with an index known only at run time: not differentiable, and a
    # write through an item was refused.
    x = np.arange(6.0) * 0.3 + 0.1
    plain, scripted = x.copy(), x.copy()
    np.testing.assert_allclose(ad.script(fn)(scripted), fn(plain), rtol=1e-12)
    np.testing.assert_array_equal(scripted, plain)
    assert ad.gradcheck(fn, x).ok


def test_a_loop_over_pieces_that_breaks_stays_a_loop() -> None:
    def until_large(x):
        total = 0.0
        for piece in np.split(x, 3):
            if np.sum(piece) > 3.0:
                break
            total = total + np.sum(piece)
        return total

    x = np.arange(6.0)
    assert ad.script(until_large)(x) == until_large(x)
    with pytest.raises(ad.DifferentiationError, match=r"only known at run time"):
        ad.grad(until_large)(x)


def test_jacobian_and_grad_refuse_a_list_of_pieces_by_name() -> None:
    x = np.arange(4.0)
    with pytest.raises(ad.DifferentiationError, match=r"returned a list of 2"):
        ad.jacobian(split_pieces)(x.reshape(2, 2))
    with pytest.raises(ad.DifferentiationError, match=r"returned a list of 2"):
        ad.grad(split_pieces)(x.reshape(2, 2))


def product_of_later_pieces(x):
    parts = np.split(x, 3)[1:]
    return np.sum(parts[0] * parts[1])


def every_other_piece(x):
    first, last = np.array_split(x, 4)[::3]
    return np.sum(np.sin(first) * last)


def last_pieces_stacked(x):
    return np.sum(np.stack(np.split(x, 3)[-2:]) ** 2)


SLICED_PIECES = [product_of_later_pieces, every_other_piece, last_pieces_stacked]


@pytest.mark.parametrize("fn", SLICED_PIECES, ids=lambda f: f.__name__)
def test_gradient_through_a_slice_of_pieces(fn: Callable[..., Any]) -> None:
    # ``np.split(x, 3)[1:]`` was refused: "prim::TupleSlice is not differentiable".
    x = RNG.standard_normal(6)
    grad = ad.grad(fn)(x)
    eps, expected = 1e-6, np.zeros_like(x)
    for i in range(x.size):
        step = np.zeros_like(x)
        step[i] = eps
        expected[i] = (fn(x + step) - fn(x - step)) / (2 * eps)
    np.testing.assert_allclose(grad, expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(ad.value_and_grad(fn)(x)[0], fn(x))
