"""Every ``Note [X] in `module``` reference names the module that defines Note [X]: a Note
moved with its code (issue 16 split modules) leaves no reference pointing at its old home."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("ir", "frontend", "passes", "autodiff", "benchmarks", "tests")
DEFINITION = re.compile(r"^\s*(?:#\s*|\"\"\")?Note \[([^\]]+)\]\s*$", re.M)
REFERENCE = re.compile(r"Note \[([^\]]+)\]\s+(?:#\s*)?in\s+`([\w.]+)`")


def sources() -> list[Path]:
    return [path for package in PACKAGES for path in (ROOT / package).rglob("*.py")]


def test_every_note_reference_names_the_module_that_defines_it() -> None:
    defined: dict[str, set[str]] = {}
    for path in sources():
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        for name in DEFINITION.findall(path.read_text(encoding="utf-8")):
            defined.setdefault(name, set()).add(module)
    stale = [
        f"{path.relative_to(ROOT)}: Note [{name}] in `{module}`, defined in {sorted(defined[name])}"
        for path in sources()
        for name, module in REFERENCE.findall(path.read_text(encoding="utf-8"))
        if name in defined and module not in defined[name]
    ]
    assert not stale, "\n".join(stale)
