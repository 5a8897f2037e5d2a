"""Lexing the scripted subset: a lexer built from the grammar's own terminals, and the indenter
that turns leading whitespace into INDENT/DEDENT tokens outside brackets.

Both raise TextError (a message and a position), which `frontend.parse` turns into a located
ScriptError.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

from lark import Token
from lark.common import LexerConf
from lark.lark import PostLex
from lark.lexer import Lexer

_TAB_WIDTH = 8
_BLANKS = r"[ \t\f]*"
_OPEN_BRACKETS = frozenset({"LPAR", "LSQB", "LBRACE"})
_CLOSE_BRACKETS = frozenset({"RPAR", "RSQB", "RBRACE"})


class TextError(Exception):
    """A bad character, bad indentation or an unclosed bracket, found by the lexer or the
    indenter; parse_source turns it into a located ScriptError."""

    def __init__(self, message: str, line: int, col: int) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.col = col


class SubsetLexer(Lexer):
    """The grammar's terminals, matched by one regex tried in lark's order of precedence.

    It gives the tokens lark's basic lexer gives (keywords are NAMEs looked up in a table, as
    lark does) in about half the time, mostly by skipping blanks in the same match as the token
    after them: lexing was a third of the parse time. ``lex(text)`` is lark's custom-lexer
    interface 0.
    """

    __future_interface__ = 0

    def __init__(self, conf: LexerConf) -> None:
        terminals = sorted(
            conf.terminals,
            key=lambda t: (-t.priority, -t.pattern.max_width, -len(t.pattern.value), t.name),
        )
        self.keywords = {
            t.pattern.value: t.name
            for t in terminals
            if t.pattern.type == "str" and t.pattern.value.isidentifier()
        }
        alternatives = "|".join(
            f"(?P<{t.name}>{t.pattern.to_regexp()})"
            for t in terminals
            if t.pattern.value not in self.keywords
        )
        self.pattern = re.compile(f"{_BLANKS}(?:{alternatives})")
        self.ignore = frozenset(conf.ignore)

    def lex(self, text: str) -> Iterator[Token]:  # type: ignore[override]
        match = self.pattern.match
        line, line_start, pos = 1, 0, 0
        while pos < len(text):
            found = match(text, pos)
            if found is None:
                start = pos
                while start < len(text) and text[start] in " \t\f":
                    start += 1
                if start == len(text):
                    return
                char = text[start]
                message = (
                    "unterminated string literal"
                    if char in "'\""
                    else f"invalid character {char!r}"
                )
                raise TextError(message, line, start - line_start + 1)
            kind = found.lastgroup or ""
            start, end = found.span(kind)
            value = text[start:end]
            newlines = value.count("\n")
            end_line, end_start = line, line_start
            if newlines:
                end_line, end_start = line + newlines, start + value.rindex("\n") + 1
            if kind not in self.ignore:
                if kind == "NAME":
                    if not value.isascii():
                        # Python reads identifiers NFKC-normalised (PEP 3131): `ﬁ` is `fi`.
                        value = unicodedata.normalize("NFKC", value)
                    kind = self.keywords.get(value, kind)
                column, end_column = start - line_start + 1, end - end_start + 1
                yield Token(kind, value, start, line, column, end_line, end_column, end)
            line, line_start, pos = end_line, end_start, end


class Indenter(PostLex):
    """Inserts ``_INDENT``/``_DEDENT`` after each ``_NEWLINE`` outside brackets, as lark's
    PythonIndenter does, keeping its state per call (reentrant) and locating bad dedents."""

    def process(self, stream: Iterator[Token]) -> Iterator[Token]:
        brackets: list[Token] = []  # open brackets, innermost last
        levels = [0]
        last: Token | None = None
        for token in stream:
            last = token
            if token.type == "_NEWLINE":
                if brackets:
                    continue
                yield token
                spaces = token.rsplit("\n", 1)[1]
                width = spaces.count(" ") + spaces.count("\t") * _TAB_WIDTH
                if width > levels[-1]:
                    levels.append(width)
                    yield Token.new_borrow_pos("_INDENT", spaces, token)
                    continue
                while width < levels[-1]:
                    levels.pop()
                    yield Token.new_borrow_pos("_DEDENT", spaces, token)
                if width != levels[-1]:
                    message = "unindent does not match any outer indentation level"
                    raise TextError(message, token.end_line or 1, token.end_column or 1)
                continue
            yield token
            if token.type in _OPEN_BRACKETS:
                brackets.append(token)
            elif token.type in _CLOSE_BRACKETS and brackets:
                brackets.pop()
        if brackets:
            bracket = brackets[-1]
            message = f"'{bracket}' was never closed"
            raise TextError(message, bracket.line or 1, bracket.column or 1)
        while len(levels) > 1:
            levels.pop()
            yield (
                Token("_DEDENT", "", 0, 1, 1)
                if last is None
                else Token.new_borrow_pos("_DEDENT", "", last)
            )
