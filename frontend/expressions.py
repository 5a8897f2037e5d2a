"""Expressions to IR: names, constants, operators, conditions, tuples and subscripts.

Note [Scalar or array operators]
Python and NumPy disagree on numbers: ``2 * 3`` is a Python int, ``np.multiply(2, 3)`` a NumPy
int64. An operator whose operands are both statically Python scalars (``int``, ``float``,
``bool`` or ``Scalar``) becomes the ``prim::`` operator, typed by Python's rules (`ir.ops.scalar`);
any other operand (an array, or a value of unknown type ``Any``) makes it the ``aten::`` operator,
typed ``Tensor`` until shape propagation refines it. ``x.shape`` is typed ``int[]``, so
``x.shape[0]`` is an ``int`` and ``n * 2`` with ``n = x.shape[0]`` stays a Python int.

Note [Boolean operators]
``and``, ``or`` and ``not`` keep Python's semantics on every type: ``a and b`` is
``b if a else a``, short-circuiting through a prim::If whose condition is ``prim::bool(a)`` (so an
array operand must have one element, as in Python). Elementwise logic is ``np.logical_and``. In
the condition of ``if`` and ``while`` only truth matters, so a part known at compile time (``x is
None`` of a parameter typed NoneType, a literal) decides without emitting anything.
"""

from __future__ import annotations

import builtins
import operator
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from types import MethodType, ModuleType
from typing import Any

import numpy as np

from frontend import syntax
from frontend.environment import LocalFunction, PyObject, Scope, Unbound
from frontend.errors import ContainerUseError, ScriptError
from frontend.objects import (
    FreeVariable,
    fingerprint,
    is_array,
    is_data_tree,
    origin_object,
    tree_of_container,
)
from frontend.resolve import constant_of, describe
from frontend.trees import KnownString, Tree, ir_type_of
from ir.errors import ShapeError
from ir.graph import Graph, Node, Value
from ir.ops import NOT_CONSTANT, OPS
from ir.ops.prim import join_all
from ir.source import SourceRange
from ir.types import (
    ANY,
    BOOL,
    FLOAT,
    INT,
    NONE,
    NOTHING,
    SCALAR,
    STR,
    TENSOR,
    ListType,
    TensorType,
    TupleType,
    Type,
    join_types,
)

SCALAR_TYPES = (INT, FLOAT, BOOL, SCALAR)
# Read at each call like a global array (Note [Random draws] in `ir.ops.random`).

PRIM_BINARY = {
    "+": "add",
    "-": "sub",
    "*": "mul",
    "/": "truediv",
    "//": "floordiv",
    "%": "mod",
    "**": "pow",
    "&": "bitand",
    "|": "bitor",
    "^": "bitxor",
}
ATEN_BINARY = {
    "+": "add",
    "-": "sub",
    "*": "mul",
    "/": "div",
    "//": "floordiv",
    "%": "remainder",
    "**": "pow",
    "@": "matmul",
    "&": "bitwise_and",
    "|": "bitwise_or",
    "^": "bitwise_xor",
}
COMPARISONS = {"<": "lt", "<=": "le", ">": "gt", ">=": "ge", "==": "eq", "!=": "ne"}

# Names a free_name callback may ask about: (name, where it is read) -> its value, or None.
FreeName = Callable[[str, SourceRange], Value | None]
# Variables read from outside that hold arrays (globals, closure cells, attributes of them):
# (variable, where it is read) -> the value to read them as (a hidden input: Note [Free
# variables] in `frontend.compile`), or None when the function may not read them.
FreeArray = Callable[[FreeVariable, SourceRange], Value | None]
# Told of every other variable the function reads, the object found, and for a container its
# `fingerprint` (else None): what is read once, at compile time (Note [Values read once] in
# `frontend.compile`).
ReadOnce = Callable[[FreeVariable, object, object], None]
# The variable a name of the namespace is (a module global or a closure cell).
VariableOf = Callable[[str], FreeVariable]


Resolved = Value | PyObject


def is_scalar(ty: Type) -> bool:
    return ty in SCALAR_TYPES


class ExpressionEmitter:
    """Emits expressions into ``graph`` at its insertion point, reading names from ``scope``."""

    def __init__(
        self,
        graph: Graph,
        namespace: Mapping[str, Any],
        free_name: FreeName | None,
        free_array: FreeArray | None = None,
        read_once: ReadOnce | None = None,
        variable_of: VariableOf | None = None,
    ) -> None:
        self.graph = graph
        self.globals = namespace
        self.free_name = free_name
        self.free_array = free_array
        self.read_once = read_once
        self.variable_of = variable_of
        self.scope = Scope()
        self.trees: dict[Value, Tree] = {}
        """The containers known while compiling, by the tuple value that holds each (Note
        [Containers known while compiling] in `frontend.trees`)."""

    # ---- building blocks --------------------------------------------------------------------

    def insert(
        self,
        kind: str,
        inputs: Sequence[Value],
        types: Sequence[Type],
        r: SourceRange,
        attrs: dict[str, Any] | None = None,
        blocks: int = 0,
    ) -> Node:
        return self.graph.insert(kind, inputs, types, attrs, blocks, r)

    def constant(self, value: Any, ty: Type, r: SourceRange) -> Value:
        return self.graph.insert_constant(value, ty, r)

    def python_constant(self, obj: object, r: SourceRange) -> Value | None:
        found = constant_of(obj)
        return None if found is None else self.constant(found[0], found[1], r)

    def apply(self, kind: str, inputs: Sequence[Value], r: SourceRange) -> Value:
        """Insert a single-result operator, typed as Note [Scalar or array operators] says."""
        return self.insert(kind, inputs, [self.result_type(kind, inputs, r)], r).output

    def result_type(self, kind: str, inputs: Sequence[Value], r: SourceRange) -> Type:
        op = OPS[kind]
        if kind == "aten::shape":
            return ListType(INT)
        if kind.startswith("aten::") or op.shape is None:
            declared = op.schema.returns[0]
            return TENSOR if declared == TENSOR else declared
        consts = [
            v.node.attrs.get("value") if v.node.kind == "prim::Constant" else NOT_CONSTANT
            for v in inputs
        ]
        try:
            types = op.shape([v.ty for v in inputs], consts)
        except ShapeError as exc:  # the operands cannot work at run time
            raise ScriptError(exc.message, r, doc="operators") from None
        return types[0] if types else ANY

    @contextmanager
    def nested_scope(self) -> Iterator[Scope]:
        outer = self.scope
        self.scope = Scope(outer)
        try:
            yield self.scope
        finally:
            self.scope = outer

    def if_value(
        self,
        cond: Value,
        then: Callable[[], Value],
        orelse: Callable[[], Value],
        r: SourceRange,
    ) -> Value:
        """A prim::If with one result: ``then()`` or ``orelse()``, each emitted in its block."""
        node = self.insert("prim::If", [cond], [], r, blocks=2)
        results: list[Value] = []
        for block, make in zip(node.blocks, (then, orelse), strict=True):
            with self.graph.inserting_at_end(block), self.nested_scope():
                result = make()
            block.register_output(result)
            results.append(result)
        return node.add_output(join_types(results[0].ty, results[1].ty))

    # ---- names ------------------------------------------------------------------------------

    def resolve(self, expr: syntax.Expr) -> Resolved:
        """A Name or attribute chain as a value or a compile-time Python object; any other
        expression is emitted."""
        if isinstance(expr, syntax.Name):
            return self.resolve_name(expr.id, expr.range)
        if isinstance(expr, syntax.Attribute):
            base = self.resolve(expr.value)
            if isinstance(base, PyObject):
                return self.attribute_of(base, expr.attr, expr.range)
            return self.emit_value_attribute(base, expr.attr, expr.range)
        return self.emit_expr(expr)

    def resolve_name(self, name: str, r: SourceRange) -> Resolved:
        found = self.scope.lookup(name)
        if isinstance(found, Value | PyObject):
            return found
        if isinstance(found, LocalFunction):
            return PyObject(found, name)
        if isinstance(found, Unbound):
            raise ScriptError(found.message, r, doc=found.doc)
        if name in self.globals:
            obj = self.globals[name]
            if self.variable_of is None:
                return self.python_object(obj, name)
            found = self.free_object(self.variable_of(name), obj, name, r)
            if isinstance(found, Value) and found in self.graph.inputs:
                self.scope.root().bind(name, found)  # a hidden input: read it once
            return found
        if hasattr(builtins, name):
            return PyObject(getattr(builtins, name), name)
        if self.free_name is not None:
            value = self.free_name(name, r)
            if value is not None:
                self.scope.root().bind(name, value)
                return value
        raise ScriptError(f"undefined name '{name}'", r)

    def free_object(
        self, variable: FreeVariable, obj: object, spelled: str, r: SourceRange
    ) -> Resolved:
        """What a value read from outside is in the function: Note [Reading objects from
        outside] in `frontend.objects`."""
        if self.free_array is not None and is_array(obj):
            value = self.free_array(variable, r)
            if value is not None:
                return value
        elif self.free_array is not None and is_data_tree(obj):
            if self.read_once is not None:
                self.read_once(variable, obj, fingerprint(obj))
            return self.free_container(variable, obj, r)
        if self.read_once is not None:
            self.read_once(variable, obj, None)
        named = isinstance(obj, ModuleType) or callable(obj)
        return origin_object(obj, describe(obj) if named else spelled, variable)

    def free_container(self, variable: FreeVariable, obj: object, r: SourceRange) -> Value:
        """A container of arrays and numbers read from outside, known while compiling: its
        arrays hidden inputs, its numbers constants (guarded by the caller's fingerprint)."""
        assert self.free_array is not None

        def leaf(at: FreeVariable, item: object) -> Value:
            if is_array(item):
                assert self.free_array is not None
                value = self.free_array(at, r)
                assert value is not None
                return value
            constant = self.python_constant(item, r)
            assert constant is not None  # a number or None: `is_data_tree`
            return constant

        def make(items: Sequence[Value], kind: type, keys: tuple[Any, ...]) -> Value:
            tree = Tree(kind, keys, tuple(self.type_of(item) for item in items))
            return self.make_tree(items, tree, r)

        result: Value = tree_of_container(obj, variable, leaf, make)
        return result

    def attribute_of(self, base: PyObject, attr: str, r: SourceRange) -> Resolved:
        """``base.attr`` of a compile-time object: read through ``base``'s variable when it has
        one (an array attribute ``self.W`` is a hidden input), else as a Python object."""
        if base.origin is None or self.variable_of is None:
            return self.object_attribute(base, attr, r)
        try:
            obj = getattr(base.obj, attr)
        except AttributeError:
            raise ScriptError(
                f"'{base.spelled}' has no attribute '{attr}'", r, doc="globals-and-closures"
            ) from None
        variable = base.origin.child(("attr", attr))
        spelled = f"{base.spelled}.{attr}"
        if isinstance(obj, MethodType):  # a new object at each read: guard its function
            if self.read_once is not None:
                self.read_once(variable.child(("attr", "__func__")), obj.__func__, None)
            return PyObject(obj, spelled)
        return self.free_object(variable, obj, spelled, r)

    @staticmethod
    def python_object(obj: object, name: str) -> PyObject:
        named = isinstance(obj, ModuleType) or callable(obj)
        return PyObject(obj, describe(obj) if named else name)

    def object_attribute(self, base: PyObject, attr: str, r: SourceRange) -> PyObject:
        try:
            obj = getattr(base.obj, attr)
        except AttributeError:
            owner = "module " if isinstance(base.obj, ModuleType) else ""
            raise ScriptError(
                f"{owner}'{base.spelled}' has no attribute '{attr}'", r, doc="globals-and-closures"
            ) from None
        if isinstance(base.obj, ModuleType):
            return PyObject(obj, f"{base.spelled}.{attr}")
        return self.python_object(obj, f"{base.spelled}.{attr}")

    def object_value(self, found: PyObject, r: SourceRange) -> Value:
        """A compile-time object used as a value: a constant, or an error saying why not."""
        value = self.python_constant(found.obj, r)
        if value is not None:
            return value
        obj = found.obj
        if isinstance(obj, ModuleType):
            raise ScriptError(
                f"module '{obj.__name__}' cannot be used as a value", r, doc="globals-and-closures"
            )
        if isinstance(obj, np.ndarray):
            raise ScriptError(
                f"'{found.spelled}' is a NumPy array from outside the function, read here by a "
                "function that another one calls, or as an attribute: pass it as an argument "
                "(the function you compile or differentiate may read global arrays by name)",
                r,
                doc="globals-and-closures",
            )
        if callable(obj) or isinstance(obj, LocalFunction):
            raise ScriptError(
                f"'{found.spelled}' can only be called, not used as a value", r, doc="lambda"
            )
        kind = type(obj).__name__
        raise ScriptError(
            f"'{found.spelled}' (a {kind}) cannot be used in a scripted function",
            r,
            doc="globals-and-closures",
        )

    # ---- expressions ------------------------------------------------------------------------

    def emit_expr(self, expr: syntax.Expr) -> Value:
        if isinstance(expr, syntax.Name | syntax.Attribute):
            found = self.resolve(expr)
            return self.object_value(found, expr.range) if isinstance(found, PyObject) else found
        emit = _EXPRESSIONS.get(type(expr))
        if emit is None:
            raise ScriptError(f"{type(expr).__name__} expressions are not supported", expr.range)
        return emit(self, expr)

    def emit_formatted_string(self, expr: syntax.FormattedString) -> Value:
        """An f-string as one prim::Format of a template and its fields' values (Note
        [f-strings] in `frontend.parse`)."""
        template: list[str] = []
        values: list[Value] = []
        for part in expr.parts:
            if isinstance(part, str):
                template.append(part.replace("{", "{{").replace("}", "}}"))
            else:
                values.append(self.emit_expr(part.value))
                spec = f":{part.spec}" if part.spec else ""
                template.append("{" + part.conversion + spec + "}")
        text = self.constant("".join(template), STR, expr.range)
        return self.insert("prim::Format", [text, *values], [STR], expr.range).output

    def emit_constant(self, expr: syntax.Constant) -> Value:
        value = expr.value
        if value is Ellipsis:
            raise ScriptError("'...' is only allowed in a subscript", expr.range, doc="indexing")
        constant = self.python_constant(value, expr.range)
        assert constant is not None  # every other literal is a constant
        return constant

    def emit_tuple(self, expr: syntax.Tuple) -> Value:
        return self.make_tuple([self.emit_expr(e) for e in expr.elts], expr.range)

    def make_tuple(self, items: Sequence[Value], r: SourceRange) -> Value:
        ty = TupleType(tuple(v.ty for v in items))
        return self.insert("prim::TupleConstruct", items, [ty], r).output

    # ---- containers known while compiling: Note [Containers known while compiling] ----------

    def make_tree(self, items: Sequence[Value], tree: Tree, r: SourceRange) -> Value:
        """The tuple that holds a container of type ``tree`` with these items."""
        value = self.insert("prim::TupleConstruct", items, [tree.ir_type], r).output
        self.trees[value] = tree
        return value

    def tree_of(self, value: Value) -> Tree | None:
        """The container ``value`` holds, if its structure is known: a container argument or
        one built here, or a tuple literal with one among its items."""
        found = self.trees.get(value)
        if found is None and value.node.kind == "prim::TupleConstruct":
            items = [self.type_of(v) for v in value.node.inputs]
            if any(isinstance(item, Tree | KnownString) for item in items):
                found = Tree(tuple, (), tuple(items))
        return found

    def type_of(self, value: Value) -> Type:
        """``value``'s `Tree` when it holds a known container, its `KnownString` when it is a string
        constant (Note [Strings known while compiling] in `frontend.trees`), else its IR
        type."""
        if value.ty == STR and value.node.kind == "prim::Constant":
            return KnownString(value.node.attrs["value"])
        return self.tree_of(value) or value.ty

    def result_tree(self, value: Value) -> Tree | None:
        """`tree_of` for a function's result, where a list literal holding containers is one
        too (its items are rebuilt as the plain function returns them)."""
        if value.node.kind == "prim::ListConstruct":
            items = [self.result_tree(v) or v.ty for v in value.node.inputs]
            if any(isinstance(item, Tree) for item in items):
                return Tree(list, (), tuple(items))
            return None
        return self.tree_of(value)

    def tree_item(self, base: Value, tree: Tree, position: int, r: SourceRange) -> Value:
        """The item at ``position`` of the container ``base`` holds."""
        child = tree.children[position]
        if isinstance(child, KnownString):  # Note [Strings known while compiling] in frontend.trees
            return self.constant(child.value, STR, r)
        if base.node.kind == "prim::TupleConstruct":
            item = base.node.inputs[position]
        else:
            index = self.constant(position, INT, r)
            child = tree.children[position]
            item = self.insert("prim::TupleIndex", [base, index], [ir_type_of(child)], r).output
        child = tree.children[position]
        if isinstance(child, Tree):
            self.trees[item] = child
        return item

    def tree_key(self, base: Value, tree: Tree, key: Value, r: SourceRange) -> Value:
        """``base[key]`` with ``key`` known while compiling: a dict's key, or an int index."""
        if key.node.kind != "prim::Constant":
            raise ScriptError(
                f"an index into a {tree.kind_name} argument must be known while compiling "
                "(a constant, or a loop variable over a range of constant length)",
                r,
                doc="lists-tuples-and-dicts",
            )
        found = key.node.attrs.get("value")
        if tree.is_dict:
            position = tree.position(found)
            if position is None:
                known = ", ".join(repr(k) for k in tree.keys)
                raise ScriptError(
                    f"KeyError: {found!r} is not a key of this dict ({known})",
                    r,
                    doc="lists-tuples-and-dicts",
                )
            return self.tree_item(base, tree, position, r)
        size = len(tree.children)
        if type(found) is not int:
            raise ScriptError(
                f"{tree.kind_name} indices must be integers, not {type(found).__name__}",
                r,
                doc="lists-tuples-and-dicts",
            )
        if not -size <= found < size:
            raise ScriptError(
                f"{tree.kind_name} index {found} out of range (length {size})",
                r,
                doc="lists-tuples-and-dicts",
            )
        return self.tree_item(base, tree, found % size, r)

    def emit_dict(self, expr: syntax.Dict) -> Value:
        """``{"W": w, "b": b}``: a container known while compiling, its keys constants."""
        entries: dict[Any, Value] = {}
        for key_expr, value_expr in zip(expr.keys, expr.values, strict=True):
            key = self.emit_expr(key_expr)
            if key.node.kind != "prim::Constant" or key.ty not in (STR, INT, BOOL, FLOAT):
                raise ScriptError(
                    "a dict key must be a string or a number known while compiling",
                    key_expr.range,
                    doc="lists-tuples-and-dicts",
                )
            entries[key.node.attrs.get("value")] = self.emit_expr(value_expr)
        items = list(entries.values())
        tree = Tree(dict, tuple(entries), tuple(self.type_of(v) for v in items))
        return self.make_tree(items, tree, expr.range)

    def emit_list(self, expr: syntax.List) -> Value:
        items = [self.emit_expr(e) for e in expr.elts]
        # ``[]`` is ``Nothing[]``: what is appended to it decides its element type.
        ty = ListType(join_all([v.ty for v in items], NOTHING))
        return self.insert("prim::ListConstruct", items, [ty], expr.range).output

    def emit_binop(self, expr: syntax.BinOp) -> Value:
        # `a + b + c + ...` nests to the left: walk that spine in a loop, not by recursion, so
        # that a chain as long as Python accepts compiles. Operands are emitted left to right.
        spine = [expr]
        while isinstance(spine[-1].left, syntax.BinOp):
            spine.append(spine[-1].left)
        value = self.emit_expr(spine[-1].left)
        for node in reversed(spine):
            value = self.binary(node.op, value, self.emit_expr(node.right), node.range)
        return value

    def binary(self, op: str, left: Value, right: Value, r: SourceRange) -> Value:
        if op not in ATEN_BINARY:
            raise ScriptError(f"operator '{op}' is not supported", r, doc="operators")
        if op == "%" and left.ty == STR:  # refused as f-strings are: no strings at run time
            raise ScriptError("string formatting with '%' is not supported", r, doc="strings")
        if STR in (left.ty, right.ty) and {left.ty, right.ty} <= {STR, INT}:
            return self.string_binary(op, left, right, r)
        if is_scalar(left.ty) and is_scalar(right.ty):
            if op == "@":
                raise ScriptError("'@' needs arrays, not Python numbers", r, doc="operators")
            return self.apply(f"prim::{PRIM_BINARY[op]}", [left, right], r)
        if op == "@":
            for value in (left, right):
                if not value.ty.is_subtype_of(TENSOR):
                    raise ScriptError(f"'@' needs arrays, got {value.ty}", r, doc="operators")
        return self.apply(f"aten::{ATEN_BINARY[op]}", [left, right], r)

    def string_binary(self, op: str, left: Value, right: Value, r: SourceRange) -> Value:
        """``mode + "!"`` or ``"-" * 3``, computed while compiling: strings are known then
        (Note [Strings known while compiling] in `frontend.trees`)."""
        a, b = constant_value(left), constant_value(right)
        joined = op == "+" and isinstance(a, str) and isinstance(b, str)
        repeated = op == "*" and {type(a), type(b)} == {str, int}
        if not (joined or repeated):
            raise ScriptError(
                f"'{op}' on strings: strings are joined (+) or repeated (* an int) while "
                "compiling, when both sides are known",
                r,
                doc="strings",
            )
        result = self.python_constant(a + b if joined else a * b, r)
        assert result is not None
        return result

    def emit_unaryop(self, expr: syntax.UnaryOp) -> Value:
        # `- - - x` nests as deep as it is long: walk it in a loop, as for binary chains.
        chain = [expr]
        while isinstance(chain[-1].operand, syntax.UnaryOp):
            chain.append(chain[-1].operand)
        value = self.unary_of_operand(chain.pop())
        for node in reversed(chain):
            value = self.unary(node.op, value, node.range)
        return value

    def unary_of_operand(self, expr: syntax.UnaryOp) -> Value:
        """A unary operator applied to an operand that is no unary operation."""
        operand = expr.operand
        if (
            expr.op == "-"
            and isinstance(operand, syntax.Constant)
            and isinstance(operand.value, int | float)
            and not isinstance(operand.value, bool)
        ):
            return self.emit_constant(syntax.Constant(-operand.value, range=expr.range))
        return self.unary(expr.op, self.emit_expr(operand), expr.range)

    def unary(self, op: str, value: Value, r: SourceRange) -> Value:
        if op == "not":
            return self.apply("prim::not", [value], r)
        if op == "-":
            kind = "prim::neg" if is_scalar(value.ty) else "aten::neg"
            return self.apply(kind, [value], r)
        if op == "~":
            kind = "prim::invert" if is_scalar(value.ty) else "aten::invert"
            return self.apply(kind, [value], r)
        if value.ty in (INT, FLOAT, SCALAR):  # unary plus of a Python number is the number
            return value
        if value.ty is BOOL:
            return self.apply("prim::int", [value], r)
        return self.apply("aten::positive", [value], r)

    def emit_boolop(self, expr: syntax.BoolOp) -> Value:
        return self.bool_chain(expr.op, expr.values, expr.range)

    def bool_chain(self, op: str, values: Sequence[syntax.Expr], r: SourceRange) -> Value:
        # See Note [Boolean operators]: `a and rest` is `rest if a else a`.
        first = self.emit_expr(values[0])
        if len(values) == 1:
            return first
        test = self.to_bool(first, r)

        def rest() -> Value:
            return self.bool_chain(op, values[1:], r)

        def same() -> Value:
            return first

        return self.if_value(test, *((rest, same) if op == "and" else (same, rest)), r)

    def emit_compare(self, expr: syntax.Compare) -> Value:
        static = self.static_compare(expr)
        if static is not None:
            return self.constant(static, BOOL, expr.range)
        left = self.emit_expr(expr.left)
        return self.compare_chain(left, expr.ops, expr.comparators, expr.range)

    def compare_chain(
        self,
        left: Value,
        ops: Sequence[str],
        comparators: Sequence[syntax.Expr],
        r: SourceRange,
    ) -> Value:
        """``a < b < c`` is ``a < b and b < c`` with ``b`` evaluated once."""
        right = self.emit_expr(comparators[0])
        result = self.compare(ops[0], left, right, r)
        if len(ops) == 1:
            return result

        def rest() -> Value:
            return self.compare_chain(right, ops[1:], comparators[1:], r)

        return self.if_value(self.to_bool(result, r), rest, lambda: result, r)

    def compare(self, op: str, left: Value, right: Value, r: SourceRange) -> Value:
        if op not in COMPARISONS:
            raise ScriptError(f"'{op}' comparisons are not supported", r, doc="operators")
        constants = all(
            v.node.kind == "prim::Constant" and v.ty in (INT, FLOAT, BOOL, STR)
            for v in (left, right)
        )
        if STR in (left.ty, right.ty) or constants:  # known while compiling: decided here
            known = [v.node.attrs.get("value") for v in (left, right)]
            if not constants:
                # An unannotated parameter is an array until a call gives it a string: held
                # back (Note [Compiling for containers] in autodiff.script).
                array = any(isinstance(v.ty, TensorType) for v in (left, right))
                raise (ContainerUseError if array else ScriptError)(
                    "strings can only be compared when known while compiling: pass the string "
                    "itself (a constant, an argument or a default of the function called)",
                    r,
                    doc="strings",
                )
            try:
                outcome = _PYTHON_COMPARISONS[op](*known)
            except TypeError as error:
                raise ScriptError(f"TypeError: {error}", r, doc="operators") from None
            return self.constant(bool(outcome), BOOL, r)
        if op in ("==", "!=") and _of_plain_items(left.ty) and _of_plain_items(right.ty):
            same = self.apply("prim::sequence_eq", [left, right], r)  # ``x.shape == (3, 4)``
            return same if op == "==" else self.apply("prim::not", [same], r)
        scalar = is_scalar(left.ty) and is_scalar(right.ty)
        return self.apply(f"{'prim' if scalar else 'aten'}::{COMPARISONS[op]}", [left, right], r)

    def static_compare(self, expr: syntax.Compare) -> bool | None:
        """``x is None`` and ``x is not None``, decided from ``x``'s type; None for other
        comparisons."""
        if len(expr.ops) != 1 or expr.ops[0] not in ("is", "is not"):
            return None
        left, right = expr.left, expr.comparators[0]
        if _is_none_literal(left):
            left, right = right, left
        if not _is_none_literal(right):
            raise ScriptError(
                "'is' is only supported to compare with None", expr.range, doc="operators"
            )
        ty = self.emit_expr(left).ty if not _is_none_literal(left) else NONE
        if ty in (ANY, SCALAR) or (ty is not NONE and NONE.is_subtype_of(ty)):
            raise ScriptError(
                f"cannot decide at compile time whether a {ty} is None", expr.range, doc="operators"
            )
        return (ty is NONE) == (expr.ops[0] == "is")

    def emit_ifexp(self, expr: syntax.IfExp) -> Value:
        test = self.condition(expr.test)
        if isinstance(test, bool):
            return self.emit_expr(expr.body if test else expr.orelse)
        return self.if_value(
            test, lambda: self.emit_expr(expr.body), lambda: self.emit_expr(expr.orelse), expr.range
        )

    # ---- conditions -------------------------------------------------------------------------

    def to_bool(self, value: Value, r: SourceRange) -> Value:
        return value if value.ty is BOOL else self.apply("prim::bool", [value], r)

    def condition(self, expr: syntax.Expr) -> Value | bool:
        """The truth of ``expr`` as a bool value, or a Python bool when known at compile time.
        See Note [Boolean operators]."""
        if isinstance(expr, syntax.Constant) and expr.value is not Ellipsis:
            return bool(expr.value)
        if isinstance(expr, syntax.Compare):
            static = self.static_compare(expr)
            if static is not None:
                return static
        if isinstance(expr, syntax.UnaryOp) and expr.op == "not":
            inner = self.condition(expr.operand)
            if isinstance(inner, bool):
                return not inner
            return self.apply("prim::not", [inner], expr.range)
        if isinstance(expr, syntax.BoolOp):
            return self.condition_chain(expr.op, expr.values, expr.range)
        value = self.emit_expr(expr)
        if value.ty is NONE:
            return False
        if value.node.kind == "prim::Constant" and value.ty in (INT, FLOAT, BOOL, STR):
            return bool(value.node.attrs.get("value"))  # ``name == "W"`` of a dict's keys
        return self.to_bool(value, expr.range)

    def condition_chain(
        self, op: str, values: Sequence[syntax.Expr], r: SourceRange
    ) -> Value | bool:
        first = self.condition(values[0])
        if len(values) == 1:
            return first
        if isinstance(first, bool):
            # `True and rest` and `False or rest` are decided by the rest; the others by `first`.
            return self.condition_chain(op, values[1:], r) if first == (op == "and") else first

        def rest() -> Value:
            found = self.condition_chain(op, values[1:], r)
            return self.constant(found, BOOL, r) if isinstance(found, bool) else found

        def decided() -> Value:
            return self.constant(op == "or", BOOL, r)

        return self.if_value(first, *((rest, decided) if op == "and" else (decided, rest)), r)

    # ---- hooks the subclasses provide -------------------------------------------------------

    def emit_call(self, expr: syntax.Call) -> Value:
        raise NotImplementedError

    def emit_value_attribute(self, value: Value, attr: str, r: SourceRange) -> Value:
        raise NotImplementedError

    def emit_subscript(self, expr: syntax.Subscript) -> Value:
        raise NotImplementedError


_PYTHON_COMPARISONS: dict[str, Callable[[Any, Any], Any]] = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


def constant_value(value: Value | None) -> Any:
    """The value of a prim::Constant, or None for anything else."""
    if value is None or value.node.kind != "prim::Constant":
        return None
    return value.node.attrs.get("value")


def _refuse_starred(expr: syntax.Starred) -> Value:
    raise ScriptError(
        "'*' unpacking is supported among the arguments of a call: write the items out here",
        expr.range,
        doc="assignment",
    )


def _refuse_lambda(expr: syntax.Lambda) -> Value:
    raise ScriptError(
        "a lambda here would be a value: assign it to a name (f = lambda x: ...) and call it",
        expr.range,
        doc="lambda",
    )


def _is_none_literal(expr: syntax.Expr) -> bool:
    return isinstance(expr, syntax.Constant) and expr.value is None


_EXPRESSIONS: dict[type, Callable[[Any, Any], Value]] = {
    syntax.Constant: ExpressionEmitter.emit_constant,
    syntax.FormattedString: ExpressionEmitter.emit_formatted_string,
    syntax.Tuple: ExpressionEmitter.emit_tuple,
    syntax.List: ExpressionEmitter.emit_list,
    syntax.Dict: ExpressionEmitter.emit_dict,
    syntax.BinOp: ExpressionEmitter.emit_binop,
    syntax.UnaryOp: ExpressionEmitter.emit_unaryop,
    syntax.BoolOp: ExpressionEmitter.emit_boolop,
    syntax.Compare: ExpressionEmitter.emit_compare,
    syntax.IfExp: ExpressionEmitter.emit_ifexp,
    syntax.Call: lambda self, expr: self.emit_call(expr),
    syntax.Comprehension: lambda self, expr: self.emit_comprehension(expr),  # frontend.iteration
    syntax.Lambda: lambda self, expr: _refuse_lambda(expr),
    syntax.Starred: lambda self, expr: _refuse_starred(expr),
    syntax.Subscript: lambda self, expr: self.emit_subscript(expr),
}


def _of_plain_items(ty: Type) -> bool:
    """Whether ``ty`` is a tuple or list of numbers and strings, compared as Python compares."""
    if isinstance(ty, TupleType):
        return all(t in (INT, FLOAT, BOOL, STR) for t in ty.elems)
    return isinstance(ty, ListType) and ty.elem in (INT, FLOAT, BOOL, STR)
