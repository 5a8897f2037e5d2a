"""``scipy.stats.t``, ``gamma``, ``beta``, ``chi2`` and ``poisson`` as operators: the methods
``logpdf``, ``pdf``, ``cdf``, ``logcdf``, ``sf`` and ``logsf`` (``logpmf`` and ``pmf`` for
``poisson``) of the module-level distributions, called as SciPy's are (``t.logpdf(x, df, loc,
scale)``, ``gamma.cdf(x, a, scale=theta)``, ``poisson.logpmf(k, mu)``).

They are found as `ir.ops.scipy_stats` finds ``norm``'s methods (Note [SciPy spellings] in
`frontend.resolve`); each kernel calls SciPy's method, so results are SciPy's: float64, whatever
the operands' dtype. The densities are differentiable in every parameter. The distribution
functions are differentiable in ``x``, ``loc`` and ``scale``, but not in a shape parameter:
the derivative of the regularized incomplete gamma or beta function in its parameter has no
closed form, and the operators refuse it (Note [Refused operands] in `ir.ops.registry`).
``poisson`` is differentiable in ``mu``; its ``k`` is a count and ``loc`` shifts it by whole
numbers, so both are refused.

>>> float(stats_gamma_cdf(1.0, 1.0, 0.0, 1.0))  # 1 - exp(-1)
0.6321205588285577
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from ir.ops.registry import Derivative, register_op
from ir.ops.scipy_special import REAL_VARIABLE, refusing_complex
from ir.ops.shape_rules import elementwise


def _stats() -> Any:
    return importlib.import_module("scipy.stats")


# ---- kernels: SciPy's methods, in SciPy's argument order ---------------------------------------


def stats_t_logpdf(x: Any, df: Any, loc: Any, scale: Any) -> Any:
    return _stats().t.logpdf(x, df, loc, scale)


def stats_t_pdf(x: Any, df: Any, loc: Any, scale: Any) -> Any:
    return _stats().t.pdf(x, df, loc, scale)


def stats_t_cdf(x: Any, df: Any, loc: Any, scale: Any) -> Any:
    return _stats().t.cdf(x, df, loc, scale)


def stats_t_logcdf(x: Any, df: Any, loc: Any, scale: Any) -> Any:
    return _stats().t.logcdf(x, df, loc, scale)


def stats_t_sf(x: Any, df: Any, loc: Any, scale: Any) -> Any:
    return _stats().t.sf(x, df, loc, scale)


def stats_t_logsf(x: Any, df: Any, loc: Any, scale: Any) -> Any:
    return _stats().t.logsf(x, df, loc, scale)


def stats_gamma_logpdf(x: Any, a: Any, loc: Any, scale: Any) -> Any:
    return _stats().gamma.logpdf(x, a, loc, scale)


def stats_gamma_pdf(x: Any, a: Any, loc: Any, scale: Any) -> Any:
    return _stats().gamma.pdf(x, a, loc, scale)


def stats_gamma_cdf(x: Any, a: Any, loc: Any, scale: Any) -> Any:
    return _stats().gamma.cdf(x, a, loc, scale)


def stats_gamma_logcdf(x: Any, a: Any, loc: Any, scale: Any) -> Any:
    return _stats().gamma.logcdf(x, a, loc, scale)


def stats_gamma_sf(x: Any, a: Any, loc: Any, scale: Any) -> Any:
    return _stats().gamma.sf(x, a, loc, scale)


def stats_gamma_logsf(x: Any, a: Any, loc: Any, scale: Any) -> Any:
    return _stats().gamma.logsf(x, a, loc, scale)


def stats_beta_logpdf(x: Any, a: Any, b: Any, loc: Any, scale: Any) -> Any:
    return _stats().beta.logpdf(x, a, b, loc, scale)


def stats_beta_pdf(x: Any, a: Any, b: Any, loc: Any, scale: Any) -> Any:
    return _stats().beta.pdf(x, a, b, loc, scale)


def stats_beta_cdf(x: Any, a: Any, b: Any, loc: Any, scale: Any) -> Any:
    return _stats().beta.cdf(x, a, b, loc, scale)


def stats_beta_logcdf(x: Any, a: Any, b: Any, loc: Any, scale: Any) -> Any:
    return _stats().beta.logcdf(x, a, b, loc, scale)


def stats_beta_sf(x: Any, a: Any, b: Any, loc: Any, scale: Any) -> Any:
    return _stats().beta.sf(x, a, b, loc, scale)


def stats_beta_logsf(x: Any, a: Any, b: Any, loc: Any, scale: Any) -> Any:
    return _stats().beta.logsf(x, a, b, loc, scale)


def stats_chi2_logpdf(x: Any, df: Any, loc: Any, scale: Any) -> Any:
    return _stats().chi2.logpdf(x, df, loc, scale)


def stats_chi2_pdf(x: Any, df: Any, loc: Any, scale: Any) -> Any:
    return _stats().chi2.pdf(x, df, loc, scale)


def stats_chi2_cdf(x: Any, df: Any, loc: Any, scale: Any) -> Any:
    return _stats().chi2.cdf(x, df, loc, scale)


def stats_chi2_logcdf(x: Any, df: Any, loc: Any, scale: Any) -> Any:
    return _stats().chi2.logcdf(x, df, loc, scale)


def stats_chi2_sf(x: Any, df: Any, loc: Any, scale: Any) -> Any:
    return _stats().chi2.sf(x, df, loc, scale)


def stats_chi2_logsf(x: Any, df: Any, loc: Any, scale: Any) -> Any:
    return _stats().chi2.logsf(x, df, loc, scale)


def stats_poisson_logpmf(k: Any, mu: Any, loc: Any) -> Any:
    return _stats().poisson.logpmf(k, mu, loc)


def stats_poisson_pmf(k: Any, mu: Any, loc: Any) -> Any:
    return _stats().poisson.pmf(k, mu, loc)


def stats_poisson_cdf(k: Any, mu: Any, loc: Any) -> Any:
    return _stats().poisson.cdf(k, mu, loc)


def stats_poisson_logcdf(k: Any, mu: Any, loc: Any) -> Any:
    return _stats().poisson.logcdf(k, mu, loc)


def stats_poisson_sf(k: Any, mu: Any, loc: Any) -> Any:
    return _stats().poisson.sf(k, mu, loc)


def stats_poisson_logsf(k: Any, mu: Any, loc: Any) -> Any:
    return _stats().poisson.logsf(k, mu, loc)


# ---- records ------------------------------------------------------------------------------------

METHODS = ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf")
DISTRIBUTION_FUNCTIONS = ("cdf", "logcdf", "sf", "logsf")

# distribution -> its shape parameters (between x and loc), and the special function whose
# derivative in its parameter a distribution function's shape-parameter gradient would need
CONTINUOUS: dict[str, tuple[tuple[str, ...], str]] = {
    "t": (("df",), "the regularized incomplete beta function"),
    "gamma": (("a",), "the regularized incomplete gamma function"),
    "beta": (("a", "b"), "the regularized incomplete beta function"),
    "chi2": (("df",), "the regularized incomplete gamma function"),
}
POISSON_METHODS = ("logpmf", "pmf", "cdf", "logcdf", "sf", "logsf")


def _kernel(distribution: str, method: str) -> Callable[..., Any]:
    kernel: Callable[..., Any] = globals()[f"stats_{distribution}_{method}"]
    return kernel


def _shape_refusal(distribution: str, method: str, name: str, special: str) -> str:
    return (
        f"scipy.stats.{distribution}.{method} is not differentiable in its shape parameter "
        f"{name}: the derivative of {special} in its parameter has no closed form and is not "
        "implemented (only x, loc and scale are differentiable); stop_gradient the parameter, "
        f"or differentiate {distribution}.logpdf"
    )


for _distribution, (_shapes, _special) in CONTINUOUS.items():
    _parameters = " ".join(_shapes)
    _schema_shapes = ", ".join(f"Any {name}" for name in _shapes)
    for _method in METHODS:
        _refused = (
            {name: _shape_refusal(_distribution, _method, name, _special) for name in _shapes}
            if _method in DISTRIBUTION_FUNCTIONS
            else {}
        )
        register_op(
            f"aten::stats_{_distribution}_{_method}(Any self, {_schema_shapes},"
            " Any loc=0.0, Any scale=1.0) -> Tensor",
            shape=refusing_complex(
                f"aten::stats_{_distribution}_{_method}",
                f"scipy.stats.{_distribution}.{_method}",
                elementwise(_kernel(_distribution, _method)),
                REAL_VARIABLE,
            ),
            derivative=Derivative.FORMULA,
            spellings={f"scipy.stats.{_distribution}.{_method}": f"x:self {_parameters} loc scale"},
            refused_operands=_refused,
        )(_kernel(_distribution, _method))

_COUNT_REFUSAL = (
    "scipy.stats.poisson.{method} is not differentiable in {name}: the count k is data, and "
    "loc shifts it by whole numbers, so the pmf is piecewise constant in both (only mu is "
    "differentiable)"
)

for _method in POISSON_METHODS:
    register_op(
        f"aten::stats_poisson_{_method}(Any self, Any mu, Any loc=0.0) -> Tensor",
        shape=refusing_complex(
            f"aten::stats_poisson_{_method}",
            f"scipy.stats.poisson.{_method}",
            elementwise(_kernel("poisson", _method)),
            REAL_VARIABLE,
        ),
        derivative=Derivative.FORMULA,
        spellings={f"scipy.stats.poisson.{_method}": "k:self mu loc"},
        refused_operands={
            "self": _COUNT_REFUSAL.format(method=_method, name="k"),
            "loc": _COUNT_REFUSAL.format(method=_method, name="loc"),
        },
    )(_kernel("poisson", _method))

UNIVARIATE_OPS = frozenset(
    [
        *(f"aten::stats_{name}_{method}" for name in CONTINUOUS for method in METHODS),
        *(f"aten::stats_poisson_{method}" for method in POISSON_METHODS),
    ]
)
"""The operators of this module, whose kernels call ``scipy.stats``."""
