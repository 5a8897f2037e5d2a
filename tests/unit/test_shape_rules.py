"""Shape rules agree with what the kernels actually return: shapes, dtypes (NumPy 2's NEP 50
promotion included) and Python result types; mismatches raise ShapeError naming the shapes."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from test_ops import CASES

from ir.errors import ShapeError
from ir.ops import AUTOGRAD_ZERO, NOT_CONSTANT, OPS
from ir.types import (
    ANY,
    BOOL,
    FLOAT,
    GENERATOR,
    INT,
    NONE,
    NOTHING,
    SCALAR,
    STR,
    ListType,
    TensorType,
    TupleType,
    Type,
    join_types,
)

T = TensorType
RULE_CASES = [c for c in CASES if OPS[c[0]].shape is not None]


def value_type(value: Any) -> Type:
    """The most precise IR type of a runtime value (lists included)."""
    if isinstance(value, list):
        elem: Type = value_type(value[0]) if value else NOTHING
        for item in value[1:]:
            elem = join_types(elem, value_type(item))
        return ListType(elem)
    if isinstance(value, tuple):
        return TupleType(tuple(value_type(v) for v in value))
    if isinstance(value, np.ndarray | np.generic):
        return TensorType.of(value)
    if value is AUTOGRAD_ZERO:
        return ANY
    if isinstance(value, np.random.RandomState | np.random.Generator):
        return GENERATOR
    simple: dict[type, Type] = {bool: BOOL, int: INT, float: FLOAT, str: STR, type(None): NONE}
    return simple[type(value)]


def compile_time_value(value: Any) -> Any:
    """What a frontend knows at compile time: everything but arrays."""
    if isinstance(value, np.ndarray | np.generic):
        return NOT_CONSTANT
    if isinstance(value, tuple | list) and any(
        compile_time_value(v) is NOT_CONSTANT for v in value
    ):
        return NOT_CONSTANT
    return value


def compatible(actual: Type, predicted: Type) -> bool:
    """True when a value of type ``actual`` fits what the rule ``predicted``."""
    if predicted is ANY:
        return True
    if predicted is SCALAR:
        return actual in (INT, FLOAT, BOOL)
    if isinstance(actual, TensorType) and isinstance(predicted, TensorType):
        return actual.refines_to(predicted)
    if isinstance(predicted, ListType) and isinstance(actual, TupleType | ListType):
        elems = actual.elems if isinstance(actual, TupleType) else (actual.elem,)
        return all(compatible(e, predicted.elem) for e in elems)
    if isinstance(actual, TupleType) and isinstance(predicted, TupleType):
        return len(actual.elems) == len(predicted.elems) and all(
            compatible(a, p) for a, p in zip(actual.elems, predicted.elems, strict=True)
        )
    return actual == predicted


# They return NumPy's list of pieces, which their rules type as a tuple once the number of
# pieces is known (`ir.ops.arrangement`).
SPLITS = {"aten::split", "aten::array_split", "aten::hsplit", "aten::vsplit", "aten::dsplit"}


def run_case(kind: str, operands: tuple[Any, ...]) -> list[Type]:
    op = OPS[kind]
    assert op.kernel is not None
    result = op.kernel(*operands)
    if kind in SPLITS:
        assert type(result) is list
        result = tuple(result)
    return [value_type(r) for r in (result if op.num_outputs != 1 else (result,))]


def loses_counts(kind: str, operands: tuple[Any, ...]) -> bool:
    """A list of arrays or a boolean index: element counts that types do not carry."""
    has_array_list = any(
        isinstance(v, list) and any(isinstance(e, np.ndarray) for e in v) for v in operands
    )
    has_mask = kind == "aten::index" and any(
        isinstance(v, np.ndarray) and v.dtype == bool for v in operands
    )
    return has_array_list or has_mask


# The residuals a custom_vjp's fwd returns are any Python value: typed Any (Note [Custom vjp]).
OPAQUE_RESULTS = {"prim::CustomVjpFwd"}

IDS = [f"{c[0]}-{i}" for i, c in enumerate(RULE_CASES)]


@pytest.mark.parametrize(("kind", "operands", "reference"), RULE_CASES, ids=IDS)
def test_rule_predicts_the_kernel_result(
    kind: str, operands: tuple[Any, ...], reference: Any
) -> None:
    shape = OPS[kind].shape
    assert shape is not None
    actual = run_case(kind, operands)
    predicted = list(
        shape([value_type(v) for v in operands], [compile_time_value(v) for v in operands])
    )
    if loses_counts(kind, operands) or kind in OPAQUE_RESULTS:
        assert all(compatible(a, p) for a, p in zip(actual, predicted, strict=True))
    else:
        assert predicted == actual


@pytest.mark.parametrize(("kind", "operands", "reference"), RULE_CASES, ids=IDS)
def test_rule_without_compile_time_values_stays_sound(
    kind: str, operands: tuple[Any, ...], reference: Any
) -> None:
    shape = OPS[kind].shape
    assert shape is not None
    actual = run_case(kind, operands)
    predicted = shape([value_type(v) for v in operands], [NOT_CONSTANT] * len(operands))
    if predicted or not OPS[kind].variadic_outputs:
        assert all(compatible(a, p) for a, p in zip(actual, predicted, strict=True))


def _forget(ty: Type) -> Type:
    if isinstance(ty, TensorType):
        return TensorType()
    if isinstance(ty, TupleType):
        return TupleType(tuple(_forget(e) for e in ty.elems))
    if isinstance(ty, ListType):
        return ListType(_forget(ty.elem))
    return ty


@pytest.mark.parametrize(("kind", "operands", "reference"), RULE_CASES, ids=IDS)
def test_rule_with_unknown_tensors_stays_sound(
    kind: str, operands: tuple[Any, ...], reference: Any
) -> None:
    shape = OPS[kind].shape
    assert shape is not None
    actual = run_case(kind, operands)
    types = [_forget(value_type(v)) for v in operands]
    predicted = shape(types, [compile_time_value(v) for v in operands])
    if predicted or not OPS[kind].variadic_outputs:
        assert all(compatible(a, p) for a, p in zip(actual, predicted, strict=True))


def test_every_rule_has_a_case() -> None:
    with_rule = {name for name, op in OPS.items() if op.shape is not None}
    assert with_rule - {c[0] for c in RULE_CASES} == set()


def rule(kind: str, *operands: tuple[Type, Any]) -> list[Type]:
    shape = OPS[kind].shape
    assert shape is not None
    return list(shape([t for t, _ in operands], [c for _, c in operands]))


def array(dtype: str, shape: tuple[int, ...] = (2,)) -> tuple[Type, Any]:
    return T(dtype, shape), NOT_CONSTANT


def python(value: Any) -> tuple[Type, Any]:
    return value_type(value), NOT_CONSTANT


# (operator, operand types, what NumPy 2 computes). Python numbers are weak (NEP 50); arrays,
# 0-d ones included, are not.
PROMOTION = [
    ("aten::mul", [array("float32"), python(2.0)], lambda: np.ones(2, np.float32) * 2.0),
    ("aten::mul", [python(2.0), array("float32")], lambda: 2.0 * np.ones(2, np.float32)),
    ("aten::div", [array("int64"), python(2)], lambda: np.ones(2, np.int64) / 2),
    ("aten::add", [array("int8"), python(1)], lambda: np.ones(2, np.int8) + 1),
    ("aten::add", [array("int32"), python(1.5)], lambda: np.ones(2, np.int32) + 1.5),
    (
        "aten::add",
        [array("float32", ()), array("float64", ())],
        lambda: np.float32(1) + np.ones((), np.float64),
    ),
    (
        "aten::add",
        [array("float16"), array("float64", ())],
        lambda: np.ones(2, np.float16) + np.ones(()),
    ),
    (
        "aten::add",
        [array("uint8"), array("int64", ())],
        lambda: np.ones(2, np.uint8) + np.ones((), np.int64),
    ),
    ("aten::add", [array("bool"), array("bool")], lambda: np.ones(2, bool) + np.ones(2, bool)),
    ("aten::add", [python(2), python(3)], lambda: np.add(2, 3)),
    ("aten::pow", [array("float32"), python(2)], lambda: np.ones(2, np.float32) ** 2),
    ("aten::sqrt", [array("int8")], lambda: np.sqrt(np.ones(2, np.int8))),
    ("aten::gt", [array("float32"), python(0.0)], lambda: np.ones(2, np.float32) > 0.0),
    (
        "aten::where",
        [array("bool"), array("float32"), python(0.0)],
        lambda: np.where(np.ones(2, bool), np.ones(2, np.float32), 0.0),
    ),
    (
        "aten::matmul",
        [array("float32", (2, 2)), array("float64", (2,))],
        lambda: np.ones((2, 2), np.float32) @ np.ones(2),
    ),
]


@pytest.mark.parametrize(("kind", "operands", "compute"), PROMOTION)
def test_dtype_promotion_matches_numpy(
    kind: str, operands: list[tuple[Type, Any]], compute: Any
) -> None:
    expected = np.asarray(compute())
    assert rule(kind, *operands) == [T(expected.dtype.name, expected.shape)]


@pytest.mark.parametrize(
    ("kind", "dtype", "expected"),
    [
        ("aten::sum", "int32", "int64"),
        ("aten::mean", "int64", "float64"),
        ("aten::mean", "float16", "float16"),
        ("aten::max", "bool", "bool"),
        ("aten::prod", "int8", "int64"),
        ("aten::var", "int32", "float64"),
        ("aten::std", "float32", "float32"),
        ("aten::argmax", "float32", "int64"),
    ],
)
def test_reduction_dtypes(kind: str, dtype: str, expected: str) -> None:
    assert rule(kind, array(dtype, (2, 3)), (NONE, None), (BOOL, False)) == [T(expected, ())]


def test_float32_times_python_float_stays_float32() -> None:
    assert rule("aten::mul", array("float32", (3,)), (FLOAT, 2.0)) == [T("float32", (3,))]


def test_unknown_parts_stay_unknown() -> None:
    assert rule("aten::add", (T("float32", (None, 4)), NOT_CONSTANT), array("float32", (3, 1))) == [
        T("float32", (3, 4))
    ]
    assert rule("aten::add", (T(None, (3,)), NOT_CONSTANT), python(1.0)) == [T(None, (3,))]
    assert rule("aten::add", (T(), NOT_CONSTANT), array("float64", (3,))) == [T(None, None)]
    assert rule("aten::sum", array("float64", (2, 3)), (INT, NOT_CONSTANT), (BOOL, False)) == [
        T("float64", None)
    ]
    assert rule("aten::reshape", array("float64", (6,)), (TupleType((INT, INT)), NOT_CONSTANT)) == [
        T("float64", (None, None))
    ]
    assert rule("aten::shape", (T("float64"), NOT_CONSTANT)) == [ListType(INT)]
    assert rule("aten::shape", array("float64", (2, 3))) == [TupleType((INT, INT))]
    assert rule("prim::pow", (INT, NOT_CONSTANT), (INT, NOT_CONSTANT)) == [SCALAR]
    assert rule("prim::TupleUnpack", (ANY, NOT_CONSTANT)) == []
    assert rule("aten::cumsum", array("float64", (2, 3)), (ANY, NOT_CONSTANT)) == [
        T("float64", None)
    ]
    assert rule("aten::cumsum", array("int32", (2, 3)), (INT, NOT_CONSTANT)) == [T("int64", (2, 3))]


@pytest.mark.parametrize(
    ("kind", "operands", "message"),
    [
        (
            "aten::add",
            [array("float64", (3, 4)), array("float64", (5,))],
            r"operands could not be broadcast together with shapes \(3,4\) \(5,\)",
        ),
        (
            "aten::where",
            [array("bool", (2,)), array("float64", (3,)), python(0.0)],
            r"could not be broadcast together with shapes \(2,\) \(3,\) \(\)",
        ),
        (
            "aten::matmul",
            [array("float64", (3, 4)), array("float64", (5, 2))],
            r"size 5 is different from 4\); shapes \(3,4\) and \(5,2\)",
        ),
        (
            "aten::matmul",
            [array("float64", ()), array("float64", (5,))],
            r"Input operand 0 does not have enough dimensions",
        ),
        (
            "aten::dot",
            [array("float64", (2, 3)), array("float64", (4,))],
            r"shapes \(2,3\) and \(4,\) not aligned: 3 \(dim 1\) != 4 \(dim 0\)",
        ),
        (
            "aten::reshape",
            [array("float64", (2, 3)), ((INT,), (4,))],
            r"cannot reshape array of size 6 into shape \(4,\)",
        ),
        (
            "aten::concatenate",
            [(TupleType((T("float64", (3, 4)), T("float64", (2, 5)))), NOT_CONSTANT), (INT, 0)],
            r"along dimension 1, the array at index 0 has size 4 and the array at index 1 has size 5",  # noqa: E501
        ),
        (
            "aten::concatenate",
            [(TupleType((T("float64", (3, 4)), T("float64", (4,)))), NOT_CONSTANT), (INT, 0)],
            r"must have same number of dimensions",
        ),
        (
            "aten::stack",
            [(TupleType((T("float64", (3,)), T("float64", (4,)))), NOT_CONSTANT), (INT, 0)],
            r"all input arrays must have the same shape",
        ),
        (
            "aten::sum",
            [array("float64", (2, 3)), (INT, 2), (BOOL, False)],
            r"axis 2 is out of bounds for array of dimension 2",
        ),
        (
            "aten::transpose",
            [array("float64", (2, 3)), (TupleType((INT,)), (0,))],
            r"axes don't match array",
        ),
        ("aten::squeeze", [array("float64", (2, 3)), (INT, 0)], r"size not equal to one"),
        (
            "aten::cumsum",
            [array("float64", (2, 3)), (INT, -3)],
            r"axis -3 is out of bounds for array of dimension 2",
        ),
        (
            "aten::diff",
            [array("float64", ()), (INT, 1), (INT, -1)],
            r"diff requires input that is at least one dimensional",
        ),
        (
            "aten::diff",
            [array("float64", (3,)), (INT, -1), (INT, -1)],
            r"order must be non-negative but got -1",
        ),
        (
            "aten::broadcast_to",
            [array("float64", (3,)), (TupleType((INT,)), (4,))],
            r"cannot broadcast an array of shape \(3,\) to shape \(4,\)",
        ),
        (
            "aten::select",
            [array("float64", (3,)), (INT, 0), (INT, 3)],
            r"index 3 is out of bounds for axis 0 with size 3",
        ),
        (
            "aten::index",
            [array("float64", (3,)), array("int64", (2,)), array("int64", (3,))],
            r"too many indices",
        ),
        (
            "aten::index",
            [array("float64", (3, 3)), array("int64", (2,)), array("int64", (3,))],
            r"indexing arrays could not be broadcast together with shapes \(2,\) \(3,\)",
        ),
        (
            "aten::index",
            [array("float64", (3,)), array("bool", (4,))],
            r"size of axis is 3 but size of corresponding boolean axis is 4",
        ),
        (
            "aten::tensordot",
            [array("float64", (2, 3)), array("float64", (4, 5)), (INT, 1)],
            r"shape-mismatch for sum: sizes 3 and 4",
        ),
        (
            "aten::inner",
            [array("float64", (2, 3)), array("float64", (1,))],
            r"shape-mismatch for sum: sizes 3 and 1",
        ),
        (
            "aten::einsum",
            [
                (STR, "ij,jk"),
                (TupleType((T("float64", (2, 3)), T("float64", (4, 5)))), NOT_CONSTANT),
            ],
            r"label 'j' has sizes 3 and 4",
        ),
        (
            "aten::einsum",
            [(STR, "ij->ik"), (TupleType((T("float64", (2, 3)),)), NOT_CONSTANT)],
            r"output subscript 'k' does not appear",
        ),
        (
            "aten::einsum",
            [(STR, "..j->j"), (TupleType((T("float64", (2, 3)),)), NOT_CONSTANT)],
            r"invalid ellipsis",
        ),
        (
            "aten::cross",
            [
                array("float64", (2,)),
                array("float64", (3,)),
                *[(INT, -1)] * 3,
                (NONE, None),
            ],
            r"must have 3 elements",
        ),
        ("aten::sub", [array("bool"), array("bool")], r"boolean subtract"),
        (
            "aten::linalg_inv",
            [array("float64", (3, 4))],
            r"Last 2 dimensions of the array must be square",
        ),
        ("aten::linalg_det", [array("float64", (3,))], r"1-dimensional array given"),
        (
            "aten::linalg_solve",
            [array("float64", (3, 3)), array("float64", (4,))],
            r"size 4 is different from 3",
        ),
        (
            "aten::linalg_norm",
            [array("float64", (2, 3, 4)), (INT, 1), (NONE, None), (BOOL, False)],
            r"Improper number of dimensions to norm",
        ),
        (
            "aten::_written",
            [array("float64", (3, 4)), array("float64", (5,))],
            r"could not broadcast input array from shape \(5,\) into shape \(3,4\)",
        ),
        (
            "aten::_written",
            [array("int64", (3,)), array("float64", (3,))],
            r"Cannot cast array data from dtype\('float64'\) to dtype\('int64'\) according to "
            r"the rule 'same_kind'",
        ),
        (
            "aten::_written",
            [array("int64", (3,)), (FLOAT, 1.5)],
            r"Cannot cast scalar from dtype\('float64'\) to dtype\('int64'\)",
        ),
        (
            "aten::select_scatter",
            [array("float64", (3, 4)), array("float64", (5,)), (INT, 0), (INT, 1)],
            r"could not broadcast input array from shape \(5,\) into shape \(4,\)",
        ),
        (
            "aten::select_scatter",
            [array("float64", (3, 4)), array("float64", (4,)), (INT, 0), (INT, 3)],
            r"index 3 is out of bounds for axis 0 with size 3",
        ),
        (
            "aten::slice_scatter",
            [
                array("float64", (5, 4)),
                array("float64", (3, 4)),
                (INT, 0),
                (INT, 1),
                (INT, 3),
                (NONE, None),
            ],
            r"could not broadcast input array from shape \(3,4\) into shape \(2,4\)",
        ),
        (
            "aten::index_put",
            [array("float64", (3, 4)), array("float64", (3, 3)), (NONE, None), array("int64")],
            r"value array of shape \(3,3\) could not be broadcast to indexing result of shape "
            r"\(3,2\)",
        ),
        (
            "aten::add_at",
            [array("float64", (3, 4)), array("float64", (1, 2, 4)), array("int64")],
            r"array is not broadcastable to correct shape",
        ),
        ("prim::len", [array("float64", ())], r"len\(\) of unsized object"),
        (
            "prim::TupleIndex",
            [(TupleType((INT, INT)), NOT_CONSTANT), (INT, 2)],
            r"tuple index 2 out of range",
        ),
        ("prim::add", [array("float64"), python(1)], r"must be a Python number"),
    ],
)
def test_mismatches_raise_shape_errors(
    kind: str, operands: list[tuple[Type, Any]], message: str
) -> None:
    with pytest.raises(ShapeError, match=message):
        rule(kind, *operands)


def test_index_places_advanced_dims_like_numpy() -> None:
    x = np.zeros((5, 3, 4, 6))
    i = np.zeros((2, 7), dtype=np.int64)
    cases = [
        ((None, i, i), x[:, i, i]),
        ((i, None, i), x[i, :, i]),
        ((None, i, None, 0), x[:, i, :, 0]),
        ((0, i), x[0, i]),
    ]
    for items, expected in cases:
        operands = [array("float64", x.shape)] + [
            (NONE, None)
            if it is None
            else python(it)
            if isinstance(it, int)
            else array("int64", it.shape)
            for it in items
        ]
        assert rule("aten::index", *operands) == [T("float64", expected.shape)]


def test_value_from_types_reads_shapes() -> None:
    typed = [T("float32", (2, 3))]
    assert OPS["aten::shape"].value_from_types is not None
    assert OPS["aten::shape"].value_from_types(typed) == (2, 3)
    assert OPS["aten::ndim"].value_from_types is not None
    assert OPS["aten::ndim"].value_from_types(typed) == 2
    assert OPS["aten::size"].value_from_types is not None
    assert OPS["aten::size"].value_from_types([T("float32", (2, None))]) is NOT_CONSTANT
    assert OPS["prim::len"].value_from_types is not None
    assert OPS["prim::len"].value_from_types([TupleType((INT, INT, INT))]) == 3
