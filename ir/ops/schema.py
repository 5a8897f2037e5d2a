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

Note [Alias annotations]
As in TorchScript, an array type (``Tensor`` or ``Any``) may carry an alias set right after its
name, and a result in an argument's set may share memory with that argument:

    aten::transpose(Tensor(a) self, Any axes=None) -> Tensor(a)      the result is a view
    aten::split(Tensor(a) self, ...) -> Tensor(a)[]                   each piece is a view
    aten::index_put_(Tensor(a!) self, ...) -> Tensor(a!)              writes self, returns it
    prim::WriteBack(Tensor(a!) target, Tensor value) -> ()            writes target

``!`` marks an operand the operator writes (and a result that is that operand). A result with
no annotation shares memory with no argument as far as the schema says; the registry checks
that the annotations agree with the record (`ir.ops.registry`: a view rule, an out-of-place
counterpart, purity). TorchScript's wildcard sets (``Tensor(a -> *)``, ``Tensor(*)``) are not
used: a split's pieces are written ``Tensor(a)[]``.
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
class Alias:
    """An alias annotation (Note [Alias annotations]): ``(a)`` or, written to, ``(a!)``."""

    name: str
    is_write: bool = False

    def __str__(self) -> str:
        return f"({self.name}{'!' if self.is_write else ''})"


@dataclass(frozen=True, slots=True)
class Argument:
    name: str
    ty: Type
    default: Any = NO_DEFAULT
    kwarg_only: bool = False
    alias: Alias | None = None

    @property
    def has_default(self) -> bool:
        return self.default is not NO_DEFAULT

    @property
    def is_write(self) -> bool:
        """Whether the operator writes this operand (``Tensor(a!) self``)."""
        return self.alias is not None and self.alias.is_write


@dataclass(frozen=True, slots=True)
class Schema:
    name: str  # "aten::mul"
    arguments: tuple[Argument, ...]
    returns: tuple[Type, ...]
    variadic: bool = False  # the last argument repeats any number of times (zero included)
    variadic_returns: bool = False  # any number of results of type returns[0]
    # One per result: the alias set it is in, None for none (Note [Alias annotations]); empty
    # when no result has one.
    return_aliases: tuple[Alias | None, ...] = ()

    def result_alias(self, index: int) -> Alias | None:
        return self.return_aliases[index] if self.return_aliases else None

    @property
    def written(self) -> tuple[Argument, ...]:
        """The arguments the operator writes (``Tensor(a!)``)."""
        return tuple(arg for arg in self.arguments if arg.is_write)

    def result_aliases_argument(self, position: int) -> bool:
        """Whether a result is in the alias set of argument ``position`` (may share its memory)."""
        alias = self.arguments[position].alias if position < len(self.arguments) else None
        return alias is not None and any(
            result is not None and result.name == alias.name for result in self.return_aliases
        )

    def __str__(self) -> str:
        parts: list[str] = []
        for index, arg in enumerate(self.arguments):
            if arg.kwarg_only and (index == 0 or not self.arguments[index - 1].kwarg_only):
                parts.append("*")
            dots = "..." if self.variadic and index == len(self.arguments) - 1 else ""
            text = f"{_annotated(arg.ty, arg.alias)}{dots} {arg.name}"
            if arg.has_default:
                text += f"={format_default(arg.default)}"
            parts.append(text)
        return f"{self.name}({', '.join(parts)}) -> {self._returns_text()}"

    def _returns_text(self) -> str:
        texts = [_annotated(ty, self.result_alias(i)) for i, ty in enumerate(self.returns)]
        if self.variadic_returns:
            return f"{texts[0]}..."
        if len(self.returns) == 1:
            return f"({texts[0]})" if isinstance(self.returns[0], TupleType) else texts[0]
        return f"({', '.join(texts)})"


def _annotated(ty: Type, alias: Alias | None) -> str:
    """``ty`` as schemas write it, its alias annotation after the array type's name
    (``Tensor(a)[]``, ``Tensor(a!)?``)."""
    text = str(ty)
    if alias is None:
        return text
    name = _TYPE_NAME.match(text)
    assert name is not None, text  # only Tensor and Any carry annotations
    return f"{name.group()}{alias}{text[name.end() :]}"


def format_default(value: Any) -> str:
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(format_default(v) for v in value) + "]"
    return repr(value)


_NAME = re.compile(r"[A-Za-z_][\w]*::[A-Za-z_][\w.]*")
_TYPE_NAME = re.compile(r"[A-Za-z_]\w*")
# A type name followed by a parenthesised annotation: ``Tensor(a!)[]``.
_ANNOTATED = re.compile(r"(?P<name>[A-Za-z_]\w*)\((?P<inner>[^()]*)\)(?P<rest>.*)")
_ALIAS_SET = re.compile(r"(?P<name>[a-z]\w*)(?P<write>!)?")
_ALIASABLE = frozenset(["Tensor", "Any"])  # the types that hold an array
_ARGUMENT = re.compile(r"(?P<ty>.+?)(?P<dots>\.\.\.)?\s+(?P<name>\w+)(?:\s*=\s*(?P<default>.+))?")


def parse_schema(text: str) -> Schema:
    """Read a schema string; raises IRError naming the schema when it is malformed.

    >>> str(parse_schema("aten::mul(Any self, Any other) -> Tensor"))
    'aten::mul(Any self, Any other) -> Tensor'
    """
    head, arrow, returns_text = text.rpartition("->")  # no result type holds an arrow
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
        ty, alias = _parse_annotated_type(arg["ty"], text)
        arguments.append(Argument(arg["name"], ty, default, kwarg_only, alias))
    returns_text = returns_text.strip()
    variadic_returns = returns_text.endswith("...")
    typed = [_parse_annotated_type(t, text) for t in _result_texts(returns_text)]
    aliases = tuple(alias for _, alias in typed)
    _check_aliases(arguments, aliases, text)
    return Schema(
        match.group(),
        tuple(arguments),
        tuple(ty for ty, _ in typed),
        variadic,
        variadic_returns,
        aliases if any(aliases) else (),
    )


def _result_texts(text: str) -> list[str]:
    """The text of each result type: ``T...`` and a lone ``T`` are one, ``(T, U)`` several."""
    if text.endswith("..."):
        return [text[:-3]]
    if text.startswith("(") and text.endswith(")"):
        return split_top_level(text[1:-1])
    return [text]


def _parse_annotated_type(text: str, schema: str) -> tuple[Type, Alias | None]:
    """An argument's or a result's type and its alias annotation (Note [Alias annotations])."""
    text = text.strip()
    annotated = _ANNOTATED.fullmatch(text)
    if annotated is None:
        return parse_type(text, schema), None
    alias_set = _ALIAS_SET.fullmatch(annotated["inner"].strip())
    if alias_set is None:
        raise IRError(
            f"malformed alias annotation {text!r} in schema {schema!r}: write an alias set "
            "as a lower-case name, with '!' when the operator writes it: Tensor(a), Tensor(a!) "
            "(wildcard sets, 'a -> *', are not used)"
        )
    if annotated["name"] not in _ALIASABLE:
        raise IRError(
            f"alias annotation on {annotated['name']!r} in schema {schema!r}: only an array "
            "(Tensor or Any) shares memory"
        )
    ty = parse_type(annotated["name"] + annotated["rest"], schema)
    return ty, Alias(alias_set["name"], alias_set["write"] is not None)


def _check_aliases(
    arguments: list[Argument], results: tuple[Alias | None, ...], schema: str
) -> None:
    """Each alias set names one argument, and a result is written to exactly when the
    argument whose set it is in is (``Tensor(a!) self -> Tensor(a!)``)."""
    by_name: dict[str, Alias] = {}
    for arg in arguments:
        if arg.alias is None:
            continue
        if arg.alias.name in by_name:
            raise IRError(f"alias set {arg.alias.name!r} names two arguments in {schema!r}")
        by_name[arg.alias.name] = arg.alias
    for result in results:
        if result is None:
            continue
        argument = by_name.get(result.name)
        if argument is None:
            raise IRError(f"result alias set {result.name!r} is no argument's in schema {schema!r}")
        if argument.is_write != result.is_write:
            raise IRError(
                f"a result in alias set {result.name!r} is written ('!') exactly when its "
                f"argument is, in schema {schema!r}"
            )


def parse_type(text: str, schema: str = "") -> Type:
    """A type as `ir.types` prints it: ``Tensor``, ``int[]``, ``int?``, ``(Tensor, int)``."""
    text = text.strip()
    if _ANNOTATED.fullmatch(text):
        raise IRError(
            f"alias annotation inside type {text!r} in schema {schema!r}: annotate an "
            "argument's or a result's own type"
        )
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
