"""Operators on shapes: reshape, transpose, squeeze, expand_dims, ravel, broadcast_to,
sum_to_size, concatenate, stack, astype, cast (``np.float64(x)``), asarray, and the shape
queries shape, ndim, size.

``aten::asarray(Any self) -> Tensor`` is ``np.asarray`` of a Python number: the 0-d array
NumPy makes of it before a function that wants an array sees it (Note [Python numbers as
arrays] in `frontend.calls`). The frontend never emits it for an array, which ``np.asarray``
would return as it is.

``aten::shape(Tensor self) -> Any`` is NumPy's ``x.shape``: a tuple of ints at run time, typed
``(int, int, …)`` when the rank is known and ``int[]`` when it is not, so ``x.shape[0]`` (a
prim::TupleIndex) is an ``int`` and ``np.zeros(x.shape)`` takes it as a shape. Shape-valued
operands (``Any shape``) are an int, a tuple or a list of ints.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ir.errors import ShapeError
from ir.graph import Node
from ir.ops.call_spelling import ADD_REDUCE, Bind, Call, constant, is_array
from ir.ops.promotion import dtype_name
from ir.ops.registry import NOT_CONSTANT, Derivative, register_op
from ir.ops.shape_rules import (
    Shape,
    as_tensor,
    format_shape,
    int_sequence,
    normalize_axes,
    normalize_axis,
    num_elements,
    tensor,
)
from ir.ops.spellings import ATTRIBUTE
from ir.ops.views import READ_ONLY, RESHAPED, STRIDED_RESHAPE, TRANSPOSED
from ir.types import (
    ANY,
    BOOL,
    FLOAT,
    INT,
    NONE,
    NOTHING,
    SCALAR,
    ListType,
    TensorType,
    TupleType,
    Type,
)


def axis_argument(axis: Any) -> Any:
    """NumPy wants a tuple where the IR may hold a list."""
    return tuple(axis) if isinstance(axis, list) else axis


def _reshape_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    x = as_tensor(types[0])
    target = int_sequence(types[1], consts[1])
    if target is None:
        return tensor(x.dtype, None)
    if target.count(-1) > 1:
        raise ShapeError("can only specify one unknown dimension")
    size = num_elements(x.shape)
    rest = [d for d in target if d != -1]
    if -1 in target:
        rest_size = num_elements(tuple(rest))
        fill: int | None = None
        if size is not None and rest_size:
            if size % rest_size:
                raise ShapeError(f"cannot reshape array of size {size} into shape {_spell(target)}")
            fill = size // rest_size
        return tensor(x.dtype, tuple(fill if d == -1 else d for d in target))
    if size is not None and num_elements(target) not in (None, size):
        raise ShapeError(f"cannot reshape array of size {size} into shape {_spell(target)}")
    return tensor(x.dtype, target)


def _spell(shape: Shape) -> str:
    """A shape as Python prints the tuple, as NumPy's reshape message does."""
    return str(tuple("?" if d is None else d for d in shape)).replace("'", "")


def _transpose_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    x = as_tensor(types[0])
    axes = None if types[1] is NONE else consts[1]
    if x.shape is None or axes is NOT_CONSTANT:
        return tensor(x.dtype, None if x.shape is None else (None,) * len(x.shape))
    if axes is None:
        return tensor(x.dtype, x.shape[::-1])
    if len(axes) != len(x.shape):
        raise ShapeError("axes don't match array")
    order = [normalize_axis(int(a), len(x.shape)) for a in axes]
    if sorted(order) != list(range(len(x.shape))):
        raise ShapeError("repeated axis in transpose")
    return tensor(x.dtype, tuple(x.shape[a] for a in order))


def _squeeze_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    x = as_tensor(types[0])
    axis = None if types[1] is NONE else consts[1]
    if x.shape is None or axis is NOT_CONSTANT:
        return tensor(x.dtype, None)
    if axis is None:
        if None in x.shape:
            return tensor(x.dtype, None)
        return tensor(x.dtype, tuple(d for d in x.shape if d != 1))
    axes = normalize_axes(axis, len(x.shape))
    if any(x.shape[a] not in (1, None) for a in axes):
        raise ShapeError("cannot select an axis to squeeze out which has size not equal to one")
    return tensor(x.dtype, tuple(d for i, d in enumerate(x.shape) if i not in axes))


def _expand_dims_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    x = as_tensor(types[0])
    if x.shape is None or consts[1] is NOT_CONSTANT:
        return tensor(x.dtype, None)
    count = len(consts[1]) if isinstance(consts[1], tuple | list) else 1
    axes = normalize_axes(consts[1], len(x.shape) + count)
    dims = iter(x.shape)
    return tensor(
        x.dtype, tuple(1 if i in axes else next(dims) for i in range(len(x.shape) + count))
    )


def _ravel_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    x = as_tensor(types[0])
    return tensor(x.dtype, (num_elements(x.shape),))


def _broadcast_to_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    x = as_tensor(types[0])
    target = int_sequence(types[1], consts[1])
    if target is None or x.shape is None:
        return tensor(x.dtype, target)
    if len(x.shape) > len(target):
        raise ShapeError(
            f"cannot broadcast an array of shape {format_shape(x.shape)} "
            f"to shape {format_shape(target)}"
        )
    padded = (1,) * (len(target) - len(x.shape)) + x.shape
    result: list[int | None] = []
    for have, want in zip(padded, target, strict=True):
        if have not in (1, None) and want is not None and have != want:
            raise ShapeError(
                f"cannot broadcast an array of shape {format_shape(x.shape)} "
                f"to shape {format_shape(target)}"
            )
        result.append(have if want is None and have != 1 else want)
    return tensor(x.dtype, tuple(result))


def sum_to_size(x: Any, shape: Any) -> Any:
    """Sum ``x`` over the axes that broadcasting ``shape`` up to ``x.shape`` added or stretched:
    the adjoint of ``np.broadcast_to`` (TorchScript's ``_grad_sum_to_size``). A ``shape`` of
    None, as `_size_if_not_equal` gives for equal shapes, leaves ``x`` as it is."""
    if shape is None:
        return x
    target = tuple(shape) if isinstance(shape, tuple | list) else (shape,)
    array = np.asarray(x)
    if array.shape == target:
        return x
    lead = array.ndim - len(target)
    if lead < 0:
        raise ValueError(f"cannot sum an array of shape {array.shape} to shape {target}")
    stretched = [lead + i for i, d in enumerate(target) if d == 1 and array.shape[lead + i] != 1]
    summed = np.sum(array, axis=tuple(range(lead)) + tuple(stretched), keepdims=True)
    return summed.reshape(target)


def _sum_to_size_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    if types[0] in (INT, FLOAT, BOOL, SCALAR):
        # The gradient of a Python number (``b + b`` with ``b: float``): nothing to undo, the
        # kernel returns it as it is, unless it is asked to grow.
        target = None if types[1] is NONE else int_sequence(types[1], consts[1])
        if target:
            raise ShapeError(f"cannot sum an array of shape () to shape {format_shape(target)}")
        return [types[0]]
    if types[1] is NONE or consts[1] is None:
        return [as_tensor(types[0]).with_requires_grad(None)]
    x = as_tensor(types[0])
    target = int_sequence(types[1], consts[1])
    if target is not None and x.shape is not None:
        tail = x.shape[len(x.shape) - len(target) :]
        if len(target) > len(x.shape) or any(
            t not in (1, None) and s is not None and s != t
            for s, t in zip(tail, target, strict=True)
        ):
            raise ShapeError(
                f"cannot sum an array of shape {format_shape(x.shape)} "
                f"to shape {format_shape(target)}"
            )
    return tensor(x.dtype, target)


def sequence_items(ty: Type) -> tuple[list[TensorType], bool]:
    """The tensor types of a sequence operand, and whether that list is complete (a tuple) or
    one type standing for any number of items (a list)."""
    if isinstance(ty, TupleType):
        return [as_tensor(t, i) for i, t in enumerate(ty.elems)], True
    if isinstance(ty, ListType) and ty.elem is not NOTHING:
        return [as_tensor(ty.elem)], False
    if ty is ANY or isinstance(ty, ListType):
        # An empty list (``Nothing[]``) too: in a loop that appends to it, only the first pass
        # over the body sees it so, and that pass may sit in a branch that never runs.
        return [TensorType()], False
    raise ShapeError(f"expected a sequence of arrays, got a value of type {ty}")


def _joined_dtype(items: list[TensorType]) -> str | None:
    dtypes = [t.dtype for t in items]
    if None in dtypes or not dtypes:
        return None
    return np.result_type(*dtypes).name


def _concatenate_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    items, complete = sequence_items(types[0])
    dtype = _joined_dtype(items)
    axis = None if types[1] is NONE else consts[1]
    if axis is None:
        sizes = [num_elements(t.shape) for t in items]
        total = sum(s for s in sizes if s is not None) if complete and None not in sizes else None
        return tensor(dtype, (total,))
    shapes = [t.shape for t in items]
    if any(s is None for s in shapes) or axis is NOT_CONSTANT:
        return tensor(dtype, None)
    first: Shape = shapes[0] or ()
    for index, shape in enumerate(shapes):
        assert shape is not None
        if len(shape) != len(first):
            raise ShapeError(
                "all the input arrays must have same number of dimensions, but the array at "
                f"index 0 has {len(first)} dimension(s) and the array at index {index} has "
                f"{len(shape)} dimension(s)"
            )
    if not first:
        raise ShapeError("zero-dimensional arrays cannot be concatenated")
    axis = normalize_axis(int(axis), len(first))
    result: list[int | None] = []
    for dim in range(len(first)):
        sizes = [s[dim] for s in shapes if s is not None]
        if dim == axis:
            result.append(
                sum(d for d in sizes if d is not None) if complete and None not in sizes else None
            )
            continue
        known = [(i, d) for i, d in enumerate(sizes) if d is not None]
        for i, d in known:
            if d != known[0][1]:
                raise ShapeError(
                    "all the input array dimensions except for the concatenation axis must "
                    f"match exactly, but along dimension {dim}, the array at index {known[0][0]} "
                    f"has size {known[0][1]} and the array at index {i} has size {d}"
                )
        result.append(known[0][1] if known else None)
    return tensor(dtype, tuple(result))


def _stack_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    items, complete = sequence_items(types[0])
    dtype = _joined_dtype(items)
    shapes = [t.shape for t in items]
    if any(s is None for s in shapes) or consts[1] is NOT_CONSTANT:
        return tensor(dtype, None)
    first = shapes[0]
    assert first is not None
    for shape in shapes:
        assert shape is not None
        if len(shape) != len(first) or any(
            a is not None and b is not None and a != b for a, b in zip(first, shape, strict=True)
        ):
            raise ShapeError("all input arrays must have the same shape")
    axis = normalize_axis(int(consts[1]), len(first) + 1)
    count = len(items) if complete else None
    return tensor(dtype, (*first[:axis], count, *first[axis:]))


def _astype_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    x = as_tensor(types[0])
    return tensor(None if consts[1] is NOT_CONSTANT else dtype_name(consts[1]), x.shape)


def astype(x: Any, dtype: str) -> Any:
    return x.astype(dtype)


def scalar_type_cast(x: Any, dtype: str) -> Any:
    """``np.float64(x)`` and the other scalar types called: a NumPy scalar of a 0-d array or a
    NumPy scalar, an array of that dtype of an n-d array, as NumPy gives them."""
    return np.dtype(dtype).type(x)


# The dtype np.asarray gives a Python number: Python's int, float and bool are NumPy's int64,
# float64 and bool (a ``Scalar`` may be any of them).
_NUMBER_DTYPES = {INT: "int64", FLOAT: "float64", BOOL: "bool"}


def _asarray_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    if types[0] in _NUMBER_DTYPES or types[0] is SCALAR:
        return tensor(_NUMBER_DTYPES.get(types[0]), ())
    x = as_tensor(types[0])
    return tensor(x.dtype, x.shape)


def number_to_array(x: Any) -> np.ndarray:
    """``np.asarray`` of a Python number: a 0-d array."""
    return np.asarray(x)


def _shape_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    x = as_tensor(types[0])
    return [ListType(INT) if x.shape is None else TupleType((INT,) * len(x.shape))]


def _shape_value(types: Sequence[Type]) -> Any:
    x = as_tensor(types[0])
    if x.shape is None or None in x.shape:
        return NOT_CONSTANT
    return x.shape


def _static_shape(ty: Type) -> Shape | None:
    """The shape NumPy gives a value of this type, when the type fixes it."""
    if ty in (INT, FLOAT, BOOL):
        return ()
    if isinstance(ty, TensorType) and ty.shape is not None and None not in ty.shape:
        return ty.shape
    return None


def size_if_not_equal(x: Any, other: Any) -> Any:
    """``x``'s shape, or None when ``other`` has the same shape: what a broadcasting
    operator's gradient must be summed back to (TorchScript's ``_size_if_not_equal``)."""
    shape = np.shape(x)
    return None if shape == np.shape(other) else shape


def _size_if_not_equal_value(types: Sequence[Type]) -> Any:
    mine, theirs = _static_shape(types[0]), _static_shape(types[1])
    if mine is None or theirs is None:
        return NOT_CONSTANT
    return None if mine == theirs else mine


def _size_if_not_equal_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    value = _size_if_not_equal_value(types)
    if value is NOT_CONSTANT:
        return [ANY]
    return [NONE if value is None else TupleType((INT,) * len(value))]


def _ndim_value(types: Sequence[Type]) -> Any:
    rank = as_tensor(types[0]).rank
    return NOT_CONSTANT if rank is None else rank


def _size_value(types: Sequence[Type]) -> Any:
    size = num_elements(as_tensor(types[0]).shape)
    return NOT_CONSTANT if size is None else size


def _int_result(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    as_tensor(types[0])
    return [INT]


def flatten(x: Any) -> Any:
    """``x.flatten()``: always a copy, unlike ``np.ravel``."""
    return np.asarray(x).flatten()


def _squeeze(x: Any, axis: Any) -> Any:
    return np.squeeze(x, axis_argument(axis))


def _expand_dims(x: Any, axis: Any) -> Any:
    return np.expand_dims(x, axis_argument(axis))


register_op(
    "aten::reshape(Tensor(a) self, Any shape) -> Tensor(a)",
    shape=_reshape_rule,
    derivative=Derivative.FORMULA,
    view=STRIDED_RESHAPE,
    may_raise=True,
    spellings={
        "numpy.reshape": "a:self / shape !order * !copy",
        "ndarray.reshape": "*shape * !order !copy",
    },
)(np.reshape)


def spell_transpose(node: Node, args: Sequence[str], bind: Bind) -> Call | None:
    """``np.transpose(x)`` of an ndarray, axes not given, is ``x.T``."""
    if is_array(node.inputs[0].ty) and constant(node.inputs[1]) is None:
        return Call(f"{args[0]}.T")
    return None


register_op(
    "aten::transpose(Tensor(a) self, Any axes=None) -> Tensor(a)",
    shape=_transpose_rule,
    derivative=Derivative.FORMULA,
    view=TRANSPOSED,
    typed_call=spell_transpose,
    spellings={
        "numpy.transpose": "a:self axes",
        "ndarray.transpose": "*axes",
        "ndarray.T": ATTRIBUTE,
    },
)(np.transpose)
register_op(
    "aten::squeeze(Tensor(a) self, Any axis=None) -> Tensor(a)",
    shape=_squeeze_rule,
    derivative=Derivative.FORMULA,
    view=RESHAPED,
    spellings={"numpy.squeeze": "a:self axis", "ndarray.squeeze": "axis"},
)(_squeeze)
register_op(
    "aten::expand_dims(Tensor(a) self, Any axis) -> Tensor(a)",
    shape=_expand_dims_rule,
    derivative=Derivative.FORMULA,
    view=RESHAPED,
    spellings={"numpy.expand_dims": "a:self axis"},
)(_expand_dims)
register_op(
    "aten::ravel(Tensor(a) self) -> Tensor(a)",
    shape=_ravel_rule,
    derivative=Derivative.FORMULA,
    view=STRIDED_RESHAPE,
    spellings={"numpy.ravel": "a:self !order", "ndarray.ravel": "!order"},
)(np.ravel)
register_op(
    "aten::flatten(Tensor self) -> Tensor",
    shape=_ravel_rule,
    derivative=Derivative.FORMULA,
    spellings={"ndarray.flatten": "!order"},
)(flatten)
register_op(
    "aten::broadcast_to(Tensor(a) self, Any shape) -> Tensor(a)",
    shape=_broadcast_to_rule,
    derivative=Derivative.FORMULA,
    view=READ_ONLY,
    spellings={"numpy.broadcast_to": "array:self shape !subok"},
)(np.broadcast_to)


def spell_sum_to_size(node: Node, args: Sequence[str], bind: Bind) -> Call | None:
    """``sum_to_size`` to the operand's own shape is the operand itself, and otherwise a sum
    over the axes that the shapes name (Note [Typed calls] in `ir.typed_calls`)."""
    source, target_value = node.inputs[0].ty, node.inputs[1]
    if not isinstance(source, TensorType) or source.shape is None or not source.shape:
        return None
    if target_value.node.kind != "prim::Constant" or None in source.shape:
        return None
    shape = target_value.node.attr("value")
    if shape is None:
        return Call(args[0])
    target = tuple(shape) if isinstance(shape, tuple | list) else (shape,)
    if not all(type(d) is int for d in target):
        return None
    if target == source.shape:
        return Call(args[0])  # the operand itself, as the kernel returns it
    lead = len(source.shape) - len(target)
    if lead < 0 or any(d not in (1, s) for d, s in zip(target, source.shape[lead:], strict=True)):
        return None  # the kernel raises
    stretched = [lead + i for i, d in enumerate(target) if d == 1 and source.shape[lead + i] != 1]
    axes = tuple(range(lead)) + tuple(stretched)
    reduce = bind(ADD_REDUCE, "aten_sum_reduce")
    if lead == 0:
        return Call(f"{reduce}({args[0]}, {axes!r}, None, None, True)", fresh=True)
    if not stretched and target:
        return Call(f"{reduce}({args[0]}, {axes!r}, None, None, False)", fresh=True)
    # keepdims, then the kernel's reshape: a 0-d target stays a 0-d array
    return Call(f"{reduce}({args[0]}, {axes!r}, None, None, True).reshape({target!r})")


register_op(
    "aten::sum_to_size(Any self, Any shape) -> Tensor",
    shape=_sum_to_size_rule,
    derivative=Derivative.FORMULA,
    typed_call=spell_sum_to_size,
)(sum_to_size)
register_op(
    "aten::concatenate(Any tensors, int? axis=0) -> Tensor",
    shape=_concatenate_rule,
    derivative=Derivative.FORMULA,
    spellings={
        "numpy.concatenate": "arrays:tensors / axis !out * !dtype !casting",
        "numpy.concat": "arrays:tensors / axis !out * !dtype !casting",
    },
)(np.concatenate)
register_op(
    "aten::stack(Any tensors, int axis=0) -> Tensor",
    shape=_stack_rule,
    derivative=Derivative.FORMULA,
    spellings={"numpy.stack": "arrays:tensors axis !out * !dtype !casting"},
)(np.stack)
register_op(
    "aten::astype(Tensor self, str dtype) -> Tensor",
    shape=_astype_rule,
    derivative=Derivative.FORMULA,
    spellings={
        "numpy.astype": "x:self dtype / * !copy !device",
        "ndarray.astype": "dtype !order !casting !subok !copy",
    },
)(astype)
register_op(
    "aten::cast(Tensor self, str dtype) -> Tensor",
    shape=_astype_rule,
    derivative=Derivative.FORMULA,
)(scalar_type_cast)
register_op(
    "aten::asarray(Any self) -> Tensor", shape=_asarray_rule, derivative=Derivative.FORMULA
)(number_to_array)
register_op(
    "aten::shape(Tensor self) -> Any",
    shape=_shape_rule,
    derivative=Derivative.NONE,
    value_from_types=_shape_value,
    spellings={"numpy.shape": "a:self", "ndarray.shape": ATTRIBUTE},
)(np.shape)
register_op(
    "aten::_size_if_not_equal(Any self, Any other) -> Any",
    shape=_size_if_not_equal_rule,
    derivative=Derivative.NONE,
    value_from_types=_size_if_not_equal_value,
)(size_if_not_equal)
register_op(
    "aten::ndim(Tensor self) -> int",
    shape=_int_result,
    derivative=Derivative.NONE,
    value_from_types=_ndim_value,
    spellings={"numpy.ndim": "a:self", "ndarray.ndim": ATTRIBUTE},
)(np.ndim)
register_op(
    "aten::size(Tensor self) -> int",
    shape=_int_result,
    derivative=Derivative.NONE,
    value_from_types=_size_value,
    spellings={"numpy.size": "a:self !axis", "ndarray.size": ATTRIBUTE},
)(np.size)
