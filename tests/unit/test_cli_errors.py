"""The command line's error catalogue, run as a user runs it (a subprocess): each bad input
exits with status 1 and prints one located message to standard error, nothing to standard
output, and no Python traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import autodiff  # noqa: F401  (registers the passes it defines: differentiate, lambda-lift)
from passes.registry import PASSES

MODEL = """\
import numpy as np


def refused(x):
    f = {v * 2.0 for v in x}
    return f


def broadcasts(x, y):
    z = x * 2.0
    return np.sum(z + y)


def power(x, n: int):
    return np.sum(x**n)
"""


def run(*args: str, stdin: str | None = None, cwd: Path | None = None) -> str:
    """Standard error of ``python -m autodiff ARGS``, which must fail cleanly."""
    done = subprocess.run(
        [sys.executable, "-m", "autodiff", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=cwd,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    assert done.stdout == ""
    assert "Traceback" not in done.stderr
    assert done.stderr.count("error:") == 1
    return done.stderr


@pytest.fixture
def model(tmp_path: Path) -> Path:
    path = tmp_path / "model.py"
    path.write_text(MODEL)
    return path


def test_malformed_ir_names_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "bad.ir"
    path.write_text("graph(%x : Tensor):\n  %y : Tensor = aten::neg(%x\n  return (%y)\n")
    err = run("opt", str(path), "-p", "cse")
    first, source, caret = err.splitlines()
    assert first.startswith(f"{path}:2:")
    col = int(first.split(":")[2])
    assert ": error: " in first
    assert source == "      %y : Tensor = aten::neg(%x"
    assert caret == " " * (4 + col - 1) + "^"


def test_malformed_ir_on_standard_input() -> None:
    err = run("opt", "-", stdin="graph(%x : Tensor):\n  return (%z)\n")
    assert err.splitlines()[0] == "<stdin>:2:11: error: undefined value '%z'"


def test_unknown_pass_lists_the_known_ones(tmp_path: Path) -> None:
    path = tmp_path / "ok.ir"
    path.write_text("graph(%x : Tensor):\n  return (%x)\n")
    err = run("opt", str(path), "-p", "cse,no-such-pass")
    assert err == f"error: unknown pass 'no-such-pass'; known passes: {', '.join(sorted(PASSES))}\n"


def test_verifier_error_on_ir_text_points_at_the_node_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.ir"
    statement = "%z : Double(3) = aten::copy(%n)"
    path.write_text(
        "graph @f(%x : Double(3), %n : int):\n"
        "  %y : Double(3) = aten::tanh(%x)\n"
        f"  {statement}  # a remark, not a location\n"
        "  return (%z)\n"
    )
    err = run("opt", str(path), "-p", "cse")
    lines = err.splitlines()
    assert lines[0] == (
        f"{path}:3:3: error: operand 0 (self) of aten::copy has type int, expected Tensor"
    )
    assert lines[-2:] == [
        f"      {statement}  # a remark, not a location",
        f"      {'^' * len(statement)}",
    ]


def test_shape_error_on_ir_text_points_at_the_node_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.ir"
    path.write_text(
        "graph @f(%x : Double(3), %y : Double(4)):\n"
        "  %z : Tensor = aten::add(%x, %y)\n"
        "  return (%z)\n"
    )
    err = run("opt", str(path), "-p", "propagate-shapes")
    lines = err.splitlines()
    assert lines[0] == (
        f"{path}:2:3: error: operands could not be broadcast together with shapes (3,) (4,)"
    )
    assert lines[-1] == "      " + "^" * len("%z : Tensor = aten::add(%x, %y)")


def test_a_node_with_a_location_comment_keeps_that_location(tmp_path: Path) -> None:
    path = tmp_path / "bad.ir"
    path.write_text(
        "graph @f(%x : Double(3), %y : Double(4)):\n"
        "  %z : Tensor = aten::add(%x, %y)  # model.py:7:12\n"
        "  return (%z)\n"
    )
    err = run("opt", str(path), "-p", "propagate-shapes")
    assert err.startswith("model.py:7:12: error: operands could not be broadcast together")


@pytest.mark.parametrize(
    ("pipeline", "column", "problem"),
    [
        ("dce,,cse", 5, "expected a pass name, found ','"),
        ("dce;cse", 4, "expected ',' or '{' after pass 'dce', found ';'"),
        (" dce ; cse", 6, "expected ',' or '{' after pass 'dce', found ';'"),
        ("cse{max-size=3", 4, "the options of pass 'cse' have no closing '}'"),
        ("dce{a{b}}", 6, "'{' inside the options of pass 'dce'"),
        ("dce{} cse", 7, "expected ',' after the options of pass 'dce', found 'c'"),
    ],
)
def test_malformed_pipeline_names_the_column(
    tmp_path: Path, pipeline: str, column: int, problem: str
) -> None:
    path = tmp_path / "ok.ir"
    path.write_text("graph(%x : Tensor):\n  return (%x)\n")
    err = run("opt", str(path), "-p", pipeline)
    assert err.splitlines() == [
        f"<pass pipeline>:1:{column}: error: malformed pass pipeline: {problem}",
        f"    {pipeline}",
        f"    {' ' * (column - 1)}^",
    ]


def test_script_error_in_dump_is_located(model: Path) -> None:
    err = run("dump", f"{model}:refused")
    assert err == (
        f"{model}:5:9: error: set comprehensions are not supported\n"
        "        f = {v * 2.0 for v in x}\n"
        "            ^^^^^^^^^^^^^^^^^^^^\n"
        "  see docs/language.md#sets\n"
    )


def test_python_syntax_error_in_dump_is_located(tmp_path: Path) -> None:
    path = tmp_path / "broken.py"
    path.write_text("import numpy as np\n\n\ndef f(x):\n    return (x]\n")
    err = run("dump", f"{path}:f")
    first, source, caret = err.splitlines()
    assert first.startswith(f"{path}:5:")
    assert first.endswith(
        ": error: cannot import " + str(path) + ": closing parenthesis ']' "
        "does not match opening parenthesis '('"
    )
    assert source == "        return (x]"
    assert caret == "                 ^"


def test_python_syntax_error_in_an_imported_neighbour_is_located_there(tmp_path: Path) -> None:
    (tmp_path / "helper.py").write_text("def g(x):\n    return x +\n")
    path = tmp_path / "main.py"
    path.write_text("import helper\n\n\ndef f(x):\n    return x\n")
    err = run("dump", f"{path}:f")
    first, source, _ = err.splitlines()
    assert first.startswith(f"{tmp_path / 'helper.py'}:2:")
    assert first.endswith(f": error: cannot import {path}: invalid syntax")
    assert source == "        return x +"


def test_shape_mismatch_in_dump_names_the_line_and_both_shapes(model: Path) -> None:
    err = run(
        "dump", f"{model}:broadcasts", "--stage", "typed", "--arg", "x=f64[3]", "--arg", "y=f64[4]"
    )
    lines = err.splitlines()
    assert lines[0] == (
        f"{model}:11:19: error: operands could not be broadcast together with shapes (3,) (4,)"
    )
    assert lines[-2:] == ["        return np.sum(z + y)", "                      ^^^^^"]


def test_differentiating_an_integer_argument_in_dump(model: Path) -> None:
    err = run(
        "dump", f"{model}:power", "--stage", "df", "--arg", "x=f64[3]", "--arg", "n=2", "--wrt", "n"
    )
    assert err == (
        "error: cannot differentiate power() with respect to argument 'n' of type int: only "
        "floating-point arrays and Python floats have gradients\n"
    )


def test_bad_argument_type_in_dump(model: Path) -> None:
    err = run("dump", f"{model}:power", "--stage", "typed", "--arg", "x=f64[3", "--arg", "n=2")
    assert err.startswith("error: cannot read the type 'f64[3': ")


def test_missing_function_in_dump(model: Path) -> None:
    assert run("dump", f"{model}:nothere") == f"error: {model} has no function 'nothere'\n"


# -- input the IR parser refuses: Note [Limits of IR text] in ir.parser ----------------------

GRAPH_TEXT = "graph(%x : Tensor):\n  %y : Tensor = aten::neg(%x)  # caf\u00e9\n  return (%y)\n"


def run_bytes(*args: str, data: bytes) -> str:
    """`run` for an input of raw bytes, on standard input and as a file."""
    done = subprocess.run(
        [sys.executable, "-m", "autodiff", *args, "-"], input=data, capture_output=True, check=False
    )
    assert done.returncode == 1, done.stderr
    assert done.stdout == b""
    stderr = done.stderr.decode()
    assert "Traceback" not in stderr
    assert stderr.count("error:") == 1
    assert len(stderr.splitlines()) <= 12
    return stderr


def test_bytes_that_are_not_utf8_are_located(tmp_path: Path) -> None:
    data = GRAPH_TEXT.encode("latin-1")  # é is one byte, 0xe9, not UTF-8
    assert run_bytes("opt", data=data).splitlines() == [
        "<stdin>:2:37: error: <stdin> is not UTF-8 text: byte 0xe9 cannot be read",
        "      %y : Tensor = aten::neg(%x)  # caf\ufffd",
        "    " + " " * 36 + "^",
    ]
    path = tmp_path / "latin.ir"
    path.write_bytes(data)
    assert run("opt", str(path)).startswith(f"{path}:2:37: error: {path} is not UTF-8 text")


@pytest.mark.parametrize("encoding", ["utf-16", "utf-32"])
def test_utf16_and_utf32_text_is_refused_by_its_byte_order_mark(encoding: str) -> None:
    err = run_bytes("opt", data=GRAPH_TEXT.encode(encoding))
    name = encoding.upper()
    assert err == (
        f"<stdin>:1:1: error: <stdin> is {name} text (it starts with a byte order mark); IR text "
        "must be UTF-8\n"
    )


def test_a_utf8_byte_order_mark_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "bom.ir"
    path.write_bytes(b"\xef\xbb\xbf" + GRAPH_TEXT.encode())
    done = subprocess.run(
        [sys.executable, "-m", "autodiff", "opt", str(path)], capture_output=True, check=False
    )
    assert (done.returncode, done.stdout.decode()) == (0, GRAPH_TEXT.replace("  # caf\u00e9", ""))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "graph(%x : " + "(" * 3000 + "Tensor" + ")" * 3000 + "):\n  return (%x)\n",
            "a type nested more than 200 levels deep",
        ),
        (
            "graph():\n  %c : int = prim::Constant[value=" + "9" * 5000 + "]()\n  return (%c)\n",
            "an integer of 5000 decimal digits; more than 4300 must be written in hexadecimal",
        ),
        (
            "graph(%c : bool):\n"
            + "  prim::If(%c)\n  block0():\n" * 3000
            + "  -> ()\n  block1():\n  -> ()\n" * 3000
            + "  return ()\n",
            "blocks nested more than 200 levels deep",
        ),
    ],
    ids=["deep-type", "huge-int", "deep-blocks"],
)
def test_text_past_the_parser_limits_is_one_short_located_error(
    tmp_path: Path, text: str, message: str
) -> None:
    path = tmp_path / "big.ir"
    path.write_text(text)
    err = run("opt", str(path), "-p", "cse,constant-propagation")
    first, *rest = err.splitlines()
    assert first.startswith(f"{path}:")
    assert f": error: {message}" in first
    assert len(rest) == 2  # the line, cut to its part around the caret, and the caret
    assert all(len(line) < 200 for line in rest)


def test_a_shape_rule_failing_inside_a_rewrite_is_located(tmp_path: Path) -> None:
    # Found by tests/property/ir_text.py: a tuple typed where an array belongs made
    # simplify-arithmetic's rewrite fail with no location.
    statement = "%m : Double(4, 3) = aten::mul(%n, %b)"
    path = tmp_path / "bad.ir"
    path.write_text(
        "graph @delayed(%a : Double(4, 3), %b : (Double(4, 3)), %c : Double(4, 1)):\n"
        "  %size : (int, int) = prim::Constant[value=(4, 1)]()\n"
        "  %n : Double(4, 3) = aten::neg(%a)\n"
        f"  {statement}\n"
        "  %q : Double(4, 3) = aten::div(%m, %c)\n"
        "  %s : Double(4, 1) = aten::sum_to_size(%q, %size)\n"
        "  return (%s)\n"
    )
    lines = run("opt", str(path), "-p", "simplify-arithmetic").splitlines()
    assert lines[0] == (
        f"{path}:4:3: error: operand 1 must be an array, got a value of type (Double(4, 3))"
    )
    assert lines[-2:] == [f"      {statement}", "      " + "^" * len(statement)]
