"""The marks around a checkpointed call (``ad.checkpoint``), which the backward recomputes
from instead of the forward keeping what the call computed (Note [Checkpoints] in
`autodiff.checkpoints`).

    aten::_checkpoint_in(Any self, str name) -> Any
        the identity: ``self`` enters the checkpointed call of the function ``name``
    aten::_checkpoint_out(Any self, str name) -> Any
        the identity: ``self`` is (a leaf of) what the checkpointed call returns
"""

from __future__ import annotations

from typing import Any

from ir.ops.registry import Derivative, register_op
from ir.ops.taps import like_operand


# Fresh: CSE and constant propagation leave it, so the copy of it the backward recomputes from
# is never merged back into the forward's, and with it everything it feeds.
@register_op(
    "aten::_checkpoint_in(Any self, str name) -> Any",
    shape=like_operand,
    derivative=Derivative.FORMULA,
    fresh=True,
)
def checkpoint_in(value: Any, name: str) -> Any:
    """``value`` itself, entering the checkpointed call of ``name``."""
    return value


@register_op(
    "aten::_checkpoint_out(Any self, str name) -> Any",
    shape=like_operand,
    derivative=Derivative.FORMULA,
)
def checkpoint_out(value: Any, name: str) -> Any:
    """``value`` itself, returned by the checkpointed call of ``name``."""
    return value
