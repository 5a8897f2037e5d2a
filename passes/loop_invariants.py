"""Loop-invariant code motion: a pure node of a prim::Loop body that reads only values defined
outside the loop moves in front of the loop, so it runs (and is captured for the gradient) once
instead of once per iteration.

What `hoist-loop-invariants` moves, loop by loop, innermost loops first so that an invariant
can climb out of several nested loops in one run:

1. a node directly in the loop's body (never one inside a prim::If branch, a nested loop's body
   or any other nested block: those run conditionally or are handled as their own loop);
2. whose operator is pure (an impure node such as prim::CallFunction, or an unknown operator,
   stays), not `fresh` (Note [Fresh objects stay in the loop]) and which has no blocks of its
   own;
3. whose operands are all defined outside the body, counting the outputs of nodes hoisted
   before it, so a chain ``%t = aten::transpose(%W)``, ``%u = aten::exp(%t)`` moves whole. The
   counter and the carried values are body parameters, so nothing reading them moves.

Constants move too: they are pure, read nothing, and an invariant like ``aten::mul(%x, %two)``
can only follow its constant out of the loop. Loops inside prim::If branches, prim::GradOf and
prim::Reverse blocks are optimised like any other, but nodes only ever leave a loop body: they
stay inside whichever such block holds the loop.

# Note [Hoisting operators that can raise]
# A hoisted node runs even when the loop runs zero times. For most pure operators that is
# harmless: their shapes and dtypes were checked when the graph was specialised, so they cannot
# fail. Some raise for particular operand *values* although the shapes check: Python division
# and remainder by zero, casts of NaN, indices out of range, factorising a singular matrix. Such
# an operator (its record says ``may_raise``, given where it is registered in `ir.ops`) is
# hoisted only when the loop is sure to run its body at least once, that is when its trip
# count is a constant of at least one and its initial condition the constant True: the body's
# top-level nodes then all run in the first iteration, so moving one of them ahead changes at
# most which error is reported first, never whether one is. Otherwise it stays in the loop,
# where it only runs when the original program would have run it.
# NumPy floating-point warnings (log of a negative number) are not errors here and do not count.

# Note [Fresh objects stay in the loop]
# A `fresh` operator (prim::TapeList, prim::TapeArray: Note in `ir.ops.registry`) reads
# nothing, so it looks invariant, but each call makes a new object that later nodes fill in
# place. In a differentiated outer loop, the tape of an inner loop is created in the outer
# body, filled by the inner loop and pushed, as one row, on the outer loop's tape: hoisted, it
# would be one list that every outer iteration appends to, and every row of the outer tape the
# same list, so the reverse would read the last iteration's values for all of them.
"""

from __future__ import annotations

from ir.graph import Block, Graph, Node, Value
from ir.ops import OPS
from passes.registry import register_pass

LOOP = "prim::Loop"
CONSTANT = "prim::Constant"


@register_pass("hoist-loop-invariants")
def hoist_loop_invariants(graph: Graph) -> bool:
    """Move pure nodes of a loop body that read only values from outside the loop in front of it.

    Given:   %out = prim::Loop(%n, %true, %h0)
               block0(%i, %h):
                 %Wt = aten::transpose(%W, %none)
                 %hW = aten::matmul(%h, %Wt)
                 -> (%true, %hW)
    Execute: hoist_loop_invariants(graph)
    Result:  %Wt = aten::transpose(%W, %none)
             %out = prim::Loop(%n, %true, %h0)
               block0(%i, %h):
                 %hW = aten::matmul(%h, %Wt)
                 -> (%true, %hW)
    """
    changed = False
    # Innermost first: what leaves an inner loop lands in the outer body, where the outer
    # loop's turn can take it further out.
    for block in graph.blocks_post_order():
        loop = block.owning_node
        if loop is not None and loop.kind == LOOP:
            changed |= _hoist_out_of(loop)
    return changed


def _hoist_out_of(loop: Node) -> bool:
    body = loop.blocks[0]
    surely_runs = runs_at_least_once(loop)
    changed = False
    for node in body.nodes():
        if _is_invariant(node, body) and (surely_runs or not OPS[node.kind].may_raise):
            # In body order, each just before the loop: the hoisted nodes keep their order.
            node.move_before(loop)
            changed = True
    return changed


def _is_invariant(node: Node, body: Block) -> bool:
    op = OPS.get(node.kind)
    if op is None or not op.pure or op.fresh or node.blocks:
        return False
    # A block-free node of the body reads only values visible there: the body's own (its
    # parameters, its top-level nodes' outputs) or an enclosing block's. Hoisted nodes no
    # longer belong to the body, so their readers count as invariant too.
    return all(not _defined_in(value, body) for value in node.inputs)


def _defined_in(value: Value, block: Block) -> bool:
    return value.node.owning_block is block


def runs_at_least_once(loop: Node) -> bool:
    """True when ``loop``'s trip count is a constant of at least one and its initial condition
    the constant True, so its body surely runs."""
    trip_count, condition = loop.inputs[0], loop.inputs[1]
    if trip_count.node.kind != CONSTANT or condition.node.kind != CONSTANT:
        return False
    count = trip_count.node.attr("value")
    return (
        isinstance(count, int)
        and not isinstance(count, bool)
        and count >= 1
        and condition.node.attr("value") is True
    )
