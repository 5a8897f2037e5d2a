"""Accumulate the gradients of several slices of one array into one zeroed buffer.

# Note [Accumulating slices]
# The backward of ``x[1:]`` is ``_slice_backward``: zeros of x's shape with the gradient written
# where the slice was. A program that reads several slices of ``x`` (``x[1:] - x[:-1]``) gets one
# such array per slice and adds them up: each slice costs a full allocation, a full copy of
# zeros and a full addition, where a hand-written backward zeroes one buffer and adds each
# slice's gradient into its part of it. `accumulate-slices` rewrites
#
#     %a = aten::_slice_backward(%g1, %shape, %axis, %start, %stop, %step)
#     %b = aten::_select_backward(%g2, %shape, %axis2, %index)
#     %c = aten::add(%a, %b)
# into
#     %grads = prim::TupleConstruct(%g1, %g2)
#     %keys = ((%axis, %start, %stop, %step), (%axis2, %index))   (nested prim::TupleConstructs)
#     %c = aten::_scatter_slices(%grads, %shape, %keys)
#
# and a further addition of one more slice's gradient joins the same node. The buffer starts at
# zero, takes the first gradient as written and each later one with ``+=``, in the order of the
# additions, so every element is the same sum, in the same order, as before: ``g1 + g2`` where
# the two slices overlap, ``g1`` where only one covers it. (Only the sign of a zero can differ:
# the full arrays added +0.0 to a -0.0 that the buffer keeps.) Only an addition with one single
# slice's gradient on at least one side is rewritten: adding two sums of several slices each
# would add up overlapping elements in another order. Each slice's gradient must be read by the
# addition alone (else the full array is needed anyway), and the addition must keep the slices'
# dtype and shape.
"""

from __future__ import annotations

from ir.graph import Graph, Node, Value
from ir.types import TupleType
from passes.pattern_rewriter import PatternTable, Rewriter
from passes.registry import register_pass
from passes.rewriting import insert_typed

SCATTER = "aten::_scatter_slices"
SINGLE = ("aten::_slice_backward", "aten::_select_backward")

# One pattern: see Note [Pattern rewrite driver] for how the table is applied.
PATTERNS = PatternTable[None]("accumulate-slices")
Accumulator = Rewriter[None]


@register_pass("accumulate-slices")
def accumulate_slices(graph: Graph) -> bool:
    """Turn additions of the backwards of slices and indices of one array into one
    ``aten::_scatter_slices``. Returns True if changed. See Note [Accumulating slices].

    Given:   %a : Double(10) = aten::_slice_backward(%g1, %shape, %0, %none, %m1, %none)
             %b : Double(10) = aten::_slice_backward(%g2, %shape, %0, %1, %none, %none)
             %c : Double(10) = aten::add(%a, %b)
    Execute: accumulate_slices(graph)
    Result:  %c : Double(10) = aten::_scatter_slices(%grads, %shape, %keys)
    """
    return PATTERNS.rewrite(graph, None)


@PATTERNS.register("aten::add")
def merge(rewriter: Accumulator, node: Node) -> bool:
    """add(a, b) of the gradients of single slices or of scatters -> one scatter."""
    first, second = (value.node for value in node.inputs)
    if not (_scattered(first, node) and _scattered(second, node)):
        return False
    if first.kind == SCATTER and second.kind == SCATTER:
        return False
    if second.kind == SCATTER:  # the sum of several goes first; a + b is b + a exactly
        first, second = second, first
    shape = first.inputs[1]
    if not _same_shape(shape, second.inputs[1]):
        return False
    grads: list[Value] = []
    keys: list[Value] = []
    with rewriter.inserting_before(node):
        for piece in (first, second):
            piece_grads, piece_keys = _pieces(rewriter, piece)
            grads += piece_grads
            keys += piece_keys
        packed_grads = _tuple(rewriter, grads)
        packed_keys = _tuple(rewriter, keys)
        result = insert_typed(rewriter, SCATTER, [packed_grads, shape, packed_keys], node)
    if result.ty != node.output.ty:
        for value in (result, packed_keys, packed_grads, *keys):
            if not value.uses:
                value.node.destroy()
        return False
    rewriter.replace(node, [result], take_names=True)
    for piece in (first, second):
        _destroy_piece(rewriter, piece)
    return True


def _scattered(piece: Node, reader: Node) -> bool:
    """A slice's, index's or several slices' gradient that only ``reader`` reads."""
    if piece.kind not in (*SINGLE, SCATTER) or len(piece.output.uses) != 1:
        return False
    if piece.kind == SCATTER and any(
        piece.inputs[i].node.kind != "prim::TupleConstruct" for i in (0, 2)
    ):
        return False
    return piece.output.uses[0].user is reader


def _same_shape(a: Value, b: Value) -> bool:
    if a is b:
        return True
    kinds = (a.node.kind, b.node.kind)
    return kinds == ("prim::Constant", "prim::Constant") and a.node.attrs.get(
        "value"
    ) == b.node.attrs.get("value")


def _pieces(rewriter: Accumulator, piece: Node) -> tuple[list[Value], list[Value]]:
    """The gradients of ``piece`` and a key for each."""
    if piece.kind == SCATTER:
        grads, _, keys = piece.inputs
        return list(grads.node.inputs), list(keys.node.inputs)
    grad, _, *place = piece.inputs
    return [grad], [_tuple(rewriter, place)]


def _tuple(rewriter: Accumulator, items: list[Value]) -> Value:
    ty = TupleType(tuple(item.ty for item in items))
    return rewriter.insert("prim::TupleConstruct", items, [ty], None).output


def _destroy_piece(rewriter: Accumulator, piece: Node) -> None:
    """Destroy a piece the merged node replaced, and the tuples of a merged scatter."""
    packed = list(piece.inputs) if piece.kind == SCATTER else []
    rewriter.destroy(piece)
    for value in packed:
        if value.node.kind == "prim::TupleConstruct" and not value.uses:
            rewriter.destroy(value.node)
