"""Python lists the scripted code builds: ``hs = []``, ``hs.append(v)``, ``hs[i]``, ``len(hs)``,
``for h in hs``, ``np.stack(hs)``, ``hs + [v]``.

``hs.append(v)`` is a statement of its own that rebinds ``hs`` to ``prim::ListAppend(hs, v)``,
a new list (Note [Lists are values] in `ir.ops.prim`), so a loop that appends carries ``hs``
as it carries any name it assigns. Other list methods, and ``append`` used as a value, are
refused.

Note [Concatenating sequences]
``a + b`` of two lists or two tuples, and ``a * n`` (``n * a``) of one and an int known at
compile time, are Python's: a new sequence of the operands' items. They are built while
compiling, as a prim::ListConstruct or prim::TupleConstruct of the items, so every later pass
sees which arrays the result holds (`passes.functionalize` follows views and writes through
them as through any list the program builds). That needs each operand's number of items at
compile time: a tuple's type says it, and so does a list built from a literal and appends, or
the pieces of ``np.split(x, 3)`` or ``np.split(x, [2, 5])``; a list appended to in a loop, or
``np.split(x, n)`` with a run-time ``n``, does not, and concatenating it is refused where it
is written. A list and a tuple do not concatenate (Python raises TypeError), and neither do
other operators between sequences.
"""

from __future__ import annotations

from typing import cast

from frontend import syntax
from frontend.errors import ScriptError
from frontend.expressions import SCALAR_TYPES, ExpressionEmitter
from ir.graph import Value
from ir.source import SourceRange
from ir.types import INT, ListType, TupleType

APPEND = "prim::ListAppend"

# The operators that make a fresh list value; see `builds_list`.
_LIST_MAKERS = frozenset({"prim::ListConstruct", APPEND})
# NumPy functions that return a list of pieces: (self, indices_or_sections, ...).
_SPLITS = frozenset(
    {"aten::split", "aten::array_split", "aten::hsplit", "aten::vsplit", "aten::dsplit"}
)


def builds_list(value: Value) -> bool:
    """Whether ``value`` is a list the program built (a literal, appends, or such a list carried
    through a loop or chosen by an ``if``), as opposed to a value only typed as a list: a
    shape (``x.shape`` is typed ``int[]`` until its rank is known) or the arrays ``np.split``
    returns, which are read with prim::TupleIndex: specialisation types them as a tuple of
    pieces, each a view that `passes.functionalize` follows.

    ``hs`` after ``hs = []; hs.append(x)`` builds a list; ``np.split(x, 2)`` does not.
    """
    if not isinstance(value.ty, ListType):
        return False
    node = value.node
    if node.kind in _LIST_MAKERS:
        return True
    if node.kind == "prim::CallFunction":  # a helper that returns a list it built
        return bool(node.attrs.get("returns_list"))
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


# What is a tuple in the plain function but typed ``int[]`` until its length is known.
_TUPLES_TYPED_AS_LISTS = frozenset({"aten::shape", "prim::TupleConcat"})


def is_python_list(value: Value) -> bool:
    """Whether ``value`` is a list in the plain function, as opposed to a tuple; a shape
    (``x.shape``, ``x.shape[1:]``) is typed ``int[]`` until its rank is known, but is a tuple."""
    while value.node.kind == "prim::TupleSlice":
        value = value.node.inputs[0]
    if isinstance(value.ty, TupleType) or value.node.kind in _TUPLES_TYPED_AS_LISTS:
        return False
    return isinstance(value.ty, ListType)


def _split_count(value: Value) -> int | None:
    """How many pieces a split-family call cuts, when its sections are known at compile
    time: ``np.split(x, 3)`` cuts 3, ``np.split(x, [2, 5])`` cuts 3."""
    node = value.node
    if node.kind not in _SPLITS:
        return None
    sections = node.inputs[1].node
    if sections.kind in ("prim::ListConstruct", "prim::TupleConstruct"):
        return len(sections.inputs) + 1
    if sections.kind != "prim::Constant":
        return None
    known = sections.attrs.get("value")
    if isinstance(known, tuple):
        return len(known) + 1
    if type(known) is int and known > 0:
        return known
    return None


class ListEmitter(ExpressionEmitter):
    def binary(self, op: str, left: Value, right: Value, r: SourceRange) -> Value:
        """Python's operators on lists and tuples (Note [Concatenating sequences]); NumPy's
        on anything else."""
        sequences = [isinstance(v.ty, TupleType | ListType) for v in (left, right)]
        if not any(sequences):
            return super().binary(op, left, right, r)
        if all(sequences) and op == "+":
            return self.concatenate(left, right, r)
        if op == "*" and any(v.ty == INT for v in (left, right)):
            sequence, count = (left, right) if sequences[0] else (right, left)
            return self.repeat(sequence, count, r)
        if all(sequences) or any(v.ty in SCALAR_TYPES for v in (left, right)):
            raise ScriptError(
                f"unsupported operand types for {op}: '{_kind(left)}' and '{_kind(right)}'",
                r,
                doc="lists-tuples-and-dicts",
            )
        return super().binary(op, left, right, r)

    def concatenate(self, left: Value, right: Value, r: SourceRange) -> Value:
        """``left + right`` of two lists or two tuples: a new one of both's items."""
        kind = _kind(left)
        if _kind(right) != kind:
            raise ScriptError(
                f'can only concatenate {kind} (not "{_kind(right)}") to {kind}',
                r,
                doc="lists-tuples-and-dicts",
            )
        if kind == "tuple" and all(_holds_ints(v) for v in (left, right)):
            # A shape's rank is known once specialised: no array is held, so no view to follow.
            known = [_known_length(v) for v in (left, right)]
            if None in known:
                return self.apply("prim::TupleConcat", [left, right], r)
        items = [*self.items(left, r), *self.items(right, r)]
        return self.sequence_of(kind, items, r)

    def repeat(self, sequence: Value, count: Value, r: SourceRange) -> Value:
        """``sequence * count``: the items ``count`` times over, ``count`` known while
        compiling."""
        times = count.node.attrs.get("value") if count.node.kind == "prim::Constant" else None
        if type(times) is not int:
            raise ScriptError(
                f"repeating a {_kind(sequence)} needs a number of times known at compile time "
                "(a literal or a module constant), not one computed at run time",
                r,
                doc="lists-tuples-and-dicts",
            )
        items = self.items(sequence, r)
        return self.sequence_of(_kind(sequence), items * max(times, 0), r)

    def sequence_of(self, kind: str, items: list[Value], r: SourceRange) -> Value:
        if kind == "tuple":
            return self.make_tuple(items, r)
        return self.apply("prim::ListConstruct", items, r)

    def items(self, sequence: Value, r: SourceRange) -> list[Value]:
        """The items of ``sequence`` as values, its length known at compile time; refused
        where it is not (Note [Concatenating sequences])."""
        found = self.known_items(sequence, r)
        if found is None:
            kind = _kind(sequence)
            raise ScriptError(
                f"cannot concatenate or repeat this {kind}: its length is only known at run "
                f"time ({_unknown_length(sequence)}); build the result with a known number "
                "of items, or append to a list ('hs.append(v)')",
                r,
                doc="lists-tuples-and-dicts",
            )
        return found

    def known_items(self, sequence: Value, r: SourceRange) -> list[Value] | None:
        """The items of ``sequence`` as values when its length is known at compile time (each
        read with a constant index where it is not built here), else None."""
        node = sequence.node
        if node.kind in ("prim::TupleConstruct", "prim::ListConstruct"):
            return list(node.inputs)
        if node.kind == APPEND:
            head = self.known_items(node.inputs[0], r)
            return None if head is None else [*head, node.inputs[1]]
        if node.kind == "prim::TupleSlice":
            bounds = [_constant(bound) for bound in node.inputs[1:]]
            whole = self.known_items(node.inputs[0], r)
            if whole is not None and all(b is None or type(b) is int for b in bounds):
                start, stop, step = cast("list[int | None]", bounds)
                return whole[start:stop:step]
        count = len(sequence.ty.elems) if isinstance(sequence.ty, TupleType) else None
        if count is None:
            count = _split_count(sequence)
        if count is None:
            return None
        index = "prim::ListIndex" if builds_list(sequence) else "prim::TupleIndex"
        return [self.apply(index, [sequence, self.constant(i, INT, r)], r) for i in range(count)]

    def emit_append(self, name: syntax.Name, call: syntax.Call) -> None:
        """``name.append(v)``: bind ``name`` to a new list, ``name``'s elements then ``v``."""
        if call.keywords:
            raise ScriptError(
                "list.append() takes no keyword arguments",
                call.keywords[0].range,
                doc="lists-tuples-and-dicts",
            )
        if len(call.args) != 1:
            raise ScriptError(
                f"list.append() takes exactly one argument ({len(call.args)} given)",
                call.range,
                doc="lists-tuples-and-dicts",
            )
        lst = self.emit_expr(name)
        if not isinstance(lst.ty, ListType):
            raise ScriptError(
                f"'{name.id}' is a value of type {lst.ty}, not a list: only lists have .append",
                name.range,
                doc="lists-tuples-and-dicts",
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
            doc="lists-tuples-and-dicts",
        )
    return ScriptError(
        f"lists cannot be changed in scripted functions except by 'hs.append(v)' ('.{name}')",
        call.range,
        doc="lists-tuples-and-dicts",
    )


def _kind(value: Value) -> str:
    """What the plain function has for ``value``, as Python's error messages name it."""
    if is_python_list(value):
        return "list"
    if isinstance(value.ty, TupleType) or value.node.kind in (
        *_TUPLES_TYPED_AS_LISTS,
        "prim::TupleSlice",
    ):
        return "tuple"
    return str(value.ty)


def _unknown_length(value: Value) -> str:
    node = value.node
    if node.kind in _TUPLES_TYPED_AS_LISTS or (
        node.kind == "prim::TupleSlice" and not is_python_list(value)
    ):
        return "an array's shape, whose rank is not known while compiling"
    if node.kind in _SPLITS:
        return "the pieces of a split into a number of sections computed at run time"
    if node.kind in ("prim::Loop", "prim::If") or node.kind == "prim::Param":
        return "it is carried through a loop or chosen by an if"
    return "it is not built from a literal and appends here"


def _constant(value: Value) -> object:
    """The value of a prim::Constant; a stand-in no constant has for anything else."""
    return value.node.attrs.get("value") if value.node.kind == "prim::Constant" else _UNKNOWN


_UNKNOWN = object()


def _holds_ints(value: Value) -> bool:
    ty = value.ty
    if isinstance(ty, ListType):
        return ty.elem == INT
    return isinstance(ty, TupleType) and all(elem == INT for elem in ty.elems)


def _known_length(value: Value) -> int | None:
    return len(value.ty.elems) if isinstance(value.ty, TupleType) else None
