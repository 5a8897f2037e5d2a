"""Fold sizes at compile time: shape queries become constants, and a gradient's sum back to a
shape it already has disappears (TorchScript's foldSizeIfNotEqual, done on every shape query).

With shapes known at specialisation, ``aten::_size_if_not_equal`` is either None or a constant
shape, so no size is computed in ``f`` nor captured for ``df``. A cast of a gradient to the
dtype it already has (``aten::_grad_like``) goes as well.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ir.graph import Graph, Node
from ir.ops import NOT_CONSTANT, OPS
from ir.types import TensorType, Type, type_of_value
from passes.pattern_rewriter import PatternTable, Rewriter
from passes.registry import register_pass

# See Note [Pattern rewrite driver] for how the table is applied.
PATTERNS = PatternTable[None]("fold-sizes")
Folder = Rewriter[None]


@register_pass("fold-sizes")
def fold_sizes(graph: Graph) -> bool:
    """Replace type-determined values by constants and drop no-op resizes.

    Given:   %s : Any = aten::_size_if_not_equal(%x, %y)     (x, y : Double(3, 4))
             %g : Double(3, 4) = aten::sum_to_size(%d, %s)
    Execute: fold_sizes(graph)
    Result:  %s : NoneType = prim::Constant[value=None]()
             (uses of %g read %d)
    """
    return PATTERNS.rewrite(graph, None)


def fold_type_determined(rewriter: Folder, node: Node) -> bool:
    """An operator whose value its operands' types determine (a shape query) is a constant."""
    value_from_types = OPS[node.kind].value_from_types
    assert value_from_types is not None
    value = value_from_types([v.ty for v in node.inputs])
    if value is NOT_CONSTANT:
        return False
    _replace_with_constant(rewriter, node, value)
    return True


# Operators that are the identity when their shape operand equals their input's shape.
_IDENTITY_AT_OWN_SHAPE = ("aten::sum_to_size", "aten::broadcast_to", "aten::reshape")


def drop_identity(rewriter: Folder, node: Node) -> bool:
    """A resize to the shape its input has already is its input."""
    if not _is_own_shape(node):
        return False
    source = node.inputs[0]
    if source.ty != node.output.ty and not isinstance(source.ty, TensorType):
        return False
    rewriter.replace(node, [source])
    return True


@PATTERNS.register("aten::_grad_like")
def drop_same_dtype_grad_like(rewriter: Folder, node: Node) -> bool:
    """``_grad_like(g, like)`` (a gradient in ``like``'s dtype, its real part for a real
    ``like``) is ``g`` when both have one known floating or complex dtype: differentiation
    inserts it wherever a dtype is not known yet (Note [Real operands of complex operators]),
    and specialisation may make it a no-op."""
    grad, like = node.inputs
    if not (isinstance(grad.ty, TensorType) and isinstance(like.ty, TensorType)):
        return False
    dtype = grad.ty.dtype
    if dtype is None or dtype != like.ty.dtype or np.dtype(dtype).kind not in "fc":
        return False
    rewriter.replace(node, [grad])
    return True


for _kind, _op in OPS.items():
    if _op.pure and _op.value_from_types is not None:
        PATTERNS.register(_kind)(fold_type_determined)
for _kind in _IDENTITY_AT_OWN_SHAPE:
    if OPS[_kind].pure:
        PATTERNS.register(_kind)(drop_identity)


def _replace_with_constant(rewriter: Folder, node: Node, value: Any) -> None:
    ty: Type = type_of_value(value)
    with rewriter.inserting_before(node):
        constant = rewriter.insert_constant(value, ty, node.source_range)
    rewriter.replace(node, [constant], take_names=True)


def _is_own_shape(node: Node) -> bool:
    shape_value = node.inputs[1]
    if shape_value.node.kind != "prim::Constant":
        return False
    target = shape_value.node.attrs.get("value")
    if target is None:
        return node.kind == "aten::sum_to_size"
    source = node.inputs[0].ty
    if not isinstance(source, TensorType) or source.shape is None or None in source.shape:
        return False
    wanted = tuple(target) if isinstance(target, tuple | list) else (target,)
    return wanted == source.shape
