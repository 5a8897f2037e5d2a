"""Operator schemas: the typed signature of an operator, parsed from and printed as text.

Grammar (TorchScript's, with this project's type names from `ir.types`)::

    aten::sum(Tensor self, Any axis=None, bool keepdims=False) -> Tensor
    prim::TupleConstruct(Any... elems) -> Any            last argument repeats (variadic)
    prim::TupleUnpack(Any tup) -> Any...                 the node decides how many results
    aten::f(Tensor self, *, str? dtype=None) -> (Tensor, Tensor)

A ``*`` makes the arguments after it keyword-only (the frontend still passes every argument
positionally, in schema order). Parenthesised returns list several results; a single result of
tuple type is written ``-> ((int, int))``. Defaults are Python literals, strings in double
quotes.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from typing import Any

from ir.errors import IRError
from ir.types import NAMED_TYPES, TENSOR, ListType, OptionalType, TupleType, Type


class Sentinel:
    """A named marker object, distinct from every value an operator can take."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


NO_DEFAULT = Sentinel("NO_DEFAULT")


@dataclass(frozen=True, slots=True)
class Argument:
    name: str
    ty: Type
    default: Any = NO_DEFAULT
    kwarg_only: bool = False

    @property
    def has_default(self) -> bool:
        return self.default is not NO_DEFAULT


@dataclass(frozen=True, slots=True)
class Schema:
    name: str  # "aten::mul"
    arguments: tuple[Argument, ...]
    returns: tuple[Type, ...]
    variadic: bool = False  # the last argument repeats any number of times (zero included)
    variadic_returns: bool = False  # any number of results of type returns[0]

    def __str__(self) -> str:
        parts: list[str] = []
        for index, arg in enumerate(self.arguments):
            if arg.kwarg_only and (index == 0 or not self.arguments[index - 1].kwarg_only):
                parts.append("*")
            dots = "..." if self.variadic and index == len(self.arguments) - 1 else ""
            text = f"{arg.ty}{dots} {arg.name}"
            if arg.has_default:
                text += f"={format_default(arg.default)}"
            parts.append(text)
        return f"{self.name}({', '.join(parts)}) -> {self._returns_text()}"

    def _returns_text(self) -> str:
        if self.variadic_returns:
            return f"{self.returns[0]}..."
        if len(self.returns) == 1:
            only = self.returns[0]
            return f"({only})" if isinstance(only, TupleType) else str(only)
        return f"({', '.join(str(t) for t in self.returns)})"


def format_default(value: Any) -> str:
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(format_default(v) for v in value) + "]"
    return repr(value)


_NAME = re.compile(r"[A-Za-z_][\w]*::[A-Za-z_][\w.]*")
_ARGUMENT = re.compile(r"(?P<ty>.+?)(?P<dots>\.\.\.)?\s+(?P<name>\w+)(?:\s*=\s*(?P<default>.+))?")


def parse_schema(text: str) -> Schema:
    """Read a schema string; raises IRError naming the schema when it is malformed.

    >>> str(parse_schema("aten::mul(Any self, Any other) -> Tensor"))
    'aten::mul(Any self, Any other) -> Tensor'
    """
    head, arrow, returns_text = text.partition("->")
    head = head.strip()
    match = _NAME.match(head)
    if not arrow or match is None or not head.endswith(")") or head[match.end()] != "(":
        raise IRError(f"malformed operator schema {text!r}")
    arguments: list[Argument] = []
    variadic = False
    kwarg_only = False
    for piece in split_top_level(head[match.end() + 1 : -1]):
        if variadic:
            raise IRError(f"only the last argument may be variadic in {text!r}")
        if piece == "*":
            kwarg_only = True
            continue
        arg = _ARGUMENT.fullmatch(piece)
        if arg is None:
            raise IRError(f"malformed argument {piece!r} in schema {text!r}")
        default: Any = NO_DEFAULT
        if arg["default"] is not None:
            try:
                default = ast.literal_eval(arg["default"])
            except (ValueError, SyntaxError) as exc:
                raise IRError(f"bad default {arg['default']!r} in schema {text!r}") from exc
        variadic = arg["dots"] is not None
        ty = parse_type(arg["ty"], text)
        arguments.append(Argument(arg["name"], ty, default, kwarg_only))
    returns, variadic_returns = _parse_returns(returns_text.strip(), text)
    return Schema(match.group(), tuple(arguments), returns, variadic, variadic_returns)


def _parse_returns(text: str, schema: str) -> tuple[tuple[Type, ...], bool]:
    if text.endswith("..."):
        return (parse_type(text[:-3], schema),), True
    if text.startswith("(") and text.endswith(")"):
        return tuple(parse_type(t, schema) for t in split_top_level(text[1:-1])), False
    return (parse_type(text, schema),), False


def parse_type(text: str, schema: str = "") -> Type:
    """A type as `ir.types` prints it: ``Tensor``, ``int[]``, ``int?``, ``(Tensor, int)``."""
    text = text.strip()
    if text.endswith("?"):
        return OptionalType(parse_type(text[:-1], schema))
    if text.endswith("[]"):
        return ListType(parse_type(text[:-2], schema))
    if text.startswith("(") and text.endswith(")"):
        return TupleType(tuple(parse_type(t, schema) for t in split_top_level(text[1:-1])))
    if text == "Tensor":
        return TENSOR
    named = NAMED_TYPES.get(text)
    if named is None:
        raise IRError(f"unknown type {text!r} in schema {schema!r}")
    return named


def split_top_level(text: str) -> list[str]:
    """Split at commas outside brackets and string quotes; an empty text has no pieces."""
    pieces: list[str] = []
    depth = 0
    quoted = False
    start = 0
    for index, char in enumerate(text):
        if quoted:
            quoted = char != '"' or text[index - 1] == "\\"
        elif char == '"':
            quoted = True
        elif char in "([":
            depth += 1
        elif char in ")]":
            depth -= 1
        elif char == "," and depth == 0:
            pieces.append(text[start:index].strip())
            start = index + 1
    last = text[start:].strip()
    if last or pieces:
        pieces.append(last)
    return pieces
