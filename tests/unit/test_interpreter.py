"""The interpreter runs IR text on NumPy values: straight-line code, control flow with
TorchScript's semantics, autograd glue, errors that point at the node, and early freeing."""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from ir.errors import InterpreterError
from ir.graph import Graph
from ir.interpreter import AUTOGRAD_ZERO, Executable, run_graph
from ir.ops import OPS, Derivative, OpDef, parse_schema
from ir.parser import parse_graph
from ir.types import ANY, INT


def run(text: str, *args: Any) -> list[Any]:
    return run_graph(parse_graph(text), *args)


def test_straight_line_code_equals_numpy() -> None:
    x, w = np.arange(6.0).reshape(2, 3), np.linspace(-1, 1, 3)
    h, y = run(
        """graph @f(%x : Tensor, %w : Tensor):
  %two : float = prim::Constant[value=2.]()
  %h : Tensor = aten::matmul(%x, %w)
  %y0 : Tensor = aten::mul(%two, %h)
  %y : Tensor = aten::tanh(%y0)
  return (%h, %y)
""",
        x,
        w,
    )
    np.testing.assert_array_equal(h, x @ w)
    np.testing.assert_array_equal(y, np.tanh(2.0 * (x @ w)))


IF_GRAPH = """graph @f(%n : int, %x : Tensor):
  %zero : int = prim::Constant[value=0]()
  %positive : bool = prim::gt(%n, %zero)
  %y : Tensor = prim::If(%positive)
    block0():
      %e : Tensor = aten::exp(%x)
      -> (%e)
    block1():
      %m : Tensor = aten::neg(%x)
      -> (%m)
  return (%y)
"""


@pytest.mark.parametrize(("n", "expected"), [(3, np.exp), (0, np.negative)])
def test_if_runs_the_taken_branch(n: int, expected: Callable[[Any], Any]) -> None:
    x = np.array([0.5, -1.0])
    np.testing.assert_array_equal(run(IF_GRAPH, n, x)[0], expected(x))


def test_if_on_a_numpy_bool() -> None:
    text = """graph @f(%x : Tensor):
  %zero : float = prim::Constant[value=0.]()
  %c : Tensor = aten::gt(%x, %zero)
  %y : int = prim::If(%c)
    block0():
      %a : int = prim::Constant[value=1]()
      -> (%a)
    block1():
      %b : int = prim::Constant[value=2]()
      -> (%b)
  return (%y)
"""
    assert run(text, np.float64(3.0)) == [1]
    assert run(text, np.array(-3.0)) == [2]


LOOP_GRAPH = """graph @f(%n : int, %go : bool, %x : Tensor, %k : int):
  %one : int = prim::Constant[value=1]()
  %y : Tensor, %total : int = prim::Loop(%n, %go, %x, %k)
    block0(%i : int, %acc : Tensor, %t : int):
      %acc.1 : Tensor = aten::mul(%acc, %x)
      %t.1 : int = prim::add(%t, %i)
      %more : bool = prim::Constant[value=True]()
      -> (%more, %acc.1, %t.1)
  return (%y, %total)
"""


def test_loop_carries_values_for_max_trip_count_iterations() -> None:
    y, total = run(LOOP_GRAPH, 4, True, np.array([2.0]), 10)
    np.testing.assert_array_equal(y, [32.0])
    assert total == 10 + 0 + 1 + 2 + 3


def test_loop_with_false_initial_condition_returns_initial_values() -> None:
    x = np.array([2.0])
    y, total = run(LOOP_GRAPH, 4, False, x, 10)
    assert y is x
    assert total == 10


def test_while_loop_stops_when_the_body_says_so() -> None:
    text = """graph @f(%x : float):
  %big : int = prim::Constant[value=9223372036854775807]()
  %true : bool = prim::Constant[value=True]()
  %limit : float = prim::Constant[value=100.]()
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %y : float, %count : int = prim::Loop(%big, %true, %x, %zero)
    block0(%i : int, %v : float, %c : int):
      %v.1 : float = prim::mul(%v, %v)
      %c.1 : int = prim::add(%c, %one)
      %again : bool = prim::lt(%v.1, %limit)
      -> (%again, %v.1, %c.1)
  return (%y, %count)
"""
    assert run(text, 2.0) == [256.0, 3]


def test_loop_inside_a_branch_reads_outer_values() -> None:
    text = """graph @f(%c : bool, %x : Tensor):
  %three : int = prim::Constant[value=3]()
  %true : bool = prim::Constant[value=True]()
  %y : Tensor = prim::If(%c)
    block0():
      %z : Tensor = prim::Loop(%three, %true, %x)
        block0(%i : int, %acc : Tensor):
          %acc.1 : Tensor = aten::add(%acc, %x)
          -> (%true, %acc.1)
      -> (%z)
    block1():
      -> (%x)
  return (%y)
"""
    x = np.array([1.0, 2.0])
    np.testing.assert_array_equal(run(text, True, x)[0], 4 * x)
    assert run(text, False, x)[0] is x


GRAD_OF_GRAPH = """graph @df(%dy : Tensor, %w : Tensor):
  %dx : Tensor = prim::GradOf[name="aten::matmul"](%dy)
    block0():
      %t : Tensor = aten::matmul(%w, %dy)
      -> (%t)
  return (%dx)
"""


def test_grad_of_runs_its_block_for_a_real_gradient() -> None:
    w, dy = np.eye(2), np.array([1.0, 2.0])
    np.testing.assert_array_equal(run(GRAD_OF_GRAPH, dy, w)[0], dy)


def test_grad_of_skips_its_block_when_every_input_is_zero() -> None:
    # The block would fail (matmul of a 3x3 with the sentinel): it must not run.
    assert run(GRAD_OF_GRAPH, AUTOGRAD_ZERO, np.eye(3)) == [AUTOGRAD_ZERO]


def test_autograd_zero_and_autograd_add() -> None:
    text = """graph @f(%a : Tensor, %b : Tensor):
  %z : Tensor = prim::AutogradZero()
  %za : Tensor = prim::AutogradAdd(%z, %a)
  %az : Tensor = prim::AutogradAdd(%a, %z)
  %zz : Tensor = prim::AutogradAdd(%z, %z)
  %ab : Tensor = prim::AutogradAdd(%a, %b)
  return (%za, %az, %zz, %ab)
"""
    a, b = np.array([1.0]), np.array([2.0])
    za, az, zz, ab = run(text, a, b)
    assert za is a
    assert az is a
    assert zz is AUTOGRAD_ZERO
    np.testing.assert_array_equal(ab, [3.0])


def test_tuples_and_variadic_results() -> None:
    text = """graph @f(%a : int, %b : float):
  %t : (int, float) = prim::TupleConstruct(%a, %b)
  %x : int, %y : float = prim::TupleUnpack(%t)
  %u : (int) = prim::TupleConstruct(%a)
  %only : int = prim::TupleUnpack(%u)
  %zero : int = prim::Constant[value=0]()
  %first : int = prim::TupleIndex(%t, %zero)
  return (%t, %y, %only, %first)
"""
    assert run(text, 1, 2.5) == [(1, 2.5), 2.5, 1, 1]


def test_kernel_errors_name_the_operator_node_and_source_line() -> None:
    text = """graph @f(%x : Tensor, %w : Tensor):
  %h : Tensor = aten::matmul(%x, %w)  # model.py:4:8
  return (%h)
"""
    with pytest.raises(InterpreterError) as info:
        run(text, np.ones((2, 3)), np.ones(4))
    message = str(info.value)
    assert "aten::matmul: matmul: Input operand 1 has a mismatch" in message
    assert "while executing %h : Tensor = aten::matmul(%x, %w)" in message
    assert "model.py:4:8" in message
    assert isinstance(info.value.__cause__, ValueError)


def test_errors_inside_blocks_name_the_inner_node() -> None:
    text = IF_GRAPH.replace("aten::exp(%x)", "aten::exp(%x)  # model.py:7:3")
    with pytest.raises(InterpreterError, match=r"aten::exp") as info:
        run(text, 1, "not an array")
    assert "while executing %e : Tensor = aten::exp(%x)" in str(info.value)
    assert str(info.value.source_range) == "model.py:7:3"


def test_wrong_number_of_arguments() -> None:
    with pytest.raises(InterpreterError, match=r"graph @f takes 2 arguments, got 1"):
        run(IF_GRAPH, 1)


def test_unknown_operator_is_refused_when_compiling() -> None:
    graph = parse_graph(
        "graph @f(%x : Tensor):\n  %y : Tensor = aten::frobnicate(%x)\n  return (%y)\n"
    )
    with pytest.raises(InterpreterError, match=r"unknown operator aten::frobnicate"):
        Executable(graph)


def test_an_executable_runs_many_times_and_copies_constant_arrays() -> None:
    graph = Graph("f")
    x = graph.add_input()
    table = graph.insert_constant(np.array([1.0, 2.0]), ANY)
    graph.register_output(graph.insert("aten::add", [x, table]).output)
    graph.register_output(table)
    executable = Executable(graph)
    first_sum, first_table = executable(1.0)
    first_table[0] = 100.0
    second_sum, second_table = executable(np.array([10.0, 20.0]))
    np.testing.assert_array_equal(first_sum, [2.0, 3.0])
    np.testing.assert_array_equal(second_sum, [11.0, 22.0])
    np.testing.assert_array_equal(second_table, [1.0, 2.0])


def test_call_function_calls_a_python_callable() -> None:
    graph = Graph("f")
    x = graph.add_input()
    fn = graph.insert_constant(lambda a, b: (a + b, a * b), ANY)
    two = graph.insert_constant(2, INT)
    node = graph.insert("prim::CallFunction", [fn, x, two], [INT, INT])
    for out in node.outputs:
        graph.register_output(out)
    assert run_graph(graph, 5) == [7, 10]


class Probe:
    """Test-only operators, passed to Executable instead of being registered in OPS."""

    def __init__(self) -> None:
        self.made: list[weakref.ref[np.ndarray]] = []
        self.seen_alive: list[bool] = []
        self.ops = dict(OPS)
        self.ops["test::make"] = OpDef(
            parse_schema("test::make() -> Tensor"), self.make, None, derivative=Derivative.NONE
        )
        self.ops["test::alive"] = OpDef(
            parse_schema("test::alive(Any after) -> bool"),
            self.alive,
            None,
            pure=False,
            derivative=Derivative.NONE,
        )

    def make(self) -> np.ndarray:
        array = np.ones(1000)
        self.made.append(weakref.ref(array))
        return array

    def alive(self, after: Any) -> bool:
        living = self.made[-1]() is not None
        self.seen_alive.append(living)
        return living


def test_a_value_is_freed_after_its_last_use() -> None:
    probe = Probe()
    graph = parse_graph(
        """graph @f():
  %none : NoneType = prim::Constant[value=None]()
  %false : bool = prim::Constant[value=False]()
  %a : Tensor = test::make()
  %s : Tensor = aten::sum(%a, %none, %false)
  %alive : bool = test::alive(%s)
  return (%s, %alive)
"""
    )
    total, alive = Executable(graph, probe.ops)()
    assert total == 1000.0
    assert alive is False


def test_a_value_read_in_a_loop_body_lives_until_the_loop_ends() -> None:
    probe = Probe()
    graph = parse_graph(
        """graph @f():
  %none : NoneType = prim::Constant[value=None]()
  %false : bool = prim::Constant[value=False]()
  %true : bool = prim::Constant[value=True]()
  %two : int = prim::Constant[value=2]()
  %a : Tensor = test::make()
  %flag : bool = prim::Loop(%two, %true, %false)
    block0(%i : int, %f : bool):
      %s : Tensor = aten::sum(%a, %none, %false)
      %inside : bool = test::alive(%s)
      -> (%true, %inside)
  %after : bool = test::alive(%flag)
  return (%after)
"""
    )
    assert Executable(graph, probe.ops)() == [False]
    assert probe.seen_alive == [True, True, False]


def test_unused_values_are_dropped_at_once() -> None:
    probe = Probe()
    graph = parse_graph(
        """graph @f():
  %a : Tensor = test::make()
  %alive : bool = test::alive(%a)
  %b : Tensor = test::make()
  %after : bool = test::alive(%alive)
  return (%after)
"""
    )
    assert Executable(graph, probe.ops)() == [False]
