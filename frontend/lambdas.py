"""A lambda as the function compiled: ``ad.grad(lambda p: loss(p, x, y))``, as JAX users write.

Note [Lambdas compiled]
A lambda has no source of its own: ``inspect`` gives the lines of the statement around it.
The file is parsed with Python's own parser to find the lambda — on the line its code starts
at, with its parameter names, and, of several such, the one whose body holds the columns the
code's instructions come from — and the lambda is then parsed by our parser as the function
``def <lambda>(params): return (body)``, written so that the body keeps its lines and columns
in the file: the ``def`` on the line above the body, ``return (`` just left of the body's first
column. Errors therefore point at the lambda where it is written, and the lines they show are
the file's own. A lambda that cannot be placed so (a body at the far left of its line, one of
two lambdas that cannot be told apart) is refused, saying to define it with ``def``.
"""

from __future__ import annotations

import ast
import inspect
import linecache
from types import FunctionType

from frontend import syntax
from frontend.errors import ScriptError
from frontend.parse import parse_source
from ir.source import SourceRange

_RETURN = "return ("


def lambda_definition(fn: FunctionType, where: SourceRange) -> syntax.FunctionDef:
    """The lambda ``fn`` parsed as a function (Note [Lambdas compiled])."""
    code = fn.__code__
    filename = inspect.getsourcefile(fn) or code.co_filename
    lines = linecache.getlines(filename, fn.__globals__)
    if not lines:
        raise ScriptError(
            "cannot find the source code of this lambda: lambdas typed at the interactive "
            "prompt or made by exec() cannot be scripted",
            where,
            doc="lambda",
        )
    node = _find(fn, "".join(lines), where)
    body = node.body
    assert body.end_lineno is not None
    assert body.end_col_offset is not None
    first, last = body.lineno, body.end_lineno
    encoded = [line.encode() for line in lines[first - 1 : last]]
    start = len(encoded[0][: body.col_offset].decode())  # ast counts UTF-8 bytes
    indent = start - len(_RETURN)
    if indent < 1 or first < 2:
        raise ScriptError(
            "cannot script this lambda where it is written: define the function with 'def'",
            where,
            doc="lambda",
        )
    encoded[-1] = encoded[-1][: body.end_col_offset]
    encoded[0] = encoded[0][body.col_offset :]
    text_lines = [line.decode() for line in encoded]
    text_lines[0] = " " * indent + _RETURN + text_lines[0]
    text_lines[-1] = text_lines[-1].rstrip("\n") + ")\n"
    header = f"def _lambda({ast.unparse(node.args)}):\n"
    shown = "".join(lines[first - 2 : last])
    module = parse_source(header + "".join(text_lines), filename, first - 1, shown=shown)
    return module.functions[0]


def _find(fn: FunctionType, source: str, where: SourceRange) -> ast.Lambda:
    code = fn.__code__
    try:
        tree = ast.parse(source)
    except SyntaxError:
        raise ScriptError(
            "cannot parse the file this lambda is written in", where, doc="lambda"
        ) from None
    names = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
    found = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Lambda)
        and node.lineno == code.co_firstlineno
        and tuple(_parameter_names(node.args)) == names
    ]
    if len(found) > 1:  # told apart by where the code's instructions come from
        positions = {
            (line, col)
            for line, _, col, _ in code.co_positions()
            if line is not None and col is not None
        }
        found = [node for node in found if any(_holds(node.body, p) for p in positions)]
    if len(found) != 1:
        raise ScriptError(
            "cannot tell which lambda on this line is compiled: define the function with 'def'",
            where,
            doc="lambda",
        )
    return found[0]


def _parameter_names(args: ast.arguments) -> list[str]:
    positional = [a.arg for a in (*args.posonlyargs, *args.args)]
    if args.vararg is not None or args.kwarg is not None:
        return []  # never equal to the code's names: refused as not found
    return [*positional, *(a.arg for a in args.kwonlyargs)]


def _holds(node: ast.expr, position: tuple[int, int]) -> bool:
    line, col = position
    end_line, end_col = node.end_lineno or node.lineno, node.end_col_offset or 0
    after_start = (line, col) >= (node.lineno, node.col_offset)
    return after_start and (line, col) < (end_line, end_col)
