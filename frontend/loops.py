"""Loops: ``for`` over ``range``, an array's rows, a list or tuple (a ``prim::Loop`` whose
body carries the names it assigns), the loops unrolled while compiling (over ``zip``,
``enumerate``, ``reversed`` and containers known then), and ``while``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import cast

from frontend import syntax
from frontend.calls import range_argument
from frontend.environment import Unbound, assigned_names, exits_anywhere, target_names
from frontend.errors import ScriptError
from frontend.exits import Exit, LoopExit
from frontend.expressions import constant_value
from frontend.lists import builds_list
from frontend.subscripts import SubscriptEmitter
from ir.graph import Node, Value
from ir.source import SourceRange
from ir.types import BOOL, INT, ListType, TensorType, TupleType, Type, join_types

# A ``while`` loop's trip count: as good as unbounded.
MAX_TRIP_COUNT = 2**63 - 1


class LoopEmitter(SubscriptEmitter):
    # Provided by the FunctionEmitter (`frontend.emit`) and the other mixins it is made of.
    assign: Callable[[syntax.Expr, Value, SourceRange], None]
    check_target: Callable[..., None]
    emit_block: Callable[[Sequence[syntax.Stmt], Exit], list[Value] | None]
    emit_exiting_block: Callable[[Sequence[syntax.Stmt], Exit], list[Value]]
    static_items: Callable[[syntax.Expr], list[Value]]
    known_items: Callable[[Value, SourceRange], list[Value] | None]
    iteration_builtin: Callable[[syntax.Call], str | None]
    enumerates_an_array: Callable[[syntax.Call], bool]
    is_range: Callable[[syntax.Expr], bool]
    reads_containers: Callable[[Sequence[syntax.Stmt]], bool]
    emit_array_zip: Callable[[syntax.For, syntax.Call], bool]

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
                    doc="loops",
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
            raise ScriptError("TypeError: 'slice' object is not iterable", r, doc="loops")
        if tree is not None and exits_anywhere(stmt.body):
            raise ScriptError(
                f"a loop over a {tree.kind_name} argument is unrolled while compiling, so it "
                "cannot 'break', 'continue' or 'return'",
                stmt.range,
                doc="loops",
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
                doc="loops",
            )

        def bind_target(index: Value) -> None:
            self.assign(stmt.target, self.apply(element, [value, index], r), r)

        self.emit_loop(stmt.body, count, self.constant(True, BOOL, r), None, bind_target, stmt)

    def emit_row_loop(self, stmt: syntax.For, array: Value, r: SourceRange, numbered: bool) -> None:
        """``for row in x`` (``for i, row in enumerate(x)``): a prim::Loop over the first axis
        of ``x``, the row read as ``x[i]`` in the body, so that the IR does not grow with the
        data. ``x`` is the array as the loop starts, as Python's iterator holds it."""
        if isinstance(array.ty, TensorType) and array.ty.shape == ():
            raise ScriptError("TypeError: iteration over a 0-d array", r, doc="loops")
        count = self.apply("prim::len", [array], r)

        def bind_target(index: Value) -> None:
            row = self.array_subscript(array, [self.value_item(index, r)], r)
            value = self.make_tuple([index, row], r) if numbered else row
            self.assign(stmt.target, value, stmt.target.range)

        self.emit_loop(stmt.body, count, self.constant(True, BOOL, r), None, bind_target, stmt)

    def emit_range_loop(self, stmt: syntax.For, call: syntax.Call, exits: Exit) -> None:
        r = call.range
        if call.keywords:
            raise ScriptError(
                "range() takes no keyword arguments", call.keywords[0].range, doc="loops"
            )
        if not 1 <= len(call.args) <= 3:
            raise ScriptError(
                f"range() takes 1 to 3 arguments, got {len(call.args)}", r, doc="loops"
            )
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
                    doc="loops",
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
            raise ScriptError("range() arg 3 must not be zero", r, doc="loops")
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
                self.scope.bind(name, Unbound(message + " to use it after", "loops"))

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
