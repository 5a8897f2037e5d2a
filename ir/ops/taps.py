"""Named intermediates: ``autodiff.tap`` and the gradient hooks run on them.

    aten::_tap(Any self, str name) -> Any
        the identity: marks ``self`` as the intermediate called ``name`` (`tap`)
    aten::_tap_hooked(Any self, str name) -> Any
        the identity too; a tap whose gradient the caller asked for, differentiated into
        ``aten::_run_hooks`` (Note [Taps] in `autodiff.taps`)
    aten::_run_hooks(Any grad, str name) -> Any
        hands the gradient of the value tapped as ``name`` to the caller's hooks; impure

The hooks of one backward run are reached through `HOOK_RUNNER`, a context variable the
gradient API sets around ``df``: `ir` knows nothing of the API that registers them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextvars import ContextVar
from typing import Any

from ir.ops.prim import AUTOGRAD_ZERO
from ir.ops.registry import register_op
from ir.types import Type

HOOK_RUNNER: ContextVar[Callable[[Any, str], Any] | None] = ContextVar(
    "autodiff_hook_runner", default=None
)
"""What ``aten::_run_hooks`` calls with a gradient and its tap's name; None: no hooks."""


def like_operand(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    """The result has the first operand's type: an array, or a Python number."""
    return [types[0]]


@register_op("aten::_tap(Any self, str name) -> Any", shape=like_operand)
def tap(value: Any, name: str) -> Any:
    """Mark ``value`` as the intermediate called ``name``; returns ``value`` itself.

    In a scripted function, ``ad.grad(f, retain=(name,))`` also returns the gradient of the
    output with respect to the tapped value, and ``ad.grad(f, hooks={name: fn})`` runs
    ``fn`` on that gradient. Called from plain Python it is the identity.

    >>> @ad.script
    ... def loss(w, x):
    ...     h = ad.tap(np.tanh(x @ w), "h")
    ...     return np.sum(h ** 2)
    >>> dw, retained = ad.grad(loss, retain=("h",))(w, x)
    >>> retained["h"]                      # d loss / d h, shaped like h
    """
    return value


@register_op("aten::_tap_hooked(Any self, str name) -> Any", shape=like_operand)
def tap_hooked(value: Any, name: str) -> Any:
    return value


@register_op(
    "aten::_run_hooks(Any grad, str name) -> Any",
    shape=like_operand,
    pure=False,
    differentiable=False,
)
def run_hooks(grad: Any, name: str) -> Any:
    runner = HOOK_RUNNER.get()
    if runner is None or grad is AUTOGRAD_ZERO:
        return grad
    return runner(grad, name)
