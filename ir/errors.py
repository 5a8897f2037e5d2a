"""The project's exception hierarchy: every error a user can cause carries a SourceRange."""

from __future__ import annotations

from ir.source import SourceRange


class AutodiffError(Exception):
    """Base of every error the project raises on purpose. Prints like a compiler diagnostic::

    examples/bad.py:3:12: error: undefined value 'z'
        y = x * z
                ^
    """

    def __init__(self, message: str, source_range: SourceRange | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.source_range = source_range
        self.notes: list[str] = []

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
