"""What keeps a cache hit cheap (issue #8): a hit of ``grad``/``value_and_grad`` or of a plain
scripted call binds nothing, specialises nothing, keeps no `Saved` and works out no zeros; it
gives what the general way gives, and everything that needs the general way (hooks, taps,
keywords, arguments to convert or refuse) still takes it. No timing here: calls are counted.
See Note [Gradient calls] in `autodiff.gradient_call` and Note [Specialisation cache] in
`autodiff.script`."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import numpy as np
import optree
import pytest

import autodiff as ad
from autodiff.runtime import CompiledGradient, ZeroSpec, seeded_graph
from autodiff.script import ScriptFunction
from autodiff.specialize import ArgumentError, signature_key
from benchmarks.run import graphs_only
from benchmarks.workloads import BY_NAME
from ir.interpreter import AUTOGRAD_ZERO

gradient_call_module = importlib.import_module("autodiff.gradient_call")
runtime_module = importlib.import_module("autodiff.runtime")
script_module = importlib.import_module("autodiff.script")
unit_module = importlib.import_module("autodiff.unit")

RNG = np.random.default_rng(0)
X = RNG.standard_normal((3, 4))
Y = RNG.standard_normal(4)


def loss(x, y):
    return np.sum(np.tanh(x * y) * x)


def loss_with_aux(x, y):
    z = x * y
    return np.sum(z * z), z


def step(x, lr: float):
    return np.sum((x - lr * x) ** 2) * lr


def power(x, n: int):
    return np.sum(x**n)


def ignores_y(x, y):
    return np.sum(x * x)


def scaled(x, s):
    return np.sum(np.sin(x)) * s


def sqrt_sum(x):
    return np.sum(np.sqrt(x))


def elementwise(x, y):
    return np.tanh(x) * y


def tapped(w, x, b):
    h = ad.tap(np.tanh(x @ w), "h")
    return np.sum(h**2 * b + np.sin(h))


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def looped(x, n: int):
    total = np.sum(x * 0.0)
    for i in range(n):
        total = total + np.sum(np.sin(x) * x) * (i + 0.5)
    return -total * 3.0


def branched(x, n: int):
    if n > 1:
        return -np.sum(x * x) * 2.5
    return np.sum(np.cos(x)) / 3.0


def with_tuple_aux(x, y):
    z = x * y
    return np.mean(z * z) * 2.0, (z, np.sum(z))


def identity(s):
    return s


def one_element(x):
    return np.sum(x * x, keepdims=True) * 2.0


class Counter:
    """Counts the calls of the functions it wraps, by name."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.monkeypatch = monkeypatch
        self.calls: dict[str, int] = {}

    def wrap(self, owner: Any, name: str, *, static: bool = False) -> None:
        original = getattr(owner, name)
        self.calls[name] = 0

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls[name] += 1
            return original(*args, **kwargs)

        self.monkeypatch.setattr(owner, name, staticmethod(counted) if static else counted)

    def snapshot(self) -> dict[str, int]:
        return dict(self.calls)


def calls_of(fn: Any) -> int:
    """How many gradient calls the function's units keep (Note [Gradient calls])."""
    return sum(len(unit.calls) for unit in fn.cache.values())


def counting_compiler(monkeypatch: pytest.MonkeyPatch) -> Counter:
    counter = Counter(monkeypatch)
    counter.wrap(unit_module, "typed_graph")
    counter.wrap(unit_module, "differentiate_typed")
    counter.wrap(script_module, "argument_type")
    counter.wrap(ScriptFunction, "runtime_values")
    counter.wrap(CompiledGradient, "forward")
    counter.wrap(CompiledGradient, "backward")
    counter.wrap(ZeroSpec, "of", static=True)
    return counter


# ---- what a hit does not do ---------------------------------------------------------------------


@pytest.mark.parametrize("make", [ad.grad, ad.value_and_grad])
def test_a_hit_specialises_binds_and_saves_nothing(
    monkeypatch: pytest.MonkeyPatch, make: Callable[..., Any]
) -> None:
    counter = counting_compiler(monkeypatch)
    dloss = make(loss, argnums=(0, 1))
    dloss(X, Y)
    assert counter.calls["typed_graph"] == counter.calls["differentiate_typed"] == 1
    assert len(dloss.cache) == calls_of(dloss) == 1
    after_first = counter.snapshot()
    for scale in (1.0, 2.0, 3.0):
        dloss(X * scale, Y)
    assert counter.snapshot() == after_first


def test_zero_specs_are_worked_out_once_per_compiled_signature(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    counter = counting_compiler(monkeypatch)
    dloss = ad.value_and_grad(loss, argnums=(0, 1))
    dloss(X, Y)
    (compiled,) = dloss.compiled_gradients()
    assert compiled.runtime.grad_zeros == [ZeroSpec(X.shape, X.dtype), ZeroSpec(Y.shape, Y.dtype)]
    made = counter.calls["of"]
    for _ in range(3):
        dloss(X, Y)
    assert counter.calls["of"] == made
    dloss(X[:2], Y)  # a new signature: its own specs, once
    assert len(dloss.cache) == 2
    assert counter.calls["of"] > made


def test_a_plain_scripted_hit_binds_and_specialises_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    counter = Counter(monkeypatch)
    counter.wrap(script_module, "bind_arguments")
    counter.wrap(ScriptFunction, "executable_for")
    scripted = ad.script(elementwise)
    first = scripted(X, Y)
    after_first = counter.snapshot()
    again = scripted(X, Y)
    assert counter.snapshot() == after_first
    np.testing.assert_array_equal(first, again)
    # Keywords and lists go the general way, to the same executable.
    np.testing.assert_array_equal(scripted(X, y=Y), first)
    np.testing.assert_array_equal(scripted(X, list(Y)), first)
    assert counter.calls["bind_arguments"] == after_first["bind_arguments"] + 2
    assert len(scripted.cache) == 1


def mlp(params, x):
    for w, b in params:
        x = np.tanh(x @ w + b)
    return np.sum(x * x)


@pytest.mark.parametrize("make", [ad.grad, ad.value_and_grad, ad.script])
def test_a_pytree_hit_flattens_nothing_with_optree(
    monkeypatch: pytest.MonkeyPatch, make: Callable[..., Any]
) -> None:
    """A hit takes its containers apart with the code generated for their structure (Note
    [Structure-specialised flattening] in `autodiff.structures`), not with optree."""
    counter = counting_compiler(monkeypatch)
    counter.wrap(script_module, "flatten")
    fn = make(mlp)
    params = [(np.ones((4, 3)) * 0.1, np.zeros(3)), (np.ones((3, 2)) * 0.2, np.zeros(2))]
    first = fn(params, X)
    after_first = counter.snapshot()
    for _ in range(3):
        again = fn(params, X)
        assert optree.tree_structure(again) == optree.tree_structure(first)
        for a, b in zip(optree.tree_leaves(again), optree.tree_leaves(first), strict=True):
            same(a, b)
    assert counter.snapshot() == after_first


# ---- a hit gives what the general way gives -----------------------------------------------------


def same(hit: Any, general: Any) -> None:
    """Equal results, nested alike, of the same types, dtypes and shapes."""
    assert type(hit) is type(general)
    if isinstance(general, tuple):
        assert len(hit) == len(general)
        for h, g in zip(hit, general, strict=True):
            same(h, g)
    elif isinstance(general, np.ndarray | np.generic):
        assert hit.dtype == general.dtype
        assert hit.shape == general.shape
        np.testing.assert_array_equal(hit, general)
    else:
        assert hit == general


CASES: list[tuple[str, Callable[..., Any], dict[str, Any], dict[str, Any]]] = [
    ("two arrays", loss, {"argnums": (0, 1)}, {"x": X, "y": Y}),
    ("float32", loss, {"argnums": (0, 1)}, {"x": X.astype(np.float32), "y": Y.astype(np.float32)}),
    ("one argnum", loss, {"argnums": 1}, {"x": X, "y": Y}),
    ("negative argnum", loss, {"argnums": -1}, {"x": X, "y": Y}),
    ("Python float", step, {"argnums": (0, 1)}, {"x": Y, "lr": 0.25}),
    ("NumPy scalar", scaled, {"argnums": (0, 1)}, {"x": Y, "s": np.float64(1.5)}),
    ("0-d array", scaled, {"argnums": (0, 1)}, {"x": Y, "s": np.array(1.5)}),
    ("int argument", power, {}, {"x": Y, "n": 3}),
    ("no gradient reaches y", ignores_y, {"argnums": (0, 1)}, {"x": X, "y": Y}),
    ("has_aux", loss_with_aux, {"argnums": (0, 1), "has_aux": True}, {"x": X, "y": Y}),
    # The seeded df (Note [Seeded df] in `autodiff.runtime`): constants folded from the seed.
    ("slices", rosenbrock, {}, {"x": RNG.standard_normal(50)}),
    ("slices float32", rosenbrock, {}, {"x": RNG.standard_normal(50).astype(np.float32)}),
    ("seed read in a loop", looped, {}, {"x": Y, "n": 3}),
    ("seed read in a branch", branched, {}, {"x": Y, "n": 2}),
    ("other branch", branched, {}, {"x": Y.astype(np.float32), "n": 0}),
    ("tuple aux", with_tuple_aux, {"argnums": (0, 1), "has_aux": True}, {"x": X, "y": Y}),
    ("loss is the argument", identity, {}, {"s": np.array(1.5)}),
    ("one-element loss", one_element, {}, {"x": Y}),
]


@pytest.mark.parametrize("make", [ad.grad, ad.value_and_grad])
@pytest.mark.parametrize(
    ("fn", "options", "arguments"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_a_hit_gives_what_the_general_way_gives(
    make: Callable[..., Any],
    fn: Callable[..., Any],
    options: dict[str, Any],
    arguments: dict[str, Any],
) -> None:
    gradient_fn = make(fn, **options)
    general = gradient_fn(**arguments)  # keywords: the general way, which stores the hit path
    assert calls_of(gradient_fn) == 1
    hit = gradient_fn(*arguments.values())
    same(hit, general)
    same(gradient_fn(*arguments.values()), general)


def test_a_gradient_left_as_autograd_zero_is_zeros_shaped_like_its_argument(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # df leaves a gradient as AUTOGRAD_ZERO only when its type was too vague to materialise
    # (Note [Missing vjps] in `autodiff.runtime`), which a signature's complete types never
    # are; a df that says so for y stands in for that case.
    class ZeroForY:
        def __init__(self, df: Any) -> None:
            self.df = df

        def run(self, inputs: list[Any]) -> list[Any]:
            (gradients,) = self.df.run(inputs)
            return [(gradients[0], AUTOGRAD_ZERO)]

    original = CompiledGradient.__init__

    def init(self: CompiledGradient, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        self.df = ZeroForY(self.df)  # type: ignore[assignment]

    monkeypatch.setattr(CompiledGradient, "__init__", init)
    y = Y.astype(np.float32)
    dloss = ad.grad(loss, argnums=(0, 1))
    general = dloss(x=X, y=y)
    hit = dloss(X, y)
    assert calls_of(dloss)
    same(hit, general)
    np.testing.assert_array_equal(hit[1], np.zeros(4, np.float32))


def test_int_values_are_not_fixed_by_the_hit_path() -> None:
    dpower = ad.grad(power)
    np.testing.assert_allclose(dpower(Y, 2), 2 * Y, rtol=1e-12)
    np.testing.assert_allclose(dpower(Y, 3), 3 * Y**2, rtol=1e-12)
    assert calls_of(dpower) == 1


def test_a_hit_returns_fresh_gradients() -> None:
    dloss = ad.grad(loss, argnums=(0, 1))
    first = dloss(X, Y)
    second = dloss(X, Y)
    third = dloss(X, Y)
    for a, b in zip(second, third, strict=True):
        assert not np.shares_memory(a, b)
    for a, b in zip(first, third, strict=True):
        np.testing.assert_array_equal(a, b)


# ---- what still goes the general way ------------------------------------------------------------


def test_saved_value_hooks_still_see_every_saved_array_of_a_cached_signature() -> None:
    dloss = ad.grad(loss, argnums=(0, 1))
    expected = dloss(X, Y)
    assert calls_of(dloss)
    packed: list[int] = []

    def pack(array: np.ndarray) -> np.ndarray:
        packed.append(array.size)
        return array.copy()

    with ad.saved_value_hooks(pack, lambda array: array):
        inside = dloss(X, Y)
    assert packed
    same(inside, expected)


def test_anomaly_mode_and_the_profiler_still_see_a_cached_signature() -> None:
    dsqrt = ad.grad(sqrt_sum)
    dsqrt(np.ones(3))
    assert calls_of(dsqrt)
    with (
        pytest.raises(ad.AnomalyError, match="inf"),
        ad.detect_anomaly(),
        np.errstate(divide="ignore"),
    ):
        dsqrt(np.array([0.0, 1.0, 2.0]))
    with ad.profiler() as prof:
        dsqrt(np.ones(3))
    assert prof.entries()


def test_taps_go_the_general_way_every_call() -> None:
    seen: list[np.ndarray] = []
    dtapped = ad.grad(tapped, retain="h", hooks={"h": seen.append})
    first, retained = dtapped(Y, X, Y[:3])
    second, again = dtapped(Y, X, Y[:3])
    assert calls_of(dtapped) == 0
    assert len(seen) == 2
    np.testing.assert_array_equal(first, second)
    np.testing.assert_array_equal(retained["h"], again["h"])


def test_argument_errors_are_raised_after_a_hit_path_is_stored() -> None:
    dloss = ad.value_and_grad(loss, argnums=(0, 1))
    dloss(X, Y)
    with pytest.raises(ArgumentError, match="takes 2 positional arguments but 3 were given"):
        dloss(X, Y, Y)
    with pytest.raises(ArgumentError, match="missing 1 required positional argument: 'y'"):
        dloss(X)
    with pytest.raises(ArgumentError, match="argument 'y' of loss"):
        dloss(X, "four")
    with pytest.raises(ArgumentError, match="unexpected keyword argument 'z'"):
        dloss(X, Y, z=1)
    # A list converts to the array the hit path was built for.
    same(dloss(X, list(Y)), dloss(X, Y))
    assert len(dloss.cache) == calls_of(dloss) == 1


def test_argnums_out_of_range_raise_at_every_call_and_store_nothing() -> None:
    dloss = ad.grad(loss, argnums=2)
    for _ in range(2):
        with pytest.raises(ad.DifferentiationError, match="argnums 2 is out of range"):
            dloss(X, Y)
    assert dloss.cache == {}


def test_a_failed_call_stores_no_hit_path() -> None:
    dsum = ad.grad(elementwise)  # not scalar-valued
    for _ in range(2):
        with pytest.raises(ad.DifferentiationError, match="to return a scalar"):
            dsum(X, Y)
    assert calls_of(dsum) == 0


# ---- signature keys and the benchmark's graphs-only call ----------------------------------------


def test_signature_keys_of_values_the_general_way_converts_are_stored_under_none() -> None:
    key = signature_key([Y, 1.0])
    assert signature_key([list(Y), 1.0]) != key
    assert signature_key([tuple(Y), 1.0]) != key
    assert signature_key([Y, np.float64(1.0)]) != key
    assert signature_key([Y, 1]) != key
    assert signature_key([Y.astype(np.float32), 1.0]) != key
    assert signature_key([Y.reshape(1, 4), 1.0]) != key
    # A subclass is keyed apart, so that its call goes the general way, which refuses an
    # np.matrix or a masked array (issue 15, item 13)
    assert signature_key([Y.view(np.matrix), 1.0]) != signature_key([Y.reshape(1, 4), 1.0])


def test_graphs_only_runs_the_graphs_a_hit_runs() -> None:
    workload = BY_NAME["logistic"]
    inputs = workload.inputs(tiny=True)
    ours = ad.value_and_grad(workload.function, argnums=workload.argnums)
    _, grads = ours(*inputs)
    graphs = graphs_only(ours, inputs)
    assert graphs is not None
    (raw,) = graphs()
    for got, expected in zip(raw, grads, strict=True):
        np.testing.assert_allclose(np.asarray(got).reshape(np.shape(expected)), expected)


# ---- the seeded df ------------------------------------------------------------------------------


def test_df_runs_with_the_seed_folded_in(monkeypatch: pytest.MonkeyPatch) -> None:
    counter = Counter(monkeypatch)
    counter.wrap(runtime_module, "seeded_graph")
    drosen = ad.value_and_grad(rosenbrock)
    x = RNG.standard_normal(50)
    general = drosen(x=x)
    assert counter.calls["seeded_graph"] == 1  # decided once, with the gradient
    same(drosen(x), general)
    same(drosen(x), general)
    assert counter.calls["seeded_graph"] == 1
    (compiled,) = drosen.compiled_gradients()
    runtime = compiled.runtime
    assert runtime.seeded_at == 0
    gradient = runtime.gradient
    seeded = runtime.df_graph
    assert len(seeded.inputs) == len(gradient.df.inputs) - 1
    # The 0-d chain the seed fed and the slice specs are constants now.
    kinds = [node.kind for node in seeded.all_nodes()]
    assert "aten::neg" not in kinds
    assert kinds.count("prim::TupleConstruct") < [
        node.kind for node in gradient.df.all_nodes()
    ].count("prim::TupleConstruct")


def test_a_folded_seed_gives_the_bits_of_an_unfolded_one() -> None:
    # vjp compiles df without the seed folded in; the two agree bit for bit.
    for x in (RNG.standard_normal(50), RNG.standard_normal(50).astype(np.float32)):
        _, vjp_fn = ad.vjp(rosenbrock, x)
        same(ad.grad(rosenbrock)(x), vjp_fn(np.ones((), x.dtype))[0])


def test_a_loss_of_another_dtype_takes_the_general_seed() -> None:
    # An int argument keeps the signature but here changes nothing; a float32 x is another
    # signature with its own seeded df.
    dscaled = ad.grad(scaled, argnums=(0, 1))
    for s in (np.float64(1.5), np.float64(2.5)):
        general = dscaled(x=Y, s=s)
        same(dscaled(Y, s), general)
    y32 = Y.astype(np.float32)
    general32 = dscaled(x=y32, s=np.float32(1.5))
    same(dscaled(y32, np.float32(1.5)), general32)


def test_a_seeded_df_that_would_return_its_seed_is_not_built() -> None:
    didentity = ad.grad(identity)
    first = didentity(np.array(1.5))
    second = didentity(np.array(1.5))
    third = didentity(np.array(1.5))
    (compiled,) = didentity.compiled_gradients()
    assert seeded_graph(compiled.runtime.gradient.df, 0, np.ones(())) is None
    assert compiled.runtime.seeded_at is None
    assert not np.shares_memory(second, third)
    same(second, first)


def test_a_loss_its_seed_was_not_made_for_is_refused() -> None:
    # The fold rests on the loss's inferred dtype; a run that disagrees is a compiler bug,
    # refused rather than seeded with ones of another dtype.
    dsqrt = ad.grad(sqrt_sum)
    dsqrt(np.ones(3))
    (compiled,) = dsqrt.compiled_gradients()
    seed = compiled.runtime.seed
    assert seed is not None
    with pytest.raises(ad.DifferentiationError, match=r"internal error.*float32.*float64"):
        gradient_call_module.check_seed("sqrt_sum", np.float32(1.0), seed)
    gradient_call_module.check_seed("sqrt_sum", 1.0, seed)
    gradient_call_module.check_seed("sqrt_sum", np.float64(1.0), seed)
