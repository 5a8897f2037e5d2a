"""Every example program runs as a newcomer runs it, and its scripted result equals the plain
one it prints next to it."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))
RESULT = re.compile(r"^\s*(plain|scripted):\s+(\S+)$", re.MULTILINE)


def test_there_are_examples() -> None:
    assert {path.name for path in EXAMPLES} >= {"mlp.py", "rosenbrock.py", "rnn.py"}


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda path: path.name)
def test_example_runs_and_agrees(path: Path) -> None:
    result = subprocess.run(
        [sys.executable, str(path.relative_to(ROOT))],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    values = RESULT.findall(result.stdout)
    assert values, result.stdout
    plain = [float(value) for kind, value in values if kind == "plain"]
    scripted = [float(value) for kind, value in values if kind == "scripted"]
    assert plain == pytest.approx(scripted, rel=1e-9)
    assert len(plain) == len(scripted) >= 1
