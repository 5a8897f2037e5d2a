"""Named intermediates: ``autodiff.tap`` and the gradient hooks run on them.

    aten::_tap(Any self, str name) -> Any
        the identity: marks ``self`` as the intermediate called ``name`` (`tap`)
    aten::_tap_hooked(Any self, str name) -> Any
        the identity too; a tap whose gradient the caller asked for, differentiated into
        ``aten::_run_hooks`` (Note [Taps] in `autodiff.taps`)
    aten::_run_hooks(Any grad, str name) -> Any
        hands the gradient of the value tapped as ``name`` to the caller's hooks; impure

``aten::_run_hooks`` is a hook point: it calls whatever runner `running_hooks` installed
around the code that runs it, and is the identity when none is. `ir` defines the point and
knows nothing of who installs a runner (the gradient API does, around one run of ``df``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from ir.ops.prim import AUTOGRAD_ZERO
from ir.ops.registry import Derivative, register_op
from ir.types import Type

HookRunner = Callable[[Any, str], Any]
"""Called with a gradient and its tap's name; returns the gradient to pass on."""

_RUNNER: ContextVar[HookRunner | None] = ContextVar("tap_hook_runner", default=None)
"""What ``aten::_run_hooks`` calls; None: no hooks."""


@contextmanager
def running_hooks(runner: HookRunner) -> Iterator[None]:
    """Within the block, ``aten::_run_hooks(grad, name)`` returns ``runner(grad, name)``
    (unless ``grad`` is the AUTOGRAD_ZERO sentinel); the runner it replaced is back after.

    >>> with running_hooks(lambda grad, name: grad * 2):
    ...     backward(saved, seeds)            # each hooked tap's gradient doubled
    """
    token = _RUNNER.set(runner)
    try:
        yield
    finally:
        _RUNNER.reset(token)


def like_operand(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    """The result has the first operand's type: an array, or a Python number."""
    return [types[0]]


@register_op(
    "aten::_tap(Any self, str name) -> Any",
    shape=like_operand,
    derivative=Derivative.FORMULA,
    spellings={"autodiff.tap": "value:self name"},
)
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


@register_op(
    "aten::_tap_hooked(Any self, str name) -> Any",
    shape=like_operand,
    derivative=Derivative.FORMULA,
)
def tap_hooked(value: Any, name: str) -> Any:
    return value


# Only a hooked gradient's reverse program holds it, and such a gradient is never
# differentiated again (`autodiff.grad` refuses to): structural.
@register_op(
    "aten::_run_hooks(Any grad, str name) -> Any",
    shape=like_operand,
    pure=False,
    derivative=Derivative.STRUCTURAL,
)
def run_hooks(grad: Any, name: str) -> Any:
    runner = _RUNNER.get()
    if runner is None or grad is AUTOGRAD_ZERO:
        return grad
    return runner(grad, name)
