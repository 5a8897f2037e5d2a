"""Parsing source text to the frontend AST: every construct of the subset, ranges as counted in
the file, refused constructs and syntax errors reported with a caret."""

from __future__ import annotations

import ast
import textwrap
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from frontend import syntax
from frontend.errors import ScriptError
from frontend.parse import parse_source
from ir.errors import AutodiffError
from ir.source import SourceRange


def parse_function(body: str, header: str = "def f(x):") -> syntax.FunctionDef:
    """The FunctionDef of ``header`` followed by ``body`` (dedented, then indented by 4)."""
    text = header + "\n" + textwrap.indent(textwrap.dedent(body), "    ")
    (function,) = parse_source(text).functions
    return function


def parse_stmts(body: str) -> tuple[syntax.Stmt, ...]:
    return parse_function(body).body


def parse_expr(source: str) -> syntax.Expr:
    (stmt,) = parse_stmts(f"return {source}\n")
    assert isinstance(stmt, syntax.Return)
    assert stmt.value is not None
    return stmt.value


def where(node: syntax.Node) -> tuple[int, int, int, int]:
    r = node.range
    return (r.line, r.col, r.end_line, r.end_col)


def script_error(text: str, filename: str = "model.py", first_line: int = 10) -> ScriptError:
    with pytest.raises(ScriptError) as info:
        parse_source(text, filename, first_line)
    return info.value


# ---- a function at file line 10: fields and ranges ---------------------------------------------

MODEL = '''\
@ad.script
def loss(w: np.ndarray, x, y, lr: float = 0.1) -> float:
    """Mean squared error."""
    h = np.tanh(x @ w)
    for i in range(3):
        h = h - lr * h[0, 1:]
    return np.mean((h - y) ** 2, axis=0)
'''


@pytest.fixture(scope="module")
def model() -> syntax.FunctionDef:
    module = parse_source(MODEL, "model.py", first_line=10)
    (function,) = module.functions
    return function


def test_function_fields(model: syntax.FunctionDef) -> None:
    assert model.name == "loss"
    assert [p.name for p in model.params] == ["w", "x", "y", "lr"]
    assert repr(model.params[0].annotation) == "Attribute(value=Name(id='np'), attr='ndarray')"
    assert model.params[1].annotation is None
    assert model.params[3].default == syntax.Constant(0.1, range=model.range)
    assert model.returns == syntax.Name("float", range=model.range)
    assert model.docstring == "Mean squared error."
    assert repr(model.decorators) == "(Attribute(value=Name(id='ad'), attr='script'),)"
    assert [type(s).__name__ for s in model.body] == ["Assign", "For", "Return"]


def test_ranges_count_lines_of_the_file(model: syntax.FunctionDef) -> None:
    assert where(model) == (11, 1, 16, 41)  # from `def` to the end of the last statement
    assert model.range.filename == "model.py"
    assert where(model.params[0]) == (11, 10, 11, 23)
    assert where(model.params[3]) == (11, 31, 11, 46)
    assert where(model.decorators[0]) == (10, 2, 10, 11)
    assign, loop, ret = model.body
    assert isinstance(assign, syntax.Assign)
    assert isinstance(assign.value, syntax.Call)
    assert where(assign) == (13, 5, 13, 23)
    assert where(assign.targets[0]) == (13, 5, 13, 6)
    assert where(assign.value) == (13, 9, 13, 23)
    assert where(assign.value.args[0]) == (13, 17, 13, 22)
    assert isinstance(loop, syntax.For)
    assert where(loop) == (14, 5, 15, 30)
    (inner,) = loop.body
    assert isinstance(inner, syntax.Assign)
    assert isinstance(inner.value, syntax.BinOp)
    subscript = inner.value.right
    assert isinstance(subscript, syntax.BinOp)
    assert isinstance(subscript.right, syntax.Subscript)
    assert where(subscript.right) == (15, 22, 15, 30)
    assert isinstance(ret, syntax.Return)
    assert isinstance(ret.value, syntax.Call)
    assert where(ret) == (16, 5, 16, 41)
    assert where(ret.value.keywords[0]) == (16, 34, 16, 40)
    power = ret.value.args[0]
    assert isinstance(power, syntax.BinOp)
    assert power.op == "**"
    assert where(power.left) == (16, 20, 16, 27)  # `(h - y)` with its parentheses


def test_highlight_of_a_node(model: syntax.FunctionDef) -> None:
    ret = model.body[2]
    assert isinstance(ret, syntax.Return)
    assert isinstance(ret.value, syntax.Call)
    assert ret.value.keywords[0].range.highlight() == (
        "        return np.mean((h - y) ** 2, axis=0)\n                                     ^^^^^^"
    )


# ---- statements -------------------------------------------------------------------------------


def test_simple_statements() -> None:
    body = parse_stmts(
        """
        pass
        y = x
        a = b = x
        a, b = x
        (a, b) = x
        [a, b] = x
        y[0] = x
        y.t = x
        y[1:3] += x
        c: int = 3
        d: float
        f(x)
        return
        """
    )
    assert [repr(s) for s in body] == [
        "Pass()",
        "Assign(targets=(Name(id='y'),), value=Name(id='x'))",
        "Assign(targets=(Name(id='a'), Name(id='b')), value=Name(id='x'))",
        "Assign(targets=(Tuple(elts=(Name(id='a'), Name(id='b'))),), value=Name(id='x'))",
        "Assign(targets=(Tuple(elts=(Name(id='a'), Name(id='b'))),), value=Name(id='x'))",
        "Assign(targets=(List(elts=(Name(id='a'), Name(id='b'))),), value=Name(id='x'))",
        "Assign(targets=(Subscript(value=Name(id='y'), index=Constant(value=0)),),"
        " value=Name(id='x'))",
        "Assign(targets=(Attribute(value=Name(id='y'), attr='t'),), value=Name(id='x'))",
        "AugAssign(target=Subscript(value=Name(id='y'), index=Slice(lower=Constant(value=1),"
        " upper=Constant(value=3), step=None)), op='+', value=Name(id='x'))",
        "AnnAssign(target=Name(id='c'), annotation=Name(id='int'), value=Constant(value=3))",
        "AnnAssign(target=Name(id='d'), annotation=Name(id='float'), value=None)",
        "ExprStmt(value=Call(func=Name(id='f'), args=(Name(id='x'),), keywords=()))",
        "Return(value=None)",
    ]


@pytest.mark.parametrize("op", ["+", "-", "*", "/", "//", "%", "**", "@", "&", "|", "^", "<<"])
def test_augmented_assignment(op: str) -> None:
    (stmt,) = parse_stmts(f"y {op}= x\n")
    assert repr(stmt) == f"AugAssign(target=Name(id='y'), op='{op}', value=Name(id='x'))"


def test_semicolons_and_single_line_suites() -> None:
    body = parse_stmts("a = 1; b = 2;\nif a: b = 3\n")
    assert [type(s).__name__ for s in body] == ["Assign", "Assign", "If"]


def test_return_of_a_tuple() -> None:
    (stmt,) = parse_stmts("return a, b\n")
    assert repr(stmt) == "Return(value=Tuple(elts=(Name(id='a'), Name(id='b'))))"


def test_if_elif_else_nests_in_orelse() -> None:
    (stmt,) = parse_stmts(
        """
        if a:
            pass
        elif b:
            x = 1
        elif c:
            x = 2
        else:
            x = 3
        """
    )
    assert isinstance(stmt, syntax.If)
    assert stmt.test == syntax.Name("a", range=stmt.range)
    (elif_b,) = stmt.orelse
    assert isinstance(elif_b, syntax.If)
    assert repr(elif_b.test) == "Name(id='b')"
    (elif_c,) = elif_b.orelse
    assert isinstance(elif_c, syntax.If)
    assert repr(elif_c.orelse) == ("(Assign(targets=(Name(id='x'),), value=Constant(value=3)),)")
    assert where(stmt) == (3, 5, 10, 14)
    assert where(elif_b) == (5, 5, 10, 14)  # an elif runs to the end of the statement


def test_loops() -> None:
    body = parse_stmts(
        """
        for i in range(n):
            continue
        for a, b in pairs:
            break
        for (a, b) in pairs:
            pass
        while i < n:
            i += 1
        """
    )
    assert [repr(s) for s in body] == [
        "For(target=Name(id='i'), iter=Call(func=Name(id='range'), args=(Name(id='n'),),"
        " keywords=()), body=(Continue(),))",
        "For(target=Tuple(elts=(Name(id='a'), Name(id='b'))), iter=Name(id='pairs'),"
        " body=(Break(),))",
        "For(target=Tuple(elts=(Name(id='a'), Name(id='b'))), iter=Name(id='pairs'),"
        " body=(Pass(),))",
        "While(test=Compare(left=Name(id='i'), ops=('<',), comparators=(Name(id='n'),)),"
        " body=(AugAssign(target=Name(id='i'), op='+', value=Constant(value=1)),))",
    ]


def test_raise_and_assert_are_parsed() -> None:
    body = parse_stmts("raise\nraise ValueError('no')\nraise E from e\nassert x\nassert x, 'm'\n")
    assert [repr(s) for s in body] == [
        "Raise(exc=None, cause=None)",
        "Raise(exc=Call(func=Name(id='ValueError'), args=(Constant(value='no'),), keywords=()),"
        " cause=None)",
        "Raise(exc=Name(id='E'), cause=Name(id='e'))",
        "Assert(test=Name(id='x'), msg=None)",
        "Assert(test=Name(id='x'), msg=Constant(value='m'))",
    ]


def test_docstrings_and_bare_strings_are_dropped() -> None:
    function = parse_function('"""Doc."""\n"another"\ny = x\n')
    assert function.docstring == "Doc."
    assert [type(s).__name__ for s in function.body] == ["Assign"]
    only_doc = parse_function("'Doc.'\n")
    assert only_doc.docstring == "Doc."
    assert only_doc.body == ()


def test_nested_def_with_closure() -> None:
    function = parse_function(
        """
        out = np.tanh(x)
        def backward(dout):
            return dout * (1 - out * out)
        return out, backward
        """
    )
    nested = function.body[1]
    assert isinstance(nested, syntax.FunctionDef)
    assert nested.name == "backward"
    assert [p.name for p in nested.params] == ["dout"]
    assert where(nested) == (4, 5, 5, 38)


def test_decorators_are_kept() -> None:
    (function,) = parse_source("@ad.script\n@jit(static=(1,))\ndef f(x):\n    pass\n").functions
    assert repr(function.decorators) == (
        "(Attribute(value=Name(id='ad'), attr='script'), Call(func=Name(id='jit'), args=(),"
        " keywords=(Keyword(name='static', value=Tuple(elts=(Constant(value=1),))),)))"
    )
    assert where(function) == (3, 1, 4, 9)


def test_module_with_imports_and_several_functions() -> None:
    module = parse_source(
        '"""Formulas."""\n'
        "from __future__ import annotations\n"
        "import numpy as np, math\n"
        "from .. import base\n"
        "from a.b import (c as d, e,)\n"
        "def f(x):\n    return x\n"
        "\n"
        "def g(x):\n    return f(x)\n"
    )
    assert [f.name for f in module.functions] == ["f", "g"]
    assert [repr(i) for i in module.imports] == [
        "Import(module='__future__', names=(Alias(name='annotations', asname=None),))",
        "Import(module=None, names=(Alias(name='numpy', asname='np'),"
        " Alias(name='math', asname=None)))",
        "Import(module='..', names=(Alias(name='base', asname=None),))",
        "Import(module='a.b', names=(Alias(name='c', asname='d'), Alias(name='e', asname=None)))",
    ]


def test_parameters() -> None:
    function = parse_function("pass\n", header="def f(a, b: int, c=1, d: 'T' = None,):")
    assert [repr(p) for p in function.params] == [
        "Param(name='a', annotation=None, default=None)",
        "Param(name='b', annotation=Name(id='int'), default=None)",
        "Param(name='c', annotation=None, default=Constant(value=1))",
        "Param(name='d', annotation=Constant(value='T'), default=Constant(value=None))",
    ]
    assert parse_function("pass\n", header="def f():").params == ()


# ---- expressions ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (
            "a + b * c",
            "BinOp(op='+', left=Name(id='a'), right=BinOp(op='*', left=Name(id='b'),"
            " right=Name(id='c')))",
        ),
        (
            "a - b - c",
            "BinOp(op='-', left=BinOp(op='-', left=Name(id='a'), right=Name(id='b')),"
            " right=Name(id='c'))",
        ),
        (
            "-a ** 2",
            "UnaryOp(op='-', operand=BinOp(op='**', left=Name(id='a'), right=Constant(value=2)))",
        ),
        (
            "a ** -b ** c",
            "BinOp(op='**', left=Name(id='a'), right=UnaryOp(op='-',"
            " operand=BinOp(op='**', left=Name(id='b'), right=Name(id='c'))))",
        ),
        (
            "a @ b / c // d % e",
            "BinOp(op='%', left=BinOp(op='//', left=BinOp(op='/',"
            " left=BinOp(op='@', left=Name(id='a'), right=Name(id='b')), right=Name(id='c')),"
            " right=Name(id='d')), right=Name(id='e'))",
        ),
        (
            "+a - ~b",
            "BinOp(op='-', left=UnaryOp(op='+', operand=Name(id='a')),"
            " right=UnaryOp(op='~', operand=Name(id='b')))",
        ),
        (
            "a | b ^ c & d << e",
            "BinOp(op='|', left=Name(id='a'), right=BinOp(op='^',"
            " left=Name(id='b'), right=BinOp(op='&', left=Name(id='c'), right=BinOp(op='<<',"
            " left=Name(id='d'), right=Name(id='e')))))",
        ),
        (
            "0 < x <= 1",
            "Compare(left=Constant(value=0), ops=('<', '<='),"
            " comparators=(Name(id='x'), Constant(value=1)))",
        ),
        (
            "a is not None",
            "Compare(left=Name(id='a'), ops=('is not',), comparators=(Constant(value=None),))",
        ),
        ("a not in b", "Compare(left=Name(id='a'), ops=('not in',), comparators=(Name(id='b'),))"),
        ("a is b", "Compare(left=Name(id='a'), ops=('is',), comparators=(Name(id='b'),))"),
        (
            "a in b == c != d >= e > f",
            "Compare(left=Name(id='a'), ops=('in', '==', '!=', '>=', '>'),"
            " comparators=(Name(id='b'), Name(id='c'), Name(id='d'), Name(id='e'), Name(id='f')))",
        ),
        (
            "a and b and c or not d",
            "BoolOp(op='or', values=(BoolOp(op='and', values=(Name(id='a'),"
            " Name(id='b'), Name(id='c'))), UnaryOp(op='not', operand=Name(id='d'))))",
        ),
        ("a if c else b", "IfExp(test=Name(id='c'), body=Name(id='a'), orelse=Name(id='b'))"),
        ("x.T.shape", "Attribute(value=Attribute(value=Name(id='x'), attr='T'), attr='shape')"),
        (
            "np.linalg.norm(x)",
            "Call(func=Attribute(value=Attribute(value=Name(id='np'),"
            " attr='linalg'), attr='norm'), args=(Name(id='x'),), keywords=())",
        ),
        (
            "np.sum(x, axis=0, keepdims=True)",
            "Call(func=Attribute(value=Name(id='np'),"
            " attr='sum'), args=(Name(id='x'),), keywords=(Keyword(name='axis',"
            " value=Constant(value=0)), Keyword(name='keepdims', value=Constant(value=True))))",
        ),
        (
            "x.astype('float32')",
            "Call(func=Attribute(value=Name(id='x'), attr='astype'),"
            " args=(Constant(value='float32'),), keywords=())",
        ),
        ("f()", "Call(func=Name(id='f'), args=(), keywords=())"),
        ("(a, b)", "Tuple(elts=(Name(id='a'), Name(id='b')))"),
        ("(a,)", "Tuple(elts=(Name(id='a'),))"),
        ("()", "Tuple(elts=())"),
        ("[a, [b]]", "List(elts=(Name(id='a'), List(elts=(Name(id='b'),))))"),
        ("[]", "List(elts=())"),
        ("(a)", "Name(id='a')"),
    ],
)
def test_expressions(source: str, expected: str) -> None:
    assert repr(parse_expr(source)) == expected


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("x[0]", "Constant(value=0)"),
        ("x[-1]", "UnaryOp(op='-', operand=Constant(value=1))"),
        ("x[:]", "Slice(lower=None, upper=None, step=None)"),
        ("x[::]", "Slice(lower=None, upper=None, step=None)"),
        ("x[1:]", "Slice(lower=Constant(value=1), upper=None, step=None)"),
        (
            "x[:-1]",
            "Slice(lower=None, upper=UnaryOp(op='-', operand=Constant(value=1)), step=None)",
        ),
        (
            "x[::-1]",
            "Slice(lower=None, upper=None, step=UnaryOp(op='-', operand=Constant(value=1)))",
        ),
        ("x[a:b:c]", "Slice(lower=Name(id='a'), upper=Name(id='b'), step=Name(id='c'))"),
        (
            "x[1:3, ::2, None, ..., 0]",
            "Tuple(elts=(Slice(lower=Constant(value=1),"
            " upper=Constant(value=3), step=None), Slice(lower=None, upper=None,"
            " step=Constant(value=2)), Constant(value=None), Constant(value=Ellipsis),"
            " Constant(value=0)))",
        ),
        ("x[i,]", "Tuple(elts=(Name(id='i'),))"),
        ("x[(i, j)]", "Tuple(elts=(Name(id='i'), Name(id='j')))"),
    ],
)
def test_subscripts(source: str, expected: str) -> None:
    subscript = parse_expr(source)
    assert isinstance(subscript, syntax.Subscript)
    assert repr(subscript.index) == expected


@pytest.mark.parametrize(
    ("source", "value"),
    [
        ("0", 0),
        ("42", 42),
        ("1_000", 1000),
        ("0x1F", 31),
        ("0o17", 15),
        ("0b101", 5),
        ("1.5", 1.5),
        ("1.", 1.0),
        (".5", 0.5),
        ("1e-3", 1e-3),
        ("2E5", 2e5),
        ("1j", 1j),
        ("True", True),
        ("False", False),
        ("None", None),
        ("...", ...),
        ("'single'", "single"),
        ('"double"', "double"),
        ("'a' \"b\"", "ab"),
        ("'tab\\t'", "tab\t"),
        ("r'\\d'", "\\d"),
        ("'''it's'''", "it's"),
    ],
)
def test_constants(source: str, value: object) -> None:
    constant = parse_expr(source)
    assert isinstance(constant, syntax.Constant)
    assert constant.value == value
    assert type(constant.value) is type(value)


def test_comments_and_line_continuations() -> None:
    body = parse_stmts(
        """
        # a comment
        y = np.sum(x,   # inside brackets
                   axis=0)  # trailing

        z = x + \\
            y
        w = [1,
        2]
        """
    )
    assert [repr(s) for s in body] == [
        "Assign(targets=(Name(id='y'),), value=Call(func=Attribute(value=Name(id='np'),"
        " attr='sum'), args=(Name(id='x'),), keywords=(Keyword(name='axis',"
        " value=Constant(value=0)),)))",
        "Assign(targets=(Name(id='z'),), value=BinOp(op='+', left=Name(id='x'),"
        " right=Name(id='y')))",
        "Assign(targets=(Name(id='w'),), value=List(elts=(Constant(value=1), Constant(value=2))))",
    ]
    assert where(body[0]) == (4, 5, 5, 23)


def test_tabs_and_crlf() -> None:
    (function,) = parse_source("def f(x):\r\n\ty = x\r\n\treturn y\r\n").functions
    assert [type(s).__name__ for s in function.body] == ["Assign", "Return"]


# ---- where the text comes from ---------------------------------------------------------------


def test_indented_method_is_dedented_and_columns_kept() -> None:
    text = "    def f(self, x):\n        y = x\n        return y\n"
    (function,) = parse_source(text, "cls.py", first_line=20).functions
    assert where(function) == (20, 5, 22, 17)
    assert where(function.body[0]) == (21, 9, 21, 14)
    with pytest.raises(ScriptError) as info:
        parse_source("    def f(self):\n        return {1, 2, 3}\n", "cls.py", 20)
    assert str(info.value) == (
        "cls.py:21:16: error: set literals are not supported\n"
        "            return {1, 2, 3}\n"
        "                   ^^^^^^^^^\n"
        "  see docs/language.md#sets"
    )


def test_col_offset_for_text_dedented_by_the_caller() -> None:
    with pytest.raises(ScriptError) as info:
        parse_source("def f(self):\n    return {1, 2, 3}\n", "cls.py", 20, col_offset=4)
    assert str(info.value) == (
        "cls.py:21:16: error: set literals are not supported\n"
        "            return {1, 2, 3}\n"
        "                   ^^^^^^^^^\n"
        "  see docs/language.md#sets"
    )


def test_script_error_is_an_autodiff_error() -> None:
    assert issubclass(ScriptError, AutodiffError)


# ---- refused constructs -----------------------------------------------------------------------


def test_refused_construct_message_and_caret() -> None:
    error = script_error("def loss(x):\n    return {x * 2, x * 30}\n")
    assert str(error) == (
        "model.py:11:12: error: set literals are not supported\n"
        "        return {x * 2, x * 30}\n"
        "               ^^^^^^^^^^^^^^^\n"
        "  see docs/language.md#sets"
    )
    assert error.source_range is not None
    assert error.source_range.line == 11


def test_refused_statement_caret_covers_its_first_line() -> None:
    error = script_error("def f(x):\n    y = 1\n    with open(x) as g:\n        pass\n")
    assert str(error) == (
        "model.py:12:5: error: 'with' statements are not supported\n"
        "        with open(x) as g:\n"
        "        ^^^^^^^^^^^^^^^^^^\n"
        "  see docs/language.md#with"
    )


@pytest.mark.parametrize(
    ("body", "message", "line", "col"),
    [
        ("return {1, 2}", "set literals are not supported", 11, 12),
        ("with a:\n        pass", "'with' statements are not supported", 11, 5),
        (
            "try:\n        pass\n    except E:\n        pass",
            "'try' statements are not supported",
            11,
            5,
        ),
        (
            "try:\n        pass\n    finally:\n        pass",
            "'try' statements are not supported",
            11,
            5,
        ),
        ("yield x", "yield is not supported", 11, 5),
        ("y = yield", "yield is not supported", 11, 9),
        ("y = (yield from x)", "yield is not supported", 11, 10),
        ("global g", "'global' statements are not supported", 11, 5),
        ("nonlocal g", "'nonlocal' statements are not supported", 11, 5),
        ("class C:\n        pass", "class definitions are not supported", 11, 5),
        ("y = {i for i in x}", "set comprehensions are not supported", 11, 9),
        ("y = [i async for i in x]", "async comprehensions are not supported", 11, 12),
        ("y = {1: 2, **d}", "'**' in a dict literal is not supported: write the items", 11, 16),
        ("y = {1, 2}", "set literals are not supported", 11, 9),
        (
            "return f'{x:{w}}'",
            "a format spec computed in an f-string ({x:{width}}) is not supported: write the "
            "spec out",
            11,
            12,
        ),
        ("return 'a' F'{ {i for i in x} }'", "set comprehensions are not supported", 11, 16),
        ("return b'x'", "bytes literals are not supported", 11, 12),
        ("a, *b = x", "starred expressions are not supported", 11, 8),
        ("return [*x]", "starred expressions are not supported", 11, 13),
        ("f(**x, *y)", "iterable argument unpacking follows keyword argument unpacking", 11, 12),
        ("f(**x, y)", "positional argument follows keyword argument unpacking", 11, 12),
        ("del x", "'del' statements are not supported", 11, 5),
        ("import numpy", "import statements are not supported inside a function", 11, 5),
        ("from a import b", "import statements are not supported inside a function", 11, 5),
        ("if (n := 3):\n        pass", "assignment expressions (:=) are not supported", 11, 9),
        ("y = await x", "await is not supported", 11, 9),
        ("async for i in x:\n        pass", "'async for' loops are not supported", 11, 5),
        ("async with x:\n        pass", "'async with' statements are not supported", 11, 5),
        (
            "for i in x:\n        pass\n    else:\n        pass",
            "'else' clauses on loops are not supported",
            13,
            5,
        ),
        (
            "while x:\n        pass\n    else:\n        pass",
            "'else' clauses on loops are not supported",
            13,
            5,
        ),
        (
            "match x:\n        case 1:\n            pass",
            "'match' statements are not supported",
            11,
            5,
        ),
        ("f(a=1, a=2)", "keyword argument repeated: 'a'", 11, 12),
        ("f(a=1, 2)", "positional argument follows keyword argument", 11, 12),
        ("f(x) = 1", "cannot assign to function call", 11, 5),
        ("1 = x", "cannot assign to literal", 11, 5),
        ("a, x + 1 = y", "cannot assign to expression", 11, 8),
        ("for f(i) in x:\n        pass", "cannot assign to function call", 11, 9),
        ("a, b += 1", "'tuple' is an illegal expression for augmented assignment", 11, 5),
        ("(a, b): int = 1", "only a single target (not a tuple) can be annotated", 11, 5),
    ],
)
def test_refused_in_a_body(body: str, message: str, line: int, col: int) -> None:
    error = script_error(f"def f(x):\n    {body}\n")
    assert error.message == message
    assert error.source_range is not None
    assert (error.source_range.line, error.source_range.col) == (line, col)
    assert error.source_range.filename == "model.py"
    assert str(error).count("^") >= 1


@pytest.mark.parametrize(
    ("text", "message", "line", "col"),
    [
        ("def f(*a, *b):\n    pass\n", "* argument may appear only once", 10, 11),
        ("def f(x, **kw, y):\n    pass\n", "arguments cannot follow var-keyword argument", 10, 10),
        ("def f(a, *):\n    pass\n", "named arguments must follow bare *", 10, 10),
        ("def f(a, /):\n    pass\n", "positional-only parameters ('/') are not supported", 10, 10),
        (
            "def f(a=1, b):\n    pass\n",
            "parameter without a default follows parameter with a default",
            10,
            12,
        ),
        ("def f(a, a):\n    pass\n", "duplicate parameter 'a'", 10, 10),
        ("async def f(x):\n    pass\n", "async functions are not supported", 10, 1),
        ("@dec\nclass C:\n    pass\n", "class definitions are not supported", 11, 1),
        (
            "x = 1\ndef f():\n    pass\n",
            "only 'def' and 'import' statements are supported at module level",
            10,
            1,
        ),
        ("import numpy as np\n", "expected a function definition", 10, 1),
        ("", "expected a function definition", 10, 1),
        ("# only a comment\n", "expected a function definition", 10, 1),
    ],
)
def test_refused_definitions(text: str, message: str, line: int, col: int) -> None:
    error = script_error(text)
    assert error.message == message
    assert error.source_range is not None
    assert (error.source_range.line, error.source_range.col) == (line, col)


# ---- syntax errors ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message", "line", "col"),
    [
        ("def f(x):\n    return x +\n", "invalid syntax: unexpected end of line", 11, 15),
        ("def f(x):\n    y = 1 2\n", "invalid syntax: unexpected '2'", 11, 11),
        ("def f(x):\n    y = x y\n", "invalid syntax: unexpected name 'y'", 11, 11),
        ("def f(x):\n    y = (1,\n        2,\n", "'(' was never closed", 11, 9),
        ("def f(x):\n    y = x[0\n", "'[' was never closed", 11, 10),
        ("def f(x):\n    y = (1]\n", "invalid syntax: unexpected ']'", 11, 11),
        ("def f(x):\n  y = 1\n    z = 2\n", "unexpected indent", 12, 5),
        (
            "def f(x):\n    if x:\n        y = 1\n      z = 2\n",
            "unindent does not match any outer indentation level",
            13,
            7,
        ),
        ("def f(x):\nreturn x\n", "expected an indented block", 11, 1),
        ("def f(x):\n", "expected an indented block", 11, 1),
        ("def f(x):\n    y = $\n", "invalid character '$'", 11, 9),
        ("def f(x):\n    y = 'abc\n", "unterminated string literal", 11, 9),
        ("def f(x)\n    pass\n", "invalid syntax: unexpected end of line", 10, 9),
        ("def f(x):\n    if x\n        pass\n", "invalid syntax: unexpected end of line", 11, 9),
        ("def f(x):\n    else:\n        pass\n", "invalid syntax: unexpected 'else'", 11, 5),
        ("def f(x):\n    match = = 1\n", "invalid syntax: unexpected '='", 11, 13),
        ("def f(x):\n    y = f(a.b=1)\n", "invalid syntax: unexpected '='", 11, 14),
    ],
)
def test_syntax_errors_are_located(text: str, message: str, line: int, col: int) -> None:
    error = script_error(text)
    assert error.message == message
    assert error.source_range is not None
    assert (error.source_range.line, error.source_range.col) == (line, col)


def test_syntax_error_str() -> None:
    assert str(script_error("def f(x):\n    y = (1]\n")) == (
        "model.py:11:11: error: invalid syntax: unexpected ']'\n"
        "        y = (1]\n"
        "              ^\n"
        "  see docs/language.md"  # a syntax error links to the page as a whole
    )


# ---- size and depth ---------------------------------------------------------------------------


def test_ten_thousand_statements() -> None:
    text = "def f(x):\n" + "".join(f"    x = x * {i}.0 + 1\n" for i in range(10_000))
    (function,) = parse_source(text + "    return x\n").functions
    assert len(function.body) == 10_001
    assert function.body[-1].range.line == 10_002


def test_deeply_nested_parentheses() -> None:
    depth = 200
    value = parse_expr("(" * depth + "x" + ")" * depth)
    assert value == syntax.Name("x", range=value.range)
    negated = parse_expr("-(" * depth + "x" + ")" * depth)
    assert isinstance(negated, syntax.UnaryOp)
    assert sum(isinstance(n, syntax.UnaryOp) for n in syntax.walk(negated)) == depth


def test_long_operator_chain() -> None:
    value = parse_expr(" + ".join(["x"] * 5000))
    assert sum(isinstance(n, syntax.BinOp) for n in syntax.walk(value)) == 4999


# ---- traversal --------------------------------------------------------------------------------


def test_walk_visits_parents_before_children_in_order() -> None:
    value = parse_expr("f(a, k=b)[c]")
    names = [n.id for n in syntax.walk(value) if isinstance(n, syntax.Name)]
    assert names == ["f", "a", "b", "c"]
    assert [type(n).__name__ for n in syntax.iter_child_nodes(value)] == ["Call", "Name"]


# ---- agreement with Python's own parser -------------------------------------------------------

_BINARY: dict[type[ast.operator], syntax.BinaryOperator] = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%",
    ast.Pow: "**", ast.MatMult: "@", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^",
    ast.LShift: "<<", ast.RShift: ">>",
}  # fmt: skip
_UNARY: dict[type[ast.unaryop], syntax.UnaryOperator] = {
    ast.USub: "-",
    ast.UAdd: "+",
    ast.Invert: "~",
    ast.Not: "not",
}
_COMPARE: dict[type[ast.cmpop], syntax.CompareOperator] = {
    ast.Lt: "<", ast.Gt: ">", ast.Eq: "==", ast.NotEq: "!=", ast.LtE: "<=", ast.GtE: ">=",
    ast.In: "in", ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not",
}  # fmt: skip
_ANYWHERE = SourceRange.location("<python>", 1, 1)


def from_python(node: ast.expr) -> syntax.Expr:
    """Python's AST of an expression of the subset, as frontend.syntax (ranges ignored)."""
    r = _ANYWHERE
    convert = from_python
    match node:
        case ast.Name(id=name):
            return syntax.Name(name, range=r)
        case ast.Constant(value=value) if not isinstance(value, bytes):
            return syntax.Constant(value, range=r)
        case ast.BinOp(left=left, op=op, right=right):
            return syntax.BinOp(_BINARY[type(op)], convert(left), convert(right), range=r)
        case ast.UnaryOp(op=op, operand=operand):
            return syntax.UnaryOp(_UNARY[type(op)], convert(operand), range=r)
        case ast.BoolOp(op=op, values=values):
            kind: syntax.BoolOperator = "and" if isinstance(op, ast.And) else "or"
            return syntax.BoolOp(kind, tuple(map(convert, values)), range=r)
        case ast.Compare(left=left, ops=ops, comparators=comparators):
            names = tuple(_COMPARE[type(op)] for op in ops)
            return syntax.Compare(convert(left), names, tuple(map(convert, comparators)), range=r)
        case ast.IfExp(test=test, body=body, orelse=orelse):
            return syntax.IfExp(convert(test), convert(body), convert(orelse), range=r)
        case ast.Call(func=func, args=args, keywords=keywords):
            pairs = tuple(syntax.Keyword(str(k.arg), convert(k.value), range=r) for k in keywords)
            return syntax.Call(convert(func), tuple(map(convert, args)), pairs, range=r)
        case ast.Attribute(value=value, attr=attr):
            return syntax.Attribute(convert(value), attr, range=r)
        case ast.Subscript(value=value, slice=index):
            return syntax.Subscript(convert(value), convert(index), range=r)
        case ast.Slice(lower=lower, upper=upper, step=step):
            parts = [None if p is None else convert(p) for p in (lower, upper, step)]
            return syntax.Slice(*parts, range=r)
        case ast.Tuple(elts=elts):
            return syntax.Tuple(tuple(map(convert, elts)), range=r)
        case ast.List(elts=elts):
            return syntax.List(tuple(map(convert, elts)), range=r)
    raise AssertionError(f"not in the subset: {ast.dump(node)}")


def _expressions() -> st.SearchStrategy[str]:
    atoms = st.sampled_from(["x", "y", "0", "2.5", "None", "True", "'s'", "..."])
    binary = st.sampled_from([*_BINARY.values(), *_COMPARE.values(), "and", "or"])
    prefix = st.sampled_from(["-", "+", "~", "not "])

    def extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        return st.one_of(
            st.builds("{} {} {}".format, inner, binary, inner),
            st.builds("{}{}".format, prefix, inner),
            st.builds("({})".format, inner),
            st.builds("({},)".format, inner),
            st.builds("[{}, {}]".format, inner, inner),
            st.builds("{} if {} else {}".format, inner, inner, inner),
            st.builds("{}.T".format, inner),
            st.builds("f({}, k={})".format, inner, inner),
            st.builds("{}[{}]".format, inner, inner),
            st.builds("{}[{}:{}, ::{}]".format, inner, inner, inner, inner),
        )

    return st.recursive(atoms, extend, max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(_expressions())
def test_expressions_agree_with_python(source: str) -> None:
    try:
        expected = ast.parse(source, mode="eval").body
    except SyntaxError:
        with pytest.raises(ScriptError):
            parse_expr(source)
        return
    assert parse_expr(source) == from_python(expected)


_PIECES = [
    "\n", "\n    ", "\n        ", "\t", "(", ")", "[", "]", "{", "}", ":", ",", ";", "=", "+=",
    "->", ":=", "*", "**", "@", ".", "...", "x", "1", "1.5", "'s'", '"""d"""', "f'a'", "'", "$",
    "#c", "\\\n", "if", "else", "elif", "for", "in", "while", "return", "def", "lambda", "not",
    "is", "and", "yield", "async", "await", "with", "try", "class", "import", "from", "del",
    "global", "pass", "break",
]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=25), st.sampled_from([0, 4]))
def test_any_text_parses_or_raises_a_located_script_error(pieces: list[str], indent: int) -> None:
    text = "def f(x):\n    " + " ".join(pieces)
    try:
        parse_source(text, "fuzz.py", 3, col_offset=indent)
    except ScriptError as error:
        report = str(error)
    else:
        return
    assert report.startswith("fuzz.py:")


# -- identifiers and literals as Python reads them ----------------------------------------


def test_identifiers_are_nfkc_normalised_as_python_does() -> None:
    # PEP 3131: `ﬁ` (the ligature) and `x²` are the names `fi` and `x2`.
    (assign, ret) = parse_stmts("\ufb01 = x\nreturn fi + x\u00b2\n")
    assert isinstance(assign, syntax.Assign)
    (target,) = assign.targets
    assert isinstance(target, syntax.Name)
    assert target.id == "fi"
    assert where(target) == (2, 5, 2, 6)  # the one character of the source
    assert isinstance(ret, syntax.Return)
    assert isinstance(ret.value, syntax.BinOp)
    assert [ret.value.left.id, ret.value.right.id] == ["fi", "x2"]  # type: ignore[attr-defined]


def test_a_ligature_name_and_its_plain_spelling_are_one_variable(tmp_path: Any) -> None:
    import importlib.util

    import numpy as np

    import autodiff as ad

    path = tmp_path / "ligature.py"
    path.write_text(
        "import numpy as np\n\n\ndef f(x):\n    \ufb01 = x * 2.0\n    fi = x + 1.0\n"
        "    return np.sum(\ufb01 * fi)\n",
        encoding="utf-8",
    )
    spec = importlib.util.spec_from_file_location("ligature", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    x = np.array([1.0, 2.0])
    assert module.f(x) == 13.0  # Python: both names are `fi`, so (x + 1) ** 2 summed
    assert ad.script(module.f)(x) == 13.0  # was 16.0, two variables
    np.testing.assert_allclose(ad.grad(module.f)(x), 2 * (x + 1))


def test_an_int_literal_of_any_size_in_hexadecimal(tmp_path: Any) -> None:
    # Python refuses decimal literals past 4300 digits but not hexadecimal ones.
    import importlib.util

    import numpy as np

    import autodiff as ad
    from ir.parser import parse_graph
    from ir.printer import print_graph

    digits = "f" * 5000
    path = tmp_path / "big.py"
    path.write_text(f"def f(x):\n    n = 0x{digits}\n    return x * (n % 7) + n // n\n")
    spec = importlib.util.spec_from_file_location("big", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    x = np.array([1.0, 2.0])
    scripted = ad.script(module.f)
    np.testing.assert_array_equal(scripted(x), module.f(x))
    text = print_graph(scripted.graph)  # was a ValueError: Python writes no such decimal
    assert f"0x{digits}" in text
    assert print_graph(parse_graph(text)) == text


def test_a_decimal_literal_past_pythons_digit_limit_is_located_as_python_refuses_it() -> None:
    source = "def f(x):\n    n = " + "9" * 5000 + "\n    return x\n"
    with pytest.raises(SyntaxError, match=r"Exceeds the limit \(4300 digits\)"):
        compile(source, "<python>", "exec")  # Python's own message
    with pytest.raises(ScriptError) as info:  # was a ValueError from int()
        parse_source(source)
    lines = str(info.value).splitlines()
    assert lines[0] == (
        "<string>:2:9: error: Exceeds the limit (4300 digits) for integer string conversion"
    )
    assert len(lines) == 4
    assert lines[-1] == "  see docs/language.md#numbers-and-arrays"
