"""Differentiation of scripted functions, through the pipeline: the Gradient bookkeeping of
small cases (TorchScript's testDifferentiate), the GradOf/AutogradAdd structure of the ``grad``
stage, and control flow (Note [Control-flow derivatives])."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

import autodiff as ad
from autodiff.pipeline import Stages, compile_gradient, differentiate_typed
from autodiff.specialize import argument_type, typed_graph
from ir.graph import Graph
from ir.printer import print_graph
from ir.types import TensorType
from ir.verify import verify

X = np.random.default_rng(0).standard_normal((3, 4))
Y = np.random.default_rng(1).standard_normal(4)


def tanh_example(x, y):
    return np.sum(np.tanh(x * y + 2.0) * x)


def tanh_sum(x):
    return np.sum(np.tanh(x))


def used_twice(x):
    return np.sum(x * x + np.sin(x))


def mask_only(x, y):
    return np.sum(x * (y > 0.0))


def unused(x, y):
    return np.sum(x * 2.0)


def where_of_inputs(x, y):
    return np.sum(np.where(x > 0.0, x * y, y))


def sine_steps(x, k: int):
    y = x
    for _ in range(k):
        y = np.sin(y)
    return np.sum(y)


def halve_while_large(x):
    y = x
    while np.max(np.abs(y)) > 0.5:
        y = y * 0.5
    return np.sum(y)


def stages(fn: Any, *args: Any, wrt: tuple[int, ...]) -> Stages:
    types = [argument_type(fn.__name__, str(i), a) for i, a in enumerate(args)]
    stages = compile_gradient(ad.script(fn).graph, types, wrt)
    for graph in (stages.grad, stages.optimized, stages.gradient.f, stages.gradient.df):
        verify(graph)
    return stages


def text(graph: Graph) -> str:
    """The IR text without source locations (they hold this file's absolute path)."""
    return re.sub(r"  # .*$", "", print_graph(graph), flags=re.MULTILINE)


def skeleton(graph: Graph) -> list[str]:
    """The reverse program's structure: one entry per GradOf, AutogradAdd and AutogradZero."""
    found = []
    for node in graph.all_nodes():
        if node.kind == "prim::GradOf":
            found.append(f"GradOf[{node.attrs['name']}] -> {len(node.outputs)}")
        elif node.kind in ("prim::AutogradAdd", "prim::AutogradZero"):
            found.append(node.kind.removeprefix("prim::"))
    return found


def kinds(graph: Graph) -> set[str]:
    return {node.kind for node in graph.all_nodes()}


# ---- Gradient bookkeeping -----------------------------------------------------------------------


def test_tanh_example_captures_exactly_x_y_and_the_tanh_output() -> None:
    gradient = stages(tanh_example, X, Y, wrt=(0, 1)).gradient
    assert gradient.f_real_outputs == 1
    assert gradient.df_input_vjps == (0,)
    assert gradient.df_input_captured_inputs == (0, 1)
    assert len(gradient.df_input_captured_outputs) == 1
    (captured,) = [gradient.f.outputs[i] for i in gradient.df_input_captured_outputs]
    assert captured.node.kind == "aten::tanh"
    assert gradient.df_output_vjps == (0, 1)
    # No sizes and no constants cross from f to df: shapes were folded at compile time.
    assert len(gradient.df.inputs) == 1 + 2 + 1
    assert len(gradient.f.outputs) == 2
    assert not kinds(gradient.f) & {"aten::shape", "aten::_size_if_not_equal", "aten::size"}
    assert not kinds(gradient.df) & {"aten::shape", "aten::_size_if_not_equal", "aten::size"}
    assert "prim::Reverse" not in kinds(gradient.f)


def test_tanh_example_df_computes_the_gradients() -> None:
    gradient = stages(tanh_example, X, Y, wrt=(0, 1)).gradient
    t = np.tanh(X * Y + 2.0)
    dx, dy = ad.grad(tanh_example, argnums=(0, 1))(X, Y)
    inner = X * (1.0 - t * t)
    np.testing.assert_allclose(dx, t + inner * Y, rtol=1e-12)
    np.testing.assert_allclose(dy, np.sum(inner * X, axis=0), rtol=1e-12)
    (packed,) = gradient.df.outputs
    assert [v.name_hint for v in packed.node.inputs] == ["dx", "dy"]


def test_ad_differentiate_of_a_specialised_graph() -> None:
    gradient = ad.differentiate(ad.script(tanh_example).graph_for(X, Y))
    assert isinstance(gradient, ad.Gradient)
    assert gradient.df_input_captured_inputs == (0, 1)
    assert gradient.df_output_vjps == (0, 1)
    assert "# df_input_captured_outputs [1]" in str(gradient)


def test_input_used_only_non_differentiably_gets_no_gradient() -> None:
    result = stages(mask_only, X, Y, wrt=(0, 1))
    gradient = result.gradient
    assert gradient.df_output_vjps == (0,)
    assert gradient.df_input_captured_inputs == ()
    # df reads the mask y > 0 that f computed, not y itself.
    (mask,) = [gradient.f.outputs[i] for i in gradient.df_input_captured_outputs]
    assert mask.node.kind == "aten::gt"
    dx, dy = ad.grad(mask_only, argnums=(0, 1))(X, Y)
    np.testing.assert_array_equal(dx, np.broadcast_to(Y > 0.0, X.shape).astype(float))
    np.testing.assert_array_equal(dy, np.zeros_like(Y))


def test_input_used_twice_gets_its_gradients_added() -> None:
    result = stages(used_twice, Y, wrt=(0,))
    assert skeleton(result.grad) == [
        "GradOf[aten::sum] -> 1",
        "GradOf[aten::add] -> 2",
        "GradOf[aten::sin] -> 1",
        "GradOf[aten::mul] -> 2",
        "AutogradAdd",
        "AutogradAdd",
    ]
    # Specialised: every gradient is known to be an array, so the adds are plain adds.
    assert "prim::AutogradAdd" not in kinds(result.optimized)
    np.testing.assert_allclose(ad.grad(used_twice)(Y), 2 * Y + np.cos(Y), rtol=1e-12)


def test_unused_differentiated_input_gets_a_zero_gradient() -> None:
    gradient = stages(unused, X, Y, wrt=(0, 1)).gradient
    assert gradient.df_output_vjps == (0,)
    assert len(gradient.df.inputs) == 1
    dx, dy = ad.grad(unused, argnums=(0, 1))(X, Y)
    np.testing.assert_array_equal(dx, np.full_like(X, 2.0))
    np.testing.assert_array_equal(dy, np.zeros_like(Y))


def test_none_gradient_of_a_formula_is_not_an_output() -> None:
    result = stages(where_of_inputs, X, Y, wrt=(0, 1))
    (where,) = [n for n in result.grad.all_nodes() if n.attrs.get("name") == "aten::where"]
    # aten::where(condition, x, y): the condition's gradient is None, so only two results.
    assert len(where.outputs) == 2
    assert all(isinstance(v.ty, TensorType) for v in where.blocks[0].outputs)
    assert skeleton(result.grad) == [
        "GradOf[aten::sum] -> 1",
        "GradOf[aten::where] -> 2",
        "GradOf[aten::mul] -> 2",
        "AutogradAdd",
    ]
    dx, dy = ad.grad(where_of_inputs, argnums=(0, 1))(X, Y)
    np.testing.assert_allclose(dx, np.where(X > 0.0, Y, 0.0), rtol=1e-12)
    np.testing.assert_allclose(dy, np.sum(np.where(X > 0.0, X, 1.0), axis=0), rtol=1e-12)


# ---- the grad stage -----------------------------------------------------------------------------


def test_grad_stage_of_tanh_sum() -> None:
    assert text(stages(tanh_sum, Y, wrt=(0,)).grad) == (
        """\
graph @tanh_sum(%x : Double(4)):
  %1 : Double(4) = aten::tanh(%x)
  %2 : NoneType = prim::Constant[value=None]()
  %3 : bool = prim::Constant[value=False]()
  %4 : Double() = aten::sum(%1, %2, %3)
  %shape : (int) = aten::shape(%1)
  %dx : Double(4) = prim::Reverse[output_vjps=[0], input_grads=[0]]()
    block0(%dout : Double()):
      %8 : Double(4) = prim::GradOf[name="aten::sum"](%dout)
        block0():
          %9 : Double(4) = aten::_unreduce(%dout, %shape, %2, %3)
          -> (%9)
      %dx.1 : Double(4) = prim::GradOf[name="aten::tanh"](%8)
        block0():
          %11 : float = prim::Constant[value=1.]()
          %12 : Double(4) = aten::mul(%1, %1)
          %13 : Double(4) = aten::sub(%11, %12)
          %14 : Double(4) = aten::mul(%8, %13)
          -> (%14)
      -> (%dx.1)
  return (%4)
"""
    )


def test_grad_stage_of_the_tanh_example_names_each_forward_op() -> None:
    result = stages(tanh_example, X, Y, wrt=(0, 1))
    grad_ofs = re.findall(r'prim::GradOf\[name="([^"]+)"\]', print_graph(result.grad))
    # Reverse program order: the last forward op first.
    assert grad_ofs == ["aten::sum", "aten::mul", "aten::tanh", "aten::add", "aten::mul"]
    assert skeleton(result.grad)[-1] == "AutogradAdd"
    tanh_grad = next(n for n in result.grad.all_nodes() if n.attrs.get("name") == "aten::tanh")
    assert tanh_grad.source_range is not None
    assert tanh_grad.source_range.line == tanh_example.__code__.co_firstlineno + 1


# ---- control flow -------------------------------------------------------------------------------


def test_loop_on_an_int_is_differentiated_as_a_loop() -> None:
    # Note [Control-flow derivatives]: the reverse of a loop is a loop, whatever the count.
    scripted = ad.script(sine_steps)
    types = [argument_type("sine_steps", "x", Y), argument_type("sine_steps", "k", 3)]
    result = differentiate_typed(typed_graph(scripted.graph, types), (0,), keep_stages=True)
    assert sum(node.kind == "prim::Loop" for node in result.grad.all_nodes()) == 2
    np.testing.assert_allclose(
        ad.grad(sine_steps)(Y, 3),
        np.cos(np.sin(np.sin(Y))) * np.cos(np.sin(Y)) * np.cos(Y),
        rtol=1e-12,
    )
    np.testing.assert_allclose(ad.grad(sine_steps)(Y, 0), np.ones_like(Y), rtol=1e-15)


def test_data_dependent_loop_is_differentiated() -> None:
    x = np.array([3.0, -0.2, 1.0, 0.1])  # halved three times: max |y| = 0.375
    np.testing.assert_allclose(ad.grad(halve_while_large)(x), np.full(4, 0.125), rtol=1e-15)
    assert "prim::Loop" in kinds(stages(halve_while_large, Y, wrt=(0,)).gradient.df)


def mantissa_and_exponent(x):
    m, e = np.frexp(x)
    return np.sum(m * 3.0 + e)


def test_an_integer_result_gets_no_gradient_not_even_zeros() -> None:
    # Note [Trimmed gradients]: frexp's exponent is an integer; the gradient of the tuple
    # frexp returns is (d mantissa, None), and no zeros are made for the exponent.
    x = np.array([0.3, 5.0, -12.0, 0.7])
    result = stages(mantissa_and_exponent, x, wrt=(0,))
    unpack = next(n for n in result.grad.all_nodes() if n.attrs.get("name") == "prim::TupleUnpack")
    (tuple_grad,) = [n for n in unpack.blocks[0].nodes() if n.kind == "prim::TupleConstruct"]
    trimmed = tuple_grad.inputs[1].node
    assert trimmed.kind == "prim::Constant"
    assert trimmed.attrs["value"] is None
    assert "aten::zeros" not in print_graph(result.grad)
    np.testing.assert_allclose(
        ad.grad(mantissa_and_exponent)(x), 3.0 * 2.0 ** -np.frexp(x)[1], rtol=1e-15
    )


# ---- what the record's derivative says happens (Note [Derivatives] in `ir.ops.registry`) ----
# Regression: aten::full and aten::full_like were recorded as carrying no gradient, like the
# creation operators without a fill value, so the gradient of their fill value was a silent
# zero; so was that of arange's bounds.

W = np.random.default_rng(2).standard_normal((2, 3))


def filled(x, w):
    return np.sum(np.full((2, 3), x) * w)


def filled_like(x, w):
    return np.sum(np.full_like(w, x) * w * w)


def filled_rows(x, w):
    return np.sum(np.sin(np.full((2, 3), x * x)) * w)


def test_a_fill_value_gets_its_gradient() -> None:
    for fn, x in [(filled, 0.7), (filled_like, 0.7), (filled_rows, np.array([0.5, -1.0, 2.0]))]:
        ad.gradcheck(ad.script(fn), x, W)
    np.testing.assert_allclose(ad.grad(filled)(0.7, W), np.sum(W), rtol=1e-15)


def test_a_fill_value_gets_jax_s_gradient() -> None:
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)

    def jax_filled_rows(x, w):
        return jax.numpy.sum(jax.numpy.sin(jax.numpy.full((2, 3), x * x)) * w)

    x = np.array([0.5, -1.0, 2.0])
    expected = jax.grad(jax_filled_rows)(x, W)
    np.testing.assert_allclose(ad.grad(filled_rows)(x, W), expected, rtol=1e-12)


def counted_from(x: float):
    return np.sum(np.arange(x, 3.0) * 2.0)


def test_a_gradient_through_arange_s_bounds_is_refused_where_it_is_written() -> None:
    with pytest.raises(ad.DifferentiationError, match=r"aten::arange is not differentiable") as e:
        ad.grad(counted_from)(0.5)
    assert "return np.sum(np.arange(x, 3.0) * 2.0)" in str(e.value)
    assert ad.script(counted_from)(0.5) == counted_from(0.5)
