"""In-place operators: writes into an existing array, as the frontend emits them for ``y[i] = v``,
``y += x`` and ``np.add.at``, and the out-of-place copy ``x.copy()``.

Note [In-place operators]
NumPy code mutates arrays, and every alias of the mutated array (a view ``v = y[0]``, a second
name ``z = y``, the caller's argument) sees the write. The frontend emits the write where the
code makes it, as an operator that mutates its first operand and returns it:

    aten::copy_(Any(a!) self, Any src) -> Any(a!)
        ``np.copyto(self, src, casting="same_kind")``: ``view[...] = src`` for ``y[1:3] = v``
        (self is the view chain a read of ``y[1:3]`` emits) and ``y = y + x`` written back for
        ``y += x``; when self is not an array at run time (a NumPy scalar, which is immutable)
        the result is src, a rebinding, as Python's ``+=`` does (self is typed Any because an
        unannotated parameter updated with ``+=`` may be a Python number at run time)
    aten::index_put_(Tensor(a!) self, Any values, Any... indices) -> Tensor(a!)
        ``self[items] = values`` with the items of ``aten::index`` (None is a full slice ``:``)
    aten::add_at_(Tensor(a!) self, Any values, Any... indices) -> Tensor(a!)
        ``np.add.at(self, items, values)``: unlike ``self[items] += values``, a repeated index
        adds once per occurrence

The kernels really mutate, so the interpreter running a graph as parsed behaves like the plain
function, aliases included. They are impure (CSE, DCE and constant propagation leave them) and
structural for differentiation (Note [Derivatives] in `ir.ops.registry`): the functionalisation
pass (`passes.functionalize`) rewrites each into the out-of-place operator its record names
(``out_of_place``: ``aten::_written``, ``aten::index_put``, ``aten::add_at``, Note [Scatters] in
`ir.ops.scatter`) and scatters into the base array before anything is differentiated. The
schemas say so: ``Tensor(a!) self -> Tensor(a!)`` writes ``self`` and returns it (Note [Alias
annotations] in `ir.ops.schema`).

``aten::copy`` is the pure, differentiable copy (``x.copy()``, ``np.copy(x)``, ``np.array(x)``):
a new array a later write to ``x`` does not reach.

Shape rules return ``self``'s type (the result is ``self``) after checking that the written
values broadcast to the part of ``self`` they fill, with NumPy's messages.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ir.errors import ShapeError
from ir.ops.indexing import _index_rule
from ir.ops.registry import Derivative, ShapeRule, register_op
from ir.ops.shape_rules import Shape, as_array_like, as_tensor, format_shape, same_shape
from ir.types import ANY, BOOL, FLOAT, INT, SCALAR, Type

_FULL = slice(None)


def _index_tuple(indices: Sequence[Any]) -> tuple[Any, ...]:
    """The index ``aten::index`` builds from its items: None is a full slice ``:``."""
    return tuple(_FULL if item is None else item for item in indices)


def copy(x: Any) -> np.ndarray:
    """``np.copy(x)``, ``np.array(x)``: always an array, 0-d for a NumPy scalar."""
    return np.array(x, copy=True)


def copy_method(x: Any) -> Any:
    """``x.copy()``: NumPy's method, which keeps a NumPy scalar a NumPy scalar (``np.copy``
    makes it a 0-d array). A Python number, immutable, is its own copy.

    >>> type(copy_method(np.float64(0.5))).__name__, type(copy(np.float64(0.5))).__name__
    ('float64', 'ndarray')
    """
    return x.copy() if isinstance(x, np.ndarray | np.generic) else x


def copy_(target: Any, source: Any) -> Any:
    # A target that is no array is rebound, as Python's ``+=`` rebinds an immutable value: a
    # NumPy scalar (what a reduction returns, typed as a 0-d array) or a number in a value the
    # frontend typed Any.
    if not isinstance(target, np.ndarray):
        return source
    np.copyto(target, source, casting="same_kind")
    return target


def index_put_(target: np.ndarray, values: Any, *indices: Any) -> np.ndarray:
    target[_index_tuple(indices)] = values
    return target


def add_at_(target: np.ndarray, values: Any, *indices: Any) -> np.ndarray:
    np.add.at(target, _index_tuple(indices), values)
    return target


def _fits(source: Shape, target: Shape) -> bool:
    """Whether an array of shape ``source`` broadcasts to ``target`` (unknown dims fit)."""
    if len(source) > len(target):
        extra = source[: len(source) - len(target)]
        if any(d is not None and d != 1 for d in extra):
            return False
        source = source[len(source) - len(target) :]
    offset = len(target) - len(source)
    return all(
        s is None or t is None or s in (1, t) for s, t in zip(source, target[offset:], strict=True)
    )


def _copy_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    if types[0] in (INT, FLOAT, BOOL, SCALAR):  # a Python number is rebound: see `copy_`
        return [types[1]]
    if types[0] is ANY:
        return [ANY]
    target = as_tensor(types[0])
    source = as_array_like(types[1], 1).shape
    if target.shape is not None and source is not None and not _fits(source, target.shape):
        raise ShapeError(
            f"could not broadcast input array from shape {format_shape(source)} into shape "
            f"{format_shape(target.shape)}"
        )
    return [types[0]]


def _written_rule(message: str) -> ShapeRule:
    """The rule of a scatter into ``self[indices]``: the values broadcast to what
    ``aten::index`` would read there."""

    def rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
        as_tensor(types[0])
        (indexed,) = _index_rule([types[0], *types[2:]], [consts[0], *consts[2:]])
        values = as_array_like(types[1], 1).shape
        slot = as_tensor(indexed).shape
        if slot is not None and values is not None and not _fits(values, slot):
            raise ShapeError(message.format(values=format_shape(values), slot=format_shape(slot)))
        return [types[0]]

    return rule


register_op(
    "aten::copy(Tensor self) -> Tensor",
    shape=same_shape,
    derivative=Derivative.FORMULA,
    # np.array of an array copies it; of a list or tuple literal it stacks the items, as does
    # np.asarray (`CallEmitter.emit_array`, Note [Python numbers as arrays] in frontend.calls).
    spellings={
        "numpy.copy": "a:self !order !subok",
        "numpy.array": "object:self !dtype * !copy !order !subok !ndmin !like",
    },
)(copy)
register_op(
    "aten::copy_method(Tensor self) -> Tensor",
    shape=same_shape,
    derivative=Derivative.FORMULA,
    spellings={"ndarray.copy": "!order"},
)(copy_method)
register_op(
    "aten::copy_(Any(a!) self, Any src) -> Any(a!)",
    shape=_copy_rule,
    pure=False,
    derivative=Derivative.STRUCTURAL,
    out_of_place="aten::_written",
)(copy_)
register_op(
    "aten::index_put_(Tensor(a!) self, Any values, Any... indices) -> Tensor(a!)",
    shape=_written_rule(
        "shape mismatch: value array of shape {values} could not be broadcast to indexing "
        "result of shape {slot}"
    ),
    pure=False,
    derivative=Derivative.STRUCTURAL,
    out_of_place="aten::index_put",
)(index_put_)
register_op(
    "aten::add_at_(Tensor(a!) self, Any values, Any... indices) -> Tensor(a!)",
    shape=_written_rule(
        "array of shape {values} is not broadcastable to the indexed shape {slot} of np.add.at"
    ),
    pure=False,
    derivative=Derivative.STRUCTURAL,
    out_of_place="aten::add_at",
)(add_at_)
