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

Note [Operator records]
Everything a pass needs to know about an operator is a field of its OpDef, given where the
operator is registered, and passes read it from `OPS`, never from lists of their own. The
aliasing is written in the schema (Note [Alias annotations] in `ir.ops.schema`), and the
registry refuses a record whose fields contradict it:

* ``view=`` (a ViewRule, Note [Views] in `ir.ops.views`) exactly when the schema says a result
  may share its first operand's memory: ``Tensor(a) self -> Tensor(a)``;
* ``out_of_place=`` (the in-place operator's pure counterpart, which `passes.functionalize`
  substitutes) exactly when the operator is named like TorchScript's in-place operators,
  ``..._``; it writes its first operand and returns it: ``Tensor(a!) self -> Tensor(a!)``;
* an operator that writes an operand (``!``) is impure;
* ``only_reads=`` (the result is a new value holding none of the operands) means no result is
  in an argument's alias set.

Note [Derivatives]
Every registration says what differentiation does with the operator, ``derivative=``, with no
default, because the two ways of having no formula differ: one stops the gradient, the other
refuses it.

* FORMULA: `autodiff.formulas` has its formula, or `autodiff.derivatives.ALIASES` maps it to
  one (a Python-scalar operator sharing a NumPy operator's calculus).
* NONE: its results carry no gradient (comparisons, integer results, shape queries, zeros):
  `passes.requires_grad` stops there, and a gradient through it is zero, correctly.
* REFUSED: a gradient would flow through it, but no formula is written yet: it flows, and
  differentiation refuses it with a located "X is not differentiable". `docs/operators.md`
  lists these, so that a user sees the gap before meeting it.
* STRUCTURAL: differentiation handles it itself (tuples, lists, control flow), or only the
  passes around differentiation create or remove it (autograd bookkeeping, tapes, calls that
  inlining removes, in-place operators that functionalisation rewrites). A gradient flows
  through it; one that still reaches differentiation unhandled is refused, as a REFUSED one.

Note [Refused operands]
An operator with a formula may still have an operand whose gradient has no formula: the
shape parameter of ``scipy.stats.gamma.cdf`` (the regularized incomplete gamma function's
derivative in its parameter has no closed form), or a count that is data (``poisson.pmf``'s
``k``). Its record lists them, ``refused_operands={"a": why}``; the formula returns None for
them, and differentiation refuses, with ``why`` and the call's location, a node where one of
them needs a gradient, rather than give it a zero. Any None for an operand that needs a
gradient is refused anyway (Note [No gradient is not a zero gradient] in
`autodiff.differentiate`); the record says why, and ``docs/operators.md`` names them.
"""

from __future__ import annotations

import enum
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ir.errors import IRError
from ir.graph import Node
from ir.ops.call_spelling import TypedCall
from ir.ops.schema import NO_DEFAULT, Alias, Argument, Schema, Sentinel, parse_schema
from ir.ops.spellings import Spelling, parse_spellings
from ir.ops.views import ViewRule
from ir.types import Type

__all__ = [
    "NOT_CONSTANT",
    "NO_DEFAULT",
    "OPS",
    "Alias",
    "Argument",
    "Derivative",
    "Holds",
    "OpDef",
    "Schema",
    "ShapeRule",
    "TypedCall",
    "ValueFromTypes",
    "is_in_place",
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


class Derivative(enum.Enum):
    """What differentiation does with an operator (Note [Derivatives])."""

    FORMULA = "formula"
    NONE = "none"
    REFUSED = "refused"
    STRUCTURAL = "structural"

    @property
    def carries_gradient(self) -> bool:
        """Whether a result computed from an operand that needs a gradient needs one too."""
        return self is not Derivative.NONE


class Holds(enum.Enum):
    """What of its operands a container operator's result holds, the arrays themselves (not
    copies): what a write to one of them is seen through (`passes.functionalize`)."""

    PACKED = "packed"  # a tuple or list of exactly its operands: (a, b), [a, b]
    EXTENDED = "extended"  # a list operand's elements, then the other operands: lst + [v]
    ELEMENTS = "elements"  # one or some elements of its first operand: t[0], t[1:], unpacking


@dataclass(frozen=True, slots=True)
class OpDef:
    schema: Schema
    kernel: Callable[..., Any] | None  # None for structural prim ops the interpreter runs
    shape: ShapeRule | None
    pure: bool = True  # CSE, DCE and constant propagation may touch it
    # Stated by every registration: Note [Derivatives].
    derivative: Derivative = field(kw_only=True)
    num_blocks: int = 0
    value_from_types: ValueFromTypes | None = None
    # Each call returns a new object that later nodes fill in place (a tape): two calls are
    # never one value, so CSE and constant propagation leave it; DCE still drops it when unused.
    fresh: bool = False
    # The result is a NumPy view of the first operand (Note [Views] in `ir.ops.views`).
    view: ViewRule | None = None
    # Raises for some operand values although their types check (a division by zero, an index
    # out of range, a singular matrix): Note [Hoisting operators that can raise] in
    # `passes.loop_invariants`.
    may_raise: bool = False
    # An in-place operator: the pure operator computing its first operand's new contents from
    # the same operands (Note [Functionalisation] in `passes.functionalize`).
    out_of_place: str | None = None
    # The result is a new value computed from the operands: none of them, no view of one, no
    # container holding one, so the memory plan may reuse an operand's buffer once it has run
    # (Note [Typed calls] in `ir.typed_calls`). Declared where the plan relies on it; a ufunc
    # kernel is known to be one.
    only_reads: bool = False
    # The ufunc method the operator is on an ndarray (``np.sum`` is ``np.add.reduce`` after a
    # Python-level wrapper), bound once so every node binds the same object: generated code
    # calls it directly (Note [Typed calls]).
    ufunc_reduce: Callable[..., Any] | None = None
    # A cheaper spelling for generated code, with the kernel's result bit for bit
    # (`ir.ops.call_spelling`, Note [Typed calls] in `ir.typed_calls`).
    typed_call: TypedCall | None = None
    # Recomputing the result costs less than a tape write: a reverse loop recomputes it from
    # its operands instead of saving it per iteration (`autodiff.differentiate`).
    cheap_to_recompute: bool = False
    # Where the operator is registered, (file, line) of the ``register_op`` call: the operator
    # reference (`autodiff.docs`) links to it, and the formula families follow its file.
    defined_at: tuple[str, int] | None = field(default=None, compare=False)
    # The NumPy functions, array methods and attributes that spell it (Note [NumPy spellings]
    # in `ir.ops.spellings`).
    spellings: tuple[Spelling, ...] = ()
    # A tuple or list operator: which operands' arrays its result holds (`Holds`).
    holds: Holds | None = None
    # Its array result is C-contiguous whatever its operands' layouts (NumPy allocates it so,
    # as for a matrix product), which `passes.functionalize` needs to decide a reshape of it.
    c_order_result: bool = False
    # For a REFUSED derivative: why, and what to write instead, for the error a gradient
    # through it raises.
    refused_because: str | None = None
    # Operands a formula reads for their shape, dtype or structure only (the ``like`` of a
    # backward helper): it gives them no gradient, and that is exact. Any other operand that
    # needs a gradient and gets None is refused (Note [No gradient is not a zero gradient] in
    # `autodiff.differentiate`).
    read_for_type: tuple[str, ...] = ()
    # Operands of a FORMULA operator whose gradient is refused, each with why: Note
    # [Refused operands].
    refused_operands: tuple[tuple[str, str], ...] = ()

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
    check_aliasing(op)
    OPS[op.name] = op


def check_aliasing(op: OpDef) -> None:
    """Raise IRError when ``op``'s fields contradict its schema's alias annotations
    (Note [Operator records])."""
    schema = op.schema
    name = op.name
    viewed = schema.result_aliases_argument(0) and not schema.arguments[0].is_write
    if op.view is not None and not viewed:
        raise IRError(
            f"{name} has a view rule, but its schema does not say that its result may share "
            "its first operand's memory: write 'Tensor(a) self -> Tensor(a)'"
        )
    if viewed and op.view is None:
        raise IRError(
            f"{name}'s schema says its result may share its first operand's memory, but it "
            "has no view rule (view=...): functionalisation would miss the alias"
        )
    in_place = name.split("::")[-1].endswith("_")
    if in_place and op.out_of_place is None:
        raise IRError(
            f"{name} is named as an in-place operator but names no out-of-place counterpart "
            "(out_of_place=...)"
        )
    if op.out_of_place is not None and not in_place:
        raise IRError(f"{name} has an out-of-place counterpart, so its name ends with '_'")
    if op.out_of_place is not None and not (
        schema.arguments and schema.arguments[0].is_write and schema.result_aliases_argument(0)
    ):
        raise IRError(
            f"{name} is an in-place operator: its schema says it writes its first operand and "
            "returns it: 'Tensor(a!) self -> Tensor(a!)'"
        )
    if schema.written and op.pure:
        written = ", ".join(arg.name for arg in schema.written)
        raise IRError(f"{name} writes {written} ('!' in its schema), so it cannot be pure")
    if op.only_reads and any(schema.return_aliases):
        raise IRError(
            f"{name} is declared only_reads, but its schema says a result may share an "
            "operand's memory"
        )


def _caller() -> tuple[str, int]:
    """The file and line of the call to ``register_op``/``register_structural``."""
    frame = sys._getframe(2)
    return frame.f_code.co_filename, frame.f_lineno


def register_op(
    schema: str,
    *,
    shape: ShapeRule | None,
    derivative: Derivative,
    pure: bool = True,
    num_blocks: int = 0,
    value_from_types: ValueFromTypes | None = None,
    fresh: bool = False,
    view: ViewRule | None = None,
    may_raise: bool = False,
    out_of_place: str | None = None,
    only_reads: bool = False,
    ufunc_reduce: Callable[..., Any] | None = None,
    typed_call: TypedCall | None = None,
    cheap_to_recompute: bool = False,
    spellings: Mapping[str, str] | None = None,
    holds: Holds | None = None,
    c_order_result: bool = False,
    refused_because: str | None = None,
    read_for_type: Sequence[str] = (),
    refused_operands: Mapping[str, str] | None = None,
) -> Callable[[K], K]:
    """Decorate a kernel to register it under ``schema``; returns the kernel unchanged.
    ``spellings`` maps each NumPy function, array method or attribute that spells the operator
    to its parameters (Note [NumPy spellings] in `ir.ops.spellings`).

    >>> @register_op(
    ...     "test::twice(Tensor self) -> Tensor", shape=None, derivative=Derivative.REFUSED
    ... )
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
                num_blocks,
                value_from_types,
                fresh,
                view,
                may_raise,
                out_of_place,
                only_reads,
                ufunc_reduce,
                typed_call,
                cheap_to_recompute,
                defined_at,
                spelled,
                holds,
                c_order_result,
                refused_because,
                tuple(read_for_type),
                _refused_operands(parsed, derivative, refused_operands or {}),
                derivative=derivative,
            )
        )
        return kernel

    return decorate


def _refused_operands(
    schema: Schema, derivative: Derivative, refused: Mapping[str, str]
) -> tuple[tuple[str, str], ...]:
    """``refused`` checked against the schema: each names an argument of an operator that has
    a formula (Note [Refused operands])."""
    names = {argument.name for argument in schema.arguments}
    for name in refused:
        if name not in names:
            raise IRError(f"{schema.name} refuses the gradient of {name!r}, not an argument")
    if refused and derivative is not Derivative.FORMULA:
        raise IRError(f"{schema.name} refuses operands' gradients but has no formula")
    return tuple(refused.items())


def register_structural(
    schema: str,
    *,
    pure: bool,
    num_blocks: int,
    derivative: Derivative,
    shape: ShapeRule | None = None,
    cheap_to_recompute: bool = False,
) -> None:
    """Register a prim op without a kernel; `ir.interpreter` runs it itself."""
    parsed = parse_schema(schema)
    _add(
        OpDef(
            parsed,
            None,
            shape,
            pure,
            num_blocks,
            derivative=derivative,
            cheap_to_recompute=cheap_to_recompute,
            defined_at=_caller(),
        )
    )


def is_in_place(node: Node) -> bool:
    """Whether ``node`` writes its first operand in place and returns it (its record names an
    out-of-place counterpart; Note [Operator records])."""
    op = OPS.get(node.kind)
    return op is not None and op.out_of_place is not None


def lookup_op(kind: str) -> OpDef:
    op = OPS.get(kind)
    if op is None:
        raise IRError(f"unknown operator {kind}")
    return op
