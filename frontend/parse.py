"""Source text to AST: the lark parser for grammar.lark, then `frontend.tree_to_ast`.

``parse_source`` refuses constructs outside the subset and reports syntax errors as ScriptError,
located in the file the text came from.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from lark import Lark
from lark.exceptions import UnexpectedInput, UnexpectedToken

from frontend import syntax
from frontend.errors import ScriptError
from frontend.lalr import FastParser
from frontend.lexer import Indenter, SubsetLexer, TextError
from frontend.tree_to_ast import Locator, ToAst
from ir.collector import gc_paused
from ir.source import Source, SourceRange


def parse_source(
    text: str,
    filename: str = "<string>",
    first_line: int = 1,
    col_offset: int = 0,
    shown: str | None = None,
) -> syntax.Module:
    """Parse one or more ``def`` (a module's text, or one function's) into a Module.

    ``first_line`` is the file line of the text's first line and ``col_offset`` the width of
    indentation the caller removed from every line, so that ranges and carets count lines and
    columns as the file does. Text that is still indented as a whole (a method body from
    ``inspect.getsource``) is dedented here and the removed width added back the same way.
    ``shown`` is the file's text of those lines when ``text`` is rewritten from it (a lambda's
    body: Note [Lambdas compiled] in `frontend.lambdas`), for errors to show.
    """
    lines = text.splitlines(keepends=True)
    indent = _common_indent(lines)
    shifts = [0]  # shifts[i]: columns removed from line i (1-based) of the text lark sees
    dedented: list[str] = []
    for line in lines:
        removed = len(indent) if indent and line.startswith(indent) else 0
        dedented.append(line[removed:])
        shifts.append(col_offset + removed)
    shifts.append(col_offset)  # the newline appended below may open one more line
    body = "".join(dedented)
    if not body.endswith("\n"):
        body += "\n"

    if shown is None:  # the text errors show: the file's own lines, as given
        shown = "".join(" " * col_offset + line for line in lines) if col_offset else text
    locator = Locator(Source(shown, filename, first_line), shifts)
    with gc_paused():
        try:
            tree = _parser().parse(body)
        except UnexpectedInput as exc:
            raise _syntax_error(exc, locator) from None
        except TextError as exc:
            where = locator.at(exc.line, exc.col, exc.line, exc.col + 1)
            raise ScriptError(exc.message, where) from None
        if not tree.children:
            raise ScriptError(
                "expected a function definition", locator.at(1, 1, 1, 1), doc="functions"
            )
        builder = ToAst(locator)
        module: syntax.Module = builder.transform(tree)
    if builder.errors:
        # Report the construct that starts first; of two starting together, the outer one,
        # which the bottom-up transformer reached last.
        order = enumerate(builder.errors)
        _, (message, where, doc) = min(order, key=lambda e: (e[1][1].line, e[1][1].col, -e[0]))
        raise ScriptError(message, where, doc=doc)
    return module


# ---- lexing and parsing -----------------------------------------------------------------------


# Note [f-strings]
# Python itself splits an f-string token into its text and its fields (``ast.parse`` of the
# token's text), and each field's expression is parsed by our grammar, so that it is held to
# the same subset as any other expression. Its ranges are all the f-string's: an error in a
# field points at the f-string. The emitter makes the whole string one prim::Format, whose
# kernel is ``str.format`` of a template written from the pieces: ``f"{y:.3f}"`` is
# ``"{:.3f}".format(y)``, the same ``__format__`` call.


def parse_expression(text: str, where: SourceRange) -> syntax.Expr:
    """The expression ``text`` (an f-string's field), every range of it ``where``."""
    body = f"def _field():\n    return ({text})\n"
    try:
        tree = _parser().parse(body)
    except (UnexpectedInput, TextError):
        raise ScriptError(f"cannot parse '{text}' in this f-string", where, doc="strings") from None
    builder = ToAst(_Fixed(where.source, [0], where))
    module: syntax.Module = builder.transform(tree)
    if builder.errors:
        message, _, doc = builder.errors[0]
        raise ScriptError(message, where, doc=doc)
    (statement,) = module.functions[0].body
    assert isinstance(statement, syntax.Return)
    assert statement.value is not None
    return statement.value


@dataclass(frozen=True, slots=True)
class _Fixed(Locator):
    """A locator that gives every position one range."""

    where: SourceRange

    def at(self, line: int, col: int, end_line: int, end_col: int) -> SourceRange:
        return self.where


def _common_indent(lines: Sequence[str]) -> str:
    """The leading whitespace of the first line holding code (not blank, not a comment)."""
    for line in lines:
        stripped = line.lstrip(" \t")
        if stripped.strip() and not stripped.startswith("#"):
            return line[: len(line) - len(stripped)]
    return ""


@cache
def _parser() -> FastParser:
    """The LALR parser, built on first use and kept. Building its table takes a second or
    more, so lark keeps the table in the user's cache directory (`_table_cache`), keyed by a
    hash of the grammar, the options and the lark and Python versions that it checks on
    loading: a later process loads it in a tenth of that."""
    grammar = Path(__file__).with_name("grammar.lark").read_text(encoding="utf-8")
    lark = Lark(
        grammar,
        parser="lalr",
        lexer=SubsetLexer,
        postlex=Indenter(),
        start="module",
        maybe_placeholders=True,
        cache=_table_cache(),
    )
    return FastParser(lark, "module")  # See Note [Our own LALR loop]


def _table_cache() -> str | bool:
    """Where lark keeps the parse table: a file of our own under ``$XDG_CACHE_HOME`` (or
    ``~/.cache``), not lark's default in the shared temporary directory, from which another
    user could have it load a pickle of theirs. False (no cache) when that cannot be made."""
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    directory = os.path.join(root, "numpy-autodiff")
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
    except OSError:
        return False
    return os.path.join(directory, "grammar-lalr.cache")


def _syntax_error(exc: UnexpectedInput, locator: Locator) -> ScriptError:
    """A located ScriptError for lark's report of unparseable text."""
    if not isinstance(exc, UnexpectedToken):
        return ScriptError("invalid syntax", locator.at(exc.line, exc.column, exc.line, exc.column))
    token = exc.token
    if token.type in ("_INDENT", "_DEDENT", "$END"):
        # These borrow the position of the newline before them; point past it instead.
        line, col = token.end_line or 1, token.end_column or 1
        where = locator.at(line, col, line, col + 1)
    else:
        where = locator.token(token)
    soft_keyword = re.match(r"(\s*)match\s+", locator.source.line_text(where.line) or "")
    if soft_keyword and where.col == soft_keyword.end() + 1:
        # `match x:` fails at `x`, `match` being a name to this grammar.
        col = soft_keyword.end(1) + 1
        where = SourceRange(where.source, where.line, col, where.line, col + len("match"))
        return ScriptError("'match' statements are not supported", where, doc="match")
    accepts = exc.accepts or exc.expected
    if "_INDENT" in accepts and token.type != "_INDENT":
        return ScriptError("expected an indented block", where)
    if token.type == "_INDENT":
        return ScriptError("unexpected indent", where)
    if token.type == "_NEWLINE":
        return ScriptError("invalid syntax: unexpected end of line", where)
    if token.type in ("_DEDENT", "$END"):
        return ScriptError("invalid syntax: unexpected end of block", where)
    if token.type == "NAME":
        return ScriptError(f"invalid syntax: unexpected name '{token}'", where)
    return ScriptError(f"invalid syntax: unexpected '{token}'", where)
