"""Pytest collection of IR-text tests: each ``# RUN:`` line of a file under tests/filecheck/ is a
test item, run as lit runs it, and each .ir file there also gets a print/parse round-trip item.

A RUN line is a bash command (with ``pipefail``; a trailing ``\\`` continues it on the next RUN
line); ``%s`` stands for the file's path relative to the repository root, which is the working
directory. The interpreter's own bin directory comes first on PATH, so ``autodiff`` and
``filecheck`` are the ones installed next to it (``pip install -e '.[test]'``).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
FILECHECK_DIR = ROOT / "tests" / "filecheck"
RUN_LINE = re.compile(r"^\s*#\s*RUN:\s?(.*?)\s*$")

# The suite verifies the graph after every pass the compiler runs, where production verifies once
# per pipeline (Note [Verify between passes] in passes/registry.py); RUN lines inherit it.
os.environ.setdefault("AUTODIFF_VERIFY", "each")
# No background numba compiles in tests unless a test asks (Note [Tiering] in autodiff/tiering.py):
# they would make the suite slower and its timings depend on a thread. tests/native/ runs the
# corpora on the native tier on purpose.
os.environ.setdefault("AUTODIFF_NATIVE", "off")
# numba compiles the native tier's regions without LLVM's optimisations in tests: half the
# compile time, the same results (no fastmath either way: Note [Native numerics]).
os.environ.setdefault("NUMBA_OPT", "0")


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if FILECHECK_DIR not in file_path.parents:
        return None
    if file_path.suffix == ".ir" or (
        file_path.suffix == ".py" and "RUN:" in file_path.read_text(encoding="utf-8")
    ):
        return FileCheckFile.from_parent(parent, path=file_path)
    return None


def run_lines(text: str) -> list[tuple[int, str]]:
    """The commands of ``text``'s RUN lines with the line number each starts on."""
    commands: list[tuple[int, str]] = []
    pending: tuple[int, str] | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        match = RUN_LINE.match(line)
        if match is None:
            continue
        start, so_far = pending if pending is not None else (number, "")
        command = so_far + match.group(1)
        if command.endswith("\\"):
            pending = (start, command[:-1] + " ")
        else:
            commands.append((start, command))
            pending = None
    if pending is not None:
        commands.append(pending)
    return commands


class FileCheckFile(pytest.File):
    def collect(self) -> Iterator[pytest.Item]:
        text = self.path.read_text(encoding="utf-8")
        relative = self.path.relative_to(ROOT).as_posix()
        for line, command in run_lines(text):
            yield RunItem.from_parent(
                self, name=f"RUN:{line}", command=command.replace("%s", relative)
            )
        if self.path.suffix == ".ir":
            yield RoundTripItem.from_parent(self, name="roundtrip")


class RunItem(pytest.Item):
    def __init__(self, *, command: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.command = command

    def runtest(self) -> None:
        env = dict(os.environ)
        env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
        result = subprocess.run(
            ["bash", "-o", "pipefail", "-c", self.command],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        if result.returncode != 0:
            pytest.fail(
                f"$ {self.command}\nexit status {result.returncode}\n"
                f"--- stdout ---\n{result.stdout}--- stderr ---\n{result.stderr}",
                pytrace=False,
            )

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"{self.name}: {self.command}"


class RoundTripItem(pytest.Item):
    """print(parse(chunk)) parses back to a graph that prints the same, for every chunk."""

    def runtest(self) -> None:
        from autodiff.cli import split_input
        from ir.errors import IRParseError
        from ir.parser import parse_module
        from ir.printer import print_module

        text = self.path.read_text(encoding="utf-8")
        filename = self.path.relative_to(ROOT).as_posix()
        expects_errors = "--verify-diagnostics" in text
        for chunk in split_input(text):
            try:
                module = parse_module(chunk, filename)
            except IRParseError:
                if expects_errors:
                    continue
                raise
            printed = print_module(module.values())
            reprinted = print_module(parse_module(printed, filename).values())
            assert reprinted == printed

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"{self.name}: {self.path.name}"
