"""The emitter's environment: a chain of scopes mapping Python names to IR values, one scope per
block being emitted, as TorchScript's environment stack. Re-assigning a name binds a new value
(SSA); a scope that ends hands its bindings to the emitter, which merges them into If outputs or
loop-carried values.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, fields
from typing import Any

from frontend import syntax
from frontend.errors import Topic
from ir.graph import Value
from ir.source import SourceRange


@dataclass(frozen=True, slots=True)
class PyObject:
    """A name or attribute that denotes a Python object at compile time (``np``, ``np.tanh``,
    ``EPS``) rather than an IR value."""

    obj: Any
    spelled: str  # for messages: "numpy.fft.fft"
    # Where an object read from outside lives, so that its attributes are read through it
    # (a `frontend.objects.FreeVariable`): Note [Reading objects from outside] in
    # `frontend.objects`.
    origin: Any = None


@dataclass(frozen=True, slots=True, eq=False)
class LocalFunction:
    """A ``lambda`` or a ``def`` inside the function compiled: called where it is called, its
    body emitted there (Note [Local functions] in `frontend.local_functions`)."""

    name: str
    params: tuple[syntax.Param, ...]
    body: tuple[syntax.Stmt, ...]
    defaults: tuple[tuple[str, Value], ...]  # evaluated where it is defined, as in Python
    range: SourceRange


@dataclass(frozen=True, slots=True)
class Unbound:
    """A name that must not be read here, and the message to give when it is (``'z' is not
    defined in every branch``), with the section of docs/language.md on it."""

    message: str
    doc: Topic


Binding = Value | Unbound | PyObject | LocalFunction


class Scope:
    """The names bound in one block; reads fall back to the enclosing scopes."""

    __slots__ = ("names", "parent", "raises")

    def __init__(self, parent: Scope | None = None) -> None:
        self.parent = parent
        self.names: dict[str, Binding] = {}
        self.raises = False  # the block ends in a ``raise``: nothing after it runs

    def lookup(self, name: str) -> Binding | None:
        scope: Scope | None = self
        while scope is not None:
            found = scope.names.get(name)
            if found is not None:
                return found
            scope = scope.parent
        return None

    def value(self, name: str) -> Value | None:
        """The value ``name`` holds here, or None when it is unbound or unknown."""
        found = self.lookup(name)
        return found if isinstance(found, Value) else None

    def bind(self, name: str, binding: Binding) -> None:
        self.names[name] = binding

    def root(self) -> Scope:
        scope = self
        while scope.parent is not None:
            scope = scope.parent
        return scope


def assigned_names(statements: Iterable[syntax.Stmt]) -> list[str]:
    """The names the statements bind, in order of first appearance, looking into nested blocks
    (the loop-carried candidates of a loop body). ``hs.append(v)`` binds ``hs`` (Note [Lists
    are values] in `ir.ops.prim`)."""
    found: dict[str, None] = {}
    for stmt in _walk_statements(statements):
        targets: tuple[syntax.Expr, ...] = ()
        appended = append_target(stmt)
        if appended is not None:
            targets = (appended,)
        elif isinstance(stmt, syntax.Assign):
            targets = stmt.targets
        elif isinstance(stmt, syntax.AugAssign | syntax.For) or (
            isinstance(stmt, syntax.AnnAssign) and stmt.value is not None
        ):
            targets = (stmt.target,)
        for target in targets:
            for name in target_names(target):
                found.setdefault(name, None)
    return list(found)


def append_target(stmt: syntax.Stmt) -> syntax.Name | None:
    """The list name of a ``name.append(...)`` statement, or None for any other statement.

    ``hs.append(h)`` gives the Name ``hs``; ``y = hs.append(h)`` and ``x.sum()`` give None.
    """
    if not isinstance(stmt, syntax.ExprStmt) or not isinstance(stmt.value, syntax.Call):
        return None
    func = stmt.value.func
    if not isinstance(func, syntax.Attribute) or func.attr != "append":
        return None
    return func.value if isinstance(func.value, syntax.Name) else None


def _walk_statements(statements: Iterable[syntax.Stmt]) -> Iterator[syntax.Stmt]:
    pending = list(statements)
    pending.reverse()
    while pending:
        stmt = pending.pop()
        yield stmt
        inner: list[syntax.Stmt] = []
        if isinstance(stmt, syntax.If):
            inner = [*stmt.body, *stmt.orelse]
        elif isinstance(stmt, syntax.For | syntax.While):
            inner = list(stmt.body)
        pending.extend(reversed(inner))


def target_names(target: syntax.Expr) -> Iterator[str]:
    """The names an assignment target binds: ``a, (b, c)`` binds a, b and c."""
    if isinstance(target, syntax.Name):
        yield target.id
    elif isinstance(target, syntax.Tuple | syntax.List):
        for element in target.elts:
            yield from target_names(element)


def exits_anywhere(statements: Iterable[syntax.Stmt]) -> bool:
    """True when a ``return``, ``break`` or ``continue`` is among ``statements`` or nested in
    them, at any depth."""
    return any(
        isinstance(stmt, syntax.Return | syntax.Break | syntax.Continue)
        for stmt in _walk_statements(statements)
    )


def has_exit(stmt: syntax.Stmt) -> bool:
    """True when ``stmt`` is an ``if`` with a ``return``, ``break`` or ``continue`` in one of its
    branches (not counting those inside nested loops, which end only that loop's body)."""
    if not isinstance(stmt, syntax.If):
        return False
    pending: list[syntax.Stmt] = [*stmt.body, *stmt.orelse]
    while pending:
        inner = pending.pop()
        if isinstance(inner, syntax.Return | syntax.Break | syntax.Continue):
            return True
        if isinstance(inner, syntax.If):
            pending.extend([*inner.body, *inner.orelse])
    return False


def subscripted_names(statements: Iterable[syntax.Stmt]) -> set[str]:
    """The names subscripted anywhere in ``statements`` (``params`` in ``params[i]``), at any
    depth: the loops over ``range`` that `FunctionEmitter.emit_range_loop` unrolls."""
    found: set[str] = set()
    pending: list[object] = list(statements)
    while pending:
        node = pending.pop()
        if isinstance(node, tuple | list):
            pending.extend(node)
        elif isinstance(node, syntax.Node):
            if isinstance(node, syntax.Subscript) and isinstance(node.value, syntax.Name):
                found.add(node.value.id)
            pending.extend(getattr(node, f.name) for f in fields(node))
    return found
