"""Operators that only derivative formulas use: the adjoints of reductions, indexing and
products, each a NumPy kernel as direct as the forward operator's. One module per family of
`ir.ops`, named like it (``aten::_matmul_backward_self`` is in `ir.ops.gradients.linalg`, as
``aten::matmul`` is in `ir.ops.linalg`); their own formulas are in `autodiff.formulas.gradients`.

Each takes the incoming gradient first and, where it must rebuild an input's shape, that shape
as an operand (a compile-time constant after `fold-sizes`), so formulas never capture an input
just to learn its shape.

Importing this package registers every one of them; the modules below are its flat list.
"""

from __future__ import annotations

from ir.ops.gradients import (
    arrangement,
    common,
    indexing,
    linalg,
    linalg_decompositions,
    prim,
    reductions,
    scans,
    scatter,
    selection,
    shape_ops,
)

__all__ = [
    "arrangement",
    "common",
    "indexing",
    "linalg",
    "linalg_decompositions",
    "prim",
    "reductions",
    "scans",
    "scatter",
    "selection",
    "shape_ops",
]
