"""Source text and the ranges of it that nodes, AST nodes and errors point at."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Source:
    """A piece of source text. ``first_line`` is the file line number of the text's first
    line, so a function taken from the middle of a module reports lines as counted in the file."""

    text: str
    filename: str = "<string>"
    first_line: int = 1

    def line_text(self, line: int) -> str | None:
        """The text of file line ``line``, or None when it is not part of this source."""
        index = line - self.first_line
        lines = self.text.splitlines()
        if 0 <= index < len(lines):
            return lines[index]
        return None


@dataclass(frozen=True, slots=True)
class SourceRange:
    """A span of source: 1-based line and column as counted in the file, end exclusive.

    A range read back from an IR comment (``# model.py:4:8``) knows only its start: its source
    has empty text, and ``highlight`` then prints just the location.
    """

    source: Source
    line: int
    col: int
    end_line: int
    end_col: int

    @staticmethod
    def location(filename: str, line: int, col: int) -> SourceRange:
        """A range that knows only where it starts, as parsed from ``# file:line:col``."""
        return SourceRange(Source("", filename, 1), line, col, line, col)

    @property
    def filename(self) -> str:
        return self.source.filename

    def __str__(self) -> str:
        return f"{self.source.filename}:{self.line}:{self.col}"

    def highlight(self) -> str:
        """The source line with a caret line under the range (empty when the text is unknown).

        >>> src = Source("y = x * z\\n", "bad.py", 3)
        >>> print(SourceRange(src, 3, 9, 3, 10).highlight())
            y = x * z
                    ^
        """
        text = self.source.line_text(self.line)
        if text is None:
            return ""
        width = self.end_col - self.col if self.end_line == self.line else len(text) - self.col + 1
        width = max(1, width)
        return f"    {text}\n    {' ' * (self.col - 1)}{'^' * width}"
