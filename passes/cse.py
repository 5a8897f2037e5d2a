"""Common subexpression elimination: a pure node equal to an earlier one reuses its outputs.

Two nodes are equal when they have the same kind, read the same values in the same order, have
structurally equal attributes (a float NaN equals a NaN, 0.0 differs from -0.0, 1 from 1.0 and
True, arrays compare by dtype, shape and bytes) and have outputs of the same types. Constants
are nodes like any other, so equal prim::Constant nodes merge.

Scoping follows the blocks: a node inside a nested block may reuse an equal node of an enclosing
block that comes before it, but never one of a sibling block (it does not dominate). Nodes with
blocks are never merged, and neither are impure nodes or unknown operators.
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from typing import Any

import numpy as np

from ir.graph import Block, Graph, Node
from ir.ops import OPS
from passes.registry import register_pass


@register_pass("cse")
def eliminate_common_subexpressions(graph: Graph) -> bool:
    """Replace each pure node equal to an earlier dominating one by that node's outputs.

    Given:   %a = aten::mul(%x, %x)
             %b = aten::mul(%x, %x)
             %c = aten::add(%a, %b)
    Execute: eliminate_common_subexpressions(graph)
    Result:  %a = aten::mul(%x, %x)
             %c = aten::add(%a, %a)
    """
    return _visit(graph.block, {})


def _visit(block: Block, scope: dict[Hashable, Node]) -> bool:
    """CSE over ``block``, whose enclosing blocks' nodes before it are in ``scope``. One dict
    serves every depth: the keys a block adds are taken out when it ends, and a block never adds
    a key that is already there (its node is merged instead), so nothing is shadowed. Each node
    costs one lookup, not one per enclosing block."""
    changed = False
    added: list[Hashable] = []
    for node in block.nodes():
        if node.blocks:
            for inner in node.blocks:
                changed |= _visit(inner, scope)
            continue
        op = OPS.get(node.kind)
        if op is None or not op.pure or op.fresh:
            continue
        key = node_key(node)
        if key is None:
            continue
        existing = scope.get(key)
        if existing is None:
            scope[key] = node
            added.append(key)
            continue
        for old, new in zip(node.outputs, existing.outputs, strict=True):
            old.replace_all_uses_with(new)
        node.destroy()
        changed = True
    for key in added:
        del scope[key]
    return changed


def node_key(node: Node) -> Hashable | None:
    """What makes two block-free nodes interchangeable; None when an attribute cannot be keyed."""
    attrs = []
    for name in sorted(node.attrs):
        key = attr_key(node.attrs[name])
        if key is None:
            return None
        attrs.append((name, key))
    return (
        node.kind,
        tuple(node.inputs),
        tuple(attrs),
        tuple(out.ty for out in node.outputs),
    )


def attr_key(value: Any) -> Hashable | None:
    """A hashable stand-in for an attribute value that is equal exactly when the values are the
    same constant (so the key tells int, bool and float apart, and matches NaN with NaN)."""
    if value is None or isinstance(value, bool | int | str):
        return (type(value).__name__, value)
    if isinstance(value, float):
        if math.isnan(value):
            return ("float", "nan")
        return ("float", value, math.copysign(1.0, value))
    if isinstance(value, list | tuple):
        items = [attr_key(item) for item in value]
        if any(item is None for item in items):
            return None
        return (type(value).__name__, tuple(items))
    if isinstance(value, np.ndarray | np.generic):
        array = np.ascontiguousarray(value)
        if array.dtype.hasobject:
            return None
        return (
            "array",
            array.dtype.str,
            array.shape,
            isinstance(value, np.generic),
            array.tobytes(),
        )
    return None
