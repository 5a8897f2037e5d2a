"""The README's first screen works as written: its first code takes a gradient, and the code a
reader copies from the sections on gradients and pytrees runs, in order, as one program."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def python_blocks(heading: str) -> list[str]:
    """The ```python blocks of the README section under ``## heading``."""
    start = README.index(f"\n## {heading}\n")
    end = README.find("\n## ", start + 1)
    return PYTHON_BLOCK.findall(README[start : end if end != -1 else len(README)])


def test_the_first_code_takes_a_gradient() -> None:
    first = PYTHON_BLOCK.search(README)
    assert first is not None
    assert first.group(1) == python_blocks("Take a gradient")[0]
    assert "ad.grad(" in first.group(1)
    assert "print(" in first.group(1)


def test_the_start_command_runs_the_quickstart() -> None:
    install = README.index("pip install -e . && python examples/quickstart.py")
    assert install < README.index("## Gradients")


def test_readme_code_runs(tmp_path: Path) -> None:
    take, (_api, what_ran) = python_blocks("Take a gradient")[0], python_blocks("Gradients")
    (pytrees,) = python_blocks("Parameters in lists, tuples and dicts")
    check = """
assert dw.shape == w.shape and db.shape == b.shape
assert dW1.shape == (3, 4) and db2.shape == (2,)
assert vector.shape == (3 * 4 + 4 + 4 * 2 + 2,)
print("README OK")
"""
    program = tmp_path / "readme_program.py"
    program.write_text("\n".join([take, what_ran, pytrees, check]), encoding="utf-8")
    result = subprocess.run(
        [sys.executable, str(program)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.rstrip().endswith("README OK")
    assert "graph @df(" in result.stdout
