"""Which values need gradients: forward reachability from the differentiated inputs.

An over-approximation, as in TorchScript: a value requires grad when an operator whose results
carry a gradient (its record's ``derivative``, Note [Derivatives] in `ir.ops.registry`) computes
it from a value that does and its type can hold a gradient. Differentiation emits
GradOf blocks for these; dead-code elimination later drops gradients nobody reads.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from ir.graph import Block, Graph, Node, Value
from ir.ops import OPS
from ir.types import ANY, FLOAT, ListType, OptionalType, TensorType, TupleType, Type
from passes.registry import register_pass


def can_hold_gradient(ty: Type) -> bool:
    """Floating tensors (or tensors of unknown dtype), Python floats, and containers of them."""
    if isinstance(ty, TensorType):
        return ty.dtype is None or np.dtype(ty.dtype).kind in "fc"
    if ty == FLOAT:
        return True
    if isinstance(ty, TupleType):
        return any(can_hold_gradient(e) for e in ty.elems)
    if isinstance(ty, ListType | OptionalType):
        return can_hold_gradient(ty.elem)
    return False


def values_requiring_grad(graph: Graph, wrt: Iterable[Value]) -> set[Value]:
    """Every value of ``graph`` (nested blocks included) that depends differentiably on ``wrt``.

    >>> needs = values_requiring_grad(g, [g.inputs[0]])
    """
    needs = {v for v in wrt if can_hold_gradient(v.ty)}
    _block(graph.block, needs)
    return needs


def _block(block: Block, needs: set[Value]) -> None:
    for node in block.nodes():
        _node(node, needs)


def _mark(values: Iterable[Value], needs: set[Value]) -> None:
    for value in values:
        if can_hold_gradient(value.ty) or _may_hold_gradient(value.ty):
            needs.add(value)


def _may_hold_gradient(ty: Type) -> bool:
    """An ``Any`` (or a container of one) computed from a value that needs a gradient: its
    type is not known, so it may carry that gradient (an element of a list whose length is
    only known at run time, a sum of a Python float and an array). Dropping it would make a
    silent zero gradient; keeping it costs at most a GradOf whose result is unused."""
    if ty is ANY:
        return True
    if isinstance(ty, TupleType):
        return any(_may_hold_gradient(e) for e in ty.elems)
    if isinstance(ty, ListType | OptionalType):
        return _may_hold_gradient(ty.elem)
    return False


def _node(node: Node, needs: set[Value]) -> None:
    kind = node.kind
    if kind == "prim::If":
        for block in node.blocks:
            _block(block, needs)
        for i, out in enumerate(node.outputs):
            if any(block.outputs[i] in needs for block in node.blocks):
                _mark([out], needs)
        return
    if kind == "prim::Loop":
        _loop(node, needs)
        return
    if kind == "prim::GradOf":
        _block(node.blocks[0], needs)
        _mark(
            [o for o, r in zip(node.outputs, node.blocks[0].outputs, strict=True) if r in needs],
            needs,
        )
        return
    if not any(v in needs for v in node.inputs):
        return
    op = OPS.get(kind)
    if op is not None and op.derivative.carries_gradient:
        _mark(node.outputs, needs)


def _loop(node: Node, needs: set[Value]) -> None:
    body = node.blocks[0]
    carried_in = node.inputs[2:]
    params = body.inputs[1:]
    results = body.outputs[1:]
    # A carried value needs grad if it does on entry or after any iteration: iterate to a
    # fixed point (each round can only add values).
    while True:
        before = len(needs)
        for init, param, result in zip(carried_in, params, results, strict=True):
            if init in needs or result in needs:
                _mark([param], needs)
        _block(body, needs)
        if len(needs) == before:
            break
    for out, param in zip(node.outputs, params, strict=True):
        if param in needs:
            _mark([out], needs)


@register_pass("propagate-requires-grad")
def propagate_requires_grad(graph: Graph) -> bool:
    """Write ``requires_grad`` into every tensor type, starting from the graph inputs whose
    type says ``requires_grad=1``.

    Given:   graph(%x : Double(3, requires_grad=1)): %y : Double(3) = aten::tanh(%x)
    Execute: propagate_requires_grad(graph)
    Result:  graph(%x : Double(3, requires_grad=1)): %y : Double(3, requires_grad=1) = ...
    """
    wrt = [v for v in graph.inputs if isinstance(v.ty, TensorType) and v.ty.requires_grad is True]
    needs = values_requiring_grad(graph, wrt)
    changed = False
    for value in _all_values(graph):
        if isinstance(value.ty, TensorType):
            flag = value in needs
            if value.ty.requires_grad != flag:
                value.ty = value.ty.with_requires_grad(flag)
                changed = True
    return changed


def _all_values(graph: Graph) -> Iterable[Value]:
    yield from graph.inputs
    for node in graph.all_nodes():
        yield from node.outputs
        for block in node.blocks:
            yield from block.inputs
