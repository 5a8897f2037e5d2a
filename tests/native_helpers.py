"""Shared by the native tier's tests: a function's f and df graphs for sample arguments, and
the inputs each takes, so that a test can run them on two tiers and compare."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import autodiff as ad
from autodiff.gradient import Gradient
from autodiff.pipeline import compile_gradient
from ir.types import type_of_value


def differentiable(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, float) or (isinstance(value, np.ndarray) and value.dtype.kind == "f")


def gradient_of(fn: Callable[..., Any], args: Sequence[Any]) -> Gradient:
    """f and df of ``fn`` for arguments like ``args``, w.r.t. every float argument."""
    types = [type_of_value(a) for a in args]
    wrt = [i for i, a in enumerate(args) if differentiable(a)]
    return compile_gradient(ad.script(fn).graph, types, wrt).gradient  # type: ignore[no-any-return]


def df_inputs(gradient: Gradient, args: Sequence[Any], outputs: Sequence[Any]) -> list[Any]:
    """What df takes after a run of f: a seed of ones for output 0, zeros for the others, then
    the captured inputs and outputs."""
    inputs: list[Any] = [
        np.ones_like(outputs[0]) if i == 0 else np.zeros_like(outputs[i])
        for i in gradient.df_input_vjps
    ]
    inputs += [args[i] for i in gradient.df_input_captured_inputs]
    inputs += [outputs[i] for i in gradient.df_input_captured_outputs]
    return inputs


def assert_same(actual: Any, expected: Any, rtol: float = 0.0, where: str = "") -> None:
    """Equal values, structure for structure (tuples, lists); floats within ``rtol``."""
    if isinstance(expected, tuple | list):
        assert isinstance(actual, tuple | list), where
        assert len(actual) == len(expected), where
        for index, (a, e) in enumerate(zip(actual, expected, strict=True)):
            assert_same(a, e, rtol, f"{where}[{index}]")
        return
    if expected is None or isinstance(expected, str):
        assert actual == expected, where
        return
    want = np.asarray(expected)
    got = np.asarray(actual)
    assert got.shape == want.shape, f"{where}: shape {got.shape} != {want.shape}"
    assert got.dtype == want.dtype, f"{where}: dtype {got.dtype} != {want.dtype}"
    if rtol and want.dtype.kind in "fc":
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * 1e-3, err_msg=where)
    else:
        np.testing.assert_array_equal(got, want, err_msg=where)
