"""``lambda`` and nested ``def`` inside a scripted function, emitted where they are called.

Note [Local functions]
A ``lambda`` assigned to a name and a ``def`` inside the function compiled are functions known
while compiling: the name is bound to a `LocalFunction` (its parameters, its body, its
defaults evaluated where it is defined, as Python evaluates them), and each call emits the
body where the call is, in a scope of its own whose parent is the scope of the call: the
other names it reads are read as they are bound at the call, which is Python's late binding
of a closure's variables (``w = w + 1`` in a loop, then ``f()`` reads the new ``w``). Its
``return``s are exits of that body alone (Note [Exits]). It is not a value: passing it to a
function that is compiled separately, returning it or storing it is refused where it is
written; a recursive call is refused too. ``act = np.tanh`` binds a function known while
compiling the same way.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence

from frontend import syntax
from frontend.environment import LocalFunction
from frontend.errors import ScriptError
from frontend.expressions import ExpressionEmitter
from frontend.signatures import python_signature
from ir.graph import Value
from ir.source import SourceRange


class LocalFunctionEmitter(ExpressionEmitter):
    """Defines and calls local functions for `frontend.emit.FunctionEmitter`."""

    active_locals: list[LocalFunction]
    # Provided by `frontend.emit.FunctionEmitter`: ``body`` emitted as a function's, with its
    # own exits; its result.
    emit_local_body: Callable[[Sequence[syntax.Stmt]], Value]
    # Provided by `frontend.signatures`: Note [Variadic parameters] there.
    bind_call: Callable[
        [str, inspect.Signature, syntax.Call, Callable[[str], Value]], dict[str, Value]
    ]

    def define_local(
        self,
        name: str,
        params: Sequence[syntax.Param],
        body: Sequence[syntax.Stmt],
        r: SourceRange,
        decorators: Sequence[syntax.Expr],
    ) -> None:
        if decorators:
            raise ScriptError("a decorated function inside a scripted one is not supported", r)
        defaults = tuple(
            (param.name, self.emit_expr(param.default))
            for param in params
            if param.default is not None
        )
        self.scope.bind(name, LocalFunction(name, tuple(params), tuple(body), defaults, r))

    def emit_local_call(self, fn: LocalFunction, call: syntax.Call) -> Value:
        """The body of a ``lambda`` or nested ``def`` emitted at its call, its parameters
        bound to the arguments, other names read as they are bound here."""
        r = call.range
        if fn in self.active_locals:
            raise ScriptError(f"recursive call to '{fn.name}' is not supported", r)
        defaults = dict(fn.defaults)
        bound = self.bind_call(fn.name, python_signature(fn.params), call, defaults.__getitem__)
        self.active_locals.append(fn)
        try:
            with self.nested_scope():
                for name, value in bound.items():
                    self.scope.bind(name, value)
                result = self.emit_local_body([*fn.body, syntax.Return(None, range=fn.range)])
        finally:
            self.active_locals.pop()
        return result
