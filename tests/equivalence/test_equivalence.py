"""Every corpus function gives the same result scripted as plain: values, dtypes, shapes, result
types (ndarray, NumPy scalar, Python number, tuple) and the arguments it leaves behind. Every
graph the suite produces verifies and prints back exactly after parsing."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import autodiff as ad
from ir.graph import Graph
from ir.printer import print_graph
from ir.verify import verify
from tests.equivalence.corpus import CASES, Case
from tests.helpers import check_roundtrip

# (seed, size): the first two calls share a signature, so the second one hits the cache; the
# third has other shapes.
CALLS = ((0, 3), (1, 3), (2, 5))


def params() -> list[Any]:
    marks = []
    for case in CASES:
        xfail = [pytest.mark.xfail(reason=case.xfail, strict=True)] if case.xfail else []
        marks.append(pytest.param(case, id=case.name, marks=xfail))
    return marks


def assert_same(actual: Any, expected: Any, where: str = "result") -> None:
    """``actual`` is ``expected``'s twin: same Python type, and for arrays and NumPy scalars
    the same dtype, shape and values (to a few ulps: passes may reorder nothing, but kernels
    may be called with equal operands of another provenance)."""
    assert type(actual) is type(expected), f"{where}: {type(actual)} != {type(expected)}"
    if isinstance(expected, tuple):
        assert len(actual) == len(expected), f"{where}: tuple lengths differ"
        for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
            assert_same(a, e, f"{where}[{i}]")
        return
    if isinstance(expected, np.ndarray | np.generic):
        assert actual.dtype == expected.dtype, f"{where}: dtype {actual.dtype} != {expected.dtype}"
        assert actual.shape == expected.shape, f"{where}: shape {actual.shape} != {expected.shape}"
        if expected.dtype.kind == "f":
            rtol = 1e-5 if expected.dtype.itemsize < 8 else 1e-12
            np.testing.assert_allclose(actual, expected, rtol=rtol, atol=0, err_msg=where)
        else:
            np.testing.assert_array_equal(actual, expected, err_msg=where)
        return
    assert actual == expected or (actual != actual and expected != expected), where


def check_graph(graph: Graph) -> None:
    verify(graph)
    check_roundtrip(print_graph(graph))


@pytest.mark.parametrize("case", params())
def test_scripted_equals_plain(case: Case) -> None:
    scripted = ad.script(case.fn)
    check_graph(scripted.graph)
    for call, (seed, size) in enumerate(CALLS):
        plain_args = case.make(np.random.default_rng(seed), size)
        scripted_args = case.make(np.random.default_rng(seed), size)
        expected = case.fn(*plain_args)
        actual = scripted(*scripted_args)
        assert_same(actual, expected, f"call {call}")
        assert_same(scripted_args, plain_args, f"arguments after call {call}")
        check_graph(scripted.graph_for(*scripted_args))
        if call == 1:
            assert len(scripted.cache) == 1, "a second call with the same signature recompiled"
