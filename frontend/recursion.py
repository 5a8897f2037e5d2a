"""Recursion unrolled while compiling, on values known then.

Note [Recursion while compiling]
A recursive function is compiled as a chain of specialisations, one per level (Note
[Specialised callees] in `frontend.compile`), each calling the next: the recursion is unrolled,
so its depth must be decided by what is known while compiling. Two kinds of recursion are:

- structural recursion over a container (``tree_sum(c) for c in t``): each level's argument
  has another `Tree`, so each level is another specialisation, and the recursion ends where
  the structure does;
- recursion on Python numbers and strings known while compiling (``fact(4)``, ``n - 1``): a
  function found to call itself with the very parameter types it is being compiled for is
  marked recursive and compiled again from the start, and from then on it is specialised on
  the values of its constant arguments too (a parameter typed `Known`, bound to that constant
  in its body), so that ``if n <= 1`` is decided at each level.

A call that would compile a function for parameter types it is already being compiled for,
once it is specialised on values, depends on values known only at run time: it is refused
where it is written. So is a recursion deeper than `RECURSION_LIMIT` levels (a ``lambda`` or a
nested ``def`` is emitted where it is called, so its recursion is unrolled in place, limited
in depth by the same bound and in size by `LOCAL_CALLS_LIMIT`).
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

from frontend.errors import ScriptError, Topic
from ir.graph import Value
from ir.ops import OPS
from ir.source import SourceRange
from ir.types import BOOL, FLOAT, INT, STR, Type

RECURSION_LIMIT = 64
"""How many levels of one function a recursion unrolled while compiling may nest."""

LOCAL_CALLS_LIMIT = 4096
"""How many recursive calls of local functions one function may unroll in all."""


@dataclass(frozen=True, slots=True)
class Known(Type):
    """The type of an argument known while compiling, with its value: a recursive function is
    specialised on it (Note [Recursion while compiling]). The IR sees ``ty``."""

    value: Hashable
    ty: Type

    def __str__(self) -> str:
        return f"{self.ty}={self.value!r}"


def known_type(ty: Type, value: Value) -> Type:
    """``Known`` for a number, bool or string argument known while compiling (a constant,
    or Python arithmetic on constants: ``n - 1``); else ``ty``."""
    if ty not in _KNOWN_TYPES:
        return ty
    found = _folded(value, _FOLD_DEPTH)
    return ty if found is _UNKNOWN else Known(found, ty)


_KNOWN_TYPES = (INT, FLOAT, BOOL, STR)
_PYTHON_TYPES: dict[Type, type] = {INT: int, FLOAT: float, BOOL: bool, STR: str}
_FOLD_DEPTH = 32
_UNKNOWN = object()


def _folded(value: Value, depth: int) -> object:
    """The value of a constant, or of a pure scalar ``prim::`` operator on such values, as its
    kernel computes it (what constant propagation would give); `_UNKNOWN` otherwise."""
    node = value.node
    if node.kind == "prim::Constant":
        return node.attrs.get("value")
    op = OPS.get(node.kind)
    if (
        depth == 0
        or op is None
        or not node.kind.startswith("prim::")
        or not op.pure
        or op.kernel is None
        or node.blocks
        or len(node.outputs) != 1
        or not all(v.ty in _KNOWN_TYPES for v in node.inputs)
    ):
        return _UNKNOWN
    operands = [_folded(v, depth - 1) for v in node.inputs]
    if any(operand is _UNKNOWN for operand in operands):
        return _UNKNOWN
    try:
        result = op.kernel(*operands)
    except (ArithmeticError, ValueError, TypeError):  # raised at run time, as Python would
        return _UNKNOWN
    return result if type(result) is _PYTHON_TYPES.get(value.ty) else _UNKNOWN


def unknown(ty: Type) -> Type:
    """``ty`` without the value a `Known` carries."""
    return ty.ty if isinstance(ty, Known) else ty


def too_deep(name: str, r: SourceRange, doc: Topic = "helpers-and-recursion") -> ScriptError:
    """A recursion unrolled past `RECURSION_LIMIT`; ``doc`` is "nested-def" for a local one."""
    return ScriptError(
        f"recursion of '{name}' goes deeper than {RECURSION_LIMIT} levels while compiling: a "
        "recursive call is unrolled while compiling, so its depth must be decided by values "
        "known then (a container's structure, Python ints); write a loop for a recursion "
        "whose depth depends on run-time values",
        r,
        doc=doc,
    )


def depends_on_run_time(name: str, r: SourceRange) -> ScriptError:
    return ScriptError(
        f"recursive call to '{name}' with arguments of the same kind, not known while "
        "compiling: a recursive call is unrolled while compiling, so what decides its depth "
        "(a Python int such as n - 1, a container's structure) must be known then; write a "
        "loop (for/while) for a recursion whose depth depends on run-time values",
        r,
        doc="helpers-and-recursion",
    )
