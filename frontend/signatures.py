"""Call signatures beyond one value per parameter: ``*items`` and ``**mapping`` in calls, and
the ``*args``, ``**kwargs`` and keyword-only parameters of the functions they call.

Note [Unpacking in calls]
``f(*xs, **d)`` spreads containers known while compiling (Note [Containers known while
compiling] in `frontend.trees`): a tuple, a list of known length, a container argument,
``zip``/``range``/``enumerate`` of those, a dict with string keys. `expand_call` rewrites the
call into one with an argument per item, each a hidden name (not a Python identifier, so no
code can read or rebind it) bound to the item's value, so that every kind of callee (a NumPy
function, a builtin, a helper, a local function) takes the call as if it had been written out.
An array has no length known while compiling: ``*x`` of one is refused where it is written
(held back for a parameter that may yet be given a tuple: Note [Compiling for containers] in
`autodiff.script`).

Note [Variadic parameters]
A function's ``*args`` is the tuple of the extra positional arguments and its ``**kwargs`` the
dict of the extra keyword arguments, in the order given, as in Python: both containers known
while compiling, so ``len(args)``, ``args[0]``, ``for a in args`` and ``kwargs["scale"]`` are
decided while compiling. Binding follows ``inspect.Signature.bind``, so a call that Python
refuses is refused with Python's message, at the call.
"""

from __future__ import annotations

import inspect
import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from frontend import syntax
from frontend.errors import ContainerUseError, ScriptError
from frontend.expressions import ExpressionEmitter
from frontend.trees import Tree
from ir.graph import Value
from ir.source import SourceRange
from ir.types import STR, TensorType

_KINDS = {
    "positional": inspect.Parameter.POSITIONAL_OR_KEYWORD,
    "var_positional": inspect.Parameter.VAR_POSITIONAL,
    "keyword_only": inspect.Parameter.KEYWORD_ONLY,
    "var_keyword": inspect.Parameter.VAR_KEYWORD,
}
# The default of a parameter that has one, in the signature a local function is bound by: its
# value is bound where the function is defined (Note [Local functions] in
# `frontend.local_functions`).
_HAS_DEFAULT = object()
# Hidden names of unpacked items: Note [Unpacking in calls].
_HIDDEN = itertools.count()


def python_signature(params: Sequence[syntax.Param]) -> inspect.Signature:
    """The ``inspect.Signature`` of parameters written in a ``def`` or a ``lambda``."""
    return inspect.Signature(
        [
            inspect.Parameter(
                p.name,
                _KINDS[p.kind],
                default=inspect.Parameter.empty if p.default is None else _HAS_DEFAULT,
            )
            for p in params
        ]
    )


class SignatureEmitter(ExpressionEmitter):
    """Unpacks call arguments and packs variadic parameters for `frontend.emit.FunctionEmitter`:
    Note [Unpacking in calls], Note [Variadic parameters]."""

    # Provided by `frontend.iteration` in the FunctionEmitter.
    static_items: Callable[[syntax.Expr], list[Value]]
    iteration_builtin: Callable[[syntax.Call], str | None]
    is_range: Callable[[syntax.Expr], bool]
    known_items: Callable[[Value, SourceRange], list[Value] | None]

    def expand_call(self, call: syntax.Call) -> syntax.Call:
        """``call`` with its ``*items`` and ``**mapping`` arguments spread out."""
        if not call.unpacked and not any(isinstance(a, syntax.Starred) for a in call.args):
            return call
        args: list[syntax.Expr] = []
        for argument in call.args:
            if isinstance(argument, syntax.Starred):
                items = self.unpacked_items(argument.value)
                args.extend(self.hidden(item, argument.range) for item in items)
            else:
                args.append(argument)
        keywords = list(call.keywords)
        for mapping in call.unpacked:
            for key, item in self.unpacked_mapping(mapping):
                if any(k.name == key for k in keywords):
                    raise ScriptError(
                        f"got multiple values for keyword argument '{key}'",
                        mapping.range,
                        doc="functions",
                    )
                hidden = self.hidden(item, mapping.range)
                keywords.append(syntax.Keyword(key, hidden, range=mapping.range))
        return replace(call, args=tuple(args), keywords=tuple(keywords), unpacked=())

    def hidden(self, value: Value, r: SourceRange) -> syntax.Name:
        name = f"*{next(_HIDDEN)}"
        self.scope.bind(name, value)
        return syntax.Name(name, range=r)

    def unpacked_items(self, expr: syntax.Expr) -> list[Value]:
        """The items ``*expr`` spreads."""
        r = expr.range
        if isinstance(expr, syntax.Call) and (
            self.iteration_builtin(expr) is not None or self.is_range(expr.func)
        ):
            return self.static_items(expr)
        value = self.emit_expr(expr)
        tree = self.tree_of(value)
        if tree is not None:
            if tree.is_dict:  # ``*d`` spreads a dict's keys
                return [self.constant_key(key, r) for key in tree.keys]
            return [self.tree_item(value, tree, i, r) for i in range(len(tree.children))]
        if isinstance(value.ty, TensorType):
            raise ContainerUseError(
                "cannot unpack an array with '*': its length is not known while compiling; "
                "pass the array itself, or its rows one by one (x[0], x[1])",
                r,
                doc="arrays-are-not-lists",
            )
        items = None if value.ty == STR else self.known_items(value, r)
        if items is None:
            raise ScriptError(
                f"cannot unpack a value of type {value.ty} with '*' while compiling: unpack a "
                "tuple, a list of known length or a container argument",
                r,
                doc="functions",
            )
        return items

    def unpacked_mapping(self, expr: syntax.Expr) -> list[tuple[str, Value]]:
        """The keyword arguments ``**expr`` spreads, in the dict's order."""
        r = expr.range
        value = self.emit_expr(expr)
        tree = self.tree_of(value)
        if tree is None or not tree.is_dict:
            array = isinstance(value.ty, TensorType)
            what = (
                "an array"
                if array
                else f"a {tree.kind_name}"
                if tree
                else f"a value of type {value.ty}"
            )
            raise (ContainerUseError if array else ScriptError)(
                f"cannot unpack {what} with '**': it takes a dict known while compiling (a "
                "literal, a dict argument, **kwargs)",
                r,
                doc="functions",
            )
        for key in tree.keys:
            if not isinstance(key, str):
                raise ScriptError(
                    f"keywords must be strings, not {type(key).__name__}", r, doc="functions"
                )
        return [(str(key), self.tree_item(value, tree, i, r)) for i, key in enumerate(tree.keys)]

    def constant_key(self, key: object, r: SourceRange) -> Value:
        found = self.python_constant(key, r)
        assert found is not None  # a dict known while compiling has constant keys
        return found

    def pack_variadic(self, kind: inspect._ParameterKind, given: Any, r: SourceRange) -> Value:
        """The ``*args`` tuple or the ``**kwargs`` dict of a call's extra arguments (Note
        [Variadic parameters])."""
        if kind == inspect.Parameter.VAR_POSITIONAL:
            items = list(given)
            return self.make_tree(items, Tree(tuple, (), self.item_types(items)), r)
        entries: Mapping[str, Value] = given
        items = list(entries.values())
        return self.make_tree(items, Tree(dict, tuple(entries), self.item_types(items)), r)

    def item_types(self, items: Sequence[Value]) -> tuple[Any, ...]:
        return tuple(self.type_of(item) for item in items)

    def bind_call(
        self,
        name: str,
        signature: inspect.Signature,
        call: syntax.Call,
        defaults: Callable[[str], Value],
        argument: Callable[[syntax.Expr], Value] | None = None,
    ) -> dict[str, Value]:
        """Every parameter's value for ``call`` (spread already: `expand_call`), as Python
        binds it; ``defaults`` gives the value of a parameter left to its default, and
        ``argument`` (by default `emit_expr`) the value of an argument."""
        emit = self.emit_expr if argument is None else argument
        positional = [emit(arg) for arg in call.args]
        keywords = {k.name: emit(k.value) for k in call.keywords}
        try:
            bound = signature.bind(*positional, **keywords)
        except TypeError as error:
            raise ScriptError(f"{name}(): {error}", call.range, doc="functions") from None
        values: dict[str, Value] = {}
        for parameter in signature.parameters.values():
            if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
                empty: Any = () if parameter.kind == parameter.VAR_POSITIONAL else {}
                given = bound.arguments.get(parameter.name, empty)
                values[parameter.name] = self.pack_variadic(parameter.kind, given, call.range)
            elif parameter.name in bound.arguments:
                values[parameter.name] = bound.arguments[parameter.name]
            else:
                values[parameter.name] = defaults(parameter.name)
        return values
