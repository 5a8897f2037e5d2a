"""``f`` and ``df`` joined into one graph (Note [Joined f and df] in `autodiff.gradient`): the
graph the native tier compiles for a ``grad`` call. Run here by the NumPy tier's executors,
so these tests need no numba: the joined graph must give what ``f`` then ``df`` give,
arguments written in place included."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest

import autodiff as ad
from autodiff.gradient import joined_graph
from autodiff.runtime import CompiledGradient
from ir.codegen import CompiledGraph
from ir.interpreter import Executable
from ir.verify import verify


def chain(x):
    h = 0.5 * (np.tanh(1.5 * np.sin(x)) + x)
    h = 0.5 * (np.tanh(1.5 * np.sin(h)) + x)
    return np.sum(h)


def writes_its_argument(a, w):
    t = np.tanh(a * w)
    a += 1.0
    return np.sum(t * a)


def euler(theta, x0):
    x = x0
    for _ in range(30):
        x = x + 0.1 * np.tanh(theta @ x)
    return np.sum(x**2)


def with_aux(x):
    t = np.tanh(x)
    return np.sum(t * t), t


def runtime_of(fn: Any, *args: Any) -> CompiledGradient:
    fn(*copy.deepcopy(args))
    (entry,) = fn.compiled_gradients()
    runtime: CompiledGradient = entry.runtime
    return runtime


def inputs(name: str) -> tuple[Any, ...]:
    rng = np.random.default_rng(1)
    if name == "euler":
        return rng.standard_normal((3, 3)) / 3, rng.standard_normal(3)
    if name == "writes_its_argument":
        return rng.standard_normal(5), rng.standard_normal(5)
    return (rng.standard_normal(16),)


FUNCTIONS = {"chain": chain, "writes_its_argument": writes_its_argument, "euler": euler}


@pytest.mark.parametrize("name", FUNCTIONS)
@pytest.mark.parametrize("executor", [CompiledGraph, Executable], ids=["codegen", "interpreter"])
def test_the_joined_graph_gives_f_then_df(name: str, executor: Any) -> None:
    fn = FUNCTIONS[name]
    argnums = tuple(range(len(inputs(name))))
    grad_fn = ad.value_and_grad(fn, argnums=argnums, native=False)
    runtime = runtime_of(grad_fn, *inputs(name))
    joined = joined_graph(runtime.gradient, runtime.df_graph)
    assert joined is not None
    verify(joined)
    expected_args = list(inputs(name))
    value, grads = grad_fn(*expected_args)
    joined_args = list(inputs(name))
    *outputs, raw = executor(joined)(*joined_args)
    assert outputs == [pytest.approx(value, rel=0, abs=0)]
    for got, want in zip(raw, grads, strict=True):
        np.testing.assert_array_equal(got, want)
    for got, want in zip(joined_args, expected_args, strict=True):
        np.testing.assert_array_equal(got, want)  # a written argument, written once


def test_f_comes_first_then_df_in_their_own_orders() -> None:
    runtime = runtime_of(ad.value_and_grad(chain, native=False), *inputs("chain"))
    joined = joined_graph(runtime.gradient, runtime.df_graph)
    assert joined is not None
    kinds = [node.kind for node in joined.block.nodes() if node.kind != "prim::Constant"]
    f_kinds = [n.kind for n in runtime.gradient.f.block.nodes() if n.kind != "prim::Constant"]
    df_kinds = [n.kind for n in runtime.df_graph.block.nodes() if n.kind != "prim::Constant"]
    assert kinds == f_kinds + df_kinds
    assert [value.ty for value in joined.inputs] == [v.ty for v in runtime.gradient.f.inputs]
    assert len(joined.outputs) == runtime.gradient.f_real_outputs + 1


def test_a_df_that_takes_a_vjp_is_not_joined() -> None:
    """An aux array's vjp is zeros made between the two runs: nothing to join."""
    fn = ad.value_and_grad(with_aux, has_aux=True, native=False)
    runtime = runtime_of(fn, np.linspace(0.0, 1.0, 4))
    assert runtime.gradient.df_input_vjps == (0, 1)
    assert joined_graph(runtime.gradient, runtime.df_graph) is None


def branch_in_a_loop(x):
    h = x
    for _ in range(6):
        if np.sum(h) > 0:  # noqa: SIM108 - a statement, as users write it
            h = np.tanh(h)
        else:
            h = 0.5 * h + 1.0
    return np.sum(h * h)


@pytest.mark.parametrize("executor", [CompiledGraph, Executable], ids=["codegen", "interpreter"])
def test_tape_rows_a_branch_did_not_write_are_zeros(executor: Any) -> None:
    """A tape is an output of f; the rows the untaken branch leaves are zeros on every executor
    (prim::TapeArray in `ir.ops.tapes`), never what np.empty found in memory, which made f's
    outputs differ between the interpreter and the generated code."""
    x = np.array([0.3, -0.9, 0.2, -0.1])
    runtime = runtime_of(ad.value_and_grad(branch_in_a_loop, native=False), x)
    f = runtime.gradient.f
    np.full(6 * 4 * 8, 7.0)  # memory np.empty could hand back, left holding sevens
    outputs = executor(f)(x.copy())
    tapes = [out for out in outputs if isinstance(out, np.ndarray) and out.shape == (6, 4)]
    assert tapes
    for tape in tapes:
        unwritten = [row for row in tape if not np.any(row)]
        assert all(np.all(row == 0) for row in unwritten)
        assert not np.any(tape == 7.0)
    assert any(not np.any(row) for tape in tapes for row in tape)  # a branch left rows
