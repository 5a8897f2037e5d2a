"""IR types: how each prints, that the parser reads every printed form back to an equal type,
and the subtype relation."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ir.errors import IRParseError
from ir.parser import parse_type
from ir.types import (
    ANY,
    BOOL,
    DTYPE_TO_NAME,
    FLOAT,
    INT,
    NAMED_TYPES,
    NONE,
    SCALAR,
    STR,
    TENSOR,
    ListType,
    OptionalType,
    TensorType,
    TupleType,
    Type,
    join_types,
)
from tests.helpers import check_roundtrip

PRINTED: list[tuple[str, Type]] = [
    ("Tensor", TENSOR),
    ("Float", TensorType("float32")),
    ("Float(3, 4)", TensorType("float32", (3, 4))),
    ("Double(*, 4, requires_grad=1)", TensorType("float64", (None, 4), True)),
    ("Tensor(3)", TensorType(None, (3,))),
    ("Long()", TensorType("int64", ())),
    ("Bool(0, requires_grad=0)", TensorType("bool", (0,), False)),
    ("Tensor(requires_grad=1)", TensorType(None, None, True)),
    ("Double(rank=0, requires_grad=1)", TensorType("float64", (), True)),
    ("Tensor(rank=0, requires_grad=0)", TensorType(None, (), False)),
    ("ComplexFloat(2)", TensorType("complex64", (2,))),
    ("int", INT),
    ("float", FLOAT),
    ("bool", BOOL),
    ("str", STR),
    ("NoneType", NONE),
    ("Scalar", SCALAR),
    ("Any", ANY),
    ("int[]", ListType(INT)),
    ("Tensor[][]", ListType(ListType(TENSOR))),
    ("int?", OptionalType(INT)),
    ("int[]?", OptionalType(ListType(INT))),
    ("int?[]", ListType(OptionalType(INT))),
    ("()", TupleType(())),
    ("(Tensor)", TupleType((TENSOR,))),
    ("(Tensor, int)", TupleType((TENSOR, INT))),
    ("((Float(2), int[])?, (bool))[]", ListType(
        TupleType((OptionalType(TupleType((TensorType("float32", (2,)), ListType(INT)))),
                   TupleType((BOOL,))))
    )),
]  # fmt: skip


@pytest.mark.parametrize(("text", "ty"), PRINTED, ids=[text for text, _ in PRINTED])
def test_types_print_and_parse_back(text: str, ty: Type) -> None:
    assert str(ty) == text
    assert parse_type(text) == ty


tensor_types = st.builds(
    TensorType,
    dtype=st.none() | st.sampled_from(sorted(DTYPE_TO_NAME)),
    shape=st.none() | st.lists(st.none() | st.integers(0, 1000), max_size=4).map(tuple),
    requires_grad=st.none() | st.booleans(),
)
types = st.recursive(
    tensor_types | st.sampled_from(sorted(NAMED_TYPES.values(), key=str)),
    lambda inner: (
        st.builds(ListType, inner)
        | st.builds(OptionalType, inner)
        | st.lists(inner, max_size=3).map(lambda elems: TupleType(tuple(elems)))
    ),
    max_leaves=6,
)


@settings(deadline=None)
@given(types)
def test_every_printed_type_parses_back_equal(ty: Type) -> None:
    assert parse_type(str(ty)) == ty


def test_zero_dim_and_unknown_rank_with_requires_grad_print_apart() -> None:
    # Note [Rank 0 with attributes]: without `rank=0` both would print Float(requires_grad=1).
    zero_dim, unknown_rank = TensorType("float32", (), True), TensorType("float32", None, True)

    assert str(zero_dim) != str(unknown_rank)
    assert parse_type(str(zero_dim)) == zero_dim
    assert parse_type(str(unknown_rank)) == unknown_rank


def test_zero_dim_type_with_requires_grad_round_trips_in_a_graph() -> None:
    text = (
        "graph @loss(%x : Double(3, requires_grad=1)):\n"
        "  %none : NoneType = prim::Constant[value=None]()\n"
        "  %keep : bool = prim::Constant[value=False]()\n"
        "  %s : Double(rank=0, requires_grad=1) = aten::sum(%x, %none, %keep)\n"
        "  return (%s)\n"
    )
    graph = check_roundtrip(text)

    assert graph.outputs[0].ty == TensorType("float64", (), True)


def test_rank_zero_spelling_is_read_with_spaces_and_without_attributes() -> None:
    assert parse_type("Float(rank = 0, requires_grad = 1)") == TensorType("float32", (), True)
    assert parse_type("Float(rank=0)") == TensorType("float32", ())


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("Foo", "<string>:1:1: error: unknown type 'Foo'"),
        ("Foo(3)", "<string>:1:1: error: unknown type 'Foo'"),
        ("int(3)", "<string>:1:1: error: unknown type 'int'"),
        ("Float(3, x)", "<string>:1:1: error: bad dimension 'x' in Float(3, x)"),
        ("Float(-1)", "<string>:1:1: error: bad dimension '-1' in Float(-1)"),
        ("Float(requires_grad=2)", "bad dimension 'requires_grad=2'"),
        ("Float(rank=1, requires_grad=1)", "bad dimension 'rank=1'"),
        ("Float(3, rank=0, requires_grad=1)", "bad dimension 'rank=0'"),
        ("(int", "<string>:1:5: error: expected"),
        ("int]", "<string>:1:4: error: expected '?', '[' or end of input, found ']'"),
    ],
)
def test_bad_types_are_parse_errors(text: str, message: str) -> None:
    with pytest.raises(IRParseError) as info:
        parse_type(text)

    assert message in str(info.value)


@pytest.mark.parametrize(
    ("sub", "sup", "expected"),
    [
        (TensorType("float32", (3, 4), True), TENSOR, True),
        (TensorType("float32", (3, 4)), TensorType("float32", (None, 4)), True),
        (TensorType("float32", (None, 4)), TensorType("float32", (3, 4)), False),
        (TensorType("float64"), TensorType("float32"), False),
        (INT, SCALAR, True),
        (STR, SCALAR, False),
        (NONE, OptionalType(INT), True),
        (INT, OptionalType(INT), True),
        (TupleType((INT, TENSOR)), TupleType((SCALAR, TENSOR)), True),
        (ListType(INT), ListType(SCALAR), True),
        (ListType(INT), ANY, True),
    ],
)
def test_is_subtype_of(sub: Type, sup: Type, expected: bool) -> None:
    assert sub.is_subtype_of(sup) is expected


@pytest.mark.parametrize(
    ("number", "tensor", "joined"),
    [
        # ``total = 0.0`` then ``total += np.sum(x)``: a float64 0-d array.
        (FLOAT, TensorType("float64", ()), TensorType("float64", ())),
        # ``total = 0`` then the same: 0-d, of an int's or a float's dtype (regression 127).
        (INT, TensorType("float64", ()), TensorType(None, ())),
        (INT, TensorType("int64", None), TensorType(None, ())),
        (FLOAT, TensorType("float64", (3,)), ANY),
        (INT, TensorType("float64", (3,)), ANY),
    ],
)
def test_a_python_number_joined_with_an_array_is_a_0d_array(
    number: Any, tensor: TensorType, joined: Any
) -> None:
    assert join_types(number, tensor) == joined
    assert join_types(tensor, number) == joined
