"""IR comments and located error messages show a file under the working directory by its path
relative to it (``examples/mlp.py:21:13``), and any other file by its absolute path."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

import autodiff as ad
from ir.parser import parse_module
from ir.printer import print_graph, print_module

MODEL = """\
import numpy as np


def loss(x):
    return np.sum(np.sin(x) * 2.0)


def broken(x):
    return np.sum(x) + undefined_name
"""


@pytest.fixture
def model(tmp_path: Path) -> ModuleType:
    path = tmp_path / "project" / "model.py"
    path.parent.mkdir()
    path.write_text(MODEL)
    spec = importlib.util.spec_from_file_location("project_model_for_paths", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def comment_paths(ir_text: str) -> set[str]:
    return {line.split("  # ")[1].split(":")[0] for line in ir_text.splitlines() if "  # " in line}


def test_ir_comments_are_relative_to_the_working_directory(
    model: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    graph = ad.script(model.loss).graph
    monkeypatch.chdir(tmp_path)
    assert comment_paths(print_graph(graph)) == {str(Path("project", "model.py"))}
    monkeypatch.chdir(tmp_path / "project")
    assert comment_paths(print_graph(graph)) == {"model.py"}


def test_ir_comments_of_files_elsewhere_are_absolute(
    model: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    graph = ad.script(model.loss).graph
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert comment_paths(print_graph(graph)) == {str(tmp_path / "project" / "model.py")}


def test_relative_comments_parse_and_print_back_the_same(
    model: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    text = print_graph(ad.script(model.loss).graph)
    assert print_module(parse_module(text).values()) == text


def test_located_errors_are_relative_to_the_working_directory(
    model: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ad.ScriptError) as info:
        ad.script(model.broken)
    first_line = str(info.value).splitlines()[0]
    assert first_line.startswith(f"{Path('project', 'model.py')}:9:24: error: ")
    # The error keeps the file's own name, for tools that open it.
    assert info.value.source_range is not None
    assert info.value.source_range.filename == str(tmp_path / "project" / "model.py")
