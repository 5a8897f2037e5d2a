"""Result dtypes exactly as NumPy 2 computes them, found by asking NumPy (NEP 50 included).

Note [Dtype probing]
Rather than re-implementing NumPy's promotion table, a shape rule calls the operator's own NumPy
function on tiny stand-in operands and reads the result's dtype. The stand-ins keep what NEP 50
looks at: a Tensor of known dtype becomes a 0-d array of that dtype (0-d arrays are *not* weak
in NumPy 2, just like n-d ones), while IR ``int``/``float``/``bool`` become the Python scalars
``1``/``1.0``/``True``, which NumPy treats as weak. So ``float32 array * 2.0`` probes as
``np.multiply(np.ones((), float32), 1.0)`` and gives float32, and ``int array / int`` gives
float64, with no table of our own to drift from NumPy's. Results are cached per operand kinds.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from ir.errors import ShapeError
from ir.types import BOOL, DTYPE_TO_NAME, FLOAT, INT, NONE, TensorType, Type

# Stand-in operand kinds: a dtype name for a tensor, or one of these for Python values.
PY_INT = "py:int"
PY_FLOAT = "py:float"
PY_BOOL = "py:bool"
PY_NONE = "py:None"

_PY_KINDS: dict[Type, str] = {INT: PY_INT, FLOAT: PY_FLOAT, BOOL: PY_BOOL, NONE: PY_NONE}
_PY_SAMPLES: dict[str, Any] = {PY_INT: 1, PY_FLOAT: 1.0, PY_BOOL: True, PY_NONE: None}


def operand_kind(ty: Type) -> str | None:
    """The stand-in kind for an operand of type ``ty``, or None when its dtype is unknown."""
    if isinstance(ty, TensorType):
        return ty.dtype
    return _PY_KINDS.get(ty)


def sample(kind: str, ndim: int = 0) -> Any:
    """A stand-in operand of ``kind`` (an array of ones with ``ndim`` dims of size 1)."""
    if kind in _PY_SAMPLES:
        return _PY_SAMPLES[kind]
    return np.ones((1,) * ndim, dtype=kind)


def probe_dtype(
    fn: Callable[..., Any], types: Sequence[Type], ndims: Sequence[int] | None = None
) -> str | None:
    """The dtype name of ``fn(*operands)`` for operands of ``types``; None when unknown.

    ``ndims`` gives the rank of each tensor stand-in, for functions that need at least 1-d
    operands (``np.matmul``). The result's dtype must be one `ir.types` knows.

    >>> probe_dtype(np.multiply, [TensorType("float32"), FLOAT])
    'float32'
    """
    kinds = []
    for ty in types:
        kind = operand_kind(ty)
        if kind is None:
            return None
        kinds.append(kind)
    ranks = tuple(ndims) if ndims is not None else (0,) * len(kinds)
    try:
        return _probe(fn, tuple(kinds), ranks)
    except (TypeError, ValueError) as exc:
        # NumPy refuses these dtypes (``bool - bool``): the same error it raises at run time.
        raise ShapeError(str(exc)) from exc


@lru_cache(maxsize=4096)
def _probe(fn: Callable[..., Any], kinds: tuple[str, ...], ndims: tuple[int, ...]) -> str | None:
    operands = [sample(kind, ndim) for kind, ndim in zip(kinds, ndims, strict=True)]
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = fn(*operands)
    name = np.asarray(result).dtype.name
    return name if name in DTYPE_TO_NAME else None


def dtype_name(dtype: Any) -> str:
    """The canonical name of a dtype given as a string or NumPy dtype (``"f4"`` -> ``float32``)."""
    return str(np.dtype(dtype).name)
