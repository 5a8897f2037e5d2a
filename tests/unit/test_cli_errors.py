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
    f = lambda v: v * 2.0
    return f(x)


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
        f"{model}:5:9: error: lambda is not supported\n"
        "        f = lambda v: v * 2.0\n"
        "            ^^^^^^^^^^^^^^^^^\n"
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
