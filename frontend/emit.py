"""The emitter: one ``def`` (a frontend.syntax.FunctionDef) to an SSA Graph, statement by
statement, as TorchScript's ir_emitter does. Expressions are in `frontend.expressions`,
`frontend.subscripts` and `frontend.calls`; loops in `frontend.loops`; Note [Exits] in
`frontend.exits`.

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
from typing import Any

from frontend import syntax
from frontend.bound_calls import BoundCallEmitter
from frontend.builtins import BuiltinEmitter
from frontend.calls import CallEmitter, CallHook, default_call_hook
from frontend.checks import CheckEmitter
from frontend.environment import (
    LocalFunction,
    PyObject,
    Unbound,
    append_target,
    has_exit,
)
from frontend.errors import ContainerUseError, ScriptError
from frontend.exits import Exit, FunctionExit
from frontend.expressions import FreeArray, FreeName, ReadOnce, VariableOf
from frontend.function_calls import FunctionCallEmitter
from frontend.iteration import IterationEmitter
from frontend.lists import builds_list
from frontend.local_functions import LocalFunctionEmitter
from frontend.loops import LoopEmitter
from frontend.objects import KnownObject
from frontend.opaque_calls import OpaqueCallEmitter
from frontend.random_calls import RandomEmitter
from frontend.recursion import Known
from frontend.signatures import SignatureEmitter
from frontend.subscripts import SubscriptEmitter
from frontend.trees import KnownString, Tree, ir_type_of
from frontend.zip_loops import ZipLoopEmitter
from ir.graph import Graph, Value
from ir.source import SourceRange
from ir.types import (
    ANY,
    BOOL,
    FLOAT,
    INT,
    NONE,
    STR,
    TENSOR,
    ListType,
    TensorType,
    TupleType,
    Type,
    join_types,
)

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
    LoopEmitter,
    BuiltinEmitter,
    ZipLoopEmitter,
    IterationEmitter,
    LocalFunctionEmitter,
    BoundCallEmitter,
    SignatureEmitter,
    CheckEmitter,
    CallEmitter,
    FunctionCallEmitter,
    OpaqueCallEmitter,
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
            raise ScriptError(
                "augmented assignment needs a name or a subscript", target.range, doc="assignment"
            )
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
                raise ScriptError(
                    "an annotated assignment needs a name", expr.range, doc="assignment"
                )
            if isinstance(expr, syntax.Attribute):
                raise ScriptError(
                    "assignment to an attribute is not supported", expr.range, doc="assignment"
                )
            if isinstance(expr, syntax.Tuple | syntax.List):
                pending.extend(expr.elts)
            elif not isinstance(expr, syntax.Name):
                raise ScriptError(
                    f"cannot assign to {type(expr).__name__}", expr.range, doc="assignment"
                )

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
            raise ScriptError("TypeError: cannot unpack a 'slice' object", r, doc="builtins")
        if value.node.kind == "prim::TupleConstruct" and len(value.node.inputs) == count:
            return list(value.node.inputs)
        if isinstance(ty, TupleType):
            if len(ty.elems) != count:
                raise ScriptError(
                    f"cannot unpack a tuple of {len(ty.elems)} values into {count} names",
                    r,
                    doc="assignment",
                )
            types: list[Type] = list(ty.elems)
        elif isinstance(ty, ListType) or ty is ANY:
            types = [ty.elem if isinstance(ty, ListType) else ANY] * count
        elif ty == TENSOR:
            raise ContainerUseError(
                "cannot unpack an array: index it instead (a, b = x[0], x[1])", r, doc="assignment"
            )
        else:
            raise ScriptError(f"cannot unpack a value of type {ty}", r, doc="assignment")
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
                message = f"'{name}' is not defined in every branch"
                self.scope.bind(name, Unbound(message, "branches"))


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
