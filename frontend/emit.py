"""The emitter: one ``def`` (a frontend.syntax.FunctionDef) to an SSA Graph, statement by
statement, as TorchScript's ir_emitter does. Expressions are in `frontend.expressions`,
`frontend.subscripts` and `frontend.calls`.

Note [Exits]
``return``, ``break`` and ``continue`` end a path through a block. Each kind of block has one
exit shape: a function's is its return value (a graph has one output; ``return a, b`` returns a
tuple, a function that falls off its end returns None); a loop body's is (continue?, carried
values...), where ``continue`` and the end of the body give ``True`` (a ``while`` loop's test,
evaluated again) and ``break`` gives ``False``. A block is emitted as a statement list that
always ends in an exit (an implicit ``return None`` or ``continue`` is appended). When an ``if``
contains an exit, the statements after it are emitted into both of its branches (a branch that
exits on every path stops before them), so each branch ends in an exit and the If's outputs are
the exit values (TorchScript's exit transform, done by copying the rest rather than with flags).
A ``return`` inside a loop is refused.

Note [Assignments]
Names are SSA: every assignment binds the name to a new value (named after it) in the current
scope. ``y += x`` on a Python number (or tuple, or list) is ``y = y + x``, a rebinding. On an
array it is NumPy's in-place update, which every alias of ``y`` sees: ``aten::copy_(y, y + x)``,
and ``y`` is bound to its result (Note [Writes] in `frontend.subscripts`). A ``y`` of type Any
(a callee's result, a list element) is updated in place too: at run time copy_ into something
that is not an array rebinds, as Python's ``+=`` does for an immutable value, and
`passes.functionalize` treats it so.
After an ``if``, a name assigned in a branch and defined on both paths is an If output; one
defined on one path only is unbound. A loop carries every name its body assigns that is defined
before the loop; a name first assigned in the body cannot be read after the loop (TorchScript's
rule). A subscript assignment (``y[0] = v``) writes into ``y`` in place and binds no name, so it
does not make ``y`` loop-carried: functionalisation does, for the base it finds.

Note [Nesting depth]
Emission recurses once per level of nesting. Chains nest without bound (``a + b + c ...``,
``- - x``): `frontend.expressions` walks them in a loop. Everything else nests through brackets
(at most 200 levels in Python source) or indentation (at most 100), several frames a level, more
than Python's default limit of 1000 frames allows: `emit_function` raises the limit while it
runs by `EMIT_FRAMES`, enough for those, and sets it back. Each frame is a Python call, which
since Python 3.11 does not grow the C stack.
"""

from __future__ import annotations

import builtins
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, cast

from frontend import syntax
from frontend.bound_calls import BoundCallEmitter
from frontend.builtins import BuiltinEmitter
from frontend.calls import CallEmitter, CallHook, default_call_hook, range_argument
from frontend.checks import CheckEmitter
from frontend.environment import (
    LocalFunction,
    PyObject,
    Unbound,
    append_target,
    assigned_names,
    exits_anywhere,
    has_exit,
    target_names,
)
from frontend.errors import ContainerUseError, ScriptError
from frontend.expressions import FreeArray, FreeName, ReadOnce, VariableOf, constant_value
from frontend.function_calls import FunctionCallEmitter
from frontend.iteration import IterationEmitter
from frontend.lists import builds_list
from frontend.local_functions import LocalFunctionEmitter
from frontend.objects import KnownObject
from frontend.random_calls import RandomEmitter
from frontend.recursion import Known
from frontend.signatures import SignatureEmitter
from frontend.subscripts import SubscriptEmitter
from frontend.trees import KnownString, Tree, ir_type_of
from frontend.zip_loops import ZipLoopEmitter
from ir.graph import Graph, Node, Value
from ir.source import SourceRange
from ir.types import (
    ANY,
    BOOL,
    FLOAT,
    INT,
    NONE,
    NOTHING,
    STR,
    TENSOR,
    ListType,
    TensorType,
    TupleType,
    Type,
    join_types,
)

# A `while` loop's trip count: as good as unbounded.
MAX_TRIP_COUNT = 2**63 - 1

# Frames emission may use beyond those in use when it starts. See Note [Nesting depth].
EMIT_FRAMES = 20_000

_ANNOTATIONS: dict[object, Type] = {int: INT, float: FLOAT, bool: BOOL}


def _no_hidden_arguments(key: str) -> list[Value]:
    return []


def _returns_no_list(key: str) -> bool:
    return False


def emit_function(
    fdef: syntax.FunctionDef,
    globals: Mapping[str, Any],  # noqa: A002 (the name the contract gives it)
    *,
    free_name: FreeName | None = None,
    free_array: FreeArray | None = None,
    read_once: ReadOnce | None = None,
    variable_of: VariableOf | None = None,
    hidden_arguments: Callable[[str], list[Value]] | None = None,
    returns_list: Callable[[str], bool] | None = None,
    graph_name: str | None = None,
    param_types: Sequence[Type] | None = None,
    call_hook: CallHook | None = None,
    on_graph: Callable[[Graph], None] | None = None,
    leaf_inputs: bool = False,
    on_result: Callable[[Type], None] | None = None,
) -> tuple[Graph, list[tuple[str, Callable[..., Any]]]]:
    """``fdef`` as a Graph, and the Python functions it calls as (module key, function).

    Parameters are graph inputs typed by their annotations (``int``, ``float``, ``bool``;
    anything else, or none, is Tensor) unless ``param_types`` gives the types. Names are read
    from the function's locals, then ``globals``, then builtins, then ``free_name``, which may
    return a Value to use (e.g. a new graph input, made on the graph ``on_graph`` is given
    before anything is emitted); ``free_array`` does so for names of ``globals`` that hold
    arrays, and ``read_once`` is told of the other names of ``globals`` read, each as the
    variable ``variable_of`` gives (Note [Reading objects from outside] in `frontend.objects`).
    ``call_hook`` compiles called functions; ``hidden_arguments`` gives the caller's values
    for a callee's free variables, by its key. A parameter typed `Known` is no input: it is
    read as a value from outside.

    A parameter typed as a `Tree` (a container argument) is one tuple input, or with
    ``leaf_inputs`` one input per leaf, and ``on_result`` is told the type of the result,
    a `Tree` when it is a container (Note [Containers known while compiling] in
    `frontend.trees`).
    """
    graph = Graph(graph_name if graph_name is not None else fdef.name)
    if on_graph is not None:
        on_graph(graph)
    emitter = FunctionEmitter(
        graph, globals, free_name, call_hook or default_call_hook, free_array, read_once
    )
    emitter.variable_of = variable_of
    if hidden_arguments is not None:
        emitter.hidden_arguments = hidden_arguments
    if returns_list is not None:
        emitter.returns_list = returns_list
    with recursion_room(EMIT_FRAMES):
        result = emitter.emit_body(fdef, param_types, leaf_inputs)
    if on_result is not None:
        on_result(result)
    return graph, list(emitter.callees.items())


@contextmanager
def recursion_room(frames: int) -> Iterator[None]:
    """Let the code inside call ``frames`` deeper than Python's recursion limit allows now;
    the limit is set back afterwards. See Note [Nesting depth]."""
    global _room_given
    if _room_given:  # a callee emitted while its caller is: the room is there already
        yield
        return
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(limit + frames)
    _room_given = True
    try:
        yield
    finally:
        _room_given = False
        sys.setrecursionlimit(limit)


_room_given = False


def annotation_type(annotation: syntax.Expr | None, namespace: Mapping[str, Any]) -> Type:
    """The type a parameter annotation gives: ``int``, ``float`` and ``bool`` (also spelled as
    strings) are themselves; anything else, or no annotation, is Tensor."""
    found: object = None
    if isinstance(annotation, syntax.Constant) and isinstance(annotation.value, str):
        found = getattr(builtins, annotation.value, None)
    elif isinstance(annotation, syntax.Name):
        found = namespace.get(annotation.id, getattr(builtins, annotation.id, None))
    return _ANNOTATIONS.get(found, TENSOR) if isinstance(found, type) else TENSOR


def declared_type(param: syntax.Param, namespace: Mapping[str, Any]) -> Type:
    """The type a parameter has when no call says: its annotation's, a `KnownString` string for a
    string default (Note [Strings known while compiling] in `frontend.trees`), and no
    arguments for ``*args`` and ``**kwargs``."""
    if param.kind == "var_positional":
        return Tree(tuple, (), ())
    if param.kind == "var_keyword":
        return Tree(dict, (), ())
    default = param.default
    if isinstance(default, syntax.Constant) and isinstance(default.value, str):
        return KnownString(default.value)
    return annotation_type(param.annotation, namespace)


class FunctionEmitter(
    BuiltinEmitter,
    ZipLoopEmitter,
    IterationEmitter,
    LocalFunctionEmitter,
    BoundCallEmitter,
    SignatureEmitter,
    CheckEmitter,
    CallEmitter,
    FunctionCallEmitter,
    RandomEmitter,
    SubscriptEmitter,
):
    def __init__(
        self,
        graph: Graph,
        namespace: Mapping[str, Any],
        free_name: FreeName | None,
        call_hook: CallHook,
        free_array: FreeArray | None = None,
        read_once: ReadOnce | None = None,
    ) -> None:
        super().__init__(graph, namespace, free_name, free_array, read_once)
        self.call_hook = call_hook
        self.callees = {}
        self.active_locals: list[LocalFunction] = []  # local functions being emitted
        self.recursive_local_calls = 0
        self.hidden_arguments = _no_hidden_arguments
        self.returns_list = _returns_no_list

    def emit_body(
        self,
        fdef: syntax.FunctionDef,
        param_types: Sequence[Type] | None,
        leaf_inputs: bool = False,
    ) -> Type:
        """Emit the function; returns the type of its result (a `Tree` for a container)."""
        if param_types is not None and len(param_types) != len(fdef.params):
            raise ValueError(
                f"{fdef.name} has {len(fdef.params)} parameters, not {len(param_types)}"
            )
        known_objects: list[tuple[str, KnownObject]] = []
        for index, param in enumerate(fdef.params):
            if param_types is not None:
                ty = param_types[index]
            else:
                ty = declared_type(param, self.globals)
            # Note [Reading objects from outside] in frontend.objects
            if isinstance(ty, KnownObject):
                known_objects.append((param.name, ty))
                continue
            if leaf_inputs and isinstance(ty, Tree):
                value = self.leaf_parameter(param.name, ty, fdef.range)
            elif isinstance(ty, Known):  # Note [Recursion while compiling] in frontend.recursion
                self.graph.add_input(ty.ty, param.name)
                value = self.constant(ty.value, ty.ty, param.range)
            # Note [Strings known while compiling] in frontend.trees
            elif isinstance(ty, KnownString):
                if not leaf_inputs:
                    self.graph.add_input(STR, param.name)
                value = self.constant(ty.value, STR, param.range)
            else:
                value = self.graph.add_input(ir_type_of(ty), param.name)
                if isinstance(ty, Tree):
                    self.trees[value] = ty
            self.scope.bind(param.name, value)
        # Read after every parameter has its input: an array it holds is a hidden input, and
        # hidden inputs come after the parameters, as callers pass them.
        for name, known in known_objects:
            self.scope.bind(name, self.free_object(known.variable, known.value, name, fdef.range))
        body = [*fdef.body, syntax.Return(None, range=fdef.range)]
        (result,) = self.emit_exiting_block(body, FunctionExit(self))
        self.graph.register_output(result)
        return self.result_tree(result) or result.ty

    def leaf_parameter(self, name: str, ty: Type, r: SourceRange) -> Value:
        """A container parameter built from one input per leaf (None a constant): Note
        [Containers known while compiling] in `frontend.trees`."""
        if ty == NONE or (isinstance(ty, Tree) and ty.kind is type(None)):
            return self.constant(None, NONE, r)
        if isinstance(ty, KnownString):
            return self.constant(ty.value, STR, r)
        if not isinstance(ty, Tree):
            return self.graph.add_input(ty, name)
        keys = ty.keys or range(len(ty.children))
        items = [
            self.leaf_parameter(f"{name}_{_name_part(key)}", child, r)
            for key, child in zip(keys, ty.children, strict=True)
        ]
        return self.make_tree(items, ty, r)

    # ---- blocks and exits -------------------------------------------------------------------

    def emit_block(self, stmts: Sequence[syntax.Stmt], exits: Exit) -> list[Value] | None:
        """Emit ``stmts``; returns the exit values if every path through them exits (Note
        [Exits]), else None."""
        for position, stmt in enumerate(stmts):
            if isinstance(stmt, syntax.Return | syntax.Break | syntax.Continue):
                return exits.values(stmt)  # what follows cannot run
            if isinstance(stmt, syntax.Raise | syntax.Assert):
                if self.emit_check(stmt):  # a ``raise``, or an ``assert False``
                    self.scope.raises = True
                    return exits.unreachable(stmt.range)
                continue
            if has_exit(stmt):
                assert isinstance(stmt, syntax.If)
                return self.emit_exiting_if(stmt, stmts[position + 1 :], exits)
            self.emit_statement(stmt, exits)
        return None

    def emit_exiting_block(self, stmts: Sequence[syntax.Stmt], exits: Exit) -> list[Value]:
        values = self.emit_block(stmts, exits)
        assert values is not None, "a statement list that ends in an exit always exits"
        return values

    def emit_exiting_if(
        self, stmt: syntax.If, rest: Sequence[syntax.Stmt], exits: Exit
    ) -> list[Value]:
        cond = self.condition(stmt.test)
        if isinstance(cond, bool):
            taken = stmt.body if cond else stmt.orelse
            return self.emit_exiting_block([*taken, *rest], exits)
        node = self.insert("prim::If", [cond], [], stmt.range, blocks=2)
        branches: list[list[Value]] = []
        for block, stmts in zip(node.blocks, (stmt.body, stmt.orelse), strict=True):
            with self.graph.inserting_at_end(block), self.nested_scope():
                values = self.emit_exiting_block([*stmts, *rest], exits)
            for value in values:
                block.register_output(value)
            branches.append(values)
        for then, orelse, hint in zip(*branches, exits.hints(), strict=True):
            node.add_output(exits.join(then.ty, orelse.ty, stmt.range), hint)
        return list(node.outputs)

    # ---- statements -------------------------------------------------------------------------

    def emit_statement(self, stmt: syntax.Stmt, exits: Exit) -> None:
        if isinstance(stmt, syntax.Assign):
            self.emit_assign(stmt)
        elif isinstance(stmt, syntax.AugAssign):
            self.emit_aug_assign(stmt)
        elif isinstance(stmt, syntax.AnnAssign):
            self.check_target(stmt.target, subscripts=False)
            if stmt.value is not None:
                self.assign(stmt.target, self.emit_expr(stmt.value), stmt.value.range)
        elif isinstance(stmt, syntax.ExprStmt):
            appended = append_target(stmt)
            if appended is not None:
                assert isinstance(stmt.value, syntax.Call)
                self.emit_append(appended, stmt.value)
            elif not isinstance(stmt.value, syntax.Constant):  # `...` as a placeholder body
                self.emit_expr(stmt.value)
        elif isinstance(stmt, syntax.If):
            self.emit_if(stmt, exits)
        elif isinstance(stmt, syntax.For):
            self.emit_for(stmt, exits)
        elif isinstance(stmt, syntax.While):
            self.emit_while(stmt)
        elif isinstance(stmt, syntax.FunctionDef):
            self.define_local(stmt.name, stmt.params, stmt.body, stmt.range, stmt.decorators)
        elif not isinstance(stmt, syntax.Pass):
            raise ScriptError(f"{type(stmt).__name__} statements are not supported", stmt.range)

    def emit_assign(self, stmt: syntax.Assign) -> None:
        for target in stmt.targets:
            self.check_target(target)
        (first, *others) = stmt.targets
        literal = stmt.value
        if isinstance(literal, syntax.Lambda) and not others and isinstance(first, syntax.Name):
            body = (syntax.Return(literal.body, range=literal.body.range),)
            self.define_local(first.id, literal.params, body, literal.range, ())
            return
        if not others and isinstance(first, syntax.Name) and self.is_partial_call(literal):
            assert isinstance(literal, syntax.Call)
            self.scope.bind(first.id, PyObject(self.make_partial(literal), first.id))
            return
        if not others and isinstance(first, syntax.Name) and _names_callable(literal):
            found = self.resolve(literal)
            if isinstance(found, PyObject) and callable(found.obj):
                self.scope.bind(first.id, found)  # ``act = np.tanh``: called later
                return
            value = found if isinstance(found, Value) else self.object_value(found, literal.range)
            self.assign(first, value, literal.range)
            return
        if (
            not others
            and isinstance(first, syntax.Tuple | syntax.List)
            and isinstance(literal, syntax.Tuple | syntax.List)
            and len(first.elts) == len(literal.elts)
        ):
            # `a, b = b, a`: evaluate the whole right side, then bind element by element.
            values = [self.emit_expr(e) for e in literal.elts]
            for target, value, expr in zip(first.elts, values, literal.elts, strict=True):
                self.assign(target, value, expr.range)
            return
        value = self.emit_expr(stmt.value)
        for target in stmt.targets:
            self.assign(target, value, stmt.value.range)

    def emit_local_body(self, body: Sequence[syntax.Stmt]) -> Value:
        (result,) = self.emit_exiting_block(body, FunctionExit(self))
        return result

    def emit_aug_assign(self, stmt: syntax.AugAssign) -> None:
        """``target op= value``: see Note [Assignments] and Note [Writes]."""
        target, r = stmt.target, stmt.range
        if isinstance(target, syntax.Subscript):
            self.emit_subscript_update(target, stmt.op, stmt.value, r)
            return
        if not isinstance(target, syntax.Name):
            self.check_target(target)
            raise ScriptError("augmented assignment needs a name or a subscript", target.range)
        value = self.emit_expr(stmt.value)
        current = self.emit_expr(target)
        updated = self.binary(stmt.op, current, value, r)
        if isinstance(current.ty, TensorType) or current.ty is ANY:
            updated = self.copy_into(current, updated, r)
        self.assign(target, updated, r)

    def check_target(self, target: syntax.Expr, *, subscripts: bool = True) -> None:
        pending = [target]
        while pending:
            expr = pending.pop()
            if isinstance(expr, syntax.Subscript):
                if subscripts:
                    continue
                raise ScriptError("an annotated assignment needs a name", expr.range)
            if isinstance(expr, syntax.Attribute):
                raise ScriptError("assignment to an attribute is not supported", expr.range)
            if isinstance(expr, syntax.Tuple | syntax.List):
                pending.extend(expr.elts)
            elif not isinstance(expr, syntax.Name):
                raise ScriptError(f"cannot assign to {type(expr).__name__}", expr.range)

    def assign(self, target: syntax.Expr, value: Value, r: SourceRange) -> None:
        """Bind ``target`` to ``value``. See Note [Assignments]."""
        if isinstance(target, syntax.Name):
            if value.name_hint is None:
                value.name_hint = target.id
            self.scope.bind(target.id, value)
            return
        if isinstance(target, syntax.Subscript):
            self.emit_subscript_store(target, value)
            return
        assert isinstance(target, syntax.Tuple | syntax.List)
        items = self.unpack(value, len(target.elts), target.range)
        for element, item in zip(target.elts, items, strict=True):
            self.assign(element, item, r)

    def unpack(self, value: Value, count: int, r: SourceRange) -> list[Value]:
        ty = value.ty
        tree = self.tree_of(value)
        if tree is not None and tree.kind is slice:
            raise ScriptError("TypeError: cannot unpack a 'slice' object", r)
        if value.node.kind == "prim::TupleConstruct" and len(value.node.inputs) == count:
            return list(value.node.inputs)
        if isinstance(ty, TupleType):
            if len(ty.elems) != count:
                raise ScriptError(
                    f"cannot unpack a tuple of {len(ty.elems)} values into {count} names", r
                )
            types: list[Type] = list(ty.elems)
        elif isinstance(ty, ListType) or ty is ANY:
            types = [ty.elem if isinstance(ty, ListType) else ANY] * count
        elif ty == TENSOR:
            raise ContainerUseError(
                "cannot unpack an array: index it instead (a, b = x[0], x[1])", r
            )
        else:
            raise ScriptError(f"cannot unpack a value of type {ty}", r)
        kind = "prim::ListUnpack" if builds_list(value) else "prim::TupleUnpack"
        return list(self.insert(kind, [value], types, r).outputs)

    def emit_if(self, stmt: syntax.If, exits: Exit) -> None:
        cond = self.condition(stmt.test)
        if isinstance(cond, bool):
            self.emit_block(stmt.body if cond else stmt.orelse, exits)
            return
        node = self.insert("prim::If", [cond], [], stmt.range, blocks=2)
        scopes = []
        for block, stmts in zip(node.blocks, (stmt.body, stmt.orelse), strict=True):
            with self.graph.inserting_at_end(block), self.nested_scope() as scope:
                self.emit_block(stmts, exits)
            scopes.append(scope)
        then, orelse = scopes
        if then.raises or orelse.raises:
            self.merge_around_raise(node, then, orelse, stmt.range)
            return
        for name in dict.fromkeys([*then.names, *orelse.names]):
            before = self.scope.lookup(name)
            first = then.names.get(name, before)
            second = orelse.names.get(name, before)
            if isinstance(first, Value) and isinstance(second, Value):
                if first is not second:
                    node.blocks[0].register_output(first)
                    node.blocks[1].register_output(second)
                    first = node.add_output(join_types(first.ty, second.ty), name)
                self.scope.bind(name, first)
            elif isinstance(first, PyObject | LocalFunction) and first == second:
                self.scope.bind(name, first)  # the same function on both paths
            elif isinstance(first, Unbound) and name in then.names:
                self.scope.bind(name, first)
            elif isinstance(second, Unbound) and name in orelse.names:
                self.scope.bind(name, second)
            else:
                self.scope.bind(name, Unbound(f"'{name}' is not defined in every branch"))

    # ---- loops ------------------------------------------------------------------------------

    def emit_for(self, stmt: syntax.For, exits: Exit) -> None:
        self.check_target(stmt.target, subscripts=False)
        iterable = stmt.iter
        func = iterable.func if isinstance(iterable, syntax.Call) else None
        if isinstance(iterable, syntax.Call) and func is not None and self.is_range(func):
            self.emit_range_loop(stmt, iterable, exits)
            return
        if isinstance(iterable, syntax.Call) and self.enumerates_an_array(iterable):
            self.emit_row_loop(stmt, self.emit_expr(iterable.args[0]), iterable.range, True)
            return
        if isinstance(iterable, syntax.Call) and self.emit_array_zip(stmt, iterable):
            return  # Note [Zip over arrays] in frontend.zip_loops
        if isinstance(iterable, syntax.Call) and self.iteration_builtin(iterable) is not None:
            # ``zip``, ``enumerate``, ``reversed``: unrolled over items known while compiling
            if exits_anywhere(stmt.body):
                raise ScriptError(
                    "a loop over zip(), enumerate() or reversed() is unrolled while compiling, "
                    "so it cannot 'break', 'continue' or 'return'",
                    stmt.range,
                )
            for item in self.static_items(iterable):
                self.assign(stmt.target, item, stmt.target.range)
                self.emit_block(stmt.body, exits)
            return
        value = self.emit_expr(iterable)
        r = iterable.range
        tree = self.tree_of(value)
        if tree is not None and tree.is_dict:  # a dict iterates over its keys
            keys = [self.python_constant(key, r) for key in tree.keys]
            value = self.make_tuple([cast(Value, key) for key in keys], r)
        if tree is not None and tree.kind is slice:
            raise ScriptError("TypeError: 'slice' object is not iterable", r)
        if tree is not None and exits_anywhere(stmt.body):
            raise ScriptError(
                f"a loop over a {tree.kind_name} argument is unrolled while compiling, so it "
                "cannot 'break', 'continue' or 'return'",
                stmt.range,
            )
        if not builds_list(value) and not exits_anywhere(stmt.body):
            # A tuple, or np.split's pieces, of a length known here: unrolled, so that each
            # item is read with a constant index, which is differentiated and whose views are
            # followed (an index known only at run time is neither).
            items = self.known_items(value, r)
            if items is not None:
                for item in items:
                    self.assign(stmt.target, item, stmt.target.range)
                    self.emit_block(stmt.body, exits)
                return
        if isinstance(value.ty, TensorType):  # rows: a loop in the IR, as over range(len(x))
            self.emit_row_loop(stmt, value, r, False)
            return
        if isinstance(value.ty, TupleType):
            count = self.constant(len(value.ty.elems), INT, r)
            element = "prim::TupleIndex"
        elif isinstance(value.ty, ListType):
            # The list as it was when the loop started: appending to it in the body makes a
            # new list (Note [Lists are values]), so the loop does not see those elements.
            count = self.apply("prim::len", [value], r)
            element = "prim::ListIndex" if builds_list(value) else "prim::TupleIndex"
        else:
            raise ScriptError(
                f"a for loop cannot iterate over a value of type {value.ty}: it goes over "
                "range(...), an array's rows, a list, a tuple or a dict",
                iterable.range,
            )

        def bind_target(index: Value) -> None:
            self.assign(stmt.target, self.apply(element, [value, index], r), r)

        self.emit_loop(stmt.body, count, self.constant(True, BOOL, r), None, bind_target, stmt)

    def emit_row_loop(self, stmt: syntax.For, array: Value, r: SourceRange, numbered: bool) -> None:
        """``for row in x`` (``for i, row in enumerate(x)``): a prim::Loop over the first axis
        of ``x``, the row read as ``x[i]`` in the body, so that the IR does not grow with the
        data. ``x`` is the array as the loop starts, as Python's iterator holds it."""
        if isinstance(array.ty, TensorType) and array.ty.shape == ():
            raise ScriptError("TypeError: iteration over a 0-d array", r)
        count = self.apply("prim::len", [array], r)

        def bind_target(index: Value) -> None:
            row = self.array_subscript(array, [self.value_item(index, r)], r)
            value = self.make_tuple([index, row], r) if numbered else row
            self.assign(stmt.target, value, stmt.target.range)

        self.emit_loop(stmt.body, count, self.constant(True, BOOL, r), None, bind_target, stmt)

    def emit_range_loop(self, stmt: syntax.For, call: syntax.Call, exits: Exit) -> None:
        r = call.range
        if call.keywords:
            raise ScriptError("range() takes no keyword arguments", call.keywords[0].range)
        if not 1 <= len(call.args) <= 3:
            raise ScriptError(f"range() takes 1 to 3 arguments, got {len(call.args)}", r)
        args = [range_argument(self, self.emit_expr(a), a.range) for a in call.args]
        start: Value | None = args[0] if len(args) > 1 else None
        stop = args[1] if len(args) > 1 else args[0]
        step: Value | None = args[2] if len(args) > 2 else None
        known = [constant_value(a) for a in args]
        if all(type(k) is int for k in known) and self.reads_containers(stmt.body):
            # ``for i in range(len(params)): W, b = params[i]``: unrolled, so that each
            # ``params[i]`` is an index known while compiling (Note [Containers known while
            # compiling] in `frontend.trees`).
            if exits_anywhere(stmt.body):
                raise ScriptError(
                    "this loop indexes a container argument, so it is unrolled while "
                    "compiling and cannot 'break', 'continue' or 'return'",
                    stmt.range,
                )
            for number in range(*cast("list[int]", known)):
                self.assign(stmt.target, self.constant(number, INT, r), stmt.target.range)
                self.emit_block(stmt.body, exits)
            return
        trip = self.trip_count(start, stop, step, r)

        def bind_target(index: Value) -> None:
            value = index
            if step is not None and constant_value(step) != 1:
                value = self.apply("prim::mul", [value, step], r)
            if start is not None and constant_value(start) != 0:
                value = self.apply("prim::add", [start, value], r)
            self.assign(stmt.target, value, stmt.target.range)

        self.emit_loop(stmt.body, trip, self.constant(True, BOOL, r), None, bind_target, stmt)

    def trip_count(
        self, start: Value | None, stop: Value, step: Value | None, r: SourceRange
    ) -> Value:
        """``len(range(start, stop, step))``, or a count that is <= 0 when the range is empty
        (prim::Loop then runs no iteration)."""
        if start is None:
            return stop
        span = self.apply("prim::sub", [stop, start], r)
        if step is None:
            return span
        known = constant_value(step)
        if known == 0:
            raise ScriptError("range() arg 3 must not be zero", r)
        if isinstance(known, int):  # ceil(span / step) for either sign of step
            adjust = known - 1 if known > 0 else known + 1
            if adjust:
                span = self.apply("prim::add", [span, self.constant(adjust, INT, r)], r)
        else:
            zero = self.constant(0, INT, r)
            positive = self.apply("prim::gt", [step, zero], r)
            negative = self.apply("prim::lt", [step, zero], r)
            sign = self.apply("prim::sub", [positive, negative], r)
            span = self.apply("prim::sub", [self.apply("prim::add", [span, step], r), sign], r)
        return self.apply("prim::floordiv", [span, step], r)

    def emit_while(self, stmt: syntax.While) -> None:
        cond = self.condition(stmt.test)
        if cond is False:
            return
        if isinstance(cond, bool):
            cond = self.constant(True, BOOL, stmt.test.range)
        trip = self.constant(MAX_TRIP_COUNT, INT, stmt.range)
        self.emit_loop(stmt.body, trip, cond, stmt.test, None, stmt)

    def emit_loop(
        self,
        body: Sequence[syntax.Stmt],
        trip: Value,
        cond: Value,
        test: syntax.Expr | None,
        bind_target: Callable[[Value], None] | None,
        stmt: syntax.For | syntax.While,
    ) -> None:
        """A prim::Loop carrying every name the body assigns that is defined before it. The
        carried types start as the values' types; when the body changes one (``s = 0.0`` then
        ``s = s + x[i]``), the body is emitted again with the join of both."""
        r = stmt.range
        names = assigned_names(body)
        if isinstance(stmt, syntax.For):
            names = [*target_names(stmt.target), *names]
        carried: list[str] = []
        initial: list[Value] = []
        for name in dict.fromkeys(names):
            value = self.scope.value(name)
            if value is not None:
                carried.append(name)
                initial.append(value)
        types = [v.ty for v in initial]
        while True:
            node = self.insert("prim::Loop", [trip, cond, *initial], [], r, blocks=1)
            joined = self.emit_loop_body(node, carried, types, test, bind_target, body, r)
            if joined == types:
                break
            types = joined
            node.destroy()
        for name, ty in zip(carried, types, strict=True):
            self.scope.bind(name, node.add_output(ty, name))
        for name in names:
            if name not in carried:
                message = f"'{name}' is assigned only inside the loop: assign it before the loop"
                self.scope.bind(name, Unbound(message + " to use it after"))

    def emit_loop_body(
        self,
        node: Node,
        carried: list[str],
        types: list[Type],
        test: syntax.Expr | None,
        bind_target: Callable[[Value], None] | None,
        body: Sequence[syntax.Stmt],
        r: SourceRange,
    ) -> list[Type]:
        """Emit the loop body into ``node``; returns the joins of the carried types with the
        types the body gives them."""
        block = node.blocks[0]
        index = block.add_input(INT)
        with self.graph.inserting_at_end(block), self.nested_scope():
            for name, ty in zip(carried, types, strict=True):
                self.scope.bind(name, block.add_input(ty, name))
            if bind_target is not None:
                bind_target(index)
            exits = LoopExit(self, carried, test)
            results = self.emit_exiting_block([*body, syntax.Continue(range=r)], exits)
        for value in results:
            block.register_output(value)
        return [join_types(t, v.ty) for t, v in zip(types, results[1:], strict=True)]


class Exit:
    """What ends a path in the block being emitted. See Note [Exits]."""

    def __init__(self, emitter: FunctionEmitter) -> None:
        self.emitter = emitter

    def values(self, stmt: syntax.Stmt) -> list[Value]:
        raise NotImplementedError

    def hints(self) -> list[str | None]:
        raise NotImplementedError

    def unreachable(self, r: SourceRange) -> list[Value]:
        """Exit values for a path that raises: placeholders of type Nothing, never read, which
        join to the other paths' types."""
        return [
            self.emitter.insert("prim::Uninitialized", [], [NOTHING], r).output
            for _ in self.hints()
        ]

    def join(self, a: Type, b: Type, r: SourceRange) -> Type:
        return join_types(a, b)


class FunctionExit(Exit):
    def values(self, stmt: syntax.Stmt) -> list[Value]:
        if isinstance(stmt, syntax.Break | syntax.Continue):
            word = "break" if isinstance(stmt, syntax.Break) else "continue"
            raise ScriptError(f"'{word}' outside a loop", stmt.range)
        assert isinstance(stmt, syntax.Return)
        if stmt.value is None:
            return [self.emitter.constant(None, NONE, stmt.range)]
        return [self.emitter.emit_expr(stmt.value)]

    def hints(self) -> list[str | None]:
        return [None]

    def join(self, a: Type, b: Type, r: SourceRange) -> Type:
        if isinstance(a, TupleType) and isinstance(b, TupleType) and len(a.elems) != len(b.elems):
            raise ScriptError(
                f"the branches return tuples of different lengths ({len(a.elems)} and "
                f"{len(b.elems)})",
                r,
            )
        return join_types(a, b)


class LoopExit(Exit):
    def __init__(
        self, emitter: FunctionEmitter, carried: list[str], test: syntax.Expr | None
    ) -> None:
        super().__init__(emitter)
        self.carried = carried
        self.test = test

    def values(self, stmt: syntax.Stmt) -> list[Value]:
        emitter = self.emitter
        if isinstance(stmt, syntax.Return):
            raise ScriptError("'return' inside a loop is not supported", stmt.range)
        if isinstance(stmt, syntax.Break):
            go_on: Value = emitter.constant(False, BOOL, stmt.range)
        elif self.test is None:
            go_on = emitter.constant(True, BOOL, stmt.range)
        else:
            cond = emitter.condition(self.test)
            go_on = (
                emitter.constant(cond, BOOL, self.test.range) if isinstance(cond, bool) else cond
            )
        values = [go_on]
        for name in self.carried:
            value = emitter.scope.lookup(name)
            if not isinstance(value, Value):
                raise ScriptError(f"'{name}' is not defined on every path", stmt.range)
            values.append(value)
        return values

    def hints(self) -> list[str | None]:
        return [None, *self.carried]


def _names_callable(expr: syntax.Expr) -> bool:
    """Whether ``expr`` is a name or an attribute chain (``np.tanh``), which may denote a
    function known while compiling."""
    while isinstance(expr, syntax.Attribute):
        expr = expr.value
    return isinstance(expr, syntax.Name)


def _name_part(key: object) -> str:
    """A dict key or an index as part of an input's name: ``params_W1``, ``params_0``."""
    text = "".join(c if c.isalnum() or c == "_" else "_" for c in str(key))
    return text or "item"
