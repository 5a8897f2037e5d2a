"""Running the equivalence and gradient corpora on a backend, against NumPy: each case gives
NumPy's result (values and gradients to rounding) or a located refusal, never a wrong result;
`outcome` says which."""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

import autodiff as ad
from ir.errors import AutodiffError

OK = "ok"


def convert_floats(args: tuple[Any, ...], asarray: Callable[[np.ndarray], Any]) -> list[Any]:
    """The floating-point arrays (not 0-d) among ``args`` as the backend's arrays."""
    return [
        asarray(a) if isinstance(a, np.ndarray) and a.dtype.kind == "f" and a.ndim else a
        for a in args
    ]


def convert_arrays(args: tuple[Any, ...], asarray: Callable[[np.ndarray], Any]) -> list[Any]:
    """Every NumPy array among ``args`` as the backend's arrays: what a user of a backend
    that does not mix with NumPy (a strict Array API namespace) converts, integer index
    arrays and 0-d arrays included."""
    return [asarray(a) if isinstance(a, np.ndarray) else a for a in args]


def _flat(value: Any) -> list[Any]:
    if isinstance(value, tuple | list):
        return [leaf for item in value for leaf in _flat(item)]
    return [value]


def _same(got: Any, want: Any, to_numpy: Callable[[Any], np.ndarray]) -> bool:
    got, want = _flat(got), _flat(want)
    if len(got) != len(want):
        return False
    for g, w in zip(got, want, strict=True):
        g = to_numpy(g) if hasattr(g, "shape") else np.asarray(g)
        rtol = 1e-5 if np.result_type(w) == np.float32 else 1e-9
        if np.shape(g) != np.shape(w) or not np.allclose(g, w, rtol=rtol, atol=1e-12):
            return False
    return True


def outcome(
    run: Callable[[list[Any]], Any],
    expected: Any,
    args: list[Any],
    to_numpy: Callable[[Any], np.ndarray],
) -> str:
    """OK when ``run(args)`` gives ``expected``; the refusal's first line when it raises a
    located AutodiffError; raises AssertionError for a wrong result or an unlocated error."""
    refusal: AutodiffError | None = None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            got = run(args)
    except AutodiffError as error:
        refusal = error
    if refusal is not None:
        # a node's refusal is located; an argument's names the arguments
        located = refusal.source_range is not None
        assert located or refusal.message.startswith("arguments mix"), str(refusal)
        return refusal.message.strip().splitlines()[0]
    assert _same(got, expected, to_numpy), f"a wrong result: {got!r} != {expected!r}"
    return OK


def plain_call(case: Any, args: tuple[Any, ...]) -> tuple[Any, Callable[[list[Any]], Any]]:
    """NumPy's result of the plain function, and the compiled call to run on a backend."""
    expected = case.fn(*copy.deepcopy(args))
    return expected, lambda converted: ad.script(case.fn)(*converted)


def gradient_call(case: Any, args: tuple[Any, ...]) -> tuple[Any, Callable[[list[Any]], Any]]:
    """NumPy's value and gradients w.r.t. every float array, and the same call to run."""
    wrt = tuple(
        i
        for i, a in enumerate(args)
        if isinstance(a, np.ndarray) and a.dtype.kind == "f" and a.ndim
    )
    function = ad.value_and_grad(case.fn, argnums=wrt)
    return function(*copy.deepcopy(args)), lambda converted: function(*converted)
