"""`ir.native_scalar`: scalarized numba source of f and df blocks gives the NumPy tier's
results (Note [Scalarized numerics] for the tolerances), and refuses what it does not know."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import autodiff as ad
from autodiff.gradient import Gradient
from autodiff.pipeline import compile_gradient
from benchmarks.workloads import euler  # the ODE the native tier's targets are set on
from ir.codegen import executable
from ir.graph import Block, Graph
from ir.native_scalar import MAX_LINES, scalarized_source
from ir.types import TensorType, type_of_value
from tests.helpers import parse_ir

numba = pytest.importorskip("numba")


def compiled(block: Block) -> Any:
    """The block's scalarized function, compiled as `ir.native_codegen` compiles regions."""
    source = scalarized_source(block, "region")
    assert source is not None, "the block was not scalarized"
    namespace: dict[str, Any] = {"np": np}
    exec(source, namespace)
    return numba.njit(error_model="numpy", boundscheck=True)(namespace["region"])


def run_native(block: Block, args: list[Any]) -> list[Any]:
    """Call with the region convention: 0-d arrays in as scalars, out as NumPy scalars of
    their dtype (as `ir.native_codegen` calls a region)."""
    scalars = [a[()] if isinstance(a, np.ndarray) and a.ndim == 0 else a for a in args]
    results = list(compiled(block)(*[copy(a) for a in scalars]))
    for position, value in enumerate(block.outputs):
        if isinstance(value.ty, TensorType) and value.ty.shape == ():
            results[position] = np.dtype(value.ty.dtype).type(results[position])
    return results


def copy(value: Any) -> Any:
    return value.copy() if isinstance(value, np.ndarray) else value


def run_numpy(graph: Graph, args: list[Any]) -> list[Any]:
    return list(executable(graph)(*[copy(a) for a in args]))


def assert_same(got: list[Any], want: list[Any], rtol: float = 0.0) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        if isinstance(w, tuple):
            assert_same(list(g), list(w), rtol)
            continue
        if w is None:  # a value a branch did not define (prim::Uninitialized): nothing reads it
            continue
        assert np.shape(g) == np.shape(w)
        assert np.asarray(g).dtype == np.asarray(w).dtype
        if rtol:
            np.testing.assert_allclose(g, w, rtol=rtol, atol=1e-300)
        else:
            np.testing.assert_array_equal(g, w)


def gradient_of(fn: Any, args: tuple[Any, ...]) -> Gradient:
    types = [type_of_value(a) for a in args]
    wrt = [i for i, t in enumerate(types) if isinstance(t, TensorType) and t.dtype == "float64"]
    return compile_gradient(ad.script(fn).graph, types, wrt).gradient


def f_and_df(fn: Any, args: tuple[Any, ...]) -> tuple[Graph, Graph]:
    gradient = gradient_of(fn, args)
    return gradient.f, gradient.df


def check_f_and_df(fn: Any, args: tuple[Any, ...], rtol: float) -> None:
    """f's block, then df's on f's outputs with seeds of 1, against the NumPy tier (each
    tier's df reading its own f's outputs)."""
    gradient = gradient_of(fn, args)
    f, df = gradient.f, gradient.df
    results = []
    for run, graph_or_block in ((run_numpy, f), (run_native, f.block)):
        outputs = run(graph_or_block, list(args))  # type: ignore[operator]
        df_args = [np.ones_like(outputs[i]) for i in gradient.df_input_vjps]
        df_args += [args[i] for i in gradient.df_input_captured_inputs]
        df_args += [outputs[i] for i in gradient.df_input_captured_outputs]
        run_df = df if run is run_numpy else df.block
        results.append((outputs, run(run_df, df_args)))  # type: ignore[operator]
    (f_numpy, df_numpy), (f_native, df_native) = results
    assert_same(f_native, f_numpy, rtol)
    assert_same(df_native, df_numpy, rtol)


# ---- workloads ---------------------------------------------------------------------------------


def chain(x):  # type: ignore[no-untyped-def]
    h = 0.5 * (np.tanh(1.5 * np.sin(x)) + x)
    for _ in range(3):
        h = 0.5 * (np.tanh(1.5 * np.sin(h)) + x)
    return np.sum(h)


def rnn(w, u, h0, xs):  # type: ignore[no-untyped-def]
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(w @ h + u @ xs[t])
    return np.sum(h**2)


def branchy(x, y):  # type: ignore[no-untyped-def]
    if np.sum(x) > 0.0:  # noqa: SIM108 (a statement: it is the prim::If under test)
        total = np.sum(x * y[1])
    else:
        total = -np.max(np.exp(x))
    return total


def test_ode_f_and_df_match_the_numpy_tier() -> None:
    # tanh differs from NumPy's by an ulp at times; the loop carries that over 1000 steps
    rng = np.random.default_rng(0)
    check_f_and_df(euler, (rng.standard_normal((3, 3)), rng.standard_normal(3)), rtol=1e-12)


def test_chain_at_16_elements_matches_the_numpy_tier() -> None:
    check_f_and_df(chain, (np.random.default_rng(1).standard_normal(16),), rtol=1e-13)


def test_rnn_cell_and_branches_match_the_numpy_tier() -> None:
    rng = np.random.default_rng(2)
    args = (rng.standard_normal((4, 4)) * 0.3, rng.standard_normal((4, 3)), np.zeros(4))
    check_f_and_df(rnn, (*args, rng.standard_normal((5, 3))), rtol=1e-13)
    for sign in (1.0, -1.0):
        x = sign * np.abs(rng.standard_normal(3))
        check_f_and_df(branchy, (x, rng.standard_normal((4, 3))), rtol=1e-13)


def test_the_ode_loop_allocates_nothing_per_step() -> None:
    f, df = f_and_df(euler, (np.ones((3, 3)), np.ones(3)))
    for graph in (f, df):
        source = scalarized_source(graph.block, "region")
        assert source is not None
        body = source.split("for ")[1].split("\n    return")[0]
        assert "np.empty" not in body
        assert "np.zeros" not in body


# ---- loop bodies as IR text --------------------------------------------------------------------

ODE_F_BODY = (
    "graph @body(%t : int, %x : Double(3), %xs : Double(1000, 3), %ts : Double(1000, 3),"
    " %w : Double(3, 3)):"
    """
  %dt : float = prim::Constant[value=0.01]()
  %c : float = prim::Constant[value=0.1]()
  %17 : Double(3) = aten::matmul(%w, %x)
  %18 : Double(3) = aten::tanh(%17)
  %19 : Double(3) = aten::mul(%c, %x)
  %dx : Double(3) = aten::sub(%18, %19)
  %21 : Double(3) = aten::mul(%dt, %dx)
  %x.2 : Double(3) = aten::add(%x, %21)
  %23 : Double(1000, 3) = prim::TapeWrite(%xs, %t, %x)
  %24 : Double(1000, 3) = prim::TapeWrite(%ts, %t, %18)
  return (%x.2, %23, %24)
"""
)

ODE_DF_BODY = (
    "graph @body(%j : int, %dx.1 : Double(3), %dw.1 : Double(3, 3), %w : Double(3, 3),"
    " %xs : Double(1000, 3), %ts : Double(1000, 3)):"
    """
  %0 : int = prim::Constant[value=0]()
  %one : float = prim::Constant[value=1.]()
  %dt : float = prim::Constant[value=0.01]()
  %c : float = prim::Constant[value=0.1]()
  %22 : int = prim::Constant[value=999]()
  %t : int = prim::sub(%22, %j)
  %x.1 : Double(3) = aten::select(%xs, %0, %t)
  %25 : Double(3) = aten::select(%ts, %0, %t)
  %ddx : Double(3) = aten::mul(%dx.1, %dt)
  %27 : float = prim::Constant[value=-0.01]()
  %28 : Double(3) = aten::mul(%dx.1, %27)
  %dx.2 : Double(3) = aten::mul(%28, %c)
  %dx.3 : Double(3) = aten::add(%dx.1, %dx.2)
  %31 : Double(3) = aten::mul(%25, %25)
  %32 : Double(3) = aten::sub(%one, %31)
  %33 : Double(3) = aten::mul(%ddx, %32)
  %dw.2 : Double(3, 3) = aten::_matmul_backward_self(%33, %w, %x.1)
  %dx.4 : Double(3) = aten::_matmul_backward_other(%33, %w, %x.1)
  %dx.5 : Double(3) = aten::add(%dx.3, %dx.4)
  %dw.3 : Double(3, 3) = aten::add(%dw.1, %dw.2)
  return (%dx.5, %dw.3)
"""
)


def test_ode_loop_bodies_match_the_numpy_tier() -> None:
    rng = np.random.default_rng(3)
    theta, tape, saved = (
        rng.standard_normal((3, 3)),
        rng.standard_normal((1000, 3)),
        np.tanh(rng.standard_normal((1000, 3))),
    )
    body = parse_ir(ODE_F_BODY)
    args = [7, rng.standard_normal(3), tape, saved, theta]
    got, want = run_native(body.block, args), run_numpy(body, args)
    assert_same(got, want, rtol=1e-15)  # 1 ulp of tanh
    np.testing.assert_array_equal(got[1][7], args[1])
    body = parse_ir(ODE_DF_BODY)
    args = [2, rng.standard_normal(3), rng.standard_normal((3, 3)), theta, tape, saved]
    assert_same(run_native(body.block, args), run_numpy(body, args), rtol=1e-15)


def test_a_run_time_index_out_of_range_raises_index_error() -> None:
    body = parse_ir(ODE_F_BODY)
    args = [1000, np.ones(3), np.ones((1000, 3)), np.ones((1000, 3)), np.ones((3, 3))]
    with pytest.raises(IndexError):
        run_native(body.block, args)


# ---- operator families -------------------------------------------------------------------------

BROADCASTING = """
graph @f(%a : Double(3, 1), %b : Double(4), %s : Double(), %k : float, %n : int):
  %0 : Double(3, 4) = aten::mul(%a, %b)
  %1 : Double(3, 4) = aten::add(%0, %s)
  %2 : Double(3, 4) = aten::div(%1, %k)
  %3 : Double(3, 4) = aten::pow(%2, %n)
  %4 : Bool(3, 4) = aten::gt(%3, %k)
  %5 : Double(3, 4) = aten::where(%4, %3, %b)
  %6 : Double(3, 4) = aten::maximum(%5, %a)
  %7 : Double(4) = aten::div(%b, %s)
  return (%6, %4, %7)
"""


def test_broadcasting_numbers_and_0d_values_give_numpy_results() -> None:
    graph = parse_ir(BROADCASTING)
    rng = np.random.default_rng(4)
    args = [rng.standard_normal((3, 1)), rng.standard_normal(4), np.array(0.5), 0.25, 2]
    assert_same(run_native(graph.block, args), run_numpy(graph, args))
    args[2] = np.array(0.0)  # x / 0 is inf or nan, as in NumPy, not ZeroDivisionError
    with np.errstate(divide="ignore", invalid="ignore"):
        assert_same(run_native(graph.block, args), run_numpy(graph, args))


@pytest.mark.parametrize(
    ("shape", "axis", "keepdims"),
    [((16,), None, False), ((13,), 0, True), ((7,), None, False), ((2, 8), 1, False),
     ((8, 2), 0, False), ((4, 4), None, True), ((2, 2, 3), (0, 2), False)],
)  # fmt: skip
@pytest.mark.parametrize("op", ["sum", "mean", "max", "min", "prod"])
def test_reductions_give_numpy_results(
    shape: tuple[int, ...], axis: Any, keepdims: bool, op: str
) -> None:
    from ir.ops.registry import OPS
    from passes.shape_propagation import propagate_shapes

    graph = parse_ir(f"""
        graph @f(%x : Double({", ".join(map(str, shape))})):
          %axis : Any = prim::Constant[value={axis!r}]()
          %keep : bool = prim::Constant[value={keepdims}]()
          %r : Tensor = aten::{op}(%x, %axis, %keep)
          return (%r)
    """)
    assert "aten::" + op in OPS
    propagate_shapes(graph)
    rng = np.random.default_rng(5)  # magnitudes far apart: another order of adding shows
    x = rng.standard_normal(shape) * 10.0 ** rng.integers(-6, 6, shape)
    got, want = run_native(graph.block, [x]), run_numpy(graph, [x])
    mixed = axis == (0, 2)  # neither leading nor trailing: summed in sequence
    assert_same(got, want, rtol=1e-15 if mixed and op in ("sum", "mean") else 0.0)


@pytest.mark.parametrize(
    ("a", "b"),
    [((2, 3), (3,)), ((3,), (3, 2)), ((3,), (3,)), ((2, 3), (3, 4)), ((2, 2, 2), (2, 2)),
     ((4,), (4, 1))],
)  # fmt: skip
def test_matmul_and_its_gradients_give_numpy_results(
    a: tuple[int, ...], b: tuple[int, ...]
) -> None:
    rng = np.random.default_rng(6)
    left, right = rng.standard_normal(a), rng.standard_normal(b)
    out = left @ right
    dims = lambda s: ", ".join(map(str, s))  # noqa: E731
    graph = parse_ir(f"""
        graph @f(%a : Double({dims(a)}), %b : Double({dims(b)}), %g : Double({dims(out.shape)})):
          %0 : Double({dims(out.shape)}) = aten::matmul(%a, %b)
          %1 : Double({dims(a)}) = aten::_matmul_backward_self(%g, %a, %b)
          %2 : Double({dims(b)}) = aten::_matmul_backward_other(%g, %a, %b)
          return (%0, %1, %2)
    """)
    args = [left, right, rng.standard_normal(out.shape)]
    # products add their terms in sequence where BLAS may use FMA: a few ulp
    assert_same(run_native(graph.block, args), run_numpy(graph, args), rtol=1e-14)


def test_a_sum_of_16_elements_adds_in_numpys_pairwise_order() -> None:
    graph = parse_ir("""
        graph @f(%x : Double(16)):
          %none : NoneType = prim::Constant[value=None]()
          %false : bool = prim::Constant[value=False]()
          %r : Double() = aten::sum(%x, %none, %false)
          return (%r)
    """)
    x = np.array([1e16, 1.0, -1e16, 1.0] * 4) * np.arange(1, 17)
    assert run_native(graph.block, [x])[0] == np.sum(x)  # a sequential sum differs here
    assert sum(x) != np.sum(x)


VIEWS = """
graph @f(%x : Double(2, 3)):
  %0 : int = prim::Constant[value=0]()
  %1 : int = prim::Constant[value=1]()
  %none : NoneType = prim::Constant[value=None]()
  %shape : (int, int) = prim::Constant[value=(3, 2)]()
  %shape.1 : (int, int) = prim::Constant[value=(2, 3)]()
  %t : Double(3, 2) = aten::transpose(%x, %none)
  %r : Double(3, 2) = aten::reshape(%x, %shape)
  %s : Double(3) = aten::select(%x, %0, %1)
  %c : Double(2, 2) = aten::slice(%x, %1, %1, %none, %none)
  %e : Double(2, 1, 3) = aten::expand_dims(%x, %1)
  %sum : Double(3, 2) = aten::add(%t, %r)
  %db : Double(2, 3) = aten::_select_backward(%s, %shape.1, %0, %1)
  return (%sum, %s, %c, %e, %db)
"""


def test_views_only_rename_elements() -> None:
    graph = parse_ir(VIEWS)
    x = np.arange(6.0).reshape(2, 3)
    assert_same(run_native(graph.block, [x]), run_numpy(graph, [x]))


def test_what_it_does_not_know_is_refused() -> None:
    unknown_op = parse_ir("""
        graph @f(%x : Double(4)):
          %r : Double(4) = aten::sort(%x)
          return (%r)
    """)
    unknown_shape = parse_ir("""
        graph @f(%x : Double(*)):
          %r : Double(*) = aten::tanh(%x)
          return (%r)
    """)
    big = parse_ir("""
        graph @f(%x : Double(17)):
          %r : Double(17) = aten::tanh(%x)
          return (%r)
    """)
    # the caller's array is not written in place: adding a row to it is left to NumPy
    callers_array = parse_ir("""
        graph @f(%a : Double(20, 3), %g : Double(3), %t : int):
          %0 : int = prim::Constant[value=0]()
          %shape : (int, int) = prim::Constant[value=(20, 3)]()
          %u : Double(20, 3) = aten::_select_backward(%g, %shape, %0, %t)
          %r : Double(20, 3) = aten::add(%a, %u)
          return (%r)
    """)
    for graph in (unknown_op, unknown_shape, big, callers_array):
        assert scalarized_source(graph.block, "region") is None


def test_casts_and_logical_operators_give_numpy_results() -> None:
    graph = parse_ir("""
        graph @f(%x : Double(4), %n : Long(4)):
          %bool : str = prim::Constant[value="bool"]()
          %float : str = prim::Constant[value="float64"]()
          %b : Bool(4) = aten::astype(%x, %bool)
          %c : Bool(4) = aten::logical_and(%x, %n)
          %d : Bool(4) = aten::logical_not(%x)
          %e : Double(4) = aten::astype(%n, %float)
          %f : Double(4) = aten::div(%n, %n)
          return (%b, %c, %d, %e, %f)
    """)
    args = [np.array([0.0, -0.0, np.nan, 2.5]), np.array([0, 3, 1, -2])]
    with np.errstate(invalid="ignore"):
        assert_same(run_native(graph.block, args), run_numpy(graph, args))


def test_python_division_by_zero_raises_as_python_does() -> None:
    graph = parse_ir("""
        graph @f(%n : int, %k : int, %x : float):
          %q : int = prim::floordiv(%n, %k)
          %r : float = prim::truediv(%x, %k)
          return (%q, %r)
    """)
    assert run_native(graph.block, [7, 2, 1.0]) == run_numpy(graph, [7, 2, 1.0])
    with pytest.raises(ZeroDivisionError):
        run_native(graph.block, [7, 0, 1.0])
    int_power = parse_ir("""
        graph @f(%n : Long(3), %k : int):
          %r : Long(3) = aten::pow(%n, %k)
          return (%r)
    """)
    assert scalarized_source(int_power.block, "region") is None  # NumPy raises for k < 0
    bool_sum = parse_ir("""
        graph @f(%a : Bool(3), %b : Bool(3)):
          %r : Bool(3) = aten::add(%a, %b)
          return (%r)
    """)
    assert scalarized_source(bool_sum.block, "region") is None  # a logical or in NumPy


def test_long_unrolled_code_is_left_to_the_generic_emitter() -> None:
    from benchmarks.workloads import chain as fifty_operators

    f, _ = f_and_df(fifty_operators, (np.ones(16),))
    assert scalarized_source(f.block, "region") is None  # Note [Scalarized code size]
    f, _ = f_and_df(fifty_operators, (np.ones(2),))
    source = scalarized_source(f.block, "region")
    assert source is not None
    assert len(source.splitlines()) <= MAX_LINES + 2


# Gradient-corpus programs whose f and df are wholly scalarized: products, reductions, views,
# array constants, a small tape carried through a loop.
CORPUS = ["layer_norm", "max_and_min_reductions", "transposes", "inner_products_of_vectors",
          "accumulators_over_rows", "rosenbrock", "negative_step_slices"]  # fmt: skip


@pytest.mark.parametrize("name", CORPUS)
def test_corpus_programs_match_the_numpy_tier(name: str) -> None:
    from tests.gradients.corpus import CASES

    (case,) = [case for case in CASES if case.name == name]
    check_f_and_df(case.fn, case.make(np.random.default_rng(7)), rtol=1e-12)


@pytest.mark.parametrize("name", ["float32_matmul_tanh", "float32_softmax_entropy"])
def test_float32_programs_compute_in_float32(name: str) -> None:
    from tests.gradients.corpus import CASES

    (case,) = [case for case in CASES if case.name == name]
    # float32 tanh and exp of libm and of NumPy's SIMD loops differ by an ulp (6e-8)
    check_f_and_df(case.fn, case.make(np.random.default_rng(8)), rtol=1e-6)


def test_a_gradient_accumulated_into_a_long_sequence_is_added_row_by_row() -> None:
    # dxs is (20, 3): too big for scalars, so each step adds its row in place
    rng = np.random.default_rng(9)
    args = (rng.standard_normal((4, 4)) * 0.3, rng.standard_normal((4, 3)), np.zeros(4))
    _, df = f_and_df(rnn, (*args, rng.standard_normal((20, 3))))
    source = scalarized_source(df.block, "region")
    assert source is not None
    assert "+= " in source
    check_f_and_df(rnn, (*args, rng.standard_normal((20, 3))), rtol=1e-13)
