"""Operator records: alias annotations in schemas (Note [Alias annotations] in `ir.ops.schema`)."""

from __future__ import annotations

import pytest

from ir.errors import IRError
from ir.ops import parse_schema
from ir.ops.schema import Alias
from ir.types import ANY, TENSOR, ListType

# -- the parser ---------------------------------------------------------------------------------


def test_a_view_annotation_puts_argument_and_result_in_one_alias_set() -> None:
    schema = parse_schema("test::t(Tensor(a) self, Any axes=None) -> Tensor(a)")
    self_argument, axes = schema.arguments
    assert self_argument.ty == TENSOR
    assert self_argument.alias == Alias("a")
    assert not self_argument.is_write
    assert axes.alias is None
    assert schema.return_aliases == (Alias("a"),)
    assert schema.result_aliases_argument(0)
    assert not schema.result_aliases_argument(1)
    assert schema.written == ()


def test_a_write_annotation_marks_the_written_argument() -> None:
    schema = parse_schema("test::put_(Tensor(a!) self, Any values, Any... indices) -> Tensor(a!)")
    assert schema.arguments[0].is_write
    assert schema.written == (schema.arguments[0],)
    assert schema.return_aliases == (Alias("a", is_write=True),)
    assert schema.variadic


def test_annotations_sit_after_the_type_name_and_round_trip() -> None:
    texts = [
        "test::s(Tensor(a) self, Any sections, int axis=0) -> Tensor(a)[]",
        "test::r(Any(a) self) -> Tensor(a)",
        "test::w(Tensor(a!) target, Tensor value) -> ()",
        "test::o(Tensor(a)? self, int k) -> (Tensor(a)?, int)",
    ]
    for text in texts:
        schema = parse_schema(text)
        assert str(schema) == text
        assert parse_schema(str(schema)) == schema
    pieces = parse_schema(texts[0])
    assert pieces.returns == (ListType(TENSOR),)
    assert pieces.return_aliases == (Alias("a"),)
    assert parse_schema(texts[1]).arguments[0].ty == ANY
    assert parse_schema(texts[3]).return_aliases == (Alias("a"), None)


def test_a_schema_without_annotations_has_no_alias_sets() -> None:
    schema = parse_schema("test::f(Tensor self, Tensor other) -> Tensor")
    assert schema.return_aliases == ()
    assert all(argument.alias is None for argument in schema.arguments)
    assert not schema.result_aliases_argument(0)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("test::f(Tensor(A) self) -> Tensor", "malformed alias annotation 'Tensor(A)'"),
        ("test::f(Tensor() self) -> Tensor", "malformed alias annotation 'Tensor()'"),
        ("test::f(Tensor(a!!) self) -> Tensor", "malformed alias annotation 'Tensor(a!!)'"),
        ("test::f(Tensor(a -> *) self) -> Tensor", "malformed alias annotation"),
        ("test::f(int(a) self) -> Tensor", "alias annotation on 'int'"),
        ("test::f((Tensor(a), int) pair) -> Tensor", "alias annotation inside type"),
        ("test::f(Tensor self) -> Tensor(b)", "result alias set 'b' is no argument's"),
        ("test::f(Tensor(a!) self) -> Tensor(a)", "written ('!') exactly when its argument is"),
        ("test::f(Tensor(a) self) -> Tensor(a!)", "written ('!') exactly when its argument is"),
        ("test::f(Tensor(a) x, Tensor(a) y) -> Tensor", "alias set 'a' names two arguments"),
    ],
)
def test_malformed_alias_annotations_are_refused(text: str, message: str) -> None:
    with pytest.raises(IRError, match=r"schema|names two") as raised:
        parse_schema(text)
    assert message in str(raised.value)
    assert text in str(raised.value)  # the message names the schema
