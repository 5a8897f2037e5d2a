"""Calls of bound methods and of ``functools.partial`` objects in scripted code, and partials
made inside it (Note [Reading objects from outside] in `frontend.objects`).

``m.apply(w)`` calls ``M.apply`` with ``self`` known while compiling (a `KnownObject` argument, no
graph input), so ``self.W`` is read through ``m`` at each call; a global ``P =
functools.partial(loss, x=X)`` called as ``P(w)`` calls ``loss`` with the values ``P`` fixes
known the same way (``P.keywords['x']``, an array, read at each call). ``g =
functools.partial(f, s=3.0)`` inside the function binds ``g`` to a `LocalPartial` of values
emitted there, as Python evaluates a partial's arguments where it is made; ``g(x)`` then calls
``f`` with those values first, as a local function is called (Note [Local functions] in
`frontend.local_functions`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from types import FunctionType, MethodType

from frontend import syntax
from frontend.environment import LocalFunction, PyObject
from frontend.errors import ScriptError
from frontend.expressions import ExpressionEmitter
from frontend.objects import KnownObject, LocalPartial, unwrap_callable
from ir.graph import Value
from ir.source import SourceRange

Argument = Value | KnownObject


class BoundCallEmitter(ExpressionEmitter):
    """Calls of methods and partials for `frontend.emit.FunctionEmitter`."""

    # Provided by `frontend.calls.CallEmitter` and `frontend.local_functions`.
    call_with_values: Callable[
        [FunctionType, Sequence[Argument], Mapping[str, Argument], SourceRange], Value
    ]
    call_local_with_values: Callable[
        [LocalFunction, Sequence[Value], dict[str, Value], SourceRange], Value
    ]

    def emit_bound_call(self, target: PyObject, call: syntax.Call) -> Value:
        obj = target.obj
        if obj is functools.partial:
            raise ScriptError(
                "functools.partial(...) makes a function: assign it to a name "
                "(g = functools.partial(f, ...)), then call g",
                call.range,
                doc="partial-and-methods",
            )
        positional = [self.emit_expr(arg) for arg in call.args]
        keywords = {k.name: self.emit_expr(k.value) for k in call.keywords}
        return self.call_bound(obj, positional, keywords, call.range)

    def call_bound(
        self,
        obj: object,
        positional: Sequence[Argument],
        keywords: Mapping[str, Argument],
        r: SourceRange,
    ) -> Value:
        """``obj(*positional, **keywords)`` for a function, method, partial or local one."""
        if isinstance(obj, LocalPartial):
            merged = {**dict(obj.keywords), **keywords}
            return self.call_bound(obj.func, [*obj.args, *positional], merged, r)
        if isinstance(obj, PyObject):
            obj = obj.obj
        if isinstance(obj, LocalFunction):
            if any(isinstance(a, KnownObject) for a in [*positional, *keywords.values()]):
                raise ScriptError(
                    f"'{obj.name}' cannot be given a bound object here",
                    r,
                    doc="partial-and-methods",
                )
            values = [a for a in positional if isinstance(a, Value)]
            named = {k: v for k, v in keywords.items() if isinstance(v, Value)}
            return self.call_local_with_values(obj, values, named, r)
        if isinstance(obj, MethodType | functools.partial | FunctionType):
            fn, prefix, fixed = unwrap_callable(obj, r)
            return self.call_with_values(fn, [*prefix, *positional], {**fixed, **keywords}, r)
        name = getattr(obj, "__qualname__", None) or type(obj).__name__
        raise ScriptError(
            f"a partial of '{name}' cannot be called from a scripted function: make partials "
            "of Python functions, methods, lambdas or local functions",
            r,
            doc="partial-and-methods",
        )

    def make_partial(self, call: syntax.Call) -> LocalPartial:
        """``functools.partial(f, *args, **keywords)`` made here: ``f`` resolved while
        compiling, the other arguments emitted now."""
        if not call.args:
            raise ScriptError(
                "functools.partial() needs the function it fixes arguments of",
                call.range,
                doc="partial-and-methods",
            )
        first = call.args[0]
        if isinstance(first, syntax.Lambda):  # functools.partial(lambda a, b: ..., x)
            body = (syntax.Return(first.body, range=first.body.range),)
            local = LocalFunction("<lambda>", tuple(first.params), body, (), first.range)
            args = tuple(self.emit_expr(arg) for arg in call.args[1:])
            keywords = tuple((k.name, self.emit_expr(k.value)) for k in call.keywords)
            return LocalPartial(local, args, keywords)
        func = self.resolve(first)
        if isinstance(func, Value):
            raise ScriptError(
                "the first argument of functools.partial must be a function known while "
                "compiling (a def, a lambda, a method), not a value",
                first.range,
                doc="partial-and-methods",
            )
        args = tuple(self.emit_expr(arg) for arg in call.args[1:])
        keywords = tuple((k.name, self.emit_expr(k.value)) for k in call.keywords)
        inner = func.obj if isinstance(func.obj, LocalPartial | LocalFunction) else func
        return LocalPartial(inner, args, keywords)

    def is_partial_call(self, expr: syntax.Expr) -> bool:
        """Whether ``expr`` is ``functools.partial(...)`` (however the name is imported)."""
        if not isinstance(expr, syntax.Call):
            return False
        func = expr.func
        if not isinstance(func, syntax.Name | syntax.Attribute):
            return False
        try:
            found = self.resolve(func)
        except ScriptError:
            return False
        return isinstance(found, PyObject) and found.obj is functools.partial
