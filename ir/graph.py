"""The graph IR: Graph, Block, Node, Value and Use, with the verbs that mutate them.

# Note [Topological invariant]
# Every block's node list is a topological order: a node may only use values defined earlier in
# its own block or in an enclosing block (block parameters count as defined first). Each mutation
# verb keeps this invariant; the move_* verbs check it, and `ir.verify` checks it after passes.

# Note [Use lists]
# A Value's `uses` has one Use(user, index) per operand slot that reads it, so `aten::add(%x, %x)`
# gives %x two uses. Only the verbs in this module touch `Node.inputs` and `Value.uses`, and they
# always change both together. `Uses` keeps them in the order they were added behind a list's
# interface, in an ordered dict, so that dropping or retargeting one is constant time however
# many there are (issue #8: an argument read by every line of a 5,000-line function).

# Note [Sentinel nodes]
# Each Block owns two sentinel nodes, as TorchScript's does: `param_node` (prim::Param), whose
# outputs are the block's parameters, and `return_node` (prim::Return), whose inputs are the
# block's results. They close the node list into a ring, so inserting or erasing never has to
# deal with an empty list or an end of list.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, KeysView, Sequence
from contextlib import contextmanager
from itertools import chain
from typing import Any, NamedTuple

from ir.errors import IRError
from ir.source import SourceRange
from ir.types import TENSOR, Type

PARAM = "prim::Param"
RETURN = "prim::Return"


class Use(NamedTuple):
    """One operand slot that reads a Value: ``user.inputs[index]``. A named tuple rather than
    a frozen dataclass: every operand of every node has one, and a tuple is made, hashed and
    compared in C (issue #8)."""

    user: Node
    index: int  # type: ignore[assignment]  # shadows tuple.index, which nothing calls


class Uses:
    """A value's uses in the order they were added, with a list's interface over an ordered
    dict, so that dropping one is constant time wherever it is: a value read by thousands of
    nodes (an argument of a long function) would make a list's search quadratic in their number.
    A use listed twice (only a broken graph has one, for the verifier to find) counts twice.
    See Note [Use lists]."""

    __slots__ = ("_counts", "_length")

    def __init__(self, uses: Iterable[Use] = ()) -> None:
        self._counts: dict[Use, int] = {}
        self._length = 0
        if uses:
            for use in uses:
                self.append(use)

    def __len__(self) -> int:
        return self._length

    def __bool__(self) -> bool:
        return self._length > 0

    def __iter__(self) -> Iterator[Use]:
        return iter(self._as_list())  # a snapshot: callers may change the uses as they go

    def __getitem__(self, position: int) -> Use:
        return self._as_list()[position]

    def __contains__(self, use: object) -> bool:
        return use in self._counts

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Uses | list):
            return self._as_list() == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(self._as_list())

    def _as_list(self) -> list[Use]:
        if len(self._counts) == self._length:
            return list(self._counts)
        return [use for use, count in self._counts.items() for _ in range(count)]

    def distinct(self) -> KeysView[Use]:
        """The uses, each once (a live view: it follows later changes)."""
        return self._counts.keys()

    def append(self, use: Use) -> None:
        counts = self._counts
        if use in counts:
            counts[use] += 1
        else:
            counts[use] = 1
        self._length += 1

    def remove(self, use: Use) -> None:
        count = self._counts.get(use)
        if count is None:
            raise ValueError(f"{use} is not a use of this value")
        if count == 1:
            del self._counts[use]
        else:
            self._counts[use] = count - 1
        self._length -= 1

    def pop(self) -> Use:
        use = next(reversed(self._counts))
        self.remove(use)
        return use

    def clear(self) -> None:
        self._counts.clear()
        self._length = 0

    def replace(self, old: Use, new: Use) -> None:
        """Put ``new`` where ``old`` is, keeping the order."""
        if old not in self._counts:
            raise ValueError(f"{old} is not a use of this value")
        if next(reversed(self._counts)) == old:
            self.remove(old)
            self.append(new)
            return
        counts: dict[Use, int] = {}
        for use, count in self._counts.items():
            key = new if use == old else use
            counts[key] = counts.get(key, 0) + count
        self._counts = counts


class Value:
    """An SSA value: output ``index`` of ``node``. A block parameter is an output of its
    block's param node."""

    __slots__ = ("index", "name_hint", "node", "ty", "uses")

    def __init__(self, node: Node, index: int, ty: Type) -> None:
        self.node = node
        self.index = index
        self.ty = ty
        self.name_hint: str | None = None  # from source variable names; printer makes it unique
        self.uses = Uses()  # See Note [Use lists]

    def __repr__(self) -> str:
        return f"<Value %{self.name_hint or '?'} : {self.ty} of {self.node.kind}>"

    @property
    def owning_block(self) -> Block | None:
        """The block this value is defined in."""
        return self.node.owning_block

    def has_uses(self) -> bool:
        return bool(self.uses)

    def set_name(self, hint: str | None) -> Value:
        self.name_hint = hint
        return self

    def replace_all_uses_with(self, new: Value) -> None:
        """Make every operand slot that reads this value read ``new`` instead.

        Given:   %y = aten::add(%x, %x)
        Execute: %x.replace_all_uses_with(%z)
        Result:  %y = aten::add(%z, %z)
        """
        if new is self:
            return
        for use in self.uses:
            use.user.inputs[use.index] = new
            new.uses.append(use)
        self.uses.clear()

    def replace_all_uses_after_node_with(self, node: Node, new: Value) -> None:
        """Like `replace_all_uses_with`, but only for users that come after ``node``."""
        kept = Uses()
        for use in self.uses:
            if node.is_before(use.user):
                use.user.inputs[use.index] = new
                new.uses.append(use)
            else:
                kept.append(use)
        self.uses = kept


class Node:
    """An operation: ``kind`` names an entry of the operator table (``aten::mul``) or a
    structural operator (``prim::If``). Nodes live in a block's ring list."""

    __slots__ = (
        "attrs",
        "blocks",
        "graph",
        "inputs",
        "kind",
        "next",
        "outputs",
        "owning_block",
        "prev",
        "source_range",
    )

    def __init__(self, graph: Graph, kind: str) -> None:
        self.graph = graph
        self.kind = kind
        self.inputs: list[Value] = []
        self.outputs: list[Value] = []
        # A tuple, so that the many nodes without blocks share the empty one (issue #8).
        self.blocks: tuple[Block, ...] = ()
        self.attrs: dict[str, Any] = {}
        self.owning_block: Block | None = None
        # Ring links; a node not in a block points at itself.
        self.prev: Node = self
        self.next: Node = self
        self.source_range: SourceRange | None = None

    def __repr__(self) -> str:
        return f"<Node {self.kind}>"

    # -- outputs and inputs ----------------------------------------------------------------

    @property
    def output(self) -> Value:
        """The only output of a single-output node."""
        if len(self.outputs) != 1:
            raise IRError(f"{self.kind} has {len(self.outputs)} outputs, not 1", self.source_range)
        return self.outputs[0]

    def add_output(self, ty: Type = TENSOR, name_hint: str | None = None) -> Value:
        value = Value(self, len(self.outputs), ty)
        value.name_hint = name_hint
        self.outputs.append(value)
        return value

    def erase_output(self, index: int) -> None:
        """Remove output ``index``, which must be unused; later outputs shift down by one."""
        if self.outputs[index].uses:
            raise IRError(f"cannot erase a used output of {self.kind}", self.source_range)
        del self.outputs[index]
        for i in range(index, len(self.outputs)):
            self.outputs[i].index = i

    def has_uses(self) -> bool:
        return any(o.uses for o in self.outputs)

    def add_input(self, value: Value) -> Value:
        """Append an operand.

        Given:   %y = prim::TupleConstruct(%a)
        Execute: (node of %y).add_input(%b)
        Result:  %y = prim::TupleConstruct(%a, %b)
        """
        value.uses.append(Use(self, len(self.inputs)))
        self.inputs.append(value)
        return value

    def insert_input(self, index: int, value: Value) -> Value:
        """Insert an operand at ``index``, shifting later operands right."""
        for i in reversed(range(index, len(self.inputs))):  # from the end: no slot taken twice
            self._retarget_use(self.inputs[i], i, i + 1)
        self.inputs.insert(index, value)
        value.uses.append(Use(self, index))
        return value

    def replace_input(self, index: int, new: Value) -> Value:
        """Make operand slot ``index`` read ``new``; returns the value it read before.

        Given:   %y = aten::mul(%a, %b)
        Execute: (node of %y).replace_input(1, %c)
        Result:  %y = aten::mul(%a, %c)
        """
        old = self.inputs[index]
        if old is new:
            return old
        old.uses.remove(Use(self, index))
        self.inputs[index] = new
        new.uses.append(Use(self, index))
        return old

    def replace_input_with(self, old: Value, new: Value) -> None:
        """Make every operand slot of this node that reads ``old`` read ``new``.

        Given:   %y = aten::add(%a, %a)
        Execute: (node of %y).replace_input_with(%a, %b)
        Result:  %y = aten::add(%b, %b)
        """
        for i, value in enumerate(self.inputs):
            if value is old:
                self.replace_input(i, new)

    def remove_input(self, index: int) -> None:
        """Drop operand ``index``; later operands shift left.

        Given:   %t = prim::TupleConstruct(%a, %b, %c)
        Execute: (node of %t).remove_input(1)
        Result:  %t = prim::TupleConstruct(%a, %c)
        """
        self.inputs[index].uses.remove(Use(self, index))
        del self.inputs[index]
        for i in range(index, len(self.inputs)):
            self._retarget_use(self.inputs[i], i + 1, i)

    def remove_all_inputs(self) -> None:
        for i, value in enumerate(self.inputs):
            value.uses.remove(Use(self, i))
        self.inputs.clear()

    def _retarget_use(self, value: Value, old_index: int, new_index: int) -> None:
        value.uses.replace(Use(self, old_index), Use(self, new_index))

    # -- blocks ----------------------------------------------------------------------------

    def add_block(self) -> Block:
        """Give this node a new, empty nested block (for prim::If, prim::Loop, prim::GradOf)."""
        block = Block(self.graph, self)
        self.blocks = (*self.blocks, block)
        return block

    def erase_block(self, index: int) -> None:
        self.blocks[index].destroy()
        self.blocks = self.blocks[:index] + self.blocks[index + 1 :]

    # -- position --------------------------------------------------------------------------

    @property
    def in_block(self) -> bool:
        return self.owning_block is not None

    def is_before(self, other: Node) -> bool:
        """True when this node comes before ``other`` in program order. For nodes in different
        blocks, compares the ancestors of each that share a block."""
        mine, theirs = self._common_ancestors(other)
        if mine is theirs or mine.kind == RETURN or theirs.kind == PARAM:
            return False
        if mine.kind == PARAM or theirs.kind == RETURN:
            return True
        # Walk forward from both at once: meeting the other node or the block's end decides, so
        # the cost is the shorter of the gap between them and the rest of the block, not the
        # whole block (moving many nodes next to a late anchor would otherwise be quadratic).
        from_mine, from_theirs = mine.next, theirs.next
        while True:
            if from_mine is theirs or from_theirs.kind == RETURN:
                return True
            if from_theirs is mine or from_mine.kind == RETURN:
                return False
            from_mine, from_theirs = from_mine.next, from_theirs.next

    def is_after(self, other: Node) -> bool:
        return other.is_before(self)

    def _common_ancestors(self, other: Node) -> tuple[Node, Node]:
        chain: dict[int, Node] = {}
        node: Node | None = self
        while node is not None and node.owning_block is not None:
            chain[id(node.owning_block)] = node
            node = node.owning_block.owning_node
        node = other
        while node is not None and node.owning_block is not None:
            mine = chain.get(id(node.owning_block))
            if mine is not None:
                return mine, node
            node = node.owning_block.owning_node
        raise IRError("nodes are not in the same graph", self.source_range)

    def _link_after(self, anchor: Node) -> None:
        if self.owning_block is not None:
            raise IRError(f"{self.kind} is already in a block", self.source_range)
        if anchor.owning_block is None:
            raise IRError("cannot insert next to a node that is not in a block", None)
        self.owning_block = anchor.owning_block
        self.prev = anchor
        self.next = anchor.next
        anchor.next.prev = self
        anchor.next = self

    def _unlink(self) -> None:
        self.prev.next = self.next
        self.next.prev = self.prev
        self.prev = self.next = self
        self.owning_block = None

    def insert_before(self, anchor: Node) -> Node:
        """Put this (unlinked) node just before ``anchor``.

        Given:   %2 = aten::exp(%1)
        Execute: (new aten::neg(%1) node).insert_before(node of %2)
        Result:  %3 = aten::neg(%1)
                 %2 = aten::exp(%1)
        """
        if anchor.kind == PARAM:
            raise IRError("cannot insert before a block's parameters", anchor.source_range)
        self._link_after(anchor.prev)
        return self

    def insert_after(self, anchor: Node) -> Node:
        """Put this (unlinked) node just after ``anchor``.

        Given:   %2 = aten::exp(%1)
        Execute: (new aten::neg(%2) node).insert_after(node of %2)
        Result:  %2 = aten::exp(%1)
                 %3 = aten::neg(%2)
        """
        if anchor.kind == RETURN:
            raise IRError("cannot insert after a block's return", anchor.source_range)
        self._link_after(anchor)
        return self

    def move_before(self, anchor: Node) -> None:
        """Move this node to just before ``anchor``, keeping the topological invariant.

        Given:   %2 = aten::exp(%1)
                 %3 = aten::neg(%1)
        Execute: (node of %3).move_before(node of %2)
        Result:  %3 = aten::neg(%1)
                 %2 = aten::exp(%1)
        """
        self._move(lambda: self.insert_before(anchor))

    def move_after(self, anchor: Node) -> None:
        """Move this node to just after ``anchor``, keeping the topological invariant.

        Given:   %2 = aten::exp(%1)
                 %3 = aten::neg(%1)
        Execute: (node of %2).move_after(node of %3)
        Result:  %3 = aten::neg(%1)
                 %2 = aten::exp(%1)
        """
        self._move(lambda: self.insert_after(anchor))

    def _move(self, place: Callable[[], Node]) -> None:
        # A move that would break Note [Topological invariant] is undone before it is refused.
        origin = self.prev
        self._unlink()
        try:
            place()
            self._check_still_topological()
        except IRError:
            if self.owning_block is not None:
                self._unlink()
            self._link_after(origin)
            raise

    def hoist_block(self, index: int = 0) -> list[Value]:
        """Move the nodes of this node's block ``index``, in order, to just before this node;
        return the block's results (it still returns them). The block must have no parameters.
        The nodes read only values visible here and each other, so the move needs no checks:
        it costs one relink per node, where copying them would cost a node each.

        Given:   %d = prim::GradOf[name="aten::neg"](%g)
                   block0(): %n = aten::neg(%g) -> (%n)
        Execute: (node of %d).hoist_block(0)
        Result:  %n = aten::neg(%g)
                 %d = prim::GradOf[name="aten::neg"](%g)
                   block0(): -> (%n)
        """
        block = self.blocks[index]
        if block.inputs:
            raise IRError(f"cannot hoist a block of {self.kind} that has parameters", None)
        if self.owning_block is None:
            raise IRError(f"cannot hoist a block of {self.kind}, which is not in a block", None)
        anchor = self.prev
        for node in list(block.nodes()):
            node._unlink()
            node._link_after(anchor)
            anchor = node
        return list(block.outputs)

    def _check_still_topological(self) -> None:
        # See Note [Topological invariant]
        for value in self.inputs:
            if not _visible_at(value, self):
                raise IRError(f"moving {self.kind} would use a value before its definition", None)
        for out in self.outputs:
            for use in out.uses:
                if not _visible_at(out, use.user):
                    raise IRError(f"moving {self.kind} would put it after a user", None)

    def destroy(self) -> None:
        """Unlink this node and drop its input uses. No output may still be used.

        Given:   %2 = aten::neg(%1)
                 %3 = aten::exp(%1)
        Execute: (node of %2).destroy()
        Result:  %3 = aten::exp(%1)
        """
        if self.kind in (PARAM, RETURN):
            raise IRError("cannot destroy a block's sentinel node", self.source_range)
        for out in self.outputs:
            if out.uses:
                users = ", ".join(sorted({u.user.kind for u in out.uses}))
                raise IRError(
                    f"cannot destroy {self.kind}: its output is still used by {users}",
                    self.source_range,
                )
        self._drop()

    def _drop(self) -> None:
        for block in reversed(self.blocks):
            block.destroy()
        self.remove_all_inputs()
        if self.owning_block is not None:
            self._unlink()

    # -- metadata --------------------------------------------------------------------------

    def copy_metadata(self, other: Node) -> Node:
        """Take ``other``'s source range (passes call this on every node they create)."""
        self.source_range = other.source_range
        return self

    def attr(self, name: str, default: Any = None) -> Any:
        return self.attrs.get(name, default)


class Block:
    """A list of nodes between a param sentinel and a return sentinel.
    See Note [Sentinel nodes]."""

    __slots__ = ("graph", "owning_node", "param_node", "return_node")

    def __init__(self, graph: Graph, owning_node: Node | None) -> None:
        self.graph = graph
        self.owning_node = owning_node
        self.param_node = Node(graph, PARAM)
        self.return_node = Node(graph, RETURN)
        self.param_node.owning_block = self
        self.return_node.owning_block = self
        self.param_node.next = self.param_node.prev = self.return_node
        self.return_node.next = self.return_node.prev = self.param_node

    @property
    def inputs(self) -> list[Value]:
        """The block's parameters."""
        return self.param_node.outputs

    @property
    def outputs(self) -> list[Value]:
        """The values the block returns."""
        return self.return_node.inputs

    def add_input(self, ty: Type = TENSOR, name_hint: str | None = None) -> Value:
        return self.param_node.add_output(ty, name_hint)

    def insert_input(self, index: int, ty: Type = TENSOR, name_hint: str | None = None) -> Value:
        value = Value(self.param_node, index, ty)
        value.name_hint = name_hint
        self.param_node.outputs.insert(index, value)
        for i in range(index + 1, len(self.param_node.outputs)):
            self.param_node.outputs[i].index = i
        return value

    def erase_input(self, index: int) -> None:
        self.param_node.erase_output(index)

    def register_output(self, value: Value) -> int:
        """Append ``value`` to the block's results; returns its position."""
        self.return_node.add_input(value)
        return len(self.return_node.inputs) - 1

    def erase_output(self, index: int) -> None:
        self.return_node.remove_input(index)

    def nodes(self, reverse: bool = False) -> Iterator[Node]:
        """The block's nodes in order (sentinels excluded). Destroying the node just yielded is
        safe: the next one is fetched before yielding."""
        node = self.return_node.prev if reverse else self.param_node.next
        end = self.param_node if reverse else self.return_node
        while node is not end:
            following = node.prev if reverse else node.next
            yield node
            node = following

    def append_node(self, node: Node) -> Node:
        return node.insert_before(self.return_node)

    def prepend_node(self, node: Node) -> Node:
        return node.insert_after(self.param_node)

    def is_empty(self) -> bool:
        return self.param_node.next is self.return_node

    def clone_from(self, source: Block, value_map: Callable[[Value], Value]) -> None:
        """Append copies of ``source``'s parameters, nodes and results to this (empty) block.
        ``value_map`` gives the copy of any value defined outside ``source``.

        Given:   block0(%a): %b = aten::neg(%a) -> (%b)
        Execute: empty.clone_from(block0, outer_map)
        Result:  empty is block0(%a.1): %b.1 = aten::neg(%a.1) -> (%b.1)
        """
        local: dict[Value, Value] = {}
        for param in source.inputs:
            local[param] = self.add_input(param.ty, param.name_hint)
        self._clone_body(source, local, value_map)

    def _clone_body(
        self, source: Block, local: dict[Value, Value], value_map: Callable[[Value], Value]
    ) -> None:
        def lookup(value: Value) -> Value:
            found = local.get(value)
            return found if found is not None else value_map(value)

        for node in source.nodes():
            copy = self.graph.create_clone(node, lookup)
            self.append_node(copy)
            for old, new in zip(node.outputs, copy.outputs, strict=True):
                local[old] = new
        for result in source.outputs:
            self.register_output(lookup(result))

    def destroy(self) -> None:
        """Drop every node of this block (innermost first) and its results' uses."""
        self.return_node.remove_all_inputs()
        for node in self.nodes(reverse=True):
            for out in node.outputs:
                out.uses.clear()
            node._drop()


class Graph:
    """A function: a top-level block plus an insertion point for building.

    >>> g = Graph("f")
    >>> x = g.add_input(name_hint="x")
    >>> y = g.insert("aten::neg", [x]).output
    >>> g.register_output(y)
    0
    """

    __slots__ = ("block", "insert_point", "name")

    def __init__(self, name: str | None = None) -> None:
        self.name = name
        self.block = Block(self, None)
        # New nodes go just before this node; by default, at the end of the top-level block.
        self.insert_point: Node = self.block.return_node

    def __str__(self) -> str:
        from ir.printer import print_graph  # the printer imports this module

        return print_graph(self)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        """IPython shows a graph as its IR text (when it shows no picture)."""
        printer.text(str(self))

    def _repr_svg_(self) -> str | None:
        """Jupyter shows a graph as a picture (`to_dot`), or as its IR text when Graphviz is not
        installed or the graph is too large to lay out quickly."""
        from ir.dot import LARGEST_PICTURE, try_render_svg  # which imports this module

        if sum(1 for _ in self.all_nodes()) > LARGEST_PICTURE:
            return None
        return try_render_svg(self.to_dot())

    def to_dot(self, fold_constants: bool = True) -> str:
        """Graphviz DOT text that draws this graph: a box per node with its operator, outputs
        and source line, nested blocks as clusters, short constants folded into their users
        (Note [Drawing graphs] in `ir.dot`).

        >>> Path("loss.dot").write_text(ad.script(loss).graph.to_dot())
        >>> # dot -Tsvg loss.dot -o loss.svg
        """
        from ir.dot import graph_to_dot

        return graph_to_dot(self, fold_constants)

    def to_networkx(self) -> Any:
        """A `networkx.DiGraph` of this graph's value flow: a vertex per node (nested ones
        too), graph input, block parameter and return, and an edge per value use, with
        operator, type and source attributes (`ir.flow.to_networkx`). Needs networkx.

        >>> g = graph.to_networkx()
        >>> g.nodes["n0"]["op"], networkx.has_path(g, "input0", "return")
        ('aten::matmul', True)
        """
        from ir.flow import to_networkx

        return to_networkx(self)

    @property
    def inputs(self) -> list[Value]:
        return self.block.inputs

    @property
    def outputs(self) -> list[Value]:
        return self.block.outputs

    def add_input(self, ty: Type = TENSOR, name_hint: str | None = None) -> Value:
        return self.block.add_input(ty, name_hint)

    def register_output(self, value: Value) -> int:
        return self.block.register_output(value)

    def nodes(self) -> Iterator[Node]:
        """The top-level nodes (not those of nested blocks)."""
        return self.block.nodes()

    def all_nodes(self) -> Iterator[Node]:
        """Every node, nested ones included, in program order (a node before its blocks')."""
        return _walk(self.block)

    def blocks_post_order(self) -> list[Block]:
        """Every block, innermost first, the top-level block last."""
        order: list[Block] = []

        def visit(block: Block) -> None:
            for node in block.nodes():
                for inner in node.blocks:
                    visit(inner)
            order.append(block)

        visit(self.block)
        return order

    # -- creating nodes --------------------------------------------------------------------

    def create(
        self,
        kind: str,
        inputs: Sequence[Value] = (),
        output_types: Sequence[Type] = (TENSOR,),
        attrs: dict[str, Any] | None = None,
        num_blocks: int = 0,
    ) -> Node:
        """A new node, not yet in any block."""
        node = Node(self, kind)
        for value in inputs:
            node.add_input(value)
        for ty in output_types:
            node.add_output(ty)
        if attrs:
            node.attrs.update(attrs)
        for _ in range(num_blocks):
            node.add_block()
        return node

    def insert_node(self, node: Node) -> Node:
        """Insert ``node`` at the insertion point."""
        return node.insert_before(self.insert_point)

    def insert(
        self,
        kind: str,
        inputs: Sequence[Value] = (),
        output_types: Sequence[Type] = (TENSOR,),
        attrs: dict[str, Any] | None = None,
        num_blocks: int = 0,
        source_range: SourceRange | None = None,
    ) -> Node:
        """Create a node and insert it at the insertion point."""
        node = self.create(kind, inputs, output_types, attrs, num_blocks)
        node.source_range = source_range
        return self.insert_node(node)

    def insert_constant(
        self, value: Any, ty: Type, source_range: SourceRange | None = None
    ) -> Value:
        """Insert ``prim::Constant[value=...]`` at the insertion point and return its output."""
        return self.insert("prim::Constant", (), (ty,), {"value": value}, 0, source_range).output

    @contextmanager
    def inserting_before(self, node: Node) -> Iterator[None]:
        """Within the ``with``, new nodes go just before ``node``."""
        saved = self.insert_point
        self.insert_point = node
        try:
            yield
        finally:
            self.insert_point = saved

    @contextmanager
    def inserting_after(self, node: Node) -> Iterator[None]:
        """Within the ``with``, new nodes go just after ``node`` (in order of insertion)."""
        with self.inserting_before(node.next):
            yield

    @contextmanager
    def inserting_at_end(self, block: Block) -> Iterator[None]:
        """Within the ``with``, new nodes are appended to ``block``."""
        with self.inserting_before(block.return_node):
            yield

    def create_clone(
        self, node: Node, value_map: Callable[[Value], Value], copy_blocks: bool = True
    ) -> Node:
        """A copy of ``node`` (not in any block) whose inputs are ``value_map`` of the
        original's; nested blocks are copied too. The node may come from another graph."""
        copy = Node(self, node.kind)
        if node.attrs:
            copy.attrs = dict(node.attrs)
        copy.source_range = node.source_range
        inputs = copy.inputs
        for index, value in enumerate(node.inputs):  # add_input, inlined: clones are many
            mapped = value_map(value)
            mapped.uses.append(Use(copy, index))
            inputs.append(mapped)
        outputs = copy.outputs
        for index, out in enumerate(node.outputs):
            value = Value(copy, index, out.ty)
            value.name_hint = out.name_hint
            outputs.append(value)
        if copy_blocks:
            for block in node.blocks:
                copy.add_block().clone_from(block, value_map)
        return copy

    def copy(self) -> Graph:
        """A deep copy of this graph."""
        new = Graph(self.name)
        mapping: dict[Value, Value] = {}
        for value in self.inputs:
            mapping[value] = new.add_input(value.ty, value.name_hint)
        new.block._clone_body(self.block, mapping, mapping.__getitem__)
        return new


def _visible_at(value: Value, user: Node) -> bool:
    """True when ``value`` is defined before ``user`` in ``user``'s block or an enclosing one."""
    definer = value.node
    node: Node | None = user
    while node is not None and node.owning_block is not definer.owning_block:
        block = node.owning_block
        node = block.owning_node if block is not None else None
    return node is not None and definer.is_before(node)


def _walk(block: Block) -> Iterator[Node]:
    # One generator and a stack of the blocks' iterators, not a generator per nested block:
    # each node is yielded once, however deep (the GradOf of every operation is one deeper).
    stack: list[Iterator[Node]] = [block.nodes()]
    while stack:
        for node in stack[-1]:
            yield node
            if node.blocks:
                stack.append(chain.from_iterable(inner.nodes() for inner in node.blocks))
                break
        else:
            stack.pop()
