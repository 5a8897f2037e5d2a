"""Second derivatives through the scatters of Note [Scatters] (`ir.ops.scatter`): the gradient
graph of a loss that writes, differentiated once more, against central differences of that
gradient graph. The scatters have no spelling of their own (functionalisation produces them from
``x[...] = v``), so each loss is IR text."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from autodiff.higher_order import gradient_graph
from ir.graph import Graph
from ir.interpreter import run_graph
from ir.parser import parse_graph
from ir.types import BOOL, NONE, TENSOR, type_of_value

EPS = 1e-6
RTOL = 1e-6


def _loss(write: str, *operands: str) -> str:
    """``sum(sin(write(x * x, v * v, operands...)))``: smooth and not quadratic, so the second
    derivative reads the first gradient's every part."""
    inputs = ", ".join(f"%{name} : {ty}" for name, ty in (o.split(":") for o in operands))
    uses = "".join(f", %{o.split(':')[0]}" for o in operands)
    return f"""graph(%x : Tensor, %v : Tensor{", " + inputs if inputs else ""}):
  %squared : Tensor = aten::mul(%x, %x)
  %written : Tensor = aten::mul(%v, %v)
  %out : Tensor = {write}(%squared, %written{uses})
  %sin : Tensor = aten::sin(%out)
  %none : NoneType = prim::Constant()
  %false : bool = prim::Constant[value=0]()
  %loss : Tensor = aten::sum(%sin, %none, %false)
  return (%loss)
"""


REPEATED = np.array([0, 2, 2, 4, 2])
# (write, its operands after self and the value, x, v)
CASES: list[tuple[str, tuple[Any, ...], tuple[int, ...], tuple[int, ...]]] = [
    ("aten::_written", (), (3, 4), (4,)),
    ("aten::select_scatter", (1, -1), (3, 4), (3,)),
    ("aten::slice_scatter", (0, 1, None, 2), (5, 4), (2, 4)),
    ("aten::index_put", (REPEATED,), (5, 4), (5, 4)),
    ("aten::index_put", (None, np.array([3, 1, 3])), (5, 4), (3,)),
    ("aten::add_at", (REPEATED,), (5, 4), (5, 1)),
]


def _with_operands(write: str, operands: tuple[Any, ...]) -> str:
    """The loss's text, its extra operands as inputs typed by their values."""
    names = [f"o{i}:{type_of_value(o)}" for i, o in enumerate(operands)]
    return _loss(write, *names)


def _projected_gradient(graph: Graph, arguments: list[Any]) -> Graph:
    """``sum(grad_x(loss) * u) + sum(grad_v(loss) * w)`` for new last inputs ``u`` and ``w``:
    a scalar whose gradient is the Hessian applied to the direction ``(u, w)``."""
    types = [type_of_value(a) for a in arguments]
    gradient = gradient_graph(graph, types, [0, 1], several=True)
    (grads,) = gradient.outputs
    gradient.block.erase_output(0)
    directions = [gradient.add_input(TENSOR, "u"), gradient.add_input(TENSOR, "w")]
    with gradient.inserting_at_end(gradient.block):
        parts = gradient.insert("prim::TupleUnpack", [grads], (TENSOR, TENSOR)).outputs
        none = gradient.insert_constant(None, NONE)
        false = gradient.insert_constant(False, BOOL)
        sums = []
        for part, direction in zip(parts, directions, strict=True):
            product = gradient.insert("aten::mul", [part, direction]).output
            sums.append(gradient.insert("aten::sum", [product, none, false]).output)
        total = gradient.insert("aten::add", sums).output
    gradient.register_output(total)
    return gradient


@pytest.mark.parametrize(
    ("write", "operands", "x_shape", "v_shape"),
    CASES,
    ids=[f"{case[0].removeprefix('aten::')}-{i}" for i, case in enumerate(CASES)],
)
def test_second_derivative_matches_finite_differences(
    write: str, operands: tuple[Any, ...], x_shape: tuple[int, ...], v_shape: tuple[int, ...]
) -> None:
    rng = np.random.default_rng(0)
    x, v = rng.standard_normal(x_shape), rng.standard_normal(v_shape)
    directions = [rng.standard_normal(x_shape), rng.standard_normal(v_shape)]
    arguments = [x, v, *operands]
    projected = _projected_gradient(parse_graph(_with_operands(write, operands)), arguments)
    types = [type_of_value(a) for a in [*arguments, *directions]]
    second = gradient_graph(projected, types, [0, 1], several=True)
    (analytic,) = run_graph(second, *arguments, *directions)
    for position, grad in enumerate(analytic):
        base = arguments[position]
        numeric = np.zeros(base.shape)
        for index in np.ndindex(base.shape):
            values = []
            for step in (EPS, -EPS):
                moved = base.copy()
                moved[index] += step
                shifted = [moved if k == position else a for k, a in enumerate(arguments)]
                values.append(run_graph(projected, *shifted, *directions)[0])
            numeric[index] = (values[0] - values[1]) / (2 * EPS)
        error = np.abs(grad - numeric) / np.maximum(np.abs(numeric), 1)
        assert error.max() < RTOL, f"{write} operand {position}: relative error {error.max():.2e}"
