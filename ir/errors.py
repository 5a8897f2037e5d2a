"""The project's exception hierarchy: every error a user can cause carries a SourceRange."""

from __future__ import annotations

import builtins

from ir.source import SourceRange

LANGUAGE_DOC = "docs/language.md"
"""The page, relative to the repository root, that lists what scripted code may contain."""


class AutodiffError(Exception):
    """Base of every error the project raises on purpose. Prints like a compiler diagnostic::

    examples/bad.py:3:12: error: undefined value 'z'
        y = x * z
                ^
    """

    doc_link: str | None = None
    """The page that says what to write instead (``docs/language.md#lambda``), printed last as
    ``see ...``; a class default, as `located_user_exception` builds some without ``__init__``."""

    def __init__(
        self,
        message: str,
        source_range: SourceRange | None = None,
        *,
        doc_link: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.source_range = source_range
        self.notes: list[str] = []
        self.doc_link = doc_link

    def add_note_line(self, line: str) -> None:
        """Add context printed under the message (e.g. ``while executing %3 = ...``)."""
        self.notes.append(line)

    def __str__(self) -> str:
        where = f"{self.source_range}: " if self.source_range is not None else ""
        parts = [f"{where}error: {self.message}"]
        parts.extend(f"  {note}" for note in self.notes)
        if self.source_range is not None:
            highlighted = self.source_range.highlight()
            if highlighted:
                parts.append(highlighted)
        if self.doc_link is not None:
            parts.append(f"  see {self.doc_link}")
        return "\n".join(parts)


class IRError(AutodiffError):
    """Misuse of the IR API (e.g. destroying a node whose outputs are still used)."""


class IRParseError(AutodiffError):
    """Malformed IR text."""


class VerifyError(AutodiffError):
    """A graph that breaks an IR invariant."""


class InterpreterError(AutodiffError):
    """A kernel failed while running a graph."""


class ShapeError(AutodiffError):
    """Operand types that do not fit an operator (found at specialisation)."""


class BackendError(AutodiffError):
    """An operator, or an argument, that an array backend cannot run (Note [Array backends]
    in `ir.backends`): named, with the backend, and located at the user's line where a node
    is to blame."""


class MissingDependencyError(AutodiffError, ImportError):
    """An optional library or program a feature needs is not installed (networkx for
    ``to_networkx``, Graphviz for SVG). The message says how to install it; it is an
    ImportError too, so ``except ImportError`` catches it."""


class ProgramRaised(Exception):
    """Raised by ``prim::RaiseException``: the compiled program's own ``raise`` or failed
    ``assert``, which the executor turns into the exception the program names, located
    (`located_user_exception`)."""

    def __init__(self, kind: str, message: str | None) -> None:
        super().__init__(message or kind)
        self.kind = kind
        self.message = message


_USER_EXCEPTIONS: dict[str, type[BaseException]] = {}


def located_user_exception(raised: ProgramRaised, where: SourceRange | None) -> AutodiffError:
    """The exception ``raised`` names (``ValueError``), as an instance of a class that is
    both that exception and an `AutodiffError`, so that ``except ValueError`` catches it and
    it prints with the program's file, line and caret."""
    base = getattr(builtins, raised.kind, None)
    if not (isinstance(base, type) and issubclass(base, Exception)):
        base = RuntimeError
    cls = _USER_EXCEPTIONS.get(raised.kind)
    if cls is None:
        cls = type(base.__name__, (base, AutodiffError), {"__module__": "builtins"})
        _USER_EXCEPTIONS[raised.kind] = cls
    message = raised.message if raised.message is not None else ""
    error = cls(message)
    assert isinstance(error, AutodiffError)
    error.message = f"{raised.kind}: {message}" if message else raised.kind
    error.source_range = where
    error.notes = []
    return error
