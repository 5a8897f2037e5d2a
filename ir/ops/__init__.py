"""The operator table: every operator's schema, purity, shape rule, NumPy kernel and spellings.

Importing this package registers every operator; the modules below are its flat list.
"""

from __future__ import annotations

from ir.ops import (
    arrangement,
    creation,
    elementwise,
    fourier,
    gradients,
    indexing,
    inplace,
    linalg,
    linalg_decompositions,
    prim,
    products,
    reductions,
    scalar,
    scans,
    scatter,
    selection,
    shape_ops,
    sorting,
    tapes,
    taps,
)
from ir.ops.prim import AUTOGRAD_ZERO
from ir.ops.registry import (
    NO_DEFAULT,
    NOT_CONSTANT,
    OPS,
    Argument,
    Derivative,
    OpDef,
    Schema,
    lookup_op,
    parse_schema,
    register_op,
    register_structural,
)

__all__ = [
    "AUTOGRAD_ZERO",
    "NOT_CONSTANT",
    "NO_DEFAULT",
    "OPS",
    "Argument",
    "Derivative",
    "OpDef",
    "Schema",
    "arrangement",
    "creation",
    "elementwise",
    "fourier",
    "gradients",
    "indexing",
    "inplace",
    "linalg",
    "linalg_decompositions",
    "lookup_op",
    "parse_schema",
    "prim",
    "products",
    "reductions",
    "register_op",
    "register_structural",
    "scalar",
    "scans",
    "scatter",
    "selection",
    "shape_ops",
    "sorting",
    "tapes",
    "taps",
]
