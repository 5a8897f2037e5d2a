"""Subscript reads: ``x[...]`` on arrays lowered as Note [Lowering subscripts] in
`ir.ops.indexing` says, and ``t[i]`` / ``t[a:b]`` on tuples.

Every index item is evaluated first, left to right, as Python does. A full slice ``:`` emits
nothing (it only moves to the next axis), except that ``x[:]`` alone is one ``aten::slice`` so
it stays a view as in NumPy. A tuple value used as an index is refused: NumPy would read it as
one index per axis, which only a literal ``x[i, j]`` spells here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from frontend import syntax
from frontend.errors import ScriptError
from frontend.expressions import ExpressionEmitter
from frontend.lists import builds_list
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
        base = self.emit_expr(expr.value)
        if isinstance(base.ty, TupleType | ListType):
            return self.sequence_subscript(base, expr.index, expr.range)
        if base.ty in (INT, FLOAT, BOOL, SCALAR, NONE, STR):
            raise ScriptError(f"a value of type {base.ty} cannot be subscripted", expr.value.range)
        return self.array_subscript(base, self.index_items(expr.index), expr.range)

    # ---- tuples -----------------------------------------------------------------------------

    def sequence_subscript(self, base: Value, index: syntax.Expr, r: SourceRange) -> Value:
        if isinstance(index, syntax.Slice):
            bounds = [
                self.slice_bound(b, index.range) for b in (index.lower, index.upper, index.step)
            ]
            return self.apply("prim::TupleSlice", [base, *bounds], r)
        if isinstance(index, syntax.Tuple) or (
            isinstance(index, syntax.Constant) and index.value is Ellipsis
        ):
            raise ScriptError(f"a {base.ty} takes a single int or slice index", index.range)
        position = self.as_index(self.emit_expr(index), index.range)
        kind = "prim::ListIndex" if builds_list(base) else "prim::TupleIndex"
        return self.apply(kind, [base, position], r)

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
                items.append(self.value_item(self.emit_expr(expr), r))
        if sum(item.kind == "ellipsis" for item in items) > 1:
            raise ScriptError("an index can only have a single ellipsis ('...')", index.range)
        return items

    def value_item(self, value: Value, r: SourceRange) -> _Item:
        ty = value.ty
        if ty is NONE:
            return _Item("newaxis", r)
        if ty in (INT, SCALAR):
            return _Item("int", r, value=self.as_index(value, r))
        if ty is BOOL:
            raise ScriptError("a bool index is not supported (NumPy reads it as a mask)", r)
        if isinstance(ty, TupleType):
            raise ScriptError(
                "a tuple value cannot be an index: write the items out, as in x[i, j]", r
            )
        if ty in (FLOAT, STR):
            raise ScriptError(f"an index must be an int, a slice or an array, not {ty}", r)
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
            raise ScriptError(f"an index must be an int, not {value.ty}", r)
        return self.apply("prim::int", [value], r)

    def array_subscript(self, base: Value, items: Sequence[_Item], r: SourceRange) -> Value:
        if any(item.kind == "array" for item in items):
            return self.advanced_subscript(base, items, r)
        marker = next((i for i, item in enumerate(items) if item.kind == "ellipsis"), len(items))
        current = base
        axis = 0
        for item in items[:marker]:
            current, axis = self.basic_item(current, item, axis, 1)
        axis = -1
        for item in reversed(items[marker + 1 :]):
            current, axis = self.basic_item(current, item, axis, -1)
        if current is base and any(item.kind == "slice" for item in items):
            full = self.constant(None, NONE, r)
            axis_value = self.constant(0, INT, r)
            return self.apply("aten::slice", [base, axis_value, full, full, full], r)
        return current

    def basic_item(
        self, current: Value, item: _Item, axis: int, direction: int
    ) -> tuple[Value, int]:
        """Apply one basic index item at ``axis``; returns the result and the next axis (axes
        after an ellipsis count from the end, ``direction`` -1)."""
        r = item.range
        if item.kind == "int":
            assert item.value is not None
            position = self.constant(axis, INT, r)
            return self.apply("aten::select", [current, position, item.value], r), axis
        if item.kind == "newaxis":
            position = self.constant(axis, INT, r)
            return self.apply("aten::expand_dims", [current, position], r), axis + direction
        if item.bounds is not None:
            position = self.constant(axis, INT, r)
            current = self.apply("aten::slice", [current, position, *item.bounds], r)
        return current, axis + direction

    def advanced_subscript(self, base: Value, items: Sequence[_Item], r: SourceRange) -> Value:
        """One ``aten::index`` after the partial slices: see Note [Lowering subscripts]."""
        for item in items:
            if item.kind in ("newaxis", "ellipsis"):
                raise ScriptError(
                    "None and '...' cannot be combined with array indices yet", item.range
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
        return self.apply("aten::index", [current, *operands], r)
