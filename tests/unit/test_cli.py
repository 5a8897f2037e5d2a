"""The command line, run in-process through `autodiff.cli.main`."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from autodiff.cli import main, split_input
from passes.registry import first_sentence

GRAPH = """\
graph @f(%x : Tensor, %y : Tensor):
  %a : Tensor = aten::mul(%x, %y)
  %b : Tensor = aten::mul(%x, %y)
  %dead : Tensor = aten::exp(%x)
  %c : Tensor = aten::add(%a, %b)
  return (%c)
"""

OPTIMIZED = """\
graph @f(%x : Tensor, %y : Tensor):
  %a : Tensor = aten::mul(%x, %y)
  %c : Tensor = aten::add(%a, %a)
  return (%c)
"""

MALFORMED = """\
graph @f(%x : Tensor):
  %y : Tensor = aten::neg(%z)
  return (%y)
"""


@pytest.fixture
def ir_file(tmp_path: Path) -> Path:
    path = tmp_path / "input.ir"
    path.write_text(GRAPH)
    return path


def write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "case.ir"
    path.write_text(text)
    return str(path)


def test_opt_runs_the_pipeline(ir_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["opt", str(ir_file), "-p", "cse,dce"]) == 0
    assert capsys.readouterr().out == OPTIMIZED


def test_opt_without_passes_verifies_and_prints(
    ir_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["opt", str(ir_file)]) == 0
    captured = capsys.readouterr()
    assert captured.out == GRAPH
    assert "no pass ran" in captured.err
    assert "autodiff opt --list-passes" in captured.err


def test_an_empty_pipeline_runs_no_pass_without_a_note(
    ir_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["opt", str(ir_file), "-p", ""]) == 0
    assert capsys.readouterr() == (GRAPH, "")


def test_opt_reads_standard_input(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(GRAPH))
    assert main(["opt", "-", "--passes", "cse,dce"]) == 0
    assert capsys.readouterr().out == OPTIMIZED


def test_several_graphs_are_printed_as_a_module(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    second = GRAPH.replace("@f", "@g")
    assert main(["opt", write(tmp_path, GRAPH + "\n" + second), "-p", "cse,dce"]) == 0
    assert capsys.readouterr().out == OPTIMIZED + "\n" + OPTIMIZED.replace("@f", "@g")


def test_malformed_ir_is_located_without_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, MALFORMED)
    assert main(["opt", path]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(f"{path}:2:27: error: undefined value '%z'\n")
    assert "      %y : Tensor = aten::neg(%z)\n" in captured.err
    assert "Traceback" not in captured.err


def test_traceback_on_request(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["opt", write(tmp_path, MALFORMED), "--traceback"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("Traceback (most recent call last):")
    assert "IRParseError" in err


def test_verify_diagnostics_prints_errors_to_stdout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["opt", write(tmp_path, MALFORMED), "--verify-diagnostics"]) == 0
    captured = capsys.readouterr()
    assert ":2:27: error: undefined value '%z'" in captured.out
    assert captured.err == ""


def test_verify_errors_and_no_verify(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, GRAPH.replace("aten::exp", "aten::frobnicate"))
    assert main(["opt", path]) == 1
    assert "error: unknown operator aten::frobnicate" in capsys.readouterr().err
    assert main(["opt", path, "--no-verify"]) == 0
    assert "aten::frobnicate(%x)" in capsys.readouterr().out


def test_unknown_pass(ir_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["opt", str(ir_file), "-p", "cse,nope"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: unknown pass 'nope'; known passes: ")
    assert "cse, dce" in err


def test_pass_options(ir_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["opt", str(ir_file), "-p", "constant-propagation{max-elements=4},cse,dce"]) == 0
    assert capsys.readouterr().out == OPTIMIZED
    assert main(["opt", str(ir_file), "-p", "constant-propagation{max-elements=x}"]) == 1
    assert "expects an int, got 'x'" in capsys.readouterr().err


def test_unreadable_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "missing.ir"
    assert main(["opt", str(missing)]) == 1
    assert capsys.readouterr().err == f"error: cannot read {missing}: No such file or directory\n"


def test_missing_file_argument(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["opt"]) == 1
    assert "opt needs an input file" in capsys.readouterr().err


def test_usage_errors_exit_with_status_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert main(["opt", "--no-such-flag"]) == 2
    assert "usage: autodiff" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "command"),
    [
        (["opt", "input.ir", "--pipelin", "cse"], "opt"),
        (["dump", "model.py:loss", "--stgae", "df"], "dump"),
        (["docs", "--chek"], "docs"),
    ],
)
def test_a_mistyped_flag_shows_its_commands_usage(
    argv: list[str], command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"usage: autodiff {command} [-h]")
    assert f"autodiff {command}: error: unrecognized arguments: {' '.join(argv[2:])}" in err


def test_list_passes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["opt", "--list-passes"]) == 0
    out = capsys.readouterr().out
    assert "cse: Replace each pure node" in out
    assert "    max-elements: int = 1000" in out
    # A first sentence that spans docstring lines is shown whole, and only it.
    assert (
        "accumulate-slices: Turn additions of the backwards of slices and indices of one array "
        "into one ``aten::_scatter_slices``.\n"
    ) in out
    summaries = [line.partition(": ")[2] for line in out.splitlines() if not line[0].isspace()]
    assert all(summary.endswith(".") for summary in summaries)


def test_first_sentence_joins_lines_and_passes_over_abbreviations() -> None:
    doc = "Add the reverse w.r.t. `inputs`, e.g. x and\n  y. Returns True.\n\nMore."
    assert first_sentence(doc) == "Add the reverse w.r.t. `inputs`, e.g. x and y."
    assert first_sentence("No full stop") == "No full stop"


def test_print_ir_after_all(ir_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["opt", str(ir_file), "-p", "cse,dce", "--print-ir-after-all"]) == 0
    out = capsys.readouterr().out
    assert out.index("# ---- IR after cse ----\n") < out.index("# ---- IR after dce ----\n")
    assert out.endswith("# ---- IR after dce ----\n" + OPTIMIZED + OPTIMIZED)


def test_split_input_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = GRAPH + "# -----\n" + MALFORMED
    path = write(tmp_path, text)
    assert main(["opt", path, "--split-input-file", "-p", "cse,dce", "--verify-diagnostics"]) == 0
    out = capsys.readouterr().out
    first, second = out.split("# -----\n")
    assert first == OPTIMIZED
    assert second.startswith(f"{path}:9:27: error: undefined value '%z'")


def test_split_input_keeps_file_line_numbers() -> None:
    chunks = split_input("a\n# -----\nb\nc\n  # -----  \nd")
    assert chunks == ["a\n", "\n\nb\nc\n", "\n\n\n\n\nd"]  # d is on line 6


def test_python_dash_m(ir_file: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "autodiff", "opt", str(ir_file), "-p", "cse,dce"],
        capture_output=True,
        text=True,
        check=False,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert (result.returncode, result.stdout, result.stderr) == (0, OPTIMIZED, "")
