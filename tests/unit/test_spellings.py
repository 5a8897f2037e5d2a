"""The NumPy spellings operator records declare (Note [NumPy spellings] in `ir.ops.spellings`):
each one fits its operator's schema, names an object the installed NumPy has, and is claimed by
one record only; `frontend.resolve`'s tables are built from them."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest

from frontend.resolve import (
    ATTRIBUTES,
    METHODS,
    NUMPY_FUNCTIONS,
    function_spelling,
    lookup,
    spelling_tables,
)
from ir.errors import IRError
from ir.ops import OPS, Derivative, OpDef, parse_schema, register_op
from ir.ops.spellings import (
    ATTRIBUTE,
    METHOD_PREFIX,
    UNARY_UFUNC,
    Parameter,
    Spelling,
    parse_parameters,
    parse_spellings,
)

RECORDED: list[tuple[OpDef, Spelling]] = [
    (op, spelling) for op in OPS.values() for spelling in op.spellings
]
# Functions NumPy added in 2.0; the project supports NumPy 1.26, where they spell nothing.
NUMPY_2_NAMES = {"numpy.concat", "numpy.pow"}


def _resolved(name: str) -> object | None:
    module, _, attribute = name.rpartition(".")
    namespace: object = np
    for part in module.split(".")[1:]:
        namespace = getattr(namespace, part)
    return getattr(namespace, attribute, None)


@pytest.mark.parametrize(
    ("op", "spelling"), RECORDED, ids=[f"{s.name}->{op.name}" for op, s in RECORDED]
)
def test_every_recorded_spelling_is_in_the_frontend_tables(op: OpDef, spelling: Spelling) -> None:
    assert OPS[spelling.op] is op
    names = {argument.name for argument in op.schema.arguments}
    assert {p.argument for p in spelling.params if p.argument is not None} <= names
    short = spelling.name.removeprefix(METHOD_PREFIX)
    if spelling.kind == "attribute":
        assert ATTRIBUTES[short] == op.name
    elif spelling.kind == "method":
        assert METHODS[short] is spelling
    elif spelling.name.startswith("scipy."):  # Note [SciPy spellings] in frontend.resolve
        parts = spelling.name.split(".")
        obj = pytest.importorskip(".".join(parts[:2]))  # scipy.special, scipy.stats
        for attribute in parts[2:]:  # gammaln; norm, logpdf
            obj = getattr(obj, attribute)
        found = function_spelling(obj)
        assert found is not None
        assert found.op == op.name
    elif spelling.name.startswith("numpy."):
        obj = _resolved(spelling.name)
        if obj is None:
            assert np.lib.NumpyVersion(np.__version__) < "2.0.0"
            assert spelling.name in NUMPY_2_NAMES
        else:
            assert NUMPY_FUNCTIONS[obj].op == op.name
    else:  # the project's own function, ``autodiff.tap``: the kernel under its public name
        assert NUMPY_FUNCTIONS[op.kernel] is spelling


def test_no_two_records_claim_a_spelling() -> None:
    claims: dict[tuple[str, object], set[str]] = defaultdict(set)
    for op, spelling in RECORDED:
        key: object = spelling.name
        if spelling.kind == "function":  # one NumPy function under two names is one spelling
            key = _resolved(spelling.name) if spelling.name.startswith("numpy.") else op.kernel
        if key is not None:
            claims[spelling.kind, key].add(op.name)
    shared = {key: ops for key, ops in claims.items() if len(ops) > 1}
    assert not shared


def _record(schema: str, declared: dict[str, str]) -> OpDef:
    parsed = parse_schema(schema)
    return OpDef(
        parsed,
        None,
        None,
        derivative=Derivative.REFUSED,
        spellings=parse_spellings(parsed, declared),
    )


def test_the_tables_refuse_a_spelling_two_records_claim() -> None:
    tanh = _record("test::tanh(Any self) -> Tensor", {"numpy.tanh": UNARY_UFUNC})
    with pytest.raises(IRError, match=r"numpy\.tanh spells both aten::tanh and test::tanh"):
        spelling_tables([OPS["aten::tanh"], tanh])
    flipped = _record("test::flipped(Tensor self) -> Tensor", {"ndarray.T": ATTRIBUTE})
    with pytest.raises(IRError, match=r"ndarray\.T spells both aten::transpose and test::flipped"):
        spelling_tables([OPS["aten::transpose"], flipped])
    summed = _record("test::sum(Tensor self) -> Tensor", {"ndarray.sum": ""})
    with pytest.raises(IRError, match=r"ndarray\.sum spells both aten::sum and test::sum"):
        spelling_tables([OPS["aten::sum"], summed])


def test_aliases_in_one_record_are_one_spelling_named_by_the_first() -> None:
    assert NUMPY_FUNCTIONS[np.abs] is NUMPY_FUNCTIONS[np.absolute]
    assert NUMPY_FUNCTIONS[np.abs].name == "numpy.absolute"
    assert NUMPY_FUNCTIONS[np.conjugate].name == "numpy.conj"
    assert lookup(NUMPY_FUNCTIONS, np.radians).name == "numpy.radians"  # a ufunc of its own


@pytest.mark.parametrize(
    ("declared", "message"),
    [
        (
            {"numpy.twice": "x:self !out factor"},
            "test::twice: spelling numpy.twice fills factor, which the schema lacks",
        ),
        ({"numpy.twice": "!x"}, "test::twice: spelling numpy.twice leaves self unfilled"),
        (
            {"numpy.twice": ATTRIBUTE},
            "test::twice: attribute spelling numpy.twice is not of ndarray",
        ),
    ],
)
def test_registration_refuses_a_spelling_that_does_not_fit(
    declared: dict[str, str], message: str
) -> None:
    with pytest.raises(IRError) as info:
        register_op(
            "test::twice(Tensor self) -> Tensor",
            shape=None,
            derivative=Derivative.REFUSED,
            spellings=declared,
        )
    assert info.value.message == message
    assert "test::twice" not in OPS


def test_a_method_and_an_attribute_leave_the_receiver_to_the_call() -> None:
    schema = parse_schema("test::twice(Tensor self, int times=2) -> Tensor")
    method, attribute = parse_spellings(schema, {"ndarray.twice": "times", "ndarray.t": ATTRIBUTE})
    assert (method.kind, method.method, method.params) == (
        "method",
        True,
        (Parameter("times", "times"),),
    )
    assert (attribute.kind, attribute.method, attribute.params) == ("attribute", True, ())
    with pytest.raises(IRError, match="leaves times unfilled"):
        parse_spellings(
            parse_schema("test::f(Tensor self, int times) -> Tensor"), {"ndarray.f": ATTRIBUTE}
        )


def test_parameter_notation() -> None:
    assert parse_parameters("a:self / b * !out") == (
        Parameter("a", "self", keyword=False),
        Parameter("b", "b"),
        Parameter("out", None, positional=False),
    )
    assert parse_parameters("*shape") == (Parameter("shape", "shape", keyword=False, varargs=True),)
