"""``lambda`` and nested ``def`` inside a scripted function, emitted where they are called.

Note [Local functions]
A ``lambda`` assigned to a name and a ``def`` inside the function compiled are functions known
while compiling: the name is bound to a `LocalFunction` (its parameters, its body, its
defaults evaluated where it is defined, as Python evaluates them), and each call emits the
body where the call is, in a scope of its own whose parent is the scope of the call: the
other names it reads are read as they are bound at the call, which is Python's late binding of a
closure's variables (``w = w + 1`` in a loop, then ``f()`` reads the new ``w``). Its ``return``s
are exits of that body alone (Note [Exits] in `frontend.exits`). It is not a value: passing it
to a function that is compiled separately, returning it or storing it is refused where it is
written. A recursive call is unrolled in place, depth-limited (Note [Recursion while compiling]
in `frontend.recursion`). ``act = np.tanh`` binds a function known while compiling the same
way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from frontend import syntax
from frontend.environment import LocalFunction
from frontend.errors import ScriptError
from frontend.expressions import ExpressionEmitter
from frontend.recursion import LOCAL_CALLS_LIMIT, RECURSION_LIMIT, too_deep
from frontend.signatures import python_signature
from ir.graph import Value
from ir.source import SourceRange


class LocalFunctionEmitter(ExpressionEmitter):
    """Defines and calls local functions for `frontend.emit.FunctionEmitter`."""

    active_locals: list[LocalFunction]
    recursive_local_calls: int  # how many calls of active_locals, unrolled in place
    # Provided by `frontend.emit.FunctionEmitter`: ``body`` emitted as a function's, with its
    # own exits; its result.
    emit_local_body: Callable[[Sequence[syntax.Stmt]], Value]
    # Provided by `frontend.signatures`: Note [Variadic parameters] there.
    bind_call: Callable[..., dict[str, Value]]  # `frontend.signatures`

    def define_local(
        self,
        name: str,
        params: Sequence[syntax.Param],
        body: Sequence[syntax.Stmt],
        r: SourceRange,
        decorators: Sequence[syntax.Expr],
    ) -> None:
        if decorators:
            raise ScriptError(
                "a decorated function inside a scripted one is not supported", r, doc="nested-def"
            )
        defaults = tuple(
            (param.name, self.emit_expr(param.default))
            for param in params
            if param.default is not None
        )
        self.scope.bind(name, LocalFunction(name, tuple(params), tuple(body), defaults, r))

    def emit_local_call(self, fn: LocalFunction, call: syntax.Call) -> Value:
        """The body of a ``lambda`` or nested ``def`` emitted at its call, its parameters
        bound to the arguments, other names read as they are bound here."""
        defaults = dict(fn.defaults)
        bound = self.bind_call(fn.name, python_signature(fn.params), call, defaults.__getitem__)
        return self.enter_local(fn, bound, call.range)

    def call_local_with_values(
        self,
        fn: LocalFunction,
        positional: Sequence[Value],
        keywords: dict[str, Value],
        r: SourceRange,
    ) -> Value:
        """`emit_local_call` with the arguments emitted (a partial of a local function)."""
        names = [p.name for p in fn.params]
        if len(positional) > len(names):
            raise ScriptError(
                f"{fn.name}() takes {len(names)} positional arguments but {len(positional)} "
                "were given",
                r,
                doc="nested-def",
            )
        bound: dict[str, Value] = dict(fn.defaults)
        given = dict(zip(names, positional, strict=False))
        for name, value in keywords.items():
            if name not in names:
                raise ScriptError(
                    f"{fn.name}() got an unexpected keyword argument '{name}'", r, doc="nested-def"
                )
            if name in given:
                raise ScriptError(
                    f"{fn.name}() got multiple values for argument '{name}'", r, doc="nested-def"
                )
            given[name] = value
        bound.update(given)
        missing = [name for name in names if name not in bound]
        if missing:
            raise ScriptError(
                f"{fn.name}() missing arguments: {', '.join(missing)}", r, doc="nested-def"
            )
        return self.enter_local(fn, {name: bound[name] for name in names}, r)

    def enter_local(self, fn: LocalFunction, bound: dict[str, Value], r: SourceRange) -> Value:
        """``fn``'s body emitted with its parameters bound, recursion limited (Note
        [Recursion while compiling] in frontend.recursion)."""
        if fn in self.active_locals:
            self.recursive_local_calls += 1
            if self.active_locals.count(fn) >= RECURSION_LIMIT:
                raise too_deep(fn.name, r, "nested-def")
            if self.recursive_local_calls > LOCAL_CALLS_LIMIT:
                raise ScriptError(
                    f"recursion of '{fn.name}' unrolls into more than {LOCAL_CALLS_LIMIT} calls "
                    "while compiling: define it with def at module level, where each value of "
                    "its arguments is compiled once, or write a loop",
                    r,
                    doc="nested-def",
                )
        self.active_locals.append(fn)
        try:
            with self.nested_scope():
                for name, value in bound.items():
                    self.scope.bind(name, value)
                result = self.emit_local_body([*fn.body, syntax.Return(None, range=fn.range)])
        finally:
            self.active_locals.pop()
        return result
