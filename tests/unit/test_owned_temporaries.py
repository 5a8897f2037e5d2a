"""The owning ``df`` (Note [Owned temporaries] in `autodiff.runtime`): which captured values it
may write into (``out=``), which it must not (arguments, views, real outputs, values shared
with anything else), and that no run it serves changes what a caller or a hook can see."""

from __future__ import annotations

import importlib
import re
from typing import Any

import numpy as np
import pytest

import autodiff as ad
from autodiff.runtime import CompiledGradient
from ir.codegen import EXECUTOR_VARIABLE, CompiledGraph
from ir.interpreter import Executable
from ir.parser import parse_graph
from tests.unit.test_codegen import assert_identical
from tests.unit.test_codegen_typed_calls import N, vector

runtime_module = importlib.import_module("autodiff.runtime")


def chain(x: Any) -> Any:
    h = 0.5 * (np.tanh(1.5 * np.sin(x)) + x)
    h = 0.5 * (np.tanh(1.5 * np.sin(h)) + x)
    return np.sum(h)


def transposed(x: Any) -> Any:
    t = np.tanh(x)
    v = t.T
    return np.sum(np.exp(v) * t)


def sliced(x: Any) -> Any:
    s = x[1:]
    t = np.tanh(s)
    return np.sum(np.sin(s) * t)


def with_aux(x: Any) -> Any:
    t = np.tanh(x)
    return np.sum(t * t), t


def runtime_of(fn: Any) -> CompiledGradient:
    (entry,) = fn.compiled_gradients()
    runtime: CompiledGradient = entry.runtime
    return runtime


def captured_start(runtime: CompiledGradient) -> int:
    """Where f's captured outputs start among the inputs of the df that runs: after the vjps
    (less the seed, when folded in: Note [Seeded df]) and the captured arguments."""
    gradient = runtime.gradient
    vjps = len(gradient.df_input_vjps) - (runtime.seeded_at is not None)
    return vjps + len(gradient.df_input_captured_inputs)


def parameters(compiled: CompiledGraph) -> list[str]:
    """The names the generated function gives its arguments, in order."""
    line = compiled.source.splitlines()[2].strip()
    assert line.endswith("= _args"), line
    return [name.strip() for name in line.removesuffix("= _args").split(",") if name.strip()]


def written(source: str) -> set[str]:
    """The names some line of ``source`` writes into (``out=name``)."""
    return set(re.findall(r"out=(\w+)\)", source))


def interpreted(fn: Any, args: list[Any], monkeypatch: pytest.MonkeyPatch, **options: Any) -> Any:
    with monkeypatch.context() as patch:
        patch.setenv(EXECUTOR_VARIABLE, "interpreter")
        return ad.value_and_grad(fn, **options)(*args)


def test_the_chain_squares_its_saved_tanh_in_place(monkeypatch: pytest.MonkeyPatch) -> None:
    x = vector()
    fn = ad.value_and_grad(chain)
    first = fn(x)
    second = fn(x)  # the hit path
    runtime = runtime_of(fn)
    owning = runtime.df  # the one df, which owns f's private temporaries
    plain = CompiledGraph(runtime.df_graph)  # the same graph owning nothing
    assert isinstance(owning, CompiledGraph)
    names = parameters(owning)
    gradient = runtime.gradient
    f_outputs = gradient.f.outputs
    start = captured_start(runtime)
    tanh_inputs = [
        names[start + position]
        for position, index in enumerate(gradient.df_input_captured_outputs)
        if f_outputs[index].node.kind == "aten::tanh"
    ]
    assert len(tanh_inputs) == 2
    for name in tanh_inputs:  # t * t of 1 - t * t, into t
        assert f"{name} = aten_mul({name}, {name}, out={name})" in owning.source
        assert f"{name} = aten_mul({name}, {name})" in plain.source  # a new array there
    # the argument x is captured as an input: never written to
    (x_name,) = [names[start - len(gradient.df_input_captured_inputs) + i] for i in range(1)]
    assert x_name not in written(owning.source)
    expected = interpreted(chain, [x], monkeypatch)
    assert_identical(first, expected)
    assert_identical(second, expected)
    np.testing.assert_array_equal(x, vector())


@pytest.mark.parametrize(
    ("fn", "argument"),
    [(transposed, vector(N).reshape(64, 64)), (sliced, vector(N + 1))],
    ids=["transpose", "slice"],
)
def test_views_and_arguments_are_never_written_to(
    fn: Any, argument: np.ndarray, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = argument.copy()
    compiled = ad.value_and_grad(fn)
    results = [compiled(argument) for _ in range(3)]
    runtime = runtime_of(compiled)
    gradient = runtime.gradient
    start = captured_start(runtime)
    for position, index in enumerate(gradient.df_input_captured_outputs):
        value = gradient.f.outputs[index]
        fresh_call = value.node.kind not in ("aten::transpose", "aten::slice", "aten::select")
        # a view is not owned, nor a value a view of which f gives out (a view f only reads,
        # as exp(t.T), is gone when f returns: Note [Typed calls], memory plan)
        viewed = any(
            use.user.kind in ("aten::transpose", "aten::slice")
            and any(out in gradient.f.outputs for out in use.user.outputs)
            for use in value.uses
        )
        if not fresh_call or viewed:
            assert start + position not in runtime.owned
    owning = runtime.df
    assert isinstance(owning, CompiledGraph)
    names = parameters(owning)
    for position in range(start):  # the vjps and the captured arguments
        assert names[position] not in written(owning.source)
    expected = interpreted(fn, [original.copy()], monkeypatch)
    for result in results:
        assert_identical(result, expected)
    np.testing.assert_array_equal(argument, original)


def test_a_real_output_df_reads_is_not_owned(monkeypatch: pytest.MonkeyPatch) -> None:
    x = vector()
    compiled = ad.value_and_grad(with_aux, has_aux=True)
    (value, aux), grad = compiled(x)
    kept = aux.copy()
    (value_2, aux_2), grad_2 = compiled(x)  # the hit path
    runtime = runtime_of(compiled)
    gradient = runtime.gradient
    start = captured_start(runtime)
    for position, index in enumerate(gradient.df_input_captured_outputs):
        if index < gradient.f_real_outputs:
            assert start + position not in runtime.owned
    np.testing.assert_array_equal(aux, kept)  # the first call's aux survived the second call
    expected = interpreted(with_aux, [x], monkeypatch, has_aux=True)
    assert_identical(((value, aux), grad), expected)
    assert_identical(((value_2, aux_2), grad_2), expected)


def test_backward_with_retain_gives_df_copies_of_what_it_owns() -> None:
    x = vector()
    fn = ad.value_and_grad(chain)
    runtime = fn.compiled_for([x], (0,)).runtime  # as vjp compiles it: no seed folded in
    assert runtime.owned
    _, saved = runtime.forward([x])
    held = [value.copy() for value in saved.captured_outputs]
    kept = list(saved.captured_outputs)
    first = runtime.backward(saved, [np.ones(())], retain=True)
    second = runtime.backward(saved, [np.ones(())], retain=True)
    for value, copy in zip(kept, held, strict=True):
        np.testing.assert_array_equal(value, copy)  # retain: what saved holds is untouched
    third = runtime.backward(saved, [np.ones(())])
    assert_identical(first, second)
    assert_identical(first, third)


def test_vjp_runs_backward_twice_with_identical_results() -> None:
    x = vector()
    _, vjp_fn = ad.vjp(chain, x)
    first = vjp_fn(np.ones(()))
    second = vjp_fn(np.ones(()))
    assert_identical(first, second)
    np.testing.assert_array_equal(x, vector())
    assert_identical(first[0], ad.grad(chain)(x))


def test_saved_value_hooks_see_unmodified_values() -> None:
    x = vector()
    fn = ad.value_and_grad(chain)
    expected = fn(x)
    fn(x)  # a hit path exists; the hooks below take the general way
    packed: list[tuple[np.ndarray, np.ndarray]] = []

    def pack(array: np.ndarray) -> np.ndarray:
        packed.append((array, array.copy()))
        return array  # the very array: df must not write into it

    def unpack(array: np.ndarray) -> np.ndarray:
        return array

    with ad.saved_value_hooks(pack, unpack):
        got = fn(x)
    assert len(packed) > 2
    for array, copy in packed:
        np.testing.assert_array_equal(array, copy)
    assert_identical(got, expected)


# -- the two halves of the contract, on IR text ----------------------------------------------

OWNED = f"""graph @df(%a : Double({N}), %b : Double({N})):
  %c : Double({N}) = aten::mul(%a, %a)
  %d : Double({N}) = aten::mul(%b, %b)
  %e : Double({N}) = aten::add(%c, %d)
  return (%e)
"""


def test_only_owned_arguments_are_written_to() -> None:
    graph = parse_graph(OWNED)
    plain = CompiledGraph(graph)
    owning = CompiledGraph(graph, owned=[1])
    assert written(plain.source) == {"c"}  # e into c, computed here
    assert "d = aten_mul(b, b, out=b)" in owning.source
    assert "a, out=a" not in owning.source
    a, b = vector(seed=1), vector(seed=2)
    expected = Executable(graph)(a.copy(), b.copy())
    assert_identical(owning(a.copy(), b.copy()), expected)
    assert_identical(plain(a, b), expected)
    np.testing.assert_array_equal(b, vector(seed=2))  # not owned there: left alone


PRIVATE = """graph @f(%x : Double(64, 64), %s : Double(16)):
  %t : Double(64, 64) = aten::tanh(%x)
  %u : Double(64, 64) = aten::exp(%x)
  %v : Double(64, 64) = aten::sin(%x)
  %w : Double(64, 64) = aten::cos(%x)
  %none : NoneType = prim::Constant()
  %wt : Double(64, 64) = aten::transpose(%w, %none)
  %k : Double(16) = aten::exp(%s)
  %r : Double(64, 64) = aten::mul(%t, %v)
  return (%r, %t, %u, %u, %x, %wt, %w, %k)
"""


def test_private_outputs_are_fresh_unshared_large_arrays() -> None:
    compiled = CompiledGraph(parse_graph(PRIVATE))
    # r and t: fresh and read only by a ufunc; u: returned twice; x: an argument; wt: a
    # view, and w has one; k: too small for the memory plan
    assert compiled.private_outputs == frozenset({0, 1})
    assert N == 64 * 64


def test_one_df_is_compiled_per_gradient(monkeypatch: pytest.MonkeyPatch) -> None:
    compiled: list[Any] = []
    original = runtime_module.executable

    def counted(graph: Any, *args: Any, **kwargs: Any) -> Any:
        compiled.append(kwargs.get("owned", ()))
        return original(graph, *args, **kwargs)

    monkeypatch.setattr(runtime_module, "executable", counted)
    fn = ad.value_and_grad(chain)
    first = fn(vector())
    assert len(compiled) == 2  # f, and df owning f's temporaries from the first call on
    assert compiled[1]
    assert compiled[1] == runtime_of(fn).owned
    for _ in range(2):
        assert_identical(fn(vector()), first)
    assert len(compiled) == 2
    small = ad.value_and_grad(chain)
    small(vector(16))
    small(vector(16))
    assert not runtime_of(small).owned  # too small for the memory plan: nothing to own
