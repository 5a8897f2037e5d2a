"""Replay every program the fuzzer saved (``NNN.py`` here, see `tests.property.fuzz`): the
property it once failed holds now, or, for a known bug, fails still (``XFAIL`` names it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.property.checks import PROPERTIES
from tests.property.fuzz import metadata as fuzz_metadata
from tests.property.programs import Program

HERE = Path(__file__).resolve().parent


def metadata(text: str, name: str) -> Any:
    value = fuzz_metadata(text, name)
    assert value is not None or name == "XFAIL", f"no {name} = ... in the file"
    return value


def params() -> list[Any]:
    cases = []
    for path in sorted(HERE.glob("[0-9]*.py")):
        text = path.read_text(encoding="utf-8")
        reason = metadata(text, "XFAIL")
        marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
        cases.append(pytest.param(path, id=path.stem, marks=marks))
    return cases


@pytest.mark.parametrize("path", params())
def test_regression(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    PROPERTIES[metadata(text, "PROPERTY")](Program.from_source(text))
