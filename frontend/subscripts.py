"""Subscripts: reads ``x[...]`` on arrays lowered as Note [Lowering subscripts] in
`ir.ops.indexing` says, ``t[i]`` / ``t[a:b]`` on tuples, and writes ``x[...] = v`` and
``x[...] op= v`` on arrays (Note [Writes]).

Every index item is evaluated first, left to right, as Python does. A full slice ``:`` emits
nothing (it only moves to the next axis), except that ``x[:]`` alone is one ``aten::slice`` so
it stays a view as in NumPy. A tuple value used as an index is refused: NumPy would read it as
one index per axis, which only a literal ``x[i, j]`` spells here.

Note [Writes]
A write is emitted where the code makes it, as an in-place operator on SSA values (Note
[In-place operators] in `ir.ops.inplace`); the names stay bound to the values they had, and
`passes.functionalize` later turns the writes into out-of-place operators and scatters into the
written array's base, rebinding every alias. Emitting writes as written keeps the frontend
ignorant of aliasing (which view shares memory with which array is the pass's question) and
keeps the parsed graph runnable: the interpreter runs it with NumPy's own mutation.

    y[1:3] = v, y[..., None] = v    the view chain a read emits (select, slice, expand_dims;
                                    ``y[:]`` is one slice, ``y[...]`` is y), then
                                    ``aten::copy_(view, v)``
    y[i] = v, y[:, i] = v           the view chain of the items before the last int, then
                                    ``aten::index_put_(view, v, None, ..., i)``: a select of the
                                    last axis gives a NumPy scalar, not a view, so copy_ into it
                                    would write nowhere
    y[idx] = v, y[mask] = v         partial slices as views, as the read does, then
                                    ``aten::index_put_(view, v, *items)`` with ``aten::index``'s
                                    items (None for ``:``)
    y[idx] op= v                    the read ``t = y[idx]``, ``r = t op v``, then the write of r
                                    as above; the index is evaluated once, as Python does (with
                                    repeated indices the last write wins, as in NumPy)
    y op= v  (y an array)           ``aten::copy_(y, y op v)``, and y is bound to its result
                                    (the same array: the pass knows)
    np.add.at(y, idx, v)            ``aten::add_at_(y, v, *items)`` (`frontend.calls`)

An int after an Ellipsis (``y[..., 0] = v``) stays a select and copy_: its axis is counted from
the end, which index_put_'s items cannot say, so such a write into a 1-d array is only right
once functionalised. Tuples and lists are values: a write into one is refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from frontend import syntax
from frontend.environment import PyObject
from frontend.errors import ContainerUseError, ScriptError
from frontend.expressions import ExpressionEmitter
from frontend.lists import builds_list
from frontend.trees import Tree
from ir.graph import Value
from ir.source import SourceRange
from ir.types import ANY, BOOL, FLOAT, INT, NONE, SCALAR, STR, ListType, TupleType

ItemKind = Literal["int", "slice", "newaxis", "ellipsis", "array"]


@dataclass(frozen=True, slots=True)
class _Item:
    kind: ItemKind
    range: SourceRange
    value: Value | None = None  # an int or array index
    bounds: tuple[Value, Value, Value] | None = None  # start, stop, step; None for ``:``


class SubscriptEmitter(ExpressionEmitter):
    def emit_subscript(self, expr: syntax.Subscript) -> Value:
        target = self.resolve(expr.value)
        if isinstance(target, PyObject) and (target.obj is np.r_ or target.obj is np.c_):
            return self.index_concatenation(target.obj is np.r_, expr)
        base = target if isinstance(target, Value) else self.emit_expr(expr.value)
        if isinstance(base.ty, TupleType | ListType):
            return self.sequence_subscript(base, expr.index, expr.range)
        if base.ty in (INT, FLOAT, BOOL, SCALAR, NONE, STR):
            raise ScriptError(
                f"a value of type {base.ty} cannot be subscripted", expr.value.range, doc="indexing"
            )
        return self.array_subscript(base, self.index_items(expr.index), expr.range)

    def index_concatenation(self, rows: bool, expr: syntax.Subscript) -> Value:
        """``np.r_[a, b]`` (``rows``) or ``np.c_[a, b]`` of arrays: their concatenation along the
        first axis, or along the last with 1-d arrays as columns. The ranges (``np.r_[0:3]``)
        and directive strings of NumPy's index tricks are refused."""
        name = "np.r_" if rows else "np.c_"
        index = expr.index
        items = index.elts if isinstance(index, syntax.Tuple) else (index,)
        for item in items:
            if isinstance(item, syntax.Slice) or (
                isinstance(item, syntax.Constant) and isinstance(item.value, str)
            ):
                raise ScriptError(
                    f"{name} of a range or a directive string is not supported: write "
                    "np.arange, np.linspace or np.concatenate",
                    item.range,
                    doc="numpy-functions",
                )
        joined = self.make_tuple([self.emit_expr(item) for item in items], expr.range)
        kind = "aten::r_concatenate" if rows else "aten::c_concatenate"
        return self.apply(kind, [joined], expr.range)

    # ---- tuples -----------------------------------------------------------------------------

    def sequence_subscript(self, base: Value, index: syntax.Expr, r: SourceRange) -> Value:
        tree = self.tree_of(base)
        if tree is not None:
            return self.tree_subscript(base, tree, index, r)
        if isinstance(index, syntax.Slice):
            bounds = [
                self.slice_bound(b, index.range) for b in (index.lower, index.upper, index.step)
            ]
            return self.apply("prim::TupleSlice", [base, *bounds], r)
        if isinstance(index, syntax.Tuple) or (
            isinstance(index, syntax.Constant) and index.value is Ellipsis
        ):
            raise ScriptError(
                f"a {base.ty} takes a single int or slice index",
                index.range,
                doc="lists-tuples-and-dicts",
            )
        position = self.as_index(self.emit_expr(index), index.range)
        kind = "prim::ListIndex" if builds_list(base) else "prim::TupleIndex"
        return self.apply(kind, [base, position], r)

    def tree_subscript(self, base: Value, tree: Tree, index: syntax.Expr, r: SourceRange) -> Value:
        """``params[0]``, ``params["W"]``, ``params[1:]`` of a container known while compiling
        (Note [Containers known while compiling] in `frontend.trees`)."""
        if tree.kind is slice:
            raise ScriptError("TypeError: 'slice' object is not subscriptable", r, doc="builtins")
        if isinstance(index, syntax.Slice) and not tree.is_dict:
            bounds = []
            for part in (index.lower, index.upper, index.step):
                bound = None if part is None else self.emit_expr(part)
                if bound is not None and (bound.node.kind != "prim::Constant" or bound.ty != INT):
                    raise ScriptError(
                        f"a slice of a {tree.kind_name} argument needs int bounds known while "
                        "compiling",
                        part.range if part is not None else index.range,
                        doc="lists-tuples-and-dicts",
                    )
                bounds.append(None if bound is None else bound.node.attrs["value"])
            positions = range(len(tree.children))[slice(*bounds)]
            items = [self.tree_item(base, tree, i, r) for i in positions]
            kind = list if tree.kind is list else tuple
            sliced = Tree(kind, (), tuple(tree.children[i] for i in positions))
            return self.make_tree(items, sliced, r)
        if isinstance(index, syntax.Slice | syntax.Tuple):
            what = "a slice" if isinstance(index, syntax.Slice) else "a tuple"
            raise ScriptError(
                f"a {tree.kind_name} cannot be indexed by {what} here",
                index.range,
                doc="lists-tuples-and-dicts",
            )
        return self.tree_key(base, tree, self.emit_expr(index), index.range)

    # ---- arrays -----------------------------------------------------------------------------

    def index_items(self, index: syntax.Expr) -> list[_Item]:
        exprs = index.elts if isinstance(index, syntax.Tuple) else (index,)
        items: list[_Item] = []
        for expr in exprs:
            r = expr.range
            if isinstance(expr, syntax.Constant) and expr.value is Ellipsis:
                items.append(_Item("ellipsis", r))
            elif isinstance(expr, syntax.Slice):
                parts = (expr.lower, expr.upper, expr.step)
                if all(part is None for part in parts):
                    items.append(_Item("slice", r))
                else:
                    start, stop, step = (self.slice_bound(part, r) for part in parts)
                    items.append(_Item("slice", r, bounds=(start, stop, step)))
            else:
                value = self.emit_expr(expr)
                tree = self.tree_of(value)
                plain = tree is None or tree.kind is tuple
                if len(exprs) == 1 and value.node.kind == "prim::TupleConstruct" and plain:
                    # ``x[index]`` of a tuple built here, ``(slice(None), 0)``: its items
                    items.extend(self.value_item(v, r) for v in value.node.inputs)
                else:
                    items.append(self.value_item(value, r))
        if sum(item.kind == "ellipsis" for item in items) > 1:
            raise ScriptError(
                "an index can only have a single ellipsis ('...')", index.range, doc="indexing"
            )
        return items

    def value_item(self, value: Value, r: SourceRange) -> _Item:
        ty = value.ty
        tree = self.tree_of(value)
        if tree is not None and tree.kind is slice:  # Note [Compile-time builtins]
            start, stop, step = (self.tree_item(value, tree, i, r) for i in range(3))
            if all(bound.ty is NONE for bound in (start, stop, step)):
                return _Item("slice", r)
            return _Item("slice", r, bounds=(start, stop, step))
        if ty is NONE:
            return _Item("newaxis", r)
        if ty in (INT, SCALAR):
            return _Item("int", r, value=self.as_index(value, r))
        if ty is BOOL:
            raise ScriptError(
                "a bool index is not supported (NumPy reads it as a mask)", r, doc="indexing"
            )
        if isinstance(ty, TupleType):
            raise ScriptError(
                "a tuple value cannot be an index: write the items out, as in x[i, j]",
                r,
                doc="indexing",
            )
        if ty in (FLOAT, STR):
            error = ContainerUseError if ty == STR else ScriptError
            raise error(
                f"an index must be an int, a slice or an array, not {ty}", r, doc="indexing"
            )
        return _Item("array", r, value=value)

    def slice_bound(self, part: syntax.Expr | None, r: SourceRange) -> Value:
        if part is None:
            return self.constant(None, NONE, r)
        value = self.emit_expr(part)
        return value if value.ty is NONE else self.as_index(value, part.range)

    def as_index(self, value: Value, r: SourceRange) -> Value:
        """``value`` as an int operand: ints pass, bools and arrays are converted by
        ``prim::int`` (Python's ``__index__``), floats are refused."""
        if value.ty in (INT, ANY):
            return value
        if value.ty in (FLOAT, STR, NONE) or isinstance(value.ty, TupleType | ListType):
            raise ScriptError(f"an index must be an int, not {value.ty}", r, doc="indexing")
        return self.apply("prim::int", [value], r)

    def array_subscript(self, base: Value, items: Sequence[_Item], r: SourceRange) -> Value:
        if any(item.kind == "array" for item in items):
            current, operands = self.advanced_operands(base, items, r)
            return self.apply("aten::index", [current, *operands], r)
        current = self.basic_view(base, basic_steps(items))
        return self.whole_view(base, current, items, r)

    def basic_view(self, base: Value, steps: Sequence[tuple[_Item, int]]) -> Value:
        current = base
        for item, axis in steps:
            current = self.basic_item(current, item, axis)
        return current

    def whole_view(
        self, base: Value, current: Value, items: Sequence[_Item], r: SourceRange
    ) -> Value:
        """``x[:]`` (nothing applied, a slice among the items) is a view, not ``x`` itself."""
        if current is base and any(item.kind == "slice" for item in items):
            full = self.constant(None, NONE, r)
            axis_value = self.constant(0, INT, r)
            return self.apply("aten::slice", [base, axis_value, full, full, full], r)
        return current

    def basic_item(self, current: Value, item: _Item, axis: int) -> Value:
        """Apply one basic index item at ``axis`` (see `basic_steps`)."""
        r = item.range
        if item.kind == "int":
            assert item.value is not None
            position = self.constant(axis, INT, r)
            return self.apply("aten::select", [current, position, item.value], r)
        if item.kind == "newaxis":
            position = self.constant(axis, INT, r)
            return self.apply("aten::expand_dims", [current, position], r)
        if item.bounds is not None:
            position = self.constant(axis, INT, r)
            current = self.apply("aten::slice", [current, position, *item.bounds], r)
        return current

    def advanced_operands(
        self, base: Value, items: Sequence[_Item], r: SourceRange
    ) -> tuple[Value, list[Value]]:
        """The view the partial slices make and the items of ``aten::index`` on it: see Note
        [Lowering subscripts]."""
        for item in items:
            if item.kind in ("newaxis", "ellipsis"):
                raise ScriptError(
                    "None and '...' cannot be combined with array indices yet",
                    item.range,
                    doc="indexing",
                )
        current = base
        operands: list[Value] = []
        for axis, item in enumerate(items):
            if item.kind == "slice":
                if item.bounds is not None:
                    position = self.constant(axis, INT, item.range)
                    current = self.apply("aten::slice", [current, position, *item.bounds], r)
                operands.append(self.constant(None, NONE, item.range))
            else:
                assert item.value is not None
                operands.append(item.value)
        while operands and operands[-1].ty is NONE:  # x[i, :] is x[i]
            operands.pop().node.destroy()
        return current, operands

    # ---- writes (Note [Writes]) -------------------------------------------------------------

    def emit_subscript_store(self, target: syntax.Subscript, value: Value) -> None:
        """``target = value`` for a subscript target (the write located at the target)."""
        base = self.written_array(target)
        self.array_store(base, self.index_items(target.index), value, target.range)

    def emit_subscript_update(
        self, target: syntax.Subscript, op: str, operand: syntax.Expr, r: SourceRange
    ) -> None:
        """``target op= operand``: read, combine, write back, the index evaluated once."""
        base = self.written_array(target)
        items = self.index_items(target.index)
        current = self.array_subscript(base, items, target.range)
        updated = self.binary(op, current, self.emit_expr(operand), r)
        self.array_store(base, items, updated, r)

    def written_array(self, target: syntax.Subscript) -> Value:
        base = self.emit_expr(target.value)
        if isinstance(base.ty, TupleType | ListType):
            tree = self.tree_of(base)
            kind = "list" if isinstance(base.ty, ListType) else "tuple"
            kind = tree.kind_name if tree is not None else kind
            raise ScriptError(
                f"cannot assign into an element of a {kind}: lists and tuples are values here, "
                "build a new one",
                target.range,
                doc="lists-tuples-and-dicts",
            )
        if base.ty in (INT, FLOAT, BOOL, SCALAR, NONE, STR):
            raise ScriptError(
                f"a value of type {base.ty} cannot be subscripted",
                target.value.range,
                doc="indexing",
            )
        return base

    def array_store(
        self, base: Value, items: Sequence[_Item], value: Value, r: SourceRange
    ) -> None:
        if any(item.kind == "array" for item in items):
            current, operands = self.advanced_operands(base, items, r)
            self.apply("aten::index_put_", [current, value, *operands], r)
            return
        steps = basic_steps(items)
        if steps and steps[-1][0].kind == "int" and steps[-1][1] >= 0:
            (item, axis) = steps[-1]
            assert item.value is not None
            current = self.basic_view(base, steps[:-1])
            fulls = [self.constant(None, NONE, item.range) for _ in range(axis)]
            self.apply("aten::index_put_", [current, value, *fulls, item.value], r)
            return
        current = self.whole_view(base, self.basic_view(base, steps), items, r)
        self.copy_into(current, value, r)

    def copy_into(self, target: Value, value: Value, r: SourceRange) -> Value:
        """``aten::copy_(target, value)``, typed as ``target`` (its schema says Any, for the
        Python numbers it rebinds at run time)."""
        return self.insert("aten::copy_", [target, value], [target.ty], r).output


def basic_steps(items: Sequence[_Item]) -> list[tuple[_Item, int]]:
    """The basic items in the order they apply, each with the axis it applies at: a running
    output axis from 0 before the Ellipsis, and from -1 leftwards after it (an int removes its
    axis, so the next item applies at the same one)."""
    marker = next((i for i, item in enumerate(items) if item.kind == "ellipsis"), len(items))
    steps: list[tuple[_Item, int]] = []
    axis = 0
    for item in items[:marker]:
        steps.append((item, axis))
        axis += item.kind != "int"
    axis = -1
    for item in reversed(items[marker + 1 :]):
        steps.append((item, axis))
        axis -= item.kind != "int"
    return steps
