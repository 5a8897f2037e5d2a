"""The reverses of prim::If and prim::Loop, and the routing, into them, of the forward values
they read from inside branches and loop bodies (tapes, for a loop).

# Note [Control-flow derivatives]
# A prim::If's derivative is a prim::If on the same condition in the reverse program; branch b of
# it holds the reverse of forward branch b, and returns the gradients that branch sends to values
# defined outside it (zeros where the other branch sends one and this one does not; see
# `specialize-autograd-zero`). A prim::Loop's derivative is a prim::Loop that runs the same
# number of iterations backwards: its body is the reverse of the forward body, with the
# gradients of the carried values carried from one iteration to the one before, and the
# gradients of values from outside the loop (weights, say) summed in accumulators it carries
# too. Nothing is unrolled: the reverse program's size does not depend on the trip count.
#
# The reverse of a branch or a loop body reads forward values the body computed. Those are not
# visible outside it, so each is routed out (`_route_branch_reads`, `_route_loop_reads`, run by
# `route_forward_reads` in `autodiff.differentiate` once the types are propagated): a
# branch returns it as one more prim::If output (its other branches return
# prim::Uninitialized); a loop writes it to a tape (Note [Loop tapes]). Values from outside a
# loop are read directly, once, however many iterations read them.

# Note [Loop tapes]
# Per iteration, the forward loop appends each value its reverse reads to a tape it carries: a
# list (prim::TapeList before the loop, prim::TapePush in the body), which the reverse loop reads
# at index ``trips - 1 - j`` in its iteration ``j`` (prim::ListIndex). The trip count is the
# loop's own count when it runs to it (no ``break``, not a ``while``), and otherwise one more
# value the loop carries. The loop's counter is never taped: in the reverse it is that index;
# constants and sizes the types fix are not taped either. Once types are specialised, the
# `stack-tapes` pass turns the tape of a fixed-shape value in a loop that runs its count into
# one preallocated array with a row per iteration. Tapes are filled in place, so memory grows
# by one copy of the saved values per iteration and the IR does not grow at all. Values from
# outside the loop (weights, say) are read directly: saved once, however many iterations read
# them.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from autodiff.errors import DifferentiationError
from autodiff.gradient import gradient_name
from ir.analysis import in_block, runs_its_count
from ir.graph import Block, Graph, Node, Value
from ir.ops import NOT_CONSTANT, OPS
from ir.ops.views import not_one_element
from ir.types import BOOL, INT, ListType, TensorType, type_of_value
from passes.autograd_zero import can_materialise

if TYPE_CHECKING:  # the builder calls into this module for the nodes that hold blocks
    from autodiff.differentiate import ReverseBuilder


# Operators a reverse loop recomputes instead of taping their results, when their operands come
# from outside the loop or the counter: views of an array the loop only reads (`_recomputed`),
# and int arithmetic on the counter. Cheaper than a tape write, and nothing is kept per iteration.
def _recomputed(node: Node) -> bool:
    """Whether a reverse loop recomputes ``node`` instead of taping its result, when its operands
    come from outside the loop or the counter: an operator whose record says it is
    ``cheap_to_recompute`` (a constant, int arithmetic on the counter), a view that is always a
    view (Note [Views] in `ir.ops.views`), which costs no copy, or a read of one element.
    Cheaper than a tape write, and nothing is kept per iteration."""
    op = OPS.get(node.kind)
    if op is not None and op.cheap_to_recompute:
        return True
    rule = None if op is None else op.view
    if rule is None or rule.strided or rule.pieces:
        return False
    return rule.when(node) or not not_one_element(node)


def differentiate_if(builder: ReverseBuilder, node: Node) -> None:
    """A prim::If on the same condition whose branches hold the reverses of the forward
    branches. See Note [Control-flow derivatives].

    Given:   %y = prim::If(%c)
               block0(): %a = aten::sin(%x) -> (%a)
               block1(): -> (%x)
    Result:  (reverse)  %dx = prim::If(%c)
                          block0(): %dx.1 = prim::GradOf[name="aten::sin"](%dy) ...
                                    -> (%dx.1)
                          block1(): -> (%dy)
    """
    needed = [k for k, out in enumerate(node.outputs) if out in builder.needs]
    output_grads = {k: builder.get_grad(node.outputs[k]) for k in needed}
    reverse_if = builder.graph.create("prim::If", [node.inputs[0]], (), num_blocks=2)
    reverse_if.source_range = node.source_range
    builder.block.append_node(reverse_if)
    branches: list[ReverseBuilder] = []
    for forward_branch, reverse_branch in zip(node.blocks, reverse_if.blocks, strict=True):
        branch = builder.nested(reverse_branch, forward_branch)
        for k, grad in output_grads.items():
            branch.set_grad(forward_branch.outputs[k], grad)
        branch.differentiate(list(forward_branch.nodes()))
        branches.append(branch)
    # Every value a branch sends a gradient to, in a fixed order; a branch that sends it
    # none returns a zero, which `specialize-autograd-zero` materialises.
    receivers = list(dict.fromkeys(v for b in branches for v, _ in b.contributions()))
    for value in receivers:
        for branch in branches:
            found = branch.grad_map.get(value)
            if found is None:
                with builder.graph.inserting_at_end(branch.block):
                    found = branch.zero_for(value)
            branch.block.register_output(found)
        builder.set_grad(value, reverse_if.add_output(value.ty, gradient_name(value)))
    for index, branch in enumerate(branches):
        builder.routes.append(
            partial(_route_branch_reads, builder.graph, node, index, branch.block)
        )


def differentiate_loop(builder: ReverseBuilder, node: Node) -> None:
    """A prim::Loop running the forward loop's iterations backwards. See Note
    [Control-flow derivatives] and Note [Loop tapes].

    Given:   %h.out = prim::Loop(%n, %true, %h0)
               block0(%i, %h):
                 %h.1 = aten::tanh(%h) -> (%true, %h.1)
    Result:  (forward)  the loop also carries %h.1_tape, a TapeArray written per iteration
             (reverse)  %dh0 = prim::Loop(%n, %true, %dh.out)
                          block0(%j, %dh.1):
                            %k = prim::sub(prim::sub(%n, 1), %j)
                            %h.1 = aten::select(%h.1_tape, 0, %k)
                            %dh = prim::GradOf[name="aten::tanh"](%dh.1) ... -> (%true, %dh)
    """
    body = node.blocks[0]
    params = body.inputs[1:]
    results = body.outputs[1:]
    carried = [k for k, param in enumerate(params) if param in builder.needs]
    output_grads = [builder.carried_start(node.outputs[k]) for k in carried]
    trips = _trip_count(builder.graph, node)
    with builder.graph.inserting_at_end(builder.block):
        go_on = builder.graph.insert_constant(True, BOOL, node.source_range)
    reverse_loop = builder.graph.create(
        "prim::Loop", [trips, go_on, *output_grads], (), num_blocks=1
    )
    reverse_loop.source_range = node.source_range
    builder.block.append_node(reverse_loop)
    reverse_body = reverse_loop.blocks[0]
    reverse_body.add_input(INT, "j")
    loop_body = builder.nested(reverse_body, body)
    for k in carried:
        grad = reverse_body.add_input(params[k].ty, gradient_name(results[k]))
        loop_body.set_grad(results[k], grad)
    loop_body.differentiate(list(body.nodes()))

    with builder.graph.inserting_at_end(reverse_body):
        reverse_body.register_output(builder.graph.insert_constant(True, BOOL))
    for k in carried:
        found = loop_body.grad_map.get(params[k])
        with builder.graph.inserting_at_end(reverse_body):
            if found is None:
                found = loop_body.zero_for(params[k])
            elif isinstance(params[k].ty, TensorType) and not can_materialise(params[k].ty):
                found = loop_body.never_the_sentinel(params[k], found)
        reverse_body.register_output(found)
        reverse_loop.add_output(params[k].ty, gradient_name(params[k]))
    # Accumulators: what the iterations send to values from outside the loop, summed.
    accumulated: list[Value] = []
    for value, contribution in loop_body.contributions():
        with builder.graph.inserting_before(reverse_loop):
            zero = builder.zero_for(value)
        reverse_loop.add_input(zero)
        total = reverse_body.add_input(value.ty, gradient_name(value))
        with builder.graph.inserting_at_end(reverse_body):
            summed = builder.graph.insert("prim::AutogradAdd", (total, contribution), (value.ty,))
        summed.output.name_hint = gradient_name(value)
        reverse_body.register_output(summed.output)
        accumulated.append(value)
        reverse_loop.add_output(value.ty, gradient_name(value))

    for k, grad in zip(carried, reverse_loop.outputs, strict=False):
        initial = node.inputs[2 + k]
        if initial in builder.needs:
            builder.set_grad(initial, grad)
    for value, grad in zip(accumulated, reverse_loop.outputs[len(carried) :], strict=True):
        builder.set_grad(value, grad)
    builder.routes.append(partial(_route_loop_reads, builder.graph, node, reverse_loop, trips))


def _forward_reads(reverse: Block, forward: Block) -> list[Value]:
    """The values of ``forward`` (its parameters and its nodes' outputs) read anywhere inside
    ``reverse``, once each, in the order first read."""
    found: dict[Value, None] = {}

    def visit(block: Block) -> None:
        for node in block.nodes():
            for value in node.inputs:
                note(value)
            for inner in node.blocks:
                visit(inner)
        for value in block.outputs:
            note(value)

    def note(value: Value) -> None:
        if value.owning_block is forward:
            found[value] = None
        elif in_block(value.node, forward):
            raise DifferentiationError(
                f"internal error: the reverse reads {value!r} from inside a nested block",
                value.node.source_range,
            )

    visit(reverse)
    return list(found)


def _replace_uses_within(value: Value, replacement: Value, block: Block) -> None:
    for use in list(value.uses):
        if in_block(use.user, block):
            use.user.replace_input(use.index, replacement)


def _known_at_compile_time(graph: Graph, value: Value, reverse: Block) -> bool:
    """When ``value`` is a constant, or a size its operands' types fix, make the reads of it in
    ``reverse`` read that constant instead (then nothing needs to be routed)."""
    node = value.node
    if node.kind == "prim::Constant":
        known, ty = node.attrs.get("value"), value.ty
    else:
        op = OPS.get(node.kind)
        if op is None or op.value_from_types is None or len(node.outputs) != 1:
            return False
        known = op.value_from_types([v.ty for v in node.inputs])
        if known is NOT_CONSTANT:
            return False
        ty = type_of_value(known)
    with graph.inserting_before(reverse.param_node.next):
        constant = graph.insert_constant(known, ty, node.source_range)
    _replace_uses_within(value, constant, reverse)
    return True


def _route_branch_reads(graph: Graph, forward_if: Node, index: int, reverse: Block) -> None:
    """Make the values of ``forward_if``'s branch ``index`` that ``reverse`` reads outputs of
    ``forward_if``: that branch returns them, the others prim::Uninitialized."""
    for value in _forward_reads(reverse, forward_if.blocks[index]):
        if _known_at_compile_time(graph, value, reverse):
            continue
        for position, branch in enumerate(forward_if.blocks):
            if position == index:
                branch.register_output(value)
                continue
            with graph.inserting_at_end(branch):
                placeholder = graph.insert("prim::Uninitialized", (), (value.ty,)).output
            branch.register_output(placeholder)
        routed = forward_if.add_output(value.ty, value.name_hint)
        _replace_uses_within(value, routed, reverse)


def _trip_count(graph: Graph, loop: Node) -> Value:
    """The number of iterations ``loop`` runs, as a value after it: its trip count when it
    runs to it, and otherwise a count it now carries."""
    if runs_its_count(loop):
        return loop.inputs[0]
    body = loop.blocks[0]
    with graph.inserting_before(loop):
        loop.add_input(graph.insert_constant(0, INT, loop.source_range))
    count = body.add_input(INT, "trips")
    with graph.inserting_at_end(body):
        one = graph.insert_constant(1, INT, loop.source_range)
        body.register_output(graph.insert("prim::add", (count, one), (INT,)).output)
    return loop.add_output(INT, "trips")


def _route_loop_reads(graph: Graph, loop: Node, reverse_loop: Node, trips: Value) -> None:
    """Tape the values of ``loop``'s body that ``reverse_loop``'s body reads, and read them
    back, iteration ``trips - 1 - j`` in reverse iteration ``j`` (Note [Loop tapes])."""
    body = loop.blocks[0]
    reverse_body = reverse_loop.blocks[0]
    reads = _forward_reads(reverse_body, body)
    if not reads:
        return
    counter = body.inputs[0]
    step = reverse_body.inputs[0]
    first = reverse_body.param_node.next
    with graph.inserting_before(first):
        one = graph.insert_constant(1, INT, loop.source_range)
        last = graph.insert("prim::sub", (trips, one), (INT,)).output
        iteration = graph.insert("prim::sub", (last, step), (INT,)).output
        iteration.name_hint = counter.name_hint or "k"
    recomputed: dict[Value, Value] = {counter: iteration}
    for value in reads:
        if _known_at_compile_time(graph, value, reverse_body):
            continue
        again = _recompute(graph, value, body, recomputed, first)
        if again is not None:
            _replace_uses_within(value, again, reverse_body)
            continue
        tape = _tape(graph, loop, value)
        with graph.inserting_before(first):
            read = graph.insert("prim::ListIndex", (tape, iteration), (value.ty,)).output
        read.name_hint = value.name_hint
        _replace_uses_within(value, read, reverse_body)


def _recompute(
    graph: Graph, value: Value, body: Block, copies: dict[Value, Value], before: Node
) -> Value | None:
    """A copy, before ``before`` in the reverse body, of what computes ``value`` in the loop
    ``body`` from values outside it and the counter (``copies`` maps it to the reverse's
    index) through views and int arithmetic only: ``xs[t]`` is read from ``xs`` again rather
    than taped. None when ``value`` is not computed that way."""
    if value in copies:
        return copies[value]
    if not in_block(value.node, body):
        return value
    node = value.node
    if node.owning_block is not body or not _recomputed(node):
        return None
    inputs: dict[Value, Value] = {}
    for operand in node.inputs:
        again = _recompute(graph, operand, body, copies, before)
        if again is None:
            return None
        inputs[operand] = again
    with graph.inserting_before(before):
        copy = graph.insert_node(graph.create_clone(node, inputs.__getitem__))
    copies.update(zip(node.outputs, copy.outputs, strict=True))
    return copies[value]


def _tape(graph: Graph, loop: Node, value: Value) -> Value:
    """Make ``loop`` carry a list that each iteration appends ``value`` to; return the list the
    loop ends with (`stack-tapes` makes it an array where it can)."""
    body = loop.blocks[0]
    hint = value.name_hint or "saved"
    name = hint if hint.endswith("_tape") else f"{hint}_tape"
    with graph.inserting_before(loop):
        start = graph.insert(
            "prim::TapeList", (), (ListType(value.ty),), source_range=loop.source_range
        ).output
    loop.add_input(start)
    carried = body.add_input(start.ty, name)
    with graph.inserting_at_end(body):
        pushed = graph.insert(
            "prim::TapePush", (carried, value), (start.ty,), source_range=loop.source_range
        )
    body.register_output(pushed.output)
    return loop.add_output(start.ty, name)
