"""Graph-compiling automatic differentiation for NumPy code.

>>> import autodiff as ad
>>> @ad.script
... def loss(w, x, y):
...     return np.mean((np.tanh(x @ w) - y) ** 2)
>>> value, dw = ad.value_and_grad(loss)(w, x, y)

Seeing inside a gradient run:

>>> with ad.detect_anomaly():              # NaN or inf raises, naming the (forward) op and line
...     dw = ad.grad(loss)(w, x, y)
>>> with ad.saved_value_hooks(pack, unpack):   # transform what f keeps for df
...     dw = ad.grad(loss)(w, x, y)
>>> print(ad.profile(loss, w, x, y))       # time and bytes per node of f and df

`autodiff.cli` is the command line (``autodiff dump``, ``autodiff opt``).
"""

from __future__ import annotations

from autodiff import odeint as _odeint  # noqa: F401  (scipy.integrate.odeint in compiled code)

# Imported for its registration of the `differentiate` and `lambda-lift` passes (`autodiff opt`).
from autodiff import reverse_passes as _reverse_passes  # noqa: F401
from autodiff import solve_ivp as _solve_ivp  # noqa: F401  (and solve_ivp)
from autodiff.api import script
from autodiff.cache import (
    RecompileWarning,
    cache_size,
    recompile_limit,
    set_cache_size,
    set_recompile_limit,
)
from autodiff.callbacks import defvjp, primitive, pure_callback
from autodiff.checkpoints import Checkpointed, checkpoint, remat
from autodiff.cotangents import vjp
from autodiff.custom_vjp import CustomVjpFunction, custom_vjp
from autodiff.elementwise import elementwise_grad
from autodiff.errors import AnomalyError, DifferentiationError
from autodiff.finite_differences import GradcheckResult, gradcheck
from autodiff.forward_mode import JacfwdFunction, hvp, jacfwd, jvp, linearize
from autodiff.grad import GradFunction, differentiate, grad, value_and_grad
from autodiff.gradient import Gradient
from autodiff.instrument import detect_anomaly, saved_value_hooks
from autodiff.jacobians import JacobianFunction, hessian, jacobian
from autodiff.jacobians import jacobian as jacrev
from autodiff.opaque import ShapeDtype
from autodiff.profiler import Profile, ProfileEntry, profile, profiler
from autodiff.pytrees import ravel as flatten
from autodiff.script import ScriptFunction
from autodiff.specialize import ArgumentError
from autodiff.taps import tap
from frontend.errors import ScriptError
from ir.errors import AutodiffError, BackendError
from ir.ops.opaque import stop_gradient

__all__ = [
    "AnomalyError",
    "ArgumentError",
    "AutodiffError",
    "BackendError",
    "Checkpointed",
    "CustomVjpFunction",
    "DifferentiationError",
    "GradFunction",
    "GradcheckResult",
    "Gradient",
    "JacfwdFunction",
    "JacobianFunction",
    "Profile",
    "ProfileEntry",
    "RecompileWarning",
    "ScriptError",
    "ScriptFunction",
    "ShapeDtype",
    "cache_size",
    "checkpoint",
    "custom_vjp",
    "defvjp",
    "detect_anomaly",
    "differentiate",
    "elementwise_grad",
    "flatten",
    "grad",
    "gradcheck",
    "hessian",
    "hvp",
    "jacfwd",
    "jacobian",
    "jacrev",
    "jvp",
    "linearize",
    "primitive",
    "profile",
    "profiler",
    "pure_callback",
    "recompile_limit",
    "remat",
    "saved_value_hooks",
    "script",
    "set_cache_size",
    "set_recompile_limit",
    "stop_gradient",
    "tap",
    "value_and_grad",
    "vjp",
]
