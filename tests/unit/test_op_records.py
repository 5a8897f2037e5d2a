"""Operator records: alias annotations in schemas, and the record's fields checked against them
(Note [Alias annotations] in `ir.ops.schema`, Note [Operator records] in `ir.ops.registry`)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from ir.errors import IRError
from ir.ops import OPS, Derivative, parse_schema, register_op
from ir.ops.registry import Holds
from ir.ops.schema import Alias
from ir.ops.views import SELF_INVERSE
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


# -- the registry -------------------------------------------------------------------------------


def _identity(x: Any) -> Any:
    return x


@pytest.mark.parametrize(
    ("schema", "keywords", "message"),
    [
        ("test::v(Tensor self) -> Tensor", {"view": SELF_INVERSE}, "has a view rule, but"),
        ("test::v(Tensor(a) self) -> Tensor(a)", {}, "has no view rule"),
        ("test::v(Tensor(a) self) -> Tensor", {"view": SELF_INVERSE}, "has a view rule, but"),
        ("test::put_(Tensor(a!) self) -> Tensor(a!)", {"pure": False}, "names no out-of-place"),
        (
            "test::put_(Tensor self) -> Tensor",
            {"pure": False, "out_of_place": "test::put"},
            "'Tensor(a!) self -> Tensor(a!)'",
        ),
        (
            "test::put(Tensor(a!) self) -> Tensor(a!)",
            {"pure": False, "out_of_place": "test::other"},
            "so its name ends with '_'",
        ),
        ("test::w(Tensor(a!) target, Tensor value) -> ()", {}, "writes target"),
        ("test::r(Tensor x, Tensor(a) y) -> Tensor(a)", {"only_reads": True}, "only_reads"),
    ],
)
def test_the_registry_refuses_a_record_that_contradicts_its_schema(
    schema: str, keywords: dict[str, Any], message: str
) -> None:
    name = schema.partition("(")[0]
    with pytest.raises(IRError, match=name) as raised:
        register_op(schema, shape=None, derivative=Derivative.REFUSED, **keywords)(_identity)
    assert message in str(raised.value)
    assert name not in OPS


def test_a_consistent_record_registers() -> None:
    register_op(
        "test::flip_(Tensor(a!) self) -> Tensor(a!)",
        shape=None,
        derivative=Derivative.FORMULA,
        pure=False,
        out_of_place="aten::flip",
    )(_identity)
    register_op(
        "test::view(Tensor(a) self) -> Tensor(a)",
        shape=None,
        derivative=Derivative.FORMULA,
        view=SELF_INVERSE,
    )(_identity)
    assert OPS.pop("test::flip_").out_of_place == "aten::flip"
    assert OPS.pop("test::view").view is SELF_INVERSE


# -- the table ----------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", sorted(kind for kind, op in OPS.items() if op.view is not None))
def test_every_view_operator_says_so_in_its_schema(kind: str) -> None:
    schema = OPS[kind].schema
    first = schema.arguments[0]
    assert first.alias is not None
    assert not first.is_write
    assert schema.result_aliases_argument(0)
    assert f"{first.ty}(a) {first.name}" in str(schema)


def test_the_in_place_operators_write_their_first_operand() -> None:
    in_place = {kind: op for kind, op in OPS.items() if op.out_of_place is not None}
    assert set(in_place) == {"aten::copy_", "aten::index_put_", "aten::add_at_"}
    for kind, op in in_place.items():
        assert op.schema.arguments[0].is_write, kind
        assert op.schema.result_aliases_argument(0), kind
        assert not op.pure, kind
        # The counterpart takes the same operands (functionalisation substitutes it as is).
        counterpart = OPS[op.out_of_place or ""].schema
        assert len(counterpart.arguments) == len(op.schema.arguments)
        assert counterpart.variadic == op.schema.variadic
        assert counterpart.return_aliases == ()
        assert OPS[op.out_of_place or ""].pure


def test_every_operator_that_writes_an_operand_is_impure() -> None:
    writers = {kind for kind, op in OPS.items() if op.schema.written}
    assert writers == {"aten::copy_", "aten::index_put_", "aten::add_at_", "prim::WriteBack"}
    assert not any(OPS[kind].pure for kind in writers)


X = np.arange(24.0).reshape(2, 3, 4) - 7.5


@pytest.mark.parametrize("kind", sorted(k for k, op in OPS.items() if op.ufunc_reduce is not None))
@pytest.mark.parametrize(("axis", "keepdims"), [(None, False), (1, True), ((0, 2), False)])
def test_a_records_ufunc_reduce_is_its_kernel_on_an_array(
    kind: str, axis: Any, keepdims: bool
) -> None:
    op = OPS[kind]
    assert op.kernel is not None
    assert op.ufunc_reduce is not None
    expected = op.kernel(X, axis, keepdims)
    got = op.ufunc_reduce(X, axis, None, None, keepdims)
    assert type(got) is type(expected)
    np.testing.assert_array_equal(got, expected)


def test_the_reductions_are_spelled_by_their_ufuncs() -> None:
    reduce = {kind: op.ufunc_reduce for kind, op in OPS.items() if op.ufunc_reduce is not None}
    assert set(reduce) == {"aten::sum", "aten::max", "aten::min", "aten::prod"}


@pytest.mark.parametrize("kind", sorted(k for k, op in OPS.items() if op.only_reads))
def test_an_operator_that_only_reads_holds_none_of_its_operands(kind: str) -> None:
    op = OPS[kind]
    assert op.kernel is not None
    arguments = op.schema.arguments
    if arguments[0].name == "grad":  # a product's gradient: (grad, a, b) of matrices
        operands: list[Any] = [np.ones((2, 4)), np.ones((2, 3)), np.ones((3, 4))]
    else:
        operands = [X, None, False]
    result = op.kernel(*operands)
    assert not any(
        np.shares_memory(result, operand) for operand in operands if isinstance(operand, np.ndarray)
    )


def test_the_records_say_what_a_reverse_loop_recomputes() -> None:
    cheap = {kind for kind, op in OPS.items() if op.cheap_to_recompute}
    assert cheap == {"prim::Constant", "prim::add", "prim::sub", "prim::mul", "prim::neg"}


def test_a_record_states_its_derivative() -> None:
    """No default: whether a gradient stops at an operator or is refused there is decided where
    it is registered (Note [Derivatives] in `ir.ops.registry`)."""
    with pytest.raises(TypeError, match="derivative"):
        register_op("test::bare(Tensor self) -> Tensor", shape=None)(_identity)  # type: ignore[call-arg]
    assert "test::bare" not in OPS


def test_the_written_argument_operator_says_its_result_is_the_argument() -> None:
    op = OPS["prim::WrittenArgument"]
    value, target = op.schema.arguments
    (result,) = op.schema.return_aliases
    assert result is not None
    assert target.alias == result
    assert value.alias is None
    written, argument = np.zeros(3), np.ones(3)
    assert op.kernel is not None
    assert op.kernel(written, argument) is argument


def test_the_records_say_what_tuples_and_lists_hold() -> None:
    holds = {kind: op.holds for kind, op in OPS.items() if op.holds is not None}
    assert holds == {
        "prim::TupleConstruct": Holds.PACKED,
        "prim::ListConstruct": Holds.PACKED,
        "prim::ListAppend": Holds.EXTENDED,
        "prim::TupleIndex": Holds.ELEMENTS,
        "prim::TupleSlice": Holds.ELEMENTS,
        "prim::TupleUnpack": Holds.ELEMENTS,
        "prim::ListIndex": Holds.ELEMENTS,
        "prim::ListUnpack": Holds.ELEMENTS,
    }
    pair = (np.zeros(2), np.ones(2))
    packed = OPS["prim::TupleConstruct"].kernel(*pair)  # type: ignore[misc]
    assert all(a is b for a, b in zip(packed, pair, strict=True))
    assert OPS["prim::TupleIndex"].kernel(packed, 1) is pair[1]  # type: ignore[misc]


# -- refused operands (Note [Refused operands]) -------------------------------------------------


@pytest.mark.parametrize(
    ("derivative", "refused", "message"),
    [
        (Derivative.FORMULA, {"shape": "no formula"}, "refuses the gradient of 'shape'"),
        (Derivative.REFUSED, {"other": "no formula"}, "has no formula"),
    ],
)
def test_refused_operands_name_arguments_of_an_operator_with_a_formula(
    derivative: Derivative, refused: dict[str, str], message: str
) -> None:
    with pytest.raises(IRError, match=message):
        register_op(
            "test::refusing(Tensor self, Tensor other) -> Tensor",
            shape=None,
            derivative=derivative,
            refused_operands=refused,
        )(np.add)
    assert "test::refusing" not in OPS


def test_every_refused_operand_has_a_reason_naming_it() -> None:
    for op in OPS.values():
        for name, why in op.refused_operands:
            assert why, op.name
            spelled = "k" if name == "self" else name  # poisson's k is the schema's self
            assert spelled in why, (op.name, name)
