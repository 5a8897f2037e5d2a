"""Calls and attributes: NumPy functions, array methods and attributes, Python builtins, and
calls to other Python functions (``prim::CallFunction[callee="..."]``).

What a call means is decided at compile time from the object the callee expression denotes
(`frontend.resolve`). List literals passed straight to a NumPy function become tuples
(``np.stack([a, b])`` is ``aten::stack(prim::TupleConstruct(a, b))``): the shape rules of
concatenate and stack know each element's shape only for a tuple, and NumPy treats both alike.

Note [Python numbers as arrays]
A NumPy function converts what it is given with ``np.asarray``: ``np.sum(2.0)`` sums a 0-d
float64 array and returns ``np.float64(2.0)``. Where an operator's schema wants a ``Tensor`` and
the argument is a Python number (an ``int``, ``float`` or ``bool`` parameter, or arithmetic on
them), the call gets ``aten::asarray`` of the number, which makes that 0-d array and passes a
gradient straight through (TorchScript's ``prim::NumToTensor``). The receiver of a method is
never converted: ``(2.0).sum()`` fails in Python too. ``np.array`` and ``np.asarray`` of a list
or tuple literal stack its items, each converted so (``np.array([1.0, x, 2.0 * y])`` is
``np.stack`` of three arrays of one shape, nested literals stacked first); ``np.asarray(x)`` of
an array is ``x`` itself, an alias as in NumPy, where ``np.array(x)`` is a copy.
"""

from __future__ import annotations

import builtins
import inspect
from collections.abc import Callable, Sequence
from types import FunctionType
from typing import Any, cast

import numpy as np

from frontend import syntax
from frontend.einsum_sublists import subscripts_call
from frontend.environment import LocalFunction, PyObject
from frontend.errors import ContainerUseError, ScriptError
from frontend.expressions import ExpressionEmitter, is_scalar
from frontend.lists import refuse_list_method
from frontend.objects import (
    is_bound_callable,
    refuse_foreign_method,
)
from frontend.opaque_calls import stand_in
from frontend.python_builtins import MATH_FUNCTIONS, PythonBuiltinEmitter
from frontend.random_calls import RANDOM_METHODS, makes_generator
from frontend.resolve import (
    ATTRIBUTES,
    BUILTINS,
    METHODS,
    BindError,
    bind,
    function_spelling,
    is_numpy,
    is_scipy,
    lookup,
    numpy_name,
)
from frontend.trees import Tree
from ir.graph import Graph, Value
from ir.ops import OPS, Argument
from ir.ops.call_spelling import constant
from ir.ops.scipy_linalg import LINALG_OPS
from ir.ops.scipy_signal import SIGNAL_OPS
from ir.ops.scipy_special import CONSTANT_VARIANTS, SCIPY_EXTRA, SCIPY_OPS, scipy_installed
from ir.ops.scipy_stats import STATS_OPS
from ir.ops.spellings import Spelling
from ir.source import SourceRange
from ir.types import (
    ANY,
    FLOAT,
    GENERATOR,
    INT,
    NONE,
    STR,
    TENSOR,
    ListType,
    TensorType,
    TupleType,
    Type,
)

# Compiles a called Python function for arguments of the given types (a `Tree` for a container
# known while compiling): -> (module key, result type, a `Tree` when it returns a container).
CallHook = Callable[[Callable[..., Any], Sequence[Type], SourceRange], tuple[str, Type]]

# ``np.add.at`` is a method of the ufunc: each attribute access makes a new bound method, equal
# to the others, so it is looked up by equality.
_ADD_AT: dict[object, str] = {np.add.at: "aten::add_at_"}

# The global stream np.random's functions draw from (Note [Random draws] in ir.ops.random).
_GLOBAL_STREAM = np.random.mtrand._rand

_DICT_METHODS = frozenset({"keys", "values", "items", "get"})
_SCIPY_OPERATORS = SCIPY_OPS | STATS_OPS | SIGNAL_OPS | LINALG_OPS  # their kernels call SciPy
_LIST_METHODS = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "sort"})


def default_call_hook(
    fn: Callable[..., Any], args: Sequence[Type], r: SourceRange
) -> tuple[str, Type]:
    """Name the callee by its qualified name, result type unknown (`emit_function` alone)."""
    return fn.__qualname__, ANY


class CallEmitter(PythonBuiltinEmitter):
    call_hook: CallHook
    callees: dict[str, Callable[..., Any]]
    # Provided by `frontend.iteration` and `frontend.local_functions` in the FunctionEmitter.
    static_items: Callable[[syntax.Expr], list[Value]]
    emit_local_call: Callable[[LocalFunction, syntax.Call], Value]
    known_items: Callable[[Value, SourceRange], list[Value] | None]  # `frontend.lists`
    # Provided by `frontend.random_calls`.
    emit_random_method: Callable[[Value, str, syntax.Call], Value]
    emit_generator_call: Callable[[object, str, syntax.Call], Value]
    # Provided by `frontend.builtins`: Note [Compile-time builtins] there.
    emit_compile_time_builtin: Callable[[object, syntax.Call], Value | None]
    # Provided by `frontend.bound_calls`: a bound method or a partial called.
    emit_bound_call: Callable[[PyObject, syntax.Call], Value]
    # The caller's own hidden inputs for the free variables of a callee compiled under this
    # key, passed after its parameters (Note [Free variables] in `frontend.compile`).
    hidden_arguments: Callable[[str], list[Value]]
    # Whether the callee compiled under this key returns a list it built (`builds_list`).
    returns_list: Callable[[str], bool]
    # Provided by `frontend.signatures`: Note [Unpacking in calls], Note [Variadic parameters].
    expand_call: Callable[[syntax.Call], syntax.Call]
    bind_call: Callable[
        [str, inspect.Signature, syntax.Call, Callable[[str], Value]], dict[str, Value]
    ]
    # Provided by `frontend.function_calls`: Note [Calling compiled functions] there.
    emit_function_call: Callable[[FunctionType, syntax.Call], Value]
    emit_graph_call: Callable[[Callable[[Sequence[Type]], Graph], syntax.Call], Value]
    # Provided by `frontend.opaque_calls`.
    emit_opaque_call: Callable[[object, syntax.Call], Value]
    # Provided by `frontend.checkpoint_calls`: Note [Checkpoints] in `autodiff.checkpoints`.
    emit_checkpoint_call: Callable[[object, syntax.Call], Value]

    def emit_call(self, expr: syntax.Call) -> Value:
        expr = self.expand_call(expr)
        func = expr.func
        if isinstance(func, syntax.Attribute):
            base = self.resolve(func.value)
            if isinstance(base, Value):
                return self.emit_method(base, func.attr, expr)
            target: Value | PyObject = self.attribute_of(base, func.attr, func.range)
        else:
            target = self.resolve(func)
        if isinstance(target, Value):
            raise ScriptError(
                f"calling a value of type {target.ty} is not supported: it is not a function",
                func.range,
                doc="helpers-and-recursion",
            )
        obj = target.obj
        if isinstance(obj, LocalFunction):
            return self.emit_local_call(obj, expr)
        found = self.emit_compile_time_builtin(obj, expr)
        if found is not None:
            return found
        builtin = lookup(BUILTINS, obj)
        if builtin is not None:
            return self.emit_builtin(builtin, expr)
        if lookup(_ADD_AT, obj) is not None:
            return self.emit_add_at(expr)
        if getattr(obj, "__self__", None) is _GLOBAL_STREAM:  # np.random.randn, normal, ...
            name = getattr(obj, "__name__", "")
            if name in RANDOM_METHODS:
                global_stream = self.constant(None, NONE, expr.range)
                return self.emit_random_method(global_stream, name, expr)
        if makes_generator(obj):  # np.random.default_rng(seed), np.random.seed(s), ...
            return self.emit_generator_call(obj, target.spelled, expr)
        if obj is np.array or obj is np.asarray:
            converted = self.emit_array(obj is np.array, expr)
            if converted is not None:
                return converted
        spelling = function_spelling(obj)
        if spelling is not None:
            if obj is np.einsum:
                expr = subscripts_call(expr)
            return self.emit_op(spelling, expr, None)
        if is_scipy(obj) and (standing := stand_in(obj)) is not None:
            return self.emit_opaque_call(standing, expr)  # Note [Opaque calls]
        if is_numpy(obj) or is_scipy(obj):
            raise ScriptError(
                f"{target.spelled} is not supported", expr.range, doc="numpy-functions"
            )
        if getattr(obj, "__module__", None) == "math" or any(obj is f for f in MATH_FUNCTIONS):
            return self.emit_math(obj, target.spelled, expr)
        if obj is isinstance:
            return self.emit_isinstance(expr)
        if hasattr(obj, "__autodiff_opaque__"):  # Note [Opaque calls] in frontend.opaque_calls
            return self.emit_opaque_call(obj, expr)
        checkpointed = getattr(obj, "__autodiff_checkpoint__", None)
        if checkpointed is not None:  # Note [Checkpoints] in autodiff.checkpoints
            return self.emit_checkpoint_call(checkpointed, expr)
        if isinstance(obj, FunctionType):
            # a library function may name a twin written in the subset (``ad.flatten``)
            twin = getattr(obj, "__autodiff_source__", None)
            return self.emit_function_call(twin if isinstance(twin, FunctionType) else obj, expr)
        if is_bound_callable(obj):  # Note [Reading objects from outside] in frontend.objects
            return self.emit_bound_call(target, expr)
        source = getattr(obj, "__autodiff_source__", None)
        if isinstance(source, FunctionType):
            return self.emit_function_call(source, expr)
        graph_of = getattr(obj if source is None else source, "__autodiff_graph__", None)
        if graph_of is not None:
            return self.emit_graph_call(graph_of, expr)
        name = getattr(obj, "__name__", "")
        if getattr(builtins, name, None) is obj:
            raise ScriptError(f"builtin '{name}' is not supported", expr.range, doc="builtins")
        refuse_foreign_method(obj, target.spelled, expr.range)
        raise ScriptError(
            f"'{target.spelled}' cannot be called from a scripted function",
            expr.range,
            doc="helpers-and-recursion",
        )

    # ---- operators from the table -----------------------------------------------------------

    def emit_op(self, spelling: Spelling, call: syntax.Call, receiver: Value | None) -> Value:
        """Bind the call's arguments to the operator's schema (filling defaults) and insert it."""
        if spelling.op in _SCIPY_OPERATORS and not scipy_installed():
            raise ScriptError(
                f"{spelling.name} needs SciPy, which is not installed: {SCIPY_EXTRA}",
                call.range,
                doc="numpy-functions",
            )
        try:
            bound = bind(spelling, len(call.args), [k.name for k in call.keywords])
        except BindError as error:
            raise ScriptError(
                error.message, self._argument_range(call, error.at), doc="numpy-functions"
            ) from None
        positional = [self.emit_argument(arg) for arg in call.args]
        keywords = {k.name: self.emit_argument(k.value) for k in call.keywords}
        inputs: list[Value] = []
        schema = spelling.schema
        for argument, source in zip(schema.arguments, bound, strict=True):
            r = self._argument_range(call, source.key)
            if source.kind == "receiver":
                assert receiver is not None
                value = receiver
            elif source.kind == "positional":
                value = positional[int(source.key or 0)]
            elif source.kind == "keyword":
                value = keywords[str(source.key)]
            elif source.kind == "packed":
                value = self.make_tuple(positional[int(source.key or 0) :], call.range)
            else:
                value = self.default(argument, call.range)
            if value.ty == NONE and self._none_is_default(spelling, argument, source.kind):
                value = self.default(argument, call.range)  # ``b=None``: the default
            if source.kind != "receiver" and is_scalar(value.ty) and argument.ty == TENSOR:
                value = self.apply("aten::asarray", [value], r)  # Note [Python numbers as arrays]
            self.check_operand(spelling, argument, value, r)
            inputs.append(value)
        return self.apply_variant(spelling, inputs, call)

    def apply_variant(self, spelling: Spelling, inputs: list[Value], call: syntax.Call) -> Value:
        """Insert the operator, or the variant its constant last argument names (Note [Constant
        variants] in `ir.ops.scipy_special`: ``logsumexp(..., return_sign=True)``)."""
        variant = CONSTANT_VARIANTS.get(spelling.op)
        if variant is None:
            return self.apply(spelling.op, inputs, call.range)
        argument, op = variant
        flag = constant(inputs[-1])
        if type(flag) is not bool:
            raise ScriptError(
                f"argument '{argument}' of {spelling.name} must be a constant True or False",
                call.range,
                doc="numpy-functions",
            )
        if flag:
            return self.apply(op, inputs[:-1], call.range)
        return self.apply(spelling.op, inputs, call.range)

    @staticmethod
    def _none_is_default(spelling: Spelling, argument: Argument, kind: str) -> bool:
        """Whether a None passed for ``argument`` stands for its default (``b=None`` in Note
        [NumPy spellings] in `ir.ops.spellings`)."""
        if kind not in ("positional", "keyword"):
            return False
        return any(p.none_is_default and p.argument == argument.name for p in spelling.params)

    def emit_argument(self, expr: syntax.Expr) -> Value:
        if isinstance(expr, syntax.List):
            return self.make_tuple([self.emit_expr(e) for e in expr.elts], expr.range)
        return self.emit_expr(expr)

    def default(self, argument: Argument, r: SourceRange) -> Value:
        value = self.python_constant(argument.default, r)
        assert value is not None, f"schema default of {argument.name} is not a constant"
        return value

    def check_operand(
        self, spelling: Spelling, argument: Argument, value: Value, r: SourceRange
    ) -> None:
        if value.ty.is_subtype_of(argument.ty):
            return
        name = numpy_name(spelling, argument.name)
        if spelling.method and argument is spelling.schema.arguments[0]:
            raise ScriptError(
                f"{spelling.name} needs an array, not a value of type {value.ty}",
                r,
                doc="numpy-functions",
            )
        raise ScriptError(
            f"argument '{name}' of {spelling.name} must be {argument.ty}, not {value.ty}",
            r,
            doc="numpy-functions",
        )

    @staticmethod
    def _argument_range(call: syntax.Call, at: int | str | None) -> SourceRange:
        if isinstance(at, int) and at < len(call.args):
            return call.args[at].range
        if isinstance(at, str):
            for keyword in call.keywords:
                if keyword.name == at:
                    return keyword.range
        return call.range

    # ---- np.array and np.asarray ------------------------------------------------------------

    def emit_array(self, copies: bool, call: syntax.Call) -> Value | None:
        """``np.array(items)``/``np.asarray(items)`` of a list or tuple literal, and
        ``np.asarray(x)`` of anything; None for ``np.array(x)`` of a value, the copy that the
        table's ``aten::copy`` spells (Note [Python numbers as arrays])."""
        name = "np.array" if copies else "np.asarray"
        first = call.args[0] if call.args else None
        literal = isinstance(first, syntax.List | syntax.Tuple)
        options = len(call.args) > 1 or bool(call.keywords)
        if copies and not literal and options:
            return None
        if first is None or options:
            extra = [*call.args[1:], *call.keywords]
            at = extra[0].range if extra else call.range
            raise ScriptError(
                f"{name}() takes only the array-like here: no dtype or options",
                at,
                doc="numpy-functions",
            )
        if isinstance(first, syntax.List | syntax.Tuple):
            return self.stacked_items(first)
        if isinstance(first, syntax.Comprehension) and first.kind != "list":
            raise ScriptError(
                f"{name}() of a {first.kind} expression is a 0-d array of objects in NumPy: "
                "write a list comprehension, [... for ...]",
                first.range,
                doc="numpy-functions",
            )
        value = self.emit_expr(first)
        if isinstance(value.ty, ListType | TupleType) and not _is_dict(self.tree_of(value)):
            stacked = self.stacked_value(value, call.range)
            if stacked is not None:
                return stacked
        if is_scalar(value.ty):
            return self.apply("aten::asarray", [value], call.range)
        if not value.ty.is_subtype_of(TENSOR):
            raise ScriptError(
                f"{name}() of a value of type {value.ty} is not supported",
                first.range,
                doc="numpy-functions",
            )
        return self.apply("aten::copy", [value], call.range) if copies else value

    def stacked_value(self, value: Value, r: SourceRange) -> Value | None:
        """The array NumPy builds from a list or tuple value (a comprehension, a list appended
        to in a loop): its items stacked, numbers as 0-d arrays; None when they are numbers
        whose count is known only at run time."""
        ty = value.ty
        elements = ty.elems if isinstance(ty, TupleType) else (cast(ListType, ty).elem,)
        if all(isinstance(ty, TensorType) for ty in elements):
            items = value
        else:
            known = self.known_items(value, r)
            if known is None or not all(
                is_scalar(v.ty) or isinstance(v.ty, TensorType) for v in known
            ):
                return None
            converted = [
                v if isinstance(v.ty, TensorType) else self.apply("aten::asarray", [v], r)
                for v in known
            ]
            items = self.make_tuple(converted, r)
        return self.apply("aten::stack", [items, self.constant(0, INT, r)], r)

    def stacked_items(self, literal: syntax.List | syntax.Tuple) -> Value:
        """The array NumPy builds from a list or tuple literal: its items (literals stacked
        first, Python numbers as 0-d arrays) stacked along a new first axis."""
        if not literal.elts:
            raise ScriptError(
                "np.array of an empty list is not supported: its shape and dtype are unknown",
                literal.range,
                doc="numpy-functions",
            )
        items: list[Value] = []
        for elt in literal.elts:
            if isinstance(elt, syntax.List | syntax.Tuple):
                items.append(self.stacked_items(elt))
                continue
            value = self.emit_expr(elt)
            if is_scalar(value.ty):
                value = self.apply("aten::asarray", [value], elt.range)
            elif not value.ty.is_subtype_of(TENSOR):
                raise ScriptError(
                    f"an item of an array literal must be an array or a number, not {value.ty}",
                    elt.range,
                    doc="numpy-functions",
                )
            items.append(value)
        axis = self.constant(0, INT, literal.range)
        return self.apply(
            "aten::stack", [self.make_tuple(items, literal.range), axis], literal.range
        )

    # ---- methods and attributes of values ---------------------------------------------------

    def emit_method(self, receiver: Value, name: str, call: syntax.Call) -> Value:
        ty = receiver.ty
        if ty == GENERATOR:
            if name not in RANDOM_METHODS:
                raise ScriptError(
                    f"the generator's method '{name}' is not supported: draws are "
                    f"{', '.join(sorted(RANDOM_METHODS - {'seed'}))}",
                    call.func.range,
                    doc="random-numbers",
                )
            return self.emit_random_method(receiver, name, call)
        tree = self.tree_of(receiver)
        if tree is not None and tree.is_dict and name in _DICT_METHODS:
            return self.dict_method(receiver, tree, name, call)
        if isinstance(ty, ListType | TupleType):
            if name in _LIST_METHODS:
                raise refuse_list_method(name, call)
            raise ScriptError(
                f"method '{name}' of a {ty} is not supported",
                call.range,
                doc="lists-tuples-and-dicts",
            )
        spelling = METHODS.get(name)
        if spelling is None:
            # a parameter typed as an array for want of knowing better may be a dict or a
            # generator: Note [Compiling for containers] in autodiff.script
            maybe_other = name in _DICT_METHODS or name in RANDOM_METHODS
            error = ContainerUseError if maybe_other else ScriptError
            raise error(f"ndarray.{name} is not supported", call.func.range, doc="numpy-functions")
        return self.emit_op(spelling, call, receiver)

    def dict_method(self, receiver: Value, tree: Tree, name: str, call: syntax.Call) -> Value:
        """``d.keys()``, ``d.values()``, ``d.items()``, ``d.get(key[, default])`` of a dict
        known while compiling: tuples built here, which a for loop unrolls."""
        r = call.range
        if call.keywords:
            raise ScriptError(
                f"dict.{name}() takes no keyword arguments",
                call.keywords[0].range,
                doc="lists-tuples-and-dicts",
            )
        args = [self.emit_expr(arg) for arg in call.args]
        if name == "get":
            if not 1 <= len(args) <= 2:
                raise ScriptError(
                    f"dict.get() takes 1 or 2 arguments ({len(args)} given)",
                    r,
                    doc="lists-tuples-and-dicts",
                )
            key = args[0]
            if key.node.kind != "prim::Constant":
                raise ScriptError(
                    "a dict key must be known while compiling",
                    call.args[0].range,
                    doc="lists-tuples-and-dicts",
                )
            position = tree.position(key.node.attrs.get("value"))
            if position is None:
                return args[1] if len(args) == 2 else self.constant(None, NONE, r)
            return self.tree_item(receiver, tree, position, r)
        if args:
            raise ScriptError(
                f"dict.{name}() takes no arguments ({len(args)} given)",
                r,
                doc="lists-tuples-and-dicts",
            )
        count = len(tree.children)
        keys = [self.python_constant(key, r) for key in tree.keys]
        if any(key is None for key in keys):
            raise ScriptError(
                f"dict.{name}() of a dict with keys of this kind", r, doc="lists-tuples-and-dicts"
            )
        values = [self.tree_item(receiver, tree, i, r) for i in range(count)]
        if name == "keys":
            items = cast("list[Value]", keys)
        elif name == "values":
            items = values
        else:
            items = [
                self.make_tuple([cast(Value, key), value], r)
                for key, value in zip(keys, values, strict=True)
            ]
        return self.make_tree(items, Tree(tuple, (), tuple(self.type_of(v) for v in items)), r)

    def emit_value_attribute(self, value: Value, attr: str, r: SourceRange) -> Value:
        tree = self.tree_of(value)
        if tree is not None and (tree.is_namedtuple or tree.kind is slice):
            position = tree.position(attr)
            if position is None:
                raise ScriptError(
                    f"'{tree.kind_name}' has no field '{attr}'", r, doc="lists-tuples-and-dicts"
                )
            return self.tree_item(value, tree, position, r)
        kind = ATTRIBUTES.get(attr)
        if kind is None or not value.ty.is_subtype_of(OPS[kind].schema.arguments[0].ty):
            error = ContainerUseError if isinstance(value.ty, TensorType) else ScriptError
            raise error(
                f"attribute '{attr}' of a value of type {value.ty} is not supported",
                r,
                doc="numbers-and-arrays",
            )
        defaults = [self.default(a, r) for a in OPS[kind].schema.arguments[1:]]
        return self.apply(kind, [value, *defaults], r)

    # ---- np.add.at ---------------------------------------------------------------------------

    def emit_add_at(self, call: syntax.Call) -> Value:
        """``np.add.at(a, indices, b)``: ``aten::add_at_(a, b, *items)``, None as NumPy returns
        (Note [Writes] in `frontend.subscripts`). ``indices`` is an int or an index array, or a
        tuple of them, one per axis."""
        if call.keywords or len(call.args) != 3:
            raise ScriptError(
                "np.add.at takes three positional arguments: a, indices, b",
                call.range,
                doc="writes-and-views",
            )
        target_expr, index_expr, values_expr = call.args
        target = self.emit_expr(target_expr)
        if not isinstance(target.ty, TensorType) and target.ty is not ANY:
            raise ScriptError(
                f"np.add.at needs an array, not a value of type {target.ty}",
                target_expr.range,
                doc="writes-and-views",
            )
        if isinstance(index_expr, syntax.Tuple):
            parts = [(self.emit_expr(e), e.range) for e in index_expr.elts]
        else:
            index = self.emit_expr(index_expr)
            if isinstance(index.ty, TupleType):
                parts = [
                    (item, index_expr.range) for item in self.unpack_tuple(index, index_expr.range)
                ]
            else:
                parts = [(index, index_expr.range)]
        items = [self.add_at_item(value, r) for value, r in parts]
        values = self.emit_expr(values_expr)
        self.apply("aten::add_at_", [target, values, *items], call.range)
        return self.constant(None, NONE, call.range)

    def add_at_item(self, value: Value, r: SourceRange) -> Value:
        if value.ty in (INT, ANY) or isinstance(value.ty, TensorType):
            return value
        raise ScriptError(
            f"an index of np.add.at must be an int or an index array, not {value.ty}",
            r,
            doc="writes-and-views",
        )

    def unpack_tuple(self, value: Value, r: SourceRange) -> list[Value]:
        assert isinstance(value.ty, TupleType)
        if value.node.kind == "prim::TupleConstruct":
            return list(value.node.inputs)
        return list(self.insert("prim::TupleUnpack", [value], list(value.ty.elems), r).outputs)


def _is_dict(tree: Tree | None) -> bool:
    return tree is not None and tree.is_dict


def range_argument(emitter: ExpressionEmitter, value: Value, r: SourceRange) -> Value:
    """An argument of ``range()`` as an int: Python ints pass, other numbers and arrays go
    through ``prim::int`` (``__index__``); floats are refused as Python refuses them."""
    if value.ty is INT:
        return value
    if value.ty in (FLOAT, STR) or isinstance(value.ty, TupleType | ListType):
        raise ScriptError(f"range() needs int arguments, not {value.ty}", r, doc="loops")
    as_int = emitter.apply("prim::int", [value], r)
    as_int.name_hint = value.name_hint  # the trip count a loop's gradient captures: ``%n``
    return as_int
