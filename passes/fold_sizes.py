"""Fold sizes at compile time: shape queries become constants, and a gradient's sum back to a
shape it already has disappears (TorchScript's foldSizeIfNotEqual, done on every shape query).

With shapes known at specialisation, ``aten::_size_if_not_equal`` is either None or a constant
shape, so no size is computed in ``f`` nor captured for ``df``.
"""

from __future__ import annotations

from typing import Any

from ir.graph import Graph, Node
from ir.ops import NOT_CONSTANT, OPS
from ir.types import TensorType, Type, type_of_value
from passes.registry import register_pass

# Operators that are the identity when their shape operand equals their input's shape.
_IDENTITY_AT_OWN_SHAPE = {"aten::sum_to_size", "aten::broadcast_to", "aten::reshape"}


@register_pass("fold-sizes")
def fold_sizes(graph: Graph) -> bool:
    """Replace type-determined values by constants and drop no-op resizes.

    Given:   %s : Any = aten::_size_if_not_equal(%x, %y)     (x, y : Double(3, 4))
             %g : Double(3, 4) = aten::sum_to_size(%d, %s)
    Execute: fold_sizes(graph)
    Result:  %s : NoneType = prim::Constant[value=None]()
             (uses of %g read %d)
    """
    changed = False
    for node in list(graph.all_nodes()):
        if node.owning_block is None:  # destroyed with an enclosing block
            continue
        op = OPS.get(node.kind)
        if op is None or not op.pure:
            continue
        if op.value_from_types is not None:
            value = op.value_from_types([v.ty for v in node.inputs])
            if value is not NOT_CONSTANT:
                _replace_with_constant(graph, node, value)
                changed = True
                continue
        if node.kind in _IDENTITY_AT_OWN_SHAPE and _is_own_shape(node):
            source = node.inputs[0]
            if source.ty == node.output.ty or isinstance(source.ty, TensorType):
                node.output.replace_all_uses_with(source)
                node.destroy()
                changed = True
    return changed


def _replace_with_constant(graph: Graph, node: Node, value: Any) -> None:
    ty: Type = type_of_value(value)
    with graph.inserting_before(node):
        constant = graph.insert_constant(value, ty, node.source_range)
    constant.name_hint = node.output.name_hint
    node.output.replace_all_uses_with(constant)
    node.destroy()


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
