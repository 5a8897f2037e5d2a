"""Generated code runs graphs exactly as the interpreter does: bit-identical results on the
equivalence corpus, the gradient corpus's f and df, control flow, tuples, lists and GradOf; the
interpreter's errors; values freed at their last use; code linear in the graph's size."""

from __future__ import annotations

import copy
import importlib.util
import linecache
import traceback
import weakref
from typing import Any

import numpy as np
import pytest

import autodiff as ad
from autodiff.pipeline import compile_gradient
from autodiff.specialize import argument_type
from ir.codegen import EXECUTOR_VARIABLE, CompiledGraph, executable
from ir.errors import AutodiffError, InterpreterError
from ir.graph import Graph
from ir.interpreter import AUTOGRAD_ZERO, Executable
from ir.ops import OPS, Derivative, OpDef, parse_schema
from ir.parser import parse_graph
from ir.typed_calls import INPLACE_MIN_SIZE
from ir.types import ANY, INT
from tests.equivalence.corpus import CASES as EQUIVALENCE_CASES
from tests.gradients.corpus import CASES as GRADIENT_CASES
from tests.unit.test_interpreter import GRAD_OF_GRAPH, IF_GRAPH, LOOP_GRAPH, Probe


def assert_identical(actual: Any, expected: Any, where: str = "result") -> None:
    """The same Python type, and for arrays and NumPy scalars the same dtype, shape and bits."""
    assert type(actual) is type(expected), f"{where}: {type(actual)} != {type(expected)}"
    if isinstance(expected, tuple | list):
        assert len(actual) == len(expected), f"{where}: lengths differ"
        for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
            assert_identical(a, e, f"{where}[{i}]")
    elif isinstance(expected, np.ndarray | np.generic):
        assert actual.dtype == expected.dtype, f"{where}: dtype {actual.dtype} != {expected.dtype}"
        assert actual.shape == expected.shape, f"{where}: shape {actual.shape} != {expected.shape}"
        np.testing.assert_array_equal(actual, expected, err_msg=where, strict=True)
    elif expected is AUTOGRAD_ZERO:
        assert actual is AUTOGRAD_ZERO, where
    else:
        assert actual == expected or (actual != actual and expected != expected), where


def copied(args: Any) -> list[Any]:
    """A deep copy of ``args`` that keeps the AUTOGRAD_ZERO sentinel itself."""
    return copy.deepcopy(list(args), {id(AUTOGRAD_ZERO): AUTOGRAD_ZERO})


def run_both(graph: Graph, args: Any, **kwargs: Any) -> Any:
    """Run ``graph`` on copies of ``args`` with both executors and check they agree, in the
    results and in what they leave in the arguments; returns the generated code's results."""
    interpreted_args, generated_args = copied(args), copied(args)
    expected = Executable(graph, **kwargs)(*interpreted_args)
    actual = CompiledGraph(graph, **kwargs)(*generated_args)
    assert_identical(actual, expected)
    assert_identical(generated_args, interpreted_args, "arguments after the call")
    return actual


def params(cases: list[Any]) -> list[Any]:
    return [pytest.param(case, id=case.name) for case in cases if not case.xfail]


# ---- the corpora ------------------------------------------------------------------------------


@pytest.mark.parametrize("case", params(EQUIVALENCE_CASES))
def test_equivalence_corpus_runs_identically(case: Any) -> None:
    scripted = ad.script(case.fn)
    for seed, size in ((0, 3), (2, 5)):
        args = scripted.runtime_values(case.make(np.random.default_rng(seed), size), {})
        run_both(scripted.graph_for(*copied(args)), args)


def is_differentiable(value: Any) -> bool:
    if isinstance(value, float) and not isinstance(value, bool):
        return True
    return isinstance(value, np.ndarray) and value.dtype.kind == "f"


@pytest.mark.parametrize("case", params(GRADIENT_CASES))
def test_gradient_corpus_f_and_df_run_identically(case: Any) -> None:
    scripted = ad.script(case.fn)
    args = scripted.runtime_values(case.make(np.random.default_rng(0)), {})
    names = list(scripted.signature.parameters)
    types = [argument_type(case.name, n, v) for n, v in zip(names, args, strict=True)]
    wrt = [i for i, value in enumerate(args) if is_differentiable(value)]
    gradient = compile_gradient(scripted.graph, types, wrt).gradient
    outputs = run_both(gradient.f, args)
    vjps = [
        np.ones(np.shape(outputs[i]), np.result_type(outputs[i])) for i in gradient.df_input_vjps
    ]
    df_args = [
        *vjps,
        *[args[i] for i in gradient.df_input_captured_inputs],
        *[outputs[i] for i in gradient.df_input_captured_outputs],
    ]
    run_both(gradient.df, df_args)


def describe(value: Any) -> Any:
    """A value's kind, and for arrays their dtype and shape, through tuples and lists."""
    if isinstance(value, tuple | list):
        return type(value), [describe(item) for item in value]
    return type(value), getattr(value, "dtype", None), getattr(value, "shape", None)


def observed_run(executor: type, graph: Graph, args: Any) -> tuple[Any, list[Any]]:
    """The results of ``graph`` run by ``executor`` with an observer, and what it saw: each
    kernel node with the kinds, dtypes and shapes of its arguments, in order (a tape's
    elements are np.empty's until written, so values are compared through the results)."""
    seen: list[Any] = []

    def observe(node: Any, kernel: Any, values: tuple[Any, ...]) -> Any:
        seen.append((node, [describe(v) for v in values]))
        return kernel(*values)

    return executor(graph, observer=observe)(*copied(args)), seen


@pytest.mark.parametrize("case", params(GRADIENT_CASES))
def test_an_observer_sees_the_interpreters_calls_in_generated_code(case: Any) -> None:
    # Note [Observed code]: anomaly mode and the profiler run generated code, not another
    # executor; what they watch must be what the interpreter, the oracle, would show them.
    scripted = ad.script(case.fn)
    args = scripted.runtime_values(case.make(np.random.default_rng(0)), {})
    names = list(scripted.signature.parameters)
    types = [argument_type(case.name, n, v) for n, v in zip(names, args, strict=True)]
    wrt = [i for i, value in enumerate(args) if is_differentiable(value)]
    gradient = compile_gradient(scripted.graph, types, wrt).gradient
    outputs, _ = observed_run(Executable, gradient.f, args)
    vjps = [
        np.ones(np.shape(outputs[i]), np.result_type(outputs[i])) for i in gradient.df_input_vjps
    ]
    df_args = [
        *vjps,
        *[args[i] for i in gradient.df_input_captured_inputs],
        *[outputs[i] for i in gradient.df_input_captured_outputs],
    ]
    # f's tapes may hold np.empty's elements an iteration did not write: its real outputs.
    real = gradient.f_real_outputs
    for graph, graph_args, compared in ((gradient.f, args, real), (gradient.df, df_args, None)):
        expected, interpreted = observed_run(Executable, graph, graph_args)
        actual, generated = observed_run(CompiledGraph, graph, graph_args)
        assert_identical(actual[:compared], expected[:compared])
        assert [node for node, _ in generated] == [node for node, _ in interpreted]
        assert generated == interpreted


def test_the_corpora_are_covered() -> None:
    assert len(params(EQUIVALENCE_CASES)) >= 50
    assert len(params(GRADIENT_CASES)) >= 30


# ---- control flow, tuples, lists, autograd glue -----------------------------------------------

WHILE_GRAPH = """graph @f(%x : float):
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

NESTED_LOOPS_GRAPH = """graph @f(%n : int, %m : int, %x : Tensor):
  %true : bool = prim::Constant[value=True]()
  %y : Tensor, %k : int = prim::Loop(%n, %true, %x, %n)
    block0(%i : int, %acc : Tensor, %t : int):
      %inner : Tensor = prim::Loop(%m, %true, %acc)
        block0(%j : int, %a : Tensor):
          %a.1 : Tensor = aten::add(%a, %x)
          %s : Tensor = aten::mul(%a.1, %j)
          -> (%true, %s)
      %t.1 : int = prim::add(%t, %i)
      -> (%true, %inner, %t.1)
  return (%y, %k)
"""

LOOP_RETURNS_ITS_COUNTER = """graph @f(%n : int):
  %true : bool = prim::Constant[value=True]()
  %zero : int = prim::Constant[value=0]()
  %last : int = prim::Loop(%n, %true, %zero)
    block0(%i : int, %previous : int):
      -> (%true, %i)
  return (%last)
"""

TUPLES_AND_LISTS = """graph @f(%a : int, %b : float, %x : Tensor):
  %t : (int, float) = prim::TupleConstruct(%a, %b)
  %p : int, %q : float = prim::TupleUnpack(%t)
  %u : (int) = prim::TupleConstruct(%a)
  %only : int = prim::TupleUnpack(%u)
  %empty : () = prim::TupleConstruct()
  %zero : int = prim::Constant[value=0]()
  %first : int = prim::TupleIndex(%t, %zero)
  %l : Tensor[] = prim::ListConstruct(%x, %x)
  %l.1 : Tensor[] = prim::ListAppend(%l, %x)
  %e : Tensor = prim::ListIndex(%l.1, %zero)
  %r : Tensor, %s : Tensor, %w : Tensor = prim::ListUnpack(%l.1)
  %dz : Tensor = prim::AutogradZero()
  %sum : Tensor = prim::AutogradAdd(%dz, %e)
  return (%t, %q, %only, %empty, %first, %l.1, %s, %sum, %p)
"""

GRAD_OF_NO_INPUTS = """graph @df(%w : Tensor):
  %dx : Tensor = prim::GradOf[name="aten::ones"]()
    block0():
      %t : Tensor = aten::neg(%w)
      -> (%t)
  return (%dx)
"""

CONTROL_FLOW = {
    "if-then": (IF_GRAPH, (3, np.array([0.5, -1.0]))),
    "if-else": (IF_GRAPH, (0, np.array([0.5, -1.0]))),
    "for-loop": (LOOP_GRAPH, (4, True, np.array([2.0]), 10)),
    "loop-not-entered": (LOOP_GRAPH, (4, False, np.array([2.0]), 10)),
    "while-loop": (WHILE_GRAPH, (2.0,)),
    "nested-loops": (NESTED_LOOPS_GRAPH, (3, 2, np.arange(3.0))),
    "loop-returns-counter": (LOOP_RETURNS_ITS_COUNTER, (5,)),
    "tuples-and-lists": (TUPLES_AND_LISTS, (1, 2.5, np.arange(2.0))),
    "grad-of": (GRAD_OF_GRAPH, (np.array([1.0, 2.0]), np.eye(2))),
    "grad-of-sentinel": (GRAD_OF_GRAPH, (AUTOGRAD_ZERO, np.eye(3))),
    "grad-of-no-inputs": (GRAD_OF_NO_INPUTS, (np.eye(2),)),
}


@pytest.mark.parametrize("name", sorted(CONTROL_FLOW))
def test_control_flow_runs_identically(name: str) -> None:
    text, args = CONTROL_FLOW[name]
    run_both(parse_graph(text), args)


def test_grad_of_with_the_sentinel_skips_its_block() -> None:
    assert CompiledGraph(parse_graph(GRAD_OF_GRAPH))(AUTOGRAD_ZERO, np.eye(3)) == [AUTOGRAD_ZERO]


def test_loops_and_branches_compile_to_while_and_if() -> None:
    source = CompiledGraph(parse_graph(NESTED_LOOPS_GRAPH)).source
    assert source.count("while ") == 2
    assert "if " not in CompiledGraph(parse_graph(LOOP_GRAPH)).source
    assert "    if positive:" in CompiledGraph(parse_graph(IF_GRAPH)).source


def test_scripted_control_flow_runs_identically() -> None:
    def walk(x, n: int):
        total = np.zeros_like(x)
        for i in range(n):
            if i % 2 == 0:  # noqa: SIM108  (a prim::If to compile)
                total = total + x * i
            else:
                total = total - np.sin(x)
        k = 0
        while np.sum(total) < 10.0 and k < 5:
            total = total + 1.0
            k += 1
        return total, k

    scripted = ad.script(walk)
    args = [np.linspace(0.0, 1.0, 4), 5]
    run_both(scripted.graph_for(*args), args)


def test_call_function_with_a_python_callable_and_a_callee_graph() -> None:
    graph = Graph("f")
    x = graph.add_input()
    fn = graph.insert_constant(lambda a, b: (a + b, a * b), ANY)
    two = graph.insert_constant(2, INT)
    node = graph.insert("prim::CallFunction", [fn, x, two], [INT, INT])
    for out in node.outputs:
        graph.register_output(out)
    assert run_both(graph, (5,)) == [7, 10]
    helper = parse_graph(
        "graph @helper(%a : Tensor):\n  %b : Tensor = aten::neg(%a)\n  return (%b)\n"
    )
    caller = parse_graph(
        """graph @main(%x : Tensor):
  %y : Tensor = prim::CallFunction[callee="helper"](%x)
  %z : Tensor = aten::exp(%y)
  return (%z)
"""
    )
    run_both(caller, (np.arange(3.0),), functions={"helper": helper})


def test_a_graph_given_as_a_value_is_called_as_generated_code() -> None:
    # prim::CallFunction without a callee attribute may be handed a Graph: it runs as
    # generated code too, with the interpreter's results and errors.
    helper = parse_graph(
        "graph @helper(%a : Tensor, %m : Tensor):\n"
        "  %b : Tensor = aten::matmul(%a, %m)  # helper.py:2:4\n"
        "  return (%b)\n"
    )
    graph = Graph("f")
    x, m = graph.add_input(), graph.add_input()
    callee = graph.insert_constant(helper, ANY)
    graph.register_output(graph.insert("prim::CallFunction", [callee, x, m], [ANY]).output)
    run_both(graph, (np.arange(2.0), np.eye(2)))
    expected, actual = errors_of(graph, np.arange(2.0), np.eye(3))
    assert type(actual) is InterpreterError
    assert str(actual) == str(expected)
    assert str(actual.source_range) == "helper.py:2:4"
    frames = traceback.extract_tb(actual.__cause__.__traceback__)  # type: ignore[union-attr]
    assert any(frame.filename.startswith("<generated graph @helper") for frame in frames)


def test_constant_arrays_are_copied_on_the_way_out() -> None:
    graph = Graph("f")
    x = graph.add_input()
    table = graph.insert_constant(np.array([1.0, 2.0]), ANY)
    graph.register_output(graph.insert("aten::add", [x, table]).output)
    graph.register_output(table)
    compiled = CompiledGraph(graph)
    first_table = compiled(1.0)[1]
    first_table[0] = 100.0
    np.testing.assert_array_equal(compiled(1.0)[1], [1.0, 2.0])


# ---- errors ---------------------------------------------------------------------------------


def errors_of(graph: Graph, *args: Any) -> tuple[BaseException, BaseException]:
    """The errors the interpreter and the generated code raise on ``args``."""
    caught = []
    for runner in (Executable(graph), CompiledGraph(graph)):
        with pytest.raises(Exception) as info:  # noqa: PT011
            runner(*copied(args))
        caught.append(info.value)
    return caught[0], caught[1]


def test_kernel_errors_are_reported_as_the_interpreter_reports_them() -> None:
    text = """graph @f(%x : Tensor, %w : Tensor):
  %h : Tensor = aten::matmul(%x, %w)  # model.py:4:8
  return (%h)
"""
    expected, actual = errors_of(parse_graph(text), np.ones((2, 3)), np.ones(4))
    assert isinstance(actual, InterpreterError)
    assert str(actual) == str(expected)
    assert "while executing %h : Tensor = aten::matmul(%x, %w)" in str(actual)
    assert str(actual.source_range) == "model.py:4:8"
    assert isinstance(actual.__cause__, ValueError)


def test_errors_inside_loops_and_branches_name_the_inner_node() -> None:
    loop = LOOP_GRAPH.replace("aten::mul(%acc, %x)", "aten::mul(%acc, %x)  # model.py:9:2")
    expected, actual = errors_of(parse_graph(loop), 2, True, np.ones(3), "oops")
    assert str(actual) == str(expected)
    assert "prim::add" in str(actual)
    branch = IF_GRAPH.replace("aten::exp(%x)", "aten::exp(%x)  # model.py:7:3")
    expected, actual = errors_of(parse_graph(branch), 1, "not an array")
    assert str(actual) == str(expected)
    assert str(actual.source_range) == "model.py:7:3"  # type: ignore[attr-defined]


def test_an_ambiguous_condition_names_the_if() -> None:
    text = IF_GRAPH.replace("prim::gt(%n, %zero)", "aten::gt(%x, %zero)")
    expected, actual = errors_of(parse_graph(text), 1, np.array([1.0, -1.0]))
    assert str(actual) == str(expected)
    assert "prim::If: The truth value of an array" in str(actual)


def test_a_callee_errors_pass_through_unchanged() -> None:
    def refuse(a: Any) -> Any:
        raise AutodiffError("refused by the callee")

    graph = Graph("f")
    x = graph.add_input()
    fn = graph.insert_constant(refuse, ANY)
    graph.register_output(graph.insert("prim::CallFunction", [fn, x], [ANY]).output)
    expected, actual = errors_of(graph, 1.0)
    assert type(actual) is AutodiffError
    assert str(actual) == str(expected)


def test_wrong_number_of_arguments() -> None:
    with pytest.raises(InterpreterError, match=r"graph @f takes 2 arguments, got 1"):
        CompiledGraph(parse_graph(IF_GRAPH))(1)


def test_unknown_operator_is_refused_when_compiling() -> None:
    graph = parse_graph(
        "graph @f(%x : Tensor):\n  %y : Tensor = aten::frobnicate(%x)\n  return (%y)\n"
    )
    with pytest.raises(InterpreterError, match=r"unknown operator aten::frobnicate"):
        CompiledGraph(graph)


def test_tracebacks_show_the_generated_source() -> None:
    compiled = CompiledGraph(parse_graph(IF_GRAPH))
    with pytest.raises(InterpreterError) as info:
        compiled(1, "not an array")
    frames = traceback.extract_tb(info.value.__cause__.__traceback__)  # type: ignore[union-attr]
    generated = [frame for frame in frames if frame.filename == compiled.filename]
    assert generated
    assert generated[0].line == "e = aten_exp(x)"
    assert linecache.getline(compiled.filename, 1).startswith("def _make(")


# ---- names ------------------------------------------------------------------------------------

# Python reads identifiers NFKC-normalised: `ﬁ` is the variable `fi`, `½` (1, fraction slash, 2)
# and `x²` (x2) are no identifiers as written.
UNICODE_NAMES_GRAPH = """\
graph @f(%fi : float, %\ufb01 : float, %\u00bd : float, %x\u00b2 : float, %x2 : float):
  %d : float = prim::sub(%fi, %\ufb01)
  %s : float = prim::add(%d, %\u00bd)
  %p : float = prim::mul(%s, %x\u00b2)
  %r : float = prim::sub(%p, %x2)
  return (%r)
"""


def test_names_equal_under_nfkc_stay_apart_and_odd_names_compile() -> None:
    graph = parse_graph(UNICODE_NAMES_GRAPH)
    # (5 - 2 + 1) * 3 - 10: the generated code mixed `fi` and `ﬁ` up, or did not compile `½`
    assert run_both(graph, [5.0, 2.0, 1.0, 3.0, 10.0]) == [2.0]
    assert CompiledGraph(graph)(5.0, 2.0, 1.0, 3.0, 10.0) == [2.0]


@pytest.mark.parametrize("name", ["\u00e9t\u00e9", "\u03b1", "x\u2080", "\u2167", "_\u00b9"])
def test_a_unicode_name_compiles_to_an_identifier(name: str) -> None:
    graph = parse_graph(
        f"graph @f(%{name} : float, %y : float):\n"
        f"  %z : float = prim::add(%{name}, %y)\n  return (%z)\n"
    )
    assert CompiledGraph(graph)(1.0, 2.0) == [3.0]


def test_an_int_constant_past_4300_decimal_digits_compiles() -> None:
    graph = Graph("f")
    graph.register_output(graph.insert_constant(7**20_000, INT))
    # Python refuses to write such an int in decimal (the generated code's literal)
    assert run_both(graph, []) == [7**20_000]


# ---- freeing ----------------------------------------------------------------------------------


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
    total, alive = CompiledGraph(graph, probe.ops)()
    assert total == 1000.0
    assert alive is False


def test_a_result_that_takes_a_dying_values_name_drops_it() -> None:
    probe = Probe()
    graph = parse_graph(
        """graph @f():
  %a : Tensor = test::make()
  %a.1 : Tensor = aten::neg(%a)
  %alive : bool = test::alive(%a.1)
  return (%a.1, %alive)
"""
    )
    compiled = CompiledGraph(graph, probe.ops)
    assert "    a = aten_neg(a)\n" in compiled.source
    negated, alive = compiled()
    np.testing.assert_array_equal(negated, -np.ones(1000))
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
    assert CompiledGraph(graph, probe.ops)() == [False]
    assert probe.seen_alive == [True, True, False]


def test_values_made_in_a_loop_body_die_in_the_body() -> None:
    probe = Probe()
    graph = parse_graph(
        """graph @f():
  %true : bool = prim::Constant[value=True]()
  %false : bool = prim::Constant[value=False]()
  %two : int = prim::Constant[value=2]()
  %flag : bool = prim::Loop(%two, %true, %false)
    block0(%i : int, %f : bool):
      %a : Tensor = test::make()
      %b : Tensor = aten::neg(%a)
      %inside : bool = test::alive(%b)
      -> (%true, %inside)
  return (%flag)
"""
    )
    assert CompiledGraph(graph, probe.ops)() == [False]
    assert probe.seen_alive == [False, False]


class Watched:
    """An argument whose death is observed by a test-only operator."""

    def __init__(self) -> None:
        self.seen_alive: list[bool] = []
        self.ops: dict[str, OpDef] = dict(OPS)
        self.ops["test::alive"] = OpDef(
            parse_schema("test::alive(Any after) -> bool"),
            self.alive,
            None,
            pure=False,
            derivative=Derivative.NONE,
        )
        self.watched: weakref.ref[np.ndarray] | None = None

    def alive(self, after: Any) -> bool:
        assert self.watched is not None
        living = self.watched() is not None
        self.seen_alive.append(living)
        return living


def test_run_drops_each_argument_after_its_last_use() -> None:
    watch = Watched()
    graph = parse_graph(
        """graph @df(%captured : Tensor, %other : Tensor):
  %none : NoneType = prim::Constant[value=None]()
  %false : bool = prim::Constant[value=False]()
  %s : Tensor = aten::sum(%captured, %none, %false)
  %alive : bool = test::alive(%s)
  %t : Tensor = aten::add(%other, %s)
  return (%t, %alive)
"""
    )
    compiled = CompiledGraph(graph, watch.ops)
    captured = np.ones(1000)
    watch.watched = weakref.ref(captured)
    inputs = [captured, np.ones(3)]
    del captured
    total, alive = compiled.run(inputs)
    assert inputs == []
    assert alive is False
    np.testing.assert_array_equal(total, np.full(3, 1001.0))


def test_carried_values_the_body_never_reads_die_before_the_loop() -> None:
    watch = Watched()
    graph = parse_graph(
        """graph @f(%x : Tensor, %n : int):
  %true : bool = prim::Constant[value=True]()
  %y : Tensor = prim::Loop(%n, %true, %x)
    block0(%i : int, %acc : Tensor):
      %acc.1 : Tensor = aten::neg(%acc)
      %alive : bool = test::alive(%acc.1)
      -> (%true, %acc.1)
  return (%y)
"""
    )
    x = np.ones(1000)
    watch.watched = weakref.ref(x)
    inputs: list[Any] = [x, 2]
    del x
    CompiledGraph(graph, watch.ops).run(inputs)
    assert watch.seen_alive == [False, False]


# ---- size and limits ------------------------------------------------------------------------


def chain(length: int) -> Graph:
    """A straight-line graph of ``length`` elementwise nodes."""
    graph = Graph("chain")
    x = graph.add_input()
    value = x
    for i in range(length):
        kind = ("aten::sin", "aten::neg", "aten::exp")[i % 3]
        value = graph.insert(kind, [value]).output
        if i % 5 == 4:
            value = graph.insert("aten::add", [value, x]).output
    graph.register_output(value)
    return graph


def test_generated_code_grows_linearly_with_the_graph() -> None:
    sizes = {}
    for length in (1000, 5000):
        graph = chain(length)
        nodes = sum(1 for _ in graph.all_nodes())
        compiled = CompiledGraph(graph)
        lines = compiled.source.count("\n")
        sizes[length] = lines
        assert lines <= 2 * nodes + 10  # a statement, and a del, per node
        assert len(compiled.line_nodes) == nodes
    assert sizes[5000] <= 5 * sizes[1000] + 10
    x = np.array([0.25, 0.5])
    run_both(chain(1000), (x,))


def nest(kinds: list[str], located: str = "") -> Graph:
    """A graph that nests one block per item of ``kinds`` (``loop``, ``if`` or ``grad``) in the
    one before. Each level adds ``%x`` to what it was given; the innermost node multiplies by
    ``%w`` (at the location comment ``located``) and adds a value of the fourth level, so the
    innermost blocks read values from far out. Ifs nest in their else-branch, taken unless
    ``%stop`` (the IR parser counts a then-branch's pending else-branch as a level too);
    loops run twice every tenth level and once otherwise."""
    lines = [
        "graph @f(%x : Tensor, %w : Tensor, %stop : bool):",
        "  %true : bool = prim::Constant[value=True]()",
        "  %one : int = prim::Constant[value=1]()",
        "  %two : int = prim::Constant[value=2]()",
    ]

    def level(k: int, pad: str, given: str) -> str:
        if k == len(kinds):
            lines.append(f"{pad}%z : Tensor = aten::matmul({given}, %w){located}")
            lines.append(f"{pad}%r : Tensor = aten::add(%z, %b3)")
            return "%r"
        kind, body = kinds[k], pad + "    "
        if kind == "loop":
            trip = "%two" if k % 10 == 9 else "%one"
            lines.append(f"{pad}%y{k} : Tensor = prim::Loop({trip}, %true, {given})")
            lines.append(f"{pad}  block0(%i{k} : int, %a{k} : Tensor):")
            given = f"%a{k}"
        elif kind == "if":
            lines.append(f"{pad}%y{k} : Tensor = prim::If(%stop)")
            lines.append(f"{pad}  block0():")
            lines.append(f"{body}%n{k} : Tensor = aten::neg({given})")
            lines.append(f"{body}-> (%n{k})")
            lines.append(f"{pad}  block1():")
        else:
            lines.append(f'{pad}%y{k} : Tensor = prim::GradOf[name="aten::add"]({given})')
            lines.append(f"{pad}  block0():")
        lines.append(f"{body}%b{k} : Tensor = aten::add({given}, %x)")
        inner = level(k + 1, body, f"%b{k}")
        lines.append(f"{body}-> (%true, {inner})" if kind == "loop" else f"{body}-> ({inner})")
        return f"%y{k}"

    lines.append(f"  return ({level(0, '  ', '%x')})")
    return parse_graph("\n".join(lines) + "\n")


DEEP_NESTS = {
    "30-loops": ["loop"] * 30,
    "150-ifs": ["if"] * 150,
    "loops-ifs-and-grad-ofs": ["loop", "if", "grad"] * 40,
}


@pytest.mark.parametrize("kinds", DEEP_NESTS.values(), ids=DEEP_NESTS.keys())
def test_a_nest_deeper_than_python_compiles_runs_as_generated_code(kinds: list[str]) -> None:
    # Python compiles at most 20 nested loops and 100 indentation levels in one function:
    # deeper blocks become functions of their own (Note [Lifted blocks]), still generated code.
    graph = nest(kinds)
    runnable = executable(graph, executor="codegen")
    assert isinstance(runnable, CompiledGraph)
    assert runnable.source.count("\n    def ") >= 2  # the graph's function and a lifted one
    x, w = np.array([0.5, -1.0]), np.array([[1.0, 2.0], [0.5, -1.0]])
    for stop in (False, True):
        run_both(graph, (x, w, stop))
    # An error deep inside is located as the interpreter locates it.
    located = nest(kinds, "  # model.py:9:4")
    expected, actual = errors_of(located, x, np.ones((3, 3)), False)
    assert isinstance(actual, InterpreterError)
    assert str(actual) == str(expected)
    assert "while executing %z : Tensor = aten::matmul(%b" in str(actual)
    assert str(actual.source_range) == "model.py:9:4"
    # An observer sees every kernel call the interpreter makes, deep inside too.
    interpreted, seen_by_interpreter = observed_run(Executable, graph, (x, w, False))
    generated, seen_by_generated = observed_run(CompiledGraph, graph, (x, w, False))
    assert_identical(generated, interpreted)
    assert len(seen_by_generated) > len(kinds)
    assert seen_by_generated == seen_by_interpreter


def test_lifted_blocks_keep_the_memory_plan_and_never_write_into_what_they_read() -> None:
    # Note [Lifted blocks]: a lifted loop writes into what its own body computes, never into
    # the values it is handed (read by the loop, so never private), even when owned.
    ty = f"Double({INPLACE_MIN_SIZE})"
    lines = [
        f"graph @f(%x : {ty}, %s : {ty}):",
        "  %true : bool = prim::Constant[value=True]()",
        "  %one : int = prim::Constant[value=1]()",
    ]
    given, depth = "%s", 25
    for k in range(depth):
        pad = "  " * (2 * k + 1)
        lines.append(f"{pad}%y{k} : {ty} = prim::Loop(%one, %true, {given})")
        lines.append(f"{pad}  block0(%i{k} : int, %a{k} : {ty}):")
        lines.append(f"{pad}    %b{k} : {ty} = aten::add(%a{k}, %x)")
        lines.append(f"{pad}    %c{k} : {ty} = aten::sin(%b{k})")
        given = f"%c{k}"
    lines.append(f"{'  ' * (2 * depth + 1)}-> (%true, %c{depth - 1})")
    for k in reversed(range(depth - 1)):
        lines.append(f"{'  ' * (2 * k + 2)}  -> (%true, %y{k + 1})")
    lines.append("  return (%y0)")
    graph = parse_graph("\n".join(lines) + "\n")
    compiled = CompiledGraph(graph, owned=[0, 1])
    lifted = compiled.source[compiled.source.index("\n    def _loop") :]
    assert f"c{depth - 1} = aten_sin(b{depth - 1}, out=b{depth - 1})" in lifted
    x, s = np.linspace(-1.0, 1.0, INPLACE_MIN_SIZE), np.linspace(0.0, 2.0, INPLACE_MIN_SIZE)
    expected = Executable(graph)(x.copy(), s.copy())
    given_x, given_s = x.copy(), s.copy()
    assert_identical(compiled(given_x, given_s), expected)
    assert_identical([given_x, given_s], [x, s], "arguments after the call")


def deep_program(directory: Any) -> Any:
    """A module with ``loops`` (19 nested for loops, the most Python compiles) and ``branches``
    (97 nested ifs), written out so that scripting can read their source."""
    lines = ["import numpy as np", "", "", "def loops(x):", "    y = x"]
    for k in range(19):
        pad = "    " * (k + 1)
        lines += [
            f"{pad}for i{k} in range({2 if k % 6 == 0 else 1}):",
            f"{pad}    y = np.sin(y) * x",
        ]
    lines += [
        "    " * 20 + "y = y + 1.0",
        "    return np.sum(y)",
        "",
        "",
        "def branches(x):",
        "    y = x",
    ]
    for k in range(97):
        pad = "    " * (k + 1)
        lines += [f"{pad}if np.sum(y) < 1e9:", f"{pad}    y = np.tanh(y) * x"]
    lines += ["    return np.sum(y)"]
    path = directory / "deep_program.py"
    path.write_text("\n".join(lines) + "\n")
    spec = importlib.util.spec_from_file_location("deep_program", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_scripted_programs_nested_deeper_than_one_function_run_generated_code(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    # 19 loops and 97 branches (and more in the gradients, with their GradOfs) are more than
    # one generated function holds: part of each is lifted (Note [Lifted blocks]).
    monkeypatch.delenv(EXECUTOR_VARIABLE, raising=False)
    program = deep_program(tmp_path)
    x = np.linspace(0.1, 0.9, 5)
    for fn in (program.loops, program.branches):
        scripted = ad.script(fn)
        value = scripted(x)
        generated = ad.value_and_grad(fn)(x)
        (runnable,) = [unit.executable for unit in scripted.cache.values()]
        assert isinstance(runnable, CompiledGraph)
        assert runnable.source.count("\n    def ") >= 2  # the graph's function and a lifted one
        monkeypatch.setenv(EXECUTOR_VARIABLE, "interpreter")
        assert_identical(value, ad.script(fn)(x))
        assert_identical(generated, ad.value_and_grad(fn)(x))
        monkeypatch.delenv(EXECUTOR_VARIABLE)


# ---- choosing the executor ------------------------------------------------------------------


def test_the_executor_is_generated_code_unless_the_environment_says_otherwise(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    graph = parse_graph(IF_GRAPH)
    monkeypatch.delenv(EXECUTOR_VARIABLE, raising=False)
    assert isinstance(executable(graph), CompiledGraph)
    monkeypatch.setenv(EXECUTOR_VARIABLE, "interpreter")
    assert isinstance(executable(graph), Executable)
    assert isinstance(executable(graph, executor="codegen"), CompiledGraph)
    monkeypatch.delenv(EXECUTOR_VARIABLE)
    observed = executable(graph, observer=lambda node, kernel, args: kernel(*args))
    assert isinstance(observed, CompiledGraph)  # observing is an option of generated code
    monkeypatch.setenv(EXECUTOR_VARIABLE, "jit")
    with pytest.raises(InterpreterError, match=r"unknown executor 'jit'"):
        executable(graph)


def test_scripted_functions_and_gradients_run_generated_code(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(EXECUTOR_VARIABLE, raising=False)

    def loss(w, x):
        return np.sum(np.tanh(x @ w) ** 2)

    scripted = ad.script(loss)
    w, x = np.ones(3), np.arange(6.0).reshape(2, 3)
    scripted(w, x)
    assert all(isinstance(unit.executable, CompiledGraph) for unit in scripted.cache.values())
    generated = ad.grad(loss)(w, x)
    monkeypatch.setenv(EXECUTOR_VARIABLE, "interpreter")
    interpreted = ad.grad(loss)(w, x)
    assert_identical(generated, interpreted)
