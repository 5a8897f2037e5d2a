"""Every example program runs as a newcomer runs it, and its scripted result equals the plain
one it prints next to it."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import autodiff as ad

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


def _load(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(
        f"example_{name}", ROOT / "examples" / f"{name}.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_example_gradients_match_finite_differences() -> None:
    rng = np.random.default_rng(0)
    mlp = _load("mlp")
    y = np.eye(3)[rng.integers(0, 3, size=6)]
    mlp_args = (
        rng.standard_normal((4, 8)) * 0.5,
        np.zeros(8),
        rng.standard_normal((8, 3)) * 0.5,
        np.zeros(3),
        rng.standard_normal((6, 4)),
        y,
    )
    assert ad.gradcheck(mlp.loss, *mlp_args, rtol=1e-6).ok
    rosenbrock = _load("rosenbrock")
    assert ad.gradcheck(rosenbrock.rosenbrock, rng.standard_normal(7), rtol=1e-6).ok
    rnn = _load("rnn")
    rnn_args = (
        rng.standard_normal((5, 2, 3)),
        np.zeros((2, 4)),
        rng.standard_normal((3, 4)) * 0.5,
        rng.standard_normal((4, 4)) * 0.5,
        rng.standard_normal((4, 1)) * 0.5,
        rng.standard_normal((2, 1)),
    )
    value, grads = ad.value_and_grad(rnn.rnn_loss, argnums=(2, 3, 4))(*rnn_args)
    np.testing.assert_allclose(value, rnn.rnn_loss(*rnn_args), rtol=1e-12)
    assert ad.gradcheck(rnn.rnn_loss, *rnn_args, rtol=1e-6).ok
    assert [g.shape for g in grads] == [(3, 4), (4, 4), (4, 1)]
