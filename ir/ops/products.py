"""Sum products beyond matmul and dot: tensordot, einsum, inner, outer, kron and cross, with the
adjoints their derivative formulas call.

Every adjoint is one `einsum_vjp`: each product is an einsum once its subscripts are spelled out
(`tensordot_subscripts`, `inner_subscripts`, kron on interleaved axes), and the gradient of one
einsum operand is an einsum of the result's gradient with the other operands. `einsum_vjp` has a
derivative formula itself (`einsum_vjp_backward`), so these gradients differentiate again.
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from typing import Any

import numpy as np

from ir.errors import ShapeError
from ir.ops.promotion import probe_dtype
from ir.ops.registry import NOT_CONSTANT, Derivative, register_op
from ir.ops.shape_rules import (
    Shape,
    as_array_like,
    as_tensor,
    broadcast_shapes,
    fixed,
    normalize_axis,
    num_elements,
    tensor,
)
from ir.ops.views import EINSUM
from ir.types import ANY, INT, STR, TensorType, TupleType, Type

_LABELS = string.ascii_letters


# ---- subscripts ---------------------------------------------------------------------------------


def parse_subscripts(
    subscripts: str, count: int, ndims: Sequence[int] | None = None
) -> tuple[list[str], str]:
    """The input subscripts and the output subscript of an einsum of ``count`` operands; an
    implicit output is the labels seen once, in alphabetical order, as NumPy has it. An
    ellipsis needs the operands' ``ndims``: it becomes labels of its own (`expand_ellipsis`)."""
    text = subscripts.replace(" ", "")
    if "." in text:
        if ndims is None:
            raise ShapeError("einsum: an ellipsis ('...') needs the operands' dimensions")
        text = expand_ellipsis(text, ndims)
    inputs_text, arrow, output = text.partition("->")
    inputs = inputs_text.split(",")
    if len(inputs) != count:
        raise ShapeError(
            f"einsum: {len(inputs)} operand subscripts for {count} operands ({subscripts!r})"
        )
    if not arrow:
        joined = "".join(inputs)
        output = "".join(sorted(c for c in set(joined) if joined.count(c) == 1))
    return inputs, output


def expand_ellipsis(subscripts: str, ndims: Sequence[int]) -> str:
    """``subscripts`` with each ``...`` spelled as labels the subscripts do not use, one per
    axis it stands for: the ellipses of all operands are right-aligned and broadcast together,
    as NumPy does, and an implicit output starts with them.

    >>> expand_ellipsis("...ij,...jk->...ik", [3, 2])
    'Aij,jk->Aik'
    """
    inputs_text, arrow, output = subscripts.partition("->")
    inputs = inputs_text.split(",")
    if len(inputs) != len(ndims):
        raise ShapeError(
            f"einsum: {len(inputs)} operand subscripts for {len(ndims)} operands ({subscripts!r})"
        )
    free = [c for c in string.ascii_uppercase + string.ascii_lowercase if c not in subscripts]
    widths = []
    for labels, ndim in zip(inputs, ndims, strict=True):
        if labels.count("...") > 1 or labels.replace("...", "").count(".") > 0:
            raise ShapeError(f"einsum: invalid ellipsis in subscripts {labels!r}")
        explicit = len(labels.replace("...", ""))
        width = ndim - explicit if "..." in labels else 0
        if width < 0:
            raise ShapeError(
                f"einsum: operand has {ndim} dimensions but subscripts {labels!r} give more"
            )
        widths.append(width)
    longest = max(widths, default=0)
    ellipsis = "".join(free[:longest])
    expanded = [
        labels.replace("...", ellipsis[longest - width :])
        for labels, width in zip(inputs, widths, strict=True)
    ]
    joined = ",".join(expanded)
    if arrow:
        return f"{joined}->{output.replace('...', ellipsis)}"
    singles = "".join(expanded)
    implicit = "".join(
        sorted(c for c in set(singles) if singles.count(c) == 1 and c not in ellipsis)
    )
    return f"{joined}->{ellipsis}{implicit}"


def tensordot_subscripts(ndim_a: int, ndim_b: int, axes: Any) -> str:
    """``np.tensordot(a, b, axes)`` spelled as einsum subscripts."""
    if isinstance(axes, int | np.integer):
        summed_a = list(range(ndim_a - int(axes), ndim_a))
        summed_b = list(range(int(axes)))
    else:
        first, second = axes
        summed_a = [int(i) % ndim_a for i in np.atleast_1d(first)]
        summed_b = [int(i) % ndim_b for i in np.atleast_1d(second)]
    if len(summed_a) != len(summed_b):
        raise ShapeError("shape-mismatch for sum")
    a = list(_LABELS[:ndim_a])
    b = list(_LABELS[ndim_a : ndim_a + ndim_b])
    for i, j in zip(summed_a, summed_b, strict=True):
        b[j] = a[i]
    output = [c for i, c in enumerate(a) if i not in summed_a]
    output += [c for j, c in enumerate(b) if j not in summed_b]
    return f"{''.join(a)},{''.join(b)}->{''.join(output)}"


def inner_subscripts(ndim_a: int, ndim_b: int) -> str:
    """``np.inner(a, b)``: a sum product over the last axes (a plain product for a 0-d one)."""
    if ndim_a == 0 or ndim_b == 0:
        a, b = _LABELS[:ndim_a], _LABELS[ndim_a : ndim_a + ndim_b]
        return f"{a},{b}->{a}{b}"
    return tensordot_subscripts(ndim_a, ndim_b, ([-1], [-1]))


# ---- kernels ------------------------------------------------------------------------------------


def tensordot(x: Any, y: Any, axes: Any) -> Any:
    return np.tensordot(x, y, axes)


def einsum(subscripts: str, operands: Sequence[Any]) -> Any:
    return np.einsum(subscripts, *operands)


def einsum_relabels(subscripts: str) -> bool:
    """Whether ``np.einsum(subscripts, x)`` of one operand sums nothing (every label of ``x``
    is in the result): it permutes axes and reads diagonals, and NumPy returns a view of ``x``."""
    try:
        (labels,), output = parse_subscripts(subscripts, 1)
    except ShapeError:
        return False
    return set(labels) == set(output)


def einsum_view(x: Any, subscripts: str) -> Any:
    """``np.einsum(subscripts, x)`` where it is a view of ``x`` (`einsum_relabels`)."""
    return np.einsum(subscripts, x)


def einsum_view_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    return _einsum_rule([types[1], TupleType((types[0],))], [consts[1], NOT_CONSTANT])


def cross(x: Any, y: Any, axisa: int, axisb: int, axisc: int, axis: int | None) -> Any:
    return np.cross(x, y, axisa, axisb, axisc, axis)


def cross_axes(axisa: int, axisb: int, axisc: int, axis: int | None) -> tuple[int, int, int]:
    """The axes of ``np.cross``'s operands and result that hold the vectors: ``axis``, when
    given, for all three."""
    return (axisa, axisb, axisc) if axis is None else (axis, axis, axis)


# ---- adjoints -----------------------------------------------------------------------------------


def _operand_spec(inputs: Sequence[str], output: str, index: int) -> tuple[str, str]:
    """For operand ``index``: the einsum of the result's gradient with the other operands that
    gives its gradient over ``kept`` (its distinct labels the others or the result have), and
    ``kept``."""
    labels = inputs[index]
    others = [s for j, s in enumerate(inputs) if j != index]
    seen = set(output).union(*others)
    kept = "".join(c for c in dict.fromkeys(labels) if c in seen)
    return ",".join([output, *others]) + "->" + kept, kept


def _expand(partial: Any, labels: str, kept: str, shape: tuple[int, ...]) -> Any:
    """``partial`` (over ``kept``) spread over an operand of ``labels`` and ``shape``: constant
    along the labels not kept (they were summed away), on the diagonal of repeated labels."""
    sizes = dict(zip(labels, shape, strict=True))
    unique = "".join(dict.fromkeys(labels))
    expanded = np.expand_dims(partial, [i for i, c in enumerate(unique) if c not in kept])
    full = np.broadcast_to(expanded, [sizes[c] for c in unique])
    if len(unique) == len(labels):
        return np.array(np.transpose(full, [unique.index(c) for c in labels]))
    result = np.zeros(shape, full.dtype)
    grids = np.ix_(*(np.arange(sizes[c]) for c in unique)) if unique else ()
    result[tuple(grids[unique.index(c)] for c in labels)] = full
    return result


def _sum_broadcast_labels(partial: Any, kept: str, labels: str, operand: Any) -> Any:
    """``partial`` (over ``kept``, sized as the result and the other operands have those labels)
    summed along each label where ``operand`` has length 1 and was broadcast against a longer
    axis of another operand (``np.einsum`` broadcasts such axes, as arithmetic does)."""
    sizes = dict(zip(labels, operand.shape, strict=True))
    broadcast = tuple(
        axis for axis, c in enumerate(kept) if sizes[c] == 1 and partial.shape[axis] != 1
    )
    return np.sum(partial, axis=broadcast, keepdims=True) if broadcast else partial


def einsum_vjp(grad: Any, subscripts: str, operands: Sequence[Any]) -> tuple[Any, ...]:
    """The gradient of every operand of ``np.einsum(subscripts, *operands)``.

    Labels an operand shares with the result or the other operands come from one einsum;
    labels only it has were summed away, so its gradient is constant along them (broadcast);
    a label it repeats (``ii``) reads a diagonal, so the gradient goes back onto that diagonal;
    a label of length 1 that ``np.einsum`` broadcast against a longer one of another operand
    gets the sum along it. ``grad`` may itself have length 1 along a label the operands have
    longer (the gradient of an einsum whose result was summed along it): ``np.einsum``
    broadcasts it back, which is the adjoint of that sum.
    """
    arrays = [np.asarray(x) for x in operands]
    inputs, output = parse_subscripts(subscripts, len(arrays), [a.ndim for a in arrays])
    grads = []
    for index, operand in enumerate(arrays):
        spec, kept = _operand_spec(inputs, output, index)
        others = [a for j, a in enumerate(arrays) if j != index]
        partial = np.einsum(spec, grad, *others)
        partial = _sum_broadcast_labels(partial, kept, inputs[index], operand)
        grads.append(_in_dtype_of(_expand(partial, inputs[index], kept, operand.shape), operand))
    return tuple(grads)


def einsum_vjp_backward(
    cotangents: Sequence[Any], grad: Any, subscripts: str, operands: Sequence[Any]
) -> tuple[Any, tuple[Any, ...]]:
    """The gradients of `einsum_vjp` w.r.t. ``grad`` and each operand, for one cotangent per
    operand gradient: each operand gradient is an einsum (linear in ``grad`` and in every other
    operand) followed by `_expand`, whose adjoint is the einsum ``labels->kept``."""
    arrays = [np.asarray(x) for x in operands]
    grad = np.asarray(grad)
    inputs, output = parse_subscripts(subscripts, len(arrays), [a.ndim for a in arrays])
    grad_grad = np.zeros(grad.shape, grad.dtype)
    grad_operands = [np.zeros(a.shape, a.dtype) for a in arrays]
    for index, cotangent in enumerate(cotangents):
        spec, kept = _operand_spec(inputs, output, index)
        reduced = np.einsum(f"{inputs[index]}->{kept}", cotangent)
        others = [j for j in range(len(arrays)) if j != index]
        parts = einsum_vjp(reduced, spec, [grad, *(arrays[j] for j in others)])
        grad_grad = grad_grad + parts[0]
        for j, part in zip(others, parts[1:], strict=True):
            grad_operands[j] = grad_operands[j] + part
    return _in_dtype_of(grad_grad, grad), tuple(
        _in_dtype_of(g, a) for g, a in zip(grad_operands, arrays, strict=True)
    )


def einsum_vjp_backward_backward(
    dout_grad: Any,
    dout_operands: Sequence[Any],
    cotangents: Sequence[Any],
    grad: Any,
    subscripts: str,
    operands: Sequence[Any],
) -> tuple[tuple[Any, ...], Any, tuple[Any, ...]]:
    """The gradients of `einsum_vjp_backward` w.r.t. its cotangents, ``grad`` and operands.

    With ``E(g, B) = <g, einsum(B)>``, `einsum_vjp_backward` is the gradient of the sum over
    ``i`` of ``E(grad, operands with the i-th replaced by its cotangent)``; every term is
    multilinear, so these gradients are sums of einsums and of `einsum_vjp`s of the operands
    with one or two of them replaced, by the cotangents and by ``dout_operands``."""
    arrays = [np.asarray(x) for x in operands]
    grad = np.asarray(grad)
    cotangents = [np.asarray(c) for c in cotangents]
    douts = [np.asarray(d) for d in dout_operands]
    count = len(arrays)

    def replaced(changes: dict[int, Any]) -> list[Any]:
        return [changes.get(k, a) for k, a in enumerate(arrays)]

    grad_cotangents = list(einsum_vjp(dout_grad, subscripts, arrays))
    grad_grad = np.zeros(grad.shape, np.result_type(grad, *arrays))
    grad_operands = [np.zeros(a.shape, np.result_type(grad, a)) for a in arrays]
    for i in range(count):
        parts = einsum_vjp(dout_grad, subscripts, replaced({i: cotangents[i]}))
        for k in range(count):
            if k != i:
                grad_operands[k] = grad_operands[k] + parts[k]
        for j in range(count):
            if j == i:
                continue
            parts = einsum_vjp(grad, subscripts, replaced({j: douts[j]}))
            grad_cotangents[i] = grad_cotangents[i] + parts[i]
            both = replaced({i: cotangents[i], j: douts[j]})
            grad_grad = grad_grad + np.einsum(subscripts, *both)
            parts = einsum_vjp(grad, subscripts, both)
            for k in range(count):
                if k not in (i, j):
                    grad_operands[k] = grad_operands[k] + parts[k]
    return (
        tuple(_in_dtype_of(np.asarray(g), a) for g, a in zip(grad_cotangents, arrays, strict=True)),
        _in_dtype_of(np.asarray(grad_grad), grad),
        tuple(_in_dtype_of(g, a) for g, a in zip(grad_operands, arrays, strict=True)),
    )


def _in_dtype_of(grad: Any, operand: np.ndarray[Any, Any]) -> Any:
    # A real operand's gradient is the real part (Note [Complex gradients] in autodiff.formulas).
    return np.real(grad).astype(operand.dtype, copy=False) if operand.dtype.kind == "f" else grad


def kron_subscripts(ndim_x: int, ndim_y: int) -> str:
    """``np.kron`` as an einsum: an outer product whose result interleaves the operands' axes,
    aligned from the right (x's axis next to y's; an axis only one operand has stands alone).
    The result of the einsum is kron's result reshaped by `kron_split`."""
    ndim = max(ndim_x, ndim_y)
    a = _LABELS[ndim - ndim_x : ndim]
    b = _LABELS[2 * ndim - ndim_y : 2 * ndim]
    output = ""
    for i in range(ndim):
        if i >= ndim - ndim_x:
            output += _LABELS[i]
        if i >= ndim - ndim_y:
            output += _LABELS[ndim + i]
    return f"{a},{b}->{output}"


def kron_split(shape_x: Sequence[int], shape_y: Sequence[int]) -> tuple[int, ...]:
    """The shape that splits kron's result into the axes of `kron_subscripts`' result."""
    ndim = max(len(shape_x), len(shape_y))
    split: list[int] = []
    for i in range(ndim):
        if i >= ndim - len(shape_x):
            split.append(int(shape_x[i - ndim + len(shape_x)]))
        if i >= ndim - len(shape_y):
            split.append(int(shape_y[i - ndim + len(shape_y)]))
    return tuple(split)


def _kron_split_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    lengths = [len(ty.elems) if isinstance(ty, TupleType) else None for ty in types[:2]]
    if lengths[0] is None or lengths[1] is None:
        return [ANY]
    return [TupleType((INT,) * (lengths[0] + lengths[1]))]


# ---- shape rules --------------------------------------------------------------------------------


def _einsum_shape(subscripts: str, shapes: Sequence[Shape], broadcast: bool = True) -> Shape:
    """The result shape of an einsum; ``broadcast`` lets a size-1 axis meet any size, as
    ``np.einsum`` does (tensordot and inner do not)."""
    inputs, output = parse_subscripts(subscripts, len(shapes), [len(s) for s in shapes])
    sizes: dict[str, int | None] = {}
    for labels, shape in zip(inputs, shapes, strict=True):
        if len(labels) != len(shape):
            raise ShapeError(
                f"einsum: operand has {len(shape)} dimensions but subscripts {labels!r} "
                f"give {len(labels)}"
            )
        for label, dim in zip(labels, shape, strict=True):
            known = sizes.get(label)
            if known is not None and dim is not None and known != dim:
                if not broadcast:
                    raise ShapeError(f"shape-mismatch for sum: sizes {known} and {dim}")
                if 1 not in (known, dim):
                    raise ShapeError(
                        f"einsum: operands could not be broadcast together: label {label!r} "
                        f"has sizes {known} and {dim}"
                    )
            if known is None or (known == 1 and broadcast):
                sizes[label] = dim
    for label in output:
        if label not in sizes:
            raise ShapeError(
                f"einsum: output subscript {label!r} does not appear in the input subscripts"
            )
    return tuple(sizes[label] for label in output)


def _einsum_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    operands = types[1]
    if not isinstance(operands, TupleType):
        return [TensorType()]
    arrays = [as_array_like(ty, i) for i, ty in enumerate(operands.elems)]
    dtype = probe_dtype(_result_type, arrays)
    subscripts = consts[0]
    if subscripts is NOT_CONSTANT or any(a.shape is None for a in arrays):
        return tensor(dtype, None)
    return tensor(dtype, _einsum_shape(str(subscripts), [a.shape or () for a in arrays]))


def _result_type(*operands: Any) -> Any:
    """A 0-d array of the dtype NumPy promotes ``operands`` to (what `probe_dtype` reads)."""
    return np.zeros((), np.result_type(*operands))


def _pair_rule(spell: Any, count_axes: bool = False) -> Any:
    """A rule for a product of two operands: ``spell(ndim_x, ndim_y[, axes])`` gives its einsum
    subscripts."""

    def rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
        x, y = as_array_like(types[0], 0), as_array_like(types[1], 1)
        dtype = probe_dtype(_result_type, [x, y])
        if x.shape is None or y.shape is None:
            return tensor(dtype, None)
        if count_axes:
            if consts[2] is NOT_CONSTANT:
                return tensor(dtype, None)
            subscripts = spell(len(x.shape), len(y.shape), consts[2])
        else:
            subscripts = spell(len(x.shape), len(y.shape))
        return tensor(dtype, _einsum_shape(subscripts, [x.shape, y.shape], broadcast=False))

    return rule


def _outer_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    x, y = as_array_like(types[0], 0), as_array_like(types[1], 1)
    dtype = probe_dtype(np.outer, [x, y])
    sizes = []
    for shape in (x.shape, y.shape):
        sizes.append(num_elements(shape))
    return tensor(dtype, tuple(sizes))


def _kron_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    x, y = as_array_like(types[0], 0), as_array_like(types[1], 1)
    dtype = probe_dtype(np.kron, [x, y])
    if x.shape is None or y.shape is None:
        return tensor(dtype, None)
    ndim = max(len(x.shape), len(y.shape))
    xs = (1,) * (ndim - len(x.shape)) + x.shape
    ys = (1,) * (ndim - len(y.shape)) + y.shape
    return tensor(
        dtype, tuple(None if p is None or q is None else p * q for p, q in zip(xs, ys, strict=True))
    )


def _cross_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    x, y = as_tensor(types[0], 0), as_tensor(types[1], 1)
    dtype = probe_dtype(_result_type, [x, y])
    if x.shape is None or y.shape is None or NOT_CONSTANT in consts[2:]:
        return tensor(dtype, None)
    axisa, axisb, axisc = cross_axes(*consts[2:])
    x_shape = _vectors_last(x.shape, axisa, "a")
    y_shape = _vectors_last(y.shape, axisb, "b")
    for shape in (x_shape, y_shape):
        if not shape or shape[-1] not in (3, None):
            raise ShapeError(
                "cross: the last axis of both operands must have 3 elements (2-vectors are "
                f"not supported), got shape {shape}"
            )
    batch = broadcast_shapes(x_shape[:-1], y_shape[:-1])
    if batch is None:
        return tensor(dtype, None)
    where = normalize_axis(axisc, len(batch) + 1)
    return tensor(dtype, (*batch[:where], 3, *batch[where:]))


def _vectors_last(shape: Shape, axis: int, name: str) -> Shape:
    """``shape`` with the axis holding the vectors moved last."""
    if not shape:
        raise ShapeError(f"cross: operand {name} must have at least one dimension")
    where = normalize_axis(axis, len(shape))
    return (*shape[:where], *shape[where + 1 :], shape[where])


def _einsum_vjp_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    grad = as_tensor(types[0])
    operands = types[2]
    if not isinstance(operands, TupleType):
        return [ANY]
    result: list[Type] = []
    for ty in operands.elems:
        operand = as_array_like(ty)
        floating = operand.dtype is not None and np.dtype(operand.dtype).kind == "f"
        result.append(TensorType(operand.dtype if floating else grad.dtype, operand.shape))
    return [TupleType(tuple(result))]


def _einsum_double_backward_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    grad = as_tensor(types[1], 1)
    operands = _einsum_vjp_rule([grad, types[2], types[3]], consts[1:])[0]
    return [TupleType((TensorType(grad.dtype, grad.shape), operands))]


def _einsum_triple_backward_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    grad = as_tensor(types[3], 3)
    operands = _einsum_vjp_rule([grad, types[4], types[5]], consts[3:])[0]
    return [TupleType((operands, TensorType(grad.dtype, grad.shape), operands))]


register_op(
    "aten::tensordot(Tensor self, Tensor other, Any axes=2) -> Tensor",
    shape=_pair_rule(tensordot_subscripts, count_axes=True),
    derivative=Derivative.FORMULA,
    spellings={"numpy.tensordot": "a:self b:other axes"},
)(tensordot)
register_op(
    "aten::einsum(str subscripts, Any operands) -> Tensor",
    shape=_einsum_rule,
    derivative=Derivative.FORMULA,
    spellings={"numpy.einsum": "subscripts *operands * !out !dtype !order !casting !optimize"},
)(einsum)
register_op(
    "aten::_einsum_view(Tensor(a) self, str subscripts) -> Tensor(a)",
    shape=einsum_view_rule,
    derivative=Derivative.FORMULA,
    view=EINSUM,
)(einsum_view)
register_op(
    "aten::inner(Any self, Any other) -> Tensor",
    shape=_pair_rule(inner_subscripts),
    derivative=Derivative.FORMULA,
    spellings={"numpy.inner": "a:self b:other /"},
)(np.inner)
register_op(
    "aten::outer(Any self, Any other) -> Tensor",
    shape=_outer_rule,
    derivative=Derivative.FORMULA,
    spellings={"numpy.outer": "a:self b:other !out"},
)(np.outer)
register_op(
    "aten::kron(Any self, Any other) -> Tensor",
    shape=_kron_rule,
    derivative=Derivative.FORMULA,
    spellings={"numpy.kron": "a:self b:other"},
)(np.kron)
register_op(
    "aten::cross(Tensor self, Tensor other, int axisa=-1, int axisb=-1, int axisc=-1,"
    " int? axis=None) -> Tensor",
    shape=_cross_rule,
    derivative=Derivative.FORMULA,
    spellings={"numpy.cross": "a:self b:other axisa axisb axisc axis"},
)(cross)
register_op(
    "aten::_cross_axes(int axisa, int axisb, int axisc, int? axis) -> Any",
    shape=fixed(TupleType((INT, INT, INT))),
    derivative=Derivative.NONE,
)(cross_axes)

register_op(
    "aten::_einsum_backward(Tensor grad, str subscripts, Any operands) -> Any",
    shape=_einsum_vjp_rule,
    derivative=Derivative.FORMULA,
)(einsum_vjp)
register_op(
    "aten::_einsum_double_backward(Any cotangents, Tensor grad, str subscripts, Any operands)"
    " -> Any",
    shape=_einsum_double_backward_rule,
    derivative=Derivative.FORMULA,
)(einsum_vjp_backward)
register_op(
    "aten::_einsum_triple_backward(Tensor dout_grad, Any dout_operands, Any cotangents,"
    " Tensor grad, str subscripts, Any operands) -> Any",
    shape=_einsum_triple_backward_rule,
    derivative=Derivative.REFUSED,
)(einsum_vjp_backward_backward)
register_op(
    "aten::_tensordot_subscripts(int ndim_self, int ndim_other, Any axes) -> str",
    shape=fixed(STR),
    derivative=Derivative.NONE,
)(tensordot_subscripts)
register_op(
    "aten::_inner_subscripts(int ndim_self, int ndim_other) -> str",
    shape=fixed(STR),
    derivative=Derivative.NONE,
)(inner_subscripts)
register_op(
    "aten::_kron_subscripts(int ndim_self, int ndim_other) -> str",
    shape=fixed(STR),
    derivative=Derivative.NONE,
)(kron_subscripts)
register_op(
    "aten::_kron_split(Any shape_self, Any shape_other) -> Any",
    shape=_kron_split_rule,
    derivative=Derivative.NONE,
)(kron_split)
