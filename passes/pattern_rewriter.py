"""The rewrite driver of the peephole passes: a table of patterns per node kind, applied by one
worklist until no pattern matches (xDSL's RewritePattern and PatternRewriteWalker, tinygrad's
PatternMatcher).

# Note [Pattern rewrite driver]
# A peephole pass is a `PatternTable`: for each node kind, the patterns that may rewrite a node
# of that kind, tried in the order they were registered; the first that matches changes the
# graph through the `Rewriter` it is given (never behind its back: that is how the driver learns
# what changed) and returns True. `PatternTable.rewrite`
#   1. sweeps the nodes of the table's kinds in program order, a node before the nodes of its
#      blocks, so that a rewrite's result is there for the nodes after it;
#   2. then visits, until none is left, what a rewrite may have made rewritable: the nodes it
#      inserted or changed, the users of the values it replaced, the producers of the operands
#      of the nodes it destroyed or rewired, and the last reader of an operand left with one
#      use (a pattern may move work into the only reader of a value).
# A node waits at most once, and a rewrite queues only what it touched, so the work is linear in
# the graph and the rewrites, and the result is a fixed point of the table however long the
# chains it rewrites. A table that never stops (a pattern and its inverse) is a bug of the pass,
# not a slow compile: past `REWRITES_PER_NODE` rewrites per node the driver raises
# `RewriteLimitError`, naming the pattern and node it was rewriting.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import AbstractContextManager
from itertools import chain
from typing import Generic, TypeVar

from ir.graph import Graph, Node, Value
from ir.source import SourceRange
from ir.types import Type
from passes.registry import PassError

CONSTANT = "prim::Constant"
ContextT = TypeVar("ContextT")
ContextT_co = TypeVar("ContextT_co", covariant=True)  # a Rewriter[None] is a Rewriter[object]
Pattern = Callable[["Rewriter[ContextT]", Node], bool]
PatternT = TypeVar("PatternT", bound=Callable[..., bool])

# Each rewrite of the passes' tables removes a node, or moves work one node further down a
# chain; a table still rewriting after this many rewrites per node of its graph never stops.
REWRITES_PER_NODE = 64
MINIMUM_REWRITE_LIMIT = 4096


class RewriteLimitError(PassError):
    """A pattern table that did not reach a fixed point: an internal error of the pass."""


class PatternTable(Generic[ContextT]):
    """The patterns of one pass, by the kind of node they rewrite. A pattern is a function
    ``(rewriter, node) -> bool`` that changes nothing and returns False when it does not
    match. ``guard``, when given, is checked first for every node (a condition every pattern of
    the table shares, such as a floating result)."""

    def __init__(self, name: str, guard: Callable[[Node], bool] | None = None) -> None:
        self.name = name
        self.guard = guard
        self.patterns: dict[str, tuple[Pattern[ContextT], ...]] = {}

    def register(self, *kinds: str) -> Callable[[PatternT], PatternT]:
        """Add the decorated pattern for ``kinds``, after those registered before it.

        >>> @table.register("aten::neg")
        ... def double_negation(rewriter: Rewriter[None], node: Node) -> bool: ...
        """

        def add(pattern: PatternT) -> PatternT:
            for kind in kinds:
                self.patterns[kind] = (*self.patterns.get(kind, ()), pattern)
            return pattern

        return add

    def rewrite(self, graph: Graph, context: ContextT) -> bool:
        """Apply the table to every node of ``graph`` (nested blocks too) until no pattern
        matches; True if any rewrote. ``context`` is handed to the patterns (a pass's options).
        See Note [Pattern rewrite driver]."""
        patterns = self.patterns
        rewriter = Rewriter(graph, context, patterns.keys())
        sweep = _in_program_order(graph, patterns.keys())
        limit = max(MINIMUM_REWRITE_LIMIT, REWRITES_PER_NODE * len(sweep))
        rewrites = 0
        guard = self.guard
        queued = rewriter.queued
        queued.update(sweep)  # a node the sweep has still to visit is not queued again
        for node in chain(sweep, rewriter.drain()):
            queued.discard(node)
            if node.owning_block is None:  # destroyed since it was queued
                continue
            if guard is not None and not guard(node):
                continue
            for pattern in patterns[node.kind]:
                if pattern(rewriter, node):
                    rewrites += 1
                    if rewrites > limit:
                        raise RewriteLimitError(
                            f"{self.name}: still rewriting after {limit} rewrites "
                            f"(last: {pattern.__name__} on {node.kind})",
                            node.source_range,
                        )
                    break
        return rewrites > 0


def _in_program_order(graph: Graph, kinds: Collection[str]) -> list[Node]:
    """The nodes of ``kinds`` in program order, a node before the nodes of its blocks."""
    found: list[Node] = []
    walks: list[Iterator[Node]] = [graph.block.nodes()]  # one per block being walked
    while walks:
        for node in walks[-1]:
            if node.kind in kinds:
                found.append(node)
            if node.blocks:
                walks.append(chain.from_iterable(block.nodes() for block in node.blocks))
                break
        else:
            walks.pop()
    return found


class Rewriter(Generic[ContextT_co]):
    """The verbs a pattern changes the graph with: each does what the `ir.graph` verb of the
    same name does and queues what the change may make rewritable."""

    def __init__(self, graph: Graph, context: ContextT_co, kinds: Collection[str] = ()) -> None:
        self.graph = graph
        self.context = context
        self.kinds = kinds  # those some pattern rewrites: no other node is queued
        self.worklist: deque[Node] = deque()
        self.queued: set[Node] = set()

    def queue(self, node: Node) -> None:
        """Visit ``node`` again (when a pattern may rewrite it and it is not waiting already)."""
        if node.kind in self.kinds and node not in self.queued:
            self.queued.add(node)
            self.worklist.append(node)

    def queue_users(self, value: Value) -> None:
        kinds, queued = self.kinds, self.queued
        for use in value.uses:
            user = use.user
            if user.kind in kinds and user not in queued:  # `queue`, inlined: called per use
                queued.add(user)
                self.worklist.append(user)

    def drain(self) -> Iterator[Node]:
        """The queued nodes, first queued first, until none is left."""
        worklist = self.worklist
        while worklist:
            yield worklist.popleft()

    # -- inserting -------------------------------------------------------------------------

    def inserting_before(self, node: Node) -> AbstractContextManager[None]:
        return self.graph.inserting_before(node)

    def inserting_after(self, node: Node) -> AbstractContextManager[None]:
        return self.graph.inserting_after(node)

    def insert(
        self,
        kind: str,
        inputs: Sequence[Value],
        output_types: Sequence[Type],
        source_range: SourceRange | None,
    ) -> Node:
        """Insert ``kind(*inputs)`` at the graph's insertion point."""
        node = self.graph.insert(kind, inputs, output_types, source_range=source_range)
        self.queue(node)
        return node

    def insert_constant(self, value: object, ty: Type, source_range: SourceRange | None) -> Value:
        constant = self.graph.insert_constant(value, ty, source_range)
        if CONSTANT in self.kinds:
            self.queue(constant.node)
        return constant

    def insert_clone(self, node: Node, value_map: Callable[[Value], Value]) -> Node:
        """A copy of ``node`` (see `Graph.create_clone`) at the insertion point; it and the
        nodes of its blocks are visited."""
        clone = self.graph.insert_node(self.graph.create_clone(node, value_map))
        self.queue(clone)
        blocks = list(clone.blocks)
        while blocks:
            for inner in blocks.pop().nodes():
                self.queue(inner)
                blocks.extend(inner.blocks)
        return clone

    # -- changing --------------------------------------------------------------------------

    def replace_input(self, node: Node, index: int, value: Value) -> None:
        """``node.replace_input(index, value)``; ``node`` is visited again."""
        old = node.inputs[index]
        node.replace_input(index, value)
        self.queue(node)
        self.queue(old.node)
        if len(old.uses) == 1:
            self.queue(next(iter(old.uses.distinct())).user)

    def changed(self, node: Node) -> None:
        """Say that a pattern changed ``node`` in place (its types, say): it and its users are
        visited again."""
        self.queue(node)
        for out in node.outputs:
            self.queue_users(out)

    def replace_all_uses_with(self, old: Value, new: Value) -> None:
        """``old.replace_all_uses_with(new)``; the nodes that read ``old`` are visited again."""
        self.queue_users(old)
        old.replace_all_uses_with(new)

    def replace(self, node: Node, values: Sequence[Value], *, take_names: bool = False) -> None:
        """Make the uses of ``node``'s outputs read ``values`` instead, and destroy ``node``;
        with ``take_names`` the values get the outputs' name hints."""
        for out, value in zip(node.outputs, values, strict=True):
            if take_names:
                value.name_hint = out.name_hint
            if out.uses:
                self.queue_users(out)
                out.replace_all_uses_with(value)
        self.destroy(node)

    def destroy(self, node: Node) -> None:
        """``node.destroy()``; the producers of its operands are visited again."""
        operands = node.inputs[:]
        node.destroy()
        kinds = self.kinds
        for operand in operands:
            producer = operand.node
            if producer.kind in kinds:
                self.queue(producer)
            uses = operand.uses
            if len(uses) == 1:
                self.queue(next(iter(uses.distinct())).user)
