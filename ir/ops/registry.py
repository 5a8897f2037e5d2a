"""The operator table: one OpDef per operator kind, registered next to its NumPy kernel.

Note [Operator conventions]
- Every operand is an IR input, in schema order, all present: the frontend fills defaults from
  the schema and passes non-tensor arguments as values (usually from prim::Constant).
- A kernel is called as ``kernel(*input_values)``. It returns the value of the only result when
  the schema has exactly one, and otherwise (several results, or ``-> Any...``) a sequence with
  one item per result, even when a node has just one. A structural prim op has no kernel: the
  interpreter runs it.
- ``aten::`` ops have NumPy semantics (``aten::mul`` is ``np.multiply``: two Python ints give a
  NumPy integer); ``prim::`` ops have Python semantics (``prim::mul`` of two ints is an int) or
  are structure (control flow, tuples, lists, autograd bookkeeping).
- Operands NumPy accepts as array-likes (an array or a Python number) are typed ``Any`` in
  schemas, because `ir.types` has no union of Tensor and Scalar; the shape rule checks them.
- A schema with ``-> Any...`` has a variable number of results (prim::If, prim::TupleUnpack, …):
  the node decides, and `OpDef.num_outputs` is -1.

Note [Shape rules]
``shape(types, consts)`` gets one type and one compile-time value per input (``NOT_CONSTANT``
when the value is unknown) and returns the result types, or raises ShapeError with a NumPy-like
message. A tensor result is ``TensorType(dtype, shape)`` with requires_grad None; whatever the
inputs leave unknown (dtype None, shape None, a dim None) stays unknown in the result. A rule of
a variadic-result op that cannot tell how many results there are returns an empty sequence,
which means "keep the node's declared types".
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ir.errors import IRError
from ir.ops.schema import NO_DEFAULT, Argument, Schema, Sentinel, parse_schema
from ir.ops.spellings import Spelling, parse_spellings
from ir.ops.views import ViewRule
from ir.types import Type

__all__ = [
    "NOT_CONSTANT",
    "NO_DEFAULT",
    "OPS",
    "Argument",
    "OpDef",
    "Schema",
    "ShapeRule",
    "ValueFromTypes",
    "lookup_op",
    "parse_schema",
    "register_op",
    "register_structural",
]

NOT_CONSTANT = Sentinel("NOT_CONSTANT")  # See Note [Shape rules]

ShapeRule = Callable[[Sequence[Type], Sequence[Any]], Sequence[Type]]
# The result of a pure op computed from its input types alone (``x.shape`` of a typed ``x``),
# or NOT_CONSTANT when the types do not fix it.
ValueFromTypes = Callable[[Sequence[Type]], Any]

K = TypeVar("K", bound=Callable[..., Any])


@dataclass(frozen=True, slots=True)
class OpDef:
    schema: Schema
    kernel: Callable[..., Any] | None  # None for structural prim ops the interpreter runs
    shape: ShapeRule | None
    pure: bool = True  # CSE, DCE and constant propagation may touch it
    differentiable: bool = True
    num_blocks: int = 0
    value_from_types: ValueFromTypes | None = None
    # Each call returns a new object that later nodes fill in place (a tape): two calls are
    # never one value, so CSE and constant propagation leave it; DCE still drops it when unused.
    fresh: bool = False
    # The result is a NumPy view of the first operand (Note [Views] in `ir.ops.views`).
    view: ViewRule | None = None
    # Where the operator is registered, (file, line) of the ``register_op`` call: the operator
    # reference (`autodiff.docs`) links to it, and the formula families follow its file.
    defined_at: tuple[str, int] | None = field(default=None, compare=False)
    # The NumPy functions, array methods and attributes that spell it (Note [NumPy spellings]
    # in `ir.ops.spellings`).
    spellings: tuple[Spelling, ...] = ()

    @property
    def name(self) -> str:
        return self.schema.name

    @property
    def variadic_outputs(self) -> bool:
        return self.schema.variadic_returns

    @property
    def num_outputs(self) -> int:
        """The number of results, or -1 when the node decides (``-> Any...``)."""
        return -1 if self.schema.variadic_returns else len(self.schema.returns)


OPS: dict[str, OpDef] = {}


def _add(op: OpDef) -> None:
    if op.name in OPS:
        raise IRError(f"operator {op.name} is registered twice")
    OPS[op.name] = op


def _caller() -> tuple[str, int]:
    """The file and line of the call to ``register_op``/``register_structural``."""
    frame = sys._getframe(2)
    return frame.f_code.co_filename, frame.f_lineno


def register_op(
    schema: str,
    *,
    shape: ShapeRule | None,
    pure: bool = True,
    differentiable: bool = True,
    num_blocks: int = 0,
    value_from_types: ValueFromTypes | None = None,
    fresh: bool = False,
    view: ViewRule | None = None,
    spellings: Mapping[str, str] | None = None,
) -> Callable[[K], K]:
    """Decorate a kernel to register it under ``schema``; returns the kernel unchanged.
    ``spellings`` maps each NumPy function, array method or attribute that spells the operator
    to its parameters (Note [NumPy spellings] in `ir.ops.spellings`).

    >>> @register_op("test::twice(Tensor self) -> Tensor", shape=None)
    ... def twice(x): return x * 2
    >>> OPS.pop("test::twice").kernel is twice
    True
    """
    parsed = parse_schema(schema)
    defined_at = _caller()
    spelled = parse_spellings(parsed, spellings or {})

    def decorate(kernel: K) -> K:
        _add(
            OpDef(
                parsed,
                kernel,
                shape,
                pure,
                differentiable,
                num_blocks,
                value_from_types,
                fresh,
                view,
                defined_at,
                spelled,
            )
        )
        return kernel

    return decorate


def register_structural(
    schema: str, *, pure: bool, num_blocks: int, shape: ShapeRule | None = None
) -> None:
    """Register a prim op without a kernel; `ir.interpreter` runs it itself."""
    _add(OpDef(parse_schema(schema), None, shape, pure, False, num_blocks, defined_at=_caller()))


def lookup_op(kind: str) -> OpDef:
    op = OPS.get(kind)
    if op is None:
        raise IRError(f"unknown operator {kind}")
    return op
