"""The same module's functions with ``np`` standing for ``autograd.numpy``: HIPS autograd as a
cross-check of programs written against plain NumPy, without writing them twice."""

from __future__ import annotations

from types import FunctionType, SimpleNamespace
from typing import Any

import pytest


def autograd_twin(fn: FunctionType) -> tuple[Any, FunctionType]:
    """``(autograd, fn')`` where ``fn'`` is ``fn`` with every function of its module (and
    ``np`` in it) rebound to a namespace where ``np`` is ``autograd.numpy``; skips the test
    when HIPS autograd is not installed."""
    autograd = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")
    original = fn.__globals__
    twin: dict[str, Any] = dict(original)
    twin["np"] = anp
    if "ad" in twin:  # ``ad.flatten`` in the loss: autograd's own
        flatten = pytest.importorskip("autograd.misc.flatten")
        twin["ad"] = SimpleNamespace(flatten=flatten.flatten)
    for name, value in original.items():
        if isinstance(value, FunctionType) and value.__globals__ is original:
            twin[name] = _rebound(value, twin)
    return autograd, _rebound(fn, twin)


def _rebound(fn: FunctionType, namespace: dict[str, Any]) -> FunctionType:
    copy = FunctionType(fn.__code__, namespace, fn.__name__, fn.__defaults__, fn.__closure__)
    copy.__kwdefaults__ = fn.__kwdefaults__
    return copy
