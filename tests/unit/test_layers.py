"""The import arrows of design.md's layout: each package imports only the packages below it.

    ir        nothing of the project
    frontend  ir
    passes    ir
    autodiff  all of the above

Every import statement counts, a function's deferred ones included, so that no lower package
reaches up into a higher one's state however late it does it. Within autodiff, the modules that
build the reverse program are functions of a typed graph: the pipeline runs the passes around
them (shape propagation included), they run none.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("ir", "frontend", "passes", "autodiff")
MAY_IMPORT: dict[str, frozenset[str]] = {
    "ir": frozenset(),
    "frontend": frozenset({"ir"}),
    "passes": frozenset({"ir"}),
    "autodiff": frozenset({"ir", "frontend", "passes"}),
}


def project_imports(source: str, package: str) -> list[tuple[int, str]]:
    """(line, top-level package) for each import in ``source``, a module of ``package``, of
    one of `PACKAGES`; a relative import counts as one of ``package``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module or ""] if node.level == 0 else [package]
        else:
            continue
        found += [(node.lineno, name.split(".")[0]) for name in names]
    return [(line, top) for line, top in found if top in PACKAGES]


@pytest.mark.parametrize("package", PACKAGES)
def test_package_imports_only_the_packages_below_it(package: str) -> None:
    allowed = MAY_IMPORT[package] | {package}
    crossings = [
        f"{path.relative_to(ROOT)}:{line} imports {top}"
        for path in sorted((ROOT / package).rglob("*.py"))
        for line, top in project_imports(path.read_text(), package)
        if top not in allowed
    ]
    assert crossings == []


# The modules that build the reverse program, and the modules that sequence passes, which they
# leave to `autodiff.pipeline` (Note [The reverse block] in `autodiff.differentiate`).
REVERSE_BUILDERS = ("autodiff/differentiate.py", "autodiff/control_flow.py")
PIPELINE_MODULES = frozenset({"passes.registry", "passes.shape_propagation"})


def imported_modules(source: str) -> set[str]:
    """The absolute module names ``source`` imports (``from m import x`` counts as ``m``)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
    return found


@pytest.mark.parametrize("module", REVERSE_BUILDERS)
def test_the_reverse_builders_run_no_pipeline_step(module: str) -> None:
    assert imported_modules((ROOT / module).read_text()) & PIPELINE_MODULES == set()


def test_the_check_sees_deferred_and_relative_imports() -> None:
    source = "import numpy\ndef f():\n    from autodiff import grad\n    from . import graph\n"
    assert project_imports(source, "ir") == [(3, "autodiff"), (4, "ir")]


def test_autodiff_registers_its_passes_in_one_list() -> None:
    """`autodiff.reverse_passes` is the one place autodiff adds passes to the registry."""
    from autodiff import reverse_passes
    from passes.registry import PASSES

    registering = [
        f"{path.relative_to(ROOT)}:{node.lineno}"
        for path in sorted((ROOT / "autodiff").rglob("*.py"))
        if path.name != "reverse_passes.py"
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Name) and node.id in ("register_pass", "register_module_pass")
    ]
    assert registering == []
    for name, function in reverse_passes.GRAPH_PASSES:
        assert PASSES[name].function is function
        assert not PASSES[name].on_module
    for name, function in reverse_passes.MODULE_PASSES:
        assert PASSES[name].function is function
        assert PASSES[name].on_module
