"""Python's builtins called in scripted code and emitted as IR: ``print``, ``len``, ``abs``,
``min``/``max`` of numbers and arrays (as Python compares them), ``sum``/``min``/``max`` of
items known while compiling (a left fold, unrolled), ``isinstance`` decided from types, and
``math`` functions and ``round``/``pow``/``divmod`` of constants, computed while compiling.
The builtins that only run while compiling (``map``, ``sorted``, ``zip``, ...) are in
`frontend.builtins`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import numpy as np

from frontend import syntax
from frontend.builtins import array_isinstance
from frontend.environment import PyObject
from frontend.errors import ContainerUseError, ScriptError, Topic
from frontend.expressions import ExpressionEmitter, is_scalar
from frontend.resolve import Builtin
from ir.graph import Value
from ir.source import SourceRange
from ir.types import BOOL, FLOAT, INT, NONE, STR, ListType, TensorType, TupleType

# Python's own functions of numbers, computed while compiling (`emit_math`).
MATH_FUNCTIONS: tuple[object, ...] = (round, pow, divmod)


class PythonBuiltinEmitter(ExpressionEmitter):
    # Provided by `frontend.iteration` in the FunctionEmitter.
    static_items: Callable[[syntax.Expr], list[Value]]

    def emit_builtin(self, builtin: Builtin, call: syntax.Call) -> Value:
        r = call.range
        if builtin == "print":
            return self.emit_print(call)
        if builtin == "range":
            raise ScriptError("range() can only be the iterable of a for loop", r, doc="builtins")
        if builtin == "sum" or (builtin in ("min", "max") and len(call.args) == 1):
            return self.emit_fold(builtin, call)
        if call.keywords:
            keyword = call.keywords[0]
            raise ScriptError(
                f"{builtin}() takes no keyword arguments", keyword.range, doc="builtins"
            )
        args = [self.emit_expr(arg) for arg in call.args]
        if builtin in ("min", "max"):
            return self.min_max(builtin, args, call)
        if len(args) != 1:
            raise ScriptError(
                f"{builtin}() takes exactly one argument ({len(args)} given)", r, doc="builtins"
            )
        (value,) = args
        if builtin == "len" and isinstance(value.ty, TupleType):  # known while compiling
            tree = self.tree_of(value)
            if tree is not None and tree.kind is slice:
                raise ScriptError(
                    "TypeError: object of type 'slice' has no len()", r, doc="builtins"
                )
            return self.constant(len(value.ty.elems), INT, r)
        if builtin == "abs":
            return self.apply("prim::abs" if is_scalar(value.ty) else "aten::abs", [value], r)
        return self.apply(f"prim::{builtin}", [value], r)

    def emit_math(self, fn: Any, spelled: str, call: syntax.Call) -> Value:
        """``math.exp(2.0)``, ``math.log(n)``: a function of the ``math`` module of numbers
        known while compiling, computed here by Python; of a run-time value it is refused
        (np.exp may differ from math.exp in the last digit). ``round``, ``pow`` and ``divmod``
        are builtins computed the same way."""
        doc: Topic = "builtins" if any(fn is f for f in MATH_FUNCTIONS) else "math"
        args = [self.emit_expr(arg) for arg in call.args]
        if call.keywords or not all(
            a.node.kind == "prim::Constant" and a.ty in (INT, FLOAT, BOOL) for a in args
        ):
            numpy = f"np.{getattr(fn, '__name__', 'f')}"
            raise ScriptError(
                f"{spelled}() of a value known only at run time is not supported: use {numpy}",
                call.range,
                doc=doc,
            )
        try:
            result = fn(*(a.node.attrs.get("value") for a in args))
        except (ValueError, OverflowError, TypeError) as error:
            raise ScriptError(f"{type(error).__name__}: {error}", call.range, doc=doc) from None
        constant = self.python_constant(result, call.range)
        if constant is None:
            raise ScriptError(
                f"{spelled}() gives a {type(result).__name__} here", call.range, doc=doc
            )
        return constant

    def emit_isinstance(self, call: syntax.Call) -> Value:
        """``isinstance(x, np.ndarray)``, ``isinstance(p, dict)``: decided from ``x``'s type."""
        r = call.range
        if call.keywords or len(call.args) != 2:
            raise ScriptError("isinstance() takes two arguments", r, doc="builtins")
        value = self.emit_expr(call.args[0])
        spelled = call.args[1]
        parts = spelled.elts if isinstance(spelled, syntax.Tuple) else (spelled,)
        found = [self.resolve(part) for part in parts]
        classes = tuple(f.obj if isinstance(f, PyObject) else None for f in found)
        if not isinstance(classes, tuple) or not all(isinstance(c, type) for c in classes):
            raise ScriptError(
                "isinstance() takes a class or a tuple of classes here", r, doc="builtins"
            )
        if isinstance(value.ty, TensorType):
            decided = array_isinstance(value.ty, cast("tuple[type, ...]", classes))
            if decided is not None:
                return self.constant(decided, BOOL, r)
        kinds = self.python_kinds(value, r)
        return self.constant(any(issubclass(k, classes) for k in kinds), BOOL, r)

    def python_kinds(self, value: Value, r: SourceRange) -> tuple[type, ...]:
        """The Python class of ``value`` at run time, as far as its type says (its possible
        classes when they all answer isinstance alike)."""
        tree = self.tree_of(value)
        if tree is not None:
            return (tree.kind,)
        ty = value.ty
        known = {INT: int, FLOAT: float, BOOL: bool, NONE: type(None), STR: str}
        if ty in known:
            return (known[ty],)
        if isinstance(ty, TensorType) and ty.shape is not None and len(ty.shape) > 0:
            return (np.ndarray,)
        if isinstance(ty, ListType):
            return (list,)
        if isinstance(ty, TupleType):
            return (tuple,)
        # A parameter typed as an array only for want of knowing better may be a container:
        # held back until the arguments tell (Note [Compiling for containers]).
        error = ContainerUseError if isinstance(ty, TensorType) else ScriptError
        raise error(
            f"cannot tell while compiling what class a value of type {ty} is (an array, a "
            "NumPy scalar): isinstance() is decided while compiling, for numbers, strings, "
            "None, lists, tuples and dicts",
            r,
            doc="builtins",
        )

    def emit_fold(self, builtin: str, call: syntax.Call) -> Value:
        """``sum(xs)``, ``sum(xs, start)``, ``min(xs)``, ``max(xs)`` of items known while
        compiling (a list, a tuple, a comprehension): Python's left fold, unrolled."""
        r = call.range
        keywords = {k.name: k.value for k in call.keywords}
        start_expr = keywords.pop("start", None) if builtin == "sum" else None
        if keywords or not 1 <= len(call.args) <= (2 if builtin == "sum" else 1):
            raise ScriptError(
                f"{builtin}() takes an iterable here (and a start for sum)", r, doc="builtins"
            )
        if len(call.args) == 2:
            start_expr = call.args[1]
        items = self.static_items(call.args[0])
        if builtin == "sum":
            total = self.emit_expr(start_expr) if start_expr else self.constant(0, INT, r)
            for item in items:
                total = self.binary("+", total, item, r)
            return total
        if not items:
            raise ScriptError(
                f"ValueError: {builtin}() arg is an empty sequence", r, doc="builtins"
            )
        if not all(is_scalar(item.ty) for item in items):
            ufunc = "np.maximum" if builtin == "max" else "np.minimum"
            raise ScriptError(
                f"{builtin}() takes Python numbers here: use {ufunc} (or np.{builtin} of "
                "np.stack) for arrays",
                r,
                doc="builtins",
            )
        result = items[0]
        for item in items[1:]:
            result = self.apply(f"prim::{builtin}", [result, item], r)
        return result

    def emit_print(self, call: syntax.Call) -> Value:
        """``print(...)`` as prim::Print: run at run time, in program order, with the values
        the run computed; ``sep``, ``end`` and ``flush`` given as constants."""
        r = call.range
        options: dict[str, Value] = {}
        for keyword in call.keywords:
            if keyword.name not in ("sep", "end", "flush"):
                raise ScriptError(
                    f"print({keyword.name}=...) is not supported: scripted code prints to "
                    "standard output, with sep=, end= and flush= at most",
                    keyword.range,
                    doc="print",
                )
            value = self.emit_expr(keyword.value)
            wanted = (BOOL,) if keyword.name == "flush" else (STR, NONE)
            if value.node.kind != "prim::Constant" or value.ty not in wanted:
                what = "True or False" if keyword.name == "flush" else "a string or None"
                raise ScriptError(
                    f"print's {keyword.name}= must be {what} written in the call",
                    keyword.value.range,
                    doc="print",
                )
            options[keyword.name] = value
        sep = options.get("sep") or self.constant(None, NONE, r)
        end = options.get("end") or self.constant(None, NONE, r)
        flush = options.get("flush") or self.constant(False, BOOL, r)
        values = [self.emit_expr(arg) for arg in call.args]
        self.insert("prim::Print", [sep, end, flush, *values], [], r)
        return self.constant(None, NONE, r)

    def min_max(self, builtin: str, args: list[Value], call: syntax.Call) -> Value:
        if len(args) < 2:
            raise ScriptError(
                f"{builtin}() of one iterable is not supported: pass two or more numbers",
                call.range,
                doc="builtins",
            )
        for arg, value in zip(call.args, args, strict=True):
            if not is_scalar(value.ty) and not isinstance(value.ty, TensorType):
                ufunc = "np.maximum" if builtin == "max" else "np.minimum"
                raise ScriptError(
                    f"{builtin}() takes numbers and arrays here, not {value.ty}: use {ufunc} "
                    "for the elementwise one",
                    arg.range,
                    doc="builtins",
                )
        if any(isinstance(value.ty, TensorType) for value in args):
            return self.python_min_max(builtin, args, call.range)
        result = args[0]
        for value in args[1:]:
            result = self.apply(f"prim::{builtin}", [result, value], call.range)
        return result

    def python_min_max(self, builtin: str, args: list[Value], r: SourceRange) -> Value:
        """``max(a, b, ...)`` with an array among them, as Python computes it: each next item
        replaces the one kept when it compares greater (``min``: less), so the first of equal
        items wins, and an array of more than one element raises as ``bool()`` of it does
        (NumPy's "truth value ... is ambiguous"). Numbers become 0-d arrays, so that both
        branches are arrays (a Python int that wins comes back as a 0-d array)."""
        items = [
            value if isinstance(value.ty, TensorType) else self.apply("aten::asarray", [value], r)
            for value in args
        ]
        kept = items[0]
        for item in items[1:]:
            better = self.compare(">" if builtin == "max" else "<", item, kept, r)
            previous = kept
            kept = self.if_value(
                self.to_bool(better, r),
                lambda item=item: item,  # type: ignore[misc]
                lambda previous=previous: previous,  # type: ignore[misc]
                r,
            )
        return kept
