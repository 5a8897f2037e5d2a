"""``scipy.stats.norm`` as operators: ``norm.logpdf``, ``pdf``, ``cdf``, ``logcdf``, ``sf``
and ``logsf`` of ``(x, loc=0, scale=1)``, each differentiable in all three.

User code calls the module-level distribution's methods (``norm.logpdf(x, mu, sigma)``, with
``from scipy.stats import norm`` or ``import scipy.stats as st``): a bound method, found by
equality, as the spelling ``scipy.stats.norm.logpdf`` names it (Note [SciPy spellings] in
`frontend.resolve`). Each kernel calls SciPy's method, so results are SciPy's: float64, whatever
the operands' dtype.

>>> float(stats_norm_cdf(0.0, 0.0, 1.0))
0.5
"""

from __future__ import annotations

import importlib
from typing import Any

from ir.ops.registry import Derivative, register_op
from ir.ops.scipy_special import refusing_complex
from ir.ops.scipy_stats_multivariate import MULTIVARIATE_OPS
from ir.ops.scipy_stats_univariate import UNIVARIATE_OPS
from ir.ops.shape_rules import elementwise


def _norm() -> Any:
    return importlib.import_module("scipy.stats").norm


def stats_norm_logpdf(x: Any, loc: Any, scale: Any) -> Any:
    return _norm().logpdf(x, loc, scale)


def stats_norm_pdf(x: Any, loc: Any, scale: Any) -> Any:
    return _norm().pdf(x, loc, scale)


def stats_norm_cdf(x: Any, loc: Any, scale: Any) -> Any:
    return _norm().cdf(x, loc, scale)


def stats_norm_logcdf(x: Any, loc: Any, scale: Any) -> Any:
    return _norm().logcdf(x, loc, scale)


def stats_norm_sf(x: Any, loc: Any, scale: Any) -> Any:
    return _norm().sf(x, loc, scale)


def stats_norm_logsf(x: Any, loc: Any, scale: Any) -> Any:
    return _norm().logsf(x, loc, scale)


NORM = (
    stats_norm_logpdf,
    stats_norm_pdf,
    stats_norm_cdf,
    stats_norm_logcdf,
    stats_norm_sf,
    stats_norm_logsf,
)

for _kernel in NORM:
    _method = _kernel.__name__.removeprefix("stats_norm_")
    register_op(
        f"aten::{_kernel.__name__}(Any self, Any loc=0.0, Any scale=1.0) -> Tensor",
        shape=refusing_complex(
            f"aten::{_kernel.__name__}",
            f"scipy.stats.norm.{_method}",
            elementwise(_kernel),
            "a distribution of a real variable takes real values",
        ),
        derivative=Derivative.FORMULA,
        spellings={f"scipy.stats.norm.{_method}": "x:self loc scale"},
    )(_kernel)

STATS_OPS = (
    frozenset(f"aten::{kernel.__name__}" for kernel in NORM) | UNIVARIATE_OPS | MULTIVARIATE_OPS
)
"""The operators whose kernels call ``scipy.stats``: ``norm``'s and those of
`ir.ops.scipy_stats_univariate` and `ir.ops.scipy_stats_multivariate`."""
