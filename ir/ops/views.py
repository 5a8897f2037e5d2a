"""Which operators return NumPy views, and how a write through such a view reaches its operand.

Note [Views]
An operator whose NumPy function returns a view of its first operand carries a `ViewRule` in
its `OpDef` (``register_op(..., view=...)``), and its schema says so, ``Tensor(a) self ->
Tensor(a)`` (the registry checks that the two agree: Note [Operator records]);
`passes.functionalize` reads nothing else to know what shares memory (Note
[Functionalisation]). A rule says:

* ``scatter``: how new contents of the view become new contents of the operand (the write's
  inverse), or None for a read-only view: NumPy raises "assignment destination is read-only"
  for a write into ``np.diagonal(x)``, ``np.diag`` of a 2-D array or ``np.broadcast_to(x, s)``,
  and the compiler refuses it where the write is.
* ``when``: whether a given node's result is a view at all (``np.diag`` of a 1-D array builds a
  new matrix; of a 2-D one it reads the diagonal; ``y[i]`` reading one element of a 1-D ``y``
  is a NumPy scalar, a copy).
* ``strided``: the result is a view only when NumPy's stride rule allows it, a copy otherwise
  (``reshape``: when the new shape can be expressed with the strides of the old one;
  ``ravel``: when the operand is C-contiguous). `view_is_copy` applies the rule to the strides
  the chain of views before it gives. A graph input has the strides it is compiled for: the
  signature key holds each array argument's strides, and those of one that is not C-contiguous
  (``a.T``, ``a[::2]``, ``np.asfortranarray(a)``) reach `passes.functionalize`
  (``strided_inputs``); an array an operator makes of C-contiguous operands is C-contiguous;
  a ufunc of one array of known strides (and numbers) has the strides `ufunc_result_strides`
  gives (``x.T * 2`` keeps the transpose's layout: NumPy's order 'K'); one made of other views
  or passed along by a loop or an If has strides the compiler does not know, and so does a
  reshape of it.
* ``pieces``: the result is a tuple of views (``np.split``); each ``prim::TupleIndex`` of it is a
  view of the operand, written back by ``scatter`` (the TupleIndex node is the one it gets).
* ``read_only``: a view that refuses writes only for some nodes (``np.imag`` of a real array is
  a new read-only array of zeros; of a complex one, a writable view).

Most scatters are the inverse view: a transpose, swapaxes, moveaxis, rollaxis, flip or rot90
covers every element of its operand in another order, undone by the inverse transpose, the
same swap or flip again, the opposite move, or the opposite rotation (none needs the rank,
which a graph differentiated again may not know). Reshapes and dimension changes keep C order
and are undone by a reshape. A view of
part of its operand (an index, a slice, a diagonal, a real or imaginary part, a piece of a
split) is written back by the scatter operator of `ir.ops.scatter` that matches it.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ir.errors import IRError
from ir.graph import Graph, Node, Value
from ir.types import ANY, INT, TensorType, TupleType

Scatter = Callable[[Graph, Node, Value, Value], Value]
"""``scatter(graph, view, parent, value)``: the new contents of ``view``'s operand, whose
current contents are ``parent``, once the view's contents have become ``value``. It raises an
IRError without a location when the write cannot be known at compile time; functionalisation
locates it at the write."""


def _always(node: Node) -> bool:
    return True


def _never(node: Node) -> bool:
    return False


@dataclass(frozen=True, slots=True)
class ViewRule:
    """How an operator's result shares memory with its first operand (Note [Views])."""

    scatter: Scatter | None  # None: a read-only view
    when: Callable[[Node], bool] = _always
    strided: bool = False
    pieces: bool = False
    read_only: Callable[[Node], bool] = _never

    def is_read_only(self, node: Node) -> bool:
        return self.scatter is None or self.read_only(node)


# ---- compile-time facts ---------------------------------------------------------------------


def _constant(value: Value) -> Any:
    """The compile-time value of a view's argument: a constant, or a tuple or list of them."""
    node = value.node
    if node.kind == "prim::Constant":
        return node.attrs.get("value")
    if node.kind in ("prim::TupleConstruct", "prim::ListConstruct"):
        items = [_constant(item) for item in node.inputs]
        return tuple(items) if node.kind == "prim::TupleConstruct" else items
    raise IRError("a write through this view needs its arguments known at compile time")


def static_shape(value: Value) -> tuple[int, ...] | None:
    ty = value.ty
    if isinstance(ty, TensorType) and ty.shape is not None and None not in ty.shape:
        return tuple(int(d) for d in ty.shape if d is not None)
    return None


def is_complex(value: Value) -> bool | None:
    """Whether ``value`` is a complex array (None: its dtype is not known)."""
    ty = value.ty
    if not isinstance(ty, TensorType) or ty.dtype is None:
        return None
    return np.dtype(ty.dtype).kind == "c"


def view_rule(node: Node) -> ViewRule | None:
    """The rule of ``node`` if its result is a NumPy view of its first operand; a
    prim::TupleIndex of a split's pieces has the split's rule."""
    from ir.ops.registry import OPS  # the registry imports this module

    if node.kind == "prim::TupleIndex":
        split = OPS.get(node.inputs[0].node.kind)
        rule = None if split is None else split.view
        return rule if rule is not None and rule.pieces else None
    op = OPS.get(node.kind)
    if op is None or op.view is None or not op.view.when(node):
        return None
    return op.view


def apply_view(view: Node, operand: np.ndarray) -> Any:
    """``view``'s kernel on ``operand`` with the node's other (compile-time) arguments."""
    from ir.ops.registry import lookup_op  # the registry imports this module

    kernel = lookup_op(view.kind).kernel
    assert kernel is not None
    return kernel(operand, *(_constant(v) for v in view.inputs[1:]))


# ---- scatters -------------------------------------------------------------------------------


def select_back(graph: Graph, view: Node, parent: Value, value: Value) -> Value:
    _, axis, index = view.inputs
    return graph.insert("aten::select_scatter", (parent, value, axis, index), (parent.ty,)).output


def slice_back(graph: Graph, view: Node, parent: Value, value: Value) -> Value:
    _, *bounds = view.inputs
    return graph.insert("aten::slice_scatter", (parent, value, *bounds), (parent.ty,)).output


def reshaped_back(graph: Graph, view: Node, parent: Value, value: Value) -> Value:
    """Reshapes and dimension changes keep the elements in C order: reshaping the new view
    contents to the parent's shape is the parent's new contents."""
    shape = graph.insert("aten::shape", (parent,), (ANY,)).output
    return graph.insert("aten::reshape", (value, shape), (parent.ty,)).output


def transposed_back(graph: Graph, view: Node, parent: Value, value: Value) -> Value:
    axes = _constant(view.inputs[1])
    if axes is None:  # the reversed axes: reversed again
        inverse = view.inputs[1]
    else:
        back = tuple(int(i) for i in np.argsort(np.asarray(axes) % len(axes)))
        inverse = graph.insert_constant(back, TupleType((INT,) * len(back)))
    return graph.insert("aten::transpose", (value, inverse), (parent.ty,)).output


def viewed_again(graph: Graph, view: Node, parent: Value, value: Value) -> Value:
    """A view that is its own inverse (a flip, a swap of two axes): the same view again."""
    return graph.insert(view.kind, (value, *view.inputs[1:]), (parent.ty,)).output


def moved_back(graph: Graph, view: Node, parent: Value, value: Value) -> Value:
    _, source, destination = view.inputs
    return graph.insert("aten::moveaxis", (value, destination, source), (parent.ty,)).output


def rolled_back(graph: Graph, view: Node, parent: Value, value: Value) -> Value:
    """``np.rollaxis(x, axis, start)`` moves ``axis`` to where `rollaxis_destination` says."""
    _, axis, start = view.inputs
    ndim = graph.insert("aten::ndim", (parent,), (INT,)).output
    moved_to = graph.insert("aten::_rollaxis_destination", (ndim, axis, start), (INT,)).output
    return graph.insert("aten::moveaxis", (value, moved_to, axis), (parent.ty,)).output


def rotated_back(graph: Graph, view: Node, parent: Value, value: Value) -> Value:
    _, k, axes = view.inputs
    back = graph.insert("prim::neg", (k,), (INT,)).output
    return graph.insert("aten::rot90", (value, back, axes), (parent.ty,)).output


def index_back(graph: Graph, view: Node, parent: Value, value: Value) -> Value:
    _, *items = view.inputs
    return graph.insert("aten::index_put", (parent, value, *items), (parent.ty,)).output


def einsum_back(graph: Graph, view: Node, parent: Value, value: Value) -> Value:
    subscripts = view.inputs[1]
    return graph.insert("aten::_einsum_scatter", (parent, value, subscripts), (parent.ty,)).output


def real_back(graph: Graph, view: Node, parent: Value, value: Value) -> Value:
    """``np.real`` of a complex array is a view of its real parts; of a real one, the array."""
    complex_parent = is_complex(parent)
    if complex_parent is None:
        raise IRError("a write through np.real needs the dtype of its array known")
    if not complex_parent:
        return value
    return graph.insert("aten::_real_scatter", (parent, value), (parent.ty,)).output


def imag_back(graph: Graph, view: Node, parent: Value, value: Value) -> Value:
    return graph.insert("aten::_imag_scatter", (parent, value), (parent.ty,)).output


def imag_of_real(node: Node) -> bool:
    """``np.imag`` of a real array is a new read-only array; unknown dtypes are refused too."""
    return is_complex(node.inputs[0]) is not True


def piece_back(axis_of: Callable[[Node], int]) -> Scatter:
    """The scatter of one piece of a split (``view`` is the prim::TupleIndex of the split's
    tuple): a slice_scatter along the split axis, at the bounds the piece types give."""

    def scatter(graph: Graph, view: Node, parent: Value, value: Value) -> Value:
        split = view.inputs[0].node
        pieces = split.output.ty
        index = _constant(view.inputs[1])
        lengths = []
        axis = axis_of(split)
        if isinstance(pieces, TupleType):
            for piece in pieces.elems:
                shape = piece.shape if isinstance(piece, TensorType) else None
                lengths.append(None if shape is None else shape[axis])
        if not lengths or None in lengths[: index + 1]:
            raise IRError("a write through a piece of a split needs the pieces' lengths known")
        start = sum(int(n) for n in lengths[:index] if n is not None)
        stop = start + int(lengths[index] or 0)
        bounds = [graph.insert_constant(v, INT) for v in (axis, start, stop, 1)]
        return graph.insert("aten::slice_scatter", (parent, value, *bounds), (parent.ty,)).output

    return scatter


def split_axis(position: int | None, fixed: int | None = None) -> Callable[[Node], int]:
    """The axis a split cuts: its operand at ``position``, or ``fixed``, or (hsplit) 1, or 0
    for a 1-d array; normalised."""

    def axis_of(split: Node) -> int:
        ty = split.inputs[0].ty
        rank = ty.rank if isinstance(ty, TensorType) else None
        if rank is None:
            raise IRError("a write through a piece of a split needs its rank known")
        if position is not None:
            axis = int(_constant(split.inputs[position]))
        elif fixed is not None:
            axis = fixed
        else:
            axis = 0 if rank == 1 else 1
        return axis % rank

    return axis_of


def not_one_element(node: Node) -> bool:
    """Reading one element (``y[i]`` on a 1-D ``y``, ``y[i, j]`` on a 2-D one: a 0-d result of
    an int select or index) gives a NumPy scalar, a copy, not a view."""
    ty = node.output.ty
    return not (isinstance(ty, TensorType) and ty.shape == ())


def operand_rank_is(rank: int | None) -> Callable[[Node], bool]:
    """Whether the operand is an array of rank ``rank`` (None: an array of any rank)."""

    def when(node: Node) -> bool:
        ty = node.inputs[0].ty
        return isinstance(ty, TensorType) and (rank is None or ty.rank == rank)

    return when


# ---- the rules ------------------------------------------------------------------------------

SELECT = ViewRule(select_back, when=not_one_element)
SLICE = ViewRule(slice_back)
RESHAPED = ViewRule(reshaped_back)
STRIDED_RESHAPE = ViewRule(reshaped_back, strided=True)
TRANSPOSED = ViewRule(transposed_back)
SELF_INVERSE = ViewRule(viewed_again)
MOVED = ViewRule(moved_back)
ROLLED = ViewRule(rolled_back)
ROTATED = ViewRule(rotated_back)
READ_ONLY = ViewRule(None)
EINSUM = ViewRule(einsum_back)
REAL = ViewRule(real_back, when=operand_rank_is(None))
IMAG = ViewRule(imag_back, when=operand_rank_is(None), read_only=imag_of_real)
DIAG = ViewRule(None, when=operand_rank_is(2))


def pieces(axis_of: Callable[[Node], int]) -> ViewRule:
    return ViewRule(piece_back(axis_of), pieces=True)


# ---- NumPy's stride rule --------------------------------------------------------------------


def probe_chain(
    chain: tuple[Node, ...], base: Value, strides: tuple[int, ...] | None = None
) -> Any:
    """What ``chain`` of views makes of an array of ``base``'s shape and dtype with ``strides``
    (in bytes; None: C-contiguous): an array with the view's strides, whose memory is never
    read (views only move strides), or None when the shape, the dtype or an argument is not
    known at compile time."""
    shape = static_shape(base)
    dtype = base.ty.dtype if isinstance(base.ty, TensorType) else None
    if shape is None or dtype is None or (strides is not None and len(strides) != len(shape)):
        return None
    if strides is None:
        strides = _c_strides(shape, np.dtype(dtype).itemsize)
    probe: Any = np.lib.stride_tricks.as_strided(
        np.zeros(1, dtype), shape, strides, writeable=False
    )
    try:
        for node in chain:
            probe = apply_view(node, probe)
    except IRError:
        return None
    return probe


def view_is_copy(
    chain: tuple[Node, ...], base: Value, view: Node, strides: tuple[int, ...] | None = None
) -> bool | None:
    """Whether ``view`` (a strided view rule: reshape, ravel) of the result of ``chain`` of
    views of ``base``, an array with ``strides`` (None: C-contiguous), copies, as NumPy decides
    from the strides; None when that is not known at compile time."""
    probe = probe_chain(chain, base, strides)
    if probe is None:
        return False if strides is None and _contiguous(chain) else None
    if view.kind == "aten::ravel":
        return not probe.flags.c_contiguous
    target = static_shape(view.output)
    if target is None:
        return False if probe.flags.c_contiguous else None
    try:
        np.reshape(probe, target, copy=False)
    except ValueError:
        return True
    return False


def view_is_copy_in_any_order(chain: tuple[Node, ...], base: Value, view: Node) -> bool | None:
    """`view_is_copy` of a ``base`` whose layout is not known but which NumPy allocated itself
    (what a ufunc, a copy or a reduction returns): contiguous in some order of its axes, with
    positive strides. The decision when every such order gives the same one, else None."""
    shape = static_shape(base)
    if shape is None or len(shape) > _MAX_ORDERED_RANK or not isinstance(base.ty, TensorType):
        return None
    itemsize = np.dtype(base.ty.dtype or "float64").itemsize
    decisions = {
        view_is_copy(chain, base, view, _strides_in_order(shape, order, itemsize))
        for order in itertools.permutations(range(len(shape)))
    }
    return decisions.pop() if len(decisions) == 1 else None


_MAX_ORDERED_RANK = 4  # 24 orders at most


def ufunc_result_strides(
    operand_strides: tuple[int, ...], shape: tuple[int, ...], itemsize: int
) -> tuple[int, ...] | None:
    """The strides of the new array a ufunc returns for one array operand of ``shape`` with
    ``operand_strides`` (the others numbers or 0-d), as NumPy allocates it in order 'K': its
    axes in memory in the operand's order, largest absolute stride first, contiguous, with
    positive strides (where axes of length 1 lie changes no stride NumPy reads). None when two
    longer axes have strides of one size (a broadcast operand), where the order is NumPy's
    choice. ``tanh(x.T)`` of a C-ordered ``x`` is Fortran-ordered; ``tanh(x[::-1])`` is
    C-ordered."""
    long_axes = [axis for axis in range(len(shape)) if shape[axis] > 1]
    sizes = [abs(operand_strides[axis]) for axis in long_axes]
    if len(set(sizes)) != len(sizes) or 0 in sizes:
        return None
    ordered = sorted(long_axes, key=lambda axis: -abs(operand_strides[axis]))
    order = [axis for axis in range(len(shape)) if shape[axis] <= 1] + ordered
    return _strides_in_order(shape, tuple(order), itemsize)


def _strides_in_order(
    shape: tuple[int, ...], order: tuple[int, ...], itemsize: int
) -> tuple[int, ...]:
    """The strides of a contiguous array whose axes lie in memory in ``order``, outermost first."""
    strides = [0] * len(shape)
    step = itemsize
    for axis in reversed(order):
        strides[axis] = step
        step *= max(shape[axis], 1)
    return tuple(strides)


def _contiguous(chain: tuple[Node, ...]) -> bool:
    """Whether ``chain`` of a C-contiguous array of any shape is C-contiguous too: reshapes
    and dimension changes, and leading-axis selects and unit-step slices."""
    for view in chain:
        rule = view_rule(view)
        if rule is not None and rule.scatter is reshaped_back:
            continue
        if view.kind not in ("aten::select", "aten::slice") or not _is_constant(view, 1, {0}):
            return False
        if view.kind == "aten::slice" and not _is_constant(view, 4, {None, 1}):
            return False
    return True


def _is_constant(view: Node, position: int, values: set[Any]) -> bool:
    try:
        return _constant(view.inputs[position]) in values
    except IRError:
        return False


def _c_strides(shape: tuple[int, ...], itemsize: int) -> tuple[int, ...]:
    strides = []
    step = itemsize
    for dim in reversed(shape):
        strides.append(step)
        step *= max(dim, 1)
    return tuple(reversed(strides))
