"""`autodiff dump --format dot|svg [-o FILE]`: DOT for every stage, each stage a cluster for
`--stage all`, SVG when Graphviz is installed and a clear error when it is not."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autodiff.cli import STAGES, main
from ir.dot import NEEDS_GRAPHVIZ, render_svg
from ir.errors import MissingDependencyError
from tests import picture_samples

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz `dot` not installed")


def dump(name: str, *options: str) -> list[str]:
    arg_types = [f"--arg={spec}" for spec in picture_samples.ARG_TYPES[name]]
    return ["dump", f"{picture_samples.PATH}:{name}", *arg_types, *options]


def without_graphviz(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Neither the `graphviz` package nor the `dot` program can be found."""
    monkeypatch.setitem(sys.modules, "graphviz", None)  # `import graphviz` raises ImportError
    monkeypatch.setenv("PATH", str(tmp_path))


def test_ir_is_the_default_format(capsys: pytest.CaptureFixture[str]) -> None:
    def output() -> str:
        # (each import of the file after the first names its function's graph @branchy~N)
        return re.sub(r"@branchy~\d+", "@branchy", capsys.readouterr().out)

    assert main(dump("branchy", "--stage", "all")) == 0
    default = output()
    assert main(dump("branchy", "--stage", "all", "--format", "ir")) == 0
    assert output() == default
    assert default.startswith("# ---- parsed ----\ngraph @branchy(")
    assert "\n# ---- f and df ----\ngraph @f(" in default


@pytest.mark.parametrize("stage", [stage for stage in STAGES if stage != "all"])
def test_dot_for_one_stage(stage: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(dump("looped", "--stage", stage, "--format", "dot")) == 0
    out = capsys.readouterr().out
    assert out.startswith('digraph "looped" {\n')
    assert out.endswith("}\n")
    assert 'subgraph "cluster_' in out  # the loop's body (and in df the reverse loop)
    assert "picture_samples.py:" in out


def test_dot_for_all_stages_has_a_cluster_per_stage(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(dump("mlp_loss", "--stage", "all", "--format", "dot")) == 0
    out = capsys.readouterr().out
    for stage in ("parsed", "typed", "grad", "optimized", "f", "df"):
        assert f'  subgraph "cluster_{stage}" {{' in out
    assert 'label="f (forward)"' in out
    assert 'label="df (backward)"' in out
    assert 'label="captured"' in out


def test_output_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "loss.dot"
    assert main(dump("mlp_loss", "--stage", "df", "--format", "dot", "-o", str(target))) == 0
    assert capsys.readouterr().out == ""
    assert target.read_text(encoding="utf-8").startswith('digraph "mlp_loss" {')
    missing = tmp_path / "no" / "such" / "dir.dot"
    assert main(dump("mlp_loss", "--format", "dot", "-o", str(missing))) == 1
    assert f"error: cannot write {missing}: No such file or directory" in capsys.readouterr().err


@needs_dot
def test_svg(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(dump("branchy", "--stage", "all", "--format", "svg")) == 0
    out = capsys.readouterr().out
    assert out.lstrip().startswith("<?xml")
    assert "<svg" in out
    assert out.rstrip().endswith("</svg>")


@needs_dot
def test_svg_through_the_dot_program_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "graphviz", None)
    assert "<svg" in render_svg('digraph "g" { "a" -> "b"; }')


def test_svg_without_graphviz_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    without_graphviz(monkeypatch, tmp_path)
    assert main(dump("branchy", "--stage", "f", "--format", "svg")) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        "error: --format svg needs Graphviz: install the `dot` program (apt install graphviz / "
        "brew install graphviz) or use --format dot\n"
    )
    # DOT needs no Graphviz
    assert main(dump("branchy", "--stage", "f", "--format", "dot")) == 0


def test_render_svg_without_graphviz_is_a_missing_dependency(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    without_graphviz(monkeypatch, tmp_path)
    with pytest.raises(ImportError) as raised:  # a MissingDependencyError is an ImportError
        render_svg('digraph "g" { }')
    assert isinstance(raised.value, MissingDependencyError)
    assert raised.value.message == f"rendering SVG {NEEDS_GRAPHVIZ}"


def test_format_is_checked(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(dump("branchy", "--format", "png")) == 2
    assert "argument --format: invalid choice: 'png'" in capsys.readouterr().err


@needs_dot
def test_command_line_svg_file(tmp_path: Path) -> None:
    """The installed command, as a user runs it."""
    target = tmp_path / "loss.svg"
    root = Path(__file__).resolve().parents[2]
    command = dump("mlp_loss", "--stage", "all", "--format", "svg", "-o", str(target))
    done = subprocess.run(
        [sys.executable, "-m", "autodiff", *command],
        capture_output=True,
        text=True,
        cwd=root,
        env={"PYTHONPATH": str(root), "PATH": str(Path(shutil.which("dot") or "").parent)},
    )
    assert done.returncode == 0, done.stderr
    assert "<svg" in target.read_text(encoding="utf-8")
