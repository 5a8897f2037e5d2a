"""Operators that only derivative formulas use: the adjoints of reductions, indexing and
products, each a NumPy kernel as direct as the forward operator's.

Each takes the incoming gradient first and, where it must rebuild an input's shape, that shape
as an operand (a compile-time constant after `fold-sizes`), so formulas never capture an input
just to learn its shape.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ir.ops.arrangement import PadMode, _promoted_sequence, atleast_shape
from ir.ops.indexing import _along
from ir.ops.prim import AUTOGRAD_ZERO, autograd_add, join_all, join_list_gradients
from ir.ops.registry import NOT_CONSTANT, OPS, register_op
from ir.ops.selection import diagonal_length
from ir.ops.shape_ops import _concatenate_rule
from ir.ops.shape_rules import (
    as_array_like,
    as_tensor,
    fixed,
    int_sequence,
    normalize_axes,
    normalize_axis,
    same_shape,
    tensor,
)
from ir.types import (
    ANY,
    BOOL,
    FLOAT,
    INT,
    NOTHING,
    STR,
    ListType,
    TensorType,
    TupleType,
    Type,
)


def _shaped_by_operand(position: int) -> Any:
    """A rule: a tensor with the gradient's dtype and the shape given by operand ``position``."""

    def rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
        grad = as_tensor(types[0])
        return tensor(grad.dtype, int_sequence(types[position], consts[position]))

    return rule


def _like_tensor_operand(position: int) -> Any:
    """A rule: a tensor with the gradient's dtype and the shape of operand ``position``."""

    def rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
        grad = as_tensor(types[0])
        return tensor(grad.dtype, as_tensor(types[position], position).shape)

    return rule


def unreduce(grad: Any, shape: Any, axis: Any, keepdims: bool) -> Any:
    """Spread the gradient of a reduction back over the reduced input's ``shape``."""
    grad = np.asarray(grad)
    if not keepdims and axis is not None:
        grad = np.expand_dims(grad, normalize_axes(axis, len(shape)))
    return np.broadcast_to(grad, shape)


def transpose_backward(grad: Any, axes: Any) -> Any:
    """The gradient of ``np.transpose(x, axes)``: transpose back by the inverse permutation."""
    if axes is None:
        return np.transpose(grad)
    return np.transpose(grad, _inverse_permutation(axes, np.ndim(grad)))


def _inverse_permutation(axes: Sequence[int], ndim: int) -> tuple[int, ...]:
    return tuple(int(i) for i in np.argsort([axis % ndim for axis in axes]))


def _transpose_backward_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    grad = as_tensor(types[0])
    if grad.shape is None:
        return [TensorType(grad.dtype)]
    axes = consts[1]
    if axes is None:
        return tensor(grad.dtype, tuple(reversed(grad.shape)))
    if isinstance(axes, tuple | list):
        inverse = _inverse_permutation(axes, len(grad.shape))
        return tensor(grad.dtype, tuple(grad.shape[i] for i in inverse))
    return tensor(grad.dtype, (None,) * len(grad.shape))


def _matmul_operands(grad: Any, a: Any, b: Any) -> tuple[Any, Any, Any, Any, Any]:
    """The operands as at least 2-d stacks, and the gradient with the dims that 1-d operands
    dropped from the result put back (b's last one, then a's row)."""
    a, b, grad = np.asarray(a), np.asarray(b), np.asarray(grad)
    a2 = a[None, :] if a.ndim == 1 else a
    b2 = b[:, None] if b.ndim == 1 else b
    g2 = grad[..., None] if b.ndim == 1 else grad
    if a.ndim == 1:
        g2 = np.expand_dims(g2, -2)
    return a, b, a2, b2, g2


def matmul_backward_self(grad: Any, a: Any, b: Any) -> Any:
    """The gradient of ``a @ b`` w.r.t. ``a`` alone: a gradient w.r.t. ``b`` that nothing
    reads is never computed (DCE drops this half's twin, `matmul_backward_other`)."""
    a, b, _, b2, g2 = _matmul_operands(grad, a, b)
    grad_a = np.matmul(g2, np.swapaxes(b2, -1, -2))
    if a.ndim == 1:
        grad_a = np.squeeze(grad_a, -2)
    return _sum_to(grad_a, a.shape)


def matmul_backward_other(grad: Any, a: Any, b: Any) -> Any:
    """The gradient of ``a @ b`` w.r.t. ``b`` alone."""
    a, b, a2, _, g2 = _matmul_operands(grad, a, b)
    grad_b = np.matmul(np.swapaxes(a2, -1, -2), g2)
    if b.ndim == 1:
        grad_b = np.squeeze(grad_b, -1)
    return _sum_to(grad_b, b.shape)


def dot_backward(grad: Any, a: Any, b: Any) -> tuple[Any, Any]:
    """Gradients of ``np.dot(a, b)``: a sum product over a's last axis and b's second-to-last
    (its only one when 1-d), with a scalar operand scaling the other."""
    a, b, grad = np.asarray(a), np.asarray(b), np.asarray(grad)
    if a.ndim == 0 or b.ndim == 0:
        grad_a, grad_b = _sum_to(grad * b, a.shape), _sum_to(grad * a, b.shape)
    elif b.ndim == 1:
        lead = a.ndim - 1  # the result's dims are a's leading ones, then b's other ones
        grad_a = np.multiply.outer(grad, b)
        grad_b = np.tensordot(a, grad, (range(lead), range(lead)))
    else:
        lead, middle = a.ndim - 1, b.ndim - 2
        grad_a = np.tensordot(
            grad, b, ([*range(lead, lead + middle), grad.ndim - 1], [*range(middle), b.ndim - 1])
        )
        grad_b = np.moveaxis(np.tensordot(a, grad, (range(lead), range(lead))), 0, -2)
    # np.dot turns a Python float into a float64 array, so a float32 operand can meet a
    # float64 result: its gradient is cast back.
    return _in_dtype_of(grad_a, a), _in_dtype_of(grad_b, b)


def _in_dtype_of(grad: Any, operand: np.ndarray[Any, Any]) -> Any:
    # A real operand's gradient is the real part (Note [Complex gradients] in autodiff.formulas).
    return np.real(grad).astype(operand.dtype, copy=False) if operand.dtype.kind == "f" else grad


def prod_backward(grad: Any, x: Any, axis: Any, keepdims: bool) -> Any:
    """The gradient of ``np.prod(x, axis, keepdims)``: each element gets the product of the
    others it was multiplied with, computed without dividing (exact where x has zeros)."""
    x = np.asarray(x)
    reduced = normalize_axes(axis, x.ndim)
    kept = [i for i in range(x.ndim) if i not in reduced]
    moved = np.transpose(x, [*kept, *reduced])
    count = int(np.prod([x.shape[i] for i in reduced]))
    spread = unreduce(grad, x.shape, axis, keepdims)
    if count == 0:
        return np.zeros_like(spread)
    flat = moved.reshape((*moved.shape[: len(kept)], count))
    ones = np.ones((*flat.shape[:-1], 1), flat.dtype)
    before = np.cumprod(np.concatenate([ones, flat[..., :-1]], axis=-1), axis=-1)
    after = np.cumprod(np.concatenate([ones, flat[..., :0:-1]], axis=-1), axis=-1)[..., ::-1]
    others = np.transpose((before * after).reshape(moved.shape), np.argsort([*kept, *reduced]))
    return spread * others


def prod_double_backward(
    cotangent: Any, grad: Any, x: Any, axis: Any, keepdims: bool
) -> tuple[Any, Any]:
    """The gradients of `prod_backward` w.r.t. ``grad`` and ``x`` for a ``cotangent`` of x's
    shape. W.r.t. ``grad``: the cotangent times the others' product, summed back. W.r.t.
    ``x``: ``grad`` times the derivative of the others' product in the cotangent's direction
    (the Hessian of a product is symmetric), from prefix and suffix products carried with
    their derivatives, so without dividing (exact where x has zeros)."""
    x = np.asarray(x)
    grad = np.asarray(grad)
    cotangent = np.asarray(cotangent)
    reduced = normalize_axes(axis, x.ndim)
    others = prod_backward(np.ones_like(grad), x, axis, keepdims)
    grad_grad = np.sum(cotangent * others, axis=reduced, keepdims=True).reshape(grad.shape)
    kept = [i for i in range(x.ndim) if i not in reduced]
    order = [*kept, *reduced]
    moved = np.transpose(x, order)
    count = int(np.prod([x.shape[i] for i in reduced]))
    flat = moved.reshape((*moved.shape[: len(kept)], count))
    direction = np.transpose(cotangent, order).reshape(flat.shape)
    before, after = np.ones_like(flat), np.ones_like(flat)
    # A complex cotangent of a real x (a real part taken later) makes the derivatives complex.
    moving = np.result_type(flat, direction)
    d_before, d_after = np.zeros(flat.shape, moving), np.zeros(flat.shape, moving)
    for k in range(1, count):
        before[..., k] = before[..., k - 1] * flat[..., k - 1]
        d_before[..., k] = d_before[..., k - 1] * flat[..., k - 1]
        d_before[..., k] += before[..., k - 1] * direction[..., k - 1]
        j = count - 1 - k
        after[..., j] = after[..., j + 1] * flat[..., j + 1]
        d_after[..., j] = (
            d_after[..., j + 1] * flat[..., j + 1] + after[..., j + 1] * direction[..., j + 1]
        )
    moved_jvp = (d_before * after + before * d_after).reshape(moved.shape)
    jvp = np.transpose(moved_jvp, np.argsort(order))
    grad_x = unreduce(grad, x.shape, axis, keepdims) * jvp
    return _gradient_of(grad_grad, grad), _gradient_of(grad_x, x)


def _gradient_of(value: Any, operand: Any) -> Any:
    """``value`` as the gradient of ``operand``: in its dtype, the real part of a real one's
    (Note [Complex gradients] in `autodiff.formulas`)."""
    if operand.dtype.kind != "c":
        value = np.real(value)
    return value.astype(operand.dtype, copy=False)


def _prod_double_backward_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    grad, x = as_tensor(types[1], 1), as_tensor(types[2], 2)
    return [TupleType((TensorType(grad.dtype, grad.shape), TensorType(x.dtype, x.shape)))]


def dtype_of(x: Any) -> str:
    """The dtype NumPy gives ``x`` (``"float64"`` for a Python float), to cast gradients to."""
    return np.result_type(x).name


def _dtype_of_value(types: Sequence[Type]) -> Any:
    ty = types[0]
    if isinstance(ty, TensorType) and ty.dtype is not None:
        return ty.dtype
    names: dict[Type, str] = {FLOAT: "float64", INT: "int64", BOOL: "bool"}
    return names.get(ty, NOT_CONSTANT)


def _sum_to(grad: Any, shape: tuple[int, ...]) -> Any:
    grad = np.asarray(grad)
    if grad.shape == shape:
        return grad
    lead = grad.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, d in enumerate(shape) if d == 1 and grad.shape[lead + i] != 1
    )
    return np.sum(grad, axis=axes, keepdims=True).reshape(shape)


def _dot_backward_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    grad = as_tensor(types[0])
    result: list[Type] = []
    for ty in types[1:3]:
        operand = as_array_like(ty)
        floating = operand.dtype is not None and np.dtype(operand.dtype).kind == "f"
        result.append(TensorType(operand.dtype if floating else grad.dtype, operand.shape))
    return [TupleType(tuple(result))]


def select_backward(grad: Any, shape: Any, axis: int, index: int) -> Any:
    """The gradient of ``x[..., index, ...]``: zeros of x's shape holding ``grad`` there."""
    result = np.zeros(shape, np.result_type(grad))
    result[_along(axis, index)] = grad
    return result


def slice_backward(
    grad: Any, shape: Any, axis: int, start: int | None, stop: int | None, step: int | None
) -> Any:
    """The gradient of ``x[..., start:stop:step, ...]``."""
    result = np.zeros(shape, np.result_type(grad))
    result[_along(axis, slice(start, stop, step))] = grad
    return result


def scatter_slices(grads: Any, shape: Any, keys: Any) -> Any:
    """Zeros of ``shape`` with each of ``grads`` added into its place: a key ``(axis, start,
    stop, step)`` names a slice along ``axis``, ``(axis, index)`` one index. The sum of the
    `slice_backward` and `select_backward` of each, with one array allocated instead of one
    per gradient (Note [Accumulating slices] in `passes.accumulate_slices`)."""
    result = np.zeros(shape, np.result_type(*grads))
    for position, (grad, (axis, *place)) in enumerate(zip(grads, keys, strict=True)):
        item = slice(*place) if len(place) == 3 else place[0]
        key = _along(axis, item)
        if position == 0:
            result[key] = grad  # written, not added to the zeros: a -0.0 stays -0.0
        else:
            result[key] += grad
    return result


def _scatter_slices_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    grads = types[0]
    elems = grads.elems if isinstance(grads, TupleType) else ()
    dtypes = [ty.dtype for ty in elems if isinstance(ty, TensorType) and ty.dtype is not None]
    dtype = np.result_type(*dtypes).name if dtypes and len(dtypes) == len(elems) else None
    return tensor(dtype, int_sequence(types[1], consts[1]))


def previous_row(tape: Any, first: Any, index: int) -> Any:
    """Row ``index - 1`` of ``tape``, ``first`` for index 0: what a loop-carried value was in
    iteration ``index``, read from the tape of the value it is carried from (Note [Shared
    carried tapes] in `passes.share_carried_tapes`)."""
    return first if index == 0 else tape[index - 1]


def index_tuple(x: Any, indices: Any) -> Any:
    """``aten::index`` with its index operands packed in one tuple, so a derivative formula
    (which has no ``*args``) can name them."""
    return x[tuple(slice(None) if item is None else item for item in indices)]


def _index_tuple_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    packed = types[1]
    if not isinstance(packed, TupleType):
        return [TensorType(as_tensor(types[0]).dtype)]
    items = consts[1] if consts[1] is not NOT_CONSTANT else (NOT_CONSTANT,) * len(packed.elems)
    rule = OPS["aten::index"].shape
    assert rule is not None
    return list(rule([types[0], *packed.elems], [consts[0], *items]))


def index_backward(grad: Any, shape: Any, indices: Any) -> Any:
    """The gradient of advanced indexing: repeated indices accumulate (``np.add.at``)."""
    result = np.zeros(shape, np.result_type(grad))
    key: Any = tuple(slice(None) if item is None else item for item in indices)
    np.add.at(result, key, grad)
    return result


def _index_key(indices: Any) -> Any:
    """The subscript ``aten::index`` builds from its index operands (None is ``:``)."""
    return tuple(slice(None) if item is None else item for item in indices)


def index_put_tuple(x: Any, values: Any, indices: Any) -> Any:
    """``aten::index_put`` with its index operands packed in one tuple: ``x`` with
    ``x[indices] = values`` written, a repeated position keeping the last value."""
    result = np.array(x, copy=True)
    result[_index_key(indices)] = values
    return result


def add_at_tuple(x: Any, values: Any, indices: Any) -> Any:
    """``aten::add_at`` with its index operands packed in one tuple: ``np.add.at`` on a copy."""
    result = np.array(x, copy=True)
    np.add.at(result, _index_key(indices), values)
    return result


def _index_put_tuple_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    return _unpacked_rule("aten::index_put", types, consts, fixed=2)


def _add_at_tuple_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    return _unpacked_rule("aten::add_at", types, consts, fixed=2)


def _unpacked_rule(op: str, types: Sequence[Type], consts: Sequence[Any], fixed: int) -> list[Type]:
    """The rule of variadic ``op`` applied to a helper's operands, whose last one packs the
    variadic operands in a tuple; the result is like operand 0 when the tuple's type is not
    known."""
    packed = types[fixed]
    if not isinstance(packed, TupleType):
        x = as_tensor(types[0])
        return [TensorType(x.dtype, x.shape)]
    const = consts[fixed]
    items = const if const is not NOT_CONSTANT else (NOT_CONSTANT,) * len(packed.elems)
    rule = OPS[op].shape
    assert rule is not None
    return list(rule([*types[:fixed], *packed.elems], [*consts[:fixed], *items]))


def zero_written(grad: Any, indices: Any) -> Any:
    """The gradient ``aten::index_put`` sends to ``self``: zero wherever the write landed,
    since those old values were overwritten."""
    result = np.array(grad, copy=True)
    result[_index_key(indices)] = 0
    return result


def _last_writes(shape: tuple[int, ...], key: Any) -> Any:
    """A mask over ``x[key]`` for an ``x`` of ``shape``: True at the element that writes each
    position last when ``x[key] = values`` runs (NumPy writes in C order of the indexed result,
    so a repeated position keeps the value written last)."""
    positions = np.arange(math.prod(shape)).reshape(shape)[key]
    flat = np.ravel(positions)
    _, first_from_the_end = np.unique(flat[::-1], return_index=True)
    last = np.zeros(flat.size, dtype=bool)
    last[flat.size - 1 - first_from_the_end] = True
    return last.reshape(np.shape(positions))


def gather_last_written(grad: Any, indices: Any) -> Any:
    """The gradient ``aten::index_put`` sends to the values it writes, before undoing their
    broadcasting: ``grad[indices]``, except that a value a later one overwrote gets 0."""
    grad = np.asarray(grad)
    key = _index_key(indices)
    return np.where(_last_writes(grad.shape, key), grad[key], np.zeros((), grad.dtype))


def scatter_last_written(grad: Any, shape: Any, indices: Any) -> Any:
    """The adjoint of `gather_last_written`: zeros of ``shape`` holding ``grad`` where
    ``indices`` write, each repeated position the last of its values."""
    result = np.zeros(shape, np.result_type(grad))
    result[_index_key(indices)] = grad
    return result


def gradient_dtype(operand: Any, result: Any) -> str:
    """The dtype of ``operand``'s gradient: its own for an array, the result's for a Python
    number, whose gradient has the precision of what it was combined with (NEP 50)."""
    if isinstance(operand, np.ndarray | np.generic):
        return operand.dtype.name
    return np.result_type(result).name


def _gradient_dtype_value(types: Sequence[Type]) -> Any:
    operand = types[0]
    if isinstance(operand, TensorType):
        return NOT_CONSTANT if operand.dtype is None else operand.dtype
    result = types[1]
    if operand in (INT, FLOAT, BOOL) and isinstance(result, TensorType) and result.dtype:
        return result.dtype
    return NOT_CONSTANT


def concatenate_backward(grad: Any, sizes: Any, axis: int | None) -> tuple[Any, ...]:
    """Split the gradient of ``np.concatenate`` back into one piece per input."""
    if axis is None:
        pieces = np.split(np.asarray(grad), np.cumsum([int(np.prod(s)) for s in sizes])[:-1])
        return tuple(p.reshape(s) for p, s in zip(pieces, sizes, strict=True))
    bounds = np.cumsum([s[axis] for s in sizes])[:-1]
    return tuple(np.split(np.asarray(grad), bounds, axis=axis))


def input_shapes(tensors: Any) -> tuple[tuple[int, ...], ...]:
    """The shape of each array of a sequence (what `concatenate_backward` splits by)."""
    return tuple(np.shape(t) for t in tensors)


def _input_shapes_value(types: Sequence[Type]) -> Any:
    seq = types[0]
    if not isinstance(seq, TupleType):
        return NOT_CONSTANT
    shapes = []
    for ty in seq.elems:
        if not isinstance(ty, TensorType) or ty.shape is None or None in ty.shape:
            return NOT_CONSTANT
        shapes.append(ty.shape)
    return tuple(shapes)


def _input_shapes_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    value = _input_shapes_value(types)
    if value is NOT_CONSTANT:
        return [ANY]
    return [TupleType(tuple(TupleType((INT,) * len(s)) for s in value))]


def cumsum_backward(grad: Any, shape: Any, axis: int | None) -> Any:
    """The gradient of ``np.cumsum(x, axis)``: a cumulative sum from the other end, reshaped
    back to x's ``shape`` (a flat gradient when ``axis`` is None)."""
    grad = np.asarray(grad)
    along = 0 if axis is None else axis
    summed = np.flip(np.cumsum(np.flip(grad, along), axis=along), along)
    return np.reshape(summed, shape)


def diff_backward(grad: Any, shape: Any, n: int, axis: int) -> Any:
    """The gradient of ``np.diff(x, n, axis)``: the adjoint of one difference,
    ``g[j - 1] - g[j]`` with zeros beyond either end, applied ``n`` times."""
    grad = np.asarray(grad)
    if n >= shape[axis]:  # an empty result: x does not reach it
        return np.zeros(shape, grad.dtype)
    widths = [(0, 0)] * grad.ndim
    widths[axis] = (1, 1)
    for _ in range(n):
        grad = -np.diff(np.pad(grad, widths), axis=axis)
    return grad


def stack_backward(grad: Any, axis: int) -> tuple[Any, ...]:
    """Split the gradient of ``np.stack`` back into one piece per stacked input."""
    grad = np.asarray(grad)
    return tuple(np.take(grad, i, axis=axis) for i in range(grad.shape[axis]))


register_op(
    "aten::_unreduce(Tensor grad, Any shape, Any axis, bool keepdims) -> Tensor",
    shape=_shaped_by_operand(1),
)(unreduce)
register_op(
    "aten::_transpose_backward(Tensor grad, Any axes) -> Tensor", shape=_transpose_backward_rule
)(transpose_backward)
register_op(
    "aten::_matmul_backward_self(Tensor grad, Tensor self, Tensor other) -> Tensor",
    shape=_like_tensor_operand(1),
)(matmul_backward_self)
register_op(
    "aten::_matmul_backward_other(Tensor grad, Tensor self, Tensor other) -> Tensor",
    shape=_like_tensor_operand(2),
)(matmul_backward_other)
register_op(
    "aten::_dot_backward(Tensor grad, Any self, Any other) -> Any",
    shape=_dot_backward_rule,
)(dot_backward)
register_op(
    "aten::_prod_backward(Tensor grad, Tensor self, Any axis, bool keepdims) -> Tensor",
    shape=_like_tensor_operand(1),
)(prod_backward)
register_op(
    "aten::_prod_double_backward(Tensor cotangent, Tensor grad, Tensor self, Any axis,"
    " bool keepdims) -> Any",
    shape=_prod_double_backward_rule,
)(prod_double_backward)
register_op(
    "aten::_dtype_of(Any self) -> str",
    shape=fixed(STR),
    differentiable=False,
    value_from_types=_dtype_of_value,
)(dtype_of)
register_op(
    "aten::_select_backward(Tensor grad, Any shape, int axis, int index) -> Tensor",
    shape=_shaped_by_operand(1),
)(select_backward)
register_op(
    "aten::_slice_backward(Tensor grad, Any shape, int axis, int? start, int? stop, int? step)"
    " -> Tensor",
    shape=_shaped_by_operand(1),
)(slice_backward)
register_op(
    "aten::_scatter_slices(Any grads, Any shape, Any keys) -> Tensor",
    shape=_scatter_slices_rule,
    differentiable=False,
)(scatter_slices)
register_op(
    "aten::_previous_row(Tensor tape, Tensor first, int index) -> Tensor",
    shape=_like_tensor_operand(1),
    differentiable=False,
)(previous_row)
register_op("aten::_index_tuple(Tensor self, Any indices) -> Tensor", shape=_index_tuple_rule)(
    index_tuple
)
register_op(
    "aten::_index_backward(Tensor grad, Any shape, Any indices) -> Tensor",
    shape=_shaped_by_operand(1),
)(index_backward)
register_op(
    "aten::_index_put_tuple(Tensor self, Any values, Any indices) -> Tensor",
    shape=_index_put_tuple_rule,
)(index_put_tuple)
register_op(
    "aten::_add_at_tuple(Tensor self, Any values, Any indices) -> Tensor",
    shape=_add_at_tuple_rule,
)(add_at_tuple)
register_op("aten::_zero_written(Tensor grad, Any indices) -> Tensor", shape=same_shape)(
    zero_written
)
register_op(
    "aten::_gather_last_written(Tensor grad, Any indices) -> Tensor", shape=_index_tuple_rule
)(gather_last_written)
register_op(
    "aten::_scatter_last_written(Tensor grad, Any shape, Any indices) -> Tensor",
    shape=_shaped_by_operand(1),
)(scatter_last_written)
register_op(
    "aten::_gradient_dtype(Any operand, Any result) -> str",
    shape=fixed(STR),
    differentiable=False,
    value_from_types=_gradient_dtype_value,
)(gradient_dtype)


def _concatenate_backward_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    grad = as_tensor(types[0])
    sizes = consts[1]
    if sizes is NOT_CONSTANT:
        return [ANY]
    return [TupleType(tuple(TensorType(grad.dtype, tuple(s)) for s in sizes))]


def _stack_backward_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    grad = as_tensor(types[0])
    axis = consts[1]
    if grad.shape is None or axis is NOT_CONSTANT or grad.shape[axis] is None:
        return [ANY]
    piece = tuple(d for i, d in enumerate(grad.shape) if i != axis % len(grad.shape))
    return [TupleType((TensorType(grad.dtype, piece),) * int(grad.shape[axis]))]


register_op(
    "aten::_concatenate_backward(Tensor grad, Any sizes, int? axis) -> Any",
    shape=_concatenate_backward_rule,
)(concatenate_backward)
register_op(
    "aten::_input_shapes(Any tensors) -> Any",
    shape=_input_shapes_rule,
    differentiable=False,
    value_from_types=_input_shapes_value,
)(input_shapes)
register_op(
    "aten::_cumsum_backward(Tensor grad, Any shape, int? axis) -> Tensor",
    shape=_shaped_by_operand(1),
)(cumsum_backward)
register_op(
    "aten::_diff_backward(Tensor grad, Any shape, int n, int axis) -> Tensor",
    shape=_shaped_by_operand(1),
)(diff_backward)
register_op("aten::_stack_backward(Tensor grad, int axis) -> Any", shape=_stack_backward_rule)(
    stack_backward
)


# ---- gradients of lists: Note [Lists are values] in `ir.ops.prim` ------------------------------


def list_index_backward(grad: Any, lst: Any, index: int) -> list[Any]:
    """The gradient of ``lst[index]`` w.r.t. the list ``lst``: zeros like each element, with
    ``grad`` at ``index``. An element may itself be a tuple or list (``[(W, b), (V, c)]``):
    its zeros are then a tuple or list of zeros, and a part of ``grad`` that is
    `AUTOGRAD_ZERO` (a part of the tuple nothing read) becomes zeros like that part, so that
    no list gradient holds the sentinel at any depth (Note [Lists are values]).

    >>> list_index_backward(np.ones(2), [np.ones(2), np.ones(2)], -1)
    [array([0., 0.]), array([1., 1.])]
    >>> list_index_backward((AUTOGRAD_ZERO, 2.0), [(np.ones(1), 1.0)], 0)
    [(array([0.]), 2.0)]
    """
    grads = [zeros_like_value(element) for element in lst]
    grads[index] = _without_sentinel(grad, lst[index])
    return grads


def _without_sentinel(grad: Any, like: Any) -> Any:
    """``grad`` with each `AUTOGRAD_ZERO` in it (at any depth) replaced by zeros like the
    matching part of ``like``."""
    if grad is AUTOGRAD_ZERO:
        return zeros_like_value(like)
    if isinstance(grad, list | tuple):
        return type(grad)(_without_sentinel(g, v) for g, v in zip(grad, like, strict=True))
    return grad


def _list_index_backward_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    lst = types[1]
    if isinstance(lst, ListType):
        return [lst]
    if isinstance(lst, TupleType):
        return [ListType(join_all(lst.elems, NOTHING))]
    return [ANY]


def list_head(lst: Any) -> list[Any]:
    """``lst[:-1]`` as a list: the gradient of the list that ``prim::ListAppend`` appended to.

    >>> list_head([1, 2, 3])
    [1, 2]
    """
    return list(lst[:-1])


def _list_head_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    lst = types[0]
    if isinstance(lst, ListType):
        return [lst]
    if isinstance(lst, TupleType):
        return [ListType(join_all(lst.elems[:-1], NOTHING))]
    return [ListType(ANY)]


def add_lists(a: Any, b: Any) -> list[Any]:
    """Two list gradients added element by element (what ``prim::AutogradAdd`` of two lists
    becomes once both are known not to be zero: list gradients never hold the sentinel). An
    element that is a tuple or list (the gradient of ``[(W, b), ...]``) is added element by
    element too, not concatenated as Python's ``+`` would.

    >>> add_lists([1, (2, 3)], [10, (20, 30)])
    [11, (22, 33)]
    """
    return [autograd_add(x, y) for x, y in zip(a, b, strict=True)]


def _add_lists_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    a, b = types
    if not isinstance(a, ListType) or not isinstance(b, ListType):
        return [ListType(ANY)]
    return [join_list_gradients(a, b)]


def is_list(sequence: Any) -> bool:
    """Whether ``sequence`` is a list (not a tuple): the formulas of ``np.stack`` and
    ``np.concatenate`` hand back a list of gradients for a list of arrays."""
    return isinstance(sequence, list)


def _is_list_value(types: Sequence[Type]) -> Any:
    if isinstance(types[0], ListType):
        return True
    if isinstance(types[0], TupleType):
        return False
    return NOT_CONSTANT


def sequence_as(parts: Any, as_list: bool) -> Any:
    """``parts`` as a list when ``as_list``, else as a tuple.

    >>> sequence_as((1, 2), True)
    [1, 2]
    """
    return list(parts) if as_list else tuple(parts)


def _sequence_as_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    parts, as_list = types[0], consts[1]
    if as_list is NOT_CONSTANT:
        return [ANY]
    if isinstance(parts, TupleType):
        return [ListType(join_all(parts.elems, NOTHING)) if as_list else parts]
    if isinstance(parts, ListType) and as_list:
        return [parts]
    return [ListType(ANY) if as_list else ANY]


def zeros_like_value(value: Any) -> Any:
    """The zero gradient of any value a gradient can flow through: zeros like an array, 0.0
    for a number, and element by element for lists and tuples (a loop tape's).

    >>> zeros_like_value([np.ones(2), 3.0])
    [array([0., 0.]), 0.0]
    """
    if isinstance(value, list | tuple):
        return type(value)(zeros_like_value(item) for item in value)
    if isinstance(value, float):
        return 0.0
    return np.zeros_like(value)


def _same_type(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    return [types[0]]


register_op(
    "aten::_list_index_backward(Any grad, Any lst, int index) -> Any",
    shape=_list_index_backward_rule,
)(list_index_backward)
register_op(
    "aten::_is_list(Any sequence) -> bool",
    shape=fixed(BOOL),
    differentiable=False,
    value_from_types=_is_list_value,
)(is_list)
register_op("aten::_sequence_as(Any parts, bool as_list) -> Any", shape=_sequence_as_rule)(
    sequence_as
)
register_op("aten::_list_head(Any lst) -> Any[]", shape=_list_head_rule)(list_head)
register_op("aten::_zeros_like_value(Any value) -> Any", shape=_same_type, differentiable=False)(
    zeros_like_value
)
register_op("aten::_add_lists(Any a, Any b) -> Any[]", shape=_add_lists_rule)(add_lists)


# ---- adjoints of the arrangement and selection operators --------------------------------------


def join_backward(grad: Any, shapes: Any, axis: int) -> tuple[Any, ...]:
    """Split the gradient of ``np.hstack``/``np.vstack`` (a concatenation along ``axis`` of the
    inputs made at least ``grad.ndim``-d) back into one piece per input, in its own shape."""
    grad = np.asarray(grad)
    lengths = [atleast_shape(tuple(s), grad.ndim)[axis] for s in shapes]
    pieces = np.split(grad, np.cumsum(lengths)[:-1], axis=axis)
    return tuple(p.reshape(s) for p, s in zip(pieces, shapes, strict=True))


def join(tensors: Any, axis: int, ndim: int) -> Any:
    """The adjoint of `join_backward`: the arrays made at least ``ndim``-d, as ``np.hstack``
    and ``np.vstack`` make them, concatenated along ``axis``."""
    shaped = [np.reshape(t, atleast_shape(np.shape(t), ndim)) for t in tensors]
    return np.concatenate(shaped, axis=axis)


def _join_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    axis, ndim = consts[1], consts[2]
    if ndim is NOT_CONSTANT:
        return _concatenate_rule([types[0], INT], [NOT_CONSTANT, NOT_CONSTANT])
    sequence, _ = _promoted_sequence(types[0], int(ndim))
    return _concatenate_rule([sequence, INT], [NOT_CONSTANT, axis])


def repeat_backward(grad: Any, shape: Any, repeats: Any, axis: int | None) -> Any:
    """The gradient of ``np.repeat``: each element gets the sum of its copies' gradients."""
    grad = np.asarray(grad)
    result = np.zeros(shape, grad.dtype)
    if axis is None:
        owners = np.repeat(np.arange(result.size), repeats)
        np.add.at(result.reshape(-1), owners, grad)
        return result
    owners = np.repeat(np.arange(result.shape[axis]), repeats)
    np.add.at(np.moveaxis(result, axis, 0), owners, np.moveaxis(grad, axis, 0))
    return result


def tile_backward(grad: Any, shape: Any, reps: Any) -> Any:
    """The gradient of ``np.tile``: the sum of the gradients of every tile."""
    shape = tuple(shape)
    counts = tuple(int(r) for r in np.ravel(reps))
    rank = max(len(counts), len(shape))
    base = (1,) * (rank - len(shape)) + shape
    counts = (1,) * (rank - len(counts)) + counts
    split = [n for pair in zip(counts, base, strict=True) for n in pair]
    tiles = np.reshape(grad, split).sum(axis=tuple(range(0, 2 * rank, 2)))
    return tiles.reshape(shape)


def pad_backward(grad: Any, shape: Any, pad_width: Any, mode: PadMode) -> tuple[Any, Any]:
    """The gradients of ``np.pad`` w.r.t. the array and ``constant_values``: each element gets
    the gradients of every place the padding copied it to (a reflection may copy it several
    times), the constant those of the places it filled."""
    grad = np.asarray(grad)
    origin = np.arange(int(np.prod(shape))).reshape(shape)
    if mode == "constant":
        origin = np.pad(origin, pad_width, mode, constant_values=-1)
    else:
        origin = np.pad(origin, pad_width, mode)
    copied = origin >= 0
    result = np.zeros(int(np.prod(shape)), grad.dtype)
    np.add.at(result, origin[copied], grad[copied])
    return result.reshape(shape), np.asarray(np.sum(grad[~copied]), grad.dtype)


def _pad_backward_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    grad = as_tensor(types[0])
    shape = int_sequence(types[1], consts[1])
    return [TupleType((TensorType(grad.dtype, shape), TensorType(grad.dtype, ())))]


def diagonal_backward(grad: Any, shape: Any, offset: int, axis1: int, axis2: int) -> Any:
    """The gradient of ``np.diagonal``: zeros of the input's shape holding ``grad`` on that
    diagonal (``grad`` broadcasts along it: ``np.trace`` passes one value per matrix)."""
    grad = np.asarray(grad)
    result = np.zeros(shape, grad.dtype)
    planes = np.moveaxis(result, (axis1, axis2), (-2, -1))
    steps = np.arange(diagonal_length(planes.shape[-2], planes.shape[-1], offset) or 0)
    planes[..., steps + max(-offset, 0), steps + max(offset, 0)] = grad
    return result


def diag_backward(grad: Any, shape: Any, k: int) -> Any:
    """The gradient of ``np.diag``: the diagonal of the gradient for a vector, the gradient put
    on that diagonal for a matrix."""
    if len(shape) == 1:
        return np.diagonal(grad, k).copy()
    return diagonal_backward(grad, shape, k, 0, 1)


def take_backward(grad: Any, shape: Any, indices: Any, axis: int | None) -> Any:
    """The gradient of ``np.take``: repeated indices accumulate (``np.add.at``)."""
    grad = np.asarray(grad)
    result = np.zeros(shape, grad.dtype)
    if axis is None:
        np.add.at(result.reshape(-1), np.asarray(indices), grad)
        return result
    along: Any = (slice(None),) * (axis % result.ndim) + (np.asarray(indices),)
    np.add.at(result, along, grad)
    return result


register_op(
    "aten::_join_backward(Tensor grad, Any shapes, int axis) -> Any",
    shape=_concatenate_backward_rule,
)(join_backward)
register_op("aten::_join(Any tensors, int axis, int ndim) -> Tensor", shape=_join_rule)(join)
register_op(
    "aten::_repeat_backward(Tensor grad, Any shape, Any repeats, int? axis) -> Tensor",
    shape=_shaped_by_operand(1),
)(repeat_backward)
register_op(
    "aten::_tile_backward(Tensor grad, Any shape, Any reps) -> Tensor",
    shape=_shaped_by_operand(1),
)(tile_backward)
register_op(
    "aten::_pad_backward(Tensor grad, Any shape, Any pad_width, str mode) -> Any",
    shape=_pad_backward_rule,
)(pad_backward)
register_op(
    "aten::_diagonal_backward(Tensor grad, Any shape, int offset, int axis1, int axis2) -> Tensor",
    shape=_shaped_by_operand(1),
)(diagonal_backward)
register_op(
    "aten::_diag_backward(Tensor grad, Any shape, int k) -> Tensor", shape=_shaped_by_operand(1)
)(diag_backward)
register_op(
    "aten::_take_backward(Tensor grad, Any shape, Any indices, int? axis) -> Tensor",
    shape=_shaped_by_operand(1),
)(take_backward)


# ---- adjoints of np.linalg operators whose formulas branch on a result's structure or ord -----


def _swap(x: Any) -> Any:
    return np.swapaxes(x, -1, -2)


def _adjoint(x: Any) -> Any:
    return np.conj(np.swapaxes(x, -1, -2))


def svd_backward(grad: Any, a: Any, out: Any, full_matrices: bool, compute_uv: bool) -> Any:
    """The gradient of ``np.linalg.svd`` for distinct non-zero singular values. With
    ``full_matrices`` the columns past ``min(m, n)`` are not unique: they must get no gradient.

    A complex ``a`` (Wan and Zhang 2019; PyTorch's ``svd_backward``): the formula below is the
    one in the conjugate convention (dL/dRe + i dL/dIm), so the cotangents are conjugated on
    the way in and the result on the way out (Note [Complex gradients] in
    `autodiff.formulas`). A loss that depends on the phases of the singular vectors (which
    are arbitrary) has no gradient; the formula assumes one that does not, as ``abs(u)``."""
    a = np.asarray(a)
    m, n = a.shape[-2:]
    k = min(m, n)
    if compute_uv:
        u, s, vh = out
        grad_u, grad_s, grad_vh = (np.conj(np.asarray(g)) for g in grad)
        if full_matrices and (np.any(grad_u[..., k:]) or np.any(grad_vh[..., k:, :])):
            raise ValueError(
                "the gradient of svd with full_matrices=True is not defined for the columns of "
                "u or rows of vh past min(m, n): pass full_matrices=False"
            )
        u, grad_u = u[..., :k], grad_u[..., :k]
        vh, grad_vh = vh[..., :k, :], grad_vh[..., :k, :]
    else:
        u, s, vh = np.linalg.svd(a, full_matrices=False)
        grad_s = np.asarray(grad)
        grad_u, grad_vh = np.zeros_like(u), np.zeros_like(vh)
    v, grad_v = _adjoint(vh), _adjoint(grad_vh)
    eye = np.eye(k, dtype=s.dtype)
    squares = s[..., None, :] ** 2 - s[..., :, None] ** 2  # s_j^2 - s_i^2
    f = (1 - eye) / (squares + eye)
    uhgu = _adjoint(u) @ grad_u
    vhgv = _adjoint(v) @ grad_v
    sigma = s[..., None, :] * eye
    core = (f * (uhgu - _adjoint(uhgu))) @ sigma + sigma @ (f * (vhgv - _adjoint(vhgv)))
    core = core + grad_s[..., None, :] * eye
    inverse = (1 / s)[..., None, :]
    if np.iscomplexobj(u):
        # The phase of each singular pair: i Im(diag(U^H gU)) / s.
        core = core + 1j * np.imag(uhgu) * eye * inverse
    result = u @ core @ vh
    if m > k:
        result = result + ((grad_u - u @ uhgu) * inverse) @ vh
    if n > k:
        result = result + u @ _adjoint((grad_v - v @ vhgv) * inverse)
    return np.conj(result).astype(a.dtype, copy=False)


def norm_backward(grad: Any, x: Any, out: Any, order: Any, axis: Any, keepdims: bool) -> Any:
    """The gradient of ``np.linalg.norm``: vector norms (p-norms, inf, -inf), the Frobenius
    norm, and the 1 and inf matrix norms; ties in a max share the gradient evenly."""
    x = np.asarray(x)
    axes = tuple(range(x.ndim)) if axis is None else normalize_axes(axis, x.ndim)
    if not keepdims:
        grad = np.expand_dims(grad, axes)
        out = np.expand_dims(out, axes)
    if order is None or order == "fro" or (len(axes) == 1 and order == 2):
        slope = np.where(out == 0, 0, np.conj(x) / np.where(out == 0, 1, out))
        return (grad * slope).astype(x.dtype)
    if len(axes) == 1:
        return (grad * _vector_norm_slope(x, out, order, axes)).astype(x.dtype)
    if order in (1, -1, np.inf, -np.inf):
        # Matrix 1/inf norms: the extreme column (row) sum of absolute values. ``axis`` is
        # (row axis, column axis) in the order given, which ``axes`` (sorted) forgets.
        rows, columns = axes if axis is None else (normalize_axis(int(a), x.ndim) for a in axis)
        summed = rows if order in (1, -1) else columns
        sums = np.sum(np.abs(x), axis=summed, keepdims=True)
        hits = (sums == out).astype(out.dtype)
        hits = hits / np.sum(hits, axis=axes, keepdims=True)
        return (grad * hits * _abs_slope(x)).astype(x.dtype)
    if order in (2, -2, "nuc"):
        return (grad * _singular_norm_slope(x, order, axes)).astype(x.dtype)
    raise ValueError(f"the gradient of a matrix norm with ord={order!r} is not supported")


def _singular_norm_slope(x: Any, order: Any, axes: tuple[int, ...]) -> Any:
    """The slope of the spectral (ord 2), smallest-singular-value (-2) and nuclear norms of
    the matrices over ``axes``, with those axes kept: ``conj(u_i vh_i)`` summed over the
    singular pairs the norm takes (the conjugate is the slope's in Note [Complex gradients]).
    A largest or smallest value several pairs share gives each of them an equal part, and the
    nuclear norm takes the pairs whose value is not 0: the least-norm subgradient, as for the
    other norms' ties (docs/conventions.md)."""
    matrices = np.moveaxis(x, axes, (-2, -1))
    u, s, vh = np.linalg.svd(matrices, full_matrices=False)
    if order == "nuc":
        taken = (s > 0).astype(s.dtype)
    else:
        extreme = s[..., :1] if order == 2 else s[..., -1:]
        taken = (s == extreme).astype(s.dtype)
        taken = taken / np.sum(taken, axis=-1, keepdims=True)
    slope = np.conj((u * taken[..., None, :]) @ vh)
    return np.moveaxis(slope, (-2, -1), axes)


# The formulas of np.linalg.norm's gradient (`norm_kind`).
NORM_EUCLIDEAN, NORM_POWER, NORM_LARGEST, NORM_COUNT, NORM_OTHER = range(5)


def norm_kind(order: Any, axis: Any, ndim: int) -> int:
    """Which of its formulas the gradient of ``np.linalg.norm(x, order, axis)`` takes, for an
    ``x`` of rank ``ndim`` (a constant once ranks are known, so the formula's branches fold):
    `NORM_EUCLIDEAN` (the 2-norm of vectors, the Frobenius norm), `NORM_POWER` (another
    vector p-norm), `NORM_LARGEST` (vector ``inf``/``-inf``), `NORM_COUNT` (``ord=0``), and
    `NORM_OTHER` for the matrix norms the `norm_backward` kernel computes, whose gradient is
    not written in differentiable operators (no second derivative).

    >>> norm_kind(None, None, 2), norm_kind(3, None, 1), norm_kind(2, None, 2)
    (0, 1, 4)
    """
    vector = len(normalize_axes(axis, ndim)) == 1
    if order is None or (isinstance(order, str) and order == "fro") or (vector and order == 2):
        return NORM_EUCLIDEAN
    if not vector or isinstance(order, str):
        return NORM_OTHER
    if order in (np.inf, -np.inf):
        return NORM_LARGEST
    return NORM_COUNT if order == 0 else NORM_POWER


def _abs_slope(x: Any) -> Any:
    """The gradient of ``|x|`` elementwise: ``sign(x)``, and ``conj(x) / |x|`` for a complex
    ``x`` (Note [Complex gradients] in `autodiff.formulas`); 0 at 0."""
    return np.conj(np.sign(x))


def _vector_norm_slope(x: Any, out: Any, order: Any, axes: tuple[int, ...]) -> Any:
    if order in (np.inf, -np.inf):
        hits = (np.abs(x) == out).astype(out.dtype)
        return _abs_slope(x) * hits / np.sum(hits, axis=axes, keepdims=True)
    if order == 0:
        return np.zeros_like(x)
    p = float(order)
    safe = np.where(out == 0, 1, out)
    return np.where(out == 0, 0, _abs_slope(x) * (np.abs(x) / safe) ** (p - 1))


def _like_operand(position: int) -> Any:
    """A rule: a tensor like operand ``position`` (its dtype and shape)."""

    def rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
        operand = as_tensor(types[position], position)
        return tensor(operand.dtype, operand.shape)

    return rule


register_op(
    "aten::_svd_backward(Any grad, Tensor self, Any out, bool full_matrices, bool compute_uv)"
    " -> Tensor",
    shape=_like_operand(1),
)(svd_backward)
register_op(
    "aten::_norm_backward(Tensor grad, Tensor self, Tensor out, Any ord, Any axis, bool keepdims)"
    " -> Tensor",
    shape=_like_operand(1),
)(norm_backward)
register_op(
    "aten::_norm_kind(Any ord, Any axis, int ndim) -> int", shape=fixed(INT), differentiable=False
)(norm_kind)
