"""IR text parser: reads back exactly what `ir.printer` prints (grammar in ``ir/ir.lark``).
A node keeps the location its comment gives (``# model.py:4:8``), or else its own line of the
IR text, which errors point at and the printer does not write back.

Kinds are plain ``ns::name`` strings, so the parser needs no operator table. Names follow Note
[Print-time names]: ``%x`` and ``%x.3`` give the hint ``x``, ``%3`` gives no hint. Every graph
is one namespace, as in the printer: a name is defined once and used only after its definition
in the text. Whether a use is also visible from its block (dominance) is `ir.verify`'s job.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken
from lark.lexer import PatternStr

from ir.collector import gc_paused
from ir.errors import IRParseError
from ir.graph import Block, Graph, Node, Value
from ir.printer import canonical_hint
from ir.source import Source, SourceRange
from ir.types import (
    DTYPE_TO_NAME,
    NAME_TO_DTYPE,
    NAMED_TYPES,
    RANK_ZERO,
    ListType,
    OptionalType,
    TensorType,
    TupleType,
    Type,
)

_GRAMMAR = Path(__file__).with_name("ir.lark")

# How a syntax error names the terminals the grammar expected.
_TERMINAL_WORDS: dict[str, str] = {
    "$END": "end of input",
    "_NL": "end of line",
    "VALUE": "a value like %x",
    "KIND": "an operator like aten::mul",
    "GRAPH_NAME": "a graph name like @f",
    "BLOCK_LABEL": "a block label like block0",
    "TYPE_NAME": "a type",
    "TENSOR_TYPE": "a type",
    "ATTR_NAME": "an attribute name",
    "INT": "an integer",
    "FLOAT": "a float",
    "STRING": "a string",
    "COMMENT": "a comment",
}

# Trees of the grammar; placeholders for absent optional parts are None.
_ParseTree = Tree[Token]

# A location comment; one whose line or column has more than 9 digits is only a remark.
_SOURCE_COMMENT = re.compile(r"# ?(?P<file>.*):(?P<line>\d{1,9}):(?P<col>\d{1,9})\s*")
_MAX_DIM_DIGITS = 18  # a dimension is an int64 (NumPy's limit), so at most 18 digits

# Note [Limits of IR text]
# Text that nests deeper than Python source can, or spells a decimal integer Python refuses to
# convert, is refused with a located error rather than met with a RecursionError or ValueError:
# - `MAX_NESTING` levels of blocks in blocks, and of brackets in a type or an attribute value.
#   Python source nests at most 200 brackets and 100 indented blocks, so no program's IR comes
#   near it; the passes, the verifier and the printer recurse once or a few times a level and
#   have been run at 300 levels under Python's default recursion limit.
# - `MAX_DECIMAL_DIGITS` digits in a decimal integer: Python's own limit on converting decimal
#   strings (`sys.get_int_max_str_digits`). Larger integers are written in hexadecimal, as the
#   printer writes them, which has no limit.
MAX_NESTING = 200
MAX_DECIMAL_DIGITS = 4300


@cache
def _lark() -> Lark:
    """The parser for ``ir.lark``, built on first use (about 0.2 s)."""
    return Lark(
        _GRAMMAR.read_text(),
        parser="lalr",
        start=["start", "type"],
        maybe_placeholders=True,
    )


def parse_module(text: str, filename: str = "<string>") -> dict[str, Graph]:
    """Every graph of ``text`` in order, keyed by name; a graph printed without ``@name`` is
    keyed by its position in the file (``"0"``, ``"1"``, ...)."""
    reader = _Reader(Source(text, filename))
    with gc_paused():
        return reader.module(reader.parse(text, "start"))


def parse_graph(text: str, filename: str = "<string>") -> Graph:
    """The one graph of ``text``; anything but exactly one graph is an error."""
    reader = _Reader(Source(text, filename))
    with gc_paused():
        tree = reader.parse(text, "start")
        graphs = [child for child in tree.children if isinstance(child, Tree)]
        if len(graphs) != 1:
            first = SourceRange(reader.source, 1, 1, 1, 1)
            where = reader.range_of(graphs[1]) if graphs else first
            raise IRParseError(f"expected exactly one graph, found {len(graphs)}", where)
        return reader.graph(graphs[0])


def parse_type(text: str, filename: str = "<string>") -> Type:
    """A type written as `ir.types` prints it, e.g. ``Double(*, 4, requires_grad=1)``."""
    reader = _Reader(Source(text, filename))
    return reader.read_type(reader.parse(text.rstrip(), "type"))


@dataclass(slots=True)
class _Frame:
    """A block being filled: nodes still to read, then its results. Nested blocks get their own
    frame on an explicit stack, so deep nesting never meets Python's recursion limit."""

    block: Block
    params: _ParseTree | None
    body: list[_ParseTree]
    results: _ParseTree | None
    position: int = -1  # -1 until the block's parameters are defined


class _Reader:
    """Turns the lark tree of one text into graphs; knows the text, for error locations."""

    def __init__(self, source: Source) -> None:
        self.source = source
        self.scope: dict[str, Value] = {}
        self.definitions: dict[str, Token] = {}
        self.lines: list[str] | None = None  # the text's lines, split on first need

    # -- locations and syntax errors -------------------------------------------------------

    def range_of(self, item: Token | _ParseTree) -> SourceRange:
        """Where a token is, or where a tree's first token is. (Trees carry no positions of
        their own: lark's propagate_positions would cost a third of the parse time.)"""
        token = item if isinstance(item, Token) else next(_tokens_in(item), None)
        if token is None or token.line is None or token.column is None:
            return SourceRange(self.source, 1, 1, 1, 1)
        line, col = token.line, token.column
        return SourceRange(self.source, line, col, token.end_line or line, token.end_column or col)

    def error(self, message: str, item: Token | _ParseTree) -> IRParseError:
        return IRParseError(message, self.range_of(item))

    def parse(self, text: str, start: str) -> _ParseTree:
        # A last line without its newline still ends the final statement.
        padded = text if text.endswith("\n") or start != "start" else text + "\n"
        try:
            return _lark().parse(padded, start=start)
        except UnexpectedInput as exc:
            raise self._syntax_error(exc) from None

    def _syntax_error(self, exc: UnexpectedInput) -> IRParseError:
        line, col = exc.line, exc.column
        at_end = isinstance(exc, UnexpectedToken) and exc.token.type == "$END"
        if at_end or line < 1 or col < 1:  # just after the last character that is not a space
            lines = self.source.text.rstrip().splitlines() or [""]
            line, col = len(lines), len(lines[-1]) + 1
        width = 1
        if isinstance(exc, UnexpectedToken):
            token = exc.token
            if at_end:
                found = "end of input"
            elif token.type == "_NL":
                found = "end of line"
            else:
                found = f"'{_shorten(str(token))}'"
                width = len(str(token))
            message = f"expected {_describe(exc.accepts or exc.expected)}, found {found}"
        elif isinstance(exc, UnexpectedCharacters):
            at = exc.pos_in_stream or 0
            char = self.source.text[at : at + 1]
            message = f"unexpected character {char!r}; expected {_describe(exc.allowed)}"
        else:
            message = "syntax error"
        return IRParseError(message, SourceRange(self.source, line, col, line, col + width))

    # -- graphs ----------------------------------------------------------------------------

    def module(self, tree: _ParseTree) -> dict[str, Graph]:
        graphs: dict[str, Graph] = {}
        position = 0
        for child in tree.children:
            if not isinstance(child, Tree):
                continue
            graph = self.graph(child)
            key = graph.name if graph.name is not None else str(position)
            if key in graphs:
                raise self.error(f"a second graph named '{key}'", child)
            graphs[key] = graph
            position += 1
        return graphs

    def graph(self, tree: _ParseTree) -> Graph:
        keyword, name, params, comment, *body, end, results, end_comment = tree.children
        graph = Graph(str(name)[1:] if isinstance(name, Token) else None)
        self.scope = {}
        self.definitions = {}
        self._locate_sentinels(graph.block, (keyword, comment), (end, end_comment))
        stack = [_Frame(graph.block, _tree_or_none(params), _trees(body), _tree_or_none(results))]
        while stack:
            frame = stack[-1]
            if frame.position < 0:
                self._define_params(frame.block, frame.params)
                frame.position = 0
            if frame.position == len(frame.body):
                stack.pop()
                for token in _tokens(frame.results):
                    frame.block.register_output(self._use(token))
                continue
            node_tree = frame.body[frame.position]
            frame.position += 1
            node = self._node(graph, node_tree)
            frame.block.append_node(node)
            block_trees = _trees(node_tree.children[5:])
            if block_trees and len(stack) > MAX_NESTING:
                raise self._too_deep("blocks", block_trees[0])
            blocks = [node.add_block() for _ in block_trees]
            # Pushed last-first, so block0 is read (and defines its names) before block1.
            for index in reversed(range(len(block_trees))):
                stack.append(self._frame(blocks[index], block_trees[index], index))
        return graph

    def _frame(self, block: Block, tree: _ParseTree, index: int) -> _Frame:
        label, params, comment, *body, end, results, end_comment = tree.children
        if str(label) != f"block{index}":
            raise self.error(f"expected block{index}, found {label}", label)
        self._locate_sentinels(block, (label, comment), (end, end_comment))
        return _Frame(block, _tree_or_none(params), _trees(body), _tree_or_none(results))

    def _locate_sentinels(
        self, block: Block, header: tuple[object, object], end: tuple[object, object]
    ) -> None:
        """Give a block's parameter and return sentinels the lines (each a first token and a
        comment) of its header and of its ``return``/``->`` statement, which verifier errors
        about them point at."""
        for sentinel, (first, comment) in ((block.param_node, header), (block.return_node, end)):
            if isinstance(first, Token):
                sentinel.source_range = self._node_line(first, comment)

    def _node(self, graph: Graph, tree: _ParseTree) -> Node:
        """The node of a ``node`` tree (its blocks, from child 5 on, are read by `graph`)."""
        outputs, kind, attrs, uses, comment = tree.children[:5]
        node = Node(graph, str(kind))
        for token in _tokens(_tree_or_none(uses)):
            node.add_input(self._use(token))
        if isinstance(attrs, Tree):
            for attr in _trees(attrs.children):
                name, value = _pair(attr)
                if str(name) in node.attrs:
                    raise self.error(f"attribute '{name}' is given twice", name)
                node.attrs[str(name)] = self.attr_value(value, name)
        if isinstance(outputs, Tree):
            for typed in _trees(outputs.children):
                name, ty = _pair(typed)
                self._define(node.add_output(self.read_type(ty)), name)
        located = _source_comment(str(comment)) if isinstance(comment, Token) else None
        node.source_range = located or self._node_line(tree, comment)
        return node

    def _node_line(self, tree: _ParseTree | Token, comment: object) -> SourceRange:
        """The node's statement in the IR text, up to its comment: the range errors about a
        node without a location comment point at (Note on ``in_ir_text`` in `ir.source`)."""
        start = self.range_of(tree)
        if self.lines is None:
            self.lines = self.source.text.splitlines()
        text = self.lines[start.line - 1] if start.line <= len(self.lines) else ""
        if isinstance(comment, Token) and comment.line == start.line and comment.column:
            text = text[: comment.column - 1]
        end = max(len(text.rstrip()) + 1, start.col + 1)
        return SourceRange(self.source, start.line, start.col, start.line, end, in_ir_text=True)

    def _define_params(self, block: Block, params: _ParseTree | None) -> None:
        if params is None:
            return
        for typed in _trees(params.children):
            name, ty = _pair(typed)
            self._define(block.add_input(self.read_type(ty)), name)

    def _define(self, value: Value, token: Token) -> None:
        name = str(token)[1:]
        first = self.definitions.get(name)
        if first is not None:
            message = f"value '%{name}' is defined twice (first on line {first.line})"
            raise self.error(message, token)
        value.name_hint = canonical_hint(name)
        self.scope[name] = value
        self.definitions[name] = token

    def _use(self, token: Token) -> Value:
        name = str(token)[1:]
        value = self.scope.get(name)
        if value is not None:
            return value
        later = re.compile(rf"%{re.escape(name)}\s*:")
        if later.search(self.source.text, token.end_pos or 0):
            raise self.error(f"value '%{name}' is used before its definition", token)
        raise self.error(f"undefined value '%{name}'", token)

    # -- types -----------------------------------------------------------------------------

    def read_type(self, tree: _ParseTree, depth: int = 0) -> Type:
        kind = tree.data
        if depth >= MAX_NESTING and kind in ("tuple_type", "list_type", "optional_type"):
            raise self._too_deep("a type", tree)
        if kind == "tuple_type":
            elements = _trees(tree.children)
            return TupleType(tuple(self.read_type(child, depth + 1) for child in elements))
        if kind == "list_type":
            return ListType(self.read_type(_only_tree(tree), depth + 1))
        if kind == "optional_type":
            return OptionalType(self.read_type(_only_tree(tree), depth + 1))
        token = _only_token(tree)
        if kind == "tensor_type":
            return self._tensor_type(token)
        named = NAMED_TYPES.get(str(token))
        if named is not None:
            return named
        return TensorType(self._dtype(token, str(token)))

    def _dtype(self, token: Token, name: str) -> str | None:
        if name == "Tensor":
            return None
        dtype = NAME_TO_DTYPE.get(name)
        if dtype is None:
            raise self.error(f"unknown type '{name}'", token)
        return dtype

    def _tensor_type(self, token: Token) -> TensorType:
        """``Name(d0, d1, ..., requires_grad=b)``, where each dim is a size or ``*``, or
        ``Name(rank=0, requires_grad=b)``."""
        name, _, rest = str(token).partition("(")
        dtype = self._dtype(token, name)
        items = [item.strip() for item in rest[:-1].split(",")] if rest[:-1].strip() else []
        requires_grad: bool | None = None
        if items and items[-1].replace(" ", "") in ("requires_grad=0", "requires_grad=1"):
            requires_grad = items.pop().endswith("1")
        # See Note [Rank 0 with attributes]: `Float(requires_grad=1)` has an unknown rank,
        # `Float(rank=0, requires_grad=1)` rank 0.
        if [item.replace(" ", "") for item in items] == [RANK_ZERO]:
            return TensorType(dtype, (), requires_grad)
        if not items and requires_grad is not None:
            return TensorType(dtype, None, requires_grad)
        dims: list[int | None] = []
        for item in items:
            if item == "*":
                dims.append(None)
            elif item.isdecimal() and item.isascii() and len(item) <= _MAX_DIM_DIGITS:
                dims.append(int(item))
            else:
                raise self.error(f"bad dimension '{item}' in {token}", token)
        return TensorType(dtype, tuple(dims), requires_grad)

    # -- attribute values ------------------------------------------------------------------

    def attr_value(self, tree: _ParseTree, name: Token, depth: int = 0) -> Any:
        """The value of attribute ``name``; errors without a token of their own point at it."""
        kind = tree.data
        if kind == "none":
            return None
        if kind in ("true", "false"):
            return kind == "true"
        if kind == "int":
            return self._int(_only_token(tree))
        if kind == "float":
            return float(_only_token(tree))
        if kind == "string":
            return self._string(_only_token(tree))
        if kind == "complex":
            real, imag = (float(str(token)) for token in tree.children)
            return complex(real, imag)
        if depth >= MAX_NESTING:
            raise self._too_deep("an attribute value", name)
        if kind == "list":
            return [self.attr_value(child, name, depth + 1) for child in _trees(tree.children)]
        if kind == "tuple":
            items = _trees(tree.children)
            return tuple(self.attr_value(child, name, depth + 1) for child in items)
        return self._tensor(tree, name, depth + 1)

    def _too_deep(self, what: str, where: Token | _ParseTree) -> IRParseError:
        message = f"{what} nested more than {MAX_NESTING} levels deep"
        return self.error(message, where)  # See Note [Limits of IR text]

    def _int(self, token: Token) -> int:
        text = str(token)
        digits = text.removeprefix("-")
        if digits[:2] in ("0x", "0X"):
            return int(text, 16)
        if len(digits) > MAX_DECIMAL_DIGITS:
            message = (
                f"an integer of {len(digits)} decimal digits; more than {MAX_DECIMAL_DIGITS} "
                "must be written in hexadecimal (0x...)"
            )
            raise self.error(message, token)  # See Note [Limits of IR text]
        return int(text)

    def _string(self, token: Token) -> str:
        try:
            text: str = json.loads(str(token))
        except json.JSONDecodeError as exc:
            raise self.error(f"bad string literal: {exc.msg}", token) from None
        return text

    def _tensor(self, tree: _ParseTree, name: Token, depth: int) -> np.ndarray[Any, Any]:
        type_tree, *elements = _trees(tree.children)
        ty = self.read_type(type_tree)
        if not isinstance(ty, TensorType) or not ty.is_complete or ty.requires_grad is not None:
            raise self.error(f"a tensor constant needs a dtype and full shape, not {ty}", type_tree)
        dtype = np.dtype(ty.dtype)
        values = [self.attr_value(element, name, depth) for element in elements]
        expected = math.prod(d for d in ty.shape or () if d is not None)
        if len(values) != expected:
            raise self.error(f"{ty} needs {expected} values, found {len(values)}", tree)
        for element, value in zip(elements, values, strict=True):
            if not _fits(value, dtype):
                message = f"{value!r} does not fit a {DTYPE_TO_NAME[dtype.name]} tensor"
                raise self.error(message, element)
        try:
            array = np.array(values, dtype=dtype)
        except OverflowError:
            raise self.error(f"a value is out of range for {ty}", tree) from None
        return array.reshape(ty.shape or ())


def _fits(value: object, dtype: np.dtype[Any]) -> bool:
    if dtype.kind == "b":
        return isinstance(value, bool)
    if dtype.kind in "iu":
        return isinstance(value, int) and not isinstance(value, bool)
    if dtype.kind == "c":
        return isinstance(value, complex)
    return isinstance(value, int | float) and not isinstance(value, bool)


def _describe(expected: set[str] | frozenset[str]) -> str:
    words = sorted({_terminal_word(name) for name in expected})
    if len(words) == 1:
        return words[0]
    return ", ".join(words[:-1]) + " or " + words[-1]


def _terminal_word(name: str) -> str:
    word = _TERMINAL_WORDS.get(name)
    if word is not None:
        return word
    try:
        pattern = _lark().get_terminal(name).pattern
    except KeyError:
        return name
    return f"'{pattern.value}'" if isinstance(pattern, PatternStr) else name


def _shorten(text: str) -> str:
    return text if len(text) <= 30 else text[:27] + "..."


def _source_comment(comment: str) -> SourceRange | None:
    match = _SOURCE_COMMENT.fullmatch(comment)
    if match is None:
        return None  # an ordinary remark, not a location
    return SourceRange.location(match["file"], int(match["line"]), int(match["col"]))


def _pair(tree: _ParseTree) -> tuple[Token, _ParseTree]:
    """The name and the type (or value) of a ``typed_value`` or ``attr``."""
    first, second = tree.children
    if not isinstance(first, Token) or not isinstance(second, Tree):
        raise TypeError(f"malformed {tree.data} tree")
    return first, second


def _only_token(tree: _ParseTree) -> Token:
    (token,) = tree.children
    if not isinstance(token, Token):
        raise TypeError(f"malformed {tree.data} tree")
    return token


def _only_tree(tree: _ParseTree) -> _ParseTree:
    (child,) = tree.children
    if not isinstance(child, Tree):
        raise TypeError(f"malformed {tree.data} tree")
    return child


def _trees(items: Iterable[object]) -> list[_ParseTree]:
    return [item for item in items if isinstance(item, Tree)]


def _tree_or_none(item: object) -> _ParseTree | None:
    return item if isinstance(item, Tree) else None


def _tokens_in(tree: _ParseTree) -> Iterator[Token]:
    """Every token of ``tree`` in text order (iteratively: trees may be deep)."""
    stack: list[Any] = [tree]
    while stack:
        item = stack.pop()
        if isinstance(item, Token):
            yield item
        elif isinstance(item, Tree):
            stack.extend(reversed(item.children))


def _tokens(tree: _ParseTree | None) -> list[Token]:
    if tree is None:
        return []
    return [item for item in tree.children if isinstance(item, Token)]
