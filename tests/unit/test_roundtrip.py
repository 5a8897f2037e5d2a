"""print(parse(text)) == text for canonical IR, and print -> parse -> print is the identity for
random graphs built through the Graph API (Note [Print-time names])."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from ir.graph import Block, Graph, Value
from ir.parser import parse_graph, parse_module
from ir.printer import print_graph, print_module
from ir.source import Source, SourceRange
from ir.types import DTYPE_TO_NAME, NAMED_TYPES, ListType, OptionalType, TensorType, TupleType, Type
from tests.helpers import check_roundtrip

CORPUS = {
    "straight_line": """\
graph @f(%x : Float(3, 4), %w : Float(4)):
  %2 : float = prim::Constant[value=2.]()
  %3 : Float(3, 4) = aten::mul(%x, %w)  # model.py:4:8
  %4 : Float(3, 4) = aten::add(%3, %2)
  return (%4)
""",
    "if_and_loop": """\
graph @f(%x : Tensor, %c : bool, %n : int):
  %r : Tensor = prim::If(%c)
    block0():
      %a : Tensor = aten::neg(%x)  # f.py:3:12
      -> (%a)
    block1():
      -> (%x)
  %out : Tensor = prim::Loop(%n, %c, %r)
    block0(%i : int, %h : Tensor):
      %h.1 : Tensor = aten::mul(%h, %h)
      %more : bool = aten::lt(%i, %n)
      -> (%more, %h.1)
  return (%out)
""",
    "nested_if_in_loop_in_if": """\
graph(%c : bool, %n : int, %x : Double(*, 4, requires_grad=1)):
  %r : Double(*, 4) = prim::If(%c)
    block0():
      %l : Double(*, 4) = prim::Loop(%n, %c, %x)
        block0(%i : int, %h : Double(*, 4)):
          %k : Double(*, 4) = prim::If(%c)
            block0():
              %8 : Double(*, 4) = aten::exp(%h)
              -> (%8)
            block1():
              -> (%h)
          -> (%c, %k)
      -> (%l)
    block1():
      -> (%x)
  return (%r)
""",
    "grad_of": """\
graph @df(%dy : Tensor, %x : Tensor, %w : Tensor, %y : Tensor):
  %dh : Tensor = prim::GradOf[name="aten::tanh"](%dy)
    block0():
      %5 : int = prim::Constant[value=1]()
      %6 : Tensor = aten::mul(%y, %y)
      %7 : Tensor = aten::rsub(%6, %5)
      %8 : Tensor = aten::mul(%dy, %7)
      -> (%8)
  %dx : Tensor, %dw : Tensor = prim::GradOf[name="aten::mul"](%dh)
    block0():
      %11 : Tensor = aten::mul(%dh, %w)
      %12 : Tensor = aten::mul(%dh, %x)
      -> (%11, %12)
  %zero : Tensor = prim::AutogradZero()
  %dx.1 : Tensor = prim::AutogradAdd(%dx, %zero)
  return (%dx.1, %dw)
""",
    "constants_of_every_kind": """\
graph @constants():
  %0 : NoneType = prim::Constant[value=None]()
  %1 : bool = prim::Constant[value=True]()
  %2 : bool = prim::Constant[value=False]()
  %3 : int = prim::Constant[value=-7]()
  %4 : float = prim::Constant[value=2.]()
  %5 : float = prim::Constant[value=1e-05]()
  %6 : float = prim::Constant[value=-inf]()
  %7 : float = prim::Constant[value=nan]()
  %8 : float = prim::Constant[value=-0.]()
  %9 : str = prim::Constant[value="say \\"hi\\"\\n\\u00e9"]()
  %10 : int[] = prim::Constant[value=[1, 2, 3]]()
  %11 : (int) = prim::Constant[value=(1,)]()
  %12 : (int, str) = prim::Constant[value=(1, "a")]()
  %13 : () = prim::Constant[value=()]()
  %14 : Any = prim::Constant[value=[[], [(1.5, None)]]]()
  %15 : Double(2, 3) = prim::Constant[value=tensor<Double(2, 3)>[1., 2., 3., 4., 5., 6.5]]()
  %16 : Long() = prim::Constant[value=tensor<Long()>[3]]()
  %17 : Bool(2) = prim::Constant[value=tensor<Bool(2)>[True, False]]()
  %18 : Float(0) = prim::Constant[value=tensor<Float(0)>[]]()
  %19 : Float(1) = prim::Constant[value=tensor<Float(1)>[0.10000000149011612]]()
  return (%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19)
""",
    "tuples_lists_optionals": """\
graph @t(%xs : Tensor[], %o : int?, %p : (Tensor, (int, float)[])):
  %n : int = aten::len(%xs)
  %u : Tensor, %v : (int, float)[] = prim::TupleUnpack(%p)
  prim::RaiseException[msg="unreachable"](%n)
  return (%u, %v, %o)
""",
    "source_comments": """\
graph @f(%x : Tensor):
  %y : Tensor = aten::neg(%x)  # <string>:1:1
  %z : Tensor = aten::exp(%y)  # C:\\src\\my model.py:120:33
  return (%z)
""",
}


@pytest.mark.parametrize("name", list(CORPUS))
def test_canonical_text_round_trips(name: str) -> None:
    check_roundtrip(CORPUS[name])


def test_module_of_corpus_graphs_round_trips() -> None:
    names = ["straight_line", "nested_if_in_loop_in_if", "grad_of", "constants_of_every_kind"]
    text = "\n".join(CORPUS[name] for name in names)

    module = parse_module(text)

    assert print_module(module.values()) == text


def test_constants_keep_their_values() -> None:
    g = parse_graph(CORPUS["constants_of_every_kind"])
    values = [node.attrs["value"] for node in g.nodes()]

    assert values[:6] == [None, True, False, -7, 2.0, 1e-05]
    assert values[9] == 'say "hi"\né'
    assert values[11:14] == [(1,), (1, "a"), ()]
    assert values[14] == [[], [(1.5, None)]]
    np.testing.assert_array_equal(values[15], [[1, 2, 3], [4, 5, 6.5]])
    assert values[19].dtype == np.float32
    assert values[19][0] == np.float32(0.1)


@pytest.mark.parametrize(
    "value",
    [1j, complex(-0.0, np.inf), np.complex64(1), np.array([1j, 2.5 - 0.5j]), np.complex128(1j)],
    ids=repr,
)
def test_complex_attributes_read_back_equal(value: object) -> None:
    # Note [Python complex numbers] in `ir.types`: a literal ``1j`` is a 0-d complex128 array.
    g = Graph()
    g.insert_constant(value, TensorType())
    text = print_graph(g)

    (node,) = parse_graph(text).nodes()
    read = node.attrs["value"]
    assert np.asarray(read).dtype == np.asarray(value).dtype
    np.testing.assert_array_equal(read, value)
    assert print_graph(parse_graph(text)) == text


@pytest.mark.parametrize(
    "value",
    [
        {"a": 1},
        {1},
        b"x",
        np.array(["a"]),
        np.array([1], "u2"),
    ],
    ids=repr,
)
def test_attributes_without_a_text_form_are_refused(value: object) -> None:
    g = Graph()
    g.insert_constant(value, TensorType())

    with pytest.raises((TypeError, ValueError), match=r"cannot print|unsupported dtype"):
        print_graph(g)


# -- random graphs -------------------------------------------------------------------------

HINTS = [None, None, "x", "y", "x.1", "x.2.3", "a.b", "_t", "grad_w", "3", "", "a b", "é"]
KINDS = ["aten::add", "aten::mul", "prim::If", "prim::Loop", "prim::Constant", "my_ns::op.v2"]
FILENAMES = ["model.py", "<string>", "dir/a b.py", "C:\\x\\m.py"]

tensor_types = st.builds(
    TensorType,
    dtype=st.none() | st.sampled_from(sorted(DTYPE_TO_NAME)),
    shape=st.none() | st.lists(st.none() | st.integers(0, 64), max_size=3).map(tuple),
    requires_grad=st.none() | st.booleans(),
)
types: st.SearchStrategy[Type] = st.recursive(
    tensor_types | st.sampled_from(sorted(NAMED_TYPES.values(), key=str)),
    lambda inner: (
        st.builds(ListType, inner)
        | st.builds(OptionalType, inner)
        | st.lists(inner, max_size=3).map(lambda elems: TupleType(tuple(elems)))
    ),
    max_leaves=4,
)

arrays = hnp.arrays(
    dtype=st.sampled_from(
        [
            *("float64", "float32", "float16", "complex128", "complex64"),
            *("int64", "int32", "uint8", "bool"),
        ]
    ),
    shape=hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3),
)
attr_values: st.SearchStrategy[Any] = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8) | arrays,
    lambda inner: st.lists(inner, max_size=3) | st.lists(inner, max_size=3).map(tuple),
    max_leaves=4,
)
attr_dicts = st.dictionaries(
    st.sampled_from(["value", "name", "dim", "k_2", "_x"]), attr_values, max_size=2
)

locations = st.builds(
    SourceRange.location,
    st.sampled_from(FILENAMES),
    st.integers(1, 10_000),
    st.integers(1, 200),
)
frontend_ranges = st.builds(
    lambda line, col: SourceRange(Source("x = 1\n" * line, "f.py"), line, col, line, col + 1),
    st.integers(1, 50),
    st.integers(1, 5),
)


def _fill(draw: st.DrawFn, graph: Graph, block: Block, visible: list[Value], depth: int) -> None:
    """Append random nodes to ``block`` that read values in ``visible``; recurse into blocks."""
    visible = list(visible)
    for _ in range(draw(st.integers(0, 3))):
        inputs = draw(st.lists(st.sampled_from(visible), max_size=3)) if visible else []
        out_types = draw(st.lists(types, max_size=2))
        node = graph.create(draw(st.sampled_from(KINDS)), inputs, out_types, draw(attr_dicts))
        node.source_range = draw(st.none() | locations | frontend_ranges)
        for out in node.outputs:
            out.name_hint = draw(st.sampled_from(HINTS))
        block.append_node(node)
        if depth < 2:
            for _ in range(draw(st.integers(0, 2))):
                inner = node.add_block()
                params = [
                    inner.add_input(draw(types), draw(st.sampled_from(HINTS)))
                    for _ in range(draw(st.integers(0, 2)))
                ]
                _fill(draw, graph, inner, visible + params, depth + 1)
        visible.extend(node.outputs)
    if visible:
        for result in draw(st.lists(st.sampled_from(visible), max_size=3)):
            block.register_output(result)


@st.composite
def graphs(draw: st.DrawFn) -> Graph:
    graph = Graph(draw(st.sampled_from([None, "f", "df", "", "<lambda>", "model.forward"])))
    for _ in range(draw(st.integers(0, 3))):
        graph.add_input(draw(types), draw(st.sampled_from(HINTS)))
    _fill(draw, graph, graph.block, list(graph.inputs), depth=0)
    return graph


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs())
def test_print_parse_print_is_the_identity(graph: Graph) -> None:
    printed = print_graph(graph)

    assert print_graph(parse_graph(printed)) == printed


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(graphs(), min_size=1, max_size=3))
def test_modules_round_trip(graph_list: list[Graph]) -> None:
    named = [g for g in graph_list if g.name]
    if len({g.name for g in named}) != len(named):
        return  # a module cannot hold two graphs of one name
    printed = print_module(graph_list)

    assert print_module(parse_module(printed).values()) == printed
