"""Backend kernels of products and diagonals: ``einsum`` and its gradient, ``kron``,
``inner``, ``outer``, ``cross``, ``trace``, ``diagonal``, ``diag`` (Note [Array backends] in
`ir.backends`). The Array API has no ``einsum``: on a namespace without one it is spelled by
its definition, with broadcasting and sums (`_broadcast_einsum`)."""

from __future__ import annotations

from typing import Any

from ir.backend_kernel_parts import Kernel, TableEntry, positions_of, safe_reshape
from ir.backend_kernels_indexing_gradients import scattered
from ir.errors import BackendError
from ir.ops.products import _operand_spec, parse_subscripts


def _cross(xp: Any) -> Kernel:
    """``np.cross`` of 3- (or 2-) vectors, from its components: each result component is a
    difference of two products, as the definition reads."""

    def cross(
        a: Any, b: Any, axisa: int = -1, axisb: int = -1, axisc: int = -1, axis: Any = None
    ) -> Any:
        if axis is not None:
            axisa = axisb = axisc = axis
        a, b = xp.moveaxis(a, axisa, -1), xp.moveaxis(b, axisb, -1)
        if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
            raise BackendError(
                "incompatible dimensions for cross product (dimension must be 2 or 3)"
            )
        a0, a1, b0, b1 = a[..., 0], a[..., 1], b[..., 0], b[..., 1]
        if a.shape[-1] == 2 and b.shape[-1] == 2:
            return a0 * b1 - a1 * b0
        a2 = a[..., 2] if a.shape[-1] == 3 else None
        b2 = b[..., 2] if b.shape[-1] == 3 else None
        c0 = (a1 * b2 if b2 is not None else 0 * a1) - (a2 * b1 if a2 is not None else 0 * b1)
        c1 = (a2 * b0 if a2 is not None else 0 * b0) - (a0 * b2 if b2 is not None else 0 * a0)
        c2 = a0 * b1 - a1 * b0
        c0, c1, c2 = xp.broadcast_arrays(c0, c1, c2)
        return xp.moveaxis(xp.stack([c0, c1, c2], axis=-1), -1, axisc)

    return cross


def einsum_of(xp: Any) -> Kernel:
    """The namespace's ``einsum(subscripts, *operands)``, or, for one without (the Array
    API has none), `_broadcast_einsum` spelled with its functions."""
    if hasattr(xp, "einsum"):
        function: Kernel = xp.einsum
        return function
    return lambda subscripts, *operands: _broadcast_einsum(xp, subscripts, operands)


def _broadcast_einsum(xp: Any, subscripts: str, operands: Any) -> Any:
    """``np.einsum`` by its definition: each operand's repeated labels read as a diagonal,
    every operand laid out along all the labels (length 1 where it lacks one), their
    broadcast product summed over the labels the result lacks. Its memory is the product
    of every label's length: meant for the small arrays of a strict namespace, not for
    large contractions."""
    arrays = [xp.asarray(x) for x in operands]
    inputs, output = parse_subscripts(subscripts, len(arrays), [a.ndim for a in arrays])
    every = "".join(dict.fromkeys("".join(inputs)))
    laid_out = []
    for x, labels in zip(arrays, inputs, strict=True):
        x, labels = _diagonals(xp, x, labels)
        present = [c for c in every if c in labels]
        x = xp.permute_dims(x, tuple(labels.index(c) for c in present))
        sizes = dict(zip(present, x.shape, strict=True))
        laid_out.append(xp.reshape(x, tuple(sizes.get(c, 1) for c in every)))
    product = laid_out[0]
    for x in laid_out[1:]:
        product = product * x
    summed = tuple(i for i, c in enumerate(every) if c not in output)
    if summed:
        product = xp.sum(product, axis=summed)
    kept = [c for c in every if c in output]
    return xp.permute_dims(product, tuple(kept.index(c) for c in output))


def _diagonals(xp: Any, x: Any, labels: str) -> tuple[Any, str]:
    """``x`` with each repeated label read as the diagonal of its two axes, that label
    then last."""
    while len(set(labels)) < len(labels):
        label = next(c for c in labels if labels.count(c) > 1)
        first = labels.index(label)
        second = labels.index(label, first + 1)
        x = xp.linalg.diagonal(xp.moveaxis(x, (first, second), (-2, -1)))
        labels = "".join(c for i, c in enumerate(labels) if i not in (first, second)) + label
    return x, labels


def _einsum_backward(xp: Any) -> Kernel:
    """`ir.ops.products.einsum_vjp` through the namespace's ``einsum``: per operand, the
    einsum of the result's gradient with the other operands, summed along the labels the
    operand broadcast, spread along the labels it summed away, and put back on the diagonal
    of a label it repeats (a scatter, Note [Scatter-adds on backends])."""
    einsum = einsum_of(xp)

    def einsum_backward(grad: Any, subscripts: str, operands: Any) -> tuple[Any, ...]:
        arrays = list(operands)
        inputs, output = parse_subscripts(subscripts, len(arrays), [a.ndim for a in arrays])
        grads = []
        for index, operand in enumerate(arrays):
            spec, kept = _operand_spec(inputs, output, index)
            others = [a for j, a in enumerate(arrays) if j != index]
            partial = einsum(spec, grad, *others)
            labels = inputs[index]
            sizes = dict(zip(labels, operand.shape, strict=True))
            broadcast = tuple(
                axis for axis, c in enumerate(kept) if sizes[c] == 1 and partial.shape[axis] != 1
            )
            if broadcast:
                partial = xp.sum(partial, axis=broadcast, keepdims=True)
            expanded = _expand(xp, einsum, partial, labels, kept, tuple(operand.shape))
            if not xp.isdtype(operand.dtype, "complex floating"):
                if xp.isdtype(expanded.dtype, "complex floating"):
                    expanded = xp.real(expanded)
                expanded = xp.astype(expanded, operand.dtype)
            grads.append(expanded)
        return tuple(grads)

    return einsum_backward


def _expand(
    xp: Any, einsum: Kernel, partial: Any, labels: str, kept: str, shape: tuple[int, ...]
) -> Any:
    """`ir.ops.products._expand`: ``partial`` (over ``kept``) broadcast along the labels of
    ``labels`` it lacks and, for a repeated label, scattered onto that diagonal."""
    sizes = dict(zip(labels, shape, strict=True))
    unique = "".join(dict.fromkeys(labels))
    for position, c in enumerate(unique):
        if c not in kept:
            partial = xp.expand_dims(partial, axis=position)
    full = xp.broadcast_to(partial, tuple(sizes[c] for c in unique))
    if len(unique) == len(labels):
        return xp.permute_dims(full, tuple(unique.index(c) for c in labels))
    owners = einsum(f"{labels}->{unique}", positions_of(xp, shape))  # the diagonal's
    return scattered(xp, owners, full, shape)


def _kron(xp: Any) -> Kernel:
    """``np.kron``: the operands aligned from the right, each axis of ``a`` next to ``b``'s
    (``a`` with ones between, ``b`` before), multiplied, and each pair of axes merged."""

    def kron(a: Any, b: Any) -> Any:
        a, b = xp.asarray(a), xp.asarray(b)
        ndim = max(a.ndim, b.ndim)
        a_shape = (1,) * (ndim - a.ndim) + tuple(a.shape)
        b_shape = (1,) * (ndim - b.ndim) + tuple(b.shape)
        spread_a = xp.reshape(a, tuple(n for d in a_shape for n in (d, 1)))
        spread_b = xp.reshape(b, tuple(n for d in b_shape for n in (1, d)))
        product = spread_a * spread_b
        merged = tuple(p * q for p, q in zip(a_shape, b_shape, strict=True))
        return safe_reshape(xp, product, merged)

    return kron


def _inner(xp: Any) -> Kernel:
    def inner(a: Any, b: Any) -> Any:
        if getattr(a, "ndim", 0) == 0 or getattr(b, "ndim", 0) == 0:
            return a * b
        return xp.tensordot(a, b, axes=((a.ndim - 1,), (b.ndim - 1,)))

    return inner


def _outer(xp: Any) -> Kernel:
    def outer(a: Any, b: Any) -> Any:
        a, b = safe_reshape(xp, xp.asarray(a), (-1,)), safe_reshape(xp, xp.asarray(b), (-1,))
        return xp.expand_dims(a, axis=1) * xp.expand_dims(b, axis=0)

    return outer


def _diagonal(xp: Any) -> Kernel:
    def diagonal(x: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
        return xp.linalg.diagonal(xp.moveaxis(x, (axis1, axis2), (-2, -1)), offset=offset)

    return diagonal


def _trace(xp: Any) -> Kernel:
    diagonal = _diagonal(xp)
    return lambda x, offset=0, axis1=0, axis2=1: xp.sum(diagonal(x, offset, axis1, axis2), axis=-1)


def _diagonal_backward(xp: Any) -> Kernel:
    """The gradient of ``np.diagonal``: ``grad`` summed onto the positions the diagonal read
    (Note [Scatter-adds on backends]); ``grad`` broadcasts along it (``np.trace``'s)."""
    diagonal = _diagonal(xp)

    def diagonal_backward(grad: Any, shape: Any, offset: int, axis1: int, axis2: int) -> Any:
        owners = diagonal(positions_of(xp, shape), offset, axis1, axis2)
        if grad.ndim < owners.ndim:  # np.trace's: one value per matrix
            grad = xp.expand_dims(grad, axis=-1)
        return scattered(xp, owners, xp.broadcast_to(grad, tuple(owners.shape)), shape)

    return diagonal_backward


def _diag(xp: Any) -> Kernel:
    """``np.diag``: a matrix's diagonal, or a vector put on a diagonal of zeros."""
    diagonal = _diagonal(xp)

    def diag(x: Any, k: int = 0) -> Any:
        if x.ndim == 2:
            return diagonal(x, k, 0, 1)
        n = x.shape[0] + abs(k)
        owners = diagonal(positions_of(xp, (n, n)), k, 0, 1)
        return scattered(xp, owners, x, (n, n))

    return diag


def _diag_backward(xp: Any) -> Kernel:
    diagonal, diagonal_backward = _diagonal(xp), _diagonal_backward(xp)

    def diag_backward(grad: Any, shape: Any, k: int) -> Any:
        if len(shape) == 1:
            return diagonal(grad, k, 0, 1)
        return diagonal_backward(grad, shape, k, 0, 1)

    return diag_backward


PRODUCT_KERNELS: dict[str, TableEntry] = {
    "aten::einsum": lambda xp: lambda subscripts, operands: einsum_of(xp)(subscripts, *operands),
    "aten::_einsum_view": lambda xp: lambda x, subscripts: einsum_of(xp)(subscripts, x),
    "aten::_einsum_backward": _einsum_backward,
    "aten::kron": _kron,
    "aten::inner": _inner,
    "aten::outer": _outer,
    "aten::cross": _cross,
    "aten::diagonal": _diagonal,
    "aten::trace": _trace,
    "aten::_diagonal_backward": _diagonal_backward,
    "aten::diag": _diag,
    "aten::_diag_backward": _diag_backward,
}
"""The kernels of `ir.backend_kernels.NAMESPACE_KERNELS` for products and diagonals."""
