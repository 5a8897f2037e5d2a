"""The IR text parser: every syntactic form, attribute values, names, comments, several graphs,
and errors that point at the right line and column of the IR text."""

from __future__ import annotations

import math
import sys
import time
from typing import Any

import numpy as np
import pytest

from ir.errors import IRParseError, VerifyError
from ir.graph import Graph
from ir.parser import MAX_DECIMAL_DIGITS, MAX_NESTING, parse_graph, parse_module
from ir.printer import print_graph, print_module
from ir.source import SourceRange
from ir.types import BOOL, FLOAT, INT, TENSOR, TensorType, TupleType
from ir.verify import verify
from tests.helpers import check_roundtrip, parse_ir


def constant(text: str) -> Any:
    """The ``value`` attribute of a prim::Constant written as ``text``."""
    g = parse_graph(f"graph():\n  %c : Any = prim::Constant[value={text}]()\n  return (%c)\n")
    (node,) = g.nodes()
    return node.attrs["value"]


def parse_error(text: str) -> str:
    """The message of the IRParseError that parsing ``text`` (as file t.ir) raises."""
    with pytest.raises(IRParseError) as info:
        parse_module(text, "t.ir")
    return str(info.value)


# -- graphs, nodes and blocks --------------------------------------------------------------


def test_graph_header_inputs_nodes_and_return() -> None:
    g = parse_ir("""
        graph @f(%x : Float(3, 4), %n : int):
          %y : Float(3, 4) = aten::mul(%x, %n)
          return (%y, %x)
    """)

    assert g.name == "f"
    assert [v.ty for v in g.inputs] == [TensorType("float32", (3, 4)), INT]
    (mul,) = g.nodes()
    assert mul.kind == "aten::mul"
    assert mul.inputs == g.inputs
    assert g.outputs == [mul.output, g.inputs[0]]


def test_unnamed_graph_without_inputs_or_outputs() -> None:
    g = check_roundtrip("graph():\n  return ()\n")

    assert g.name is None
    assert not g.inputs
    assert not g.outputs


def test_multiple_outputs_and_zero_output_nodes() -> None:
    g = check_roundtrip(
        "graph(%x : Tensor):\n"
        "  %a : Tensor, %b : int = prim::Pair(%x)\n"
        "  prim::Print(%a, %b)\n"
        "  return (%b)\n"
    )

    pair, show = g.nodes()
    assert [o.ty for o in pair.outputs] == [TENSOR, INT]
    assert not show.outputs
    assert show.inputs == pair.outputs


def test_operators_need_no_registration() -> None:
    g = check_roundtrip(
        "graph(%x : Tensor):\n  %y : Tensor = my_ns::not_registered_yet(%x)\n  return (%y)\n"
    )

    assert next(g.nodes()).kind == "my_ns::not_registered_yet"


def test_nested_blocks_with_parameters_and_results() -> None:
    g = parse_ir("""
        graph @f(%c : bool, %n : int, %x : Tensor):
          %r : Tensor = prim::If(%c)
            block0():
              %l : Tensor = prim::Loop(%n, %x)
                block0(%i : int, %h : Tensor):
                  %s : Tensor = aten::add(%h, %i)
                  -> (%c, %s)
              -> (%l)
            block1():
              -> (%x)
          return (%r)
    """)

    (if_node,) = g.nodes()
    then, orelse = if_node.blocks
    (loop,) = then.nodes()
    (body,) = loop.blocks
    assert [p.name_hint for p in body.inputs] == ["i", "h"]
    assert body.outputs[0] is g.inputs[0]
    assert then.outputs == [loop.output]
    assert orelse.is_empty()
    assert orelse.outputs == [g.inputs[2]]
    assert body.owning_node is loop


def test_indentation_is_not_significant() -> None:
    flat = (
        "graph(%c : bool):\n"
        "%r : int = prim::If(%c)\n"
        "block0():\n"
        "%a : int = prim::Constant[value=1]()\n"
        "-> (%a)\n"
        "return (%r)\n"
    )

    g = parse_graph(flat)

    assert print_graph(g) == (
        "graph(%c : bool):\n"
        "  %r : int = prim::If(%c)\n"
        "    block0():\n"
        "      %a : int = prim::Constant[value=1]()\n"
        "      -> (%a)\n"
        "  return (%r)\n"
    )


def test_missing_final_newline_and_crlf_line_ends() -> None:
    text = "graph(%x : Tensor):\r\n  %y : Tensor = aten::neg(%x)  # m.py:1:2\r\n  return (%y)"

    g = parse_graph(text)

    assert (
        print_graph(g)
        == "graph(%x : Tensor):\n  %y : Tensor = aten::neg(%x)  # m.py:1:2\n  return (%y)\n"
    )


# -- names ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "hint"),
    [
        ("x", "x"),
        ("x.3", "x"),
        ("x.1.2", "x"),
        ("a.b", "a.b"),
        ("_t2", "_t2"),
        ("3", None),
        ("10", None),
        ("é", "é"),
    ],
)
def test_value_names_become_hints(name: str, hint: str | None) -> None:
    g = parse_graph(f"graph(%{name} : Tensor):\n  return (%{name})\n")

    assert g.inputs[0].name_hint == hint


def test_repeated_hints_print_back_with_the_same_suffixes() -> None:
    check_roundtrip(
        "graph(%x : Tensor):\n"
        "  %x.1 : Tensor = aten::neg(%x)\n"
        "  %2 : Tensor = aten::exp(%x.1)\n"
        "  %x.2 : Tensor = aten::mul(%2, %x.1)\n"
        "  return (%x.2)\n"
    )


# -- attributes ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("None", None),
        ("True", True),
        ("False", False),
        ("0", 0),
        ("-3", -3),
        ("123456789012345678901234567890", 123456789012345678901234567890),
        ("2.", 2.0),
        ("-0.5", -0.5),
        ("1e-05", 1e-05),
        ("1e+16", 1e16),
        ("inf", math.inf),
        ("-inf", -math.inf),
        ('"text"', "text"),
        ('"quote \\" and \\\\ and \\n and # and \\u00e9"', 'quote " and \\ and \n and # and é'),
        ("[]", []),
        ("[1, 2.5, None]", [1, 2.5, None]),
        ("()", ()),
        ("(1,)", (1,)),
        ('(1, "a", [True])', (1, "a", [True])),
        ("[[(1, 2)], ()]", [[(1, 2)], ()]),
    ],
)
def test_attribute_values(text: str, value: Any) -> None:
    parsed = constant(text)

    assert parsed == value
    assert type(parsed) is type(value)


def test_attribute_nan() -> None:
    assert math.isnan(constant("nan"))


def test_attribute_negative_zero_keeps_its_sign() -> None:
    assert math.copysign(1.0, constant("-0.")) == -1.0


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("tensor<Double(2, 3)>[1., 2., 3., 4., 5., 6.5]", np.array([[1, 2, 3], [4, 5, 6.5]])),
        ("tensor<Float(2)>[0.1, -inf]", np.array([0.1, -np.inf], dtype=np.float32)),
        ("tensor<Long()>[7]", np.array(7, dtype=np.int64)),
        ("tensor<Int(1, 2)>[-1, 2]", np.array([[-1, 2]], dtype=np.int32)),
        ("tensor<Byte(2)>[0, 255]", np.array([0, 255], dtype=np.uint8)),
        ("tensor<Bool(2)>[True, False]", np.array([True, False])),
        ("tensor<Half(1)>[0.5]", np.array([0.5], dtype=np.float16)),
        ("tensor<Double(0, 3)>[]", np.zeros((0, 3))),
        ("tensor<Double(2)>[1, 2]", np.array([1.0, 2.0])),
        (
            "tensor<ComplexDouble(2)>[complex(1., -2.5), complex(0, inf)]",
            np.array([1 - 2.5j, complex(0, np.inf)]),
        ),
        ("tensor<ComplexFloat()>[complex(0., 1.)]", np.array(1j, dtype=np.complex64)),
    ],
)
def test_tensor_attributes(text: str, expected: np.ndarray[Any, Any]) -> None:
    parsed = constant(text)

    assert isinstance(parsed, np.ndarray)
    assert parsed.dtype == expected.dtype
    assert parsed.shape == expected.shape
    np.testing.assert_array_equal(parsed, expected)


def test_complex_tensor_constant_round_trips() -> None:
    check_roundtrip(
        "graph():\n"
        "  %a : ComplexDouble() = "
        "prim::Constant[value=tensor<ComplexDouble()>[complex(0., 1.)]]()\n"
        "  return (%a)\n"
    )


def test_several_attributes_keep_their_order() -> None:
    g = check_roundtrip(
        "graph(%x : Tensor):\n"
        '  %y : Tensor = aten::sum[dim=[0, 1], keepdim=False, name="s"](%x)\n'
        "  return (%y)\n"
    )

    assert list(next(g.nodes()).attrs.items()) == [
        ("dim", [0, 1]),
        ("keepdim", False),
        ("name", "s"),
    ]


# -- source comments and other comments ----------------------------------------------------


@pytest.mark.parametrize(
    ("comment", "location"),
    [
        ("# model.py:4:8", SourceRange.location("model.py", 4, 8)),
        ("#model.py:4:8", SourceRange.location("model.py", 4, 8)),
        ("# C:\\dir\\a b.py:10:1", SourceRange.location("C:\\dir\\a b.py", 10, 1)),
        ("# <string>:1:1", SourceRange.location("<string>", 1, 1)),
        ("# just a remark", None),
        ("# CHECK: aten::neg", None),
    ],
)
def test_trailing_comment_is_the_node_source_range(
    comment: str, location: SourceRange | None
) -> None:
    text = f"graph(%x : Tensor):\n  %y : Tensor = aten::neg(%x)  {comment}\n  return (%y)\n"
    g = parse_graph(text, "f.ir")

    found = next(g.nodes()).source_range
    if location is not None:
        assert found == location
    else:  # no location: the node's own line of the IR text
        assert found is not None
        assert found.in_ir_text
        assert (str(found), found.end_col) == ("f.ir:2:3", 30)


def test_a_node_without_a_location_comment_points_at_its_ir_line() -> None:
    text = "graph(%x : Tensor):\n  %y : Tensor = aten::neg(%x)\n  return (%y)\n"
    g = parse_graph(text, "f.ir")

    found = next(g.nodes()).source_range
    assert found is not None
    statement = "%y : Tensor = aten::neg(%x)"
    assert found.highlight() == f"      {statement}\n      {'^' * len(statement)}"
    assert print_graph(g) == text  # the printer writes no comment for it


def test_comment_lines_are_ignored_everywhere() -> None:
    text = """\
# RUN: autodiff opt %s -p cse | filecheck %s
# CHECK-LABEL: graph @f(

graph @f(%c : bool, %x : Tensor):  # header remark
  # CHECK: prim::If
  %r : Tensor = prim::If(%c)
    # a comment before a block
    block0():  # block remark
      # CHECK: aten::neg
      %a : Tensor = aten::neg(%x)
# a comment in column 0
      -> (%a)  # result remark
  # a comment before the return
  return (%r)  # return remark
# -----
# between graphs

graph @g():
  return ()
# CHECK-NOT: anything
"""

    module = parse_module(text)

    assert list(module) == ["f", "g"]
    assert print_graph(module["f"]) == (
        "graph @f(%c : bool, %x : Tensor):\n"
        "  %r : Tensor = prim::If(%c)\n"
        "    block0():\n"
        "      %a : Tensor = aten::neg(%x)\n"
        "      -> (%a)\n"
        "  return (%r)\n"
    )


# -- several graphs ------------------------------------------------------------------------


def test_parse_module_keeps_order_and_keys_unnamed_graphs_by_position() -> None:
    text = (
        "graph @df(%g : Tensor):\n  return (%g)\n\n"
        "graph(%x : Tensor):\n  return (%x)\n\n"
        "graph @f(%x : Tensor):\n  return (%x)\n"
    )

    module = parse_module(text)

    assert list(module) == ["df", "1", "f"]
    assert module["1"].name is None
    assert print_module(module.values()) == text


def test_names_are_per_graph() -> None:
    module = parse_module(
        "graph @a(%x : int):\n  return (%x)\ngraph @b(%x : bool):\n  return (%x)\n"
    )

    assert module["a"].inputs[0].ty == INT
    assert module["b"].inputs[0].ty == BOOL


def test_empty_text_is_an_empty_module() -> None:
    assert parse_module("") == {}
    assert parse_module("# only a comment\n\n") == {}


# -- errors --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "graph(%x : Tensor):\n  %y : Tensor = aten::neg(%z)\n  return (%y)\n",
            "t.ir:2:27: error: undefined value '%z'\n"
            "      %y : Tensor = aten::neg(%z)\n"
            "                              ^^",
        ),
        (
            "graph(%x : Tensor):\n  %y : Tensor = aten::neg(%z)\n  %z : Tensor = aten::neg(%x)\n"
            "  return (%y)\n",
            "t.ir:2:27: error: value '%z' is used before its definition",
        ),
        (
            "graph(%x : Tensor):\n  return (%y)\n",
            "t.ir:2:11: error: undefined value '%y'",
        ),
        (
            "graph(%x : Tensor):\n  %x : Tensor = aten::neg(%x)\n  return (%x)\n",
            "t.ir:2:3: error: value '%x' is defined twice (first on line 1)",
        ),
        (
            "graph(%c : bool):\n  %r : int = prim::If(%c)\n    block0():\n"
            "      %r : int = prim::Constant[value=1]()\n      -> (%r)\n  return (%r)\n",
            "t.ir:4:7: error: value '%r' is defined twice (first on line 2)",
        ),
        (
            "graph(%x : Tensor):\n  %y : Tensor = aten::neg(%x\n  return (%y)\n",
            "t.ir:2:29: error: expected ')' or ',', found end of line",
        ),
        (
            "graph(%x : Tensor:\n  return (%x)\n",
            "t.ir:1:18: error: expected ')', ',', '?' or '[', found ':'\n"
            "    graph(%x : Tensor:\n"
            "                     ^",
        ),
        (
            "graph(%x : Tensor):\n  %y : Tensor = neg(%x)\n  return (%y)\n",
            "t.ir:2:17: error: expected an operator like aten::mul, found 'neg'",
        ),
        (
            "graph(%x : Tensor):\n  return (%x) $\n",
            "t.ir:2:15: error: unexpected character '$'",
        ),
        (
            "graph(%x : Tensor):\n  %y : Tensor = aten::neg(%x)\n",
            "t.ir:2:30: error: expected 'return', a block label like block0, a value like %x or"
            " an operator like aten::mul, found end of input",
        ),
        (
            "graph(%x : Foo):\n  return (%x)\n",
            "t.ir:1:12: error: unknown type 'Foo'",
        ),
        (
            "graph(%x : Float(3, y)):\n  return (%x)\n",
            "t.ir:1:12: error: bad dimension 'y' in Float(3, y)",
        ),
        (
            "graph(%c : bool):\n  %r : int = prim::If(%c)\n    block1():\n      -> (%c)\n"
            "  return (%r)\n",
            "t.ir:3:5: error: expected block0, found block1",
        ),
        (
            "graph():\n  %a : int = prim::Constant[value=1, value=2]()\n  return (%a)\n",
            "t.ir:2:38: error: attribute 'value' is given twice",
        ),
        (
            'graph():\n  %a : str = prim::Constant[value="\\q"]()\n  return (%a)\n',
            "t.ir:2:35: error: bad string literal: Invalid \\escape",
        ),
        (
            "graph():\n  %a : Tensor = prim::Constant[value=tensor<Long(3)>[1, 2]]()\n"
            "  return (%a)\n",
            "t.ir:2:38: error: Long(3) needs 3 values, found 2",
        ),
        (
            "graph():\n  %a : Tensor = prim::Constant[value=tensor<Long(2)>[1, 2.5]]()\n"
            "  return (%a)\n",
            "t.ir:2:57: error: 2.5 does not fit a Long tensor",
        ),
        (
            "graph():\n  %a : Tensor = prim::Constant[value=tensor<Byte(1)>[256]]()\n"
            "  return (%a)\n",
            "t.ir:2:38: error: a value is out of range for Byte(1)",
        ),
        (
            "graph():\n  %a : Tensor = prim::Constant[value=tensor<Double(*)>[1.]]()\n"
            "  return (%a)\n",
            "t.ir:2:45: error: a tensor constant needs a dtype and full shape, not Double(*)",
        ),
        (
            "graph():\n  %a : Tensor = prim::Constant[value=tensor<ComplexDouble(1)>[1.]]()\n"
            "  return (%a)\n",
            "t.ir:2:63: error: 1.0 does not fit a ComplexDouble tensor",
        ),
        (
            "graph @f():\n  return ()\ngraph @f():\n  return ()\n",
            "t.ir:3:1: error: a second graph named 'f'",
        ),
    ],
)
def test_errors_point_into_the_ir_text(text: str, message: str) -> None:
    assert parse_error(text).startswith(message)


def test_parse_graph_wants_exactly_one_graph() -> None:
    two = "graph():\n  return ()\n\ngraph():\n  return ()\n"

    with pytest.raises(IRParseError, match="expected exactly one graph, found 2") as info:
        parse_graph(two, "t.ir")
    assert str(info.value).startswith("t.ir:4:1: ")
    with pytest.raises(IRParseError, match="expected exactly one graph, found 0"):
        parse_graph("# nothing here\n")


@pytest.mark.parametrize(
    "text",
    [
        "graph",
        "graph(",
        "graph(%x",
        "graph(%x :",
        "graph(%x : Tensor)",
        "graph(%x : Tensor):\n  %y",
        "graph(%x : Tensor):\n  %y : Tensor = aten::neg[",
        "graph(%x : Tensor):\n  %y : Tensor = aten::neg[v=](%x)\n  return (%y)\n",
        "graph(%x : Tensor):\n  %y : Tensor = aten::neg[v=(1)](%x)\n  return (%y)\n",
        "graph(%c : bool):\n  %r : int = prim::If(%c)\n    block0():\n      -> (%c)\n",
        "return (%x)\n",
        "\x00",
        '"unterminated',
    ],
)
def test_malformed_text_raises_only_ir_parse_errors(text: str) -> None:
    message = parse_error(text)

    assert message.startswith("t.ir:")
    assert ": error: " in message


# -- scale ---------------------------------------------------------------------------------


def _chain(length: int) -> str:
    lines = ["graph @long(%x : Float(3, 4), %w : Float(3, 4)):"]
    previous = "x"
    for i in range(length):
        lines.append(f"  %v{i} : Float(3, 4) = aten::add(%{previous}, %w)  # m.py:{i + 1}:4")
        previous = f"v{i}"
    lines.append(f"  return (%{previous})")
    return "\n".join(lines) + "\n"


def test_ten_thousand_nodes_parse_quickly() -> None:
    text = _chain(10_000)

    start = time.perf_counter()
    g = parse_graph(text)
    elapsed = time.perf_counter() - start

    assert print_graph(g) == text
    assert elapsed < 20, f"parsing 10,000 nodes took {elapsed:.1f}s"


def _nested(depth: int) -> str:
    lines = ["graph @deep(%c : bool, %x : Tensor):"]
    pad = "  "
    for level in range(depth):
        lines += [f"{pad}%r{level} : Tensor = prim::If(%c)", f"{pad}  block0():"]
        pad += "    "
    lines.append(f"{pad}%z : Tensor = aten::neg(%x)")
    for level in reversed(range(depth)):
        lines.append(f"{pad}-> (%{'z' if level == depth - 1 else f'r{level + 1}'})")
        pad = pad[:-4]
    lines.append("  return (%r0)")
    return "\n".join(lines) + "\n"


def test_deep_block_nesting_stays_within_the_recursion_limit() -> None:
    text = _nested(150)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(400)
    try:
        g = parse_graph(text)
    finally:
        sys.setrecursionlimit(limit)

    assert print_graph(g) == text
    assert sum(1 for _ in g.all_nodes()) == 151


def test_parsed_graph_is_a_plain_graph() -> None:
    g = parse_ir("""
        graph(%t : (Tensor, float)):
          return (%t)
    """)

    assert isinstance(g, Graph)
    assert g.inputs[0].ty == TupleType((TENSOR, FLOAT))


# -- limits: Note [Limits of IR text] ------------------------------------------------------


def test_blocks_nested_past_the_limit_are_a_located_error() -> None:
    assert sum(1 for _ in parse_graph(_nested(MAX_NESTING)).all_nodes()) == MAX_NESTING + 1
    text = _nested(3000)  # was a RecursionError in the verifier and every pass
    message = parse_error(text)
    line = 2 * MAX_NESTING + 3  # the block0 line of the If at depth MAX_NESTING + 1
    assert message.splitlines()[0] == (
        f"t.ir:{line}:{5 + 4 * MAX_NESTING}: error: blocks nested more than {MAX_NESTING} "
        "levels deep"
    )
    assert text.splitlines()[line - 1].strip() == "block0():"


def _deep_type(depth: int) -> str:
    return "(" * depth + "Tensor" + ")" * depth


def test_types_nested_past_the_limit_are_a_located_error() -> None:
    deepest = parse_graph(f"graph(%t : {_deep_type(MAX_NESTING)}):\n  return (%t)\n")
    assert str(deepest.inputs[0].ty) == _deep_type(MAX_NESTING)
    text = f"graph(%t : {_deep_type(3000)}):\n  return (%t)\n"  # was a RecursionError
    first = parse_error(text).splitlines()[0]
    assert first == f"t.ir:1:3012: error: a type nested more than {MAX_NESTING} levels deep"


@pytest.mark.parametrize(("open_", "close"), [("[", "]"), ("(", ",)")])
def test_attribute_values_nested_past_the_limit_are_a_located_error(open_: str, close: str) -> None:
    assert constant(open_ * MAX_NESTING + "1" + close * MAX_NESTING) is not None
    deep = open_ * 3000 + "1" + close * 3000  # was a RecursionError
    message = parse_error(f"graph():\n  %c : Any = prim::Constant[value={deep}]()\n  return (%c)\n")
    lines = message.splitlines()
    assert lines[0] == (
        f"t.ir:2:29: error: an attribute value nested more than {MAX_NESTING} levels deep"
    )
    assert len(lines) == 3
    assert max(len(line) for line in lines) < 200  # the 6,000-character line is cut


def test_an_integer_of_too_many_decimal_digits_is_a_located_error() -> None:
    assert constant("9" * MAX_DECIMAL_DIGITS) == int("9" * MAX_DECIMAL_DIGITS)
    digits = "9" * (MAX_DECIMAL_DIGITS + 1)  # was Python's ValueError about int conversion
    message = parse_error(
        f"graph():\n  %c : int = prim::Constant[value={digits}]()\n  return (%c)\n"
    )
    assert message.splitlines()[0] == (
        f"t.ir:2:35: error: an integer of {MAX_DECIMAL_DIGITS + 1} decimal digits; more than "
        f"{MAX_DECIMAL_DIGITS} must be written in hexadecimal (0x...)"
    )


@pytest.mark.parametrize(
    "value",
    [7**20_000, -(7**20_000), 2**14_001, 255],
    ids=["7^20000", "-7^20000", "2^14001", "255"],
)
def test_huge_integers_print_in_hexadecimal_and_read_back(value: int) -> None:
    g = Graph("big")
    g.register_output(g.insert_constant(value, INT))
    text = print_graph(g)
    assert ("0x" in text) == (value.bit_length() > 14_000)
    (node,) = parse_graph(text).nodes()
    assert node.attrs["value"] == value
    assert constant("0xff") == 255
    assert constant("-0X1F") == -31


def test_a_dimension_of_too_many_digits_is_a_located_error() -> None:
    message = parse_error(f"graph(%x : Double({'9' * 5000})):\n  return (%x)\n")
    assert message.startswith("t.ir:1:12: error: bad dimension '999")


def test_a_location_comment_with_a_huge_line_number_is_a_remark() -> None:
    g = parse_graph(
        f"graph(%x : Tensor):\n  %y : Tensor = aten::neg(%x)  # f.py:{'9' * 5000}:1\n"
        "  return (%y)\n"
    )
    (node,) = g.nodes()
    assert node.source_range.line == 2  # its line of the IR text, not a ValueError


# -- found by tests/property/ir_text.py ------------------------------------------------------


@pytest.mark.parametrize(
    ("declared", "value"),
    [
        ("int", "[[10]]"),
        ("float", "[[2.]]"),
        ("bool", "[1]"),
        ("(int, int)", "(1,)"),
        ("int[]", "3"),
    ],
)
def test_a_constant_whose_value_its_type_cannot_hold_is_a_located_verifier_error(
    declared: str, value: str
) -> None:
    # Constant propagation and shape propagation took the type at its word and failed with a
    # TypeError deep inside a pass.
    line = f"%c : {declared} = prim::Constant[value={value}]()"
    with pytest.raises(VerifyError) as info:
        verify(parse_graph(f"graph():\n  {line}\n  return (%c)\n", "t.ir"))
    lines = str(info.value).splitlines()
    assert lines[0] == f"t.ir:2:3: error: a constant of type {declared} cannot hold {value}"
    assert lines[-2:] == [f"      {line}", "      " + "^" * len(line)]


def test_verifier_errors_about_a_return_point_at_its_line() -> None:
    text = (
        "graph(%c : bool, %x : Tensor):\n"
        "  %r : Tensor = prim::If(%c)\n"
        "  block0():\n"
        "    %y : Tensor = aten::neg(%x)\n"
        "    -> (%y)\n"
        "  block1():\n"
        "    %z : Tensor = aten::neg(%x)\n"
        "    -> (%z)\n"
        "  return (%y)\n"
    )
    with pytest.raises(VerifyError) as info:
        verify(parse_graph(text, "t.ir"))
    # It had no location at all (a graph's return has no node whose line it could borrow).
    lines = str(info.value).splitlines()
    assert lines[0] == "t.ir:9:3: error: operand 0: %y is used outside the block that defines it"
    assert lines[-2:] == ["      return (%y)", "      ^^^^^^^^^^^"]
    inner = parse_graph(text.replace("-> (%z)", "-> (%y)"), "t.ir")
    with pytest.raises(VerifyError, match=r"^t.ir:8:5: error: operand 0: %y is used outside"):
        verify(inner)  # (it pointed at the prim::If)


def test_a_form_feed_in_a_line_does_not_shift_the_line_an_error_shows() -> None:
    message = parse_error("graph(%x : Tensor):\x0c\n  %y : Tensor = aten::neg(%x)\n  return (%z)\n")
    assert message.splitlines() == [
        "t.ir:3:11: error: undefined value '%z'",
        "      return (%z)",
        "              ^^",
    ]
