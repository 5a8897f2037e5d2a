"""Specialisation: recompute every value's type (dtype, shape) from the graph inputs' types.

Each operator's shape rule sees its inputs' types and, where known at compile time, their
values. Values are known for constants, for operators whose result is fixed by their inputs'
types (``x.shape`` of a specialised ``x``), and for pure operators on known scalar values, so
``np.zeros(x.shape[0] + 1)`` gets a complete type.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ir.errors import AutodiffError, ShapeError
from ir.graph import Block, Graph, Node, Value
from ir.ops import NOT_CONSTANT, OPS
from ir.ops.prim import join_all
from ir.ops.registry import ShapeRule
from ir.printer import print_node
from ir.types import (
    BOOL,
    FLOAT,
    INT,
    NOTHING,
    SCALAR,
    TENSOR,
    ListType,
    NamedType,
    TensorType,
    TupleType,
    Type,
    join_types,
)
from passes.registry import register_pass

# Note [Numbers that turn up where arrays are expected]
# The frontend converts a Python number passed to a NumPy function with ``aten::asarray``
# (Note [Python numbers as arrays] in `frontend.calls`), but only where it knows the value is a
# number. A value it typed Tensor may turn out a number here: an unannotated parameter of a
# graph specialised directly to a float, or a callee's result inlined. NumPy converts it all
# the same, so specialisation inserts the ``aten::asarray`` the frontend would have, rather
# than refusing a program the plain function runs.

# A loop's carried types reach a fixed point in a few rounds (each round can only forget
# facts); past this many, carried tensors are widened to their dtype alone.
MAX_LOOP_ROUNDS = 8
# Values bigger than this are not evaluated at compile time: their types suffice.
MAX_FOLD_ELEMENTS = 64


def specialise(graph: Graph, input_types: Sequence[Type]) -> Graph:
    """A copy of ``graph`` whose inputs have ``input_types`` and every other value the type
    that follows from them.

    >>> typed = specialise(parsed, [TensorType("float64", (3, 4))])
    """
    typed = graph.copy()
    if len(input_types) != len(typed.inputs):
        raise ShapeError(f"expected {len(typed.inputs)} argument types, got {len(input_types)}")
    for value, ty in zip(typed.inputs, input_types, strict=True):
        value.ty = ty
    propagate_shapes(typed)
    return typed


@register_pass("propagate-shapes")
def propagate_shapes(graph: Graph) -> bool:
    """Recompute the type of every node output from the graph inputs' types.

    Given:   graph(%x : Float(3, 4)): %y : Tensor = aten::tanh(%x)
    Execute: propagate_shapes(graph)
    Result:  graph(%x : Float(3, 4)): %y : Float(3, 4) = aten::tanh(%x)
    """
    propagator = _Propagator()
    propagator.block(graph.block)
    return propagator.changed


UNINITIALIZED = "prim::Uninitialized"
_SCALARS = frozenset({type(None), bool, int, float, str})


class _Propagator:
    def __init__(self) -> None:
        self.known: dict[Value, Any] = {}
        self.changed = False
        # Output types per (operator, operand types, operand values): a long function repeats
        # the same few operations on the same types (issue #8), and a shape rule depends on
        # nothing else. Values are keyed with their Python type (1, 1.0 and True are equal).
        self.rules: dict[tuple[Any, ...], Sequence[Type]] = {}

    def set_type(self, value: Value, ty: Type) -> None:
        old = value.ty
        if old is not ty:
            if old != ty:
                self.changed = True
            value.ty = ty  # an equal type too: the next propagation finds the same object

    def block(self, block: Block) -> None:
        for node in block.nodes():
            try:
                self.node(node)
            except ShapeError as error:
                if error.source_range is None:
                    error.source_range = node.source_range
                if not error.notes:
                    error.add_note_line(f"while specialising {print_node(node)}")
                raise

    def node(self, node: Node) -> None:
        kind = node.kind
        if kind == "prim::Constant":
            value = node.attrs.get("value")
            self.known[node.output] = value
            if isinstance(value, np.ndarray | np.generic):
                self.set_type(node.output, TensorType.of(value))
            return
        if kind == "prim::If":
            self.branches(node)
            return
        if kind == "prim::Loop":
            self.loop(node)
            return
        if kind in ("prim::GradOf", "prim::Reverse"):
            self.block(node.blocks[0])
            for out, result in zip(node.outputs, node.blocks[0].outputs, strict=True):
                self.set_type(out, result.ty)
            return
        if kind == "prim::TupleConstruct":
            self.set_type(node.output, TupleType(tuple(v.ty for v in node.inputs)))
            self.fold_structural(node, tuple)
            return
        if kind == "prim::ListConstruct":
            self.set_type(node.output, ListType(join_all([v.ty for v in node.inputs], NOTHING)))
            self.fold_structural(node, list)
            return
        if kind == "prim::TupleUnpack":
            self.tuple_unpack(node)
            return
        op = OPS.get(kind)
        if op is None or op.shape is None:
            return
        self.numbers_as_arrays(node)
        types = [v.ty for v in node.inputs]
        consts = [self.known.get(v, NOT_CONSTANT) for v in node.inputs]
        out_types = self.rule(kind, op.shape, types, consts)
        for out, ty in zip(node.outputs, out_types, strict=True):
            self.set_type(out, _keep_requires_grad(out.ty, ty))
        self.fold(node, consts)

    def rule(
        self,
        kind: str,
        shape: ShapeRule,
        types: list[Type],
        consts: list[Any],
    ) -> Sequence[Type]:
        """``shape(types, consts)``, remembered when the known values are plain Python scalars
        (a tuple (2, 3) equals (2.0, 3.0), which a shape rule may refuse)."""
        if not all(c is NOT_CONSTANT or type(c) in _SCALARS for c in consts):
            return shape(types, consts)
        try:
            key = (kind, *types, *[(type(c), c) for c in consts])
            found = self.rules.get(key)
        except TypeError:  # an unhashable type
            return shape(types, consts)
        if found is None:
            found = self.rules[key] = tuple(shape(types, consts))
        return found

    def numbers_as_arrays(self, node: Node) -> None:
        """Convert a Python number that reaches a ``Tensor`` operand (Note [Numbers that turn
        up where arrays are expected])."""
        arguments = OPS[node.kind].schema.arguments
        for index, value in enumerate(node.inputs):
            if not arguments:
                return
            if type(value.ty) is not NamedType or value.ty not in (INT, FLOAT, BOOL, SCALAR):
                continue
            if arguments[min(index, len(arguments) - 1)].ty != TENSOR:
                continue
            graph = node.graph
            with graph.inserting_before(node):
                converted = graph.insert(
                    "aten::asarray", [value], [TENSOR], source_range=node.source_range
                )
            self.node(converted)
            node.replace_input(index, converted.output)
            self.changed = True

    def fold_structural(self, node: Node, make: type) -> None:
        items = [self.known.get(v, NOT_CONSTANT) for v in node.inputs]
        if all(item is not NOT_CONSTANT for item in items):
            self.known[node.output] = make(items)

    def tuple_unpack(self, node: Node) -> None:
        source = node.inputs[0]
        if isinstance(source.ty, TupleType):
            if len(source.ty.elems) != len(node.outputs):
                raise ShapeError(
                    f"cannot unpack a tuple of {len(source.ty.elems)} values into "
                    f"{len(node.outputs)} names"
                )
            for out, ty in zip(node.outputs, source.ty.elems, strict=True):
                self.set_type(out, ty)
        items = self.known.get(source, NOT_CONSTANT)
        if items is not NOT_CONSTANT:
            for out, item in zip(node.outputs, items, strict=True):
                self.known[out] = item

    def fold(self, node: Node, consts: list[Any]) -> None:
        """Remember the value of a pure operator whose value is fixed at compile time."""
        op = OPS[node.kind]
        if not op.pure or op.kernel is None or len(node.outputs) != 1:
            return
        if op.value_from_types is not None:
            value = op.value_from_types([v.ty for v in node.inputs])
            if value is not NOT_CONSTANT:
                self.known[node.output] = value
            return
        if any(c is NOT_CONSTANT for c in consts) or not _is_small(node.output.ty):
            return
        try:
            self.known[node.output] = op.kernel(*consts)
        except (ArithmeticError, ValueError, TypeError, IndexError):
            # Left for run time, where the same failure is reported with the user's line.
            return

    def branches(self, node: Node) -> None:
        then_block, else_block = node.blocks
        self.block(then_block)
        self.block(else_block)
        for out, a, b in zip(node.outputs, then_block.outputs, else_block.outputs, strict=True):
            # A branch's prim::Uninitialized stands for "not defined here": it is never read,
            # so the output has the other branch's type (and so has the placeholder).
            if a.node.kind == UNINITIALIZED and b.node.kind != UNINITIALIZED:
                self.set_type(a, b.ty)
            elif b.node.kind == UNINITIALIZED and a.node.kind != UNINITIALIZED:
                self.set_type(b, a.ty)
            self.set_type(out, join_types(a.ty, b.ty))

    def loop(self, node: Node) -> None:
        body = node.blocks[0]
        carried_in = node.inputs[2:]
        carried_types = [v.ty for v in carried_in]
        self.set_type(body.inputs[0], INT)
        for round_number in range(MAX_LOOP_ROUNDS + 1):
            for param, ty in zip(body.inputs[1:], carried_types, strict=True):
                param.ty = ty
            # Loop-carried values are not compile-time constants inside the body, and nor is
            # what the body computed from them in a round where they had narrower types
            # (``s.shape[0]`` while ``s`` was still ``Double(2)``).
            for value in _values_defined_in(body):
                self.known.pop(value, None)
            self.block(body)
            joined = [
                join_types(ty, result.ty)
                for ty, result in zip(carried_types, body.outputs[1:], strict=True)
            ]
            if joined == carried_types:
                break
            if round_number == MAX_LOOP_ROUNDS - 1:
                joined = [_widen(ty) for ty in joined]
            carried_types = joined
        else:
            raise AutodiffError("loop-carried types did not reach a fixed point", node.source_range)
        for out, ty in zip(node.outputs, carried_types, strict=True):
            self.set_type(out, ty)


def _values_defined_in(block: Block) -> list[Value]:
    """The parameters of ``block`` and of the blocks nested in it, and every node's outputs."""
    values = list(block.inputs)
    for node in block.nodes():
        values.extend(node.outputs)
        for inner in node.blocks:
            values.extend(_values_defined_in(inner))
    return values


def _keep_requires_grad(old: Type, new: Type) -> Type:
    if (
        isinstance(old, TensorType)
        and old.requires_grad is not None
        and isinstance(new, TensorType)
        and new.requires_grad is None
    ):
        return new.with_requires_grad(old.requires_grad)
    return new


def _is_small(ty: Type) -> bool:
    if isinstance(ty, NamedType):
        return ty in (INT, BOOL) or ty.name == "float"
    if isinstance(ty, TensorType):
        if not ty.is_complete or ty.shape is None:
            return False
        return int(np.prod([d or 0 for d in ty.shape])) <= MAX_FOLD_ELEMENTS
    return isinstance(ty, TupleType | ListType)


def _widen(ty: Type) -> Type:
    if isinstance(ty, TensorType):
        return TensorType(ty.dtype, None, ty.requires_grad)
    return ty
