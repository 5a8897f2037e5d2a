"""Source text and the ranges of it that nodes, AST nodes and errors point at."""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass, field, replace
from pathlib import PurePath


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
        # Lines end at "\n" only, as the lexers count them: str.splitlines would also end one
        # at a form feed or U+2028, which are blanks inside a line, and show the wrong line.
        lines = self.text.split("\n")
        if 0 <= index < len(lines) and (index < len(lines) - 1 or lines[index]):
            return lines[index].removesuffix("\r")
        return None


def shown_path(filename: str) -> str:
    """``filename`` as IR comments and error messages show it: relative to the working directory
    when it is a file under it, else as given (absolute, or a name such as ``<stdin>``).

    >>> shown_path(os.path.abspath("examples/mlp.py"))
    'examples/mlp.py'
    >>> shown_path("/elsewhere/model.py")
    '/elsewhere/model.py'
    """
    try:
        working_directory = os.getcwd()
    except OSError:  # the working directory was removed
        return filename
    return _relative_to(filename, working_directory)


@functools.lru_cache(maxsize=256)  # one per file and directory: an IR print asks once per node
def _relative_to(filename: str, directory: str) -> str:
    path = PurePath(filename)
    if not path.is_absolute():
        return filename
    try:
        return str(path.relative_to(directory))
    except ValueError:  # not under it
        return filename


@dataclass(frozen=True, slots=True)
class SourceRange:
    """A span of source: 1-based line and column as counted in the file, end exclusive.

    A range read back from an IR comment (``# model.py:4:8``) knows only its start: its source
    has empty text, and ``highlight`` then prints just the location.

    ``gradient_of`` names the forward operator (``"aten::sqrt"``) whose derivative a node with
    this range computes, as autograd's sequence numbers tie a backward node to its forward op:
    differentiation gives every node of a GradOf the forward node's range tagged so, and passes
    that copy a node's range carry the tag along, even once the GradOf is unwrapped. It is not
    part of equality, hashing or the printed location.

    ``in_ir_text`` marks a range of IR text: `ir.parser` gives one to every node that has no
    location comment, the node's line, so that verifier and shape errors about a graph read from
    an ``.ir`` file point at that line. The printer writes no comment for it (the text it points
    into is the printer's own output), so print → parse → print stays the identity.
    """

    source: Source
    line: int
    col: int
    end_line: int
    end_col: int
    gradient_of: str | None = field(default=None, compare=False)
    in_ir_text: bool = field(default=False, compare=False)

    @staticmethod
    def location(filename: str, line: int, col: int) -> SourceRange:
        """A range that knows only where it starts, as parsed from ``# file:line:col``."""
        return SourceRange(Source("", filename, 1), line, col, line, col)

    def of_gradient(self, kind: str) -> SourceRange:
        """This range, tagged as that of the derivative of a forward ``kind`` node."""
        return replace(self, gradient_of=kind)

    @property
    def filename(self) -> str:
        return self.source.filename

    def __str__(self) -> str:
        return f"{shown_path(self.source.filename)}:{self.line}:{self.col}"

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
        start = self.col - 1
        if len(text) > _LONGEST_SHOWN_LINE:  # a window around the range, so errors stay short
            width = min(width, _LONGEST_SHOWN_LINE // 2)
            left = max(0, start - _LONGEST_SHOWN_LINE // 4)
            right = min(len(text), start + width + _LONGEST_SHOWN_LINE // 4)
            before = "..." if left > 0 else ""
            text = before + text[left:right] + ("..." if right < len(text) else "")
            start += len(before) - left
        return f"    {text}\n    {' ' * start}{'^' * width}"


# A longer source line is shown cut to the part around the range an error points at.
_LONGEST_SHOWN_LINE = 160
