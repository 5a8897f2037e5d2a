"""The typed calls of generated code (Note [Typed calls] in `ir.typed_calls`): where the source
binds a Python number as a 0-d float64 array, calls a ufunc's reduce, or writes a ufunc's result
into a dying buffer (``out=``), and where it must not; each case bit-identical to the
interpreter, dtype and Python type of the results included."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

import autodiff as ad
from ir.codegen import EXECUTOR_VARIABLE, CompiledGraph
from ir.parser import parse_graph
from ir.typed_calls import INPLACE_MIN_SIZE
from tests.unit.test_codegen import assert_identical, run_both

N = 4096  # large enough for the memory plan
assert N >= INPLACE_MIN_SIZE


def source_of(text: str) -> str:
    return CompiledGraph(parse_graph(text)).source


def line_of(source: str, name: str) -> str:
    """The generated line that assigns ``name``."""
    (line,) = [line for line in source.splitlines() if line.strip().startswith(f"{name} = ")]
    return line


def check(text: str, *args: Any) -> str:
    """Run ``text`` with both executors (bit-identical results), and return its source."""
    run_both(parse_graph(text), list(args))
    return source_of(text)


def vector(n: int = N, dtype: Any = np.float64, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(n).astype(dtype)


# -- constant binding ----------------------------------------------------------------------

SCALE = """graph @f(%x : {ty}):
  %c : {cty} = prim::Constant[value={c}]()
  %y : {ty} = aten::mul(%x, %c)
  %z : {ty} = aten::sub(%c, %x)
  return (%y, %z)
"""


def test_a_python_float_next_to_float64_is_a_zero_d_array_constant() -> None:
    text = SCALE.format(ty="Double(16)", cty="float", c="1.5")
    source = check(text, vector(16))
    assert re.search(r"y = aten_mul\(x, _c\)", source)
    assert re.search(r"z = aten_sub\(_c, x\)", source)
    assert "1.5" not in source


def test_a_python_int_next_to_float64_is_a_zero_d_float_constant() -> None:
    source = check(SCALE.format(ty="Double(16)", cty="int", c="3"), vector(16))
    assert "aten_mul(x, _c)" in source


@pytest.mark.parametrize(
    ("ty", "dtype", "cty", "c"),
    [
        ("Float(16)", np.float32, "float", "1.5"),  # a 0-d float64 array would give float64
        ("Long(16)", np.int64, "int", "3"),  # ... and turn ints into floats
        ("Int(16)", np.int32, "int", "3"),
        ("Double(16)", np.float64, "bool", "True"),
        ("Double(16)", np.float64, "int", str(2**60)),  # not exactly a float64
    ],
)
def test_no_constant_binding_where_the_result_would_differ(
    ty: str, dtype: Any, cty: str, c: str
) -> None:
    values = (np.arange(16) - 5).astype(dtype)
    source = check(SCALE.format(ty=ty, cty=cty, c=c), values)
    assert "_c" not in source
    assert f"aten_mul(x, {c})" in source


@pytest.mark.parametrize("make", [np.float64, np.array], ids=["numpy scalar", "0-d array"])
def test_zero_d_operands_keep_their_python_type(make: Any) -> None:
    text = SCALE.format(ty="Double()", cty="float", c="1.5")
    assert "aten_mul(x, _c)" in source_of(text)
    run_both(parse_graph(text), [make(2.25)])  # NumPy scalars as the interpreter gives them


# -- reductions and gradient helpers ---------------------------------------------------------

REDUCTIONS = """graph @f(%x : Double(64, 32)):
  %none : NoneType = prim::Constant[value=None]()
  %one : int = prim::Constant[value=1]()
  %yes : bool = prim::Constant[value=True]()
  %no : bool = prim::Constant[value=False]()
  %s : Double() = aten::sum(%x, %none, %no)
  %sk : Double(64, 1) = aten::sum(%x, %one, %yes)
  %m : Double() = aten::mean(%x, %none, %no)
  %mk : Double(64, 1) = aten::mean(%x, %one, %yes)
  %mx : Double(64) = aten::max(%x, %one, %no)
  %mn : Double() = aten::min(%x, %none, %no)
  return (%s, %sk, %m, %mk, %mx, %mn)
"""


def test_reductions_call_the_ufunc_reduce() -> None:
    source = check(REDUCTIONS, np.random.default_rng(1).standard_normal((64, 32)))
    assert "s = aten_sum_reduce(x, None, None, None, False)" in source
    assert "sk = aten_sum_reduce(x, 1, None, None, True)" in source
    assert "m = aten_sum_reduce(x, None, None, None, False) / 2048" in source
    assert "mk = aten_sum_reduce(x, 1, None, None, True)" in source
    assert re.search(r"\n +(aten_div|true_divide)\(mk, 32, out=mk\)\n", source)
    assert "mx = aten_max_reduce(x, 1, None, None, False)" in source
    assert "mn = aten_min_reduce(x, None, None, None, False)" in source


def test_mean_of_float32_calls_the_kernel() -> None:
    text = REDUCTIONS.replace("Double", "Float")
    source = check(text, np.random.default_rng(1).standard_normal((64, 32)).astype(np.float32))
    assert "aten_mean(" in source


GRADIENT_HELPERS = """graph @f(%g : Double(8, 5), %s : Double()):
  %same : int[] = prim::Constant[value=[8, 5]]()
  %row : int[] = prim::Constant[value=[5]]()
  %column : int[] = prim::Constant[value=[8, 1]]()
  %scalar : int[] = prim::Constant[value=[]]()
  %none : NoneType = prim::Constant[value=None]()
  %no : bool = prim::Constant[value=False]()
  %a : Double(8, 5) = aten::sum_to_size(%g, %same)
  %b : Double(5) = aten::sum_to_size(%g, %row)
  %c : Double(8, 1) = aten::sum_to_size(%g, %column)
  %d : Double() = aten::sum_to_size(%g, %scalar)
  %e : Double(8, 5) = aten::_unreduce(%s, %same, %none, %no)
  return (%a, %b, %c, %d, %e)
"""


def test_gradient_helpers_are_written_out() -> None:
    g = np.random.default_rng(2).standard_normal((8, 5))
    for s in (np.float64(0.5), np.array(0.5)):
        source = check(GRADIENT_HELPERS, g, s)
    assert "a = g" in source
    assert "b = aten_sum_reduce(g, (0,), None, None, False)" in source
    assert "c = aten_sum_reduce(g, (1,), None, None, True)" in source
    assert ".reshape(())" in line_of(source, "d")  # a 0-d array, as the kernel returns
    assert "broadcast_to(s, same)" in line_of(source, "e")
    assert "sum_to_size" not in source
    assert "unreduce" not in source


# -- the memory plan -------------------------------------------------------------------------

CHAIN = """graph @f(%x : Double({n})):
  %c : float = prim::Constant[value=1.5]()
  %a : Double({n}) = aten::sin(%x)
  %b : Double({n}) = aten::mul(%a, %c)
  %d : Double({n}) = aten::tanh(%b)
  %e : Double({n}) = aten::add(%d, %x)
  return (%e)
"""


def test_a_dying_fresh_buffer_takes_the_result() -> None:
    source = check(CHAIN.format(n=N), vector())
    assert "out=" not in line_of(source, "a")  # x is the caller's
    assert "aten_mul(a, _c, out=a)" in line_of(source, "b")
    assert "aten_tanh(b, out=b)" in line_of(source, "d")
    assert "aten_add(d, x, out=d)" in line_of(source, "e")


def test_small_arrays_are_not_reused() -> None:
    assert "out=" not in check(CHAIN.format(n=16), vector(16))


def test_float32_buffers_are_reused_without_a_float64_constant() -> None:
    text = CHAIN.format(n=N).replace("Double", "Float")
    source = check(text, vector(dtype=np.float32))
    assert "aten_mul(a, 1.5, out=a)" in line_of(source, "b")


def test_a_buffer_of_another_dtype_or_shape_is_not_reused() -> None:
    text = f"""graph @f(%x : Double({N}), %y : Double(2, {N})):
  %a : Double({N}) = aten::sin(%x)
  %b : Bool({N}) = aten::gt(%a, %x)
  %c : Double({N}) = aten::cos(%x)
  %d : Double(2, {N}) = aten::mul(%c, %y)
  return (%b, %d)
"""
    source = check(text, vector(), np.stack([vector(seed=1), vector(seed=2)]))
    assert "out=" not in source


def test_arguments_and_returned_values_are_not_reused() -> None:
    text = f"""graph @f(%x : Double({N})):
  %a : Double({N}) = aten::exp(%x)
  %b : Double({N}) = aten::neg(%a)
  %c : Double({N}) = aten::mul(%x, %x)
  return (%a, %b, %c)
"""
    assert "out=" not in check(text, vector())


@pytest.mark.parametrize(
    "holder",
    [
        "%v : Double({N}) = aten::select(%a, %zero, %zero)",  # a view of a
        "%v : Double({N}) = aten::reshape(%a, %shape)",
        "%v : Tensor[] = prim::ListConstruct(%a)",
        "%v : (Double(1, {N})) = prim::TupleConstruct(%a)",
    ],
)
def test_a_buffer_read_through_a_view_or_a_container_is_not_reused(holder: str) -> None:
    text = f"""graph @f(%x : Double(1, {N})):
  %zero : int = prim::Constant[value=0]()
  %shape : int[] = prim::Constant[value=[{N}]]()
  %a : Double(1, {N}) = aten::exp(%x)
  {holder.format(N=N)}
  %b : Double(1, {N}) = aten::neg(%a)
  return (%v, %b)
"""
    source = check(text, vector().reshape(1, N))
    assert "out=" not in line_of(source, "b")


def test_a_buffer_read_in_a_loop_body_is_not_reused_but_one_made_there_is() -> None:
    text = f"""graph @f(%n : int, %x : Double({N})):
  %go : bool = prim::Constant[value=True]()
  %a : Double({N}) = aten::exp(%x)
  %y : Double({N}) = prim::Loop(%n, %go, %x)
    block0(%i : int, %acc : Double({N})):
      %t : Double({N}) = aten::mul(%acc, %a)
      %u : Double({N}) = aten::sin(%t)
      -> (%go, %u)
  %b : Double({N}) = aten::neg(%a)
  return (%y, %b)
"""
    source = check(text, 3, vector())
    assert "out=" not in line_of(source, "b")
    assert "aten_sin(t, out=t)" in line_of(source, "u")
    assert "out=" not in line_of(source, "t")  # acc is carried


def test_a_buffer_read_in_a_branch_is_not_reused() -> None:
    text = f"""graph @f(%p : bool, %x : Double({N})):
  %a : Double({N}) = aten::exp(%x)
  %y : Double({N}) = prim::If(%p)
    block0():
      -> (%a)
    block1():
      -> (%x)
  %b : Double({N}) = aten::neg(%a)
  return (%y, %b)
"""
    for p in (True, False):
        source = check(text, p, vector())
    assert "out=" not in line_of(source, "b")


def test_gradients_through_the_memory_plan_match_the_interpreter(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def loss(x: Any, w: Any) -> Any:
        h = np.tanh(1.5 * np.sin(x) * w + x)
        return np.mean((h - 0.5) ** 2) + np.sum(np.exp(-h) * 2)

    x, w = vector(seed=3), vector(seed=4)
    compiled = ad.value_and_grad(loss, argnums=(0, 1))
    got = compiled(x, w)
    (entry,) = compiled.compiled_gradients()
    for runnable in (entry.runtime.f, entry.runtime.df):
        assert isinstance(runnable, CompiledGraph)
        assert "out=" in runnable.source
    monkeypatch.setenv(EXECUTOR_VARIABLE, "interpreter")
    expected = ad.value_and_grad(loss, argnums=(0, 1))(x, w)
    assert_identical(got, expected)
    np.testing.assert_array_equal(x, vector(seed=3))  # the arguments are left alone
    np.testing.assert_array_equal(w, vector(seed=4))


@pytest.mark.parametrize(("shape", "reused"), [(f"{N}", True), ("64, 64", False)])
def test_layout_sensitive_ufuncs_write_into_one_dimensional_buffers_only(
    shape: str, reused: bool
) -> None:
    text = f"""graph @f(%x : Double({shape}), %y : Double({shape})):
  %a : Double({shape}) = aten::exp(%x)
  %b : Double({shape}) = aten::arctan2(%a, %y)
  %c : Double({shape}) = aten::cos(%x)
  %d : Double({shape}) = aten::mul(%c, %y)
  return (%b, %d)
"""
    dims = tuple(int(d) for d in shape.split(","))
    x, y = (np.random.default_rng(seed).standard_normal(dims) for seed in (5, 6))
    source = check(text, x, y)
    assert ("out=a" in line_of(source, "b")) == reused
    assert "out=c" in line_of(source, "d")  # a product is the same bits in any layout


def test_matrix_product_gradients_views_and_python_operators_are_written_out() -> None:
    text = """graph @f(%g : Double(4, 3), %a : Double(4, 5), %b : Double(5, 3), %i : int):
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %minus : int = prim::Constant[value=-1]()
  %two : int = prim::Constant[value=2]()
  %none : NoneType = prim::Constant[value=None]()
  %da : Double(4, 5) = aten::_matmul_backward_self(%g, %a, %b)
  %db : Double(5, 3) = aten::_matmul_backward_other(%g, %a, %b)
  %row : Double(5) = aten::select(%a, %zero, %i)
  %column : Double(4) = aten::select(%a, %one, %i)
  %tail : Double(3, 5) = aten::slice(%a, %zero, %one, %none, %none)
  %every : Double(4, 3) = aten::slice(%a, %one, %none, %minus, %two)
  %t : Double(5, 4) = aten::transpose(%a, %none)
  %j : int = prim::sub(%i, %minus)
  %k : int = prim::pow(%minus, %two)
  return (%da, %db, %row, %column, %tail, %every, %t, %j, %k)
"""
    rng = np.random.default_rng(7)
    g, a, b = rng.standard_normal((4, 3)), rng.standard_normal((4, 5)), rng.standard_normal((5, 3))
    source = check(text, g, a, b, 2)
    assert "da = aten_matmul(g, b.T)" in source
    assert "db = aten_matmul(a.T, g)" in source
    assert "row = a[i]" in source
    assert "column = a[:, i]" in source
    assert "tail = a[1:]" in source
    assert "every = a[:, :-1:2]" in source
    assert "t = a.T" in source
    assert "j = i - (-1)" in source
    assert "k = (-1) ** 2" in source


VIEW_THEN_WRITE = """graph @f(%x : Double(64, 64), %g : Double(64, 64)):
  %none : NoneType = prim::Constant[value=None]()
  %a : Double(64, 64) = aten::exp(%x)
  %t : Double(64, 64) = aten::transpose(%a, %none)
  {first}
  {second}
  return (%m, %b, %d)
"""
PRODUCT = "%m : Double(64, 64) = aten::matmul(%t, %g)"
BACKWARD = "%d : Double(64, 64) = aten::_matmul_backward_other(%g, %a, %x)"
WRITE = "%b : Double(64, 64) = aten::neg(%a)"


def test_a_buffer_read_through_a_view_that_is_gone_is_reused() -> None:
    """``a.T @ g`` and the product gradient read ``a`` and hold nothing: once they have run,
    ``a`` may take a result (``h.T`` in an MLP's ``df``)."""
    text = VIEW_THEN_WRITE.format(first=f"{PRODUCT}\n  {BACKWARD}", second=WRITE)
    source = check(text, vector(64 * 64).reshape(64, 64), vector(64 * 64, seed=1).reshape(64, 64))
    assert "aten_neg(a, out=a)" in line_of(source, "b")


def test_a_buffer_whose_view_is_read_after_the_write_is_not_reused() -> None:
    text = VIEW_THEN_WRITE.format(first=f"{BACKWARD}\n  {WRITE}", second=PRODUCT)
    source = check(text, vector(64 * 64).reshape(64, 64), vector(64 * 64, seed=1).reshape(64, 64))
    assert "out=" not in line_of(source, "b")
