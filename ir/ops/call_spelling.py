"""How generated code may spell an operator's call more cheaply than by calling its kernel: the
`Call` an operator record's ``typed_call`` returns, and the facts about operands those
spellings share. Each spelling sits next to its operator's kernel, in the operator's family
file; which spellings are allowed, and why each gives the kernel's result bit for bit, is
Note [Typed calls] in `ir.typed_calls`.

>>> def spell_double(node, args, bind):
...     return Call(f"{args[0]} * 2") if is_array(node.inputs[0].ty) else None
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ir.graph import Node, Value
from ir.types import TensorType

Bind = Callable[[Any, str], str]
"""``bind(obj, hint)``: a closure variable of the generated function holding ``obj``."""


@dataclass(frozen=True, slots=True)
class Call:
    """How a node runs: ``result = expr``, then ``then`` (with ``{out}`` the result's name)."""

    expr: str
    then: str | None = None
    fresh: bool = False  # the result is a new ndarray that no other value holds


TypedCall = Callable[[Node, Sequence[str], Bind], Call | None]
"""``typed_call(node, args, bind)``: how ``node`` runs, its operands spelled ``args``; None to
call the kernel."""

NOT_CONSTANT = object()

ADD_REDUCE = np.add.reduce
"""``np.add.reduce``, bound once: sums, means and sums to a size bind this one object, one
closure variable (``np.add.reduce`` is a new bound method on each access)."""


def constant(value: Value) -> Any:
    """The value of a prim::Constant, else NOT_CONSTANT."""
    return value.node.attr("value") if value.node.kind == "prim::Constant" else NOT_CONSTANT


def is_array(ty: Any) -> bool:
    """A tensor of rank at least 1: an ndarray, never a NumPy scalar."""
    return isinstance(ty, TensorType) and ty.shape is not None and len(ty.shape) > 0


def reduction_operands(node: Node) -> tuple[str, str] | None:
    """``axis`` and ``keepdims`` of a reduction ``(self, axis, keepdims)`` spelled as
    literals, when the operand is an ndarray and both are constants; else None."""
    if len(node.inputs) != 3 or not is_array(node.inputs[0].ty):
        return None
    axis, keepdims = constant(node.inputs[1]), constant(node.inputs[2])
    if type(keepdims) is not bool:
        return None
    if axis is None or type(axis) is int:
        return repr(axis), repr(keepdims)
    if isinstance(axis, tuple | list) and all(type(a) is int for a in axis):
        return repr(tuple(axis)), repr(keepdims)  # the kernel takes a list as a tuple
    return None


# Python's own operators, as prim:: kernels: written as the operator (``49 - j``).
_PYTHON_OPERATORS: dict[Any, str] = {
    operator.add: "{} + {}",
    operator.sub: "{} - {}",
    operator.mul: "{} * {}",
    operator.truediv: "{} / {}",
    operator.floordiv: "{} // {}",
    operator.mod: "{} % {}",
    operator.pow: "{} ** {}",
    operator.eq: "{} == {}",
    operator.ne: "{} != {}",
    operator.lt: "{} < {}",
    operator.le: "{} <= {}",
    operator.gt: "{} > {}",
    operator.ge: "{} >= {}",
    operator.neg: "-{}",
    operator.not_: "not {}",
}


def as_python_operator(kernel: Callable[..., Any]) -> TypedCall | None:
    """The spelling of a prim:: operator whose kernel is one of Python's operators, written as
    the operator; None for any other kernel (``min``, ``abs``)."""
    template = _PYTHON_OPERATORS.get(kernel)
    if template is None:
        return None

    def spell(node: Node, args: Sequence[str], bind: Bind) -> Call | None:
        if len(args) != template.count("{}"):
            return None
        # a negative literal bracketed: ``-1 ** 2`` is not ``(-1) ** 2``
        return Call(template.format(*(f"({a})" if a.startswith("-") else a for a in args)))

    return spell
