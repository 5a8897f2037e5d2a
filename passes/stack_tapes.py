"""Stack tapes: a loop tape of fixed-shape values, in a loop that runs exactly its trip count,
becomes one preallocated array instead of a list.

`autodiff.control_flow` keeps what a loop's reverse reads in list tapes (Note [Loop tapes]):
``prim::TapeList`` before the loop, one ``prim::TapePush`` per iteration, ``prim::ListIndex``
reads in the reverse loop. When the loop starts and never stops early (its condition and its
body's are the constant True) and it has a bounded trip count, and the pushed value's type is
complete, the tape becomes ``prim::TapeArray`` of shape ``(trips, *value shape)``, written row
``i`` in iteration ``i`` (``prim::TapeWrite``) and read with ``aten::select``: one allocation
instead of one list entry per iteration, and rows that are views of it. It runs once types are
specialised, so that sizes folded to constants count as fixed.

A tape of Python bools (which branch of a ``prim::If`` each iteration took: Note [Loop tapes])
becomes a ``Bool(trips)`` array, each read ``prim::bool`` of the selected 0-d element: the
same truth value, and a loop with a branch then holds no list, which the native tier cannot
compile (Note [Native regions] in `passes.native_regions`). Python ints and floats keep their
lists: an int may not fit an int64, and a float read back would be a Python float where the
list held whatever number the loop pushed.
"""

from __future__ import annotations

from ir.analysis import constant_value, is_constant, runs_its_count
from ir.graph import Graph, Node, Value
from ir.types import BOOL, INT, STR, TensorType, TupleType
from passes.registry import register_pass

# A ``while`` loop's trip count (`frontend.emit`): no tape can be preallocated for it.
UNBOUNDED_TRIPS = 2**62


@register_pass("stack-tapes")
def stack_tapes(graph: Graph) -> bool:
    """Turn the list tapes of loops that run their trip count into preallocated arrays.

    Given:   %empty : Double(4)[] = prim::TapeList()
             %h.out : Double(4), %tape : Double(4)[] = prim::Loop(%n, %true, %h0, %empty)
               block0(%i : int, %h : Double(4), %t : Double(4)[]):
                 %h.1 : Double(4) = aten::tanh(%h)
                 %t.1 : Double(4)[] = prim::TapePush(%t, %h.1)
                 -> (%true, %h.1, %t.1)
             ... %row : Double(4) = prim::ListIndex(%tape, %k)
    Execute: stack_tapes(graph)
    Result:  %empty : Double(*, 4) = prim::TapeArray(%n, (4,), "float64")
             ... %t.1 = prim::TapeWrite(%t, %i, %h.1) ...
             ... %row : Double(4) = aten::select(%tape, 0, %k)
    """
    changed = False
    for loop in [node for node in graph.all_nodes() if node.kind == "prim::Loop"]:
        if not runs_its_count(loop) or not _bounded(loop.inputs[0]):
            continue
        for offset in range(len(loop.outputs)):
            changed |= _stack(graph, loop, offset)
    return changed


def _bounded(trips: Value) -> bool:
    return not (is_constant(trips) and constant_value(trips) >= UNBOUNDED_TRIPS)


def _stack(graph: Graph, loop: Node, offset: int) -> bool:
    """Stack the tape ``loop`` carries at position ``offset``, if it is one that can be."""
    body = loop.blocks[0]
    start, param = loop.inputs[2 + offset], body.inputs[1 + offset]
    push, out = body.outputs[1 + offset].node, loop.outputs[offset]
    if not (
        start.node.kind == "prim::TapeList"
        and len(start.uses) == 1
        and push.kind == "prim::TapePush"
        and push.owning_block is body
        and push.inputs[0] is param
        and len(param.uses) == 1
        and len(push.output.uses) == 1
        and all(use.user.kind == "prim::ListIndex" and use.index == 0 for use in out.uses)
    ):
        return False
    value = push.inputs[1]
    ty = value.ty
    row_shape: tuple[int, ...]
    if ty is BOOL:
        dtype_name, row_shape = "bool", ()
    elif isinstance(ty, TensorType) and ty.is_complete and ty.dtype and ty.shape is not None:
        dtype_name, row_shape = ty.dtype, tuple(int(d or 0) for d in ty.shape)
    else:
        return False
    trips = loop.inputs[0]
    rows = max(int(constant_value(trips)), 0) if is_constant(trips) else None
    tape_type = TensorType(dtype_name, (rows, *row_shape))
    with graph.inserting_before(loop):
        shape = graph.insert_constant(row_shape, TupleType((INT,) * len(row_shape)))
        dtype = graph.insert_constant(dtype_name, STR)
        array = graph.insert(
            "prim::TapeArray", (trips, shape, dtype), (tape_type,), source_range=loop.source_range
        ).output
    array.name_hint = start.name_hint
    loop.replace_input(2 + offset, array)
    start.node.destroy()
    param.ty = tape_type
    with graph.inserting_before(push):
        write = graph.insert(
            "prim::TapeWrite", (param, body.inputs[0], value), (tape_type,)
        ).copy_metadata(push)
    write.output.name_hint = push.output.name_hint
    push.output.replace_all_uses_with(write.output)
    push.destroy()
    out.ty = tape_type
    for use in list(out.uses):
        index = use.user
        with graph.inserting_before(index):
            axis = graph.insert_constant(0, INT, index.source_range)
            row_type = TensorType("bool", ()) if ty is BOOL else index.output.ty
            row = graph.insert("aten::select", (out, axis, index.inputs[1]), (row_type,))
            row.copy_metadata(index)
            read = row
            if ty is BOOL:
                read = graph.insert("prim::bool", (row.output,), (BOOL,)).copy_metadata(index)
        read.output.name_hint = index.output.name_hint
        index.output.replace_all_uses_with(read.output)
        index.destroy()
    return True
