"""A derivative reads its operands as they were when the operator ran, never as a later write
left them (issue 15, item 2c): ``s = np.einsum('i,i->', x, x); x[0] = 5.0; return s`` has the
gradient ``2 x`` of the ``x`` passed in.

Each program computes ``s`` with an operator whose derivative keeps an operand or its result,
then writes the operand (an argument, or an array the function made) in one of NumPy's ways,
straight after it, after a loop, in a branch or in a loop, and returns ``s`` plus a multiple of
the written array's sum. Its value, what it leaves in its arguments and its gradient (through
the generated code and the interpreter, on the first call and on the cache hit, which runs the
seeded, owning ``df``) must be the plain function's, the gradient checked against central
differences and JAX's. Note [Arguments written to] in `autodiff.lambda_lift` is how.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import autodiff as ad
from ir.codegen import EXECUTOR_VARIABLE
from tests.gradients.test_gradient_corpus import assert_close_to_numeric, finite_differences
from tests.property.programs import load

# Operators whose derivative keeps an operand (or its result), applied to ``{a}``, a vector of
# four elements; ``w`` is a second argument that is never written.
OPERATIONS = {
    "einsum": "np.einsum('i,i->', {a}, {a})",
    "einsum_two_operands": "np.einsum('i,i->', {a}, w)",
    "matmul": "{a} @ {a}",
    "matmul_matrices": "np.sum({a}.reshape(2, 2) @ {a}.reshape(2, 2))",
    "dot": "np.dot({a}, w)",
    "multiply": "np.sum({a} * {a})",
    "divide": "np.sum(w / {a})",
    "power": "np.sum({a} ** 3)",
    "power_of_itself": "np.sum(np.power({a}, {a}))",
    "exp": "np.sum(np.exp({a}) * w)",
    "log": "np.sum(np.log({a}))",
    "sin": "np.sum(np.sin({a}) * w)",
    "tanh": "np.sum(np.tanh({a}) * w)",
    "sqrt": "np.sum(np.sqrt({a}))",
    "abs": "np.sum(np.abs({a} - 0.5) * w)",
    "maximum": "np.sum(np.maximum({a}, 0.6) * w)",
    "max": "np.max({a})",
    "min": "np.min({a})",
    "norm": "np.linalg.norm({a})",
    "sort": "np.sum(np.sort({a}) * w)",
    "index": "{a}[1] * {a}[2]",
    "slice": "np.sum({a}[1:3] * {a}[1:3])",
    "reshape": "np.sum({a}.reshape(2, 2) * {a}.reshape(2, 2).T)",
    "list_element": "np.sum([{a}, w][0] * {a})",
    "tuple_element": "np.sum(({a}, w)[0] * {a})",
    # NumPy gives back the operand itself, or a view of it, for these.
    "real": "np.sum(np.real({a}) * {a})",
    "atleast_1d": "np.sum(np.atleast_1d({a}) * {a})",
    "flip": "np.sum(np.flip({a}) * {a})",
    "einsum_identity": "np.sum(np.einsum('i->i', {a}) * {a})",
}
# NumPy's write, and the same write in JAX's functional spelling.
WRITES = {
    "element": ("{a}[0] = 5.0", "{a} = {a}.at[0].set(5.0)"),
    "everything": ("{a}[:] = 0.5", "{a} = {a}.at[:].set(0.5)"),
    "add": ("{a} += 1.0", "{a} = {a} + 1.0"),
    "multiply": ("{a} *= 2.0", "{a} = {a} * 2.0"),
    "add_at": (
        "np.add.at({a}, np.array([0, 2, 2]), 1.0)",
        "{a} = {a}.at[np.array([0, 2, 2])].add(1.0)",
    ),
}
OTHER_WRITE = ("{a}[1] = 2.0", "{a} = {a}.at[1].set(2.0)")  # what the other branch writes
# Where the write is, relative to the operator.
PLACES = {
    "after": ["s = {op}", "{write}"],
    "after_a_loop": ["s = 0.0", "for i in range(2):", "    s = s + {op}", "{write}"],
    "in_a_branch": ["s = {op}", "if np.sum(w) > 0.0:", "    {write}", "else:", "    {other}"],
    "in_a_loop": ["s = {op}", "for i in range(2):", "    {write}"],
}
X = np.array([0.3, 0.45, 0.7, 0.9])
W = np.array([0.5, -1.2, 0.8, 1.1])


def program_name(operation: str, write: str, place: str, target: str) -> str:
    return f"{operation}__{write}__{place}__{target}"


def program_source(operation: str, write: str, place: str, target: str, jax: bool) -> str:
    """The function computing ``s`` with ``operation`` on ``target`` ("argument" ``x`` or a
    "fresh" array ``y``) then writing it; ``jax`` spells it for JAX."""
    a = "x" if target == "argument" else "y"
    op = OPERATIONS[operation].format(a=a)
    written = WRITES[write][jax].format(a=a)
    other = OTHER_WRITE[jax].format(a=a)
    lines = [f"def {program_name(operation, write, place, target)}(x, w):"]
    if target == "fresh":
        lines.append("    y = x * 1.0")
    lines += ["    " + line.format(op=op, write=written, other=other) for line in PLACES[place]]
    lines.append(f"    return s + 0.1 * np.sum({a})")
    source = "\n".join(lines) + "\n"
    return source.replace("np.", "jnp.") if jax else source


MODULE = load(
    "import numpy as np\n\n\n"
    + "\n\n".join(
        program_source(operation, write, place, target, jax=False)
        for operation in OPERATIONS
        for write in WRITES
        for place in PLACES
        for target in ("argument", "fresh")
    ),
    "<test_saved_before_write>",
)


def function(case: tuple[str, str, str, str]) -> Callable[..., Any]:
    fn: Callable[..., Any] = getattr(MODULE, program_name(*case))
    return fn


def check(fn: Callable[..., Any], x: np.ndarray, w: np.ndarray, gradient: Any = None) -> Any:
    """Value, argument writes and the gradient w.r.t. ``x`` on two calls of ``ad.grad`` and one
    of ``ad.value_and_grad``, against the plain function and central differences."""
    plain_x = x.copy()
    expected = fn(plain_x, w.copy())
    numeric = finite_differences(fn, (x, w), 0) if gradient is None else gradient
    grad = ad.grad(fn)
    for _ in range(2):  # the second call is the cache hit: the seeded, owning df
        compiled_x = x.copy()
        assert_close_to_numeric(grad(compiled_x, w.copy()), numeric, 1e-6, "gradient")
        np.testing.assert_allclose(compiled_x, plain_x, rtol=1e-12, atol=1e-12)
    value, dx = ad.value_and_grad(fn)(x.copy(), w.copy())
    np.testing.assert_allclose(value, expected, rtol=1e-12, atol=1e-12)
    assert_close_to_numeric(dx, numeric, 1e-6, "value_and_grad")
    return numeric


def cases(target: str, places: tuple[str, ...], every_write: bool = False) -> list[Any]:
    """The programs on ``target`` with the write in one of ``places``: every write for each
    operator, or one per operator, in turn (the way of writing is the place's own concern)."""
    writes = list(WRITES)
    chosen = []
    for number, operation in enumerate(OPERATIONS):
        for place in places:
            for write in writes if every_write else [writes[number % len(writes)]]:
                case = (operation, write, place, target)
                chosen.append(pytest.param(case, id=program_name(*case)))
    return chosen


@pytest.mark.parametrize("case", cases("argument", ("after",), every_write=True))
def test_an_argument_written_after_the_operator(case: tuple[str, str, str, str]) -> None:
    check(function(case), X, W)


@pytest.mark.parametrize("case", cases("argument", ("after_a_loop", "in_a_branch", "in_a_loop")))
def test_an_argument_written_after_a_loop_in_a_branch_or_in_a_loop(
    case: tuple[str, str, str, str],
) -> None:
    check(function(case), X, W)


@pytest.mark.parametrize("case", cases("fresh", ("after", "in_a_branch")))
def test_an_array_made_here_written_after_the_operator(case: tuple[str, str, str, str]) -> None:
    check(function(case), X, W)


@pytest.mark.parametrize("case", cases("argument", ("after", "in_a_branch")))
def test_the_interpreter_reads_the_saved_values(
    case: tuple[str, str, str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(EXECUTOR_VARIABLE, "interpreter")
    check(function(case), X, W)


JAX_CASES = cases("argument", ("after", "in_a_loop"))

# JAX runs in a process of its own: it starts threads, and tests/property forks workers later.
_JAX_GRADIENTS = """
import json, sys
import jax
import numpy as np
jax.config.update("jax_enable_x64", True)
namespace = {"np": np, "jnp": jax.numpy}
exec(sys.stdin.read(), namespace)
x, w = (np.array(v) for v in json.loads(sys.argv[1]))
names = json.loads(sys.argv[2])
print(json.dumps({n: np.asarray(jax.grad(namespace[n])(x, w)).tolist() for n in names}))
"""


@pytest.fixture(scope="module")
def jax_gradients() -> dict[str, list[float]]:
    """d/dx of each JAX_CASES program, spelled for JAX, by ``jax.grad``."""
    if importlib.util.find_spec("jax") is None:  # not imported here: in the child only
        pytest.skip("jax is not installed")
    chosen = [param.values[0] for param in JAX_CASES]
    sources = "\n\n".join(program_source(*case, jax=True) for case in chosen)
    names = [program_name(*case) for case in chosen]
    arrays = json.dumps([X.tolist(), W.tolist()])
    run = subprocess.run(
        [sys.executable, "-c", _JAX_GRADIENTS, arrays, json.dumps(names)],
        input=sources,
        capture_output=True,
        text=True,
        check=True,
    )
    gradients: dict[str, list[float]] = json.loads(run.stdout)
    return gradients


@pytest.mark.parametrize("case", JAX_CASES)
def test_gradients_match_jax(
    case: tuple[str, str, str, str], jax_gradients: dict[str, list[float]]
) -> None:
    expected = np.array(jax_gradients[program_name(*case)])
    fn = function(case)
    assert_close_to_numeric(ad.grad(fn)(X.copy(), W.copy()), expected, 1e-10, "against JAX")


def test_the_issue_example() -> None:
    @ad.script
    def f(x):
        s = np.einsum("i,i->", x, x)
        x[0] = 5.0
        return s

    x = np.array([0.3, -0.2, 0.7])
    for _ in range(2):
        np.testing.assert_allclose(ad.grad(f)(x.copy()), [0.6, -0.4, 1.4], rtol=1e-14)


# ---- the owning df, tapes and lists -------------------------------------------------------------


LARGE = 2048  # above the memory plan's INPLACE_MIN_SIZE: f's temporaries are owned by df


def saves_large_temporaries(x, w):
    t = np.tanh(x * w)
    e = np.exp(x)
    s = np.sum(t * e) + np.einsum("i,i->", x, w)
    x *= 3.0
    return s + np.sum(x)


def pushes_views_to_a_tape(x, w):
    s = 0.0
    for i in range(3):
        s = s + np.sum(np.sin(x[i:]) * x[i:])  # a list tape of views of x, of varying length
    x[:] = 0.0
    return s


def appends_the_argument_to_a_list(x, w):
    held = []
    for _ in range(2):
        held.append(x * w)
        held.append(x)
    s = np.sum(held[1] * held[0]) + np.sum(held[3] ** 2)
    np.add.at(x, np.array([1, 1]), 2.0)
    return s


@pytest.mark.parametrize("executor", ["codegen", "interpreter"])
def test_large_temporaries_owned_by_df(executor: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(EXECUTOR_VARIABLE, executor)
    rng = np.random.default_rng(3)
    x, w = rng.uniform(-1, 1, LARGE), rng.uniform(-1, 1, LARGE)
    t = np.tanh(x * w)
    exact = (1 - t * t) * w * np.exp(x) + t * np.exp(x) + w + 3.0
    check(saves_large_temporaries, x, w, gradient=exact)


@pytest.mark.parametrize("fn", [pushes_views_to_a_tape, appends_the_argument_to_a_list])
@pytest.mark.parametrize("executor", ["codegen", "interpreter"])
def test_tapes_and_lists_holding_the_argument(
    fn: Callable[..., Any], executor: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(EXECUTOR_VARIABLE, executor)
    check(fn, X, W)
