"""``raise`` and ``assert`` as checks the compiled code makes when it runs.

Note [Run-time checks]
``raise ValueError(message)`` and ``assert test, message`` are checks the compiled code makes
when it runs, in program order: ``prim::RaiseException(kind, message)``, impure like
prim::Print, under a prim::If on the test for an ``assert`` (one decided while compiling is
either nothing or a plain raise). The executor raises the exception the program names, as a
class that is both it and an AutodiffError, located at the statement (`ir.errors.
located_user_exception`): ``except ValueError`` catches it and it prints with a caret. A raise
ends its path: what follows it in its block is not emitted, an exit it stands for (Note [Exits]
in `frontend.exits`) gives placeholders of type Nothing (prim::Uninitialized, never read), and
after an ``if`` one of whose branches raises, the names the other branch binds are bound.
Python's built-in exceptions only; asserts are checked as under plain ``python``.
"""

from __future__ import annotations

import builtins

from frontend import syntax
from frontend.environment import PyObject, Scope
from frontend.errors import ScriptError
from frontend.expressions import ExpressionEmitter
from ir.graph import Node, Value
from ir.source import SourceRange
from ir.types import NONE, NOTHING, STR


class CheckEmitter(ExpressionEmitter):
    """Emits run-time checks for `frontend.emit.FunctionEmitter`."""

    def emit_check(self, stmt: syntax.Stmt) -> bool:
        """Emit a ``raise`` or an ``assert``; True when it always raises (what follows it in
        its block cannot run)."""
        if isinstance(stmt, syntax.Raise):
            self.emit_raise(stmt)
            return True
        if not isinstance(stmt, syntax.Assert):
            return False
        holds = self.condition(stmt.test)
        if holds is True:
            return False
        if holds is False:
            self.raise_exception("AssertionError", stmt.msg, stmt.range)
            return True
        node = self.insert("prim::If", [holds], [], stmt.range, blocks=2)
        with self.graph.inserting_at_end(node.blocks[1]), self.nested_scope():
            self.raise_exception("AssertionError", stmt.msg, stmt.range)
        return False

    def emit_raise(self, stmt: syntax.Raise) -> None:
        exc = stmt.exc
        if exc is None:
            raise ScriptError(
                "a bare 'raise' has no exception to raise here", stmt.range, doc="raise-and-assert"
            )
        call = exc if isinstance(exc, syntax.Call) else None
        target = self.resolve(call.func if call is not None else exc)
        cls = target.obj if isinstance(target, PyObject) else None
        name = getattr(cls, "__name__", "")
        if not (isinstance(cls, type) and issubclass(cls, Exception)) or (
            getattr(builtins, name, None) is not cls
        ):
            raise ScriptError(
                "a scripted function raises Python's own exceptions (ValueError, TypeError, "
                "RuntimeError, ...)",
                exc.range,
                doc="raise-and-assert",
            )
        message: syntax.Expr | None = None
        if call is not None:
            if call.keywords or len(call.args) > 1:
                raise ScriptError(
                    f"{name}() takes one message here", call.range, doc="raise-and-assert"
                )
            message = call.args[0] if call.args else None
        self.raise_exception(name, message, stmt.range)

    def raise_exception(self, kind: str, message: syntax.Expr | None, r: SourceRange) -> None:
        """``prim::RaiseException(kind, message)`` where the insertion point is."""
        text = self.constant(None, NONE, r)
        if message is not None:
            text = self.emit_expr(message)
            if text.ty != STR:  # Python's str() of the message, at run time
                template = self.constant("{}", STR, r)
                text = self.insert("prim::Format", [template, text], [STR], r).output
        kind_value = self.constant(kind, STR, r)
        self.insert("prim::RaiseException", [kind_value, text], [], r)

    def merge_around_raise(self, node: Node, then: Scope, orelse: Scope, r: SourceRange) -> None:
        """After an ``if`` one of whose branches raises: the names the other one binds, as
        outputs of the If (the raising branch gives placeholders that are never read)."""
        if then.raises and orelse.raises:
            self.scope.raises = True
            return
        index = 1 if then.raises else 0
        kept = (then, orelse)[index]
        for name, binding in kept.names.items():
            if not isinstance(binding, Value):
                self.scope.bind(name, binding)
                continue
            node.blocks[index].register_output(binding)
            block = node.blocks[1 - index]
            with self.graph.inserting_at_end(block):
                placeholder = self.insert("prim::Uninitialized", [], [NOTHING], r)
            block.register_output(placeholder.output)
            self.scope.bind(name, node.add_output(binding.ty, name))
