"""The emitter: golden IR for every statement kind, source ranges, errors with their location,
the compile_function module (callees, specialisation, caching, recursion) and the inline pass
on compiled code. Running compiled functions against the plain ones is in test_emit_semantics."""

from __future__ import annotations

import functools
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from frontend import ScriptError, compile_function, emit_function
from frontend.parse import parse_source
from ir.graph import Graph, Value
from ir.interpreter import run_graph
from ir.parser import parse_graph
from ir.printer import print_graph
from ir.source import SourceRange, shown_path
from ir.types import NONE, TENSOR
from ir.verify import verify
from passes import run_module_passes
from tests.helpers import assert_ir

THIS_FILE = Path(__file__).read_text(encoding="utf-8").splitlines()


def emit(source: str, **namespace: Any) -> Graph:
    """The verified graph of the one function in ``source`` (file ``<test>``, line 1 first),
    after checking that its IR text round-trips."""
    module = parse_source(textwrap.dedent(source).strip("\n"), "<test>")
    graph, _ = emit_function(module.functions[0], {"np": np, **namespace})
    check(graph)
    return graph


def check(graph: Graph) -> None:
    verify(graph)
    text = print_graph(graph)
    assert print_graph(parse_graph(text)) == text


def without_ranges(graph: Graph) -> Graph:
    for node in graph.all_nodes():
        node.source_range = None
    return graph


def emit_error(source: str, **namespace: Any) -> ScriptError:
    with pytest.raises(ScriptError) as info:
        emit(source, **namespace)
    return info.value


def located(error: ScriptError, source: str, marker: str) -> str:
    """The message of ``error``, after checking that it points at ``marker`` on the last line
    of ``source`` that holds it."""
    lines = textwrap.dedent(source).strip("\n").splitlines()
    hits = [(i + 1, line.index(marker) + 1) for i, line in enumerate(lines) if marker in line]
    assert error.source_range is not None
    where = (error.source_range.line, error.source_range.col)
    assert where == hits[-1], f"error at {where}, {marker!r} at {hits[-1]}"
    return error.message


# ---- golden IR ----------------------------------------------------------------------------------


def test_assignments_are_ssa_and_scalars_use_prim_operators() -> None:
    graph = emit(
        """
        def f(x, n: int):
            a = x * 2.0
            b = n * 2
            a = a + b
            return a, b
        """
    )
    assert_ir(
        without_ranges(graph),
        """
        graph @f(%x : Tensor, %n : int):
          %2 : float = prim::Constant[value=2.]()
          %a : Tensor = aten::mul(%x, %2)
          %4 : int = prim::Constant[value=2]()
          %b : int = prim::mul(%n, %4)
          %a.1 : Tensor = aten::add(%a, %b)
          %7 : (Tensor, int) = prim::TupleConstruct(%a.1, %b)
          return (%7)
        """,
    )


def test_nodes_carry_source_ranges() -> None:
    graph = emit(
        """
        def f(x):
            y = np.tanh(x) * 2
            return y
        """
    )
    assert_ir(
        graph,
        """
        graph @f(%x : Tensor):
          %1 : Tensor = aten::tanh(%x)  # <test>:2:9
          %2 : int = prim::Constant[value=2]()  # <test>:2:22
          %y : Tensor = aten::mul(%1, %2)  # <test>:2:9
          return (%y)
        """,
    )


def test_if_outputs_are_names_assigned_in_a_branch_and_defined_on_both_paths() -> None:
    graph = emit(
        """
        def f(x, n: int):
            y = x
            if n > 0:
                y = y * 2.0
                z = n
            else:
                z = -n
            return y + z
        """
    )
    assert_ir(
        without_ranges(graph),
        """
        graph @f(%x : Tensor, %n : int):
          %2 : int = prim::Constant[value=0]()
          %3 : bool = prim::gt(%n, %2)
          %y : Tensor, %z : int = prim::If(%3)
            block0():
              %6 : float = prim::Constant[value=2.]()
              %y.1 : Tensor = aten::mul(%x, %6)
              -> (%y.1, %n)
            block1():
              %z.1 : int = prim::neg(%n)
              -> (%x, %z.1)
          %9 : Tensor = aten::add(%y, %z)
          return (%9)
        """,
    )


def test_early_return_moves_the_rest_into_the_other_branch() -> None:
    graph = emit(
        """
        def f(x):
            if np.sum(x) > 0:
                return x
            return -x
        """
    )
    assert_ir(
        without_ranges(graph),
        """
        graph @f(%x : Tensor):
          %1 : NoneType = prim::Constant[value=None]()
          %2 : bool = prim::Constant[value=False]()
          %3 : Tensor = aten::sum(%x, %1, %2)
          %4 : int = prim::Constant[value=0]()
          %5 : Tensor = aten::gt(%3, %4)
          %6 : bool = prim::bool(%5)
          %7 : Tensor = prim::If(%6)
            block0():
              -> (%x)
            block1():
              %8 : Tensor = aten::neg(%x)
              -> (%8)
          return (%7)
        """,
    )


def test_for_range_is_a_loop_with_trip_count_and_carried_values() -> None:
    graph = emit(
        """
        def f(x, n: int):
            acc = x
            for i in range(1, n):
                acc = acc * i
            return acc
        """
    )
    assert_ir(
        without_ranges(graph),
        """
        graph @f(%x : Tensor, %n : int):
          %2 : int = prim::Constant[value=1]()
          %3 : int = prim::sub(%n, %2)
          %4 : bool = prim::Constant[value=True]()
          %acc : Tensor = prim::Loop(%3, %4, %x)
            block0(%6 : int, %acc.1 : Tensor):
              %i : int = prim::add(%2, %6)
              %acc.2 : Tensor = aten::mul(%acc.1, %i)
              %10 : bool = prim::Constant[value=True]()
              -> (%10, %acc.2)
          return (%acc)
        """,
    )


def test_while_evaluates_its_test_before_the_loop_and_after_each_iteration() -> None:
    graph = emit(
        """
        def f(x):
            while np.max(x) < 10.0:
                x = x * 2.0
            return x
        """
    )
    assert_ir(
        without_ranges(graph),
        """
        graph @f(%x : Tensor):
          %1 : NoneType = prim::Constant[value=None]()
          %2 : bool = prim::Constant[value=False]()
          %3 : Tensor = aten::max(%x, %1, %2)
          %4 : float = prim::Constant[value=10.]()
          %5 : Tensor = aten::lt(%3, %4)
          %6 : bool = prim::bool(%5)
          %7 : int = prim::Constant[value=9223372036854775807]()
          %x.1 : Tensor = prim::Loop(%7, %6, %x)
            block0(%9 : int, %x.2 : Tensor):
              %11 : float = prim::Constant[value=2.]()
              %x.3 : Tensor = aten::mul(%x.2, %11)
              %13 : NoneType = prim::Constant[value=None]()
              %14 : bool = prim::Constant[value=False]()
              %15 : Tensor = aten::max(%x.3, %13, %14)
              %16 : float = prim::Constant[value=10.]()
              %17 : Tensor = aten::lt(%15, %16)
              %18 : bool = prim::bool(%17)
              -> (%18, %x.3)
          return (%x.1)
        """,
    )


def test_break_ends_the_loop_through_its_continue_condition() -> None:
    graph = emit(
        """
        def f(n: int):
            k = 0
            for i in range(n):
                if i == 3:
                    break
                k = k + i
            return k
        """
    )
    assert_ir(
        without_ranges(graph),
        """
        graph @f(%n : int):
          %k : int = prim::Constant[value=0]()
          %2 : bool = prim::Constant[value=True]()
          %k.1 : int = prim::Loop(%n, %2, %k)
            block0(%i : int, %k.2 : int):
              %6 : int = prim::Constant[value=3]()
              %7 : bool = prim::eq(%i, %6)
              %8 : bool, %k.3 : int = prim::If(%7)
                block0():
                  %10 : bool = prim::Constant[value=False]()
                  -> (%10, %k.2)
                block1():
                  %k.4 : int = prim::add(%k.2, %i)
                  %12 : bool = prim::Constant[value=True]()
                  -> (%12, %k.4)
              -> (%8, %k.3)
          return (%k.1)
        """,
    )


def test_unpacking_shapes_subscripts_and_tuple_literals() -> None:
    graph = emit(
        """
        def f(x):
            rows, cols = x.shape
            a, b = x, rows
            return a[0, 1:], rows * cols, b
        """
    )
    assert_ir(
        without_ranges(graph),
        """
        graph @f(%x : Tensor):
          %1 : int[] = aten::shape(%x)
          %rows : int, %cols : int = prim::TupleUnpack(%1)
          %4 : int = prim::Constant[value=0]()
          %5 : int = prim::Constant[value=1]()
          %6 : NoneType = prim::Constant[value=None]()
          %7 : NoneType = prim::Constant[value=None]()
          %8 : int = prim::Constant[value=0]()
          %9 : Tensor = aten::select(%x, %8, %4)
          %10 : int = prim::Constant[value=0]()
          %11 : Tensor = aten::slice(%9, %10, %5, %6, %7)
          %12 : int = prim::mul(%rows, %cols)
          %13 : (Tensor, int, int) = prim::TupleConstruct(%11, %12, %rows)
          return (%13)
        """,
    )


def test_numpy_arguments_fill_the_schema_with_defaults_and_packed_shapes() -> None:
    graph = emit(
        """
        def f(x):
            return np.sum(x, axis=0, keepdims=True).reshape(2, 3) + x.T
        """
    )
    assert_ir(
        without_ranges(graph),
        """
        graph @f(%x : Tensor):
          %1 : int = prim::Constant[value=0]()
          %2 : bool = prim::Constant[value=True]()
          %3 : Tensor = aten::sum(%x, %1, %2)
          %4 : int = prim::Constant[value=2]()
          %5 : int = prim::Constant[value=3]()
          %6 : (int, int) = prim::TupleConstruct(%4, %5)
          %7 : Tensor = aten::reshape(%3, %6)
          %8 : NoneType = prim::Constant[value=None]()
          %9 : Tensor = aten::transpose(%x, %8)
          %10 : Tensor = aten::add(%7, %9)
          return (%10)
        """,
    )


def test_subscripts_follow_the_lowering_note() -> None:
    graph = emit(
        """
        def f(x, i):
            return x[..., None, -1], x[i, 1:], x[:]
        """
    )
    assert_ir(
        without_ranges(graph),
        """
        graph @f(%x : Tensor, %i : Tensor):
          %2 : NoneType = prim::Constant[value=None]()
          %3 : int = prim::Constant[value=-1]()
          %4 : int = prim::Constant[value=-1]()
          %5 : Tensor = aten::select(%x, %4, %3)
          %6 : int = prim::Constant[value=-1]()
          %7 : Tensor = aten::expand_dims(%5, %6)
          %8 : int = prim::Constant[value=1]()
          %9 : NoneType = prim::Constant[value=None]()
          %10 : NoneType = prim::Constant[value=None]()
          %11 : int = prim::Constant[value=1]()
          %12 : Tensor = aten::slice(%x, %11, %8, %9, %10)
          %13 : Tensor = aten::index(%12, %i)
          %14 : NoneType = prim::Constant[value=None]()
          %15 : int = prim::Constant[value=0]()
          %16 : Tensor = aten::slice(%x, %15, %14, %14, %14)
          %17 : (Tensor, Tensor, Tensor) = prim::TupleConstruct(%7, %13, %16)
          return (%17)
        """,
    )


def test_boolean_operators_short_circuit_through_if() -> None:
    graph = emit(
        """
        def f(n: int):
            return n > 1 and n < 10
        """
    )
    assert_ir(
        without_ranges(graph),
        """
        graph @f(%n : int):
          %1 : int = prim::Constant[value=1]()
          %2 : bool = prim::gt(%n, %1)
          %3 : bool = prim::If(%2)
            block0():
              %4 : int = prim::Constant[value=10]()
              %5 : bool = prim::lt(%n, %4)
              -> (%5)
            block1():
              -> (%2)
          return (%3)
        """,
    )


def test_none_checks_and_constants_are_decided_at_compile_time() -> None:
    graph = emit(
        """
        def f(x, bias):
            '''Docstrings, pass and assert emit nothing.'''
            pass
            assert x is not None
            if bias is None:
                x = x + EPS
            return x
        """,
        EPS=1e-5,
    )
    assert_ir(
        without_ranges(graph),
        """
        graph @f(%x : Tensor, %bias : Tensor):
          return (%x)
        """,
    )


def test_a_function_without_return_returns_none() -> None:
    graph = emit(
        """
        def f(x):
            y = x + 1
        """
    )
    assert str(graph.outputs[0].ty) == "NoneType"


def test_free_names_become_values_the_callback_makes() -> None:
    asked: list[str] = []
    holder: list[Graph] = []

    def free_name(name: str, where: SourceRange) -> Value | None:
        asked.append(name)
        return holder[0].add_input(TENSOR, name) if name == "saved" else None

    module = parse_source("def backward(dout):\n    return dout * saved + saved\n", "<test>")
    graph, callees = emit_function(
        module.functions[0], {}, free_name=free_name, graph_name="bw", on_graph=holder.append
    )
    check(graph)
    assert asked == ["saved"]
    assert callees == []
    assert_ir(
        without_ranges(graph),
        """
        graph @bw(%dout : Tensor, %saved : Tensor):
          %2 : Tensor = aten::mul(%dout, %saved)
          %3 : Tensor = aten::add(%2, %saved)
          return (%3)
        """,
    )


# ---- errors -------------------------------------------------------------------------------------

ERRORS = [
    ("def f(x):\n    return x * z\n", "z", "undefined name 'z'"),
    ("def f(x):\n    return np.fft.hfft(x)\n", "np.fft", "numpy.fft.hfft is not supported"),
    (
        "def f(x):\n    return np.frobnicate(x)\n",
        "np.frob",
        "module 'numpy' has no attribute 'frobnicate'",
    ),
    (
        "def f(x):\n    return np.sum(x, out=x)\n",
        "out=",
        "argument 'out' of numpy.sum is not supported",
    ),
    (
        "def f(x):\n    return np.sum(x, axes=0)\n",
        "axes",
        "numpy.sum() got an unexpected keyword argument 'axes'",
    ),
    (
        "def f(x):\n    return np.tanh(x, x)\n",
        "x)",
        "numpy.tanh() takes 1 positional argument but 2 were given",
    ),
    (
        "def f(x):\n    return np.where(x)\n",
        "np.where",
        "numpy.where() missing required argument 'x'",
    ),
    (
        "def f(x):\n    return x.sum(1, dtype=int)\n",
        "dtype",
        "argument 'dtype' of ndarray.sum is not supported",
    ),
    ("def f(x):\n    return x.tolist()\n", "x.tolist", "ndarray.tolist is not supported"),
    (
        "def f(x):\n    return x.dtype\n",
        "x.dtype",
        "attribute 'dtype' of a value of type Tensor is not supported",
    ),
    (
        "def f(v: float):\n    v[0] = 1.0\n    return 2.0\n",
        "v",
        "a value of type float cannot be subscripted",
    ),
    (
        "def f(x):\n    (x, x)[1:] += 1.0\n    return x\n",
        "(x, x)[1:]",
        "cannot assign into an element of a tuple: lists and tuples are values here, build a new "
        "one",
    ),
    (
        "def f(x, n: int):\n    for i in range(n):\n        return x\n    y = x\n    return y\n",
        "return x",
        "'return' inside a loop is not supported",
    ),
    ("def f(x):\n    break\n", "break", "'break' outside a loop"),
    (
        "def f(x):\n    def g(y):\n        return g(y)\n    return g(x)\n",
        "g(y)",
        "recursion of 'g' goes deeper than 64 levels while compiling: a recursive call is "
        "unrolled while compiling, so its depth must be decided by values known then (a "
        "container's structure, Python ints); write a loop for a recursion whose depth depends "
        "on run-time values",
    ),
    (
        "def f(x):\n    print(x, file=None)\n    return x\n",
        "file=None",
        "print(file=...) is not supported: scripted code prints to standard output, with "
        "sep=, end= and flush= at most",
    ),
    (
        "def f(x):\n    raise KeyboardInterrupt\n",
        "KeyboardInterrupt",
        "a scripted function raises Python's own exceptions (ValueError, TypeError, "
        "RuntimeError, ...)",
    ),
    (
        "def f(x):\n    r = range(3)\n    return x\n",
        "range",
        "range() can only be the iterable of a for loop",
    ),
    (
        "def f(x):\n    for v in 2.5:\n        x = v\n    return x\n",
        "2.5",
        "a for loop cannot iterate over a value of type float: it goes over range(...), an "
        "array's rows, a list, a tuple or a dict",
    ),
    (
        "def f(x, n: int):\n    if n > 0:\n        z = x\n    return z\n",
        "z",
        "'z' is not defined in every branch",
    ),
    (
        "def f(x, n: int):\n    for i in range(n):\n        z = x\n    return z\n",
        "z",
        "'z' is assigned only inside the loop: assign it before the loop to use it after",
    ),
    (
        "def f(x):\n    ys = [x]\n    ys.pop()\n    return ys\n",
        "ys.pop",
        "lists cannot be changed in scripted functions except by 'hs.append(v)' ('.pop')",
    ),
    (
        "def f(x):\n    ys = []\n    ys.extend([x])\n    return ys\n",
        "ys.extend",
        "lists cannot be changed in scripted functions except by 'hs.append(v)' ('.extend')",
    ),
    (
        "def f(x):\n    ys = []\n    y = ys.append(x)\n    return ys\n",
        "ys.append",
        "list.append() is only supported as a statement of its own on a list name ('hs.append(v)')",
    ),
    (
        "def f(x):\n    x.append(x)\n    return x\n",
        "x.append",
        "'x' is a value of type Tensor, not a list: only lists have .append",
    ),
    (
        "def f(x):\n    ys = []\n    ys.append(x, x)\n    return ys\n",
        "ys.append",
        "list.append() takes exactly one argument (2 given)",
    ),
    (
        "def f(x):\n    ys = [x]\n    ys.sort()\n    return ys\n",
        "ys.sort",
        "lists cannot be changed in scripted functions except by 'hs.append(v)' ('.sort')",
    ),
    (
        "def f(x, n: int):\n    if n > 0:\n        return x, x\n    return x, x, x\n",
        "if n",
        "the branches return tuples of different lengths (2 and 3)",
    ),
    (
        "def f(x):\n    return (x, x)[2]\n",
        "(x, x)[2]",
        "tuple index 2 out of range for a tuple of type (Tensor, Tensor)",
    ),
    ("def f(x):\n    return x is x\n", "x is x", "'is' is only supported to compare with None"),
    ("def f(x):\n    return x << x\n", "x << x", "operator '<<' is not supported"),
    (
        "def f(x):\n    return W * x\n",
        "W",
        "'W' is a NumPy array from outside the function, read here by a function that another "
        "one calls, or as an attribute: pass it as an argument (the function you compile or "
        "differentiate may read global arrays by name)",
    ),
    ("def f(x):\n    return np * x\n", "np *", "module 'numpy' cannot be used as a value"),
    (
        "def f(x, n: int):\n    return np.sum(x.shape)\n",
        "x.shape)",
        "argument 'a' of numpy.sum must be Tensor, not int[]",
    ),
    (
        "def f(x, t: float):\n    return x[t]\n",
        "t]",
        "an index must be an int, a slice or an array, not float",
    ),
    (
        "def f(x):\n    return max(x, (x, x))\n",
        "(x, x)",
        "max() takes numbers and arrays here, not (Tensor, Tensor): use np.maximum for the "
        "elementwise one",
    ),
    (
        "def f(x, a: float):\n    for i in range(a):\n        x = x\n    return x\n",
        "a)",
        "range() needs int arguments, not float",
    ),
    (
        "def f(x):\n    a, b = x\n    return a\n",
        "a, b",
        "cannot unpack an array: index it instead (a, b = x[0], x[1])",
    ),
    (
        "def f(x):\n    a, b = (x, x, x)\n    return a\n",
        "a, b",
        "cannot unpack a tuple of 3 values into 2 names",
    ),
]


@pytest.mark.parametrize(("source", "marker", "message"), ERRORS, ids=[e[2][:40] for e in ERRORS])
def test_errors_name_the_problem_at_its_position(source: str, marker: str, message: str) -> None:
    error = emit_error(source, W=np.ones(3))
    assert located(error, source, marker) == message
    assert str(error).startswith(f"<test>:{error.source_range.line}:")  # type: ignore[union-attr]


# ---- compile_function ---------------------------------------------------------------------------


def position_of(marker: str, within: str | None = None) -> tuple[int, int]:
    """Line and column of ``marker`` in this file, on the one line holding ``within``."""
    lines = [i for i, text in enumerate(THIS_FILE, start=1) if (within or marker) in text]
    assert len(lines) == 1, f"{within or marker!r} must occur on exactly one line"
    return lines[0], THIS_FILE[lines[0] - 1].index(marker) + 1


def times(v, k):
    return v * k


def uses_scale(x, n: int):
    return times(x, 2.0) + times(x, n) + times(x, 2.0)


def test_callees_are_compiled_per_argument_types_and_listed_after_the_caller() -> None:
    module = compile_function(uses_scale)
    assert list(module) == ["uses_scale", "times[Tensor,float]", "times[Tensor,int]"]
    for graph in module.values():
        check(graph)
    caller = without_ranges(module["uses_scale"])
    assert 'prim::CallFunction[callee="times[Tensor,float]"](%x, %2)' in print_graph(caller)
    x = np.arange(3.0)
    np.testing.assert_array_equal(run_graph(caller, x, 3, functions=module)[0], uses_scale(x, 3))
    run_module_passes(module, "inline")
    assert "CallFunction" not in print_graph(module["uses_scale"])
    np.testing.assert_array_equal(run_graph(module["uses_scale"], x, 3)[0], uses_scale(x, 3))


def test_compile_function_returns_fresh_copies_of_cached_graphs() -> None:
    first = compile_function(uses_scale)
    second = compile_function(uses_scale)
    assert first["uses_scale"] is not second["uses_scale"]
    assert print_graph(first["uses_scale"]) == print_graph(second["uses_scale"])


def test_graph_inputs_are_typed_by_annotations() -> None:
    def annotated(a, b: int, c: float, d: bool, e: np.ndarray, f: str):
        return a

    graph = next(iter(compile_function(annotated).values()))
    assert [str(v.ty) for v in graph.inputs] == [
        "Tensor",
        "int",
        "float",
        "bool",
        "Tensor",
        "Tensor",
    ]


def test_closure_variables_and_module_constants_are_constants() -> None:
    factor = 3

    def closure(x):
        return x * factor + EPSILON

    (graph,) = compile_function(closure).values()
    assert run_graph(graph, 1.0)[0] == 3.0 + EPSILON


EPSILON = 1e-3


def recursive(x, n: int):
    if n == 0:
        return x
    return recursive(x * 2, n - 1)


def ping(x):
    return pong(x)


def pong(x):
    return ping(x)


def test_recursion_is_refused_at_the_call() -> None:
    with pytest.raises(ScriptError) as info:
        compile_function(recursive)
    same_kind = "with arguments of the same kind, not known while compiling"
    assert info.value.message.startswith(f"recursive call to 'recursive' {same_kind}")
    assert info.value.source_range is not None
    where = (info.value.source_range.line, info.value.source_range.col)
    assert where == position_of("recursive", "return recursive(x" + " * 2, n - 1)")
    with pytest.raises(ScriptError) as info:
        compile_function(ping)
    assert info.value.message.startswith(f"recursive call to 'ping' {same_kind}")
    assert info.value.source_range is not None
    assert info.value.source_range.line == position_of("ping", "return pi" + "ng(x)")[0]
    assert "in 'pong', called at" in str(info.value)


def test_functions_without_source_are_refused_clearly() -> None:
    namespace: dict[str, Any] = {}
    exec("def made_by_exec(x):\n    return x\n", namespace)
    with pytest.raises(ScriptError, match="cannot find the source code of 'made_by_exec'"):
        compile_function(namespace["made_by_exec"])
    exec("made_lambda = lambda x: x\n", namespace)
    with pytest.raises(ScriptError, match="cannot find the source code of this lambda"):
        compile_function(namespace["made_lambda"])
    with pytest.raises(ScriptError, match="only functions defined with 'def'"):
        compile_function(len)
    # a partial or a bound method is compiled as its function: the function's source is what
    # is missing here (tests/unit/test_objects_and_partials.py has the ones that compile)
    with pytest.raises(ScriptError, match="cannot find the source code of 'made_by_exec'"):
        compile_function(functools.partial(namespace["made_by_exec"], 1))
    with pytest.raises(ScriptError, match=r"functools.partial of len .*write a def"):
        compile_function(functools.partial(len, 1))

    class Model:
        def loss(self, x: Any) -> Any:
            return x

    assert len(compile_function(Model().loss)) == 1  # self is known while compiling


def calls_exec_made(x):
    return MADE(x)  # noqa: F821 (defined by exec below)


exec("def MADE(x):\n    return x\n")


def test_a_callee_without_source_is_reported_at_the_call() -> None:
    with pytest.raises(ScriptError) as info:
        compile_function(calls_exec_made)
    assert "cannot find the source code of 'MADE'" in info.value.message
    assert info.value.source_range is not None
    where = (info.value.source_range.line, info.value.source_range.col)
    assert where == position_of("MADE", "return MA" + "DE(x)")


def broken_helper(x):
    return x * undefined_in_helper  # noqa: F821


def calls_broken(x):
    return broken_helper(x)


def test_errors_in_callees_point_into_the_callee_and_name_the_call() -> None:
    with pytest.raises(ScriptError) as info:
        compile_function(calls_broken)
    error = info.value
    assert error.message == "undefined name 'undefined_in_helper'"
    assert error.source_range is not None
    assert error.source_range.filename == __file__
    assert (error.source_range.line, error.source_range.col) == position_of(
        "undefined_in_helper", "undefined_in_" + "helper  # noqa"
    )
    line, col = position_of("broken_helper", "return broken_" + "helper(x)")
    assert f"in 'broken_helper', called at {shown_path(__file__)}:{line}:{col}" in str(error)


def with_bias(x, bias=None):
    if bias is not None:
        x = x + bias
    return x


def test_argument_types_specialise_the_function_itself() -> None:
    declared = without_ranges(compile_function(with_bias)["with_bias"])
    assert_ir(
        declared,
        """
        graph @with_bias(%x : Tensor, %bias : Tensor):
          %x.1 : Tensor = aten::add(%x, %bias)
          return (%x.1)
        """,
    )
    (graph,) = compile_function(with_bias, argument_types=[TENSOR, NONE]).values()
    assert_ir(
        without_ranges(graph),
        """
        graph @with_bias[Tensor,NoneType](%x : Tensor, %bias : NoneType):
          return (%x)
        """,
    )
