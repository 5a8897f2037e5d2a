"""``for a, b in zip(x, y)`` and ``for i, (a, b) in enumerate(zip(x, y))`` over arrays.

Note [Zip over arrays]
``zip`` of arrays goes through their first axes together, as ``for row in x`` goes through
one (`emit_row_loop` in `frontend.emit`): a prim::Loop whose trip count is the shortest
length, as Python's zip stops at the shortest, each item read as ``x[i]`` in the body, so
that the IR does not grow with the data. The arrays are those the loop starts with, as the
iterators hold them. ``zip`` of an array and a list or tuple known while compiling is
refused: unrolled over the list, it would read rows the array may not have (Python stops at
the shorter); ``strict=True`` is refused for arrays, whose lengths are known only at run time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from frontend import syntax
from frontend.errors import ScriptError
from frontend.expressions import constant_value
from frontend.subscripts import SubscriptEmitter
from ir.graph import Value
from ir.source import SourceRange
from ir.types import BOOL, INT, TensorType

_Loop = Callable[
    [
        Sequence[syntax.Stmt],
        Value,
        Value,
        "syntax.Expr | None",
        "Callable[[Value], None] | None",
        "syntax.For | syntax.While",
    ],
    None,
]


class ZipLoopEmitter(SubscriptEmitter):
    """Loops over arrays zipped together, for `frontend.emit.FunctionEmitter`."""

    # Provided by `frontend.emit`, `frontend.iteration` and `frontend.subscripts`.
    emit_loop: _Loop
    assign: Callable[[syntax.Expr, Value, SourceRange], None]
    iteration_builtin: Callable[[syntax.Call], str | None]

    def emit_array_zip(self, stmt: syntax.For, call: syntax.Call) -> bool:
        """Emit ``stmt`` as a loop over zipped arrays when its iterable is ``zip`` (or
        ``enumerate`` of ``zip``) of arrays; False, emitting nothing, when it is not."""
        start = 0
        zipped = call
        if self.iteration_builtin(call) == "enumerate" and len(call.args) >= 1:
            inner = call.args[0]
            if not isinstance(inner, syntax.Call) or self.iteration_builtin(inner) != "zip":
                return False
            if not self.names_an_array(inner.args):
                return False
            start = self.enumerate_start(call)
            zipped = inner
        elif self.iteration_builtin(call) != "zip" or not self.names_an_array(call.args):
            return False
        r = zipped.range
        for keyword in zipped.keywords:
            strict = keyword.name == "strict" and self.emit_expr(keyword.value)
            if not strict or constant_value(strict) is not False:
                raise ScriptError(
                    "zip() of arrays takes strict=False at most: their lengths are known only "
                    "at run time, so strict=True cannot be checked while compiling",
                    keyword.range,
                    doc="loops",
                )
        arrays = [self.emit_expr(arg) for arg in zipped.args]
        for arg, array in zip(zipped.args, arrays, strict=True):
            if not isinstance(array.ty, TensorType):
                raise ScriptError(
                    f"zip() of an array and a {array.ty}: a loop over arrays goes through their "
                    "rows at run time, a list or tuple is gone through while compiling; index "
                    "one by the other (for i, item in enumerate(items): ... x[i] ...)",
                    arg.range,
                    doc="loops",
                )
            if array.ty.shape == ():
                raise ScriptError("TypeError: iteration over a 0-d array", arg.range, doc="loops")
        count = self.apply("prim::len", [arrays[0]], r)
        for array in arrays[1:]:
            count = self.apply("prim::min", [count, self.apply("prim::len", [array], r)], r)
        numbered = zipped is not call

        def bind_target(index: Value) -> None:
            items = [self.value_item(index, r)]
            rows = self.make_tuple([self.array_subscript(a, items, r) for a in arrays], r)
            if numbered:
                number = index
                if start != 0:
                    number = self.apply("prim::add", [index, self.constant(start, INT, r)], r)
                rows = self.make_tuple([number, rows], r)
            self.assign(stmt.target, rows, stmt.target.range)

        self.emit_loop(stmt.body, count, self.constant(True, BOOL, r), None, bind_target, stmt)
        return True

    def names_an_array(self, args: Sequence[syntax.Expr]) -> bool:
        """Whether one of ``args`` is a name bound to an array (read without emitting)."""
        for arg in args:
            base = arg
            while isinstance(base, syntax.Attribute | syntax.Subscript):
                base = base.value
            if isinstance(base, syntax.Name):
                found = self.resolve(base)
                if isinstance(found, Value) and isinstance(found.ty, TensorType):
                    return True
        return False

    def enumerate_start(self, call: syntax.Call) -> int:
        given = [*call.args[1:], *(k.value for k in call.keywords)]
        if len(given) > 1 or any(k.name != "start" for k in call.keywords):
            raise ScriptError(
                "enumerate() takes an iterable and a start here", call.range, doc="loops"
            )
        if not given:
            return 0
        found = constant_value(self.emit_expr(given[0]))
        if type(found) is not int:
            raise ScriptError(
                "enumerate()'s start must be an int constant", given[0].range, doc="loops"
            )
        return found
