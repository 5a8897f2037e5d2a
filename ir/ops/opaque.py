"""Opaque calls: Python the compiler never reads, run as one node (``ad.custom_vjp``,
``ad.pure_callback``), and ``ad.stop_gradient``.

    prim::CustomVjp(str fn, Any... args) -> Any
        calls the custom-vjp function registered as ``fn`` on ``args``; differentiation
        replaces it by the two below (Note [Custom vjp] in `autodiff.custom_vjp`)
    prim::CustomVjpFwd(str fn, Any... args) -> Any...
        its ``fwd``: the result, then the residuals (one opaque Python value)
    prim::CustomVjpBwd(str fn, Any residuals, Any grad) -> Any...
        its ``bwd``: one cotangent per argument, checked against the argument's structure
    prim::PureCallback(str fn, Any... args) -> Any
        calls the callback registered as ``fn``, whose result is a constant for
        differentiation
    aten::stop_gradient(Any self) -> Any
        the identity, through which no gradient flows

``fn`` is a constant string naming the user's function and where it is defined
(``"solver@model.py:12"``), so IR text shows what runs. It is a key of `OPAQUE_CALLS`, the
table `autodiff` fills as it compiles calls: `ir` defines the table and the protocol of its
entries, and knows nothing of who fills it (as `ir.ops.taps.running_hooks`). The calls are
impure: the compiler never runs them while compiling, never merges two, never drops one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from ir.errors import ShapeError
from ir.ops.registry import Derivative, register_op
from ir.ops.taps import like_operand
from ir.types import ANY, TENSOR, Type


class OpaqueCall(Protocol):
    """What the table holds for one opaque function (at one structure of its arguments)."""

    def result_types(self, arg_types: Sequence[Type]) -> list[Type]:
        """The result's type for arguments of these types (a generic array when unknown)."""
        ...

    def call(self, *args: Any) -> Any: ...

    def forward(self, *args: Any) -> tuple[Any, Any]:
        """The result and the residuals (custom vjp only)."""
        ...

    def backward(self, residuals: Any, grad: Any) -> Sequence[Any]:
        """One cotangent per argument (custom vjp only)."""
        ...


OPAQUE_CALLS: dict[str, OpaqueCall] = {}
"""Key (``fn``, the first operand) → the function it names."""


def lookup(key: Any) -> OpaqueCall:
    found = OPAQUE_CALLS.get(key) if isinstance(key, str) else None
    if found is None:
        raise ShapeError(f"no opaque function is registered as {key!r} in this process")
    return found


def _result_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    if not isinstance(consts[0], str):
        return [TENSOR]
    return lookup(consts[0]).result_types(types[1:])


def _forward_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    return [*_result_rule(types, consts), ANY]


@register_op(
    "prim::CustomVjp(str fn, Any... args) -> Any",
    shape=_result_rule,
    pure=False,
    derivative=Derivative.STRUCTURAL,
)
def custom_vjp_call(fn: str, *args: Any) -> Any:
    return OPAQUE_CALLS[fn].call(*args)


@register_op(
    "prim::CustomVjpFwd(str fn, Any... args) -> Any...",
    shape=_forward_rule,
    pure=False,
    derivative=Derivative.REFUSED,
    refused_because=(
        "the fwd of an opaque custom_vjp function has no derivative: for a second "
        "derivative, make it scriptable (ad.custom_vjp(fn, scripted=True))"
    ),
)
def custom_vjp_forward(fn: str, *args: Any) -> tuple[Any, Any]:
    return OPAQUE_CALLS[fn].forward(*args)


# Created by differentiation with the arguments' types as its results' types (shape=None
# keeps them).
@register_op(
    "prim::CustomVjpBwd(str fn, Any residuals, Any grad) -> Any...",
    shape=None,
    pure=False,
    derivative=Derivative.REFUSED,
    refused_because=(
        "the bwd of an opaque custom_vjp function has no derivative: for a second "
        "derivative, make it scriptable (ad.custom_vjp(fn, scripted=True))"
    ),
)
def custom_vjp_backward(fn: str, residuals: Any, grad: Any) -> Sequence[Any]:
    return OPAQUE_CALLS[fn].backward(residuals, grad)


@register_op(
    "prim::PureCallback(str fn, Any... args) -> Any",
    shape=_result_rule,
    pure=False,
    derivative=Derivative.NONE,
)
def pure_callback_call(fn: str, *args: Any) -> Any:
    return OPAQUE_CALLS[fn].call(*args)


# Derivative.NONE rather than a formula whose backward returns zeros: the result needs no
# gradient, so `passes.requires_grad` stops there and nothing downstream is differentiated
# through it, at any order (a gradient graph holding it is differentiated again the same way).
@register_op(
    "aten::stop_gradient(Any self) -> Any",
    shape=like_operand,
    derivative=Derivative.NONE,
    spellings={"autodiff.stop_gradient": "value:self"},
)
def stop_gradient(value: Any) -> Any:
    """``value`` itself, through which no gradient flows, at any order (as JAX's
    ``lax.stop_gradient``): in a scripted function, what is computed from it is a constant
    for differentiation. Called from plain Python it is the identity.

    >>> def loss(w):
    ...     return np.sum(w * ad.stop_gradient(w))   # d/dw = stop_gradient(w) = w, not 2 w
    >>> ad.grad(loss)(np.array([1.0, 2.0]))
    array([1., 2.])
    """
    return value
