"""Calls of Python functions from compiled code: a function compiled as a callee
(``prim::CallFunction``, inlined later), with its defaults, a method's or a partial's bound
values, the caller's hidden inputs for the arrays it reads from outside; and a gradient
function's graph inlined where it is called.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping, Sequence
from types import BuiltinFunctionType, FunctionType, MethodType
from typing import cast

import numpy as np

from frontend import syntax
from frontend.calls import CallHook
from frontend.environment import PyObject
from frontend.errors import ScriptError
from frontend.expressions import ExpressionEmitter
from frontend.objects import FreeVariable, KnownObject
from frontend.recursion import known_type
from frontend.resolve import constant_of
from frontend.trees import Tree, ir_type_of
from ir.errors import AutodiffError
from ir.graph import Graph, Value
from ir.source import SourceRange
from ir.types import Type


class FunctionCallEmitter(ExpressionEmitter):
    call_hook: CallHook
    callees: dict[str, Callable[..., object]]
    # The caller's own hidden inputs for the free variables of a callee compiled under this
    # key, passed after its parameters (Note [Free variables] in `frontend.compile`).
    hidden_arguments: Callable[[str], list[Value]]
    # Whether the callee compiled under this key returns a list it built (`builds_list`).
    returns_list: Callable[[str], bool]
    # Provided by `frontend.signatures`: Note [Variadic parameters] there.
    bind_call: Callable[..., dict[str, Value]]

    # ---- calls to Python functions ----------------------------------------------------------

    # Note [Calling compiled functions]
    # What ``ad.script`` returns exposes the plain function it compiled as
    # ``__autodiff_source__``: a call to it is a call to that function, compiled as any callee.
    # What ``ad.grad`` and ``ad.value_and_grad`` return has no source of its own; it exposes
    # ``__autodiff_graph__(argument_types) -> Graph``, the graph of its result for arguments of
    # those types (Note [Gradient graphs] in `autodiff.higher_order`), and a call to it is that
    # graph inlined at the call site, its parameters bound to the call's arguments. The graph
    # holds differentiable operators only, so the caller can be differentiated in turn: this is
    # how ``np.sum(g(x) * v)`` with ``g = ad.grad(f)`` gives a Hessian-vector product.

    def emit_graph_call(
        self, graph_of: Callable[[Sequence[Type]], Graph], call: syntax.Call
    ) -> Value:
        """The graph ``graph_of`` builds for the arguments' types, inlined here."""
        if call.keywords:
            raise ScriptError(
                "a gradient function called from scripted code takes positional arguments only",
                call.keywords[0].range,
                doc="gradients-inside",
            )
        args = [self.emit_expr(arg) for arg in call.args]
        try:
            callee = graph_of([arg.ty for arg in args])
        except AutodiffError as error:  # a gradient that cannot be a graph here: say where
            if error.source_range is None:
                error.source_range = call.range
            raise
        # the global arrays the function differentiated reads: this function's own hidden
        # inputs for them (Note [Free variables] in frontend.compile)
        owner = getattr(getattr(graph_of, "__self__", None), "scripted", None)
        if len(callee.inputs) > len(args) and self.free_array is not None:
            for variable in getattr(owner, "free", ()):
                hidden = self.free_array(variable, call.range)
                if hidden is not None:
                    args.append(hidden)
        if len(callee.inputs) != len(args):
            raise ScriptError(
                f"this function takes {len(callee.inputs)} arguments, the call passes {len(args)}",
                call.range,
                doc="gradients-inside",
            )
        copies: dict[Value, Value] = dict(zip(callee.inputs, args, strict=True))
        for node in callee.nodes():
            copy = self.graph.insert_node(self.graph.create_clone(node, copies.__getitem__))
            copies.update(zip(node.outputs, copy.outputs, strict=True))
        (result,) = callee.outputs
        return copies[result]

    def emit_function_call(self, fn: FunctionType, call: syntax.Call) -> Value:
        """``prim::CallFunction[callee=key](args...)`` with every parameter passed, defaults
        filled in from the function's own default values."""
        name = fn.__name__
        signature = inspect.signature(fn)

        def default(parameter: str) -> Value | KnownObject:
            given = signature.parameters[parameter].default
            found = constant_of(given)
            if found is not None:
                return self.constant(found[0], found[1], call.range)
            if is_function(given):  # ``act=np.tanh``: Note [Functions as arguments]
                return KnownObject(_default_variable(fn, signature, parameter), given)
            # An array (or a container of arrays): the one object every call of the plain
            # function shares, read at each call like a global (Note [Free variables] in
            # frontend.compile), so that writes into it between calls are seen.
            variable = _default_variable(fn, signature, parameter)
            resolved = self.free_object(variable, given, variable.name, call.range)
            if isinstance(resolved, Value):
                return resolved
            raise ScriptError(
                f"the default value of parameter '{parameter}' of {name}() is not a number, "
                "string, None, array or container of them: pass the argument",
                call.range,
                doc="helpers-and-recursion",
            )

        bound = self.bind_call(name, signature, call, default, self.argument_or_function)
        values: list[Value] = []
        types: list[Type] = []
        for value in cast("list[Value | KnownObject]", list(bound.values())):
            if isinstance(value, KnownObject):  # no input: the callee is compiled for it
                types.append(value)
                continue
            values.append(value)
            # constants known: a recursive callee is specialised on them (frontend.recursion)
            types.append(known_type(self.type_of(value), value))
        return self.call_compiled(fn, values, types, call.range)

    def argument_or_function(self, expr: syntax.Expr) -> Value | KnownObject:
        """An argument of a call of a Python function: its value, or, for a function known
        while compiling (``np.tanh``, a helper, a partial), that function, for which the
        callee is compiled (Note [Functions as arguments])."""
        if isinstance(expr, syntax.Name | syntax.Attribute):
            found = self.resolve(expr)
            if isinstance(found, PyObject) and is_function(found.obj):
                variable = found.origin or FreeVariable.of_object(found.spelled, found.obj)
                return KnownObject(variable, found.obj)
            return self.object_value(found, expr.range) if isinstance(found, PyObject) else found
        return self.emit_expr(expr)

    def call_with_values(
        self,
        fn: FunctionType,
        positional: Sequence[Value | KnownObject],
        keywords: Mapping[str, Value | KnownObject],
        r: SourceRange,
    ) -> Value:
        """`emit_function_call` with the arguments emitted; a `KnownObject` one (the ``self``
        of a method, a value a partial fixes) is no input of the call: the callee is compiled
        for it (Note [Reading objects from outside] in `frontend.objects`)."""
        name = fn.__name__
        signature = inspect.signature(fn)
        try:
            bound = signature.bind(*positional, **keywords)
        except TypeError as error:
            raise ScriptError(f"{name}(): {error}", r, doc="helpers-and-recursion") from None
        bound.apply_defaults()
        values: list[Value] = []
        types: list[Type] = []
        for parameter in signature.parameters.values():
            if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
                raise ScriptError(
                    f"{name}() takes *args or **kwargs: a method or a partial called from a "
                    "scripted function cannot have them yet; call a function defined with def",
                    r,
                    doc="helpers-and-recursion",
                )
            argument = bound.arguments[parameter.name]
            if isinstance(argument, KnownObject):
                types.append(argument)
                continue
            if not isinstance(argument, Value):
                found = constant_of(argument)
                if found is None:
                    raise ScriptError(
                        f"the default value of parameter '{parameter.name}' of {name}() is not "
                        "a number, string, None or tuple of them",
                        r,
                        doc="helpers-and-recursion",
                    )
                argument = self.constant(found[0], found[1], r)
            values.append(argument)
            types.append(known_type(self.type_of(argument), argument))
        return self.call_compiled(fn, values, types, r)

    def call_compiled(
        self, fn: FunctionType, values: list[Value], types: list[Type], r: SourceRange
    ) -> Value:
        """``prim::CallFunction`` of ``fn`` compiled for ``types`` (`call_hook`), with the
        caller's hidden inputs for the callee's free variables after the arguments."""
        key, result = self.call_hook(fn, types, r)
        self.callees[key] = fn
        values.extend(self.hidden_arguments(key))
        attrs: dict[str, object] = {"callee": key}
        if self.returns_list(key):  # read with prim::ListIndex, as a list built here is
            attrs["returns_list"] = True
        node = self.insert("prim::CallFunction", values, [ir_type_of(result)], r, attrs)
        if isinstance(result, Tree):
            self.trees[node.output] = result
        return node.output


def _default_variable(
    fn: FunctionType, signature: inspect.Signature, parameter: str
) -> FreeVariable:
    """Where ``fn`` keeps the default of ``parameter``: ``fn.__defaults__[i]``, or
    ``fn.__kwdefaults__[name]`` for a keyword-only one."""
    root = FreeVariable.of_object(fn.__name__, fn)
    param = signature.parameters[parameter]
    if param.kind is param.KEYWORD_ONLY:
        return root.child(("attr", "__kwdefaults__")).child(("item", parameter))
    by_position = (param.POSITIONAL_ONLY, param.POSITIONAL_OR_KEYWORD)
    with_defaults = [
        p.name
        for p in signature.parameters.values()
        if p.kind in by_position and p.default is not p.empty
    ]
    return root.child(("attr", "__defaults__")).child(("item", with_defaults.index(parameter)))


# Note [Functions as arguments]
# Code written for NumPy passes functions to its helpers: ``predict(params, x, act=np.tanh)``,
# ``def layer(x, W, act=relu)``. A function known while compiling (a NumPy function, a Python
# function, a partial, a method, a scripted function) given as an argument of a Python
# function's call, or left as a parameter's default, is no input of the call: it is a
# `KnownObject` of the callee's signature, as a value a partial fixes is, so the callee is
# compiled once per function it is given and calls it directly. A lambda or ``def`` written
# inside the compiled function has no object to pass and is still refused.


def is_function(obj: object) -> bool:
    """Whether ``obj`` is a function a callee can be compiled for (Note [Functions as
    arguments]); classes (``np.float64``) are not."""
    if isinstance(obj, type):
        return False
    if isinstance(obj, FunctionType | BuiltinFunctionType | MethodType | functools.partial):
        return True
    if isinstance(obj, np.ufunc):
        return True
    return any(
        hasattr(obj, name)
        for name in ("__autodiff_source__", "__autodiff_graph__", "__autodiff_opaque__")
    )
