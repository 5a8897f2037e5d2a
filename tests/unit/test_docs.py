"""The checked-in operator reference, ``docs/operators.md``, is what `autodiff.docs` generates
from the current operator table, so it never goes stale."""

from __future__ import annotations

from pathlib import Path

from autodiff.docs import COMMAND, PAGE, main, render, spellings
from ir.ops import OPS


def test_checked_in_page_is_current() -> None:
    assert PAGE.exists(), f"{PAGE} is missing: run `{COMMAND}` and commit it"
    assert PAGE.read_text() == render(), (
        f"{PAGE} is out of date with the operator table: run `{COMMAND}` and commit the result"
    )


def test_every_operator_has_a_row_in_name_order() -> None:
    rows = [line for line in render().splitlines() if line.startswith("| `")]
    names = [row.split("`")[1] for row in rows]
    assert names == sorted(OPS)


def test_spellings_name_numpy_functions_methods_operators_and_builtins() -> None:
    spelled = spellings()
    assert "numpy.tanh" in spelled["aten::tanh"]
    assert {"numpy.sum", "ndarray.sum"} <= set(spelled["aten::sum"])
    assert {"a + b", "numpy.add"} <= set(spelled["aten::add"])
    assert "ndarray.T" in spelled["aten::transpose"]
    assert "len()" in spelled["prim::len"]
    # Kernels imported by derivative formulas are not user-facing spellings.
    assert "aten::_unreduce" not in spelled


def test_check_mode_reports_a_stale_page(tmp_path: Path) -> None:
    stale = tmp_path / "operators.md"
    stale.write_text("# Operators\n")
    assert main(["--check", "-o", str(stale)]) == 1
    assert main(["-o", str(stale)]) == 0
    assert main(["--check", "-o", str(stale)]) == 0
