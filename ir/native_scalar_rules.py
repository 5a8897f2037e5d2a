"""The rules of `ir.native_scalar` for operators that are not a plain elementwise template:
views, reductions, products, creation, tapes and tuples. Each takes the emitter and the node
and gives the node's results, one `Repr` per output, writing what lines it needs; it raises
`Unsupported` for operands it does not handle (the block is then not scalarized).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from ir.graph import Node
from ir.native_scalar_ops import (
    REDUCTIONS,
    VIEWS,
    along,
    converted,
    elementwise,
    matmul,
    matmul_backward,
    normalize_axes,
    placed,
    reduce,
    sum_to_shape,
)
from ir.native_scalar_values import (
    BigArray,
    Elements,
    Repr,
    RowUpdate,
    Static,
    Unsupported,
    as_elements,
    cast,
    is_small,
    static_shape,
)
from ir.types import TensorType

if TYPE_CHECKING:
    from ir.native_scalar import Emitter

Rule = Callable[["Emitter", Node], list[Repr]]


def _view(emitter: Emitter, node: Node) -> list[Repr]:
    value = emitter.lookup(node.inputs[0])
    if isinstance(value, BigArray):
        return [_big_select(emitter, node, value)] if node.kind == "aten::select" else _no(node)
    items = as_elements(value) if isinstance(value, Static) else value
    if not isinstance(items, Elements):
        return _no(node)
    statics = [emitter.static(v) for v in node.inputs[1:]]
    if node.kind in ("aten::conj", "aten::real") and items.dtype not in ("float64", "float32"):
        return _no(node)
    try:
        rearranged = VIEWS[node.kind](items.items, *statics)
    except (ValueError, IndexError, TypeError) as error:
        raise Unsupported(str(error)) from None
    return [Elements(np.asarray(rearranged, dtype=object), items.dtype)]


def _no(node: Node) -> list[Repr]:
    raise Unsupported(f"{node.kind} on these operands")


def _check_index(emitter: Emitter, index: str, size: int) -> str:
    """A run-time index normalised and checked: numba reads out of bounds silently."""
    name = emitter.assign(f"{index} + {size} if {index} < 0 else {index}", "index")
    emitter.line(f"if {name} < 0 or {name} >= {size}:")
    emitter.line(f"    raise IndexError('index out of range for an axis of size {size}')")
    return name


def _row_reads(emitter: Emitter, array: str, shape: tuple[int, ...], axis: int, index: str) -> Any:
    rest = shape[:axis] + shape[axis + 1 :]
    items = np.empty(rest, dtype=object)
    for position in np.ndindex(rest):
        key = [*map(str, position[:axis]), index, *map(str, position[axis:])]
        items[position] = emitter.assign(f"{array}[{', '.join(key)}]", array)
    return items


def _big_select(emitter: Emitter, node: Node, value: BigArray) -> Repr:
    axis, index = node.inputs[1:]
    shape = static_shape(value.ty)
    if shape is None or not is_small(node.output.ty):
        raise Unsupported("select of a big array giving a big array")
    axis_value = emitter.static(axis) % len(shape)
    checked = _check_index(emitter, emitter.operand(index).scalar, shape[axis_value])
    return Elements(
        _row_reads(emitter, value.name, shape, axis_value, checked), str(value.ty.dtype)
    )


def _select_runtime(emitter: Emitter, node: Node) -> list[Repr]:
    """aten::select with an index known only at run time on a small input array."""
    value = emitter.lookup(node.inputs[0])
    index = emitter.lookup(node.inputs[2])
    if isinstance(index, Static) or isinstance(value, BigArray):
        return _view(emitter, node)
    if not isinstance(value, Elements) or value.array is None:
        return _no(node)
    axis = emitter.static(node.inputs[1]) % len(value.shape)
    checked = _check_index(emitter, emitter.operand(node.inputs[2]).scalar, value.shape[axis])
    return [Elements(_row_reads(emitter, value.array, value.shape, axis, checked), value.dtype)]


def _reduction(emitter: Emitter, node: Node) -> list[Repr]:
    value = emitter.operand(node.inputs[0])
    axis = emitter.static(node.inputs[1]) if len(node.inputs) > 1 else None
    keepdims = bool(emitter.static(node.inputs[2])) if len(node.inputs) > 2 else False
    axes = normalize_axes(axis, len(value.shape))
    return [reduce(emitter, node.kind, value, axes, keepdims, emitter.result_dtype(node.output))]


def _sum_to_size(emitter: Emitter, node: Node) -> list[Repr]:
    value = emitter.operand(node.inputs[0])
    shape = emitter.static(node.inputs[1])
    if shape is None:
        return [value]
    target = tuple(shape) if isinstance(shape, tuple | list) else (shape,)
    return [sum_to_shape(emitter, value, target)]


def _unreduce(emitter: Emitter, node: Node) -> list[Repr]:
    grad = emitter.operand(node.inputs[0])
    shape, axis, keepdims = (emitter.static(v) for v in node.inputs[1:])
    items = grad.items
    if not keepdims and axis is not None:
        items = np.expand_dims(items, normalize_axes(axis, len(shape)))
    return [Elements(np.broadcast_to(items, tuple(shape)), grad.dtype)]


def _matmul(emitter: Emitter, node: Node) -> list[Repr]:
    a, b = (emitter.operand(v) for v in node.inputs)
    if node.kind == "aten::dot" and (len(a.shape) > 2 or len(b.shape) > 2):
        return _no(node)
    return [matmul(emitter, a, b, emitter.result_dtype(node.output))]


def _matmul_backward(emitter: Emitter, node: Node) -> list[Repr]:
    grad, a, b = (emitter.operand(v) for v in node.inputs)
    if len({grad.dtype, a.dtype, b.dtype}) != 1:
        return _no(node)
    wrt = 0 if node.kind == "aten::_matmul_backward_self" else 1
    return [matmul_backward(emitter, grad, a, b, wrt)]


def _dot_backward(emitter: Emitter, node: Node) -> list[Repr]:
    """`dot_backward` for 1-d and 2-d operands, where ``np.dot`` is ``np.matmul``: the
    gradients w.r.t. both operands, as a tuple."""
    grad, a, b = (emitter.operand(v) for v in node.inputs)
    if (
        not (0 < len(a.shape) <= 2 and 0 < len(b.shape) <= 2)
        or len({grad.dtype, a.dtype, b.dtype}) != 1
    ):
        return _no(node)
    return [(matmul_backward(emitter, grad, a, b, 0), matmul_backward(emitter, grad, a, b, 1))]


def _outer(emitter: Emitter, node: Node) -> list[Repr]:
    a, b = (emitter.operand(v) for v in node.inputs)
    column = Elements(a.items.reshape(-1, 1), a.dtype)
    row = Elements(b.items.reshape(1, -1), b.dtype)
    return [elementwise(emitter, "aten::mul", [column, row], emitter.result_dtype(node.output))]


def _zeros(emitter: Emitter, node: Node) -> list[Repr]:
    ty = node.output.ty
    shape = static_shape(ty)
    if shape is None or not isinstance(ty, TensorType):
        return _no(node)
    if not is_small(ty):
        name = emitter.assign(f"np.zeros({shape!r}, np.{ty.dtype})", "zeros")
        return [BigArray(name, ty, owned=True)]
    zero = cast("0", "int", str(ty.dtype))
    return [Elements(np.full(shape, zero, dtype=object), str(ty.dtype))]


def _astype(emitter: Emitter, node: Node) -> list[Repr]:
    return [converted(emitter, emitter.operand(node.inputs[0]), emitter.result_dtype(node.output))]


def _select_backward(emitter: Emitter, node: Node) -> list[Repr]:
    grad = emitter.operand(node.inputs[0])
    shape, axis = emitter.static(node.inputs[1]), emitter.static(node.inputs[2])
    shape = tuple(shape) if isinstance(shape, tuple | list) else (shape,)
    dtype = emitter.result_dtype(node.output)
    zero = cast("0", "int", dtype)
    index = emitter.lookup(node.inputs[3])
    if isinstance(index, Static):
        return [placed(grad, shape, along(axis, index.value, len(shape)), zero)]
    # At a run-time index: each element is the gradient's where the index points, else zero.
    axis %= len(shape)
    checked = _check_index(emitter, emitter.operand(node.inputs[3]).scalar, shape[axis])
    if not is_small(node.output.ty):
        return [RowUpdate(grad, axis, checked)]
    items = np.empty(shape, dtype=object)
    for position in np.ndindex(shape):
        source = grad.items[position[:axis] + position[axis + 1 :]]
        items[position] = emitter.assign(f"{source} if {checked} == {position[axis]} else {zero}")
    return [Elements(items, dtype)]


def _add(emitter: Emitter, node: Node) -> list[Repr]:
    """aten::add; an owned big array read by nothing else plus a `RowUpdate` (a gradient
    accumulated into a sequence's row, ``dxs = dxs + select_backward(g, shape, 0, t)``) adds
    the row in place: the other elements stay as they are, as adding zeros leaves them."""
    first, second = (emitter.lookup(v) for v in node.inputs)
    if not isinstance(first, BigArray | RowUpdate) and not isinstance(second, BigArray | RowUpdate):
        operands = [emitter.operand(v) for v in node.inputs]
        return [elementwise(emitter, node.kind, operands, emitter.result_dtype(node.output))]
    array_value = node.inputs[0] if isinstance(first, BigArray) else node.inputs[1]
    array, update = (first, second) if isinstance(first, BigArray) else (second, first)
    if (
        not isinstance(array, BigArray)
        or not isinstance(update, RowUpdate)
        or not array.owned
        or len(array_value.uses) != 1
        or array.ty != node.output.ty
    ):
        return _no(node)
    shape = static_shape(array.ty) or ()
    if update.grad.shape != shape[: update.axis] + shape[update.axis + 1 :]:
        return _no(node)
    for position in np.ndindex(update.grad.shape):
        key = [*map(str, position[: update.axis]), update.index, *map(str, position[update.axis :])]
        element = cast(update.grad.at(position), update.grad.dtype, str(array.ty.dtype))
        emitter.line(f"{array.name}[{', '.join(key)}] += {element}")
    return [array]


def _scatter_slices(emitter: Emitter, node: Node) -> list[Repr]:
    """`scatter_slices`: zeros of ``shape`` with each gradient written (the first) or added
    (the rest) at its static key, element by element as NumPy's ``result[key] += grad``."""
    grads = emitter.lookup(node.inputs[0])
    shape, keys = emitter.static(node.inputs[1]), emitter.static(node.inputs[2])
    if not isinstance(grads, tuple) or not isinstance(shape, tuple):
        return _no(node)
    dtype = emitter.result_dtype(node.output)
    result = np.full(shape, cast("0", "int", dtype), dtype=object)
    for position, (grad, (axis, *place)) in enumerate(zip(grads, keys, strict=True)):
        if not isinstance(grad, Elements | Static):
            return _no(node)
        grad = as_elements(grad)
        item = slice(*place) if len(place) == 3 else place[0]
        target = result[along(axis, item, len(shape))]  # a view: writing it writes result
        spread = np.broadcast_to(grad.items, target.shape)
        for index in np.ndindex(target.shape):
            element = cast(str(spread[index]), grad.dtype, dtype)
            target[index] = (
                element if position == 0 else emitter.assign(f"({target[index]} + {element})")
            )
    return [Elements(result, dtype)]


def _slice_backward(emitter: Emitter, node: Node) -> list[Repr]:
    grad = emitter.operand(node.inputs[0])
    shape, axis, start, stop, step = (emitter.static(v) for v in node.inputs[1:])
    shape = tuple(shape) if isinstance(shape, tuple | list) else (shape,)
    key = along(axis, slice(start, stop, step), len(shape))
    return [placed(grad, shape, key, cast("0", "int", emitter.result_dtype(node.output)))]


def _tape_array(emitter: Emitter, node: Node) -> list[Repr]:
    ty = node.output.ty
    row_shape, dtype = emitter.static(node.inputs[1]), emitter.static(node.inputs[2])
    if not isinstance(ty, TensorType) or static_shape(TensorType(dtype, (1, *row_shape))) is None:
        return _no(node)
    length = emitter.operand(node.inputs[0]).scalar
    shape = ", ".join([f"max({length}, 0)", *map(str, row_shape)])
    tape = emitter.assign(f"np.zeros(({shape},), np.{dtype})", "tape")  # as ir.ops.tapes
    return [BigArray(tape, ty, owned=True)]


def _tape_write(emitter: Emitter, node: Node) -> list[Repr]:
    tape = emitter.lookup(node.inputs[0])
    shape = static_shape(tape.ty) if isinstance(tape, BigArray) else None
    if not isinstance(tape, BigArray) or shape is None:
        return _no(node)
    written = emitter.lookup(node.inputs[2])
    if isinstance(written, Static) and written.value is None:
        return [tape]  # an undefined value leaves its row unwritten (`tape_write`)
    row = emitter.operand(node.inputs[2])
    if row.shape != shape[1:]:
        return _no(node)
    index = _check_index(emitter, emitter.operand(node.inputs[1]).scalar, shape[0])
    for position in np.ndindex(row.shape):
        key = ", ".join([index, *map(str, position)])
        emitter.line(
            f"{tape.name}[{key}] = {cast(row.at(position), row.dtype, str(tape.ty.dtype))}"
        )
    return [tape]


def _previous_row(emitter: Emitter, node: Node) -> list[Repr]:
    """Row ``index - 1`` of the tape, ``first`` at index 0 (`previous_row`)."""
    tape = emitter.lookup(node.inputs[0])
    first = emitter.operand(node.inputs[1])
    shape = static_shape(tape.ty) if isinstance(tape, BigArray) else None
    if not isinstance(tape, BigArray) or shape is None or first.shape != shape[1:]:
        return _no(node)
    index = emitter.operand(node.inputs[2]).scalar
    items = np.empty(first.shape, dtype=object)
    for position in np.ndindex(first.shape):
        items[position] = emitter.fresh("row")
    emitter.line(f"if {index} == 0:")
    emitter.depth += 1
    bind(emitter, Elements(items, first.dtype), first)
    emitter.depth -= 1
    emitter.line("else:")
    emitter.depth += 1
    previous = _check_index(emitter, f"{index} - 1", shape[0])
    bind(
        emitter,
        Elements(items, first.dtype),
        Elements(_row_reads_expressions(tape.name, shape, previous), first.dtype),
    )
    emitter.depth -= 1
    return [Elements(items, first.dtype)]


def _row_reads_expressions(array: str, shape: tuple[int, ...], index: str) -> Any:
    items = np.empty(shape[1:], dtype=object)
    for position in np.ndindex(shape[1:]):
        items[position] = f"{array}[{', '.join([index, *map(str, position)])}]"
    return items


def _uninitialized(emitter: Emitter, node: Node) -> list[Repr]:
    return [Static(None)]


def _tuple_construct(emitter: Emitter, node: Node) -> list[Repr]:
    return [tuple(emitter.lookup(v) for v in node.inputs)]


def _tuple_unpack(emitter: Emitter, node: Node) -> list[Repr]:
    value = emitter.lookup(node.inputs[0])
    if isinstance(value, Static) and isinstance(value.value, tuple):
        return [Static(item) for item in value.value]
    return list(value) if isinstance(value, tuple) else _no(node)


def _tuple_index(emitter: Emitter, node: Node) -> list[Repr]:
    value = emitter.lookup(node.inputs[0])
    position = emitter.static(node.inputs[1])
    if isinstance(value, Static) and isinstance(value.value, tuple):
        return [Static(value.value[position])]
    return [value[position]] if isinstance(value, tuple) else _no(node)


def bind(emitter: Emitter, targets: Repr, value: Repr) -> None:
    """Assign ``value`` to the locals ``targets`` (an If output, a loop-carried value)."""
    if isinstance(targets, BigArray):
        if not isinstance(value, BigArray):
            raise Unsupported("a big array bound to a small value")
        if value.name != targets.name:  # a tape written in place is already there
            emitter.line(f"{targets.name} = {value.name}")
        return
    assert isinstance(targets, Elements)
    if isinstance(value, Static) and value.value is None:
        # prim::Uninitialized: the branch does not define it and nothing reads it; numba
        # needs the locals defined on every path, so they get zeros
        zero = cast("0", "int", targets.dtype)
        value = Elements(np.full(targets.shape, zero, dtype=object), targets.dtype)
    source = as_elements(value) if isinstance(value, Static) else value
    if not isinstance(source, Elements) or source.shape != targets.shape:
        raise Unsupported("a value bound to locals of another shape")
    pairs = [
        (targets.at(i), cast(source.at(i), source.dtype, targets.dtype))
        for i in np.ndindex(targets.shape)
        if targets.at(i) != source.at(i)
    ]
    if pairs:  # all at once: a carried value may read another one's old element
        emitter.line(f"{', '.join(t for t, _ in pairs)} = {', '.join(s for _, s in pairs)}")


OPERATOR_RULES: dict[str, Rule] = {
    **dict.fromkeys(VIEWS, _view),
    "aten::select": _select_runtime,
    **dict.fromkeys(REDUCTIONS, _reduction),
    "aten::sum_to_size": _sum_to_size,
    "aten::_unreduce": _unreduce,
    "aten::matmul": _matmul,
    "aten::dot": _matmul,
    "aten::_matmul_backward_self": _matmul_backward,
    "aten::_matmul_backward_other": _matmul_backward,
    "aten::_dot_backward": _dot_backward,
    "aten::outer": _outer,
    "aten::add": _add,
    "aten::zeros": _zeros,
    "aten::zeros_like": _zeros,
    "aten::astype": _astype,
    "aten::_grad_like": _astype,
    "aten::_select_backward": _select_backward,
    "aten::_slice_backward": _slice_backward,
    "aten::_scatter_slices": _scatter_slices,
    "prim::TapeArray": _tape_array,
    "prim::TapeWrite": _tape_write,
    "aten::_previous_row": _previous_row,
    "prim::Uninitialized": _uninitialized,
    "prim::TupleConstruct": _tuple_construct,
    "prim::TupleUnpack": _tuple_unpack,
    "prim::TupleIndex": _tuple_index,
}
