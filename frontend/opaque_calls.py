"""Calls of opaque Python from compiled code: one node that runs what the compiler never reads.

Note [Opaque calls]
An object that exposes ``__autodiff_opaque__`` (what ``ad.custom_vjp`` returns, and
``ad.pure_callback``) is called as one node: the frontend emits its arguments (a container
as the tuple holding it, with its `Tree`), asks the object for the node's operator, its
key and its result's type with ``__autodiff_opaque__(static, types, range)``, and inserts
``%y = kind(%fn, args...)`` where ``%fn`` is the key, a constant string naming the function
(Note in `ir.ops.opaque`). The object's first ``__autodiff_static__`` arguments are no
operands but Python objects known while compiling, passed as ``static`` (``pure_callback``'s
callback and result shape): each must be a name or attribute the function can see. The
object is found by identity wherever it is called from (a global, a closure, an attribute),
as NumPy's and SciPy's functions are. The frontend knows nothing else of it.
"""

from __future__ import annotations

from frontend import syntax
from frontend.environment import PyObject
from frontend.errors import ScriptError
from frontend.expressions import ExpressionEmitter
from frontend.trees import Tree, ir_type_of
from ir.errors import AutodiffError
from ir.graph import Value
from ir.types import STR, Type


class OpaqueCallEmitter(ExpressionEmitter):
    def emit_opaque_call(self, obj: object, call: syntax.Call) -> Value:
        """One node calling ``obj`` (Note [Opaque calls])."""
        name = getattr(obj, "__name__", type(obj).__name__)
        if call.keywords:
            raise ScriptError(
                f"{name}() called from scripted code takes positional arguments only",
                call.keywords[0].range,
                doc="opaque-calls",
            )
        count = int(getattr(obj, "__autodiff_static__", 0))
        if len(call.args) < count:
            raise ScriptError(
                f"{name}() takes at least {count} arguments", call.range, doc="opaque-calls"
            )
        static = [self._static_argument(name, expr) for expr in call.args[:count]]
        args = [self.emit_expr(expr) for expr in call.args[count:]]
        types: list[Type] = [self.type_of(arg) for arg in args]
        try:
            kind, key, result = obj.__autodiff_opaque__(static, types, call.range)  # type: ignore[attr-defined]
        except AutodiffError as error:
            if error.source_range is None:
                error.source_range = call.range
            raise
        fn = self.constant(key, STR, call.range).set_name("fn")
        node = self.insert(kind, [fn, *args], [ir_type_of(result)], call.range)
        if isinstance(result, Tree):
            self.trees[node.output] = result
        return node.output

    def _static_argument(self, name: str, expr: syntax.Expr) -> object:
        found = self.resolve(expr) if isinstance(expr, syntax.Name | syntax.Attribute) else None
        if not isinstance(found, PyObject):
            raise ScriptError(
                f"this argument of {name}() is a Python object known while compiling: name a "
                "function or a global (a result shape) here",
                expr.range,
                doc="opaque-calls",
            )
        return found.obj
