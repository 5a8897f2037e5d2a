"""Every operator's derivative formula against central finite differences of its NumPy kernel.

Each check builds a one-node graph straight in IR (no frontend), differentiates it with the
real pipeline (`differentiate_typed`, the reverse-block passes, lambda lifting) and runs the
resulting ``f``/``df`` pair, so a sample exercises the formula exactly as user code would.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from autodiff.derivatives import ALIASES, all_formulas
from autodiff.docs import render
from autodiff.pipeline import differentiate_typed
from autodiff.runtime import CompiledGradient
from ir.graph import Graph, Value
from ir.ops import OPS, Derivative, gradients, products, sorting
from ir.ops.scipy_linalg import LINALG_OPS
from ir.ops.scipy_signal import SIGNAL_OPS
from ir.ops.scipy_special import SCIPY_OPS
from ir.ops.scipy_stats import STATS_OPS
from ir.types import (
    NOTHING,
    ListType,
    TupleType,
    Type,
    type_of_value,
)
from passes.shape_propagation import propagate_shapes
from tests.formula_samples import FLOAT32_OPS, SAMPLES, Operands, Sample
from tests.scipy_samples import SCIPY_FLOAT32_OPS, SCIPY_SAMPLES

SAMPLES = {**SAMPLES, **SCIPY_SAMPLES}
FLOAT32_OPS = (*FLOAT32_OPS, *SCIPY_FLOAT32_OPS)

EPS = 1e-6
RTOL = 1e-6  # of max(|numeric|, 1), element by element
RTOL_FLOAT32 = 1e-4
# A kernel with a float32 result (astype) rounds away differences of 1e-6: take wider steps.
EPS_ROUNDED, RTOL_ROUNDED = 1e-3, 1e-3

# The helper operators of the `ir.ops.gradients` package (and the adjoints kept beside their
# operators in `ir.ops.products` and `ir.ops.sorting`): derivative formulas call them.
_HELPER_MODULES = {f"{gradients.__name__}.{module}" for module in gradients.__all__} | {
    products.__name__,
    sorting.__name__,
}
HELPERS = {
    name
    for name, op in OPS.items()
    if getattr(op.kernel, "__module__", None) in _HELPER_MODULES and name.startswith("aten::_")
}
# Operators whose result is, as a value, another function of their operands than what the
# kernel computes from them: prim::WrittenArgument returns its target, which the write back has
# filled with its value (Note [Returned arguments] in `passes.returned_arguments`); its
# derivative is that of the value. Finite differences differentiate the value.
VALUE_OF = {"prim::WrittenArgument": lambda value, target: value}


def differentiated_kernel(op: str) -> Any:
    """What the formula of ``op`` differentiates: its kernel, or what `VALUE_OF` says."""
    return VALUE_OF.get(op, OPS[op].kernel)


def test_the_record_says_exactly_which_operators_have_a_formula() -> None:
    """An operator's record says FORMULA exactly when `autodiff.formulas` has its formula or
    `derivatives.ALIASES` maps it to one (Note [Derivatives] in `ir.ops.registry`): so no
    formula is dead code, and every operator without one says whether a gradient stops at it
    (NONE) or flows and differentiation refuses it (REFUSED, STRUCTURAL)."""
    formulas = all_formulas()
    with_formula = {name for name in OPS if ALIASES.get(name, name) in formulas}
    declared = {name for name, op in OPS.items() if op.derivative is Derivative.FORMULA}
    assert sorted(declared - with_formula) == []
    assert sorted(with_formula - declared) == []
    assert set(ALIASES.values()) <= set(formulas)


def test_the_reference_lists_every_refused_operator() -> None:
    """A user sees in `docs/operators.md` which operators a gradient cannot pass yet."""
    rows = {row.split("`")[1]: row for row in render().splitlines() if row.startswith("| `")}
    for name, op in OPS.items():
        refused = rows[name].split(" | ")[-2] == "**refused**"  # the Derivative column
        assert refused == (op.derivative is Derivative.REFUSED), name


# Helpers the gradients of common functions call: their formulas make a gradient graph
# differentiable again (second derivatives, Hessians).
DIFFERENTIABLE_HELPERS = {
    "aten::_unreduce",
    "aten::_transpose_backward",
    "aten::_matmul_backward_self",
    "aten::_matmul_backward_other",
    "aten::_dot_backward",
    "aten::_select_backward",
    "aten::_slice_backward",
    "aten::_index_backward",
    "aten::_index_tuple",
    "aten::_zero_written",
    "aten::_gather_last_written",
    "aten::_scatter_last_written",
    "aten::_take_backward",
    "aten::_cumsum_backward",
    "aten::_concatenate_backward",
    "aten::_stack_backward",
    "aten::_repeat_backward",
    "aten::_diagonal_backward",
    "aten::_diag_backward",
    "aten::_diff_backward",
    "aten::_tile_backward",
    "aten::_pad_backward",
    "aten::_join_backward",
    "aten::_prod_backward",
    "aten::_einsum_double_backward",
    "aten::_list_index_backward",
    "aten::_sequence_as",
    "aten::_list_head",
    "aten::_add_lists",
}


def test_helpers_of_common_gradients_have_formulas() -> None:
    assert DIFFERENTIABLE_HELPERS <= HELPERS
    assert set(all_formulas()) >= DIFFERENTIABLE_HELPERS


def test_every_formula_has_samples() -> None:
    assert set(SAMPLES) == set(all_formulas())


# ---- one-node graphs ------------------------------------------------------------------------


@dataclass
class Call:
    """A one-node graph of an operator and how its operands map to the graph's inputs."""

    graph: Graph
    args: list[Any]  # the graph's arguments
    wrt: list[int]  # graph inputs to differentiate
    slots: list[tuple[int, int | None]]  # per entry of wrt: operand, and item of a tuple operand


def one_node_graph(op: str, operands: Operands, wrt: tuple[int, ...]) -> Call:
    """A graph whose inputs are the arrays among ``operands`` and the operands in ``wrt``, the
    others being prim::Constant so that shape rules see them; it returns the node's result."""
    graph = Graph(op)
    call = Call(graph, [], [], [])

    def add_input(value: Any, slot: tuple[int, int | None], differentiate: bool) -> Value:
        if differentiate:
            call.wrt.append(len(graph.inputs))
            call.slots.append(slot)
        call.args.append(value)
        return graph.add_input(type_of_value(value), f"x{slot[0]}")

    node_inputs: list[Value] = []
    for position, operand in enumerate(operands):
        differentiate = position in wrt
        if isinstance(operand, list):
            # A list is built as user code builds one: appended to an empty list, item by item.
            items = [
                add_input(item, (position, i), differentiate) for i, item in enumerate(operand)
            ]
            lst = graph.insert("prim::ListConstruct", [], (ListType(NOTHING),)).output
            for item in items:
                lst = graph.insert("prim::ListAppend", [lst, item]).output
            node_inputs.append(lst)
        elif isinstance(operand, tuple) and any(isinstance(v, np.ndarray) for v in operand):
            # Only floating items are differentiated: scipy's (c, lower) and (lu, piv) pairs.
            items = [
                add_input(item, (position, i), differentiate and _floating(item))
                for i, item in enumerate(operand)
            ]
            ty: Type = TupleType(tuple(v.ty for v in items))
            node_inputs.append(graph.insert("prim::TupleConstruct", items, (ty,)).output)
        elif isinstance(operand, np.ndarray) or differentiate:
            node_inputs.append(add_input(operand, (position, None), differentiate))
        else:
            node_inputs.append(graph.insert_constant(operand, type_of_value(operand)))
    result = graph.insert(op, node_inputs).output
    propagate_shapes(graph)
    register_parts(graph, result)
    return call


def _floating(value: Any) -> bool:
    return isinstance(value, np.ndarray) and value.dtype.kind in "fc"


def register_parts(graph: Graph, result: Value) -> None:
    """Several arrays (np.split), perhaps nested in tuples: one output, one vjp each."""
    if not isinstance(result.ty, TupleType):
        graph.register_output(result)
        return
    for part in graph.insert("prim::TupleUnpack", [result], result.ty.elems).outputs:
        register_parts(graph, part)


def operand_at(operands: Operands, slot: tuple[int, int | None]) -> Any:
    position, item = slot
    return operands[position] if item is None else operands[position][item]


def with_operand(operands: Operands, slot: tuple[int, int | None], value: Any) -> Operands:
    position, item = slot
    if item is not None:
        items = operands[position]
        value = type(items)([*items[:item], value, *items[item + 1 :]])
    return (*operands[:position], value, *operands[position + 1 :])


def parts(result: Any) -> tuple[Any, ...]:
    """An operator's result as a tuple of arrays: the one, or the several np.split returns
    (tuples nested in it flattened, as a double backward's gradients), or a list's."""
    if not isinstance(result, tuple | list):
        return (result,)
    return tuple(part for item in result for part in parts(item))


def flat(result: Any) -> np.ndarray:
    """Every element of an operator's result (or of its cotangent), in float64 (complex128 for
    complex ones), in one row."""
    return np.concatenate([np.ravel(np.asarray(part, _wide(part))) for part in parts(result)])


def _wide(part: Any) -> type:
    return np.complex128 if np.iscomplexobj(part) else np.float64


def run_kernel(kernel: Any, operands: Operands) -> Any:
    """``kernel(*operands)`` on fresh copies of list operands: a tape's kernel appends to its
    operand in place, and the samples are run many times."""
    return kernel(*(list(o) if isinstance(o, list) else o for o in operands))


def finite_differences(
    kernel: Any, operands: Operands, slot: tuple[int, int | None], cotangent: Any, eps: float
) -> np.ndarray:
    """Central differences of ``sum(kernel(operands) * cotangent)`` w.r.t. each element of the
    operand at ``slot``. The two outputs are subtracted before the projection, so the
    projection's rounding does not swamp the small difference."""
    operand = operand_at(operands, slot)
    base = np.array(operand, dtype=_wide(operand))
    numeric = np.zeros(base.shape, base.dtype)
    # A complex operand moves along its real and its imaginary part: dL/dRe - 1j * dL/dIm.
    directions = (1.0, 1j) if np.iscomplexobj(base) else (1.0,)
    for index in np.ndindex(base.shape):
        for direction in directions:
            results = []
            for step in (eps, -eps):
                moved = base.copy()
                moved[index] += step * direction
                value = moved if base.ndim or np.iscomplexobj(base) else float(moved)
                results.append(flat(run_kernel(kernel, with_operand(operands, slot, value))))
            # A complex cotangent c stands for the real loss Re(sum(c * out)): Note [Complex
            # gradients] in `autodiff.formulas`.
            projected = np.sum((results[0] - results[1]) * flat(cotangent))
            numeric[index] += np.real(projected) / (2 * eps) * np.conj(direction)
    return numeric


def vjp(
    op: str, operands: Operands, wrt: tuple[int, ...], cotangent: Any
) -> tuple[Call, list[Any]]:
    """The gradients of the operands in ``wrt`` (arrays of tuple operands one by one) for
    ``cotangent``, from the compiled f/df pair of a one-node graph; f must reproduce the
    kernel's result exactly."""
    call = one_node_graph(op, operands, wrt)
    compiled = CompiledGradient(differentiate_typed(call.graph, call.wrt).gradient)
    outs, saved = compiled.forward(call.args)
    kernel = OPS[op].kernel
    assert kernel is not None
    expected = parts(run_kernel(kernel, operands))
    actual = parts(tuple(outs))  # a list result is one output
    assert len(actual) == len(expected)
    for out, want in zip(actual, expected, strict=True):
        np.testing.assert_array_equal(out, want)
    # A list the graph returns whole takes one cotangent; np.split's list of pieces, returned
    # one output per piece, one per piece.
    whole = isinstance(cotangent, list) and len(outs) == 1
    vjps = [cotangent] if whole else list(parts(cotangent))
    grads = compiled.backward(saved, vjps)
    assert len(grads) == len(call.slots)
    return call, grads


def _cast_floats(operands: Operands, dtype: type) -> Operands:
    """``operands`` with every floating-point array cast to ``dtype``."""

    def cast(value: Any) -> Any:
        if isinstance(value, tuple | list):
            return type(value)(cast(v) for v in value)
        if isinstance(value, np.ndarray) and value.dtype.kind == "f":
            return value.astype(dtype)
        return value

    return tuple(cast(v) for v in operands)


def _cotangent(rng: np.random.Generator, part: Any) -> Any:
    """A random cotangent of one result: complex for a complex result."""
    cotangent = rng.standard_normal(np.shape(part))
    if np.iscomplexobj(part):
        cotangent = cotangent + 1j * rng.standard_normal(np.shape(part))
    return cotangent.astype(np.result_type(part))


def check_gradients(op: str, operands: Operands, wrt: tuple[int, ...], rtol: float) -> None:
    """The vjp of a one-node graph of ``op``, for a random cotangent, against finite
    differences, element by element; each gradient has its operand's shape and dtype."""
    if op in SCIPY_OPS | STATS_OPS | SIGNAL_OPS | LINALG_OPS:
        pytest.importorskip("scipy")
    kernel = OPS[op].kernel
    assert kernel is not None
    out = run_kernel(kernel, operands)
    rng = np.random.default_rng(1)
    cotangents = [_cotangent(rng, p) for p in parts(out)]
    cotangent = type(out)(cotangents) if isinstance(out, tuple | list) else cotangents[0]
    call, grads = vjp(op, operands, wrt, cotangent)
    wide = _cast_floats(operands, np.float64)
    eps = EPS
    if np.result_type(*parts(run_kernel(kernel, wide))) != np.float64:
        eps, rtol = EPS_ROUNDED, max(rtol, RTOL_ROUNDED)
    for grad, slot in zip(grads, call.slots, strict=True):
        operand = operand_at(operands, slot)
        where = f"{op} operand {slot[0]}" + ("" if slot[1] is None else f" item {slot[1]}")
        assert np.shape(grad) == np.shape(operand), f"{where}: gradient shape"
        # A Python float's gradient is a float or a 0-d array, of the result's precision, and
        # real: the real part where the result is complex (Note [Real operands of complex
        # operators] in `autodiff.differentiate`).
        precision = np.real(np.zeros((), np.result_type(*parts(out)))).dtype
        want = precision if isinstance(operand, float) else np.result_type(operand)
        assert np.result_type(grad) == want, f"{where}: gradient dtype"
        numeric = finite_differences(differentiated_kernel(op), wide, slot, cotangent, eps)
        error = np.abs(np.asarray(grad, _wide(grad)) - numeric) / np.maximum(np.abs(numeric), 1)
        error = np.where(np.isnan(error), np.inf, error)
        if error.size and error.max() > rtol:
            worst = tuple(int(i) for i in np.unravel_index(np.argmax(error), error.shape))
            pytest.fail(
                f"{where}: worst element {worst}: formula {np.asarray(grad)[worst]!r}, "
                f"finite differences {numeric[worst]!r} (relative error {error[worst]:.2e})"
            )


def _params(ops: Iterable[str]) -> list[Any]:
    return [
        pytest.param(
            op,
            sample,
            id=f"{op.removeprefix('aten::')}-{sample.label}",
            marks=[pytest.mark.xfail(strict=True, reason=sample.xfail)] if sample.xfail else [],
        )
        for op in ops
        for sample in SAMPLES[op]
    ]


@pytest.mark.parametrize(("op", "sample"), _params(sorted(SAMPLES)))
def test_formula_matches_finite_differences(op: str, sample: Sample) -> None:
    operands = sample.make(np.random.default_rng(0))
    check_gradients(op, operands, sample.wrt, RTOL)


@pytest.mark.parametrize(("op", "sample"), _params(FLOAT32_OPS))
def test_formula_keeps_float32(op: str, sample: Sample) -> None:
    operands = _cast_floats(sample.make(np.random.default_rng(0)), np.float32)
    check_gradients(op, operands, sample.wrt, RTOL_FLOAT32)


@pytest.mark.parametrize(
    ("op", "operands", "wrt", "expected"),
    [
        pytest.param("aten::abs", (np.array([0.0, 1.0, -2.0]),), (0,), [[0, 1, -1]], id="abs-0"),
        pytest.param(
            "aten::maximum",
            (np.array([1.0, 2.0]), np.array([1.0, 0.0])),
            (0, 1),
            [[0.5, 1], [0.5, 0]],
            id="maximum-tie",
        ),
        pytest.param(
            "aten::max",
            (np.array([3.0, 1.0, 3.0, 3.0]), None, False),
            (0,),
            [[1 / 3, 0, 1 / 3, 1 / 3]],
            id="max-three-way-tie",
        ),
        pytest.param(
            "aten::clip",
            (np.array([-0.5, 0.0, 0.5, 0.7]), -0.5, 0.5),
            (0, 1, 2),
            [[1, 1, 1, 0], 0, 1],
            id="clip-at-bounds",
        ),
        pytest.param("aten::sqrt", (np.array([0.0, 4.0]),), (0,), [[np.inf, 0.25]], id="sqrt-0"),
        pytest.param("aten::fabs", (np.array([0.0, -2.0]),), (0,), [[0, -1]], id="fabs-0"),
        pytest.param(
            "aten::hypot",
            (np.array([0.0, 3.0]), np.array([0.0, 4.0])),
            (0, 1),
            [[0, 0.6], [0, 0.8]],
            id="hypot-origin",
        ),
        pytest.param("aten::sinc", (np.array([0.0, 1.0]),), (0,), [[0, -1]], id="sinc-0"),
        pytest.param(
            "aten::pow", (np.array([0.0, -0.0, 2.0]), 0.0), (0,), [[0, 0, 0]], id="pow-0.0-at-0"
        ),
        pytest.param("aten::pow", (np.array([0.0, 2.0]), 0), (0,), [[0, 0]], id="pow-int-0-at-0"),
        pytest.param(
            "aten::pow",
            (np.array([0.0, 2.0]), np.zeros((2, 2))),
            (0, 1),
            [[0, 0], [[0, np.log(2.0)], [0, np.log(2.0)]]],
            id="pow-broadcast-zeros-at-0",
        ),
        pytest.param(
            "aten::std", (np.full(3, 0.5), None, False, 0), (0,), [[0, 0, 0]], id="std-equal"
        ),
        pytest.param(
            "aten::std",
            (np.array([[1.0, 1.0], [1.0, 3.0]]), 1, True, 1),
            (0,),
            [[[0, 0], [-1 / np.sqrt(2.0), 1 / np.sqrt(2.0)]]],
            id="std-equal-row-ddof=1",
        ),
        pytest.param(
            "aten::fmax",
            (np.array([np.nan, 1.0, 2.0]), np.array([1.0, np.nan, 2.0])),
            (0, 1),
            [[0, 1, 0.5], [1, 0, 0.5]],
            id="fmax-nan-and-tie",
        ),
    ],
)
def test_conventions_at_non_smooth_points(
    op: str, operands: Operands, wrt: tuple[int, ...], expected: list[Any]
) -> None:
    """The gradients `autodiff.formulas` promises where finite differences cannot decide."""
    kernel = OPS[op].kernel
    assert kernel is not None
    cotangent = np.ones(np.shape(run_kernel(kernel, operands)))
    with np.errstate(divide="ignore"):
        _, grads = vjp(op, operands, wrt, cotangent)
    for grad, want in zip(grads, expected, strict=True):
        np.testing.assert_allclose(grad, want, rtol=1e-15)
