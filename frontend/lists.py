"""Python lists the scripted code builds: ``hs = []``, ``hs.append(v)``, ``hs[i]``, ``len(hs)``,
``for h in hs``, ``np.stack(hs)``.

``hs.append(v)`` is a statement of its own that rebinds ``hs`` to ``prim::ListAppend(hs, v)``,
a new list (Note [Lists are values] in `ir.ops.prim`), so a loop that appends carries ``hs``
as it carries any name it assigns. Other list methods, and ``append`` used as a value, are
refused.
"""

from __future__ import annotations

from frontend import syntax
from frontend.errors import ScriptError
from frontend.expressions import ExpressionEmitter
from ir.graph import Value
from ir.types import ListType

APPEND = "prim::ListAppend"

# The operators that make a fresh list value; see `builds_list`.
_LIST_MAKERS = frozenset({"prim::ListConstruct", APPEND})


def builds_list(value: Value) -> bool:
    """Whether ``value`` is a list the program built (a literal, appends, or such a list carried
    through a loop or chosen by an ``if``), as opposed to a value only typed as a list: a
    shape (``x.shape`` is typed ``int[]`` until its rank is known) or the arrays ``np.split``
    returns, which are tuples at run time and are read with prim::TupleIndex.

    ``hs`` after ``hs = []; hs.append(x)`` builds a list; ``np.split(x, 2)`` does not.
    """
    if not isinstance(value.ty, ListType):
        return False
    node = value.node
    if node.kind in _LIST_MAKERS:
        return True
    if node.kind == "prim::Loop":  # a carried value: what entered the loop
        return builds_list(node.inputs[2 + value.index])
    if node.kind == "prim::If":
        return any(builds_list(block.outputs[value.index]) for block in node.blocks)
    block = value.owning_block
    loop = block.owning_node if block is not None and node is block.param_node else None
    if loop is not None and loop.kind == "prim::Loop" and value.index > 0:
        # A loop body's parameter after the iteration counter: a carried value.
        return builds_list(loop.inputs[1 + value.index])
    return False


class ListEmitter(ExpressionEmitter):
    def emit_append(self, name: syntax.Name, call: syntax.Call) -> None:
        """``name.append(v)``: bind ``name`` to a new list, ``name``'s elements then ``v``."""
        if call.keywords:
            raise ScriptError("list.append() takes no keyword arguments", call.keywords[0].range)
        if len(call.args) != 1:
            raise ScriptError(
                f"list.append() takes exactly one argument ({len(call.args)} given)", call.range
            )
        lst = self.emit_expr(name)
        if not isinstance(lst.ty, ListType):
            raise ScriptError(
                f"'{name.id}' is a value of type {lst.ty}, not a list: only lists have .append",
                name.range,
            )
        elem = self.emit_expr(call.args[0])
        appended = self.apply(APPEND, [lst, elem], call.range)
        appended.name_hint = name.id
        self.scope.bind(name.id, appended)


def refuse_list_method(name: str, call: syntax.Call) -> ScriptError:
    """The error for a list method other than a statement ``hs.append(v)``."""
    if name == "append":
        return ScriptError(
            "list.append() is only supported as a statement of its own on a list name "
            "('hs.append(v)')",
            call.range,
        )
    return ScriptError(
        f"lists cannot be changed in scripted functions except by 'hs.append(v)' ('.{name}')",
        call.range,
    )
