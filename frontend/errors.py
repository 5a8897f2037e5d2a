"""Errors found while scripting a function: refused constructs and syntax errors, with location
and a link to the section of docs/language.md that says what to write instead."""

from __future__ import annotations

from typing import Literal

from ir.errors import LANGUAGE_DOC, AutodiffError
from ir.source import SourceRange

__all__ = ["LANGUAGE_DOC", "ContainerUseError", "ScriptError", "Topic"]

# The sections of docs/language.md a refusal links to, by their heading's anchor
# (tests/unit/test_language_doc.py checks that each is one).
Topic = Literal[
    "functions",
    "numbers-and-arrays",
    "operators",
    "numpy-functions",
    "indexing",
    "writes-and-views",
    "assignment",
    "branches",
    "loops",
    "lists-tuples-and-dicts",
    "arrays-are-not-lists",
    "comprehensions",
    "builtins",
    "strings",
    "print",
    "raise-and-assert",
    "helpers-and-recursion",
    "lambda",
    "nested-def",
    "partial-and-methods",
    "globals-and-closures",
    "random-numbers",
    "math",
    "gradients-inside",
    "opaque-calls",
    "try",
    "with",
    "yield",
    "class",
    "global-and-nonlocal",
    "del",
    "async",
    "match",
    "assignment-expressions",
    "sets",
    "import",
]


class ScriptError(AutodiffError):
    """Source the frontend cannot compile. Prints ``file:line:col: error: message``, the source
    line, a caret under the construct and, last, the section of docs/language.md on it
    (re-exported as ``autodiff.ScriptError``)::

        model.py:4:5: error: 'try' statements are not supported
            try:
            ^^^^
          see docs/language.md#try

    ``doc`` names the section (None: the page as a whole, for syntax errors).
    """

    def __init__(
        self, message: str, source_range: SourceRange | None = None, *, doc: Topic | None = None
    ) -> None:
        link = LANGUAGE_DOC if doc is None else f"{LANGUAGE_DOC}#{doc}"
        super().__init__(message, source_range, doc_link=link)
        self.doc: Topic | None = doc

    @property
    def link(self) -> str:
        """Where the page says what to write instead: ``docs/language.md#lambda``."""
        return self.doc_link or LANGUAGE_DOC


class ContainerUseError(ScriptError):
    """An array used as a container: iterated with ``for``, unpacked, indexed with a string,
    asked for a field or ``.items()``. Raised for a parameter typed as an array only because
    nothing says otherwise, it is held back until a call's arguments tell (Note [Compiling
    for containers] in `autodiff.script`): the function may be meant to take a list or a
    dict."""
