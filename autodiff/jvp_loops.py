"""Loops in forward-mode graphs: what transposing a loop's VJP leaves (a forward loop filling
tapes, a loop mapping them, a tangent loop reading them; Note [Forward mode by transposition]
in `autodiff.jvp_graphs`) fused into one loop that carries the tangent beside the primal."""

from __future__ import annotations

from ir.analysis import constant_value, is_constant, runs_its_count
from ir.graph import Graph, Node, Value
from ir.ops import OPS

# Note [Tape maps]
# Transposing a loop's VJP leaves, between the forward loop and the tangent loop, a loop that
# only maps tapes: it reads the forward loop's tapes backwards, computes the derivative factors
# the tangent loop needs (``cos(s)`` for ``sin(s)``) and pushes them on tapes of its own, which
# the tangent loop reads backwards again, in forward order. `fuse_tape_maps` moves that work
# into the tangent loop: where the tangent loop reads row ``k`` of such a tape, it computes the
# row there from the forward tapes, as the map loop would in its iteration ``k``. It applies
# when the map loop runs its whole count, carries nothing but tapes it pushes to once per
# iteration, computes every row from its iteration index and values defined before it (pure
# operators only), and every read of its tapes is in the body of one loop of the same count,
# at one index; then the map loop is dead: one loop and one set of tapes less.


def fuse_tape_maps(graph: Graph) -> bool:
    changed = False
    for node in list(graph.nodes()):
        if node.kind == "prim::Loop" and node.owning_block is graph.block:
            changed |= _fuse_tape_map(node)
    return changed


def _tape_map_rows(loop: Node) -> list[Value] | None:
    """The value the map loop ``loop`` pushes per carried tape, or None when it is not one
    (Note [Tape maps])."""
    body = loop.blocks[0]
    if not runs_its_count(loop) or not loop.outputs:
        return None
    rows = []
    for start, param, out in zip(loop.inputs[2:], body.inputs[1:], body.outputs[1:], strict=True):
        push = out.node
        if not (
            start.node.kind == "prim::TapeList"
            and push.kind == "prim::TapePush"
            and push.owning_block is body
            and push.inputs[0] is param
            and len(param.uses) == 1
            and len(out.uses) == 1
        ):
            return None
        rows.append(push.inputs[1])
    for inner in body.nodes():
        if inner.kind == "prim::TapePush":
            continue
        op = OPS.get(inner.kind)
        if inner.blocks or op is None or not op.pure or op.fresh:
            return None
    return rows


def _fuse_tape_map(loop: Node) -> bool:
    rows = _tape_map_rows(loop)
    if rows is None:
        return False
    reads = [use.user for out in loop.outputs for use in out.uses]
    if not reads or any(r.kind != "prim::ListIndex" or r.inputs[0].node is not loop for r in reads):
        return False
    consumer_block = reads[0].owning_block
    index = reads[0].inputs[1]
    consumer = consumer_block.owning_node if consumer_block is not None else None
    if (
        consumer is None
        or consumer.kind != "prim::Loop"
        or consumer.owning_block is not loop.owning_block
        or consumer.inputs[0] is not loop.inputs[0]
        or any(r.owning_block is not consumer_block or r.inputs[1] is not index for r in reads)
        or not _counts_down(index, consumer, loop.inputs[0])
    ):
        return False
    assert consumer_block is not None
    graph = loop.graph
    body = loop.blocks[0]
    first = next(n for n in consumer_block.nodes() if n in reads)
    copies: dict[Value, Value] = {body.inputs[0]: index}
    with graph.inserting_before(first):
        for inner in body.nodes():
            if inner.kind == "prim::TapePush":
                continue
            if (  # the map loop's ``(trips - 1) - j`` at ``j = (trips - 1) - k`` is ``k``
                inner.kind == "prim::sub"
                and inner.inputs[0] is index.node.inputs[0]
                and inner.inputs[1] is body.inputs[0]
            ):
                copies[inner.output] = consumer_block.inputs[0]
                continue
            copy = graph.insert_node(graph.create_clone(inner, lambda v: copies.get(v, v)))
            copies.update(zip(inner.outputs, copy.outputs, strict=True))
    for read in reads:
        row = rows[read.inputs[0].index]
        read.output.replace_all_uses_with(copies.get(row, row))
        read.destroy()
    return True


def _counts_down(index: Value, loop: Node, trips: Value) -> bool:
    """Whether ``index`` is ``(trips - 1) - j`` for the iteration ``j`` of ``loop``: the
    tangent loop reads its tapes backwards, the iterations of the map loop in its order."""
    node = index.node
    if node.kind != "prim::sub" or node.inputs[1] is not loop.blocks[0].inputs[0]:
        return False
    last = node.inputs[0].node
    return (
        last.kind == "prim::sub"
        and last.inputs[0] is trips
        and is_constant(last.inputs[1])
        and constant_value(last.inputs[1]) == 1
    )


# Note [Tangent loops]
# After Note [Tape maps], a loop's JVP is the forward loop, which pushes on tapes the values
# of each iteration, then the tangent loop, of the same count, which reads them back at its
# own iteration: forward order. `fuse_tangent_loops` runs the tangent loop's body in the
# forward loop's, after it, each tape read replaced by the value pushed in that iteration:
# the tangent is carried beside the primal, as forward mode does by hand, and the tapes are
# dead (no memory per iteration). It applies when both loops run their whole count, the tangent
# loop reads the forward loop's results only through those tape reads, in its own body (not
# nested) and at its iteration, everything else it reads is defined before the forward loop,
# and its body is pure (the forward loop's prints and draws keep their order).


def fuse_tangent_loops(graph: Graph) -> bool:
    fused = False
    while any(node.kind == "prim::Loop" and _fuse_tangent_loop(node) for node in graph.nodes()):
        fused = True  # the tangent loop is gone: look again from the start
    return fused


def _tape_reads(loop: Node, pushed: list[Value | None]) -> list[Node] | None:
    """The reads of ``loop``'s tapes (the results ``pushed`` has a value for), if they are all
    in one other loop's body, at its iteration; None otherwise."""
    tapes = [out for out, row in zip(loop.outputs, pushed, strict=True) if row is not None]
    uses = [use for out in tapes for use in out.uses]
    reads = [use.user for use in uses]
    if not reads or any(use.user.kind != "prim::ListIndex" or use.index != 0 for use in uses):
        return None
    block = reads[0].owning_block
    consumer = block.owning_node if block is not None else None
    if consumer is None or consumer.kind != "prim::Loop" or block is None:
        return None
    if any(r.owning_block is not block or r.inputs[1] is not block.inputs[0] for r in reads):
        return None
    return reads


def _fuse_tangent_loop(forward: Node) -> bool:
    pushed = _pushed_values(forward)
    reads = None if pushed is None else _tape_reads(forward, pushed)
    if pushed is None or reads is None:
        return False
    body = forward.blocks[0]
    block = reads[0].owning_block
    assert block is not None
    tangent = block.owning_node
    assert tangent is not None
    if (
        tangent.owning_block is not forward.owning_block
        or tangent.inputs[0] is not forward.inputs[0]
        or not (runs_its_count(forward) and runs_its_count(tangent))
        or not _reads_only_before(tangent, forward, set(reads))
    ):
        return False
    for inner in tangent.blocks[0].nodes():
        op = OPS.get(inner.kind)
        if not inner.blocks and (op is None or not op.pure or op.fresh):
            return False
        if inner.blocks and inner.kind != "prim::If":
            return False
    graph = forward.graph
    # the tangent loop's carried values become the forward loop's too
    copies: dict[Value, Value] = {block.inputs[0]: body.inputs[0]}
    for start, param in zip(tangent.inputs[2:], block.inputs[1:], strict=True):
        forward.add_input(start)
        copies[param] = body.add_input(param.ty, param.name_hint)
    read_nodes = set(reads)
    for read in reads:
        row = pushed[read.inputs[0].index]
        assert row is not None
        copies[read.output] = row
    with graph.inserting_before(body.return_node):
        for inner in block.nodes():
            if inner in read_nodes:
                continue
            copy = graph.insert_node(graph.create_clone(inner, lambda v: copies.get(v, v)))
            copies.update(zip(inner.outputs, copy.outputs, strict=True))
    for value, out in zip(block.outputs[1:], tangent.outputs, strict=True):
        body.register_output(copies.get(value, value))
        fused = forward.add_output(out.ty, out.name_hint)
        out.replace_all_uses_with(fused)
    tangent.destroy()
    return True


def _pushed_values(loop: Node) -> list[Value | None] | None:
    """Per output of ``loop``, the value its body pushes on it when it is a tape pushed once
    per iteration (None for another carried value); None when a tape is pushed otherwise."""
    body = loop.blocks[0]
    found: list[Value | None] = []
    for start, param, out in zip(loop.inputs[2:], body.inputs[1:], body.outputs[1:], strict=True):
        if start.node.kind != "prim::TapeList":
            found.append(None)
            continue
        push = out.node
        if not (
            push.kind == "prim::TapePush"
            and push.owning_block is body
            and push.inputs[0] is param
            and len(param.uses) == 1
        ):
            return None
        found.append(push.inputs[1])
    return found


def _reads_only_before(tangent: Node, forward: Node, allowed: set[Node]) -> bool:
    """Whether every value ``tangent`` reads from outside it is defined before ``forward``,
    but for the forward loop's tapes read by the ``allowed`` nodes."""
    nodes = [tangent]
    inside: set[Value] = set()
    blocks = list(tangent.blocks)
    while blocks:
        block = blocks.pop()
        inside.update(block.inputs)
        for node in block.nodes():
            nodes.append(node)
            inside.update(node.outputs)
            blocks.extend(node.blocks)
        nodes.append(block.return_node)
    for node in nodes:
        for value in node.inputs:
            if value in inside:
                continue
            owner = value.node
            if owner is forward:
                if node not in allowed:
                    return False
            elif owner.owning_block is forward.owning_block and not owner.is_before(forward):
                return False
    return True
