"""The properties every generated program must have, each a function that raises
AssertionError (or the compiler's own error) when the program breaks it.

- ``scripted``: ``ad.script(f)`` gives the plain function's results (type, dtype, shape,
  values) and leaves the arguments as the plain function does. A program
  NumPy refuses because it writes through a read-only view must be refused by the compiler,
  with a located error; the other properties pass over it.
- ``aliasing``: the scripted result shares memory with an argument exactly when the plain
  function's does (``np.shares_memory``).
- ``passes``: every registered graph pass, alone, and the default pipelines, keep the
  interpreter's results; the verifier accepts every graph they produce. Forward passes run on
  the typed, functionalised graph; every pass runs on the gradient-stage graph (with its
  ``prim::Reverse`` block) too, compared through `lambda_lift` and the runtime.
- ``roundtrip``: print → parse → print is the identity for the graphs of every stage.
- ``gradients``: ``ad.grad`` of ``loss`` (``np.sum(f(...))``) w.r.t. every float argument
  matches central finite differences of the plain ``loss``; for a complex argument, in the
  real and the imaginary direction (Note [Complex gradients] in `autodiff.formulas`: the
  gradient is ``dL/dRe z - 1j * dL/dIm z``).
- ``nested``: ``ad.jacobian(ad.jacobian(f))`` w.r.t. ``a`` matches central differences of
  ``ad.jacobian(f)``, and ``ad.hessian(loss)`` central differences of ``ad.grad(loss)``.

The properties of one program share its compilation (`compiled`): the module, the scripted
function and the graphs of every stage are built once, and each check copies a graph before it
runs anything that mutates one.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np
from hypothesis import reject

import autodiff as ad
from autodiff.lambda_lift import lambda_lift
from autodiff.pipeline import REVERSE_OPTIMISATION, Stages, differentiate_typed
from autodiff.runtime import CompiledGradient
from autodiff.script import ScriptFunction
from autodiff.specialize import (
    FORWARD_CLEANUP,
    SPECIALISE_PIPELINE,
    argument_type,
    functionalize_options,
    numpy_scalar_positions,
    strided_inputs,
)
from autodiff.tiering import numba_installed
from ir.errors import AutodiffError
from ir.graph import Graph
from ir.interpreter import run_graph
from ir.printer import print_graph
from ir.verify import verify
from passes.registry import PASSES, PipelineStep, run_passes
from passes.shape_propagation import specialise
from tests.helpers import check_roundtrip
from tests.property.programs import Program, copy_keeping_layout, load_program
from tests.property.rule_idioms import OPAQUE_SECOND_ORDER

# Finite differences: step, relative error allowed, and the floor (a fraction of the largest
# numeric gradient) below which an element is compared absolutely.
EPS = 1e-6
COARSE_EPS = 1e-4
RTOL = 1e-5
FLOOR = 1e-3
# Passes reorder no arithmetic, but constant folding may evaluate in another precision path.
PASS_RTOL = 1e-10


def fresh(args: Sequence[Any]) -> list[Any]:
    return [copy_keeping_layout(a) for a in args]


def assert_same(actual: Any, expected: Any, where: str, *, exact_types: bool = True) -> None:
    """``actual`` equals ``expected``: for arrays and NumPy scalars the same dtype, shape and
    values (to ``PASS_RTOL``); with ``exact_types`` the same Python type too."""
    if exact_types:
        assert type(actual) is type(expected), f"{where}: {type(actual)} != {type(expected)}"
    if isinstance(expected, tuple | list):
        assert len(actual) == len(expected), f"{where}: lengths differ"
        for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
            assert_same(a, e, f"{where}[{i}]", exact_types=exact_types)
        return
    a, e = np.asarray(actual), np.asarray(expected)
    assert a.dtype == e.dtype, f"{where}: dtype {a.dtype} != {e.dtype}"
    assert a.shape == e.shape, f"{where}: shape {a.shape} != {e.shape}"
    np.testing.assert_allclose(a, e, rtol=PASS_RTOL, atol=1e-12, err_msg=where)


# ---- one program's compilation, shared by the properties ------------------------------------


@dataclass(frozen=True)
class Compiled:
    """A program's module and ``ad.script(f)``, and ``f``'s graph at every stage: parsed,
    specialised to the program's arguments, functionalised, after FORWARD_CLEANUP, and
    differentiated w.r.t. its float arguments."""

    module: ModuleType
    scripted: ScriptFunction
    parsed: Graph
    specialised: Graph
    base: Graph
    forward: Graph
    float_positions: tuple[int, ...]
    array_positions: tuple[int, ...]  # of them, the arrays

    @functools.cached_property
    def stages(self) -> Stages:
        try:
            return differentiate_typed(self.forward, self.float_positions, keep_stages=True)
        except ad.DifferentiationError as error:
            # A float operand whose formula gives it no gradient, refused (the
            # ``float_operands`` idiom; `check_gradients`): the arrays' gradients.
            if "is not differentiable with respect to its operand" not in str(error):
                raise
            return differentiate_typed(self.forward, self.array_positions, keep_stages=True)


@functools.lru_cache(maxsize=2)
def loaded(program: Program) -> ModuleType:
    return load_program(program)


@functools.lru_cache(maxsize=2)
def numpy_error(program: Program) -> Exception | None:
    """What the plain ``f`` raises on the program's arguments, or None."""
    try:
        loaded(program).f(*fresh(program.arguments()))
    except Exception as error:
        return error
    return None


def numpy_runs(program: Program) -> bool:
    """Whether NumPy runs ``program``. A program that writes through a read-only view does not
    (the ``readonly_writes`` idiom; `check_scripted` asks the compiler to refuse it too); one
    NumPy refuses otherwise is not a program the generator should write, and is rejected."""
    error = numpy_error(program)
    if error is None:
        return True
    if isinstance(error, ValueError) and "read-only" in str(error):
        return False
    reject()
    raise AssertionError("unreachable")  # reject() raises


def free_values(program: Program) -> list[Any]:
    """The arrays ``f`` reads from outside (globals, closure cells), as its graph's inputs after
    the parameters take them (Note [Free variables] in `frontend.compile`)."""
    return [variable.read() for variable in ad.script(loaded(program).f).free]


def graph_arguments(program: Program) -> list[Any]:
    """What ``f``'s graph takes: the program's arguments, then the arrays it reads from
    outside."""
    return [*program.arguments(), *free_values(program)]


def layouts_of(program: Program) -> dict[str, str]:
    """The options that tell `passes.functionalize` which of the graph's inputs are NumPy
    scalars and which arrays are not C-contiguous, as a compiled call does."""
    values = graph_arguments(program)
    return functionalize_options(numpy_scalar_positions(values), strided_inputs(values))


@functools.lru_cache(maxsize=2)
def compiled(program: Program) -> Compiled:
    """`Compiled` for ``program``, built once for all its properties (a failure is not kept:
    the next property that asks raises it again)."""
    module = loaded(program)
    scripted = ad.script(module.f)
    names = [*(name for name, _ in program.args), *(v.name for v in scripted.free)]
    types = [
        argument_type("f", name, value)
        for name, value in zip(names, graph_arguments(program), strict=True)
    ]
    specialised = specialise(scripted.graph, types)
    # The layouts the compiled call tells functionalisation (a reshape of a Fortran-ordered
    # argument is a copy): regression 131, where the check left them out.
    base = _after(specialised, [("functionalize", layouts_of(program))])
    forward = _after(base, [(name, {}) for name in FORWARD_CLEANUP])
    positions = program.float_positions()
    arrays = tuple(p for p in positions if program.args[p][1] != "float")
    return Compiled(module, scripted, scripted.graph, specialised, base, forward, positions, arrays)


# ---- scripted == plain ---------------------------------------------------------------------------


def check_scripted(program: Program) -> None:
    if not numpy_runs(program):
        check_refused(program)
        return
    module = compiled(program).module
    plain_args, script_args = fresh(program.arguments()), fresh(program.arguments())
    expected = module.f(*plain_args)
    actual = compiled(program).scripted(*script_args)
    assert_same(actual, expected, "result")
    for (name, _), a, e in zip(program.args, script_args, plain_args, strict=True):
        assert_same(a, e, f"argument {name} after the call")
    check_free_rebound(program)


def free_arrays(module: ModuleType) -> list[tuple[str, Callable[[], Any], Callable[[Any], None]]]:
    """The arrays ``module.f`` reads from outside, each with how to read and rebind it: a
    module global, or a cell of the closure ``f`` was made in."""
    function = module.f
    found: list[tuple[str, Callable[[], Any], Callable[[Any], None]]] = []
    for name, cell in zip(function.__code__.co_freevars, function.__closure__ or (), strict=True):
        if isinstance(cell.cell_contents, np.ndarray):
            found.append(
                (
                    name,
                    lambda cell=cell: cell.cell_contents,
                    functools.partial(setattr, cell, "cell_contents"),
                )
            )
    for name in function.__code__.co_names:
        value = module.__dict__.get(name)
        if isinstance(value, np.ndarray):
            found.append(
                (
                    name,
                    functools.partial(module.__dict__.get, name),
                    functools.partial(module.__dict__.__setitem__, name),
                )
            )
        elif isinstance(value, functools.partial):
            found += _partial_arrays(name, value)
        elif type(value).__module__ == module.__name__ and hasattr(value, "__dict__"):
            # An object of a class the program defines: its array attributes (``OBJ.W``).
            for attribute, held in vars(value).items():
                if isinstance(held, np.ndarray):
                    found.append(
                        (
                            f"{name}.{attribute}",
                            functools.partial(getattr, value, attribute),
                            functools.partial(setattr, value, attribute),
                        )
                    )
    return found


def _partial_arrays(
    name: str, partial: functools.partial[Any]
) -> list[tuple[str, Callable[[], Any], Callable[[Any], None]]]:
    """The arrays a module-level partial fixes, by position or keyword (Python flattens a
    partial of a partial; a partial's subclass may still wrap one), each rebound through the
    partial's state, as its args are a tuple."""
    found: list[tuple[str, Callable[[], Any], Callable[[Any], None]]] = []
    if isinstance(partial.func, functools.partial):
        found += _partial_arrays(f"{name}.func", partial.func)

    def rebind(slot: int | str, new: Any) -> None:
        args, keywords = list(partial.args), dict(partial.keywords)
        if isinstance(slot, int):
            args[slot] = new
        else:
            keywords[slot] = new
        partial.__setstate__((partial.func, tuple(args), keywords, partial.__dict__ or None))

    slots: list[int | str] = [
        *(i for i, held in enumerate(partial.args) if isinstance(held, np.ndarray)),
        *(k for k, held in partial.keywords.items() if isinstance(held, np.ndarray)),
    ]
    for slot in slots:
        found.append(
            (
                f"{name}.args[{slot}]" if isinstance(slot, int) else f"{name}.keywords[{slot!r}]",
                lambda slot=slot: (
                    partial.args[slot] if isinstance(slot, int) else partial.keywords[slot]
                ),
                functools.partial(rebind, slot),
            )
        )
    return found


def check_free_rebound(program: Program) -> None:
    """Rebinding an array ``f`` reads from outside, then writing into the new one in place,
    changes what the compiled ``f`` computes as it changes the plain one's (issue 17: never a
    stale constant). Every array is put back afterwards: the other properties share the
    module."""
    module = compiled(program).module
    scripted = compiled(program).scripted
    free = free_arrays(module)
    if not free:
        return
    originals = [read() for _, read, _ in free]
    rng = np.random.default_rng(program.seed + 1)
    try:
        for step in ("rebound", "written"):
            for _, read, rebind in free:
                if step == "rebound":
                    rebind(rng.uniform(-1, 1, np.shape(read())))
                else:
                    read()[...] = np.cos(read())
            plain_args, script_args = fresh(program.arguments()), fresh(program.arguments())
            expected = module.f(*plain_args)
            actual = scripted(*script_args)
            names = ", ".join(name for name, _, _ in free)
            assert_same(actual, expected, f"result after {names} {step}")
            for (name, _), a, e in zip(program.args, script_args, plain_args, strict=True):
                assert_same(a, e, f"argument {name} after the call, {names} {step}")
    finally:
        for (_, _, rebind), original in zip(free, originals, strict=True):
            rebind(original)


def check_aliasing(program: Program) -> None:
    """The scripted result shares memory with an argument exactly when the plain one does."""
    if not numpy_runs(program):
        return
    module = compiled(program).module
    plain_args, script_args = fresh(program.arguments()), fresh(program.arguments())
    expected = module.f(*plain_args)
    actual = compiled(program).scripted(*script_args)
    for (name, _), a, e in zip(program.args, script_args, plain_args, strict=True):
        shares, numpy_shares = np.shares_memory(actual, a), np.shares_memory(expected, e)
        assert shares == numpy_shares, (
            f"the result shares memory with an argument: {shares}; in NumPy: {numpy_shares}"
            f" (argument {name})"
        )
    for name, read, _ in free_arrays(module):
        shares, numpy_shares = np.shares_memory(actual, read()), np.shares_memory(expected, read())
        assert shares == numpy_shares, (
            f"the result shares memory with {name}: {shares}; in NumPy: {numpy_shares}"
        )


def check_refused(program: Program) -> None:
    """NumPy raises on ``program``'s write through a read-only view: the compiler must refuse
    it with an error located in the program (file, line, column), not run it."""
    module = loaded(program)
    try:
        ad.script(module.f)(*fresh(program.arguments()))
    except AutodiffError as error:
        refusal = error
    else:
        raise AssertionError(
            f"NumPy refuses the program ({numpy_error(program)}); the compiled function ran"
        )
    location = f"{module.__file__}:"
    assert location in str(refusal), f"refused without a location in the program: {refusal}"


# ---- passes ------------------------------------------------------------------------------------


def graph_passes() -> list[str]:
    return sorted(name for name, registered in PASSES.items() if not registered.on_module)


def _run_checked(graph: Graph, args: Sequence[Any], expected: Any, where: str) -> None:
    """Run ``graph`` on copies of ``args``: results and arguments as ``expected`` says."""
    verify(graph)
    given = fresh(args)
    results = run_graph(graph, *given)
    outputs, arguments = expected
    assert_same(results, outputs, f"{where}: results", exact_types=False)
    assert_same(given, arguments, f"{where}: arguments after the run", exact_types=False)


def _after(graph: Graph, pipeline: Sequence[PipelineStep], *, verify: bool = True) -> Graph:
    """A copy of ``graph`` after ``pipeline``, verified after every pass unless not
    ``verify``."""
    result = graph.copy()
    run_passes(result, list(pipeline), verify=verify)
    return result


def check_passes(program: Program) -> None:
    if not numpy_runs(program):
        return
    shared = compiled(program)
    args = graph_arguments(program)
    plain = fresh(program.arguments())
    expected = ([shared.module.f(*plain)], [*plain, *fresh(free_values(program))])
    specialised, base = shared.specialised, shared.base
    _run_checked(specialised, args, expected, "specialised graph")
    _run_checked(base, args, expected, "after functionalize")
    unchanged = print_graph(base)
    for name in graph_passes():
        try:
            graph = _after(base, [(name, {})], verify=False)
        except ad.DifferentiationError as error:
            # The differentiate pass (w.r.t. every float input) refuses a float operand whose
            # formula gives it no gradient (the ``float_operands`` idiom), located.
            if "is not differentiable with respect to its operand" not in str(error):
                raise
            assert error.source_range is not None, f"a refusal without a location: {error}"  # noqa: PT017
            continue
        # A graph that prints as `base` does is `base` (print -> parse is the identity): only
        # the passes that changed something are verified and run again.
        if print_graph(graph) != unchanged:
            _run_checked(graph, args, expected, f"after {name}")
    pipeline = [
        (name, layouts_of(program) if name == "functionalize" else options)
        for name, options in SPECIALISE_PIPELINE
    ]
    _run_checked(_after(specialised, pipeline), args, expected, "SPECIALISE_PIPELINE")
    _run_checked(shared.forward, args, expected, "FORWARD_CLEANUP")
    check_gradient_passes(program, np.shape(expected[0][0]), shared.stages)


# lower-tuples runs before differentiation only: after it, a gradient-stage graph whose loop
# carries a tuple fails in f at a prim::TupleUnpack of None.
GRADIENT_STAGE_PASSES = [name for name in graph_passes() if name != "lower-tuples"]


def _gradient_of(graph: Graph, args: Sequence[Any], vjp: Any) -> list[Any]:
    """Outputs of ``f`` and gradients from ``df`` of a gradient-stage graph, which this
    lambda-lifts: give it a copy."""
    compiled = CompiledGradient(lambda_lift(graph))
    outputs, saved = compiled.forward(fresh(args))
    return [*outputs, *compiled.backward(saved, [vjp] * len(outputs))]


def check_gradient_passes(program: Program, shape: tuple[int, ...], stages: Stages) -> None:
    """Every pass, and REVERSE_OPTIMISATION, on the gradient stage (``stages``, of a function
    whose result has NumPy's ``shape``) keeps ``f`` and ``df``."""
    args = graph_arguments(program)
    gradient = stages.gradient
    for graph in (stages.grad, stages.optimized, gradient.f, gradient.df):
        verify(graph)
    # The shape NumPy's result has: the graph's type may not know it (a value that is a number
    # or an array by the path taken), and a 0-d cotangent for a (3, 3) result is no test.
    vjp = np.random.default_rng(program.seed).uniform(0.5, 1.5, shape)
    if not shape:
        vjp = np.float64(vjp) if isinstance(vjp, np.ndarray) else vjp
    expected = _gradient_of(stages.grad.copy(), args, vjp)
    unchanged = print_graph(stages.grad)
    for name, graph in [
        *(
            (name, _after(stages.grad, [(name, {})], verify=False))
            for name in GRADIENT_STAGE_PASSES
        ),
        ("REVERSE_OPTIMISATION", _after(stages.grad, [(n, {}) for n in REVERSE_OPTIMISATION])),
    ]:
        if print_graph(graph) == unchanged:
            continue  # it is stages.grad (see check_passes)
        verify(graph)
        try:
            actual = _gradient_of(graph, args, vjp)
        except Exception as error:
            error.add_note(f"running the gradient stage after {name}")
            raise
        assert_same(actual, expected, f"gradient stage after {name}", exact_types=False)


# ---- print -> parse -> print ---------------------------------------------------------------------


def check_roundtrips(program: Program) -> None:
    """The parsed, typed and functionalised graphs, the forward cleanup's result, and the
    gradient stages: grad, optimized, f and df."""
    if not numpy_runs(program):
        return
    shared = compiled(program)
    stages = shared.stages
    gradient = stages.gradient
    graphs = (shared.parsed, shared.specialised, shared.base, shared.forward)
    graphs += (stages.grad, stages.optimized)
    texts = [print_graph(graph) for graph in (*graphs, gradient.f, gradient.df)]
    for text in dict.fromkeys(texts):  # a stage that changed nothing prints as the one before
        check_roundtrip(text)


# ---- gradients against finite differences ------------------------------------------------------


def assert_close_to_numeric(actual: Any, numeric: Any, where: str) -> None:
    actual = np.asarray(actual, dtype=np.float64)
    assert actual.shape == numeric.shape, f"{where}: shape {actual.shape} != {numeric.shape}"
    scale = float(np.max(np.abs(numeric), initial=0.0))
    denominator = np.maximum(np.abs(numeric), FLOOR * max(scale, 1.0))
    error = np.abs(actual - numeric) / denominator
    worst = np.unravel_index(np.argmax(error), error.shape) if error.size else ()
    assert error.size == 0 or error.max() <= RTOL, (
        f"{where}: relative error {error.max():.2e} at {worst}: "
        f"analytic {actual[worst]!r}, finite differences {numeric[worst]!r}"
    )


def directional_differences(
    fn: Callable[..., Any], args: Sequence[Any], position: int, direction: complex
) -> Any:
    """Central differences of ``fn`` (real-valued) as each element of the complex array
    ``args[position]`` moves along ``direction`` (1 or 1j); fresh arguments every time."""
    base = np.asarray(args[position])
    numeric = np.zeros(base.shape)
    for index in np.ndindex(base.shape):
        ends = []
        for sign in (1.0, -1.0):
            values = fresh(args)  # copies that keep the argument's strides (regression 137)
            values[position][index] += sign * EPS * direction
            ends.append(float(fn(*values)))
        numeric[index] = (ends[0] - ends[1]) / (2 * EPS)
    return numeric


def layout_keeping_differences(fn: Callable[..., Any], args: Sequence[Any], position: int) -> Any:
    """Central differences of the real-valued ``fn`` w.r.t. ``args[position]`` (an array or a
    Python float), each run on copies of the arguments that keep their strides: whether a
    reshape is a view or a copy, and so what a later write reaches, depends on them
    (regression 137: C-ordered copies of a reversed argument differentiated another
    function)."""
    argument = args[position]
    numeric = np.zeros(np.shape(argument))
    for index in np.ndindex(numeric.shape):
        ends = []
        for sign in (1.0, -1.0):
            values = fresh(args)
            if isinstance(argument, np.ndarray):
                values[position][index] += sign * EPS
            else:
                values[position] = argument + sign * EPS
            ends.append(float(fn(*values)))
        numeric[index] = (ends[0] - ends[1]) / (2 * EPS)
    return numeric


def check_gradients(program: Program) -> None:
    if not numpy_runs(program):
        return
    module = compiled(program).module
    args = program.arguments()
    positions = program.float_positions()
    try:
        value, grads = ad.value_and_grad(module.loss, argnums=positions)(*fresh(args))
    except ad.DifferentiationError as error:
        # A float operand whose formula gives it no gradient (the ``float_operands`` idiom) is
        # refused, located (Note [No gradient is not a zero gradient]); the arrays still get
        # theirs.
        if "is not differentiable with respect to its operand" not in str(error):
            raise
        assert error.source_range is not None, f"a refusal without a location: {error}"  # noqa: PT017
        positions = compiled(program).array_positions
        value, grads = ad.value_and_grad(module.loss, argnums=positions)(*fresh(args))
    np.testing.assert_allclose(value, module.loss(*fresh(args)), rtol=1e-10, atol=1e-12)
    for position, grad in zip(positions, grads, strict=True):
        name = program.args[position][0]
        if np.iscomplexobj(args[position]):
            # Note [Complex gradients]: the gradient is dL/dRe z - 1j * dL/dIm z.
            assert np.iscomplexobj(grad), f"gradient w.r.t. {name}: {np.asarray(grad).dtype}"
            real = directional_differences(module.loss, args, position, 1.0)
            imaginary = directional_differences(module.loss, args, position, 1j)
            assert_close_to_numeric(np.real(grad), real, f"gradient w.r.t. Re {name}")
            assert_close_to_numeric(-np.imag(grad), imaginary, f"gradient w.r.t. Im {name}")
            continue
        numeric = layout_keeping_differences(module.loss, args, position)
        assert_close_to_numeric(grad, numeric, f"gradient w.r.t. {name}")


# ---- the native tier ---------------------------------------------------------------------------


def check_native(program: Program) -> None:
    """The native tier (numba: Note [Tiering] in `autodiff.tiering`) gives the NumPy tier's
    result, arguments after the call, value and gradients, to `PASS_RTOL` (Note [Native
    numerics]: libm calls and sums in another order differ by a few ulps). Without numba
    there is no native tier to check."""
    if not numpy_runs(program) or not numba_installed():
        return
    module = compiled(program).module
    args = program.arguments()
    numpy_args, native_args = fresh(args), fresh(args)
    expected = ad.script(module.f, native=False)(*numpy_args)
    assert_same(ad.script(module.f, native=True)(*native_args), expected, "native result")
    for (name, _), a, e in zip(program.args, native_args, numpy_args, strict=True):
        assert_same(a, e, f"argument {name} after the native call")
    positions = program.float_positions()
    numpy_args = fresh(args)
    try:
        expected = ad.value_and_grad(module.loss, argnums=positions, native=False)(*numpy_args)
    except ad.DifferentiationError:  # the refusal `check_gradients` checks
        positions = compiled(program).array_positions
        numpy_args = fresh(args)
        expected = ad.value_and_grad(module.loss, argnums=positions, native=False)(*numpy_args)
    # f and df run joined into one graph here (Note [Joined f and df]): f's writes into the
    # arguments and df's reads of them keep their order
    native_args = fresh(args)
    actual = ad.value_and_grad(module.loss, argnums=positions, native=True)(*native_args)
    assert_same(actual, expected, "native value and gradients", exact_types=False)
    for (name, _), a, e in zip(program.args, native_args, numpy_args, strict=True):
        assert_same(a, e, f"argument {name} after the native gradient call")


# ---- nested jacobians and hessians ---------------------------------------------------------------


def differences_of(
    fn: Callable[..., Any], args: Sequence[Any], position: int, eps: float = EPS
) -> Any:
    """Central differences of the array-valued ``fn`` w.r.t. ``args[position]``: shape
    ``fn(...).shape + args[position].shape`` (the order `ad.jacobian` gives)."""
    base = np.asarray(args[position], dtype=np.float64)
    columns = []
    for index in np.ndindex(base.shape):
        ends = []
        for sign in (1.0, -1.0):
            values = fresh(args)  # copies that keep the argument's strides (regression 137)
            values[position][index] += sign * eps
            ends.append(np.asarray(fn(*values), dtype=np.float64))
        columns.append((ends[0] - ends[1]) / (2 * eps))
    stacked = np.stack(columns, axis=-1)
    return stacked.reshape(stacked.shape[:-1] + base.shape)


def assert_close_to_differences_of(
    actual: Any, fn: Callable[..., Any], args: Sequence[Any], where: str
) -> None:
    """`assert_close_to_numeric` against central differences of a first derivative ``fn``.

    Differencing a computed derivative divides its rounding by the step: a saturated
    ``tanh`` has second derivatives near 3e-8 beside first derivatives whose last digits are
    noise from ``1 - tanh(x)**2``, and at ``EPS`` that noise reaches 1e-8 (regression 125).
    A wrong formula is wrong at every step; so a mismatch at ``EPS`` is checked again at
    the coarser ``COARSE_EPS``, where rounding is a hundred times smaller and truncation
    still far below the tolerance, and only a mismatch at both steps fails."""
    try:
        assert_close_to_numeric(actual, differences_of(fn, args, 0), where)
    except AssertionError as fine:
        try:
            assert_close_to_numeric(actual, differences_of(fn, args, 0, COARSE_EPS), where)
        except AssertionError:
            raise fine from None


def check_nested(program: Program) -> None:
    """``ad.jacobian(ad.jacobian(f))`` and ``ad.hessian(loss)`` w.r.t. ``a`` (always a float
    array) against central differences of the first derivative, which the ``gradients``
    property checks."""
    if not numpy_runs(program):
        return
    module = loaded(program)
    args = program.arguments()
    if np.iscomplexobj(module.f(*fresh(args))):
        return  # jacobians of complex results are not defined here (as JAX without holomorphic)
    first = ad.jacobian(module.f)
    second: Any = None
    refusal: ad.DifferentiationError | None = None
    try:
        second = ad.jacobian(first)(*fresh(args))
    except ad.DifferentiationError as error:
        # A derivative of a function that reads arrays from outside has no inputs for them
        # yet (`autodiff.grad.check_reads_no_global_arrays`): refused, naming the array.
        if free_arrays(module) and "cannot be differentiated again" in str(error):
            return
        # The Jacobian graph unrolls one row per element of f's result, so it needs the
        # result's shape from the arguments' shapes; a result whose shape the data decides
        # leaves it to run time, and the compiler refuses, located. Only that refusal is
        # passed over (a Python number that becomes a NumPy scalar in a loop has shape ()
        # since regression 127).
        # An opaque custom_vjp's rule has no derivative of its own (the ``custom_vjps``
        # idiom): a second derivative through it is refused where it is called.
        if OPAQUE_SECOND_ORDER in str(error):
            assert error.source_range is not None, f"a refusal without a location: {error}"  # noqa: PT017
            return
        if "is not known from the shapes of its arguments" not in str(error):
            raise
        refusal = error
    if refusal is not None:
        assert refusal.source_range is not None, f"a refusal without a location: {refusal}"
    else:
        assert_close_to_differences_of(second, first, args, "jacobian of jacobian")
    try:
        hessian = ad.hessian(module.loss)(*fresh(args))
    except ad.DifferentiationError as error:
        if OPAQUE_SECOND_ORDER not in str(error):
            raise
        assert error.source_range is not None, f"a refusal without a location: {error}"  # noqa: PT017
        return
    gradient = ad.grad(module.loss)
    assert_close_to_differences_of(hessian, gradient, args, "hessian")


PROPERTIES: dict[str, Callable[[Program], None]] = {
    "scripted": check_scripted,
    "aliasing": check_aliasing,
    "passes": check_passes,
    "roundtrip": check_roundtrips,
    "gradients": check_gradients,
    "nested": check_nested,
    "native": check_native,
}


def check_all(program: Program) -> None:
    for check in PROPERTIES.values():
        check(program)
