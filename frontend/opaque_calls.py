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
as NumPy's and SciPy's functions are. An object with ``__autodiff_signature__`` (an
`inspect.Signature`) is called as Python binds that signature: keywords and defaults fill its
parameters in order, the first ``__autodiff_static__`` of them static, and the node's operands
are the others, every one present (a default as a constant). A library function may have such
an object stand in for it (`STAND_INS`: ``scipy.integrate.odeint`` and ``solve_ivp`` are
differentiable so, Note [Odeint adjoint] in `autodiff.odeint`), found by identity under any
alias once user code has imported its module, as Note [SciPy spellings] in `frontend.resolve`
finds SciPy's. The frontend knows nothing else of it.
"""

from __future__ import annotations

import inspect
import sys

from frontend import syntax
from frontend.environment import PyObject
from frontend.errors import ScriptError
from frontend.expressions import ExpressionEmitter
from frontend.trees import Tree, ir_type_of
from ir.errors import AutodiffError
from ir.graph import Value
from ir.types import STR, Type

STAND_INS: dict[str, object] = {}
"""A library function's dotted name (``scipy.integrate.odeint``) -> the object exposing
``__autodiff_opaque__`` that compiled code calls instead (Note [Opaque calls]); `autodiff`
fills it."""


def stand_in(obj: object) -> object | None:
    """What compiled code calls for the library function ``obj``, if anything stands in for it."""
    for name, found in STAND_INS.items():
        module, _, attribute = name.rpartition(".")
        loaded = sys.modules.get(module)
        if loaded is not None and getattr(loaded, attribute, None) is obj:
            return found
    return None


class OpaqueCallEmitter(ExpressionEmitter):
    def emit_opaque_call(self, obj: object, call: syntax.Call) -> Value:
        """One node calling ``obj`` (Note [Opaque calls])."""
        name = getattr(obj, "__name__", type(obj).__name__)
        signature = getattr(obj, "__autodiff_signature__", None)
        if isinstance(signature, inspect.Signature):
            static, args = self._bind_opaque(obj, name, signature, call)
            return self._opaque_node(obj, static, args, call)
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
        return self._opaque_node(obj, static, args, call)

    def _opaque_node(
        self, obj: object, static: list[object], args: list[Value], call: syntax.Call
    ) -> Value:
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

    def _bind_opaque(
        self, obj: object, name: str, signature: inspect.Signature, call: syntax.Call
    ) -> tuple[list[object], list[Value]]:
        """The static arguments and the operands of a call of ``obj``, bound to ``signature``."""
        parameters = list(signature.parameters.values())
        for keyword in call.keywords:
            found = signature.parameters.get(keyword.name)
            if found is None or found.kind is found.POSITIONAL_ONLY:
                named = ", ".join(p.name for p in parameters)
                raise ScriptError(
                    f"{name}() called from scripted code takes {named}: "
                    f"'{keyword.name}' is not supported",
                    keyword.range,
                    doc="opaque-calls",
                )
        try:
            bound = signature.bind(*call.args, **{k.name: k.value for k in call.keywords})
        except TypeError as error:
            raise ScriptError(f"{name}(): {error}", call.range, doc="opaque-calls") from None
        count = int(getattr(obj, "__autodiff_static__", 0))
        static: list[object] = []
        args: list[Value] = []
        for index, parameter in enumerate(parameters):
            expr = bound.arguments.get(parameter.name)
            if index < count:
                assert expr is not None, f"{name}'s static parameters have no defaults"
                static.append(self._static_argument(name, expr))
            elif expr is not None:
                args.append(self.emit_expr(expr))
            elif parameter.default == ():
                args.append(self.make_tuple([], call.range))
            else:
                value = self.python_constant(parameter.default, call.range)
                assert value is not None, f"{name}'s default for {parameter.name}"
                args.append(value)
        return static, args

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
