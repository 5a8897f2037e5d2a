"""`autodiff dump FILE.py:FUNC`: --arg types, importing the file, the stages, and errors."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from autodiff.cli import CommandError, main, parse_arg_type, parse_arg_types, split_target
from ir.parser import parse_graph
from ir.printer import print_graph
from ir.types import BOOL, FLOAT, INT, TensorType

ROOT = Path(__file__).resolve().parents[2]

MODEL = """\
import numpy as np


def helper(a):
    return a * 2.0


def f(x, w, n: int):
    y = helper(x @ w)
    return y * n
"""


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("f64[3,4]", TensorType("float64", (3, 4))),
        ("f32[5]", TensorType("float32", (5,))),
        ("f64[]", TensorType("float64", ())),
        ("f16[ 2, 1 ]", TensorType("float16", (2, 1))),
        ("i32[7]", TensorType("int32", (7,))),
        ("i64[2,2,2]", TensorType("int64", (2, 2, 2))),
        ("bool[3]", TensorType("bool", (3,))),
        ("5", INT),
        ("-2", INT),
        ("0.1", FLOAT),
        ("1e-3", FLOAT),
        ("true", BOOL),
        ("False", BOOL),
    ],
)
def test_arg_types(spec: str, expected: object) -> None:
    assert parse_arg_type(spec) == expected


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("c64[3]", "unknown dtype 'c64' in 'c64[3]'; dtypes: f16, f32, f64"),
        ("f64[3,]", "cannot read the type 'f64[3,]'"),
        ("f64(3)", "cannot read the type 'f64(3)'"),
        ("hello", "expected a dtype and shape (f64[3,4], f32[] for 0-d), an int (5)"),
    ],
)
def test_bad_arg_types(spec: str, message: str) -> None:
    with pytest.raises(CommandError) as info:
        parse_arg_type(spec)
    assert message in info.value.message


def test_arg_list() -> None:
    assert parse_arg_types(["x=f64[3]", " n = 5"]) == {"x": TensorType("float64", (3,)), "n": INT}
    with pytest.raises(CommandError, match="parameter 'x' twice"):
        parse_arg_types(["x=f64[3]", "x=f32[3]"])
    with pytest.raises(CommandError, match=r"--arg 'f64\[3\]' is not NAME=TYPE"):
        parse_arg_types(["f64[3]"])


def test_split_target() -> None:
    assert split_target("examples/mlp.py:loss") == ("examples/mlp.py", "loss")
    assert split_target("C:/a/b.py:f") == ("C:/a/b.py", "f")
    for bad in ("examples/mlp.py", ":f", "a.py:", "a.py:1f"):
        with pytest.raises(CommandError, match=r"expected FILE\.py:FUNC"):
            split_target(bad)


@pytest.fixture
def model(tmp_path: Path) -> Path:
    path = tmp_path / "model.py"
    path.write_text(MODEL)
    return path


def test_parsed_stage_inlines_helpers(model: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["dump", f"{model}:f"]) == 0
    out = capsys.readouterr().out
    # Each test imports the file afresh; a graph is named f~N while an earlier f is alive.
    assert re.match(r"graph @f(~\d+)?\(%x : Tensor, %w : Tensor, %n : int\):", out)
    assert "aten::matmul" in out
    assert "prim::CallFunction" not in out
    assert print_graph(parse_graph(out)) == out


def test_typed_stage(model: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["dump", f"{model}:f", "--stage", "typed"]
    assert main([*argv, "--arg", "x=f32[3,4]", "--arg", "w=f32[4,2]", "--arg", "n=2"]) == 0
    out = capsys.readouterr().out
    assert re.match(r"graph @f(~\d+)?\(%x : Float\(3, 4\), %w : Float\(4, 2\), %n : int\):", out)
    assert "Float(3, 2) = aten::matmul(%x, %w)" in out
    assert print_graph(parse_graph(out)) == out


def test_typed_stage_needs_every_parameter(model: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["dump", f"{model}:f", "--stage", "typed", "--arg", "x=f64[3,4]"]) == 1
    err = capsys.readouterr().err
    assert "error: this stage needs a type for every parameter of f(); missing: 'w', 'n'" in err


def test_unknown_parameter(model: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["dump", f"{model}:f", "--stage", "typed", "--arg", "z=f64[3]"]
    assert main(argv) == 1
    assert "error: f() has no parameter 'z'; its parameters: x, w, n" in capsys.readouterr().err


def test_unknown_stage(model: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["dump", f"{model}:f", "--stage", "nonsense"]) == 2
    assert "invalid choice: 'nonsense'" in capsys.readouterr().err


def test_missing_file_and_function(model: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["dump", f"{model.parent / 'none.py'}:f"]) == 1
    assert "none.py: no such file" in capsys.readouterr().err
    assert main(["dump", f"{model}:g"]) == 1
    assert f"error: {model} has no function 'g'" in capsys.readouterr().err


def test_import_failure(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "broken.py"
    path.write_text("import numpy as np\nraise RuntimeError('boom')\n")
    assert main(["dump", f"{path}:f"]) == 1
    err = capsys.readouterr().err
    assert f"error: cannot import {path}: RuntimeError: boom" in err
    assert "Traceback" not in err
    assert main(["dump", f"{path}:f", "--traceback"]) == 1
    assert "Traceback" in capsys.readouterr().err


def test_file_imports_its_neighbours(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "neighbour_helpers.py").write_text("def double(a):\n    return a * 2.0\n")
    path = tmp_path / "user.py"
    path.write_text("from neighbour_helpers import double\n\n\ndef f(x):\n    return double(x)\n")
    assert main(["dump", f"{path}:f"]) == 0
    assert "aten::mul" in capsys.readouterr().out
    assert str(tmp_path) not in sys.path


def test_script_error_is_located(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.py"
    path.write_text(
        textwrap.dedent(
            """\
            import numpy as np


            def f(x):
                return {v for v in x}
            """
        )
    )
    assert main(["dump", f"{path}:f"]) == 1
    err = capsys.readouterr().err
    assert f"{path}:5:12: error: set comprehensions are not supported" in err
    assert "        return {v for v in x}\n               ^" in err
    assert "Traceback" not in err


def test_shape_error_in_typed_stage(model: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["dump", f"{model}:f", "--stage", "typed", "--arg", "x=f64[3,4]", "--arg", "w=f64[5,2]"]
    assert main([*argv, "--arg", "n=1"]) == 1
    err = capsys.readouterr().err
    assert f"{model}:9:16: error:" in err
    assert "Traceback" not in err


def test_already_scripted_function(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "scripted.py"
    path.write_text(
        "import numpy as np\nimport autodiff as ad\n\n\n@ad.script\ndef g(x):\n    return -x\n"
    )
    assert main(["dump", f"{path}:g"]) == 0
    assert "aten::neg(%x)" in capsys.readouterr().out


def test_python_dash_m_and_console_script() -> None:
    target = "examples/rosenbrock.py:rosenbrock"
    for command in (
        [sys.executable, "-m", "autodiff"],
        [str(Path(sys.executable).parent / "autodiff")],
    ):
        result = subprocess.run(
            [*command, "dump", target, "--stage", "typed", "--arg", "x=f64[5]"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
        )
        assert result.returncode == 0, result.stderr
        assert result.stdout.startswith("graph @rosenbrock(%x : Double(5)):")
