"""The IR verifier: `verify(graph)` checks every structural invariant a pass must keep.

It checks, in one walk over the graph (linear in its size):

- ownership: every block, node and value points back at its owner, and each block's ring of
  nodes is closed and doubly linked;
- Note [Topological invariant]: a node uses only values defined earlier in its own block or in
  an enclosing block (block parameters count as defined first), never values from a sibling or
  inner block;
- Note [Use lists]: each value's uses are exactly the operand slots that read it;
- operator schemas: known kind, operand count and types, output count, number of blocks, and the
  block arities of prim::If, prim::Loop, prim::GradOf and prim::Native, and that a
  prim::Native block reads nothing but its own values (Note [Native regions] in
  `passes.native_regions`).
"""

from __future__ import annotations

from collections.abc import Set

import numpy as np

from ir.errors import VerifyError
from ir.graph import PARAM, RETURN, Block, Graph, Node, Use, Value
from ir.ops import OPS
from ir.printer import format_attr, print_node
from ir.types import (
    BOOL,
    FLOAT,
    INT,
    NONE,
    SCALAR,
    STR,
    ListType,
    OptionalType,
    TensorType,
    TupleType,
    Type,
)

CONSTANT = "prim::Constant"
IF = "prim::If"
LOOP = "prim::Loop"
GRAD_OF = "prim::GradOf"
NATIVE = "prim::Native"


def verify(graph: Graph) -> None:
    """Raise VerifyError, naming the offending node and its source range, if ``graph`` breaks an
    IR invariant; return None otherwise."""
    _Verifier(graph).run()


def describe(value: Value) -> str:
    """A short name for ``value`` in a message: its hint, or which output of which node it is."""
    if value.name_hint is not None:
        return f"%{value.name_hint}"
    if value.node.kind == PARAM:
        return f"block parameter {value.index}"
    return f"output {value.index} of {value.node.kind}"


def node_error(node: Node, message: str) -> VerifyError:
    """A VerifyError about ``node``: the message, then the node's printed line."""
    if node.kind in (PARAM, RETURN):
        owner = node.owning_block.owning_node if node.owning_block is not None else None
        # The sentinel's own range when it has one: the `return` or `->` line of IR text.
        located = node.source_range or (owner.source_range if owner is not None else None)
        error = VerifyError(message, located)
        where = "the graph" if owner is None else f"a block of {print_node(owner)}"
        error.add_note_line(f"in the {'parameters' if node.kind == PARAM else 'return'} of {where}")
    else:
        error = VerifyError(message, node.source_range)
        error.add_note_line(f"in {print_node(node)}")
    return error


class _Verifier:
    """One verification walk. ``defined`` holds the values in scope at the current point;
    leaving a block moves its values to ``out_of_scope`` so a later use can be named exactly."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.defined: set[Value] = set()
        self.out_of_scope: set[Value] = set()
        self.live_nodes: set[Node] = set()
        self.use_sets: dict[Value, Set[Use]] = {}
        # Operand types, output and block counts that passed an operator's schema check: the
        # check depends on nothing else, and a long function repeats a few of them.
        self.schemas_passed: set[tuple[str | int, ...]] = set()

    def run(self) -> None:
        graph = self.graph
        if graph.block.owning_node is not None:
            raise VerifyError("the graph's top-level block has an owning node")
        self.check_block(graph.block, None)
        self.check_users_alive()

    # -- blocks and ring links -------------------------------------------------------------

    def check_block(self, block: Block, owner: Node | None) -> None:
        if block.graph is not self.graph:
            raise self.block_error(owner, "a block belongs to another graph")
        if block.owning_node is not owner:
            raise self.block_error(owner, "a block's owning node is not the node that holds it")
        for sentinel, kind in ((block.param_node, PARAM), (block.return_node, RETURN)):
            if sentinel.kind != kind or sentinel.owning_block is not block:
                raise self.block_error(owner, f"a block's {kind} sentinel is not its own")
        if block.param_node.inputs or block.return_node.outputs:
            raise self.block_error(owner, "a block's sentinel nodes have operands or results")

        self.define_outputs(block.param_node)
        defined_here: list[Value] = list(block.param_node.outputs)
        node = block.param_node
        while True:
            following = node.next
            if following.prev is not node:
                raise node_error(node, "broken ring link: node.next.prev is not the node")
            node = following
            if node is block.return_node:
                break
            if node is block.param_node or node in self.live_nodes:
                raise self.block_error(owner, "a block's node ring does not reach its return")
            self.check_node(node, block)
            defined_here.extend(node.outputs)
        self.live_nodes.add(block.param_node)
        self.check_operands(block.return_node)
        self.live_nodes.add(block.return_node)

        for value in defined_here:
            self.defined.discard(value)
            self.out_of_scope.add(value)

    def block_error(self, owner: Node | None, message: str) -> VerifyError:
        if owner is None:
            return VerifyError(f"{message} (top-level block of graph @{self.graph.name})")
        return node_error(owner, message)

    # -- nodes -----------------------------------------------------------------------------

    def check_node(self, node: Node, block: Block) -> None:
        if node.owning_block is not block:
            raise node_error(node, "node's owning_block is not the block that lists it")
        if node.graph is not self.graph:
            raise node_error(node, "node belongs to another graph")
        if node.kind in (PARAM, RETURN):
            raise node_error(node, f"a {node.kind} sentinel in the middle of a block")
        self.check_operands(node)
        self.check_schema(node)
        if node.kind == CONSTANT and len(node.outputs) == 1 and "value" in node.attrs:
            value = node.attrs["value"]
            if not _holds(node.output.ty, value):
                shown = _shorten(format_attr(value))
                raise node_error(node, f"a constant of type {node.output.ty} cannot hold {shown}")
        self.live_nodes.add(node)
        if node.blocks:
            for inner in node.blocks:
                self.check_block(inner, node)
            self.check_structure(node)
        self.define_outputs(node)

    def define_outputs(self, node: Node) -> None:
        defined, out_of_scope, use_sets = self.defined, self.out_of_scope, self.use_sets
        for index, value in enumerate(node.outputs):
            if value.node is not node or value.index != index:
                raise node_error(node, f"output {index} does not record its node and index")
            if value in defined or value in out_of_scope:
                raise node_error(node, f"{describe(value)} is defined twice")
            all_uses = value.uses
            uses = all_uses.distinct()
            if len(uses) != len(all_uses):
                raise node_error(node, f"{describe(value)} lists the same use twice")
            for user, slot in uses:
                inputs = user.inputs
                if not 0 <= slot < len(inputs) or inputs[slot] is not value:
                    raise node_error(
                        node,
                        f"{describe(value)} lists a use by operand {slot} of {user.kind}, "
                        "which does not read it",
                    )
            use_sets[value] = uses
            defined.add(value)

    def check_operands(self, node: Node) -> None:
        # See Note [Topological invariant]: `defined` is exactly the set of values in scope.
        defined, use_sets = self.defined, self.use_sets
        for index, value in enumerate(node.inputs):
            if value not in defined:
                if value in self.out_of_scope:
                    problem = "is used outside the block that defines it"
                elif value.node.graph is not self.graph:
                    problem = "comes from another graph"
                else:
                    problem = "is used before its definition"
                raise node_error(node, f"operand {index}: {describe(value)} {problem}")
            if (node, index) not in use_sets[value]:  # a Use is a tuple: this is Use(node, index)
                raise node_error(
                    node, f"operand {index}: {describe(value)} has no use entry for this slot"
                )

    def check_users_alive(self) -> None:
        for value, uses in self.use_sets.items():
            for use in uses:
                if use.user not in self.live_nodes:
                    raise node_error(
                        value.node,
                        f"{describe(value)} lists a use by {use.user.kind}, "
                        "which is not in the graph",
                    )

    # -- schemas ---------------------------------------------------------------------------

    def check_schema(self, node: Node) -> None:
        # Types are immutable and the graph holds them while it is verified: ids suffice.
        key: tuple[str | int, ...] = (
            node.kind,
            len(node.outputs),
            len(node.blocks),
            *[id(v.ty) for v in node.inputs],
        )
        if key not in self.schemas_passed:
            self.check_schema_of(node)
            self.schemas_passed.add(key)

    def check_schema_of(self, node: Node) -> None:
        op = OPS.get(node.kind)
        if op is None:
            raise node_error(node, f"unknown operator {node.kind}")
        schema = op.schema
        arguments = schema.arguments
        count = len(node.inputs)
        if schema.variadic:
            fixed = len(arguments) - 1
            if count < fixed:
                raise node_error(node, f"{node.kind} takes at least {fixed} operands, got {count}")
        elif count != len(arguments):
            # See Note [Operator conventions] in ir.ops.registry: defaults are filled in.
            raise node_error(node, f"{node.kind} takes {len(arguments)} operands, got {count}")
        for index, value in enumerate(node.inputs):
            argument = arguments[min(index, len(arguments) - 1)]
            if not value.ty.is_subtype_of(argument.ty):
                raise node_error(
                    node,
                    f"operand {index} ({argument.name}) of {node.kind} has type {value.ty}, "
                    f"expected {argument.ty}",
                )
        if not schema.variadic_returns and len(node.outputs) != len(schema.returns):
            raise node_error(
                node,
                f"{node.kind} has {len(node.outputs)} outputs, its schema returns "
                f"{len(schema.returns)}",
            )
        if len(node.blocks) != op.num_blocks:
            raise node_error(
                node, f"{node.kind} has {len(node.blocks)} blocks, expected {op.num_blocks}"
            )

    def check_structure(self, node: Node) -> None:
        if node.kind == IF:
            for index, block in enumerate(node.blocks):
                if block.inputs:
                    raise node_error(node, f"prim::If block{index} has parameters")
                check_returns(node, block, index, node.outputs, "the node has outputs")
        elif node.kind == LOOP:
            carried = len(node.inputs) - 2
            body = node.blocks[0]
            if len(node.outputs) != carried:
                raise node_error(
                    node, f"prim::Loop carries {carried} values but has {len(node.outputs)} outputs"
                )
            if len(body.inputs) != 1 + carried:
                raise node_error(
                    node,
                    f"prim::Loop body has {len(body.inputs)} parameters, expected {1 + carried} "
                    "(the iteration count, then the carried values)",
                )
            if len(body.outputs) != 1 + carried:
                raise node_error(
                    node,
                    f"prim::Loop body returns {len(body.outputs)} values, expected {1 + carried} "
                    "(the continue condition, then the carried values)",
                )
        elif node.kind == GRAD_OF:
            check_returns(node, node.blocks[0], 0, node.outputs, "the node has outputs")
        elif node.kind == NATIVE:
            body = node.blocks[0]
            if len(body.inputs) != len(node.inputs):
                raise node_error(
                    node,
                    f"prim::Native block has {len(body.inputs)} parameters, expected "
                    f"{len(node.inputs)} (one per operand)",
                )
            check_returns(node, body, 0, node.outputs, "the node has outputs")
            check_isolated(node)


def check_isolated(node: Node) -> None:
    """A prim::Native block is compiled as a function of its parameters alone: none of its
    nodes, at any depth, may read a value defined outside it."""
    inside: set[Value] = set()
    pending = [node.blocks[0]]
    blocks: list[Block] = []
    while pending:
        block = pending.pop()
        blocks.append(block)
        inside.update(block.inputs)
        for inner in block.nodes():
            inside.update(inner.outputs)
            pending.extend(inner.blocks)
    for block in blocks:
        for inner in [*block.nodes(), block.return_node]:
            for value in inner.inputs:
                if value not in inside:
                    raise node_error(
                        node,
                        f"prim::Native block reads {describe(value)}, defined outside it: "
                        "a region reads nothing but its parameters",
                    )


def check_returns(node: Node, block: Block, index: int, outputs: list[Value], why: str) -> None:
    if len(block.outputs) != len(outputs):
        raise node_error(
            node,
            f"{node.kind} block{index} returns {len(block.outputs)} values, expected "
            f"{len(outputs)} ({why})",
        )


# The Python values a constant of a Python type may hold. (Lenient: NumPy scalars pass, and
# ints where a float or bool is declared, as Python itself allows them there.)
_PYTHON_TYPES: dict[Type, type | tuple[type, ...]] = {
    INT: (int, np.integer),
    FLOAT: (int, float, np.integer, np.floating),
    BOOL: (int, np.bool_, np.integer),
    STR: str,
    NONE: type(None),
    SCALAR: (int, float, np.number, np.bool_),
}


def _holds(ty: Type, value: object) -> bool:
    """Whether a constant of type ``ty`` may hold ``value``: a list where an int is declared,
    or a tuple of the wrong length, made passes that take the type at its word fail."""
    python_type = _PYTHON_TYPES.get(ty)
    if python_type is not None:
        return isinstance(value, python_type)
    if isinstance(ty, TensorType):
        return not isinstance(value, list | tuple | str | type(None))
    if isinstance(ty, TupleType):
        return (
            isinstance(value, tuple | list)
            and len(value) == len(ty.elems)
            and all(_holds(elem, item) for elem, item in zip(ty.elems, value, strict=True))
        )
    if isinstance(ty, ListType):
        return isinstance(value, list | tuple) and all(_holds(ty.elem, item) for item in value)
    if isinstance(ty, OptionalType):
        return value is None or _holds(ty.elem, value)
    return True  # Any, and the types of values no pass looks into


def _shorten(text: str) -> str:
    return text if len(text) <= 40 else text[:37] + "..."
