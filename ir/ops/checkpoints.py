"""The marks around a checkpointed call (``ad.checkpoint``), which the backward recomputes
from instead of the forward keeping what the call computed (Note [Checkpoints] in
`autodiff.checkpoints`).

    aten::_checkpoint_in(Any(a) self, str name) -> Any(a)
        the identity: ``self`` enters the checkpointed call of the function ``name``
    aten::_checkpoint_out(Any(a) self, str name) -> Any(a)
        the identity: ``self`` is (a leaf of) what the checkpointed call returns

Both return their operand itself, so both are views of it (Note [Views] in `ir.ops.views`): a
write the checkpointed function makes into an array it was given reaches the caller's array,
and a write into what it returned reaches the array it returned, as in NumPy.
"""

from __future__ import annotations

from typing import Any

from ir.graph import Graph, Node, Value
from ir.ops.registry import Derivative, register_op
from ir.ops.taps import like_operand
from ir.ops.views import ViewRule


def _written_whole(graph: Graph, view: Node, parent: Value, value: Value) -> Value:
    """A write into the mark's result is a write into its operand, all of it."""
    return value


WHOLE = ViewRule(_written_whole)


# Fresh: CSE and constant propagation leave it, so the copy of it the backward recomputes from
# is never merged back into the forward's, and with it everything it feeds.
@register_op(
    "aten::_checkpoint_in(Any(a) self, str name) -> Any(a)",
    shape=like_operand,
    derivative=Derivative.FORMULA,
    fresh=True,
    view=WHOLE,
)
def checkpoint_in(value: Any, name: str) -> Any:
    """``value`` itself, entering the checkpointed call of ``name``."""
    return value


@register_op(
    "aten::_checkpoint_out(Any(a) self, str name) -> Any(a)",
    shape=like_operand,
    derivative=Derivative.FORMULA,
    view=WHOLE,
)
def checkpoint_out(value: Any, name: str) -> Any:
    """``value`` itself, returned by the checkpointed call of ``name``."""
    return value
