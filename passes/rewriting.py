"""Small helpers the peephole passes of the reverse program share: what is known about a value at
compile time, and inserting a node whose output type its operator's shape rule gives (through
the `Rewriter` of Note [Pattern rewrite driver]).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ir.analysis import constant_value, is_constant
from ir.errors import ShapeError
from ir.graph import Node, Value
from ir.ops import NOT_CONSTANT, OPS
from ir.ops.scalar import evaluate_bounded
from ir.types import BOOL, FLOAT, INT, TensorType, Type
from passes.pattern_rewriter import Rewriter

# Python numbers: a kernel sees them as shape () operands that NumPy never promotes a result to.
PYTHON_SCALARS: tuple[Type, ...] = (INT, FLOAT, BOOL)


def known_shape(ty: Type) -> tuple[int, ...] | None:
    """The shape of a value as an operand of an elementwise kernel: an array's when every dim
    is known, () for a Python number, None when not known."""
    if ty in PYTHON_SCALARS:
        return ()
    if isinstance(ty, TensorType) and ty.shape is not None and None not in ty.shape:
        return tuple(int(d) for d in ty.shape if d is not None)
    return None


def static_value(value: Value, depth: int = 3) -> Any:
    """The value of ``value`` when compile-time constants fix it (a constant, or a pure kernel of
    such values up to ``depth`` deep, as ``aten::sub(2, 1)`` that constant propagation leaves
    because its result is a NumPy scalar), else ``NOT_CONSTANT``."""
    if is_constant(value):
        return constant_value(value)
    node = value.node
    op = OPS.get(node.kind)
    if depth == 0 or op is None or not op.pure or op.fresh or op.kernel is None or node.blocks:
        return NOT_CONSTANT
    if len(node.outputs) != 1:
        return NOT_CONSTANT
    operands = [static_value(v, depth - 1) for v in node.inputs]
    if any(operand is NOT_CONSTANT for operand in operands):
        return NOT_CONSTANT
    try:
        return evaluate_bounded(node.kind, op.kernel, operands)
    except (ArithmeticError, ValueError, TypeError):
        return NOT_CONSTANT


def output_types(kind: str, inputs: Sequence[Value]) -> list[Type]:
    """The output types the shape rule of ``kind`` gives for ``inputs``."""
    rule = OPS[kind].shape
    assert rule is not None, kind
    consts = [constant_value(v) if is_constant(v) else NOT_CONSTANT for v in inputs]
    return list(rule([v.ty for v in inputs], consts))


def located_output_types(kind: str, inputs: Sequence[Value], like: Node) -> list[Type]:
    """`output_types`, with a shape rule's error located at ``like`` (a graph whose types the
    input text got wrong fails here)."""
    try:
        return output_types(kind, inputs)
    except ShapeError as error:
        if error.source_range is not None:
            raise
        raise ShapeError(error.message, like.source_range) from None


def insert_typed(
    rewriter: Rewriter[object], kind: str, inputs: Sequence[Value], like: Node
) -> Value:
    """Insert ``kind(*inputs)`` at the insertion point, typed by its shape rule, with the
    source range of ``like`` (the node whose work it takes over)."""
    types = located_output_types(kind, inputs, like)
    return rewriter.insert(kind, inputs, types, like.source_range).output


def retype(node: Node) -> None:
    """Give ``node``'s outputs the types its shape rule gives for its current inputs."""
    for out, ty in zip(
        node.outputs, located_output_types(node.kind, node.inputs, node), strict=True
    ):
        out.ty = ty
