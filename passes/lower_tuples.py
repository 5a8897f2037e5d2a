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
4. prim::TupleConstruct nodes and tuple-typed prim::Uninitialized nodes left without users are
   erased.

Flattened elements are appended after the node's other outputs (and carried values), so the
remaining outputs keep their relative order. Graph inputs and outputs keep their tuple types
(they are the function's signature), and so do prim::GradOf results. Nested tuples are
flattened one level per round, so they come apart completely.

The pipeline runs the pass before differentiation, but it keeps meaning on a gradient-stage
graph too (Note [Tuples that cannot be unpacked]).

# Note [Tuples that cannot be unpacked]
# Flattening a slot of a prim::If or prim::Loop takes apart every tuple that flows through it,
# and a prim::TupleUnpack is only right for a value that is a tuple at run time. Two kinds of
# value are typed as tuples but are not always one, both on gradient-stage graphs:
# - prim::Uninitialized, the None a branch yields for a value only its other branch defines
#   (a tuple a loop's tape keeps from one branch): its elements are Uninitialized too, which
#   nothing reads either;
# - a gradient that may be the AUTOGRAD_ZERO sentinel (Note [Which values can be
#   AUTOGRAD_ZERO] in `passes.autograd_zero`), such as a tuple's gradient that a prim::GradOf
#   gives for zero inputs and a reverse loop carries: it has no elements, and an element-wise
#   stand-in (a tuple of sentinels) is not the sentinel, which GradOf and AutogradAdd test
#   for. A slot through which such a value may flow is left as it is.
# `_maybe_autograd_zero` finds those values once per round, following the sentinel from each
# prim::AutogradZero to whatever may pass it on; a graph without one has none.
"""

from __future__ import annotations

from collections.abc import Callable

from ir.graph import RETURN, Block, Graph, Node, Value
from ir.types import TupleType
from passes.registry import register_pass

CONSTRUCT = "prim::TupleConstruct"
UNPACK = "prim::TupleUnpack"
INDEX = "prim::TupleIndex"
UNINITIALIZED = "prim::Uninitialized"

# See Note [Tuples that cannot be unpacked]: what may hand on an AUTOGRAD_ZERO operand, as
# itself or inside a container (a tuple, a list, a tape) whose elements may be read back.
_PASSES_ZERO_ON = frozenset(
    {
        "prim::GradOf",
        "prim::CallFunction",
        "prim::TupleConstruct",
        "prim::TupleUnpack",
        "prim::TupleIndex",
        "prim::TupleSlice",
        "prim::ListConstruct",
        "prim::ListUnpack",
        "prim::ListIndex",
        "prim::ListAppend",
        "prim::TapePush",
    }
)


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
    # Each round flattens one level of nesting and adds values, so the values that may be the
    # sentinel are found again before it.
    while _lower_block(graph, graph.block, _maybe_autograd_zero(graph)):
        changed = True
    return changed


def _lower_block(graph: Graph, block: Block, zeros: set[Value]) -> bool:
    changed = False
    for node in block.nodes():
        for inner in node.blocks:
            changed |= _lower_block(graph, inner, zeros)
        if node.kind == UNPACK:
            changed |= _forward_unpack(node)
        elif node.kind == INDEX:
            changed |= _forward_index(node)
        elif node.kind == "prim::If":
            changed |= _flatten_if(graph, node, zeros)
        elif node.kind == "prim::Loop":
            changed |= _flatten_loop(graph, node, zeros)
    for node in block.nodes(reverse=True):
        if _is_tuple_maker(node) and not node.has_uses():
            node.destroy()
            changed = True
    return changed


def _is_tuple_maker(node: Node) -> bool:
    return node.kind == CONSTRUCT or (
        node.kind == UNINITIALIZED and isinstance(node.output.ty, TupleType)
    )


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


def _maybe_autograd_zero(graph: Graph) -> set[Value]:
    """The values of ``graph`` that may be AUTOGRAD_ZERO at run time, or hold it: see Note
    [Tuples that cannot be unpacked]. Each value joins once, so the work is linear."""
    found: set[Value] = set()
    pending: list[Value] = []

    def add(value: Value) -> None:
        if value not in found:
            found.add(value)
            pending.append(value)

    for node in graph.all_nodes():
        if node.kind == "prim::AutogradZero":
            add(node.output)
    while pending:
        for use in pending.pop().uses:
            user, index = use.user, use.index
            if user.kind in _PASSES_ZERO_ON:
                for out in user.outputs:
                    add(out)
            elif user.kind == "prim::AutogradAdd":
                if all(operand in found for operand in user.inputs):
                    add(user.output)
            elif user.kind == "prim::Loop" and index >= 2:
                add(user.blocks[0].inputs[index - 1])
                add(user.outputs[index - 2])
            elif user.kind == RETURN:
                _add_block_result(user, index, add)
    return found


def _add_block_result(ret: Node, index: int, add: Callable[[Value], None]) -> None:
    """A block returns a value that may be the sentinel at position ``index``: so may what its
    node gives out there (and, for a loop body, the parameter the next iteration gets)."""
    block = ret.owning_block
    owner = None if block is None else block.owning_node
    if owner is None:
        return  # the graph's own results
    if owner.kind == "prim::Loop":
        if index >= 1:
            add(owner.blocks[0].inputs[index])
            add(owner.outputs[index - 1])
    elif index < len(owner.outputs):
        add(owner.outputs[index])


def _unpackable(value: Value, zeros: set[Value]) -> bool:
    """Whether `_elements` can take ``value`` apart (Note [Tuples that cannot be unpacked])."""
    return value.node.kind in (CONSTRUCT, UNINITIALIZED) or value not in zeros


def _elements(graph: Graph, tuple_value: Value, before: Node) -> list[Value]:
    """The elements of ``tuple_value``, as values usable just before ``before``: the operands of
    its prim::TupleConstruct, one prim::Uninitialized each for an uninitialized tuple, or the
    outputs of a new prim::TupleUnpack."""
    source = tuple_value.node
    if source.kind == CONSTRUCT:
        return list(source.inputs)
    assert isinstance(tuple_value.ty, TupleType)
    if source.kind == UNINITIALIZED:
        with graph.inserting_before(before):
            return [
                graph.insert(UNINITIALIZED, (), [ty], source_range=source.source_range).output
                for ty in tuple_value.ty.elems
            ]
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


def _flatten_if(graph: Graph, node: Node, zeros: set[Value]) -> bool:
    indices = [
        i
        for i in _tuple_outputs(node)
        if all(_unpackable(block.outputs[i], zeros) for block in node.blocks)
    ]
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


def _flatten_loop(graph: Graph, node: Node, zeros: set[Value]) -> bool:
    # Operands: (max_trip_count, initial_cond, carried...); body params: (i, carried...);
    # body returns: (cond, carried...); outputs: carried.
    body = node.blocks[0]
    indices = [
        i
        for i in _tuple_outputs(node)
        if _unpackable(node.inputs[2 + i], zeros) and _unpackable(body.outputs[1 + i], zeros)
    ]
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
