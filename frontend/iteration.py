"""Iteration known while compiling: comprehensions and generator expressions, and ``for`` over
``zip``, ``enumerate`` and ``reversed`` (unrolled), or over a range of constant length that
indexes a container argument.

Note [Comprehensions]
What a comprehension, a generator expression, or a ``for`` over ``zip``, ``enumerate`` or
``reversed`` goes through is known while compiling in the code they are written for: the
layers of a list of parameters, a dict's keys, ``range(3)``. They are unrolled: each item is
bound to the target (in a scope of its own for a comprehension, whose names do not leak), the
``if`` conditions are decided (they must be known while compiling: an int, a string), and
the element emitted. A list comprehension gives a list, a generator expression a tuple of its
items, which ``sum`` (Python's left fold from 0, or the start given), ``min``, ``max``,
``np.stack`` and friends take. An array, a list whose length is known only at run time
(appended in a loop) or a ``range`` with a run-time bound is refused where it is written: a
``for`` loop over ``range`` is the way to go through those, and it stays a loop in the IR.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

from frontend import syntax
from frontend.environment import subscripted_names
from frontend.errors import ContainerUseError, ScriptError
from frontend.expressions import constant_value
from frontend.lists import ListEmitter
from ir.graph import Value
from ir.ops.prim import join_all
from ir.source import SourceRange
from ir.types import INT, NOTHING, ListType, TensorType

# Builtins a for loop or a comprehension goes through while compiling.
_ITERATION_BUILTINS: dict[object, str] = {zip: "zip", enumerate: "enumerate", reversed: "reversed"}


class IterationEmitter(ListEmitter):
    """What `frontend.emit.FunctionEmitter` goes through while compiling."""

    # Provided by `frontend.emit.FunctionEmitter`.
    assign: Callable[[syntax.Expr, Value, SourceRange], None]
    # Provided by `frontend.builtins`: a dict comprehension's entries.
    pair: Callable[[Value, SourceRange], tuple[Any, Value]]
    make_dict: Callable[[dict[Any, Value], SourceRange], Value]
    # Provided by `frontend.signatures`: Note [Unpacking in calls] there.
    expand_call: Callable[[syntax.Call], syntax.Call]

    def iteration_builtin(self, call: syntax.Call) -> str | None:
        """``"zip"``, ``"enumerate"`` or ``"reversed"`` when ``call`` calls that builtin."""
        func = call.func
        if not isinstance(func, syntax.Name):
            return None
        found = self.resolve(func)
        if isinstance(found, Value):
            return None
        return _ITERATION_BUILTINS.get(found.obj) if isinstance(found.obj, type) else None

    def static_items(self, expr: syntax.Expr) -> list[Value]:
        """The items ``for … in expr`` goes through, when they are known while compiling: of a
        tuple, a list of known length, a container argument (a dict's keys), ``range`` with
        constant bounds, and ``zip``, ``enumerate`` and ``reversed`` of those."""
        r = expr.range
        if isinstance(expr, syntax.Call):
            expr = self.expand_call(expr)  # ``zip(*pairs)``: Note [Unpacking in calls]
            builtin = self.iteration_builtin(expr)
            if builtin is not None:
                return self.builtin_items(builtin, expr)
            if isinstance(expr.func, syntax.Name | syntax.Attribute) and self.is_range(expr.func):
                bounds = [self.emit_expr(a) for a in expr.args]
                known = [constant_value(b) for b in bounds]
                if expr.keywords or not all(type(k) is int for k in known) or not known:
                    # ``range(len(params))`` of a parameter typed as an array for want of
                    # knowing better: held back (Note [Compiling for containers])
                    of_array = any(
                        b.node.kind == "prim::len" and isinstance(b.node.inputs[0].ty, TensorType)
                        for b in bounds
                    )
                    raise (ContainerUseError if of_array else ScriptError)(
                        "a comprehension goes over a range known while compiling: write a "
                        "for loop for a range known only at run time",
                        r,
                        doc="comprehensions",
                    )
                return [self.constant(i, INT, r) for i in range(*cast("list[int]", known))]
        value = self.emit_expr(expr)
        tree = self.tree_of(value)
        if tree is not None and tree.is_dict:
            return [cast(Value, self.python_constant(key, r)) for key in tree.keys]
        if tree is not None and tree.kind is slice:
            raise ScriptError("TypeError: 'slice' object is not iterable", r, doc="builtins")
        if tree is not None:  # each item with its own structure and rank
            return [self.tree_item(value, tree, i, r) for i in range(len(tree.children))]
        items = None if isinstance(value.ty, TensorType) else self.known_items(value, r)
        if items is None:
            array = isinstance(value.ty, TensorType)
            what = "an array" if array else f"a {value.ty}"
            raise (ContainerUseError if array else ScriptError)(
                f"cannot go through {what} while compiling: zip(), enumerate(), reversed() and "
                "comprehensions take lists, tuples and dicts of a known length, or "
                "range() of constants",
                r,
                doc="arrays-are-not-lists" if array else "comprehensions",
            )
        return items

    def builtin_items(self, builtin: str, call: syntax.Call) -> list[Value]:
        r = call.range
        start = 0
        keywords = {k.name: k for k in call.keywords}
        if builtin == "enumerate" and "start" in keywords:
            found = constant_value(self.emit_expr(keywords.pop("start").value))
            if type(found) is not int:
                raise ScriptError("enumerate()'s start must be an int constant", r, doc="builtins")
            start = found
        strict = keywords.pop("strict", None) if builtin == "zip" else None
        if keywords:
            raise ScriptError(
                f"{builtin}() takes no keyword '{next(iter(keywords))}' here", r, doc="builtins"
            )
        if builtin == "zip":
            sources = [self.static_items(arg) for arg in call.args]
            uneven = len({len(items) for items in sources}) > 1
            if uneven and strict is not None and constant_value(self.emit_expr(strict.value)):
                raise ScriptError(
                    "ValueError: zip() arguments of different lengths with strict=True",
                    r,
                    doc="builtins",
                )
            return [self.make_tuple(list(group), r) for group in zip(*sources, strict=False)]
        if len(call.args) != 1 and not (builtin == "enumerate" and len(call.args) == 2):
            raise ScriptError(f"{builtin}() takes one iterable here", r, doc="builtins")
        sources = [self.static_items(call.args[0])]
        if builtin == "reversed":
            return sources[0][::-1]
        if len(call.args) == 2:
            found = constant_value(self.emit_expr(call.args[1]))
            if type(found) is not int:
                raise ScriptError("enumerate()'s start must be an int constant", r, doc="builtins")
            start = found
        return [
            self.make_tuple([self.constant(start + i, INT, r), item], r)
            for i, item in enumerate(sources[0])
        ]

    def emit_comprehension(self, expr: syntax.Comprehension) -> Value:
        """``[f(x) for x in xs if c]``: unrolled while compiling, into a list (a tuple for a
        generator expression, which ``sum``, ``min``, ``max`` or ``np.stack`` take)."""
        items: list[Value] = []

        def clause(level: int) -> None:
            if level == len(expr.clauses):
                items.append(self.emit_expr(expr.element))
                return
            current = expr.clauses[level]
            for item in self.static_items(current.iter):
                self.assign(current.target, item, current.target.range)
                if all(self.known_condition(c) for c in current.conditions):
                    clause(level + 1)

        with self.nested_scope():  # its names do not leak, as in Python 3
            clause(0)
        r = expr.range
        if expr.kind == "dict":
            return self.make_dict(dict(self.pair(item, r) for item in items), r)
        if expr.kind == "list":
            ty = ListType(join_all([v.ty for v in items], NOTHING))
            return self.insert("prim::ListConstruct", items, [ty], r).output
        return self.make_tuple(items, r)

    def known_condition(self, condition: syntax.Expr) -> bool:
        decided = self.condition(condition)
        if not isinstance(decided, bool):
            raise ScriptError(
                "a comprehension's condition must be known while compiling (an int, a string, "
                "a shape): use np.where for a condition on array values",
                condition.range,
                doc="comprehensions",
            )
        return decided

    def enumerates_an_array(self, call: syntax.Call) -> bool:
        """Whether ``call`` is ``enumerate(x)`` of an array ``x`` (no start)."""
        if self.iteration_builtin(call) != "enumerate" or len(call.args) != 1 or call.keywords:
            return False
        argument = call.args[0]
        if isinstance(argument, syntax.Name):
            found = self.resolve(argument)
            return isinstance(found, Value) and isinstance(found.ty, TensorType)
        if isinstance(argument, syntax.Attribute) and self.reads_a_value(argument.value):
            # ``enumerate(x.T)``: an attribute of a value is a read (a view, a size) with no
            # effect, so emitting it here to see its type, and again for the loop, is harmless
            return isinstance(self.emit_expr(argument).ty, TensorType)
        return False

    def reads_a_value(self, expr: syntax.Expr) -> bool:
        """Whether ``expr`` is a name bound to a value, or an attribute chain on one."""
        if isinstance(expr, syntax.Attribute):
            return self.reads_a_value(expr.value)
        return isinstance(expr, syntax.Name) and isinstance(self.resolve(expr), Value)

    def reads_containers(self, body: Sequence[syntax.Stmt]) -> bool:
        """Whether ``body`` subscripts a name bound to a container known while compiling."""
        for name in subscripted_names(body):
            value = self.scope.value(name)
            if value is not None and value in self.trees:
                return True
        return False

    def is_range(self, func: syntax.Expr) -> bool:
        if not isinstance(func, syntax.Name | syntax.Attribute):
            return False
        if isinstance(func, syntax.Attribute) and isinstance(self.resolve(func.value), Value):
            return False  # a method: ``d.items()``
        found = self.resolve(func)
        return not isinstance(found, Value) and found.obj is range
