"""The spelling table of `frontend.resolve`: every entry fits its operator's schema, argument
binding (positional, keyword, packed, defaults, refusals), and Python objects as constants."""

from __future__ import annotations

import builtins

import numpy as np
import pytest
from numpy import tanh

from frontend.resolve import (
    ATTRIBUTES,
    BUILTINS,
    METHODS,
    NUMPY_FUNCTIONS,
    BindError,
    Bound,
    Spelling,
    bind,
    constant_of,
    describe,
    dtype_name,
    is_numpy,
    lookup,
    numpy_name,
)
from ir.ops import OPS
from ir.types import BOOL, FLOAT, INT, NONE, STR, TensorType, TupleType

SPELLINGS: list[Spelling] = [*NUMPY_FUNCTIONS.values(), *METHODS.values()]


@pytest.mark.parametrize("spelling", SPELLINGS, ids=lambda s: f"{s.name}->{s.op}")
def test_every_spelling_fills_its_schema(spelling: Spelling) -> None:
    schema = OPS[spelling.op].schema
    names = {argument.name for argument in schema.arguments}
    filled = {p.argument for p in spelling.params if p.argument is not None}
    assert filled <= names, f"{spelling.name} fills arguments {filled - names} the schema lacks"
    required = {a.name for a in schema.arguments[int(spelling.method) :] if not a.has_default}
    assert required <= filled, f"{spelling.name} leaves {required - filled} unfilled"


def test_attributes_name_single_operand_operators() -> None:
    for op in ATTRIBUTES.values():
        assert all(a.has_default for a in OPS[op].schema.arguments[1:])


def test_functions_are_found_by_identity_under_any_name() -> None:
    assert NUMPY_FUNCTIONS[tanh].op == "aten::tanh"
    assert NUMPY_FUNCTIONS[np.absolute] is NUMPY_FUNCTIONS[np.abs]
    assert NUMPY_FUNCTIONS[np.divide].op == NUMPY_FUNCTIONS[np.true_divide].op == "aten::div"
    assert NUMPY_FUNCTIONS[np.matmul].op == "aten::matmul"
    assert lookup(NUMPY_FUNCTIONS, [1, 2]) is None  # unhashable: in no table
    assert lookup(NUMPY_FUNCTIONS, np.fft.hfft) is None


def test_builtins_keep_their_own_meaning() -> None:
    for builtin in (builtins.max, builtins.min, builtins.abs, builtins.len, builtins.float):
        assert builtin in BUILTINS
        assert lookup(NUMPY_FUNCTIONS, builtin) is None


def test_binding_fills_schema_order_with_defaults() -> None:
    assert bind(NUMPY_FUNCTIONS[np.sum], 1, ["keepdims"]) == [
        Bound("positional", 0),
        Bound("default"),
        Bound("keyword", "keepdims"),
    ]
    assert bind(NUMPY_FUNCTIONS[np.full], 2, ["dtype"]) == [
        Bound("positional", 0),
        Bound("positional", 1),
        Bound("keyword", "dtype"),
    ]


def test_methods_bind_the_receiver_first_and_pack_varargs() -> None:
    reshape = METHODS["reshape"]
    assert bind(reshape, 2, []) == [Bound("receiver"), Bound("packed", 0)]
    assert bind(reshape, 1, []) == [Bound("receiver"), Bound("positional", 0)]
    assert bind(METHODS["transpose"], 0, []) == [Bound("receiver"), Bound("default")]
    assert bind(METHODS["clip"], 0, ["max", "min"]) == [
        Bound("receiver"),
        Bound("keyword", "min"),
        Bound("keyword", "max"),
    ]


def test_varargs_after_other_parameters_always_pack() -> None:
    einsum = NUMPY_FUNCTIONS[np.einsum]
    assert bind(einsum, 2, []) == [Bound("positional", 0), Bound("packed", 1)]
    assert bind(einsum, 4, []) == [Bound("positional", 0), Bound("packed", 1)]
    with pytest.raises(BindError, match="missing required argument 'operands'"):
        bind(einsum, 1, [])


@pytest.mark.parametrize(
    ("spelling", "positional", "keywords", "message", "at"),
    [
        (
            NUMPY_FUNCTIONS[np.tanh],
            2,
            [],
            "numpy.tanh() takes 1 positional argument but 2 were given",
            1,
        ),
        (NUMPY_FUNCTIONS[np.sum], 4, [], "argument 'dtype' of numpy.sum is not supported", 2),
        (
            NUMPY_FUNCTIONS[np.sum],
            1,
            ["out"],
            "argument 'out' of numpy.sum is not supported",
            "out",
        ),
        (
            NUMPY_FUNCTIONS[np.sum],
            1,
            ["axes"],
            "numpy.sum() got an unexpected keyword argument 'axes'",
            "axes",
        ),
        (
            NUMPY_FUNCTIONS[np.sum],
            2,
            ["axis"],
            "numpy.sum() got multiple values for argument 'axis'",
            "axis",
        ),
        (
            NUMPY_FUNCTIONS[np.tanh],
            0,
            ["x"],
            "numpy.tanh() got an unexpected keyword argument 'x'",
            "x",
        ),
        (NUMPY_FUNCTIONS[np.where], 1, [], "numpy.where() missing required argument 'x'", None),
        (
            NUMPY_FUNCTIONS[np.mean],
            1,
            ["where"],
            "argument 'where' of numpy.mean is not supported",
            "where",
        ),
        (METHODS["astype"], 0, [], "ndarray.astype() missing required argument 'dtype'", None),
    ],
)
def test_binding_errors_name_the_function_and_the_argument(
    spelling: Spelling, positional: int, keywords: list[str], message: str, at: int | str | None
) -> None:
    with pytest.raises(BindError) as info:
        bind(spelling, positional, keywords)
    assert (info.value.message, info.value.at) == (message, at)


def test_numpy_names_of_schema_arguments() -> None:
    assert numpy_name(NUMPY_FUNCTIONS[np.sum], "self") == "a"
    assert numpy_name(NUMPY_FUNCTIONS[np.concatenate], "tensors") == "arrays"
    assert numpy_name(METHODS["clip"], "a_max") == "max"


def test_python_objects_as_constants() -> None:
    assert constant_of(None) == (None, NONE)
    assert constant_of(True) == (True, BOOL)
    assert constant_of(3) == (3, INT)
    assert constant_of(np.pi) == (np.pi, FLOAT)
    assert constant_of(np.float64(0.5)) == (0.5, FLOAT)
    assert constant_of("float32") == ("float32", STR)
    assert constant_of((1, (2.0, None))) == (
        (1, (2.0, None)),
        TupleType((INT, TupleType((FLOAT, NONE)))),
    )
    value, ty = constant_of(1j)  # a 0-d complex128 array: Note [Python complex numbers]
    assert value == 1j
    assert ty == TensorType(dtype="complex128", shape=())
    for unsupported in ([1, 2], np.ones(2), np.float32(1.0), (1, [2]), object()):
        assert constant_of(unsupported) is None


def test_dtypes_become_their_names() -> None:
    assert dtype_name(np.float32) == "float32"
    assert dtype_name(np.dtype("int32")) == "int32"
    assert (dtype_name(float), dtype_name(int), dtype_name(bool)) == ("float64", "int64", "bool")
    assert constant_of(np.int64) == ("int64", STR)
    assert dtype_name(np.str_) is None
    assert dtype_name(3) is None


def test_descriptions_for_messages() -> None:
    assert describe(np) == "numpy"
    assert describe(np.fft.fft) == "numpy.fft.fft"
    assert describe(builtins.len) == "len"
    assert describe(test_descriptions_for_messages).endswith(
        "test_resolve.test_descriptions_for_messages"
    )
    for numpy_object in (np.linalg, np.linalg.norm, np.tanh):
        assert is_numpy(numpy_object)
    for other in (builtins.len, describe):
        assert not is_numpy(other)


def test_aliases_spell_one_operator() -> None:
    pairs = [
        (np.amax, np.max),
        (np.amin, np.min),
        (np.around, np.round),
        (np.radians, np.deg2rad),
        (np.degrees, np.rad2deg),
    ]
    for alias, name in pairs:
        assert NUMPY_FUNCTIONS[alias].op == NUMPY_FUNCTIONS[name].op
    assert NUMPY_FUNCTIONS[np.negative].op == "aten::neg"
    assert NUMPY_FUNCTIONS[np.fabs].op == "aten::fabs"
    assert NUMPY_FUNCTIONS[np.not_equal].op == "aten::ne"


def test_ddof_and_keyword_only_parameters_bind() -> None:
    assert bind(NUMPY_FUNCTIONS[np.var], 2, ["ddof", "keepdims"]) == [
        Bound("positional", 0),
        Bound("positional", 1),
        Bound("keyword", "keepdims"),
        Bound("keyword", "ddof"),
    ]
    assert bind(METHODS["std"], 0, ["ddof"]) == [
        Bound("receiver"),
        Bound("default"),
        Bound("default"),
        Bound("keyword", "ddof"),
    ]
    with pytest.raises(BindError, match=r"argument 'prepend' of numpy\.diff is not supported"):
        bind(NUMPY_FUNCTIONS[np.diff], 1, ["prepend"])
    with pytest.raises(BindError, match=r"argument 'copy' of numpy\.nan_to_num is not supported"):
        bind(NUMPY_FUNCTIONS[np.nan_to_num], 1, ["copy"])


def test_linalg_functions_resolve_by_identity() -> None:
    assert NUMPY_FUNCTIONS[np.linalg.norm].name == "numpy.linalg.norm"
    assert NUMPY_FUNCTIONS[np.linalg.eigh].op == "aten::linalg_eigh"
    assert lookup(NUMPY_FUNCTIONS, np.linalg.qr) is None
    with pytest.raises(
        BindError, match=r"argument 'hermitian' of numpy\.linalg\.svd is not supported"
    ):
        bind(NUMPY_FUNCTIONS[np.linalg.svd], 1, ["hermitian"])
