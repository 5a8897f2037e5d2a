"""Lambda lifting: the Gradient index lists on small hand-written graphs (TorchScript's
testDifferentiate), the shape of f and df, and the lambda-lift module pass."""

from __future__ import annotations

import textwrap

import pytest

from autodiff.errors import DifferentiationError
from autodiff.gradient import Gradient
from autodiff.lambda_lift import lambda_lift
from ir.graph import Graph
from ir.parser import parse_module
from ir.verify import verify
from passes.registry import run_module_passes
from tests.helpers import assert_ir, parse_ir

EXAMPLE = """
graph @f(%x : Double(3, 4), %y : Double(4)):
  %a : Double(3, 4) = aten::mul(%x, %y)
  %t : Double(3, 4) = aten::tanh(%a)
  %none : NoneType = prim::Constant[value=None]()
  %false : bool = prim::Constant[value=False]()
  %s : Double() = aten::sum(%t, %none, %false)
  %dx : Double(3, 4), %dy : Double(4) = prim::Reverse[output_vjps=[0], input_grads=[0, 1]]()
    block0(%ds : Double()):
      %dt : Double(3, 4) = prim::GradOf[name="aten::sum"](%ds)
        block0():
          %shape : (int, int) = prim::Constant[value=(3, 4)]()
          %g : Double(3, 4) = aten::broadcast_to(%ds, %shape)
          -> (%g)
      %da : Double(3, 4) = prim::GradOf[name="aten::tanh"](%dt)
        block0():
          %one : float = prim::Constant[value=1.]()
          %sq : Double(3, 4) = aten::mul(%t, %t)
          %d : Double(3, 4) = aten::sub(%one, %sq)
          %g.1 : Double(3, 4) = aten::mul(%dt, %d)
          -> (%g.1)
      %dx.1 : Double(3, 4), %dy.1 : Double(4) = prim::GradOf[name="aten::mul"](%da)
        block0():
          %gx : Double(3, 4) = aten::mul(%da, %y)
          %gy0 : Double(3, 4) = aten::mul(%da, %x)
          %size : (int) = prim::Constant[value=(4,)]()
          %gy : Double(4) = aten::sum_to_size(%gy0, %size)
          -> (%gx, %gy)
      -> (%dx.1, %dy.1)
  return (%s)
"""


def lift(text: str) -> Gradient:
    gradient = lambda_lift(parse_ir(text))
    verify(gradient.f)
    verify(gradient.df)
    return gradient


def index_lists(gradient: Gradient) -> tuple[object, ...]:
    return (
        gradient.f_real_outputs,
        gradient.df_input_vjps,
        gradient.df_input_captured_inputs,
        gradient.df_input_captured_outputs,
        gradient.df_output_vjps,
    )


def test_example_index_lists() -> None:
    gradient = lift(EXAMPLE)
    assert index_lists(gradient) == (1, (0,), (0, 1), (1,), (0, 1))
    assert [v.name_hint for v in gradient.f.outputs] == ["s", "t"]
    assert [v.name_hint for v in gradient.df.inputs] == ["ds", "x", "y", "t"]
    (packed,) = gradient.df.outputs  # one tuple of the gradients, as TorchScript's df returns
    assert packed.node.kind == "prim::TupleConstruct"
    assert len(packed.node.inputs) == 2


def test_example_f_is_the_forward_code() -> None:
    gradient = lift(EXAMPLE)
    assert_ir(
        gradient.f,
        """
        graph @f(%x : Double(3, 4), %y : Double(4)):
          %a : Double(3, 4) = aten::mul(%x, %y)
          %t : Double(3, 4) = aten::tanh(%a)
          %none : NoneType = prim::Constant[value=None]()
          %false : bool = prim::Constant[value=False]()
          %s : Double() = aten::sum(%t, %none, %false)
          return (%s, %t)
        """,
    )
    assert gradient.df.name == "df"


def test_captured_output_is_not_output_again() -> None:
    gradient = lift(
        """
        graph @g(%x : Double(3)):
          %y : Double(3) = aten::tanh(%x)
          %dx : Double(3) = prim::Reverse[output_vjps=[0], input_grads=[0]]()
            block0(%dy : Double(3)):
              %m : Double(3) = aten::mul(%dy, %y)
              -> (%m)
          return (%y)
        """
    )
    assert index_lists(gradient) == (1, (0,), (), (0,), (0,))
    assert len(gradient.f.outputs) == 1


def test_output_listed_twice_is_read_at_its_first_index() -> None:
    gradient = lift(
        """
        graph @g(%x : Double(3)):
          %n : Double(3) = aten::neg(%x)
          %y : Double(3) = aten::tanh(%x)
          %dx : Double(3) = prim::Reverse[output_vjps=[2], input_grads=[0]]()
            block0(%dy : Double(3)):
              %m : Double(3) = aten::mul(%dy, %y)
              -> (%m)
          return (%n, %y, %y)
        """
    )
    assert index_lists(gradient) == (3, (2,), (), (1,), (0,))


def test_input_that_is_also_an_output_is_captured_as_an_input() -> None:
    gradient = lift(
        """
        graph @g(%x : Double(3)):
          %y : Double(3) = aten::mul(%x, %x)
          %dx : Double(3) = prim::Reverse[output_vjps=[0], input_grads=[0]]()
            block0(%dy : Double(3)):
              %m : Double(3) = aten::mul(%dy, %x)
              %g : Double(3) = aten::add(%m, %m)
              -> (%g)
          return (%y, %x)
        """
    )
    assert index_lists(gradient) == (2, (0,), (0,), (), (0,))
    assert len(gradient.f.outputs) == 2


def test_unused_input_is_not_captured() -> None:
    gradient = lift(
        """
        graph @g(%unused : Double(3), %x : Double(3), %w : Double(3)):
          %p : Double(3) = aten::mul(%x, %w)
          %dx : Double(3) = prim::Reverse[output_vjps=[0], input_grads=[1]]()
            block0(%dp : Double(3)):
              %g : Double(3) = aten::mul(%dp, %w)
              -> (%g)
          return (%p)
        """
    )
    assert index_lists(gradient) == (1, (0,), (2,), (), (1,))


def test_value_read_by_two_grad_ofs_is_captured_once() -> None:
    gradient = lift(
        """
        graph @g(%x : Double(3)):
          %e : Double(3) = aten::exp(%x)
          %s : Double(3) = aten::mul(%e, %e)
          %dx : Double(3) = prim::Reverse[output_vjps=[0], input_grads=[0]]()
            block0(%ds : Double(3)):
              %de : Double(3) = prim::GradOf[name="aten::mul"](%ds)
                block0():
                  %m : Double(3) = aten::mul(%ds, %e)
                  -> (%m)
              %dx.1 : Double(3) = prim::GradOf[name="aten::exp"](%de)
                block0():
                  %g : Double(3) = aten::mul(%de, %e)
                  -> (%g)
              -> (%dx.1)
          return (%s)
        """
    )
    assert index_lists(gradient) == (1, (0,), (), (1,), (0,))
    assert len(gradient.df.inputs) == 2


def test_captures_are_in_topological_order() -> None:
    # Inputs in input order (not in order of use), then node outputs in node order.
    gradient = lift(
        """
        graph @g(%x : Double(3), %w : Double(3)):
          %a : Double(3) = aten::exp(%x)
          %b : Double(3) = aten::exp(%a)
          %c : Double(3) = aten::mul(%b, %w)
          %dx : Double(3), %dw : Double(3) = prim::Reverse[output_vjps=[0], input_grads=[0, 1]]()
            block0(%dc : Double(3)):
              %p : Double(3) = aten::mul(%dc, %b)
              %q : Double(3) = aten::mul(%p, %a)
              %r : Double(3) = aten::mul(%dc, %w)
              %s : Double(3) = aten::mul(%r, %x)
              -> (%s, %q)
          return (%c)
        """
    )
    assert index_lists(gradient) == (1, (0,), (0, 1), (1, 2), (0, 1))
    assert [v.name_hint for v in gradient.f.outputs] == ["c", "a", "b"]
    assert [v.name_hint for v in gradient.df.inputs] == ["dc", "x", "w", "a", "b"]


def test_no_vjp_inputs_for_temporaries() -> None:
    # See Note [No vjps for temporaries]: df_input_vjps is the Reverse node's output_vjps.
    gradient = lift(EXAMPLE)
    assert len(gradient.df.inputs) == len(gradient.df_input_vjps) + 3


def test_graph_without_reverse_is_refused() -> None:
    graph = parse_ir(
        """
        graph @g(%x : Double(3)):
          %y : Double(3) = aten::neg(%x)
          return (%y)
        """
    )
    with pytest.raises(DifferentiationError, match="exactly one prim::Reverse node"):
        lambda_lift(graph)


def test_str_prints_both_graphs_and_the_lists() -> None:
    text = str(lift(EXAMPLE))
    assert text.startswith("graph @f(")
    assert "\ngraph @df(" in text
    assert text.endswith(
        textwrap.dedent(
            """\
            # f_real_outputs 1
            # df_input_vjps [0]
            # df_input_captured_inputs [0, 1]
            # df_input_captured_outputs [1]
            # df_output_vjps [0, 1]
            """
        )
    )
    assert list(parse_module(text)) == ["f", "df"]  # the lists are comments


def test_module_pass_replaces_the_graph_by_f_and_df() -> None:
    other = parse_ir("graph @other(%x : Double(3)):\n  return (%x)")
    module: dict[str, Graph] = {"other": other, "g": parse_ir(EXAMPLE.replace("@f", "@g"))}
    assert run_module_passes(module, "lambda-lift")
    assert list(module) == ["other", "f", "df"]
    assert module["other"] is other
    assert not run_module_passes(module, "lambda-lift")


def test_module_pass_refuses_to_overwrite_a_graph() -> None:
    module = {"df": parse_ir("graph @df(%x : Double(3)):\n  return (%x)"), "g": parse_ir(EXAMPLE)}
    with pytest.raises(DifferentiationError, match="would replace the module's graph @df"):
        run_module_passes(module, "lambda-lift")
    assert "prim::Reverse" in str(module["g"])  # refused before touching it
