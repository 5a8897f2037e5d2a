"""``ad.elementwise_grad``: HIPS autograd's gradient of an elementwise function."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np

from autodiff.grad import GradFunction, grad


def elementwise_grad(fun: Callable[..., Any], argnums: int | tuple[int, ...] = 0) -> GradFunction:
    """The gradient of ``np.sum(fun(...))``: for an elementwise ``fun``, its derivative at
    each element, shaped like the argument, as autograd's ``elementwise_grad`` (which takes
    the vjp with a cotangent of ones: the same thing). For a ``fun`` that mixes elements the
    result is still that vjp, the sum of each output's gradient, not a derivative per element.
    It is a gradient function: scripted code may call it, and it nests.

    >>> ad.elementwise_grad(np.tanh)(np.array([0.0, 1.0]))       # 1 - tanh(x)**2
    array([1.        , 0.41997434])
    >>> ad.elementwise_grad(ad.elementwise_grad(np.sin))(x)     # -sin(x)
    """
    return grad(_summed(fun, _arity(fun)), argnums=argnums)


def _arity(fun: Callable[..., Any]) -> int | None:
    """How many positional parameters ``fun`` takes, when that is fixed."""
    if isinstance(fun, np.ufunc):
        return int(fun.nin)
    try:
        parameters = inspect.signature(fun).parameters.values()
    except (TypeError, ValueError):
        return None
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in parameters):
        return None
    return sum(p.default is p.empty for p in parameters)


# A fixed number of parameters, so that a gradient of the sum is itself differentiable again
# (its graph is built for one array per parameter).
def _summed(fun: Callable[..., Any], arity: int | None) -> Callable[..., Any]:
    def summed_1(x: Any) -> Any:
        return np.sum(fun(x))

    def summed_2(x: Any, y: Any) -> Any:
        return np.sum(fun(x, y))

    def summed_3(x: Any, y: Any, z: Any) -> Any:
        return np.sum(fun(x, y, z))

    def summed(*args: Any) -> Any:
        return np.sum(fun(*args))

    fixed: dict[int | None, Callable[..., Any]] = {1: summed_1, 2: summed_2, 3: summed_3}
    return fixed.get(arity, summed)
