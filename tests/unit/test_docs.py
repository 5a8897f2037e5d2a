"""The checked-in operator reference, ``docs/operators.md``, is what `autodiff.docs` generates
from the current operator table, so it never goes stale."""

from __future__ import annotations

from pathlib import Path

import pytest

from autodiff.docs import COMMAND, ORDERS, PAGE, main, orders_cell, read_orders, render, spellings
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


def test_orders_table_is_what_the_tests_check() -> None:
    """The column "Orders tested" comes from `tests/orders_tested.txt`, derived from the
    parametrisations the tests run (Note [Orders tested] in `tests.order_coverage`)."""
    pytest.importorskip("scipy")
    from tests.order_coverage import COMMAND as ORDERS_COMMAND
    from tests.order_coverage import render_table

    assert ORDERS.read_text() == render_table(), (
        f"{ORDERS} is out of date with the tests: run `{ORDERS_COMMAND}` and commit the result"
    )


def test_orders_cells_name_what_is_checked_and_the_gaps() -> None:
    assert orders_cell("aten::tanh", {"1", "2", "c1", "c2"}) == "1, 2; complex 1, 2"
    assert orders_cell("aten::tanh", {"1", "c1"}) == "1; complex 1; **untested: 2, complex 2**"
    assert orders_cell("aten::hypot", {"1", "2", "c-refused"}) == "1, 2; complex refused"
    assert orders_cell("aten::tanh", set()) == "**untested: 1, 2, complex 1, complex 2**"
    assert orders_cell("aten::eq", set()) == "—"
    # the checked-in table: tanh is checked at every order
    assert read_orders()["aten::tanh"] == {"1", "2", "c1", "c2"}


def test_orders_option_reads_another_table(tmp_path: Path) -> None:
    table = tmp_path / "orders.txt"
    table.write_text("# nothing checked\naten::tanh 1\n")
    page = tmp_path / "operators.md"
    assert main(["--orders", str(table), "-o", str(page)]) == 0
    tanh = next(row for row in page.read_text().splitlines() if row.startswith("| `aten::tanh`"))
    assert tanh.endswith("| 1; **untested: 2, complex 1, complex 2** |")
