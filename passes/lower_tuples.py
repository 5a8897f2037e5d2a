"""Tuple lowering: take tuples apart so values flow through control flow one element at a time.

What `lower-tuples` does, repeated until nothing changes:

1. forwarding: a prim::TupleUnpack of a prim::TupleConstruct is replaced by the construct's
   operands, and so is a prim::TupleIndex with a constant index into one;
2. prim::If outputs of tuple type are flattened: each branch returns the elements (taken from
   its prim::TupleConstruct, or from a prim::TupleUnpack added at the end of the branch), the
   node gets one output per element, and a prim::TupleConstruct after the node rebuilds the
   tuple for its users, which step 1 then usually dissolves;
3. prim::Loop carried values of tuple type are flattened the same way: the initial operand, the
   body parameter (rebuilt at the start of the body), the body result and the output;
4. prim::TupleConstruct nodes left without users are erased.

Flattened elements are appended after the node's other outputs (and carried values), so the
remaining outputs keep their relative order. Graph inputs and outputs keep their tuple types
(they are the function's signature), and so do prim::GradOf results. Nested tuples are
flattened one level per round, so they come apart completely.
"""

from __future__ import annotations

from ir.graph import Block, Graph, Node, Value
from ir.types import TupleType
from passes.registry import register_pass

CONSTRUCT = "prim::TupleConstruct"
UNPACK = "prim::TupleUnpack"
INDEX = "prim::TupleIndex"


@register_pass("lower-tuples")
def lower_tuples(graph: Graph) -> bool:
    """Forward tuple elements to their users and flatten tuples out of prim::If/prim::Loop.

    Given:   %t = prim::If(%c)
               block0(): %p = prim::TupleConstruct(%a, %b) -> (%p)
               block1(): %q = prim::TupleConstruct(%b, %a) -> (%q)
             %u, %v = prim::TupleUnpack(%t)
    Execute: lower_tuples(graph)
    Result:  %u, %v = prim::If(%c)
               block0(): -> (%a, %b)
               block1(): -> (%b, %a)
    """
    changed = False
    while _lower_block(graph, graph.block):
        changed = True
    return changed


def _lower_block(graph: Graph, block: Block) -> bool:
    changed = False
    for node in block.nodes():
        for inner in node.blocks:
            changed |= _lower_block(graph, inner)
        if node.kind == UNPACK:
            changed |= _forward_unpack(node)
        elif node.kind == INDEX:
            changed |= _forward_index(node)
        elif node.kind == "prim::If":
            changed |= _flatten_if(graph, node)
        elif node.kind == "prim::Loop":
            changed |= _flatten_loop(graph, node)
    for node in block.nodes(reverse=True):
        if node.kind == CONSTRUCT and not node.has_uses():
            node.destroy()
            changed = True
    return changed


def _forward_unpack(node: Node) -> bool:
    source = node.inputs[0].node
    if source.kind != CONSTRUCT or len(source.inputs) != len(node.outputs):
        return False
    for out, element in zip(node.outputs, source.inputs, strict=True):
        out.replace_all_uses_with(element)
    node.destroy()
    return True


def _forward_index(node: Node) -> bool:
    source, index = node.inputs[0].node, node.inputs[1]
    if source.kind != CONSTRUCT or index.node.kind != "prim::Constant":
        return False
    position = index.node.attrs.get("value")
    if not isinstance(position, int) or not -len(source.inputs) <= position < len(source.inputs):
        return False
    node.output.replace_all_uses_with(source.inputs[position])
    node.destroy()
    return True


def _elements(graph: Graph, tuple_value: Value, before: Node) -> list[Value]:
    """The elements of ``tuple_value``, as values usable just before ``before``: the operands of
    its prim::TupleConstruct, or the outputs of a new prim::TupleUnpack."""
    source = tuple_value.node
    if source.kind == CONSTRUCT:
        return list(source.inputs)
    assert isinstance(tuple_value.ty, TupleType)
    with graph.inserting_before(before):
        unpack = graph.insert(UNPACK, [tuple_value], tuple_value.ty.elems)
    unpack.source_range = source.source_range
    for position, element in enumerate(unpack.outputs):
        element.name_hint = _element_hint(tuple_value, position)
    return list(unpack.outputs)


def _rebuild(graph: Graph, old: Value, elements: list[Value], before: Node) -> None:
    """Make ``old``'s users read a new prim::TupleConstruct of ``elements`` inserted before
    ``before``."""
    with graph.inserting_before(before):
        construct = graph.insert(CONSTRUCT, elements, [old.ty])
    construct.output.name_hint = old.name_hint
    old.replace_all_uses_with(construct.output)


def _tuple_outputs(node: Node) -> list[int]:
    return [i for i, out in enumerate(node.outputs) if isinstance(out.ty, TupleType)]


def _flatten_if(graph: Graph, node: Node) -> bool:
    indices = _tuple_outputs(node)
    for index in reversed(indices):
        old = node.outputs[index]
        assert isinstance(old.ty, TupleType)
        for block in node.blocks:
            elements = _elements(graph, block.outputs[index], block.return_node)
            for element in elements:
                block.register_output(element)
            block.erase_output(index)
        new = [node.add_output(ty, _element_hint(old, i)) for i, ty in enumerate(old.ty.elems)]
        _rebuild(graph, old, new, node.next)
        node.erase_output(index)
    return bool(indices)


def _flatten_loop(graph: Graph, node: Node) -> bool:
    # Operands: (max_trip_count, initial_cond, carried...); body params: (i, carried...);
    # body returns: (cond, carried...); outputs: carried.
    body = node.blocks[0]
    indices = _tuple_outputs(node)
    for index in reversed(indices):
        old = node.outputs[index]
        ty = old.ty
        assert isinstance(ty, TupleType)
        initial = _elements(graph, node.inputs[2 + index], node)
        for element in initial:
            node.add_input(element)
        node.remove_input(2 + index)

        old_param = body.inputs[1 + index]
        params = [body.add_input(t, _element_hint(old_param, i)) for i, t in enumerate(ty.elems)]
        _rebuild(graph, old_param, params, body.param_node.next)
        body.erase_input(1 + index)

        results = _elements(graph, body.outputs[1 + index], body.return_node)
        for result in results:
            body.register_output(result)
        body.erase_output(1 + index)

        outputs = [node.add_output(t, _element_hint(old, i)) for i, t in enumerate(ty.elems)]
        _rebuild(graph, old, outputs, node.next)
        node.erase_output(index)
    return bool(indices)


def _element_hint(value: Value, position: int) -> str | None:
    return None if value.name_hint is None else f"{value.name_hint}_{position}"
