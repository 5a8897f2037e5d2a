"""Constant propagation: evaluate at compile time what depends only on constants.

`constant-propagation` folds, in program order (so a folded result feeds later folds):

- a pure operator with a NumPy kernel whose operands are all prim::Constant: the kernel runs now
  and each output becomes a prim::Constant. A Python scalar becomes an ``int``, ``float`` or
  ``bool`` constant, an array a constant of its exact type (``TensorType.of``), a list or tuple
  of scalars an ``int[]``-like or ``(int, int)``-like constant. It is left alone when the kernel
  raises (the error belongs to run time, and the node may sit in a branch that never runs), when
  an int operand or result would have more than 4096 bits (``10 ** 100_000_000`` would take
  minutes: Note [Compile-time evaluation of Python ints] in `ir.ops.scalar`), when
  an array result has, or its declared or shape-rule type says it would have, more than
  ``max-elements`` elements, or when the result does not fit the output's declared type. A
  NumPy scalar (what a ufunc returns for 0-d operands) stays a NumPy scalar, so the folded
  constant is the very value the node makes at run time, with the same kernel; a
  prim::TupleConstruct of scalars, None and such tuples (slice specs) becomes a tuple constant;
- a prim::If on a constant condition: the taken branch is inlined in place of the node;
- a prim::Loop that runs no iteration (constant trip count <= 0 or constant false initial
  condition): its outputs become its initial carried values;
- a prim::TupleIndex with a constant index into a prim::TupleConstruct: the element itself.

Operand constants that become unused are left for `dce`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ir.errors import ShapeError
from ir.graph import Graph, Node, Value
from ir.ops import NOT_CONSTANT, OPS, OpDef
from ir.ops.scalar import evaluate_bounded
from ir.types import BOOL, FLOAT, INT, NONE, ListType, TensorType, TupleType, Type
from passes.registry import register_pass

CONSTANT = "prim::Constant"
SCALAR_TYPES: dict[type, Type] = {bool: BOOL, int: INT, float: FLOAT}


@register_pass("constant-propagation")
def propagate_constants(graph: Graph, *, max_elements: int = 1000) -> bool:
    """Fold nodes whose operands are constants, and control flow on constant conditions.

    Given:   %a : int = prim::Constant[value=2]()
             %b : int = prim::Constant[value=3]()
             %c : int = aten::mul(%a, %b)
    Execute: propagate_constants(graph)
    Result:  %c : int = prim::Constant[value=6]()
    """
    return _Folder(graph, max_elements).fold_block(graph.block.param_node.next)


def is_constant(value: Value) -> bool:
    return value.node.kind == CONSTANT


def constant_value(value: Value) -> Any:
    """The Python or NumPy value of a prim::Constant's output (None for a ``NoneType`` one)."""
    return value.node.attrs.get("value")


class _Folder:
    def __init__(self, graph: Graph, max_elements: int) -> None:
        self.graph = graph
        self.max_elements = max_elements

    def fold_block(self, start: Node) -> bool:
        """Fold from ``start`` to the end of its block; each step says where to go on, so
        nodes inlined from a folded prim::If are visited too."""
        changed = False
        node = start
        while node.kind != "prim::Return":
            if node.kind == "prim::If" and is_constant(node.inputs[0]):
                node = self.inline_branch(node)
                changed = True
                continue
            for inner in node.blocks:
                changed |= self.fold_block(inner.param_node.next)
            following = node.next
            changed |= self.fold(node)
            node = following
        return changed

    def fold(self, node: Node) -> bool:
        if node.kind == "prim::Loop":
            return self.fold_empty_loop(node)
        if node.kind == "prim::TupleIndex":
            # An element of a TupleConstruct is forwarded; of a constant tuple, folded.
            return self.fold_tuple_index(node) or self.fold_kernel(node)
        return self.fold_kernel(node)

    def inline_branch(self, node: Node) -> Node:
        taken = node.blocks[0] if bool(constant_value(node.inputs[0])) else node.blocks[1]
        clones: dict[Value, Value] = {}

        def lookup(value: Value) -> Value:
            return clones.get(value, value)

        first: Node | None = None
        for inner in taken.nodes():
            clone = self.graph.create_clone(inner, lookup)
            clone.insert_before(node)
            first = first or clone
            for old, new in zip(inner.outputs, clone.outputs, strict=True):
                clones[old] = new
        for out, result in zip(node.outputs, taken.outputs, strict=True):
            out.replace_all_uses_with(lookup(result))
        following = node.next
        node.destroy()
        return first or following

    def fold_empty_loop(self, node: Node) -> bool:
        trip_count, condition = node.inputs[0], node.inputs[1]
        never = is_constant(condition) and not bool(constant_value(condition))
        if is_constant(trip_count) and not never:
            count = constant_value(trip_count)
            never = count is not None and int(count) <= 0
        if not never:
            return False
        for out, initial in zip(node.outputs, node.inputs[2:], strict=True):
            out.replace_all_uses_with(initial)
        node.destroy()
        return True

    def fold_tuple_index(self, node: Node) -> bool:
        tuple_value, index = node.inputs[0], node.inputs[1]
        if tuple_value.node.kind != "prim::TupleConstruct" or not is_constant(index):
            return False
        elements = tuple_value.node.inputs
        position = int(constant_value(index))
        if not -len(elements) <= position < len(elements):
            return False
        node.output.replace_all_uses_with(elements[position])
        node.destroy()
        return True

    def fold_kernel(self, node: Node) -> bool:
        op = OPS.get(node.kind)
        if (
            op is None
            or node.kind == CONSTANT
            or not op.pure
            or op.fresh
            or op.kernel is None
            or node.blocks
            or not node.outputs
            or not all(is_constant(v) for v in node.inputs)
        ):
            return False
        if self.predicts_too_large(op, node):
            return False
        operands = [constant_value(v) for v in node.inputs]
        try:
            result = evaluate_bounded(node.kind, op.kernel, operands)
        except Exception:
            # Not an error now: the node may sit in a branch that never runs; if it does run,
            # the interpreter reports the failure with the node's location.
            return False
        if result is NOT_CONSTANT:
            return False  # an int too large to be worth folding
        results = result if len(node.outputs) > 1 else (result,)
        if not isinstance(results, tuple | list) or len(results) != len(node.outputs):
            return False
        constants: list[tuple[Any, Type]] = []
        for item, out in zip(results, node.outputs, strict=True):
            constant = self.as_constant(item, out.ty)
            if constant is None:
                return False
            constants.append(constant)
        with self.graph.inserting_before(node):
            for out, (value, ty) in zip(node.outputs, constants, strict=True):
                new = self.graph.insert_constant(value, ty, node.source_range)
                new.name_hint = out.name_hint
                out.replace_all_uses_with(new)
        node.destroy()
        return True

    def predicts_too_large(self, op: OpDef, node: Node) -> bool:
        """True when the declared or shape-rule types say a result would have more than
        ``max_elements`` elements, so the kernel never allocates it; also when the shape rule
        rejects the operands (the kernel would fail too)."""
        types: list[Type] = [out.ty for out in node.outputs]
        if op.shape is not None:
            try:
                types += op.shape(
                    [v.ty for v in node.inputs], [constant_value(v) for v in node.inputs]
                )
            except ShapeError:
                return True
        return any(_known_size(ty) > self.max_elements for ty in types)

    def as_constant(self, result: Any, declared: Type) -> tuple[Any, Type] | None:
        """The attribute value and type of a constant for ``result``, or None when it does not
        fit ``declared`` or is too large."""
        if isinstance(declared, TensorType):
            if isinstance(result, np.generic):
                # Kept as it is: np.array would make it a 0-d array, a value of another
                # Python type than the node's at run time.
                exact = TensorType.of(result, declared.requires_grad)
                if not _writable(result.dtype) or not exact.refines_to(declared):
                    return None
                return result, exact
            array = np.array(result)
            if not _writable(array.dtype) or array.size > self.max_elements:
                return None
            exact = TensorType.of(array, declared.requires_grad)
            return (array, exact) if exact.refines_to(declared) else None
        if isinstance(declared, ListType | TupleType):
            return self.as_sequence_constant(result, declared)
        if isinstance(result, np.ndarray | np.generic) and np.ndim(result) == 0:
            result = result.item()
        ty = SCALAR_TYPES.get(type(result))
        if ty is None or not ty.is_subtype_of(declared):
            return None
        return result, ty

    def as_sequence_constant(
        self, result: Any, declared: ListType | TupleType
    ) -> tuple[Any, Type] | None:
        """A list or tuple of Python scalars (``int[]``, ``(int, int)``), as a constant; a tuple
        may also hold None and such tuples (``((int, NoneType), (int, int))``)."""
        if not isinstance(result, list | tuple) or len(result) > self.max_elements:
            return None
        if isinstance(declared, ListType):
            element_types: list[Type] = [declared.elem] * len(result)
        elif len(declared.elems) == len(result):
            element_types = list(declared.elems)
        else:
            return None
        items: list[Any] = []
        types: list[Type] = []
        for item, element_type in zip(result, element_types, strict=True):
            if isinstance(declared, TupleType) and item is None and element_type == NONE:
                items.append(None)
                types.append(NONE)
                continue
            if isinstance(declared, TupleType) and isinstance(element_type, TupleType):
                constant = self.as_sequence_constant(item, element_type)
            else:
                constant = self.as_constant(item, element_type)
                if constant is not None and constant[1] not in SCALAR_TYPES.values():
                    return None
            if constant is None:
                return None
            items.append(constant[0])
            types.append(constant[1])
        if isinstance(declared, ListType):
            return items, declared
        return tuple(items), TupleType(tuple(types))


def _writable(dtype: np.dtype[Any]) -> bool:
    """Whether IR text can spell a constant of ``dtype``: it has no complex literal, so a
    complex result stays the node that computes it."""
    return not dtype.hasobject and dtype.kind != "c"


def _known_size(ty: Type) -> int:
    """The number of elements of a tensor type whose dims are all known; 0 otherwise."""
    if not isinstance(ty, TensorType) or ty.shape is None:
        return 0
    dims = [d for d in ty.shape if d is not None]
    return math.prod(dims) if len(dims) == len(ty.shape) else 0
