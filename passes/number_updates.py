"""Which ``s op= v`` updates rebind a number and which write into an array, for
`passes.functionalize`.

# Note [Numbers and 0-d arrays]
# NumPy has two kinds of 0-d value: a 0-d array (``np.zeros(())``, ``np.array(1.0)``, a 0-d
# argument), which ``s += v`` updates in place, and a NumPy scalar (what a reduction, an
# operator on 0-d operands or ``y[i]`` on a 1-D array gives), which is immutable like a Python
# number: ``s += v`` rebinds ``s`` and no other name sees it. The IR types both as a 0-d
# tensor. The frontend emits ``s op= v`` on a tensor as ``aten::copy_(s, s op v)``, whose
# kernel decides at run time (Note [In-place operators]); functionalisation has to decide at
# compile time. `value_kinds` follows each value back to where it was made:
#
# * a NumPy scalar or a number (NUMBER): a Python number, the result of an operator or NumPy
#   function whose result is 0-d (ufuncs, reductions, products, ``y[i]`` reading every axis
#   with ints: all of them give NumPy scalars), and ``copy_`` into a number (its source);
# * an array (ARRAY): a tensor of rank 1 or more, a graph input (unless the caller says it is
#   a NumPy scalar: `autodiff.specialize.numpy_scalar_positions`), a constant that is one,
#   the results of MAKES_ARRAY, a view of an array (``x.reshape(())``, ``x.T``), ``astype``
#   of one, a write's result;
# * EITHER: an If output or a loop-carried value that is one on some paths and the other on
#   others, an element of a tuple or list that holds both, or a value out of a call.
#
# An If output joins its branches' kinds, a loop-carried value its initial value's and the
# body's result's (iterated to a fixed point). `rebind_number_updates` then replaces each
# ``copy_`` into a NUMBER by its source, as Python rebinds, and refuses a ``copy_`` into a 0-d
# EITHER: whether it updates the array others see or rebinds depends on the path taken. An item
# assignment into a NUMBER (``s[...] = v``, also a ``copy_``, but not of ``s op v``) is refused
# too: NumPy raises TypeError there.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from enum import IntFlag

import numpy as np

from ir.analysis import constant_value, is_constant
from ir.errors import IRError
from ir.graph import Block, Graph, Node, Value
from ir.ops.registry import is_in_place
from ir.types import BOOL, FLOAT, INT, NONE, SCALAR, TensorType


class Kind(IntFlag):
    """What a value may be at run time; the union of two kinds is their join."""

    UNKNOWN = 0  # not computed yet (the bottom of the fixed point)
    NUMBER = 1  # a Python number or a NumPy scalar: immutable
    ARRAY = 2  # an ndarray, 0-d ones included: ``+=`` writes into it
    EITHER = NUMBER | ARRAY


# Operators whose 0-d result is a new 0-d array, not a NumPy scalar (checked against NumPy:
# ``np.asarray(1.0)``, ``np.where(True, a, b)``, ``np.tensordot(v, v, 1)``, ...).
MAKES_ARRAY = frozenset(
    {
        "aten::asarray",
        "aten::copy",
        "aten::zeros",
        "aten::ones",
        "aten::full",
        "aten::zeros_like",
        "aten::ones_like",
        "aten::full_like",
        "aten::where",
        "aten::broadcast_to",
        "aten::tensordot",
    }
)
# Operators whose result is of the kind of their first operand: views (``np.reshape`` of a
# NumPy scalar is a NumPy scalar, of an array a 0-d array), ``astype``, ``x.copy()``, and
# writes.
KEEPS_KIND = frozenset(
    {
        "aten::reshape",
        "aten::squeeze",
        "aten::expand_dims",
        "aten::transpose",
        "aten::swapaxes",
        "aten::moveaxis",
        "aten::ravel",
        "aten::real",
        "aten::imag",
        "aten::astype",
        "aten::copy_method",
        "aten::index_put_",
        "aten::add_at_",
        "aten::_written",
        "aten::select_scatter",
        "aten::slice_scatter",
        "aten::index_put",
        "aten::add_at",
    }
)
_NUMBERS = (INT, FLOAT, BOOL, SCALAR, NONE)
_CONTAINERS = frozenset(
    {"prim::TupleConstruct", "prim::ListConstruct", "prim::ListAppend", "prim::TupleSlice"}
)
_ELEMENTS = frozenset(
    {"prim::TupleIndex", "prim::TupleUnpack", "prim::ListIndex", "prim::ListUnpack"}
)


def _rank(value: Value) -> int | None:
    """The rank of a tensor value (None if unknown); -1 for a value that is no tensor."""
    if not isinstance(value.ty, TensorType):
        return -1
    return None if value.ty.shape is None else len(value.ty.shape)


def value_kinds(graph: Graph, number_inputs: Collection[int] = ()) -> dict[Value, Kind]:
    """Each value's Kind, to a fixed point over loops; the inputs at ``number_inputs`` are
    NumPy scalars, the other tensor inputs arrays. See Note [Numbers and 0-d arrays]."""
    kinds: dict[Value, Kind] = {}
    for position, value in enumerate(graph.inputs):
        array = isinstance(value.ty, TensorType) and position not in number_inputs
        kinds[value] = Kind.ARRAY if array else Kind.NUMBER
    changed = True
    while changed:
        changed = _block_kinds(graph.block, kinds)
    return kinds


def _set(kinds: dict[Value, Kind], value: Value, kind: Kind) -> bool:
    joined = kinds.get(value, Kind.UNKNOWN) | kind
    if joined == kinds.get(value, Kind.UNKNOWN):
        return False
    kinds[value] = joined
    return True


def _block_kinds(block: Block, kinds: dict[Value, Kind]) -> bool:
    changed = False
    for node in block.nodes():
        if node.kind == "prim::Loop":
            body = node.blocks[0]
            changed |= _set(kinds, body.inputs[0], Kind.NUMBER)
            for initial, param in zip(node.inputs[2:], body.inputs[1:], strict=True):
                changed |= _set(kinds, param, kinds.get(initial, Kind.UNKNOWN))
            changed |= _block_kinds(body, kinds)
            for position, output in enumerate(node.outputs):
                last = kinds.get(body.outputs[1 + position], Kind.UNKNOWN)
                changed |= _set(kinds, body.inputs[1 + position], last)
                changed |= _set(kinds, output, kinds.get(node.inputs[2 + position], Kind.UNKNOWN))
                changed |= _set(kinds, output, last)
            continue
        if node.kind == "prim::If":
            for inner in node.blocks:
                changed |= _block_kinds(inner, kinds)
                for output, result in zip(node.outputs, inner.outputs, strict=True):
                    changed |= _set(kinds, output, kinds.get(result, Kind.UNKNOWN))
            continue
        for inner in node.blocks:
            changed |= _block_kinds(inner, kinds)
        for index, output in enumerate(node.outputs):
            changed |= _set(kinds, output, _node_kind(node, index, output, kinds))
    return changed


def _node_kind(node: Node, index: int, output: Value, kinds: dict[Value, Kind]) -> Kind:
    rank = _rank(output)
    if rank == -1 and node.kind in _CONTAINERS:  # a tuple or list: what its elements may be
        return _join(kinds.get(value, Kind.UNKNOWN) for value in node.inputs)
    if rank == -1:  # a Python number, or a value no tensor comes out of
        return Kind.NUMBER if output.ty in _NUMBERS else Kind.EITHER
    if rank is not None and rank > 0:
        return Kind.ARRAY
    operand = kinds.get(node.inputs[0], Kind.UNKNOWN) if node.inputs else Kind.UNKNOWN
    if node.kind == "aten::copy_":
        return operand if operand != Kind.NUMBER else kinds.get(node.inputs[1], Kind.UNKNOWN)
    if node.kind == "prim::Constant":
        return Kind.ARRAY if isinstance(node.attr("value"), np.ndarray) else Kind.NUMBER
    if node.kind in MAKES_ARRAY:
        return Kind.ARRAY
    if node.kind in KEEPS_KIND:
        return operand
    if node.kind in _ELEMENTS:
        return _element_kind(node, index, kinds)
    if node.kind.startswith("aten::") and rank == 0:
        return Kind.NUMBER  # an operator or NumPy function's 0-d result: a NumPy scalar
    return Kind.EITHER


def _element_kind(node: Node, index: int, kinds: dict[Value, Kind]) -> Kind:
    """An element of a tuple built here, at a known position, is what was put there; any other
    element of a tuple or list is what its elements may be."""
    container = node.inputs[0]
    source = container.node
    if node.kind == "prim::TupleIndex":
        position = node.inputs[1]
        index = int(constant_value(position)) if is_constant(position) else -1
    if source.kind == "prim::TupleConstruct" and 0 <= index < len(source.inputs):
        return kinds.get(source.inputs[index], Kind.UNKNOWN)
    return kinds.get(container, Kind.UNKNOWN)


def _join(found: Iterable[Kind]) -> Kind:
    joined = Kind.UNKNOWN
    for kind in found:
        joined |= kind
    return joined


def rebind_number_updates(graph: Graph, number_inputs: Collection[int] = ()) -> None:
    """Replace each ``copy_`` of ``s op= v`` into a number by its source (Python rebinds the
    name); refuse an update whose target is a 0-d array on some paths and a number on others,
    and an item assignment into a number (NumPy raises). The inputs at ``number_inputs`` are
    NumPy scalars. See Note [Numbers and 0-d arrays]."""
    kinds = value_kinds(graph, number_inputs)
    pending = [graph.block]
    while pending:
        block = pending.pop()
        for node in list(block.nodes()):
            pending.extend(node.blocks)
            if not is_in_place(node):
                continue
            target, source = node.inputs[0], node.inputs[1]
            rank = _rank(target)
            if rank is None or rank > 0:
                continue  # an array (a value of unknown rank: as the frontend left it)
            kind = kinds.get(target, Kind.UNKNOWN)
            name = target.name_hint or "the value"
            if kind == Kind.EITHER and rank == 0:
                raise IRError(
                    f"cannot tell whether '{name}' is a 0-d array, which this updates in "
                    "place, or a number, which it rebinds: it is one or the other depending "
                    f"on the path taken; write '{name} = {name} <op> ...', or make it an array "
                    "on every path (np.asarray)",
                    node.source_range,
                )
            if kind != Kind.NUMBER and rank != -1:
                continue
            if kind == Kind.NUMBER and not _updates(node):
                raise IRError(
                    f"'{name}' is a number here (a NumPy scalar: one element read out of an "
                    "array, or what a NumPy function returned), which does not support item "
                    f"assignment; write '{name} = ...', or make it an array (np.array({name}))",
                    node.source_range,
                )
            node.output.replace_all_uses_with(source)
            node.destroy()


def _updates(write: Node) -> bool:
    """Whether ``write`` is ``s op= v`` as the frontend emits it, ``copy_(s, s op v)``, rather
    than an item assignment (``s[...] = v``)."""
    target, source = write.inputs[0], write.inputs[1]
    return write.kind == "aten::copy_" and source.node.inputs[:1] == [target]
