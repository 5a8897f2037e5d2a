"""Every operator of the registry on complex operands, at first and second order, in complex128
and complex64 (Note [Complex gradients] in `autodiff.formulas`).

`tests/unit/test_complex_gradients.py` sorts the operators with a formula into those that take
complex operands and `REAL_ONLY`, and checks the first derivative of each sample with its
operands made complex. This audit goes further, over the same samples:

- each operator listed as refused by NumPy is refused by NumPy (its kernel raises on complex
  operands), and every other kernel runs on them;
- the operators that order their operands (``maximum``, ``max``, ``sort``, ``clip``...) take
  complex ones as NumPy does (lexicographic order) and pass the gradient to what they select,
  checked on the samples without ties (a tie in the real parts is a jump of the result);
- second derivatives: the vjp of each operator's gradient graph (`autodiff.higher_order`) for
  a real loss ``Re(sum(c * op(z)))`` against central differences of that gradient along the
  real and imaginary parts;
- complex64 operands keep complex64 results and gradients.

The operators without a formula are not differentiated (comparisons, ``round``, ``argmax``:
their derivative is zero or refused, complex or not), so there is nothing complex about them
to check beyond what the real tests do.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from autodiff.higher_order import gradient_graph
from autodiff.pipeline import differentiate_typed
from autodiff.runtime import CompiledGradient
from ir.ops import OPS
from ir.ops.scipy_signal import SIGNAL_OPS
from ir.ops.scipy_special import SCIPY_OPS, scipy_installed
from ir.ops.scipy_stats import STATS_OPS
from ir.types import BOOL, NONE, ListType, TensorType
from tests.formula_samples import Operands, Sample
from tests.unit.test_complex_gradients import (
    COMPLEX_CAPABLE,
    REAL_ONLY,
    SAMPLES,
    _complex_operands,
)
from tests.unit.test_formulas import (
    _cotangent,
    _wide,
    check_gradients,
    one_node_graph,
    operand_at,
    parts,
    run_kernel,
    vjp,
    with_operand,
)

NUMPY_REFUSES = sorted(op for op, why in REAL_ONLY.items() if why.startswith("NumPy refuses"))
ORDERED = sorted(op for op, why in REAL_ONLY.items() if why.startswith("orders its operands"))
EPS = 1e-6
RTOL = 1e-5
RTOL_COMPLEX64 = 2e-3


def _samples(ops: list[str], *, ordered: bool = False) -> list[Any]:
    params = []
    for op in ops:
        for sample in SAMPLES[op]:
            if sample.xfail:
                continue
            # A tie of real parts is a jump of a lexicographic order: no derivative there.
            if ordered and ("tie" in sample.label or "at-zero" in sample.label):
                continue
            if not _differentiates_complex(_complex_operands(sample, False), sample.wrt):
                continue
            # scipy.signal's operators take complex values; their kernels need SciPy.
            needs_scipy = pytest.mark.skipif(
                op in SIGNAL_OPS and not scipy_installed(), reason="needs SciPy"
            )
            label = f"{op.removeprefix('aten::')}-{sample.label}"
            params.append(pytest.param(op, sample, id=label, marks=[needs_scipy]))
    return params


def _differentiates_complex(operands: Operands, wrt: tuple[int, ...]) -> bool:
    def complex_in(value: Any) -> bool:
        if isinstance(value, tuple | list):
            return any(complex_in(v) for v in value)
        return isinstance(value, np.ndarray) and value.dtype.kind == "c"

    return any(complex_in(operands[position]) for position in wrt)


# ---- the classification is NumPy's -------------------------------------------------------------


@pytest.mark.parametrize("op", NUMPY_REFUSES)
def test_numpy_refuses_the_operators_listed_as_refusing(op: str) -> None:
    kernel = OPS[op].kernel
    assert kernel is not None
    refused = 0
    for sample in SAMPLES[op]:
        operands = _complex_operands(sample, first_only=False)
        if not _differentiates_complex(operands, sample.wrt):
            continue
        with pytest.raises(TypeError):
            run_kernel(kernel, operands)
        refused += 1
    assert refused, f"{op}: no sample with complex operands"


@pytest.mark.parametrize(("op", "sample"), _samples(COMPLEX_CAPABLE))
def test_every_other_kernel_runs_on_complex_operands(op: str, sample: Sample) -> None:
    kernel = OPS[op].kernel
    assert kernel is not None
    run_kernel(kernel, _complex_operands(sample, first_only=False))


# ---- operators that order their operands ----------------------------------------------------


@pytest.mark.parametrize(("op", "sample"), _samples(ORDERED, ordered=True))
def test_ordering_operators_pass_the_gradient_to_what_they_select(op: str, sample: Sample) -> None:
    check_gradients(op, _complex_operands(sample, first_only=False), sample.wrt, RTOL)


# ---- second order ------------------------------------------------------------------------------


def _loss_graph(op: str, operands: Operands, wrt: tuple[int, ...], cotangents: list[Any]) -> Any:
    """The one-node graph of ``op`` made a real loss ``Re(sum_i sum(c_i * part_i))``."""
    call = one_node_graph(op, operands, wrt)
    graph = call.graph
    results = list(graph.outputs)
    while graph.outputs:
        graph.block.erase_output(0)
    loss = None
    for part, cotangent in zip(results, cotangents, strict=True):
        c = graph.insert_constant(np.asarray(cotangent), TensorType.of(cotangent))
        product = graph.insert("aten::mul", [part, c]).output
        none = graph.insert_constant(None, NONE)
        keep = graph.insert_constant(False, BOOL)
        total = graph.insert("aten::sum", [product, none, keep]).output
        real = graph.insert("aten::real", [total]).output
        loss = real if loss is None else graph.insert("aten::add", [loss, real]).output
    assert loss is not None
    graph.register_output(loss)
    return call


class FirstOrder:
    """The gradient of ``Re(sum(c * op(operands)))`` w.r.t. the operands at ``wrt``, compiled
    as a graph (`gradient_graph`) and differentiated once more."""

    def __init__(self, op: str, operands: Operands, wrt: tuple[int, ...]) -> None:
        if op in SCIPY_OPS or op in STATS_OPS:
            pytest.importorskip("scipy")
        kernel = OPS[op].kernel
        assert kernel is not None
        rng = np.random.default_rng(1)
        cotangents = [_cotangent(rng, p) for p in parts(run_kernel(kernel, operands))]
        self.call = _loss_graph(op, operands, wrt, cotangents)
        types = [inp.ty for inp in self.call.graph.inputs]
        self.graph = gradient_graph(self.call.graph, types, self.call.wrt, several=True)
        self.compiled = CompiledGradient(differentiate_typed(self.graph, self.call.wrt).gradient)

    def gradients(self, operands: Operands) -> list[Any]:
        args = list(self.call.args)
        for position, slot in zip(self.call.wrt, self.call.slots, strict=True):
            args[position] = operand_at(operands, slot)
        outputs, _ = self.compiled.forward(args)
        return list(parts(tuple(outputs)))

    def second(self, directions: list[Any]) -> list[Any]:
        outputs, saved = self.compiled.forward(list(self.call.args))
        assert len(outputs) == len(directions)
        return list(self.compiled.backward(saved, directions))


# Not checked here, for reasons that have nothing to do with complex numbers.
_THIRD_ORDER = "its derivative is a third-order helper, refused for real operands too"
_LIST_RESULT = "its result is a list, which the loss of this check does not multiply"
SECOND_ORDER_LEFT_OUT: dict[str, str] = {
    "aten::_einsum_double_backward": _THIRD_ORDER,
    "aten::_prod_backward": _THIRD_ORDER,
    "aten::_tap_hooked": "a tap's hooks run Python, which has no derivative (Note [Taps])",
    "aten::_list_index_backward": _LIST_RESULT,
    "prim::ListAppend": _LIST_RESULT,
    "prim::TapePush": _LIST_RESULT,
}
# Refused at second order for complex operands, with a located error: SciPy has no complex
# polygamma, the derivative of digamma (tests/unit/test_scipy_complex.py checks the error).
COMPLEX_SECOND_ORDER_REFUSED: dict[str, str] = {
    "aten::special_gamma": "its derivative calls digamma, whose own SciPy refuses for complex",
}


def _second_order_params() -> list[Any]:
    left_out = {**SECOND_ORDER_LEFT_OUT, **COMPLEX_SECOND_ORDER_REFUSED}
    ops = [op for op in COMPLEX_CAPABLE if op not in left_out]
    return _samples(ops) + _samples(ORDERED, ordered=True)


def _first_order_params() -> list[Any]:
    return _samples(COMPLEX_CAPABLE) + _samples(ORDERED, ordered=True)


@pytest.mark.parametrize(("op", "sample"), _second_order_params())
def test_second_order_with_complex_operands(op: str, sample: Sample) -> None:
    """The vjp of the gradient for a direction ``v`` is the gradient of the real loss
    ``Re(sum(v * grad))``: against central differences of ``grad`` along the real and the
    imaginary parts of each complex operand."""
    operands = _complex_operands(sample, first_only=False)
    first = FirstOrder(op, operands, sample.wrt)
    base = first.gradients(operands)
    rng = np.random.default_rng(2)
    directions = [_cotangent(rng, np.asarray(g)) for g in base]
    second = first.second(directions)
    for grad, slot in zip(second, first.call.slots, strict=True):
        operand = operand_at(operands, slot)
        where = f"{op} operand {slot[0]}" + ("" if slot[1] is None else f" item {slot[1]}")
        assert np.shape(grad) == np.shape(operand), f"{where}: second-order gradient shape"
        assert np.result_type(grad) == np.result_type(operand), f"{where}: dtype"
        numeric = _numeric_second(first, operands, slot, directions)
        error = np.abs(np.asarray(grad, _wide(grad)) - numeric) / np.maximum(np.abs(numeric), 1)
        assert error.max(initial=0.0) < RTOL, (
            f"{where}: second order {np.asarray(grad)!r}, central differences {numeric!r}"
        )


def _numeric_second(
    first: FirstOrder, operands: Operands, slot: tuple[int, int | None], directions: list[Any]
) -> np.ndarray:
    operand = operand_at(operands, slot)
    base = np.array(operand, dtype=_wide(operand))
    numeric = np.zeros(base.shape, base.dtype)
    steps = (1.0, 1j) if np.iscomplexobj(base) else (1.0,)
    for index in np.ndindex(base.shape):
        for step in steps:
            values = []
            for sign in (1.0, -1.0):
                moved = base.copy()
                moved[index] += sign * EPS * step
                value = moved if base.ndim or np.iscomplexobj(base) else float(moved)
                grads = first.gradients(with_operand(operands, slot, value))
                values.append(
                    sum(
                        np.real(np.sum(np.asarray(g) * d))
                        for g, d in zip(grads, directions, strict=True)
                    )
                )
            numeric[index] += (values[0] - values[1]) / (2 * EPS) * np.conj(step)
    return numeric


# ---- complex64 stays complex64 ----------------------------------------------------------------


def _cast(values: Any, casts: dict[Any, Any]) -> Any:
    """``values`` (nested in tuples and lists) with each array of a dtype in ``casts`` cast."""
    if isinstance(values, tuple | list):
        return type(values)(_cast(v, casts) for v in values)
    if isinstance(values, np.ndarray) and values.dtype in casts:
        return values.astype(casts[values.dtype])
    return values


def _single(operands: Operands) -> Operands:
    return _cast(
        operands, {np.dtype(np.complex128): np.complex64, np.dtype(np.float64): np.float32}
    )


# A Python number among the operands is typed float64 here, where NumPy 2 lets the arrays'
# precision win (np.select's default): the result is wider than NumPy's, the gradients are not.
WIDENED_BY_A_NUMBER = {"aten::select_by_conditions"}


@pytest.mark.parametrize(("op", "sample"), _first_order_params())
def test_complex64_keeps_complex64(op: str, sample: Sample) -> None:
    operands = _single(_complex_operands(sample, first_only=False))
    kernel = OPS[op].kernel
    assert kernel is not None
    out = run_kernel(kernel, operands)
    rng = np.random.default_rng(1)
    cotangents = [_cotangent(rng, p) for p in parts(out)]
    cotangent = type(out)(cotangents) if isinstance(out, tuple | list) else cotangents[0]
    # The types the compiler gives the results are the dtypes NumPy computes.
    typed = [value.ty for value in one_node_graph(op, operands, sample.wrt).graph.outputs]
    if len(typed) == 1 and isinstance(out, list):  # a list result is one output
        typed = typed * len(out)
    for ty, part in zip(typed, parts(out), strict=True):
        if isinstance(ty, ListType):
            ty = ty.elem
        if isinstance(ty, TensorType) and ty.dtype is not None and op not in WIDENED_BY_A_NUMBER:
            assert ty.dtype == np.result_type(part).name, f"{op}: result type {ty}"
    call, grads = vjp(op, operands, sample.wrt, cotangent)
    # The same gradients in double precision, for the same (widened) cotangent.
    wide = _double(operands)
    wide_cotangent = _double(cotangent if isinstance(cotangent, tuple | list) else (cotangent,))
    _, wide_grads = vjp(
        op,
        wide,
        sample.wrt,
        wide_cotangent if isinstance(cotangent, tuple | list) else wide_cotangent[0],
    )
    for grad, want, slot in zip(grads, wide_grads, call.slots, strict=True):
        operand = operand_at(operands, slot)
        where = f"{op} operand {slot}"
        if isinstance(operand, np.ndarray):
            assert np.result_type(grad) == operand.dtype, f"{where}: gradient dtype"
        error = np.abs(np.asarray(grad, _wide(grad)) - want) / np.maximum(np.abs(want), 1)
        assert error.max(initial=0.0) < RTOL_COMPLEX64, f"{where}: {grad!r} vs {want!r}"


def _double(values: Any) -> Any:
    return _cast(values, {np.dtype(np.complex64): np.complex128, np.dtype(np.float32): np.float64})
