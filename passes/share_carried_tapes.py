"""Share the tape of a loop-carried value with the tape of the value it is carried from.

# Note [Shared carried tapes]
# A loop's reverse reads, per iteration, what that iteration's formulas read (Note [Loop tapes]
# in `autodiff.control_flow`). In ``h = np.tanh(x[t] @ w_in + h @ w_h)`` the product's
# backward reads the carried ``h`` the iteration starts with, and tanh's backward reads the
# ``h`` it ends with: two tapes, where the first holds the second shifted by one row. The row
# the first tape has in iteration t is the second's row t - 1, or, for t = 0, the value the
# loop starts with. `share-carried-tapes` drops the first tape and reads
#
#     %row = aten::select(%carried_tape, 0, %t)
# as
#     %row = aten::_previous_row(%result_tape, %initial, %t)
#
# which halves what an RNN keeps per step. It applies to array tapes (`stack-tapes`) of a loop
# that runs its count, where the carried value and the result carried into it have the tape's
# row type, and every read of the dropped tape is such a select.
"""

from __future__ import annotations

from ir.analysis import constant_value, in_block, is_constant, runs_its_count
from ir.graph import Block, Graph, Node, Value
from ir.types import TensorType
from passes.registry import register_pass

TAPE_WRITE = "prim::TapeWrite"


@register_pass("share-carried-tapes")
def share_carried_tapes(graph: Graph) -> bool:
    """Read a loop-carried value's tape from the tape of the value carried into it. Returns
    True if changed. See Note [Shared carried tapes].

    Given:   %h, %ta, %tb = prim::Loop(%n, %true, %h0, %a0, %b0)
               block0(%t, %h.1, %a, %b):
                 %h.2 = aten::tanh(%h.1)
                 %a.1 = prim::TapeWrite(%a, %t, %h.2)
                 %b.1 = prim::TapeWrite(%b, %t, %h.1)
                 -> (%true, %h.2, %a.1, %b.1)
             ... %r = aten::select(%tb, %0, %k)
    Execute: share_carried_tapes(graph)
    Result:  the loop carries %h and %ta only; %r = aten::_previous_row(%ta, %h0, %k)
    """
    changed = False
    for loop in [node for node in graph.all_nodes() if node.kind == "prim::Loop"]:
        if not runs_its_count(loop):
            continue
        while _share_one(graph, loop):
            changed = True
    return changed


def _writes(body: Block) -> dict[int, Node]:
    """The tape writes of ``body``'s carried slots: slot offset -> the TapeWrite it returns."""
    writes = {}
    for offset, (param, result) in enumerate(zip(body.inputs[1:], body.outputs[1:], strict=True)):
        write = result.node
        if (
            write.kind == TAPE_WRITE
            and write.owning_block is body
            and write.inputs[0] is param
            and write.inputs[1] is body.inputs[0]
            and len(param.uses) == 1
            and len(result.uses) == 1
        ):
            writes[offset] = write
    return writes


def _share_one(graph: Graph, loop: Node) -> bool:
    body = loop.blocks[0]
    writes = _writes(body)
    taped_by = {write.inputs[2]: offset for offset, write in writes.items()}
    for dropped, write in writes.items():
        carried = write.inputs[2]
        if carried.node is not body.param_node or carried.index == 0:
            continue
        slot = carried.index - 1
        source = body.outputs[1 + slot]
        kept = taped_by.get(source)
        initial = loop.inputs[2 + slot]
        if kept is None or kept == dropped or not _same_rows(carried, source, initial):
            continue
        reads = list(loop.outputs[dropped].uses)
        if not all(_row_select(use.user, use.index) for use in reads):
            continue
        home = initial.node.owning_block
        if home is None or not all(in_block(use.user, home) for use in reads):
            continue  # an inner loop's start, which its enclosing loop's reverse cannot see
        tape = loop.outputs[kept]
        for use in reads:
            select = use.user
            with graph.inserting_before(select):
                row = graph.insert(
                    "aten::_previous_row",
                    (tape, initial, select.inputs[2]),
                    (select.output.ty,),
                    source_range=select.source_range,
                )
            row.output.name_hint = select.output.name_hint
            select.output.replace_all_uses_with(row.output)
            select.destroy()
        _drop_slot(loop, dropped)
        return True
    return False


def _same_rows(carried: Value, source: Value, initial: Value) -> bool:
    ty = carried.ty
    return isinstance(ty, TensorType) and ty.is_complete and source.ty == ty and initial.ty == ty


def _row_select(user: Node, index: int) -> bool:
    """``aten::select(tape, 0, k)``: a read of one row."""
    if user.kind != "aten::select" or index != 0:
        return False
    axis = user.inputs[1]
    return is_constant(axis) and constant_value(axis) == 0


def _drop_slot(loop: Node, offset: int) -> None:
    """Stop ``loop`` carrying the tape at ``offset``: its write, its creation, its slot."""
    body = loop.blocks[0]
    write = body.outputs[1 + offset].node
    body.erase_output(1 + offset)
    write.destroy()
    body.erase_input(1 + offset)
    loop.erase_output(offset)
    start = loop.inputs[2 + offset]
    loop.remove_input(2 + offset)
    if not start.uses and start.node.kind == "prim::TapeArray":
        start.node.destroy()
