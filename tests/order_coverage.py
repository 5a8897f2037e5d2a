"""Which orders of each operator's derivative the tests check: the table ``tests/orders_tested.txt``
that `autodiff.docs` reads for the column "Orders tested" of ``docs/operators.md``.

Note [Orders tested]
The column must say what the test suite checks, not what someone claims. So it is derived from
the very parametrisations the tests run, never written by hand:

- ``1``: `tests/unit/test_formulas.py`, every sample of `tests/formula_samples.py` and
  `tests/scipy_samples.py` that is not an expected failure (first derivative, one node);
- ``2``: `tests/unit/test_second_order.py`, the same samples one order up;
- ``c1`` (complex, first order): `tests/unit/test_complex_gradients.py` (the samples made
  complex, the Hermitian checks, and the operators in the graphs of its user functions) and the
  ordering operators of `tests/unit/test_complex_operators.py`; a sample written with complex
  operands counts for ``c1`` in `test_formulas` and for ``c2`` in `test_second_order`;
- ``c2`` (complex, second order): `tests/unit/test_complex_operators.py`'s second order, and
  the operators in the graphs of the second-derivative user functions of
  `tests/unit/test_complex_gradients.py`;
- ``c-refused``: the operators whose complex operands a test checks are refused (NumPy's
  refusals in `tests/unit/test_complex_operators.py`, SciPy's and ours in
  `tests/unit/test_scipy_complex.py`).

The installed package must not import ``tests``: this module, which may, writes the table as
text, and the generator reads the text. `tests/unit/test_docs.py` recomputes the table and fails
when the checked-in one differs, so a new operator (or sample, or left-out entry) shows up as
soon as its tests do: ``python -m tests.order_coverage`` rewrites the table and the page.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

import autodiff as ad
from autodiff.derivatives import ALIASES
from autodiff.docs import ORDER_KINDS, ORDERS
from autodiff.docs import main as write_page
from ir.graph import Graph
from ir.ops import OPS, Derivative
from tests.formula_samples import Operands, Sample

COMMAND = "python -m tests.order_coverage"
Checks = dict[str, set[str]]


def _complex_in(operands: Operands, wrt: tuple[int, ...]) -> bool:
    def holds_complex(value: Any) -> bool:
        if isinstance(value, tuple | list):
            return any(holds_complex(v) for v in value)
        return isinstance(value, np.ndarray | complex) and np.iscomplexobj(value)

    return any(holds_complex(operands[position]) for position in wrt)


def _run_params(params: Iterable[Any]) -> Iterable[tuple[str, Sample]]:
    """(operator, sample) of each pytest param that is expected to pass."""
    for param in params:
        if any(mark.name == "xfail" for mark in param.marks):
            continue
        op, sample = param.values[:2]
        yield op, sample


def _per_sample(params: Iterable[Any], order: str, checks: Checks) -> None:
    """Each sample as written: real operands count for ``order``, complex ones for ``c`` and
    ``order`` (``c2``)."""
    for op, sample in _run_params(params):
        operands = sample.make(np.random.default_rng(0))
        kind = f"c{order}" if _complex_in(operands, sample.wrt) else order
        checks.setdefault(op, set()).add(kind)


def _all(params: Iterable[Any], kind: str, checks: Checks) -> None:
    for op, _ in _run_params(params):
        checks.setdefault(op, set()).add(kind)


def _differentiable_ops_of(fn: Callable[..., Any], args: Sequence[Any]) -> set[str]:
    """The operators with a formula in the graph a call of ``fn`` runs."""
    graph: Graph = ad.script(fn).graph_for(*args)
    return {
        node.kind
        for node in graph.all_nodes()
        if node.kind in OPS and OPS[node.kind].derivative is Derivative.FORMULA
    }


def _user_functions(
    functions: Iterable[tuple[Callable[..., Any], Callable[..., Sequence[Any]]]],
    kind: str,
    checks: Checks,
) -> None:
    for fn, make in functions:
        for op in _differentiable_ops_of(fn, make(np.random.default_rng(0))):
            checks.setdefault(op, set()).add(kind)


def orders_tested() -> Checks:
    """operator -> the kinds of check the tests make of it (`ORDER_KINDS`)."""
    from tests.unit import (
        test_complex_gradients,
        test_complex_operators,
        test_formulas,
        test_scipy_complex,
        test_second_order,
    )

    checks: Checks = {}
    _per_sample(test_formulas._params(sorted(test_formulas.SAMPLES)), "1", checks)
    _per_sample(test_second_order.second_order_params(), "2", checks)
    complex_gradients = test_complex_gradients
    for first_only in (False, True):
        _all(complex_gradients._complex_params(first_only=first_only), "c1", checks)
    for op, _ in complex_gradients.HERMITIAN_CHECKS:
        checks.setdefault(op, set()).add("c1")
    _user_functions(complex_gradients.USER_FUNCTIONS, "c1", checks)
    second_complex = [
        (fn, lambda r: (complex_gradients._complex(r, 4),))
        for fn in complex_gradients.SECOND_ORDER_COMPLEX
    ]
    _user_functions(second_complex, "c2", checks)
    operators = test_complex_operators
    _all(operators._samples(operators.ORDERED, ordered=True), "c1", checks)
    _all(operators._second_order_params(), "c2", checks)
    for op in (*operators.NUMPY_REFUSES, *test_scipy_complex.REFUSED):
        checks.setdefault(op, set()).add("c-refused")
    # An operator differentiated by another's formula (``prim::add`` by ``aten::add``'s) is
    # checked where that formula is.
    for op, target in ALIASES.items():
        if op not in checks and target in checks:
            checks[op] = set(checks[target])
    return checks


def render_table() -> str:
    """The text of ``tests/orders_tested.txt``: one line per operator checked, sorted."""
    lines = [
        "# The orders at which the tests check each operator's derivative (Note [Orders tested]",
        f"# in tests/order_coverage.py). Generated by `{COMMAND}`: do not edit by hand.",
    ]
    for op, kinds in sorted(orders_tested().items()):
        lines.append(" ".join([op, *(kind for kind in ORDER_KINDS if kind in kinds)]))
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=COMMAND, description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 when the table or the page is not what would be generated",
    )
    args = parser.parse_args(argv)
    table = render_table()
    if args.check:
        if not ORDERS.exists() or ORDERS.read_text() != table:
            print(f"{ORDERS} is out of date: run `{COMMAND}`", file=sys.stderr)
            return 1
        return write_page(["--check"])
    ORDERS.write_text(table)
    return write_page([])


if __name__ == "__main__":
    sys.exit(main())
