"""Python builtins evaluated while compiling: ``type(x) is T``, ``map``, ``sorted``, ``any``,
``all``, ``tuple``, ``list``, ``dict``, ``slice``, and NumPy's scalar types called as casts
(``np.float64(x)``).

Note [Compile-time builtins]
What these builtins go through is known while compiling in the code they are written for, as
for comprehensions (Note [Comprehensions] in `frontend.iteration`): their items are the values
`static_items` gives. ``map(f, xs)`` calls ``f`` once per item, as Python does, and gives a
tuple of the results (an iterator in Python: what takes it goes through it once, as a tuple
is gone through); ``tuple(...)`` and ``list(...)`` give a tuple and a list of the items;
``sorted`` orders items whose sort keys are constants (numbers, strings), the keys computed
by ``key=`` if given; ``dict(zip(keys, values))`` and ``dict(k=v)`` build a dict whose keys are
constants. ``any`` and ``all`` are decided here when every item is a constant (or when a
constant item decides them); otherwise they are a chain of ``prim::If`` on ``bool(item)``,
which stops at the first item that decides, as Python's do; the items themselves are all
computed first, so items that draw, print or write (an impure node among them) are refused.
``type(x)`` is only compared: ``type(x) is T``, ``is not``, ``==`` and ``!=`` are decided from
what ``x``'s type says its class is; for an array the class is not known exactly
(``np.memmap`` passes as an array), so that comparison is refused in favour of ``isinstance``.

A ``slice(start, stop, step)`` object is a container known while compiling of kind ``slice``
(a `Tree` whose items are the three bounds, constants or run-time ints): a subscript takes it
as it takes ``start:stop:step``, and ``s.start``/``.stop``/``.step`` read a bound; anything
else that would treat it as a tuple (``len``, iteration, indexing, unpacking) is refused.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from frontend import syntax
from frontend.environment import PyObject
from frontend.errors import ContainerUseError, ScriptError
from frontend.expressions import ExpressionEmitter, constant_value, is_scalar
from frontend.recursion import Known, known_type
from frontend.trees import Tree
from ir.graph import Node, Value
from ir.ops.prim import join_all
from ir.ops.registry import OPS
from ir.source import SourceRange
from ir.types import (
    BOOL,
    DTYPE_TO_NAME,
    FLOAT,
    INT,
    NONE,
    NOTHING,
    STR,
    TENSOR,
    ListType,
    TensorType,
)

# NumPy's scalar types, called as casts: of a number, a NumPy scalar or a 0-d array they give
# that NumPy scalar, of an n-d array an array of that dtype (``aten::cast``).
CASTS: dict[object, str] = {
    np.float64: "float64",
    np.float32: "float32",
    np.int64: "int64",
    np.int32: "int32",
    np.complex128: "complex128",
}

_SLICE_FIELDS = ("start", "stop", "step")


class _ARRAY_CLASS:
    """Stands for the class of an array: np.ndarray, a subclass or a NumPy scalar type."""


_ARRAY_KINDS = (np.ndarray, np.generic, _ARRAY_CLASS)
_COMPARED_TYPES = {"is": True, "==": True, "is not": False, "!=": False}


def is_slice(tree: Tree | None) -> bool:
    """Whether ``tree`` is a ``slice`` object's (Note [Compile-time builtins])."""
    return tree is not None and tree.kind is slice


def refuse_slice(r: SourceRange, use: str) -> ScriptError:
    return ScriptError(f"TypeError: a slice object cannot be {use}", r, doc="builtins")


class BuiltinEmitter(ExpressionEmitter):
    """The builtins of Note [Compile-time builtins] for `frontend.emit.FunctionEmitter`."""

    # Provided by `frontend.iteration`, `frontend.calls` and `frontend.local_functions`.
    static_items: Callable[[syntax.Expr], list[Value]]
    python_kinds: Callable[[Value, SourceRange], tuple[type, ...]]
    define_local: Callable[
        [str, Sequence[syntax.Param], Sequence[syntax.Stmt], SourceRange, Sequence[syntax.Expr]],
        None,
    ]

    def emit_compile_time_builtin(self, obj: object, call: syntax.Call) -> Value | None:
        """The call of ``obj`` when it is one of this module's builtins, else None."""
        dtype = _lookup(CASTS, obj)
        if dtype is not None:
            return self.emit_cast(dtype, call)
        handler = _lookup(_HANDLERS, obj)
        return None if handler is None else handler(self, call)

    # ---- type(x) is T -----------------------------------------------------------------------

    def static_compare(self, expr: syntax.Compare) -> bool | None:
        """``type(x) is T`` and its kin, decided here; other comparisons as before."""
        if len(expr.ops) == 1 and expr.ops[0] in _COMPARED_TYPES:
            left, right = expr.left, expr.comparators[0]
            if self.type_call(left) is not None or self.type_call(right) is not None:
                classes = (self.compared_class(left), self.compared_class(right))
                if _ARRAY_CLASS in classes:
                    other = classes[1] if classes[0] is _ARRAY_CLASS else classes[0]
                    if other is _ARRAY_CLASS or issubclass(other, _ARRAY_KINDS):
                        raise ContainerUseError(
                            "type() of an array is not known exactly while compiling (a NumPy "
                            "scalar, an ndarray or a subclass): use isinstance(x, np.ndarray)",
                            expr.range,
                            doc="builtins",
                        )
                same = classes[0] is classes[1]
                return same == _COMPARED_TYPES[expr.ops[0]]
        return super().static_compare(expr)

    def type_call(self, expr: syntax.Expr) -> syntax.Expr | None:
        """The argument of ``type(arg)`` when ``expr`` is that call."""
        if not isinstance(expr, syntax.Call) or not isinstance(expr.func, syntax.Name):
            return None
        found = self.resolve(expr.func)
        if isinstance(found, PyObject) and found.obj is builtins.type:
            if len(expr.args) != 1 or expr.keywords:
                raise ScriptError("type() takes one argument here", expr.range, doc="builtins")
            return expr.args[0]
        return None

    def compared_class(self, expr: syntax.Expr) -> type:
        """The class ``type(x)`` gives (`_ARRAY_CLASS` for an array's, which is not known
        exactly), or the class ``expr`` names."""
        argument = self.type_call(expr)
        if argument is None:
            found = self.resolve(expr)
            if isinstance(found, PyObject) and isinstance(found.obj, type):
                return found.obj
            raise ScriptError(
                "type(x) is compared with a class here (int, float, list, dict, ...)",
                expr.range,
                doc="builtins",
            )
        value = self.emit_expr(argument)
        if isinstance(value.ty, TensorType):
            return _ARRAY_CLASS
        kinds = self.python_kinds(value, expr.range)
        if len(kinds) != 1:
            raise ScriptError(
                f"type() of a value of type {value.ty} is not known here",
                expr.range,
                doc="builtins",
            )
        return kinds[0]

    def emit_type(self, call: syntax.Call) -> Value:
        raise ScriptError(
            "type(x) is only supported compared with a class (type(x) is int, "
            "type(x) == list): use isinstance(x, ...)",
            call.range,
            doc="builtins",
        )

    # ---- map, sorted, tuple, list, dict -----------------------------------------------------

    def call_with(self, func: syntax.Expr, args: Sequence[Value], r: SourceRange) -> Value:
        """``func(*args)`` for a function written in the source (a name, ``np.tanh``, a
        ``lambda``), the arguments given as values."""
        with self.nested_scope():
            names = []
            for i, value in enumerate(args):
                name = f"builtin argument {i}"  # no Python name can clash with it
                self.scope.bind(name, value)
                names.append(syntax.Name(name, range=r))
            if isinstance(func, syntax.Lambda):
                body = (syntax.Return(func.body, range=func.body.range),)
                self.define_local("<lambda>", func.params, body, func.range, ())
                func = syntax.Name("<lambda>", range=func.range)
            return self.emit_call(syntax.Call(func, tuple(names), (), range=r))

    def emit_map(self, call: syntax.Call) -> Value:
        r = call.range
        if len(call.args) < 2 or call.keywords:
            raise ScriptError(
                "map() takes a function and one or more iterables here", r, doc="builtins"
            )
        sources = [self.static_items(arg) for arg in call.args[1:]]
        results = [
            self.call_with(call.args[0], list(group), r) for group in zip(*sources, strict=False)
        ]
        return self.make_tuple(results, r)

    def emit_sequence(self, kind: type, call: syntax.Call) -> Value:
        r = call.range
        if call.keywords or len(call.args) > 1:
            raise ScriptError(f"{kind.__name__}() takes one iterable here", r, doc="builtins")
        items = self.static_items(call.args[0]) if call.args else []
        if kind is tuple:
            return self.make_tuple(items, r)
        ty = ListType(join_all([v.ty for v in items], NOTHING))
        return self.insert("prim::ListConstruct", items, [ty], r).output

    def emit_sorted(self, call: syntax.Call) -> Value:
        r = call.range
        keywords = {k.name: k.value for k in call.keywords}
        key_function = keywords.pop("key", None)
        reverse_expr = keywords.pop("reverse", None)
        if keywords or len(call.args) != 1:
            raise ScriptError(
                "sorted() takes an iterable, key= and reverse= here", r, doc="builtins"
            )
        reverse = False
        if reverse_expr is not None:
            reverse = constant_value(self.emit_expr(reverse_expr))
            if type(reverse) is not bool:
                raise ScriptError(
                    "sorted()'s reverse= must be True or False", reverse_expr.range, doc="builtins"
                )
        try:
            items = self.static_items(call.args[0])
        except ContainerUseError as error:  # an array: say what to write instead
            raise ContainerUseError(
                "sorted() of an array would sort its values while compiling, before they are "
                "known: write np.sort(x) (np.sort(x)[::-1] for reverse=True)",
                error.source_range,
                doc="arrays-are-not-lists",
            ) from None
        keys = [
            item if key_function is None else self.call_with(key_function, [item], r)
            for item in items
        ]
        # a key computed on constants (``key=abs``, ``key=lambda c: -c``) is folded here
        folded = [known_type(key.ty, key) for key in keys]
        known: list[Any] = [ty.value if isinstance(ty, Known) else None for ty in folded]
        if not all(isinstance(ty, Known) for ty in folded):
            raise ScriptError(
                "sorted() orders items known while compiling (numbers, strings, or keys= that "
                "give them): use np.sort for values known only at run time",
                r,
                doc="builtins",
            )
        try:
            order = sorted(range(len(items)), key=known.__getitem__, reverse=reverse)
        except TypeError as error:
            raise ScriptError(f"TypeError: {error}", r, doc="builtins") from None
        ordered = [items[i] for i in order]
        ty = ListType(join_all([v.ty for v in ordered], NOTHING))
        return self.insert("prim::ListConstruct", ordered, [ty], r).output

    def emit_dict_call(self, call: syntax.Call) -> Value:
        r = call.range
        if len(call.args) > 1:
            raise ScriptError(
                "dict() takes one iterable of pairs, or keywords, here", r, doc="builtins"
            )
        entries: dict[Any, Value] = {}
        for pair in self.static_items(call.args[0]) if call.args else []:
            key, value = self.pair(pair, r)
            entries[key] = value
        for keyword in call.keywords:
            entries[keyword.name] = self.emit_expr(keyword.value)
        return self.make_dict(entries, r)

    def pair(self, pair: Value, r: SourceRange) -> tuple[Any, Value]:
        items = pair.node.inputs if pair.node.kind == "prim::TupleConstruct" else ()
        if len(items) != 2:
            raise ScriptError(
                "dict() takes pairs (key, value) known while compiling here", r, doc="builtins"
            )
        key, value = items
        if key.node.kind != "prim::Constant" or key.ty not in (STR, INT, BOOL, FLOAT):
            raise ScriptError(
                "a dict key must be a string or a number known while compiling", r, doc="builtins"
            )
        return key.node.attrs.get("value"), value

    def make_dict(self, entries: dict[Any, Value], r: SourceRange) -> Value:
        items = list(entries.values())
        tree = Tree(dict, tuple(entries), tuple(self.type_of(v) for v in items))
        return self.make_tree(items, tree, r)

    # ---- any, all ---------------------------------------------------------------------------

    def emit_any_all(self, which: str, call: syntax.Call) -> Value:
        r = call.range
        if len(call.args) != 1 or call.keywords:
            raise ScriptError(f"{which}() takes one iterable", r, doc="builtins")
        argument = self.emit_expr(call.args[0]) if _is_array_name(self, call.args[0]) else None
        if argument is not None and isinstance(argument.ty, TensorType):
            # (a parameter typed as an array for want of knowing better may be a list: Note
            # [Compiling for containers] in autodiff.script)
            whole = "np.max(x != 0)" if which == "any" else "np.min(x != 0)"
            raise ContainerUseError(
                f"{which}() of an array goes through its rows one by one: test the whole "
                f"array, as {whole} does",
                r,
                doc="arrays-are-not-lists",
            )
        deciding = which == "any"  # the truth that stops the search
        pending: list[Value] = []
        end = self.graph.insert_point
        before = end.prev
        items = self.static_items(call.args[0])
        if len(items) > 1 and _has_effects(before, end):
            # Every item is emitted before the first is tested, so draws, prints or writes of
            # the items after the one that decides would happen, unlike in Python.
            raise ScriptError(
                f"{which}() of items that draw random numbers, print or write arrays: Python "
                "stops at the first item that decides, and here every item would be computed "
                "first; write the loop out (for ...: if ...: found = True; break)",
                call.args[0].range,
                doc="builtins",
            )
        for item in items:
            known = _known_truth(item)
            if known is None:
                pending.append(item)
            elif known == deciding and not pending:
                return self.constant(deciding, BOOL, r)
            elif known == deciding:
                pending.append(item)
                break
        return self.truth_chain(pending, deciding, r)

    def truth_chain(self, items: list[Value], deciding: bool, r: SourceRange) -> Value:
        """``bool(items[0])`` decides when it is ``deciding``, else the rest do; no item left
        is ``not deciding``, as ``any([])`` is False and ``all([])`` True."""
        if not items:
            return self.constant(not deciding, BOOL, r)
        first, rest = items[0], items[1:]
        known = _known_truth(first)
        if known is not None:
            return (
                self.constant(deciding, BOOL, r)
                if known == deciding
                else (self.truth_chain(rest, deciding, r))
            )
        truth = self.to_bool(first, r)

        def stop() -> Value:
            return self.constant(deciding, BOOL, r)

        def go_on() -> Value:
            return self.truth_chain(rest, deciding, r)

        return self.if_value(truth, *((stop, go_on) if deciding else (go_on, stop)), r)

    # ---- slice ------------------------------------------------------------------------------

    def emit_slice(self, call: syntax.Call) -> Value:
        r = call.range
        if call.keywords or not 1 <= len(call.args) <= 3:
            raise ScriptError(
                "slice() takes 1 to 3 arguments: slice(stop), slice(start, stop[, step])",
                r,
                doc="builtins",
            )
        bounds = [self.emit_expr(arg) for arg in call.args]
        for arg, bound in zip(call.args, bounds, strict=True):
            if bound.ty not in (INT, NONE):
                raise ScriptError(
                    f"a slice's bounds are ints or None here, not {bound.ty}",
                    arg.range,
                    doc="builtins",
                )
        if len(bounds) == 1:
            bounds = [self.constant(None, NONE, r), bounds[0]]
        while len(bounds) < 3:
            bounds.append(self.constant(None, NONE, r))
        tree = Tree(slice, _SLICE_FIELDS, tuple(b.ty for b in bounds))
        return self.make_tree(bounds, tree, r)

    def binary(self, op: str, left: Value, right: Value, r: SourceRange) -> Value:
        if any(is_slice(self.tree_of(v)) for v in (left, right)):
            raise ScriptError(
                f"TypeError: unsupported operand type for {op}: 'slice'", r, doc="builtins"
            )
        return super().binary(op, left, right, r)

    # ---- np.float64(x) and the other casts --------------------------------------------------

    def emit_cast(self, dtype: str, call: syntax.Call) -> Value:
        r = call.range
        if call.keywords or len(call.args) != 1:
            raise ScriptError(f"np.{dtype}() takes one value here", r, doc="numbers-and-arrays")
        value = self.emit_expr(call.args[0])
        if is_scalar(value.ty):
            value = self.apply("aten::asarray", [value], r)
        elif not value.ty.is_subtype_of(TENSOR):
            raise ScriptError(
                f"np.{dtype}() takes a number or an array here, not {value.ty}",
                call.args[0].range,
                doc="numbers-and-arrays",
            )
        return self.apply("aten::cast", [value, self.constant(dtype, STR, r)], r)


def array_isinstance(ty: TensorType, classes: tuple[type, ...]) -> bool | None:
    """``isinstance(x, classes)`` for ``x`` of type ``ty``, when every class ``x`` may have
    answers alike, else None. An array argument is an ndarray (or a subclass), or, when 0-d, a
    NumPy scalar of its dtype: the signature key tells them apart, the type does not."""
    candidates: list[type] = []
    if ty.shape is None or len(ty.shape) == 0:
        dtypes = [ty.dtype] if ty.dtype is not None else list(DTYPE_TO_NAME)
        candidates.extend(np.dtype(dtype).type for dtype in dtypes)
    candidates.append(np.ndarray)
    answers = {issubclass(kind, classes) for kind in candidates}
    return answers.pop() if len(answers) == 1 else None


def _known_truth(item: Value) -> bool | None:
    """The truth of ``item`` when it is known while compiling."""
    if item.ty is NONE:
        return False
    if item.node.kind == "prim::Constant" and item.ty in (INT, FLOAT, BOOL, STR):
        return bool(item.node.attrs.get("value"))
    return None


def _is_array_name(emitter: BuiltinEmitter, expr: syntax.Expr) -> bool:
    return isinstance(expr, syntax.Name) and isinstance(emitter.resolve(expr), Value)


def _lookup(table: dict[object, Any], obj: object) -> Any:
    try:
        return table.get(obj)
    except TypeError:  # unhashable
        return None


_HANDLERS: dict[object, Callable[[BuiltinEmitter, syntax.Call], Value]] = {
    builtins.map: BuiltinEmitter.emit_map,
    builtins.sorted: BuiltinEmitter.emit_sorted,
    builtins.tuple: lambda self, call: self.emit_sequence(tuple, call),
    builtins.list: lambda self, call: self.emit_sequence(list, call),
    builtins.dict: BuiltinEmitter.emit_dict_call,
    builtins.any: lambda self, call: self.emit_any_all("any", call),
    builtins.all: lambda self, call: self.emit_any_all("all", call),
    builtins.slice: BuiltinEmitter.emit_slice,
    builtins.type: BuiltinEmitter.emit_type,
}


def _has_effects(before: Node, end: Node) -> bool:
    """Whether a node inserted after ``before`` and before ``end``, or one nested in their
    blocks, is impure (a draw, a print, a write, a check that raises)."""
    pending: list[Node] = []
    node = before.next
    while node is not end:
        pending.append(node)
        node = node.next
    while pending:
        node = pending.pop()
        op = OPS.get(node.kind)
        if op is not None and not op.pure:
            return True
        for block in node.blocks:
            pending.extend(block.nodes())
    return False
