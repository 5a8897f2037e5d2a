"""How generated code calls a kernel when the types of its operands make a cheaper spelling give
the same result: Python numbers as 0-d float64 array constants, reductions as the ufunc's own
``reduce``, trivial gradient helpers written out, and ufuncs writing into a dying buffer.

# Note [Typed calls]
# `ir.codegen` asks `TypedCalls.call` how to spell each kernel node; None means "call the
# kernel". Every rewrite below gives the interpreter's result bit for bit, with the same dtype
# and the same Python type (a NumPy scalar stays a NumPy scalar, a 0-d array a 0-d array), and
# each rests on a fact the node's types prove at compile time, never on a run-time check:
#
# - Constant binding. A ufunc given a Python float or int converts it under NEP 50 to the
#   dtype of its array operand; when every tensor operand is float64, a 0-d float64 array of
#   the same value selects the very same loop with the very same operand, and NumPy skips the
#   conversion of the Python number on every call (465 ns -> 312 ns for 16 elements). A 0-d
#   array is not weakly typed, so this is never done next to a float32 or integer operand
#   (the result's dtype would change), for bools, nor for ints that float64 cannot hold.
# - Reductions. ``np.sum(x, axis=a, keepdims=k)`` of an ndarray is ``np.add.reduce(x, a, None,
#   None, k)`` after a Python-level wrapper (max, min and prod likewise: the record's
#   ``ufunc_reduce``); a tensor of rank at least 1 is an ndarray, so its reductions call
#   ``reduce`` directly.
# - An operator's own spelling: its record's ``typed_call``, next to its kernel in its family
#   file (`ir.ops.call_spelling`). ``np.mean`` of float64 is the sum divided by the element
#   count (`ir.ops.reductions`); ``sum_to_size`` to the operand's own shape is the operand,
#   else a sum over the axes the shapes name, and a transpose without axes is ``.T``
#   (`ir.ops.shape_ops`); ``_unreduce`` that inserts no axis is ``np.broadcast_to``; the
#   gradient of a product of two matrices is the kernel's one matmul (``matmul(g, b.T)``)
#   without its reshaping of 1-d operands (`ir.ops.gradients`); select and slice with a
#   constant axis are the subscript the kernel applies (``x[:, i]``, ``x[1:]``:
#   `ir.ops.indexing`); a prim:: operator whose kernel is Python's own (``operator.sub``) is
#   written as the operator (``49 - j``: `ir.ops.scalar`).
# - Memory plan. An elementwise ufunc writes its result into an operand (``out=``) when that
#   operand dies at the node and nothing else can see its memory: it was computed in this
#   graph, in this block, by a call that returns a new array (a ufunc or a reduction spelled
#   here, not a view, an argument, a constant or a loop's carried value), every reader of it
#   is a ufunc or an operator whose record says it ``only_reads`` (a reduction, a product's
#   gradient) of the same block (so no list, tuple, tape, branch or loop holds it, and it is
#   not returned), or a select, slice or transpose whose own readers are such and have all
#   run before the write (``h.T @ g``: the view is gone by then), and it has exactly the
#   result's dtype and shape. NumPy computes an exactly overlapping ufunc element by element,
#   so the values are those of a new array. It pays from about a thousand elements (no
#   allocation, no page faults, a lower peak); below `INPLACE_MIN_SIZE` a new array costs no
#   more and the code stays plain.
# - Ownership. The graph's arguments are never written to by default: only the caller knows
#   whether anyone else holds them. A caller that does know passes the positions of arguments
#   it gives away (`CompiledGraph(..., owned=...)`), and the plan counts those as values
#   computed here by a new-array call (`own`): written into when they die at an elementwise
#   ufunc that every other reader of them is a ufunc or a reduction of the top block, as
#   above. The other half of the contract is `private_outputs`: the outputs of a graph that
#   are new arrays held by nothing but the returned list (computed in the top block by a
#   new-array call, read there only by ufuncs and reductions, so no view, tape or list of
#   them exists, and returned once). ``f``'s private temporaries, handed to ``df`` by a
#   caller that keeps no other reference, are what ``df`` owns: Note [Owned temporaries] in
#   `autodiff.runtime`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeGuard

import numpy as np

from ir.graph import Graph, Node, Value
from ir.ops import OpDef
from ir.ops.call_spelling import Bind, Call, constant, is_array, reduction_operands
from ir.types import TensorType

__all__ = ["INPLACE_MIN_SIZE", "Call", "TypedCalls"]

INPLACE_MIN_SIZE = 1024
"""Results with fewer elements are new arrays: see Note [Typed calls], memory plan."""

_EXACT_INT = 2**53  # the ints float64 holds exactly
# Correctly rounded (or exact) element by element, so every loop NumPy may pick for a layout
# gives the same bits. Other binary ufuncs (arctan2, power, logaddexp, ...) may take a SIMD
# loop or a scalar one depending on how the operands and the result are laid out in memory, and
# a 2-d buffer's layout need not be the one NumPy would give a new result: they write into a
# buffer only in one dimension, where both are contiguous.
_LAYOUT_FREE = frozenset(
    [
        *(np.add, np.subtract, np.multiply, np.true_divide, np.maximum, np.minimum),
        *(np.fmax, np.fmin, np.negative, np.positive, np.absolute, np.fabs, np.square),
        *(np.sqrt, np.reciprocal, np.sign, np.floor, np.ceil, np.trunc),
    ]
)


class TypedCalls:
    """The spelling of kernel nodes for one generated function (see Note [Typed calls]).
    ``bind(obj, hint)`` makes a closure variable of the generated function holding ``obj``."""

    def __init__(self, ops: Mapping[str, OpDef], bind: Bind) -> None:
        self.ops = ops
        self.bind = bind
        self.constants: dict[str, str] = {}  # float.hex() -> name of its 0-d float64 array
        self.fresh: set[Value] = set()  # results of calls that returned a new array

    # -- the memory plan -------------------------------------------------------------------

    def buffer(self, node: Node, dying: Sequence[Value]) -> int | None:
        """The position of an operand of ``node`` that its result may be written into, among
        the values ``dying`` at this node; None to allocate."""
        ufunc = self._elementwise(node)
        if ufunc is None or ufunc.nout != 1 or len(node.outputs) != 1:
            return None
        result = node.output.ty
        if not isinstance(result, TensorType) or not _large_array(result):
            return None
        if ufunc.nin > 1 and ufunc not in _LAYOUT_FREE and len(result.shape or ()) > 1:
            return None
        for position, value in enumerate(node.inputs):
            ty = value.ty
            if not (
                isinstance(ty, TensorType) and ty.dtype == result.dtype and ty.shape == result.shape
            ):
                continue
            if (
                value in self.fresh
                and any(value is v for v in dying)
                and self._private(value, before=node)
            ):
                return position
        return None

    def own(self, values: Sequence[Value]) -> None:
        """Count the graph inputs ``values`` as new arrays that no one else holds, which the
        plan may write into like values computed here. See Note [Typed calls], ownership."""
        self.fresh.update(values)

    def private_outputs(self, graph: Graph) -> frozenset[int]:
        """The positions of ``graph``'s outputs that are new arrays nothing but the returned
        list holds once the function returns: computed in the graph's own block by a call
        that returns a new array, read there by ufuncs and reductions only, returned once;
        only those large enough for the memory plan. Ask after the graph is spelled. See
        Note [Typed calls], ownership."""
        block = graph.block
        outputs = graph.outputs
        return frozenset(
            position
            for position, value in enumerate(outputs)
            if value in self.fresh
            and _large_array(value.ty)  # the plan writes into nothing smaller
            and sum(value is v for v in outputs) == 1
            and self._private(value, returned=True)
            and value.node.owning_block is block
        )

    def _private(self, value: Value, *, returned: bool = False, before: Node | None = None) -> bool:
        """Every reader of ``value`` is a ufunc or a reduction in its own block (or, when
        ``returned``, that block's return), or a view read that way before ``before`` (the
        node that would write into ``value``), as ``h.T`` in ``h.T @ g`` is."""
        block = value.node.owning_block
        for use in value.uses:
            user = use.user
            if user.owning_block is not block:
                return False
            if returned and block is not None and user is block.return_node:
                continue
            if self._only_reads(user):
                continue
            if self._is_view(user) and self._transient(user, before):
                continue
            return False
        return True

    def _only_reads(self, user: Node) -> bool:
        """``user`` reads its operands and holds none of them: a ufunc or a reduction."""
        op = self.ops.get(user.kind)
        return op is not None and (op.only_reads or _is_ufunc(op.kernel))

    def _is_view(self, user: Node) -> bool:
        """``user``'s result may be a NumPy view of its operand (Note [Views] in
        `ir.ops.views`): what it holds stays readable only while the operand is unchanged."""
        op = self.ops.get(user.kind)
        return op is not None and op.view is not None

    def _transient(self, view: Node, before: Node | None) -> bool:
        """Every reader of what ``view`` gives is a ufunc or a reduction of its block, and
        runs before ``before`` when given: the view is gone by the time anything writes."""
        for result in view.outputs:
            for use in result.uses:
                reader = use.user
                if reader.owning_block is not view.owning_block or not self._only_reads(reader):
                    return False
                if before is not None and not reader.is_before(before):
                    return False
        return True

    # -- spellings ---------------------------------------------------------------------------

    def call(self, node: Node, op: OpDef, args: list[str], buffer: int | None) -> Call | None:
        """How ``node`` runs, its operands spelled ``args``; None to call its kernel."""
        if op.ufunc_reduce is not None:
            return self._reduction(node, op.ufunc_reduce, args)
        if op.typed_call is not None:  # the operator's own spelling, in its record
            return op.typed_call(node, args, self.bind)
        op_kernel = op.kernel
        if _is_ufunc(op_kernel) and op_kernel.signature is not None and len(node.outputs) == 1:
            # np.matmul: called as it is, and known to return a new array
            name = self.bind(op_kernel, node.kind.replace("::", "_"))
            return Call(f"{name}({', '.join(args)})", fresh=is_array(node.output.ty))
        ufunc = self._elementwise(node)
        if ufunc is None or ufunc.nout != 1 or len(node.outputs) != 1:
            return None
        spelled = list(args)
        for position in _weak_numbers(node, ufunc):
            spelled[position] = self._zero_d(node.inputs[position].node.attr("value"))
        if buffer is not None:
            spelled.append(f"out={args[buffer]}")
        name = self.bind(ufunc, node.kind.replace("::", "_"))
        return Call(f"{name}({', '.join(spelled)})", fresh=is_array(node.output.ty))

    def _elementwise(self, node: Node) -> np.ufunc | None:
        op = self.ops.get(node.kind)
        kernel = op.kernel if op is not None else None
        if not _is_ufunc(kernel) or kernel.signature is not None or kernel.nin != len(node.inputs):
            return None
        return kernel

    def _zero_d(self, number: float) -> str:
        key = float(number).hex()
        name = self.constants.get(key)
        if name is None:
            name = self.constants[key] = self.bind(np.array(float(number)), "_c")
        return name

    def _reduction(
        self, node: Node, ufunc_reduce: Callable[..., Any], args: list[str]
    ) -> Call | None:
        spelled = reduction_operands(node)
        if spelled is None:
            return None
        axis, keepdims = spelled
        reduce = self.bind(ufunc_reduce, node.kind.replace("::", "_") + "_reduce")
        expr = f"{reduce}({args[0]}, {axis}, None, None, {keepdims})"
        return Call(expr, fresh=is_array(node.output.ty))


def _is_ufunc(kernel: Any) -> TypeGuard[np.ufunc]:
    return isinstance(kernel, np.ufunc)


def _large_array(ty: Any) -> bool:
    return (
        isinstance(ty, TensorType)
        and ty.is_complete
        and ty.shape is not None
        and len(ty.shape) > 0
        and math.prod(d or 0 for d in ty.shape) >= INPLACE_MIN_SIZE
    )


def _weak_numbers(node: Node, ufunc: np.ufunc) -> list[int]:
    """The positions of Python numbers that ``ufunc`` would convert to float64 anyway: every
    other operand is a float64 tensor. See Note [Typed calls], constant binding."""
    numbers: list[int] = []
    for position, value in enumerate(node.inputs):
        number = constant(value)
        kind = type(number)
        if kind is float or (kind is int and abs(number) <= _EXACT_INT):
            numbers.append(position)
        elif not (isinstance(value.ty, TensorType) and value.ty.dtype == "float64"):
            return []
    if not numbers or len(numbers) == len(node.inputs):
        return []
    signature = "d" * ufunc.nin + "->"
    if not any(loop.startswith(signature) for loop in ufunc.types):
        return []
    return numbers
