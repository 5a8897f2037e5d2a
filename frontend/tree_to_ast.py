"""lark's parse tree to frontend.syntax: `ToAst`, one method per grammar rule, and the
`Locator` that gives its nodes (and `frontend.parse`'s syntax errors) their file ranges."""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, cast

from lark import Token, Tree

from frontend import syntax
from frontend.errors import ScriptError, Topic
from ir.source import Source, SourceRange


@dataclass(frozen=True, slots=True)
class Locator:
    """Maps lark's line/column in the dedented text to file line/column in ``source``."""

    source: Source
    shifts: list[int]

    def at(self, line: int, col: int, end_line: int, end_col: int) -> SourceRange:
        last = len(self.shifts) - 1
        offset = self.source.first_line - 1
        return SourceRange(
            self.source,
            line + offset,
            col + self.shifts[min(line, last)],
            end_line + offset,
            end_col + self.shifts[min(end_line, last)],
        )

    def token(self, token: Token) -> SourceRange:
        line = token.line or 1
        col = token.column or 1
        return self.at(line, col, token.end_line or line, token.end_column or col + 1)


@dataclass(frozen=True, slots=True)
class _Tok:
    """A lark token in the parse tree, with its file range."""

    kind: str
    text: str
    range: SourceRange


@dataclass(frozen=True, slots=True)
class _Refused(syntax.Expr, syntax.Stmt):
    """Stands in for a construct that has been reported; never leaves this module."""


@dataclass(frozen=True, slots=True)
class _Unpacked(syntax.Node):
    """``**value`` among a call's arguments, until `ToAst.call` puts it in ``unpacked``."""

    value: syntax.Expr


# The name a bare ``*`` among parameters has until `ToAst.parameters` drops it: not a Python name.
_BARE_STAR = "*"


def _edge_range(children: Sequence[object], *, last: bool) -> SourceRange | None:
    """The range of the first (or last) child that has one, looking into tuples of nodes."""
    for child in reversed(children) if last else children:
        if isinstance(child, (syntax.Node, _Tok)):
            return child.range
        if isinstance(child, tuple) and child:
            return _edge_range(child, last=last)
    return None


def _span(children: Sequence[object]) -> SourceRange:
    """The range from the start of the first child to the end of the last one."""
    first = _edge_range(children, last=False)
    last = _edge_range(children, last=True)
    if first is None or last is None:
        raise AssertionError("a grammar rule matched no token")
    return SourceRange(first.source, first.line, first.col, last.end_line, last.end_col)


def _binary(op: syntax.BinaryOperator) -> Callable[..., syntax.BinOp]:
    def build(self: ToAst, r: SourceRange, left: syntax.Expr, right: syntax.Expr) -> syntax.BinOp:
        return syntax.BinOp(op, left, right, range=r)

    return build


def _unary(op: syntax.UnaryOperator) -> Callable[..., syntax.UnaryOp]:
    def build(self: ToAst, r: SourceRange, _op: _Tok, operand: syntax.Expr) -> syntax.UnaryOp:
        return syntax.UnaryOp(op, operand, range=r)

    return build


def _refusal(message: str, doc: Topic) -> Callable[..., _Refused]:
    def build(self: ToAst, r: SourceRange, *_children: object) -> _Refused:
        return self._refuse(message, r, doc)

    return build


def _placeholder(self: ToAst, r: SourceRange, *_children: object) -> _Refused:
    """Inner parts of a refused construct: the construct's own rule reports it."""
    return _Refused(range=r)


def _string_of(stmt: syntax.Stmt) -> str | None:
    """The string of a bare string statement (a docstring or the like), else None."""
    if isinstance(stmt, syntax.ExprStmt) and isinstance(stmt.value, syntax.Constant):
        value = stmt.value.value
        return value if isinstance(value, str) else None
    return None


def _body(stmts: tuple[syntax.Stmt, ...]) -> tuple[syntax.Stmt, ...]:
    """A block without its bare string statements."""
    return tuple(s for s in stmts if _string_of(s) is None)


_AUGMENTED: dict[str, syntax.BinaryOperator] = {
    "+=": "+", "-=": "-", "*=": "*", "/=": "/", "//=": "//", "%=": "%", "**=": "**", "@=": "@",
    "&=": "&", "|=": "|", "^=": "^", "<<=": "<<", ">>=": ">>",
}  # fmt: skip


def _describe(expr: syntax.Expr) -> str:
    """How Python names an expression that cannot be assigned to."""
    if isinstance(expr, syntax.Call):
        return "function call"
    if isinstance(expr, syntax.Constant):
        return "literal"
    if isinstance(expr, syntax.Compare):
        return "comparison"
    if isinstance(expr, syntax.IfExp):
        return "conditional expression"
    return "expression"


class ToAst:
    """lark parse tree to frontend.syntax, bottom-up and without recursion.

    Each rule has a method of the same name, called with the rule's range (first to last
    child) and then its children: AST nodes, ``_Tok`` for kept tokens, None for an absent
    optional part. Refused constructs are recorded in ``errors`` (with the section of
    docs/language.md on them) and replaced by ``_Refused`` so that all of them are seen before
    the first in the text is raised.
    """

    def __init__(self, locator: Locator) -> None:
        self.locator = locator
        self.errors: list[tuple[str, SourceRange, Topic | None]] = []
        self._methods: dict[str, Callable[..., Any]] = {}

    def transform(self, tree: Tree[Token]) -> Any:
        """Build the AST of ``tree``.

        This is lark's Transformer_NonRecursive with the range computed for every rule: a
        post-order walk with explicit stacks, so 200 nested parentheses cost no recursion.
        Methods are called directly: lark's ``v_args`` wrappers are rebuilt on every call,
        which made them the largest cost of the transform.
        """
        postorder: list[Tree[Token] | Token | None] = []
        pending: list[Tree[Token] | Token | None] = [tree]
        while pending:
            item = pending.pop()
            postorder.append(item)
            if isinstance(item, Tree):
                pending.extend(item.children)
        values: list[Any] = []
        for item in reversed(postorder):
            if isinstance(item, Tree):
                count = len(item.children)
                children = values[len(values) - count :]
                del values[len(values) - count :]
                values.append(self._method(item.data)(_span(children), *children))
            elif isinstance(item, Token):
                values.append(_Tok(item.type, str(item), self.locator.token(item)))
            else:
                values.append(item)
        (result,) = values
        return result

    def _method(self, rule: str) -> Callable[..., Any]:
        method = self._methods.get(rule)
        if method is None:
            method = getattr(self, rule, None)
            if method is None or rule.startswith("_"):
                raise AssertionError(f"grammar rule {rule!r} has no AST mapping")
            self._methods[rule] = method
        return method

    def _refuse(self, message: str, r: SourceRange, doc: Topic | None) -> _Refused:
        self.errors.append((message, r, doc))
        return _Refused(range=r)

    # ---- module and functions ----

    def module(self, r: SourceRange, *stmts: syntax.Stmt) -> syntax.Module:
        functions: list[syntax.FunctionDef] = []
        imports: list[syntax.Import] = []
        for stmt in stmts:
            if isinstance(stmt, syntax.FunctionDef):
                functions.append(stmt)
            elif isinstance(stmt, syntax.Import):
                imports.append(stmt)
            elif not isinstance(stmt, _Refused) and _string_of(stmt) is None:
                message = "only 'def' and 'import' statements are supported at module level"
                self._refuse(message, stmt.range, "functions")
        if not functions and not self.errors:
            self._refuse("expected a function definition", r, "functions")
        return syntax.Module(tuple(functions), tuple(imports), range=r)

    def suite(self, r: SourceRange, *stmts: syntax.Stmt) -> tuple[syntax.Stmt, ...]:
        for stmt in stmts:
            if isinstance(stmt, syntax.Import):
                message = "import statements are not supported inside a function"
                self._refuse(message, stmt.range, "import")
        return stmts

    def funcdef(
        self,
        r: SourceRange,
        _def: _Tok,
        name: _Tok,
        params: tuple[syntax.Param, ...] | None,
        returns: syntax.Expr | None,
        body: tuple[syntax.Stmt, ...],
    ) -> syntax.FunctionDef:
        docstring = _string_of(body[0])
        return syntax.FunctionDef(
            name.text, params or (), returns, _body(body), (), docstring, range=r
        )

    def decorated(self, r: SourceRange, *parts: Any) -> syntax.Stmt:
        *decorators, definition = parts
        assert isinstance(definition, (syntax.FunctionDef, _Refused))
        if isinstance(definition, syntax.FunctionDef):
            return replace(definition, decorators=tuple(decorators))
        return definition  # a refused class or async def

    def decorator(self, r: SourceRange, expr: syntax.Expr) -> syntax.Expr:
        return expr

    def parameters(self, r: SourceRange, *items: syntax.Param | _Refused) -> Any:
        """The parameters in order, with their kinds: a bare ``*`` (`_BARE_STAR`) or a
        ``*name`` makes the named parameters after it keyword-only."""
        seen: set[str] = set()
        after_default = False
        keyword_only = False
        params: list[syntax.Param] = []
        for index, item in enumerate(items):
            if isinstance(item, _Refused):
                continue
            param = item
            if param.kind == "var_positional" or param.name == _BARE_STAR:
                if keyword_only:
                    self._refuse("* argument may appear only once", param.range, "functions")
                keyword_only = True
                following = items[index + 1] if index + 1 < len(items) else None
                if param.name == _BARE_STAR:
                    if not isinstance(following, syntax.Param) or following.kind != "positional":
                        message = "named arguments must follow bare *"
                        self._refuse(message, param.range, "functions")
                    continue
            elif param.kind == "var_keyword":
                if index != len(items) - 1:
                    message = "arguments cannot follow var-keyword argument"
                    self._refuse(message, param.range, "functions")
            elif keyword_only:
                param = replace(param, kind="keyword_only")
            elif param.default is not None:
                after_default = True
            elif after_default:
                message = "parameter without a default follows parameter with a default"
                self._refuse(message, param.range, "functions")
            if param.name in seen:
                self._refuse(f"duplicate parameter '{param.name}'", param.range, "functions")
            seen.add(param.name)
            params.append(param)
        return tuple(params)

    def param(
        self,
        r: SourceRange,
        name: _Tok,
        annotation: syntax.Expr | None,
        default: syntax.Expr | None,
    ) -> syntax.Param:
        return syntax.Param(name.text, annotation, default, range=r)

    def star_param(
        self, r: SourceRange, _star: _Tok, name: _Tok | None, annotation: syntax.Expr | None
    ) -> syntax.Param:
        if name is None:
            return syntax.Param(_BARE_STAR, None, None, range=r)
        return syntax.Param(name.text, annotation, None, kind="var_positional", range=r)

    def kwargs_param(
        self, r: SourceRange, _stars: _Tok, name: _Tok, annotation: syntax.Expr | None
    ) -> syntax.Param:
        return syntax.Param(name.text, annotation, None, kind="var_keyword", range=r)

    slash_param = _refusal("positional-only parameters ('/') are not supported", "functions")

    # ---- simple statements ----

    def expr_stmt(self, r: SourceRange, value: syntax.Expr) -> syntax.Stmt:
        return syntax.ExprStmt(value, range=r)

    def assign(self, r: SourceRange, *parts: syntax.Expr) -> syntax.Assign:
        *targets, value = parts
        for target in targets:
            self._check_target(target)
        return syntax.Assign(tuple(targets), value, range=r)

    def augassign(
        self, r: SourceRange, target: syntax.Expr, op: _Tok, value: syntax.Expr
    ) -> syntax.AugAssign:
        if isinstance(target, (syntax.Tuple, syntax.List)):
            kind = "tuple" if isinstance(target, syntax.Tuple) else "list"
            message = f"'{kind}' is an illegal expression for augmented assignment"
            self._refuse(message, target.range, "assignment")
        else:
            self._check_target(target)
        return syntax.AugAssign(target, _AUGMENTED[op.text], value, range=r)

    def annassign(
        self,
        r: SourceRange,
        target: syntax.Expr,
        annotation: syntax.Expr,
        value: syntax.Expr | None = None,
    ) -> syntax.AnnAssign:
        if isinstance(target, (syntax.Tuple, syntax.List)):
            message = "only a single target (not a tuple) can be annotated"
            self._refuse(message, target.range, "assignment")
        else:
            self._check_target(target)
        return syntax.AnnAssign(target, annotation, value, range=r)

    def _check_target(self, target: syntax.Expr) -> None:
        """Record an error unless ``target`` can be assigned to (as Python's compiler does)."""
        pending = [target]
        while pending:
            expr = pending.pop()
            if isinstance(expr, (syntax.Tuple, syntax.List)):
                pending.extend(expr.elts)
            elif not isinstance(expr, (syntax.Name, syntax.Attribute, syntax.Subscript, _Refused)):
                self._refuse(f"cannot assign to {_describe(expr)}", expr.range, "assignment")

    def pass_stmt(self, r: SourceRange, _tok: _Tok) -> syntax.Pass:
        return syntax.Pass(range=r)

    def break_stmt(self, r: SourceRange, _tok: _Tok) -> syntax.Break:
        return syntax.Break(range=r)

    def continue_stmt(self, r: SourceRange, _tok: _Tok) -> syntax.Continue:
        return syntax.Continue(range=r)

    def return_stmt(self, r: SourceRange, _tok: _Tok, value: syntax.Expr | None) -> syntax.Return:
        return syntax.Return(value, range=r)

    def raise_stmt(
        self,
        r: SourceRange,
        _tok: _Tok,
        exc: syntax.Expr | None = None,
        cause: syntax.Expr | None = None,
    ) -> syntax.Raise:
        return syntax.Raise(exc, cause, range=r)

    def assert_stmt(
        self, r: SourceRange, _tok: _Tok, test: syntax.Expr, msg: syntax.Expr | None
    ) -> syntax.Assert:
        return syntax.Assert(test, msg, range=r)

    def import_names(self, r: SourceRange, _tok: _Tok, *names: syntax.Alias) -> syntax.Import:
        return syntax.Import(None, names, range=r)

    def import_from(
        self, r: SourceRange, _tok: _Tok, module: _Tok, *names: syntax.Alias | _Tok
    ) -> syntax.Import:
        aliases = tuple(
            syntax.Alias("*", None, range=n.range) if isinstance(n, _Tok) else n for n in names
        )
        return syntax.Import(module.text, aliases, range=r)

    def import_alias(self, r: SourceRange, name: _Tok, asname: _Tok | None) -> syntax.Alias:
        return syntax.Alias(name.text, asname.text if asname else None, range=r)

    def from_module(self, r: SourceRange, *parts: _Tok) -> _Tok:
        return _Tok("from_module", "".join(p.text for p in parts), r)

    def dotted_name(self, r: SourceRange, *names: _Tok) -> _Tok:
        return _Tok("dotted_name", ".".join(n.text for n in names), r)

    del_stmt = _refusal("'del' statements are not supported", "del")
    global_stmt = _refusal("'global' statements are not supported", "global-and-nonlocal")
    nonlocal_stmt = _refusal("'nonlocal' statements are not supported", "global-and-nonlocal")

    # ---- compound statements ----

    def if_stmt(
        self,
        r: SourceRange,
        _tok: _Tok,
        test: syntax.Expr,
        body: tuple[syntax.Stmt, ...],
        *rest: Any,
    ) -> syntax.If:
        *elifs, else_body = rest
        orelse: tuple[syntax.Stmt, ...] = _body(else_body) if else_body is not None else ()
        for clause in reversed(elifs):
            # As in Python's ast, an elif's If runs to the end of the whole statement.
            start = clause.range
            extent = SourceRange(start.source, start.line, start.col, r.end_line, r.end_col)
            orelse = (replace(clause, orelse=orelse, range=extent),)
        return syntax.If(test, _body(body), orelse, range=r)

    def elif_clause(
        self, r: SourceRange, _tok: _Tok, test: syntax.Expr, body: tuple[syntax.Stmt, ...]
    ) -> syntax.If:
        return syntax.If(test, _body(body), (), range=r)

    def else_clause(
        self, r: SourceRange, _tok: _Tok, body: tuple[syntax.Stmt, ...]
    ) -> tuple[syntax.Stmt, ...]:
        return body

    def for_stmt(
        self,
        r: SourceRange,
        _tok: _Tok,
        target: syntax.Expr,
        iterable: syntax.Expr,
        body: tuple[syntax.Stmt, ...],
        _else: object,
    ) -> syntax.For:
        self._check_target(target)
        return syntax.For(target, iterable, _body(body), range=r)

    def while_stmt(
        self,
        r: SourceRange,
        _tok: _Tok,
        test: syntax.Expr,
        body: tuple[syntax.Stmt, ...],
        _else: object,
    ) -> syntax.While:
        return syntax.While(test, _body(body), range=r)

    loop_else = _refusal("'else' clauses on loops are not supported", "loops")
    with_stmt = _refusal("'with' statements are not supported", "with")
    try_stmt = _refusal("'try' statements are not supported", "try")
    classdef = _refusal("class definitions are not supported", "class")
    with_item = except_clause = finally_clause = _placeholder

    def async_stmt(self, r: SourceRange, _tok: _Tok, inner: syntax.Stmt) -> _Refused:
        if isinstance(inner, syntax.FunctionDef):
            return self._refuse("async functions are not supported", r, "async")
        if isinstance(inner, syntax.For):
            return self._refuse("'async for' loops are not supported", r, "async")
        return self._refuse("'async with' statements are not supported", r, "async")

    # ---- expressions ----

    def tuple_(self, r: SourceRange, *items: syntax.Expr | _Tok) -> syntax.Tuple:
        return syntax.Tuple(tuple(item for item in items if isinstance(item, syntax.Expr)), range=r)

    def paren(self, r: SourceRange, _lpar: _Tok, inner: syntax.Expr, _rpar: _Tok) -> syntax.Expr:
        return replace(inner, range=r)

    def dict_(self, r: SourceRange, *items: Any) -> syntax.Expr:
        pairs = [item for item in items if isinstance(item, tuple)]
        for item in items:
            if isinstance(item, _Refused):
                return item
        keys = tuple(key for key, _ in pairs)
        return syntax.Dict(keys, tuple(value for _, value in pairs), range=r)

    def dict_item(self, r: SourceRange, *children: Any) -> Any:
        if len(children) != 2 or not all(isinstance(c, syntax.Expr) for c in children):
            message = "'**' in a dict literal is not supported: write the items"
            return self._refuse(message, r, "lists-tuples-and-dicts")
        return (children[0], children[1])

    def list_(self, r: SourceRange, *items: syntax.Expr | _Tok) -> syntax.List:
        return syntax.List(tuple(item for item in items if isinstance(item, syntax.Expr)), range=r)

    def ifexp(
        self, r: SourceRange, body: syntax.Expr, test: syntax.Expr, orelse: syntax.Expr
    ) -> syntax.IfExp:
        return syntax.IfExp(test, body, orelse, range=r)

    def or_test(self, r: SourceRange, *values: syntax.Expr) -> syntax.BoolOp:
        return syntax.BoolOp("or", values, range=r)

    def and_test(self, r: SourceRange, *values: syntax.Expr) -> syntax.BoolOp:
        return syntax.BoolOp("and", values, range=r)

    def compare(self, r: SourceRange, left: syntax.Expr, *rest: Any) -> syntax.Compare:
        return syntax.Compare(left, rest[0::2], rest[1::2], range=r)

    def comp_op(self, r: SourceRange, *words: _Tok) -> str:
        return " ".join(word.text for word in words)

    bitor = _binary("|")
    bitxor = _binary("^")
    bitand = _binary("&")
    lshift = _binary("<<")
    rshift = _binary(">>")
    add = _binary("+")
    sub = _binary("-")
    mul = _binary("*")
    div = _binary("/")
    floordiv = _binary("//")
    mod = _binary("%")
    matmul = _binary("@")
    pow_ = _binary("**")
    neg = _unary("-")
    pos = _unary("+")
    invert = _unary("~")
    not_ = _unary("not")

    def attribute(self, r: SourceRange, value: syntax.Expr, name: _Tok) -> syntax.Attribute:
        return syntax.Attribute(value, name.text, range=r)

    def call(
        self,
        r: SourceRange,
        func: syntax.Expr,
        _lpar: _Tok,
        arguments: tuple[syntax.Expr | syntax.Keyword | _Unpacked, ...] | None,
        _rpar: _Tok,
    ) -> syntax.Call:
        args: list[syntax.Expr] = []
        keywords: list[syntax.Keyword] = []
        unpacked: list[syntax.Expr] = []
        for argument in arguments or ():
            if isinstance(argument, _Unpacked):
                unpacked.append(argument.value)
            elif isinstance(argument, syntax.Keyword):
                if any(k.name == argument.name for k in keywords):
                    message = f"keyword argument repeated: '{argument.name}'"
                    self._refuse(message, argument.range, "functions")
                keywords.append(argument)
            else:
                if unpacked and not isinstance(argument, _Refused):
                    message = (
                        "iterable argument unpacking follows keyword argument unpacking"
                        if isinstance(argument, syntax.Starred)
                        else "positional argument follows keyword argument unpacking"
                    )
                    self._refuse(message, argument.range, "functions")
                elif (
                    keywords
                    and not isinstance(argument, _Refused | syntax.Starred)
                ):
                    message = "positional argument follows keyword argument"
                    self._refuse(message, argument.range, "functions")
                args.append(argument)
        return syntax.Call(func, tuple(args), tuple(keywords), tuple(unpacked), range=r)

    def star_arg(self, r: SourceRange, _star: _Tok, value: syntax.Expr) -> syntax.Starred:
        return syntax.Starred(value, range=r)

    def kwargs_arg(self, r: SourceRange, _stars: _Tok, value: syntax.Expr) -> _Unpacked:
        return _Unpacked(value, range=r)

    def arguments(self, r: SourceRange, *items: Any) -> tuple[Any, ...]:
        return items

    def keyword_arg(self, r: SourceRange, name: _Tok, value: syntax.Expr) -> syntax.Keyword:
        return syntax.Keyword(name.text, value, range=r)

    def subscript(
        self, r: SourceRange, value: syntax.Expr, _lsqb: _Tok, index: syntax.Expr, _rsqb: _Tok
    ) -> syntax.Subscript:
        return syntax.Subscript(value, index, range=r)

    def index_tuple(self, r: SourceRange, *items: syntax.Expr) -> syntax.Tuple:
        return syntax.Tuple(items, range=r)

    def slice_(
        self,
        r: SourceRange,
        lower: syntax.Expr | None,
        _colon: _Tok,
        upper: syntax.Expr | None,
        _colon2: _Tok | None,
        step: syntax.Expr | None,
    ) -> syntax.Slice:
        return syntax.Slice(lower, upper, step, range=r)

    def name(self, r: SourceRange, token: _Tok) -> syntax.Name:
        return syntax.Name(token.text, range=r)

    def number(self, r: SourceRange, token: _Tok) -> syntax.Constant:
        value: int | float | complex
        if token.kind == "FLOAT_NUMBER":
            value = float(token.text)
        elif token.kind == "IMAG_NUMBER":
            value = complex(token.text)
        else:
            try:
                value = int(token.text, 0)
            except ValueError as error:  # more decimal digits than Python converts
                raise ScriptError(str(error).split(":")[0], r, doc="numbers-and-arrays") from None
        return syntax.Constant(value, range=r)

    def const(self, r: SourceRange, token: _Tok) -> syntax.Constant:
        values: dict[str, syntax.ConstantValue] = {
            "None": None,
            "True": True,
            "False": False,
            "...": ...,
        }
        return syntax.Constant(values[token.text], range=r)

    def strings(self, r: SourceRange, *tokens: _Tok) -> syntax.Expr:
        parts: list[str | syntax.FormattedField] = []
        formatted = False
        for token in tokens:
            prefix = token.text[: len(token.text) - len(token.text.lstrip("rRbBuUfF"))].lower()
            if "b" in prefix:
                return self._refuse("bytes literals are not supported", token.range, "strings")
            if "f" in prefix:
                formatted = True
                try:
                    parts.extend(_formatted_parts(token))
                except ScriptError as error:
                    return self._refuse(error.message, token.range, error.doc)
            else:
                parts.append(ast.literal_eval(token.text))
        if not formatted:
            return syntax.Constant("".join(str(part) for part in parts), range=r)
        return syntax.FormattedString(tuple(parts), range=r)

    star_expr = _refusal("starred expressions are not supported", "assignment")
    walrus = _refusal("assignment expressions (:=) are not supported", "assignment-expressions")
    def lambdef(self, r: SourceRange, _lambda: _Tok, params: Any, body: syntax.Expr) -> Any:
        if isinstance(params, _Refused) or isinstance(body, _Refused):
            return _Refused(range=r)
        return syntax.Lambda(params or (), body, range=r)

    def lambda_params(self, r: SourceRange, *children: Any) -> Any:
        params: list[syntax.Param] = []
        for child in children:
            if isinstance(child, syntax.Param):  # '*', '*name' or '**name'
                params.append(child)
            elif isinstance(child, _Tok):
                params.append(syntax.Param(child.text, None, None, range=child.range))
            elif isinstance(child, syntax.Expr) and params:
                last = params[-1]
                params[-1] = replace(last, default=child, range=last.range)
        return self.parameters(r, *params)

    def lambda_star(self, r: SourceRange, star: _Tok, name: _Tok | None) -> syntax.Param:
        return self.star_param(r, star, name, None)

    def lambda_kwargs(self, r: SourceRange, stars: _Tok, name: _Tok) -> syntax.Param:
        return self.kwargs_param(r, stars, name, None)

    await_ = _refusal("await is not supported", "async")
    yield_expr = _refusal("yield is not supported", "yield")
    def comprehension(self, r: SourceRange, element: Any, *clauses: Any) -> syntax.Expr:
        """A comprehension's parts; `listcomp` and `genexp` say which kind it is."""
        for part in (element, *clauses):
            if isinstance(part, _Refused):
                return part
        grouped: list[syntax.ForClause] = []
        for clause in clauses:
            if isinstance(clause, syntax.ForClause):
                grouped.append(clause)
            else:  # an ``if`` filters the ``for`` before it
                last = grouped[-1]
                grouped[-1] = replace(last, conditions=(*last.conditions, clause))
        return syntax.Comprehension("generator", element, tuple(grouped), range=r)

    def comp_for(self, r: SourceRange, *children: Any) -> Any:
        if any(isinstance(c, _Tok) and c.kind == "ASYNC" for c in children):
            return self._refuse("async comprehensions are not supported", r, "async")
        target, iterable = [c for c in children if isinstance(c, syntax.Expr)]
        if isinstance(target, _Refused) or isinstance(iterable, _Refused):
            return _Refused(range=r)
        self._check_target(target)
        return syntax.ForClause(target, iterable, (), range=r)

    def comp_if(self, r: SourceRange, _if: _Tok, condition: syntax.Expr) -> syntax.Expr:
        return condition

    def listcomp(self, r: SourceRange, _lsqb: _Tok, inner: Any, _rsqb: _Tok) -> syntax.Expr:
        if not isinstance(inner, syntax.Comprehension):
            return cast(syntax.Expr, inner)  # refused
        return replace(inner, kind="list", range=r)

    def genexp(self, r: SourceRange, _lpar: _Tok, inner: Any, _rpar: _Tok) -> syntax.Expr:
        if not isinstance(inner, syntax.Comprehension):
            return cast(syntax.Expr, inner)  # refused
        return replace(inner, range=r)

    def genexp_arg(self, r: SourceRange, inner: Any) -> syntax.Expr:
        return cast(syntax.Expr, inner)

    def dictcomp(self, r: SourceRange, _lbrace: _Tok, key: Any, value: Any, *rest: Any) -> Any:
        pair = syntax.Tuple((key, value), range=r)
        inner = self.comprehension(r, pair, *rest[:-1])  # without the closing brace
        if not isinstance(inner, syntax.Comprehension):
            return inner  # refused
        return replace(inner, kind="dict")

    setcomp = _refusal("set comprehensions are not supported", "sets")
    set_ = _refusal("set literals are not supported", "sets")


def _formatted_parts(token: _Tok) -> list[str | syntax.FormattedField]:
    """The text pieces and fields of one f-string token, as Python reads them; each field's
    expression parsed by our parser, every range of it the token's (Note [f-strings] in
    `frontend.parse`)."""
    from frontend.parse import parse_expression  # the parser builds this module's ToAst

    joined = ast.parse(token.text, mode="eval").body
    assert isinstance(joined, ast.JoinedStr)
    parts: list[str | syntax.FormattedField] = []
    for value in joined.values:
        if isinstance(value, ast.Constant):
            parts.append(str(value.value))
            continue
        assert isinstance(value, ast.FormattedValue)
        segment = ast.get_source_segment(token.text, value.value)
        if segment is None:
            raise ScriptError("this f-string field cannot be read", token.range, doc="strings")
        spec = ""
        if value.format_spec is not None:
            assert isinstance(value.format_spec, ast.JoinedStr)
            if not all(isinstance(v, ast.Constant) for v in value.format_spec.values):
                raise ScriptError(
                    "a format spec computed in an f-string ({x:{width}}) is not supported: "
                    "write the spec out",
                    token.range,
                    doc="strings",
                )
            spec = "".join(str(v.value) for v in value.format_spec.values)  # type: ignore[attr-defined]
        conversion = "" if value.conversion == -1 else "!" + chr(value.conversion)
        expr = parse_expression(segment, token.range)
        parts.append(syntax.FormattedField(expr, conversion, spec, range=token.range))
    return parts
