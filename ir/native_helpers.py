"""The native tier's helper functions: plain Python that the spellings of `ir.native_kernels`
call by name (``_matmul_2_2(a, b)``) and that `ir.native_codegen` wraps in ``numba.njit``
when it compiles a region. This module imports no numba.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["HELPERS", "matmul_1_1", "matmul_1_2", "matmul_2_1", "matmul_2_2", "outer", "tape_write"]


def tape_write(tape: Any, index: int, value: Any) -> Any:
    tape[index] = value
    return tape


# Matrix products as loops: numba's np.dot and np.outer call BLAS through bindings that take
# seconds to compile, and for the small operands of this tier a loop is as fast. Each sum runs
# over k in order from 0, as a plain loop does (not BLAS's order:
# Note [Native numerics] in `ir.native_kernels`).


def matmul_2_2(a: Any, b: Any) -> Any:
    rows, inner = a.shape
    cols = b.shape[1]
    out = np.zeros((rows, cols), a.dtype)
    for i in range(rows):
        for k in range(inner):
            scale = a[i, k]
            for j in range(cols):
                out[i, j] += scale * b[k, j]
    return out


def matmul_2_1(a: Any, b: Any) -> Any:
    rows, inner = a.shape
    out = np.empty(rows, a.dtype)
    for i in range(rows):
        total = 0.0
        for k in range(inner):
            total += a[i, k] * b[k]
        out[i] = total
    return out


def matmul_1_2(a: Any, b: Any) -> Any:
    inner, cols = b.shape
    out = np.zeros(cols, b.dtype)
    for k in range(inner):
        scale = a[k]
        for j in range(cols):
            out[j] += scale * b[k, j]
    return out


def matmul_1_1(a: Any, b: Any) -> Any:
    total = 0.0
    for k in range(a.shape[0]):
        total += a[k] * b[k]
    return total


def outer(a: Any, b: Any) -> Any:
    out = np.empty((a.shape[0], b.shape[0]), a.dtype)
    for i in range(a.shape[0]):
        for j in range(b.shape[0]):
            out[i, j] = a[i] * b[j]
    return out


HELPERS: dict[str, Callable[..., Any]] = {
    "_tape_write": tape_write,
    "_matmul_2_2": matmul_2_2,
    "_matmul_2_1": matmul_2_1,
    "_matmul_1_2": matmul_1_2,
    "_matmul_1_1": matmul_1_1,
    "_outer": outer,
}
"""Functions the spellings call by name; the compiler binds ``numba.njit`` of each."""
