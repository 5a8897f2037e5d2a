"""What ends a path through a block being emitted: a function's ``return``, a loop body's
``break``, ``continue`` and end.

Note [Exits]
``return``, ``break`` and ``continue`` end a path through a block. Each kind of block has one
exit shape: a function's is its return value (a graph has one output; ``return a, b`` returns a
tuple, a function that falls off its end returns None); a loop body's is (continue?, carried
values...), where ``continue`` and the end of the body give ``True`` (a ``while`` loop's test,
evaluated again) and ``break`` gives ``False``. A block is emitted as a statement list that
always ends in an exit (an implicit ``return None`` or ``continue`` is appended). When an ``if``
contains an exit, the statements after it are emitted into both of its branches (a branch that
exits on every path stops before them), so each branch ends in an exit and the If's outputs are
the exit values (TorchScript's exit transform, done by copying the rest rather than with flags).
A ``return`` inside a loop is refused.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from frontend import syntax
from frontend.errors import ScriptError
from frontend.expressions import ExpressionEmitter
from ir.graph import Value
from ir.source import SourceRange
from ir.types import BOOL, NONE, NOTHING, TupleType, Type, join_types


class Exit(ABC):
    """What ends a path in the block being emitted. See Note [Exits]."""

    def __init__(self, emitter: ExpressionEmitter) -> None:
        self.emitter = emitter

    @abstractmethod
    def values(self, stmt: syntax.Stmt) -> list[Value]:
        """The exit values ``stmt`` (a return, break or continue) gives."""

    @abstractmethod
    def hints(self) -> list[str | None]:
        """A name for each exit value (the loop-carried name), or None."""

    def unreachable(self, r: SourceRange) -> list[Value]:
        """Exit values for a path that raises: placeholders of type Nothing, never read, which
        join to the other paths' types."""
        return [
            self.emitter.insert("prim::Uninitialized", [], [NOTHING], r).output
            for _ in self.hints()
        ]

    def join(self, a: Type, b: Type, r: SourceRange) -> Type:
        return join_types(a, b)


class FunctionExit(Exit):
    def values(self, stmt: syntax.Stmt) -> list[Value]:
        if isinstance(stmt, syntax.Break | syntax.Continue):
            word = "break" if isinstance(stmt, syntax.Break) else "continue"
            raise ScriptError(f"'{word}' outside a loop", stmt.range, doc="loops")
        assert isinstance(stmt, syntax.Return)
        if stmt.value is None:
            return [self.emitter.constant(None, NONE, stmt.range)]
        return [self.emitter.emit_expr(stmt.value)]

    def hints(self) -> list[str | None]:
        return [None]

    def join(self, a: Type, b: Type, r: SourceRange) -> Type:
        if isinstance(a, TupleType) and isinstance(b, TupleType) and len(a.elems) != len(b.elems):
            raise ScriptError(
                f"the branches return tuples of different lengths ({len(a.elems)} and "
                f"{len(b.elems)})",
                r,
                doc="branches",
            )
        return join_types(a, b)


class LoopExit(Exit):
    def __init__(
        self, emitter: ExpressionEmitter, carried: list[str], test: syntax.Expr | None
    ) -> None:
        super().__init__(emitter)
        self.carried = carried
        self.test = test

    def values(self, stmt: syntax.Stmt) -> list[Value]:
        emitter = self.emitter
        if isinstance(stmt, syntax.Return):
            raise ScriptError("'return' inside a loop is not supported", stmt.range, doc="loops")
        if isinstance(stmt, syntax.Break):
            go_on: Value = emitter.constant(False, BOOL, stmt.range)
        elif self.test is None:
            go_on = emitter.constant(True, BOOL, stmt.range)
        else:
            cond = emitter.condition(self.test)
            go_on = (
                emitter.constant(cond, BOOL, self.test.range) if isinstance(cond, bool) else cond
            )
        values = [go_on]
        for name in self.carried:
            value = emitter.scope.lookup(name)
            if not isinstance(value, Value):
                raise ScriptError(f"'{name}' is not defined on every path", stmt.range, doc="loops")
            values.append(value)
        return values

    def hints(self) -> list[str | None]:
        return [None, *self.carried]
