"""Every example program runs as a newcomer runs it (``python examples/X.py``), exits with
status 0 and says that its gradient agrees with central finite differences."""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))
NEEDS = {"train_lbfgs.py": "scipy"}  # examples that need an optional package
GRADIENT_CHECK = re.compile(
    r"^gradient check: max abs error (\S+) vs central differences: passed$", re.MULTILINE
)


def test_there_are_examples() -> None:
    names = {path.name for path in EXAMPLES}
    assert names >= {
        "quickstart.py",
        "mlp.py",
        "rosenbrock.py",
        "rnn.py",
        "train_lbfgs.py",
        "draw_gradient.py",
    }


@pytest.fixture(scope="module")
def picture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where draw_gradient.py writes its picture (its argument)."""
    return tmp_path_factory.mktemp("picture") / "rnn_gradient.svg"


@pytest.fixture(scope="module")
def outputs(picture: Path) -> dict[str, tuple[int, str, str]]:
    """Each example's exit status, standard output and standard error. They run at once: most
    of each run is starting Python and compiling, which the cores share."""
    arguments = {"draw_gradient.py": [str(picture)]}
    runs = {
        path.name: subprocess.Popen(
            [sys.executable, str(path.relative_to(ROOT)), *arguments.get(path.name, [])],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for path in EXAMPLES
        if path.name not in NEEDS or importlib.util.find_spec(NEEDS[path.name]) is not None
    }
    results = {}
    for name, run in runs.items():
        out, err = run.communicate(timeout=300)
        results[name] = (run.returncode, out, err)
    return results


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda path: path.name)
def test_example_runs_and_its_gradient_check_passes(
    path: Path, outputs: dict[str, tuple[int, str, str]]
) -> None:
    if path.name in NEEDS:
        pytest.importorskip(NEEDS[path.name])
    status, out, err = outputs[path.name]
    assert status == 0, out + err
    checks = GRADIENT_CHECK.findall(out)
    assert len(checks) == 1, out
    assert float(checks[0]) < 1e-5


def number_after(label: str, out: str) -> float:
    """The number that follows ``label`` at the start of a line of ``out``."""
    found = re.search(rf"^{label} +([-\d.e]+)", out, re.MULTILINE)
    assert found is not None, out
    return float(found[1])


def test_training_lowers_the_loss_and_classifies(
    outputs: dict[str, tuple[int, str, str]],
) -> None:
    pytest.importorskip("scipy")
    _status, out, _err = outputs["train_lbfgs.py"]
    assert number_after("loss after:", out) < number_after("loss before:", out) / 10
    assert number_after("accuracy:", out) > 90  # percent


def test_the_picture_is_drawn(outputs: dict[str, tuple[int, str, str]], picture: Path) -> None:
    _status, out, _err = outputs["draw_gradient.py"]
    if shutil.which("dot") is None:  # Graphviz absent: the DOT text is written instead
        text = picture.with_suffix(".dot").read_text(encoding="utf-8")
        assert text.startswith("digraph"), out
        assert "cluster_df" in text
    else:
        text = picture.read_text(encoding="utf-8")
        assert "<svg" in text, out
        assert "f (forward)" in text
        assert "df (backward)" in text
