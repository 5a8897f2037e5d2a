"""Graph-compiling automatic differentiation for NumPy code.

>>> import autodiff as ad
>>> @ad.script
... def loss(w, x, y):
...     return np.mean((np.tanh(x @ w) - y) ** 2)
>>> value, dw = ad.value_and_grad(loss)(w, x, y)

`autodiff.cli` is the command line (``autodiff dump``, ``autodiff opt``).
"""

from __future__ import annotations

# Imported for its registration of the `lambda-lift` module pass with `autodiff opt`.
from autodiff import lambda_lift as _lambda_lift  # noqa: F401
from autodiff.api import script
from autodiff.errors import DifferentiationError
from autodiff.grad import (
    GradcheckResult,
    GradFunction,
    differentiate,
    grad,
    gradcheck,
    hessian,
    jacobian,
    value_and_grad,
    vjp,
)
from autodiff.gradient import Gradient
from autodiff.script import ScriptFunction
from autodiff.specialize import ArgumentError
from autodiff.taps import tap
from frontend.errors import ScriptError
from ir.errors import AutodiffError

__all__ = [
    "ArgumentError",
    "AutodiffError",
    "DifferentiationError",
    "GradFunction",
    "GradcheckResult",
    "Gradient",
    "ScriptError",
    "ScriptFunction",
    "differentiate",
    "grad",
    "gradcheck",
    "hessian",
    "jacobian",
    "script",
    "tap",
    "value_and_grad",
    "vjp",
]
