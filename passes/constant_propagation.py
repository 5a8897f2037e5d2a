"""Constant propagation: evaluate at compile time what depends only on constants.

`constant-propagation` folds, in program order and again wherever a fold made a constant:

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

Operand constants that become unused are left for `dce`. Each fold is a pattern of a table keyed
by node kind, applied until nothing folds (Note [Pattern rewrite driver] in
`passes.pattern_rewriter`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ir.analysis import constant_value, is_constant
from ir.errors import ShapeError
from ir.graph import Block, Graph, Node, Value
from ir.ops import NOT_CONSTANT, OPS, OpDef
from ir.ops.scalar import evaluate_bounded
from ir.types import BOOL, FLOAT, INT, NONE, ListType, TensorType, TupleType, Type
from passes.pattern_rewriter import PatternTable, Rewriter
from passes.registry import register_pass

CONSTANT = "prim::Constant"
SCALAR_TYPES: dict[type, Type] = {bool: BOOL, int: INT, float: FLOAT}

# The context of the patterns is the ``max-elements`` option.
PATTERNS = PatternTable[int]("constant-propagation")
Folder = Rewriter[int]


@register_pass("constant-propagation")
def propagate_constants(graph: Graph, *, max_elements: int = 1000) -> bool:
    """Fold nodes whose operands are constants, and control flow on constant conditions.

    Given:   %a : int = prim::Constant[value=2]()
             %b : int = prim::Constant[value=3]()
             %c : int = aten::mul(%a, %b)
    Execute: propagate_constants(graph)
    Result:  %c : int = prim::Constant[value=6]()
    """
    return PATTERNS.rewrite(graph, max_elements)


def inline_constant_branches(graph: Graph, block: Block) -> None:
    """Inline each prim::If of ``block`` (and of the blocks nested in it) whose condition is a
    constant, as `propagate_constants` does, folding nothing else: a derivative formula's
    branch on an operand such as ``compute_uv`` (whose other branch does not type-check for
    this call) is gone before shapes are propagated."""
    node = block.param_node.next
    while node.kind != "prim::Return":
        if node.kind == "prim::If" and is_constant(node.inputs[0]):
            node = _inlined(graph, node)
            continue
        for inner in node.blocks:
            inline_constant_branches(graph, inner)
        node = node.next


def _inlined(graph: Graph, node: Node) -> Node:
    """Inline the branch the constant-condition If ``node`` takes; returns the first node
    inlined (or the one after ``node`` for an empty branch)."""
    taken = node.blocks[0] if bool(constant_value(node.inputs[0])) else node.blocks[1]
    clones: dict[Value, Value] = {}
    first: Node | None = None
    for inner in taken.nodes():
        clone = graph.create_clone(inner, lambda v: clones.get(v, v))
        clone.insert_before(node)
        first = first or clone
        clones.update(zip(inner.outputs, clone.outputs, strict=True))
    for out, result in zip(node.outputs, taken.outputs, strict=True):
        out.replace_all_uses_with(clones.get(result, result))
    following = node.next
    node.destroy()
    return first or following


@PATTERNS.register("prim::If")
def inline_branch(rewriter: Folder, node: Node) -> bool:
    """An If on a constant condition is the branch it takes, inlined in its place."""
    if not is_constant(node.inputs[0]):
        return False
    taken = node.blocks[0] if bool(constant_value(node.inputs[0])) else node.blocks[1]
    clones: dict[Value, Value] = {}

    def lookup(value: Value) -> Value:
        return clones.get(value, value)

    with rewriter.inserting_before(node):
        for inner in taken.nodes():
            clone = rewriter.insert_clone(inner, lookup)
            for old, new in zip(inner.outputs, clone.outputs, strict=True):
                clones[old] = new
    rewriter.replace(node, [lookup(result) for result in taken.outputs])
    return True


@PATTERNS.register("prim::Loop")
def fold_empty_loop(rewriter: Folder, node: Node) -> bool:
    """A Loop that runs no iteration is its initial carried values."""
    trip_count, condition = node.inputs[0], node.inputs[1]
    never = is_constant(condition) and not bool(constant_value(condition))
    if is_constant(trip_count) and not never:
        count = constant_value(trip_count)
        never = count is not None and int(count) <= 0
    if not never:
        return False
    rewriter.replace(node, node.inputs[2:])
    return True


@PATTERNS.register("prim::TupleIndex")
def fold_tuple_index(rewriter: Folder, node: Node) -> bool:
    """An element of a TupleConstruct, at a constant index, is forwarded (one of a constant
    tuple is folded by `fold_kernel`)."""
    tuple_value, index = node.inputs[0], node.inputs[1]
    if tuple_value.node.kind != "prim::TupleConstruct" or not is_constant(index):
        return False
    elements = tuple_value.node.inputs
    position = int(constant_value(index))
    if not -len(elements) <= position < len(elements):
        return False
    rewriter.replace(node, [elements[position]])
    return True


def fold_kernel(rewriter: Folder, node: Node) -> bool:
    """A pure operator of constants is the constants its kernel gives, run now."""
    op = OPS[node.kind]
    kernel = op.kernel
    if kernel is None or node.blocks or not node.outputs:
        return False
    for operand in node.inputs:
        if operand.node.kind != CONSTANT:
            return False
    max_elements = rewriter.context
    if _predicts_too_large(op, node, max_elements):
        return False
    operands = [constant_value(v) for v in node.inputs]
    try:
        result = evaluate_bounded(node.kind, kernel, operands)
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
        constant = _as_constant(item, out.ty, max_elements)
        if constant is None:
            return False
        constants.append(constant)
    with rewriter.inserting_before(node):
        values = [rewriter.insert_constant(value, ty, node.source_range) for value, ty in constants]
    rewriter.replace(node, values, take_names=True)
    return True


# Every pure operator with a kernel folds (prim::TupleIndex after forwarding an element).
for _kind, _op in OPS.items():
    if _kind != CONSTANT and _op.pure and not _op.fresh and _op.kernel is not None:
        PATTERNS.register(_kind)(fold_kernel)


def _predicts_too_large(op: OpDef, node: Node, max_elements: int) -> bool:
    """True when the declared or shape-rule types say a result would have more than
    ``max_elements`` elements, so the kernel never allocates it; also when the shape rule
    rejects the operands (the kernel would fail too)."""
    types: list[Type] = [out.ty for out in node.outputs]
    if op.shape is not None:
        try:
            types += op.shape([v.ty for v in node.inputs], [constant_value(v) for v in node.inputs])
        except ShapeError:
            return True
    return any(_known_size(ty) > max_elements for ty in types)


def _as_constant(result: Any, declared: Type, max_elements: int) -> tuple[Any, Type] | None:
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
        if not _writable(array.dtype) or array.size > max_elements:
            return None
        exact = TensorType.of(array, declared.requires_grad)
        return (array, exact) if exact.refines_to(declared) else None
    if isinstance(declared, ListType | TupleType):
        return _as_sequence_constant(result, declared, max_elements)
    if isinstance(result, np.ndarray | np.generic) and np.ndim(result) == 0:
        result = result.item()
    ty = SCALAR_TYPES.get(type(result))
    if ty is None or not ty.is_subtype_of(declared):
        return None
    return result, ty


def _as_sequence_constant(
    result: Any, declared: ListType | TupleType, max_elements: int
) -> tuple[Any, Type] | None:
    """A list or tuple of Python scalars (``int[]``, ``(int, int)``), as a constant; a tuple
    may also hold None and such tuples (``((int, NoneType), (int, int))``)."""
    if not isinstance(result, list | tuple) or len(result) > max_elements:
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
            constant = _as_sequence_constant(item, element_type, max_elements)
        else:
            constant = _as_constant(item, element_type, max_elements)
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
