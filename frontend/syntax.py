"""The AST of the scripted Python subset: frozen dataclasses, each node carrying its SourceRange.

Equality ignores ranges (``range`` is ``compare=False``), so two parses of the same code in
different places compare equal. ``range`` is keyword-only: ``Name("x", range=r)``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, fields
from types import EllipsisType
from typing import Literal, TypeAlias

from ir.source import SourceRange

BinaryOperator: TypeAlias = Literal[
    "+", "-", "*", "/", "//", "%", "**", "@", "&", "|", "^", "<<", ">>"
]
UnaryOperator: TypeAlias = Literal["-", "+", "~", "not"]
CompareOperator: TypeAlias = Literal[
    "<", ">", "==", "!=", "<=", ">=", "in", "not in", "is", "is not"
]
BoolOperator: TypeAlias = Literal["and", "or"]
ParamKind: TypeAlias = Literal["positional", "var_positional", "keyword_only", "var_keyword"]
ConstantValue: TypeAlias = int | float | complex | bool | str | EllipsisType | None


@dataclass(frozen=True, slots=True)
class Node:
    """Base of every AST node."""

    range: SourceRange = field(kw_only=True, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Expr(Node):
    """Base of expressions."""


@dataclass(frozen=True, slots=True)
class Stmt(Node):
    """Base of statements."""


# ---- expressions ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Name(Expr):
    """``x``"""

    id: str


@dataclass(frozen=True, slots=True)
class Constant(Expr):
    """``1``, ``1e-3``, ``True``, ``None``, ``...``, ``"float32"`` (adjacent strings joined)."""

    value: ConstantValue


@dataclass(frozen=True, slots=True)
class FormattedField(Node):
    """``{value!r:.3f}`` in an f-string: the expression, its conversion (``""``, ``"!r"``,
    ``"!s"``, ``"!a"``) and its format spec (``".3f"``, ``""``)."""

    value: Expr
    conversion: str
    spec: str


@dataclass(frozen=True, slots=True)
class FormattedString(Expr):
    """An f-string (adjacent strings joined): its text pieces and fields in order."""

    parts: tuple[str | FormattedField, ...]


@dataclass(frozen=True, slots=True)
class Attribute(Expr):
    """``value.attr``: ``x.T``, ``np.linalg``."""

    value: Expr
    attr: str


@dataclass(frozen=True, slots=True)
class Subscript(Expr):
    """``value[index]``; ``x[1:3, None]`` has a Tuple index holding a Slice and a Constant."""

    value: Expr
    index: Expr


@dataclass(frozen=True, slots=True)
class Slice(Expr):
    """``lower:upper:step`` inside a subscript; omitted parts are None."""

    lower: Expr | None
    upper: Expr | None
    step: Expr | None


@dataclass(frozen=True, slots=True)
class Keyword(Node):
    """``name=value`` in a call."""

    name: str
    value: Expr


@dataclass(frozen=True, slots=True)
class Starred(Expr):
    """``*value`` among a call's positional arguments."""

    value: Expr


@dataclass(frozen=True, slots=True)
class Call(Expr):
    """``func(*args, **keywords)`` with positional arguments (some `Starred`) before keyword
    ones; ``unpacked`` holds the ``**mapping`` arguments, in order."""

    func: Expr
    args: tuple[Expr, ...]
    keywords: tuple[Keyword, ...]
    unpacked: tuple[Expr, ...] = ()

    def __repr__(self) -> str:
        return _repr_past_defaults(self)


@dataclass(frozen=True, slots=True)
class BinOp(Expr):
    """``left op right``, including ``**`` and ``@``."""

    op: BinaryOperator
    left: Expr
    right: Expr


@dataclass(frozen=True, slots=True)
class UnaryOp(Expr):
    """``-x``, ``+x``, ``~x``, ``not x``; ``-1`` is a UnaryOp over ``Constant(1)``."""

    op: UnaryOperator
    operand: Expr


@dataclass(frozen=True, slots=True)
class BoolOp(Expr):
    """``a and b and c``: one node for a run of the same operator."""

    op: BoolOperator
    values: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class Compare(Expr):
    """``left ops[0] comparators[0] ops[1] comparators[1] ...``: ``0 < x <= 1``."""

    left: Expr
    ops: tuple[CompareOperator, ...]
    comparators: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class IfExp(Expr):
    """``body if test else orelse``"""

    test: Expr
    body: Expr
    orelse: Expr


@dataclass(frozen=True, slots=True)
class Tuple(Expr):
    """``(a, b)``, ``a, b``, ``()``; also the index of ``x[i, j]``."""

    elts: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class List(Expr):
    """``[a, b]``"""

    elts: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class Dict(Expr):
    """``{"W": w, "b": b}``: keys and values in the order written."""

    keys: tuple[Expr, ...]
    values: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class Lambda(Expr):
    """``lambda x, y=1.0: body``"""

    params: tuple[Param, ...]
    body: Expr


@dataclass(frozen=True, slots=True)
class ForClause(Node):
    """``for target in iter if c1 if c2`` of a comprehension."""

    target: Expr
    iter: Expr
    conditions: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class Comprehension(Expr):
    """``[element for … in … if …]`` (``kind`` "list") or ``(element for …)`` ("generator");
    ``{key: value for …}`` ("dict") has the Tuple ``(key, value)`` as its element."""

    kind: Literal["list", "generator", "dict"]
    element: Expr
    clauses: tuple[ForClause, ...]


# ---- statements -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Pass(Stmt):
    """``pass``"""


@dataclass(frozen=True, slots=True)
class Break(Stmt):
    """``break``"""


@dataclass(frozen=True, slots=True)
class Continue(Stmt):
    """``continue``"""


@dataclass(frozen=True, slots=True)
class ExprStmt(Stmt):
    """An expression evaluated for its effect: ``y.fill(0)``. Bare strings are dropped instead."""

    value: Expr


@dataclass(frozen=True, slots=True)
class Assign(Stmt):
    """``t0 = t1 = value``: targets are Name, Attribute, Subscript, or Tuple/List of them."""

    targets: tuple[Expr, ...]
    value: Expr


@dataclass(frozen=True, slots=True)
class AugAssign(Stmt):
    """``target op= value`` where ``op`` is the binary operator (``+`` for ``+=``)."""

    target: Expr
    op: BinaryOperator
    value: Expr


@dataclass(frozen=True, slots=True)
class AnnAssign(Stmt):
    """``target: annotation = value``; value is None for a bare declaration."""

    target: Expr
    annotation: Expr
    value: Expr | None


@dataclass(frozen=True, slots=True)
class Return(Stmt):
    """``return value``; ``return a, b`` returns a Tuple; value is None for a bare return."""

    value: Expr | None


@dataclass(frozen=True, slots=True)
class If(Stmt):
    """``if test: body else: orelse``; an ``elif`` is an If alone in ``orelse``."""

    test: Expr
    body: tuple[Stmt, ...]
    orelse: tuple[Stmt, ...]


@dataclass(frozen=True, slots=True)
class For(Stmt):
    """``for target in iter: body``"""

    target: Expr
    iter: Expr
    body: tuple[Stmt, ...]


@dataclass(frozen=True, slots=True)
class While(Stmt):
    """``while test: body``"""

    test: Expr
    body: tuple[Stmt, ...]


@dataclass(frozen=True, slots=True)
class Raise(Stmt):
    """``raise exc from cause``; both optional."""

    exc: Expr | None
    cause: Expr | None


@dataclass(frozen=True, slots=True)
class Assert(Stmt):
    """``assert test, msg``"""

    test: Expr
    msg: Expr | None


@dataclass(frozen=True, slots=True)
class Param(Node):
    """``name: annotation = default`` in a ``def``; ``*name`` and ``**name`` have their
    ``kind``, and a parameter after ``*`` or ``*name`` is keyword-only, as in
    ``inspect.Parameter``."""

    name: str
    annotation: Expr | None
    default: Expr | None
    kind: ParamKind = "positional"

    def __repr__(self) -> str:
        return _repr_past_defaults(self)



@dataclass(frozen=True, slots=True)
class FunctionDef(Stmt):
    """A ``def``, at module level or nested. Its range starts at ``def``, after decorators.

    Bare string statements (the docstring and any other) are left out of ``body``; the first
    one is kept as ``docstring``. ``body`` may therefore be empty.
    """

    name: str
    params: tuple[Param, ...]
    returns: Expr | None
    body: tuple[Stmt, ...]
    decorators: tuple[Expr, ...]
    docstring: str | None


@dataclass(frozen=True, slots=True)
class Alias(Node):
    """``name as asname`` in an import."""

    name: str
    asname: str | None


@dataclass(frozen=True, slots=True)
class Import(Stmt):
    """``import a.b as c`` (module None) or ``from module import name as asname, ...``.

    Only allowed at module level; ``from m import *`` has the single alias ``*``.
    """

    module: str | None
    names: tuple[Alias, ...]


@dataclass(frozen=True, slots=True)
class Module(Node):
    """A parsed text: its functions in source order, and any module-level imports."""

    functions: tuple[FunctionDef, ...]
    imports: tuple[Import, ...]


def _repr_past_defaults(node: Node) -> str:
    """The dataclass repr, leaving out fields that hold their default (the rare ones: a
    parameter's kind, a call's ``**`` arguments)."""
    shown = (
        f"{f.name}={getattr(node, f.name)!r}"
        for f in fields(node)
        if f.repr and getattr(node, f.name) != f.default
    )
    return f"{type(node).__name__}({', '.join(shown)})"


# ---- traversal --------------------------------------------------------------------------------


def iter_child_nodes(node: Node) -> Iterator[Node]:
    """The direct children of ``node`` in field order (nodes in tuples included)."""
    for f in fields(node):
        value = getattr(node, f.name)
        if isinstance(value, Node):
            yield value
        elif isinstance(value, tuple):
            yield from (item for item in value if isinstance(item, Node))


def walk(node: Node) -> Iterator[Node]:
    """``node`` and all its descendants, parents before children, without recursion."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(list(iter_child_nodes(current))))
