"""What the arrays of a graph with in-place writes may be, for functionalisation (Note
[Functionalisation] in `passes.functionalize`): the base a view or a write reaches, what an If
or a loop may give out, and the writes and reads functionalisation refuses because the compiler
cannot tell which array they reach or what they see."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ir.analysis import in_block
from ir.errors import IRError
from ir.graph import PARAM, Block, Node, Value
from ir.ops.registry import is_in_place
from ir.ops.views import view_rule
from ir.source import SourceRange

WRITES_AND_VIEWS = "docs/language.md#writes-and-views"
"""The section of the language page on writes: what to write instead of a refused one."""


def is_view(node: Node) -> bool:
    """Whether ``node``'s result is a view of its first operand (`view_rule`)."""
    return view_rule(node) is not None


@dataclass(frozen=True, slots=True)
class Alias:
    """A value that is ``base`` seen through the view nodes of ``chain``, in order."""

    base: Value
    chain: tuple[Node, ...] = ()
    # A reshape in the chain that NumPy may make a view or a copy, which the compiler cannot
    # tell (a shape not known at compile time): reading the alias stale, or writing through
    # it, is refused.
    undecided: Node | None = None


def check_writable(info: Alias, write: Node) -> None:
    """Refuse a write through a read-only view (NumPy raises), or through a reshape NumPy may
    make a view or a copy (the compiler cannot tell which array the write reaches)."""
    for view in info.chain:
        rule = view_rule(view)
        if rule is not None and rule.is_read_only(view):
            raise IRError(
                f"assignment destination is read-only: {_spelling(view)} returns a read-only "
                "view; copy it first (.copy())",
                write.source_range,
                doc_link=WRITES_AND_VIEWS,
            )
    if info.undecided is not None:
        raise IRError(
            f"cannot tell whether this writes to '{info.base.name_hint or 'the array'}': NumPy "
            "makes the reshape a view or a copy depending on the array's strides, which the "
            "compiler cannot tell here; copy it first (.copy())",
            write.source_range,
            doc_link=WRITES_AND_VIEWS,
        )


def _spelling(view: Node) -> str:
    """The NumPy function a view operator stands for, as the user wrote it (near enough)."""
    name = view.kind.split("::")[-1].lstrip("_")
    return "np.einsum" if name == "einsum_view" else f"np.{name}"


def loop_sources(loop: Node, carried: int) -> list[Value]:
    """What a prim::Loop's carried value number ``carried`` may be: its initial value or what
    the body returns for it."""
    return [loop.inputs[2 + carried], loop.blocks[0].outputs[1 + carried]]


def carrying_loop(value: Value) -> Node | None:
    """The prim::Loop whose body has ``value`` as a carried parameter, if any."""
    node = value.node
    if node.kind != PARAM or node.owning_block is None or value.index == 0:
        return None
    owner = node.owning_block.owning_node
    return owner if owner is not None and owner.kind == "prim::Loop" else None


def emitted_base(value: Value) -> Value:
    """The base a value is a view of, or an in-place write's result of, in the graph as the
    frontend emitted it."""
    while is_in_place(value.node) or is_view(value.node):
        value = value.node.inputs[0]
    return value


def _location(read: Node, value: Value) -> SourceRange | None:
    """Where to point at for a refused read: the reading node, or when that is a block's
    return (which carries a value out of a branch or a loop body, and has no place in the
    source), the If or loop that gave out ``value`` or the node that returns it."""
    if read.source_range is not None:
        return read.source_range
    if value.node.source_range is not None:
        return value.node.source_range
    owner = read.owning_block.owning_node if read.owning_block is not None else None
    return owner.source_range if owner is not None else None


def check_one_array(base: Value, write: Node) -> None:
    """Refuse a write whose target is an If output or loop-carried value that may be one of
    several arrays: the base to update depends on what ran."""
    if _may_be_several(base):
        raise IRError(
            f"cannot tell which array this writes to: '{base.name_hint or 'it'}' comes out of "
            "an if or a loop that may give different arrays; write to the array itself, or "
            "copy it first (x.copy())",
            write.source_range,
            doc_link=WRITES_AND_VIEWS,
        )


def check_first_view(
    param: Value, base: Value, entry: Value, current: Callable[[Value], Value], read: Node
) -> None:
    """Refuse ``read`` of ``param``, a loop-carried value that starts as a view of ``base``,
    once the loop has written ``base`` (its version is no longer ``entry``)."""
    if current(base) is entry:
        return
    name = param.name_hint or "it"
    raise IRError(
        f"cannot tell what '{name}' holds here: the loop carries it, and its first value "
        f"shares memory with '{base.name_hint or 'an array'}', which the loop has written "
        f"since (the next iterations' are other arrays); copy it before the loop "
        f"({name} = {name}.copy())",
        _location(read, param),
        doc_link=WRITES_AND_VIEWS,
    )


def check_carried_view(
    param: Value, base: Value, entry: Value, current: Callable[[Value], Value], read: Node
) -> None:
    """Refuse ``read`` of ``param``, a loop-carried value that an iteration may leave as
    ``base`` or a view of it, once the loop has written ``base`` in this iteration (its version
    is no longer ``entry``)."""
    if current(base) is entry:
        return
    name = param.name_hint or "it"
    raise IRError(
        f"cannot tell what '{name}' holds here: the loop carries it, and an iteration may "
        f"leave it as '{base.name_hint or 'an array'}' or a view of it, which the loop has "
        f"written since; copy it where it is assigned (x.copy())",
        _location(read, param),
        doc_link=WRITES_AND_VIEWS,
    )


def check_maybe_view(
    value: Value, base: Value, version: Value, current: Callable[[Value], Value], read: Node
) -> None:
    """Refuse ``read`` of ``value``, which an If or a loop gave out and may be ``base`` or a
    view of it, once ``base`` has been written (its version is no longer ``version``)."""
    if current(base) is version:
        return
    name = value.name_hint or "it"
    raise IRError(
        f"cannot tell what '{name}' holds here: it comes out of an if or a loop that may give "
        f"'{base.name_hint or 'an array'}' or a view of it, which has been written since; "
        f"copy it where it is assigned (x.copy())",
        _location(read, value),
        doc_link=WRITES_AND_VIEWS,
    )


def check_held(
    value: Value, base: Value, version: Value, current: Callable[[Value], Value], read: Node
) -> None:
    """Refuse ``read`` of ``value``, a tuple or list that holds ``base`` or a view of it, or
    an element read out of one, once ``base`` has been written (its version is no longer
    ``version``): NumPy's tuple or list holds the array itself and would see the write."""
    if current(base) is version:
        return
    name = value.name_hint or "it"
    raise IRError(
        f"cannot tell what '{name}' holds here: it is, or comes out of, a tuple or list that "
        f"holds '{base.name_hint or 'an array'}' or a view of it, which has been written "
        f"since; copy it where it is put in (x.copy())",
        _location(read, value),
        doc_link=WRITES_AND_VIEWS,
    )


def _may_be_several(value: Value, slots: frozenset[Value] = frozenset()) -> bool:
    """Whether ``value``, an If output or a loop-carried value, may be an array that something
    else also holds, looking into the Ifs and loops that gave out a branch's result or a
    loop's carried value (``acc = x`` in an if in a loop makes the loop's result ``x``).
    ``slots`` are the carried parameters of the one variable being followed, whose earlier
    value is no other variable's."""
    node = value.node
    if node.kind == "prim::If":
        index = node.outputs.index(value)
        return any(_shares_memory(block.outputs[index], block, slots) for block in node.blocks)
    if node.kind == "prim::Loop":
        value = node.blocks[0].inputs[1 + node.outputs.index(value)]
    loop = carrying_loop(value)
    if loop is None or value in slots:
        return False
    slots = slots | {value}
    initial, result = loop_sources(loop, value.index - 1)
    return (
        _shares_memory(initial, None, slots)
        or _read_after(initial, loop)
        or _shares_memory(result, loop.blocks[0], slots)
    )


def _read_after(initial: Value, loop: Node) -> bool:
    """Whether ``initial``, what a loop starts a carried value with, or a view of it, is read
    after the loop: another name holds the array the loop gives out when no iteration
    rebinds it (``w = y * 1.0; acc = w``, a loop, then ``acc[0] = 1`` and ``w`` read)."""
    pending = [initial]
    while pending:
        for use in pending.pop().uses:
            if use.user is loop:
                continue
            if is_view(use.user) or is_in_place(use.user):
                pending.extend(use.user.outputs)
            elif use.user.is_after(loop):
                return True
    return False


def _shares_memory(value: Value, block: Block | None, slots: frozenset[Value]) -> bool:
    """Whether ``value`` may be an array that something else also holds: a view, a write's
    result, a graph input, a value from outside ``block``, a loop-carried value of a variable
    other than the one followed (``slots``), or an If or loop output that may be one."""
    root = emitted_base(value)
    if root is not value:
        return True
    if carrying_loop(value) is not None:
        return value not in slots
    if value.node.kind in ("prim::If", "prim::Loop") and _may_be_several(value, slots):
        return True
    if block is not None and not in_block(value.node, block) and value.node.kind != PARAM:
        return True
    return value.node.kind == PARAM
