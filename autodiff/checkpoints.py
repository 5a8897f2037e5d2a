"""Rematerialisation: ``ad.checkpoint(fn)``, whose calls from scripted code the backward
recomputes instead of the forward keeping what they computed (JAX's ``jax.checkpoint``).

# Note [Checkpoints]
# ``layer = ad.checkpoint(fn)`` called from scripted code compiles as any call of ``fn``, its
# body inlined, between marks (`frontend.checkpoint_calls`): each array and float it is given
# passes through ``aten::_checkpoint_in(%x, "fn")`` and each one it returns through
# ``aten::_checkpoint_out(%y, "fn")``, both the identity (leaves of containers one by one).
# The marks are plain operators, so every pass keeps them where they belong and the IR shows
# them at every stage; the checkpointed region is what lies between them in the data flow:
# the nodes of one block that some ``_checkpoint_in`` reaches and that reach some
# ``_checkpoint_out`` (`checkpointed_nodes`), pure and without blocks, plus the marks in.
#
# Differentiation adds the reverse of each node as always; what it changes is what the
# reverse reads. Forward values ``df`` reads are what ``f`` keeps for it (Note [The reverse
# block], lambda lifting). Once the reverse of a block is built (`ReverseBuilder.
# differentiate`), `recompute_checkpointed` gives every read of a value of a region in that
# block a copy of the region's nodes that compute it, inserted into the reverse block just
# before the first node that reads it, starting from copies of the ``_checkpoint_in`` marks:
# ``df`` then reads the call's inputs (and what it returns, which a read of a value the call
# returns takes instead of recomputing it), and ``f`` keeps only those. The mark in is
# ``fresh`` so that CSE never merges its copy with the forward's, which would merge
# everything it feeds back too (so two calls with the same arguments are not merged either,
# as JAX's ``prevent_cse`` does by default). The formulas' saved context of a node in a region
# (a mask, a pivot) counts as in the region (`ReverseBuilder.inline_forward`), so it is
# recomputed too.
#
# The gradient is the same to the bit: the copies are the same operators on the same inputs.
# Placing each copy just before its first reader recomputes layer by layer in a chain of
# checkpointed layers, and the generated code frees each layer's copies after its reverse, so
# ``df`` holds one layer's intermediates at a time. A region in a loop body or a branch is
# recomputed in the reverse of that body or branch, so a reverse loop tapes only the call's
# inputs. What a region cannot recompute, ``f`` keeps, as without checkpoint: the results of
# impure nodes (a random draw must not be drawn again), and of nodes with blocks (a loop or a
# branch inside the checkpointed function, whose own reverse reads its body's values through
# tapes). Higher derivatives go through: the marks have identity formulas, the recomputed
# copies are ordinary operators, and a gradient inlined as a graph (Note [Gradient graphs]) is
# checkpointed again when differentiated again.
#
# Both marks return their operand itself and are views of it (`ir.ops.checkpoints`), so a
# write the function makes into an argument, or its caller into what it returned, reaches the
# array as in NumPy. Ints, strings, constants and lists built at run time pass unmarked: the
# checkpointed code decides things on the first ones while compiling, and ``f`` keeps what
# reads a list. ``ad.checkpoint`` marks calls: the function handed to ``ad.grad`` itself is
# refused, naming what to differentiate instead.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from types import MethodType
from typing import Any, Generic, ParamSpec, TypeVar

from ir.graph import Block, Graph, Node, Value
from ir.ops import OPS

CHECKPOINT_IN = "aten::_checkpoint_in"
CHECKPOINT_OUT = "aten::_checkpoint_out"

P = ParamSpec("P")
R = TypeVar("R")


class Checkpointed(Generic[P, R]):
    """What ``ad.checkpoint(fn)`` returns: ``fn`` itself when called from Python, a
    checkpointed call when called from scripted code (Note [Checkpoints])."""

    def __init__(self, fn: Callable[P, R]) -> None:
        self.fn = fn
        functools.update_wrapper(self, fn, updated=())

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        return self.fn(*args, **kwargs)

    def __get__(self, instance: object, owner: type | None = None) -> Any:
        """A checkpointed method, bound to ``instance`` as a function would be."""
        if instance is None:
            return self
        return Checkpointed(MethodType(self.fn, instance))

    @property
    def __autodiff_checkpoint__(self) -> Callable[P, R]:
        """The function the frontend compiles between the marks."""
        return self.fn

    def __repr__(self) -> str:
        return f"checkpoint({getattr(self.fn, '__qualname__', self.fn)!r})"


def checkpoint(fn: Callable[P, R]) -> Checkpointed[P, R]:
    """``fn``, whose calls from a differentiated function are recomputed by the backward
    instead of the forward keeping their intermediates: ``f`` keeps the call's inputs, and
    ``df`` runs the call's forward again, then its backward. The gradient is the same; the
    memory ``f`` keeps for ``df`` drops (Note [Checkpoints]). Also ``ad.remat``.

    >>> @ad.checkpoint
    ... def layer(x, W, b):
    ...     return np.tanh(x @ W + b)
    >>> def loss(params, x):
    ...     for W, b in params:
    ...         x = layer(x, W, b)
    ...     return np.sum(x**2)
    >>> grads = ad.grad(loss)(params, x)      # df recomputes each layer before its backward
    """
    if not callable(fn):
        raise TypeError(f"ad.checkpoint takes a function, got {type(fn).__name__}")
    return Checkpointed(fn)


remat = checkpoint


def checkpointed_nodes(graph: Graph) -> set[Node]:
    """The nodes of the checkpointed regions of every block of ``graph`` (Note
    [Checkpoints]); empty when it has no marks."""
    marks = [node for node in graph.all_nodes() if node.kind == CHECKPOINT_IN]
    region: set[Node] = set()
    for block in dict.fromkeys(node.owning_block for node in marks):
        if block is not None:
            region |= _block_region(block)
    return region


def _block_region(block: Block) -> set[Node]:
    """The nodes of ``block`` between its marks: reached from a mark in and reaching a mark
    out through recomputable nodes, with the marks in whose values they read."""
    reached: set[Value] = set()
    candidates: list[Node] = []
    for node in block.nodes():
        enters = node.kind == CHECKPOINT_IN
        if enters or (_recomputable(node) and any(value in reached for value in node.inputs)):
            candidates.append(node)
            reached.update(node.outputs)
    wanted: set[Value] = {node.inputs[0] for node in block.nodes() if node.kind == CHECKPOINT_OUT}
    region: set[Node] = set()
    for node in reversed(candidates):
        if any(value in wanted for value in node.outputs):
            region.add(node)
            wanted.update(node.inputs)
    return region


def _recomputable(node: Node) -> bool:
    """Whether running a copy of ``node`` again gives the same value: a pure operator with no
    blocks (not a mark: a region ends at its marks out)."""
    op = OPS.get(node.kind)
    return (
        op is not None
        and op.pure
        and not op.fresh
        and not node.blocks
        and node.kind != CHECKPOINT_OUT
    )


def recompute_checkpointed(graph: Graph, forward: Block, reverse: Block, region: set[Node]) -> bool:
    """Make the reverse block ``reverse`` of ``forward`` read the values of ``forward``'s
    checkpointed regions from copies it recomputes, each just before its first reader (Note
    [Checkpoints]). True if there was anything to recompute.

    Given:   (forward)  %x.1 = aten::_checkpoint_in(%x, "layer"); %h = aten::tanh(%x.1)
                        %y = aten::_checkpoint_out(%h, "layer"); %s = aten::mul(%y, %y)
             (reverse)  ... GradOf[name="aten::tanh"] reads %h; GradOf[name="aten::mul"] %y
    Execute: recompute_checkpointed(graph, forward, reverse, checkpointed_nodes(graph))
    Result:  (reverse)  the tanh GradOf reads %y (what the call returns); a read of a value
                        inside the call reads %v.1 from %x.2 = aten::_checkpoint_in(%x, ...)
    """
    members = [node for node in forward.nodes() if node in region]
    if not members:
        return False
    computed = {value for node in members for value in node.outputs}
    returned = {
        node.inputs[0]: node.output
        for node in forward.nodes()
        if node.kind == CHECKPOINT_OUT and node.inputs[0] in computed
    }
    position = {node: i for i, node in enumerate(reverse.nodes())}
    position[reverse.return_node] = len(position)
    reads: list[tuple[int, Value, Node, int]] = []
    for value in computed:
        for use in value.uses:
            anchor = _node_within(use.user, reverse)
            if anchor is not None:
                reads.append((position[anchor], value, use.user, use.index))
    reads.sort(key=lambda read: read[0])
    anchors = {position[node]: node for node in position}
    order = {node: i for i, node in enumerate(members)}
    copies: dict[Value, Value] = {}

    def recomputed(value: Value, before: Node) -> Value:
        """A copy of ``value`` before ``before``, copying what it needs that has no copy yet
        (in forward order: a copy made for an earlier reader sits before later ones)."""
        if value not in computed or value in copies:
            return copies.get(value, value)
        needed: set[Node] = set()
        pending = [value.node]
        while pending:  # no recursion: a checkpointed function may be thousands of nodes long
            node = pending.pop()
            if node not in needed:
                needed.add(node)
                pending.extend(v.node for v in node.inputs if v in computed and v not in copies)
        with graph.inserting_before(before):
            for node in sorted(needed, key=order.__getitem__):
                copy = graph.insert_node(graph.create_clone(node, lambda v: copies.get(v, v)))
                copies.update(zip(node.outputs, copy.outputs, strict=True))
        return copies[value]

    for at, value, user, index in reads:
        replacement = returned.get(value) or recomputed(value, anchors[at])
        user.replace_input(index, replacement)
    return bool(reads)


def _node_within(user: Node, block: Block) -> Node | None:
    """The node of ``block`` (or its return) that is or holds ``user``; None when ``user`` is
    not inside ``block``."""
    node: Node | None = user
    while node is not None and node.owning_block is not block:
        owner = node.owning_block
        node = owner.owning_node if owner is not None else None
    return node
