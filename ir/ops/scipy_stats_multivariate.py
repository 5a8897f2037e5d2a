"""``scipy.stats.multivariate_normal`` and ``scipy.stats.dirichlet`` as operators: ``logpdf``
and ``pdf`` of each, differentiable in every parameter, and ``multivariate_normal.cdf`` and
``logcdf``, whose gradients are refused.

``multivariate_normal.logpdf(x, mean=None, cov=1, allow_singular=False)`` reads ``x`` with the
components on its last axis, and of a 2-d ``cov`` only the lower triangle (SciPy's ``_PSD``
calls ``scipy.linalg.eigh(cov, lower=True)``); a scalar ``cov`` is ``cov * I``, a vector the
diagonal. ``dirichlet.logpdf(x, alpha)`` reads ``x`` with the categories on its FIRST axis, and
a ``x`` with one row fewer than ``alpha`` is completed with ``1 - sum(x, 0)``. Both squeeze their
result, as SciPy does. The helpers ``_stats_mvn_covariance`` and ``_stats_dirichlet_complete``
(and their transposes) compute what SciPy reads, so that the formulas differentiate exactly that.

With ``allow_singular=True`` and a singular ``cov`` the value is SciPy's, but a gradient stops
with a located "Singular matrix" from the solve its formula makes: the density lives on a
subspace, and no gradient is given (HIPS autograd refuses it too).

The cdf of ``multivariate_normal`` is a randomised numerical integration (so it is impure: two
calls differ in the last digits); its derivative would be another such integral, and is refused.

>>> float(stats_dirichlet_logpdf(np.array([0.5, 0.5]), np.array([1.0, 1.0])))
0.0
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from ir.ops.registry import Derivative, register_op
from ir.ops.scipy_special import REAL_VARIABLE, refusing_complex
from ir.ops.shape_rules import as_array_like, tensor
from ir.types import TensorType, Type


def _stats() -> Any:
    return importlib.import_module("scipy.stats")


def _mean_for(mean: Any, cov: Any) -> Any:
    """The mean SciPy is given: a scalar mean (the schema's default stands for SciPy's None)
    is spread over the dimension a 2-d ``cov`` names."""
    if np.ndim(mean) == 0 and np.ndim(cov) == 2:
        return np.full(np.shape(cov)[0], mean, dtype=float)
    return mean


def stats_multivariate_normal_logpdf(x: Any, mean: Any, cov: Any, allow_singular: bool) -> Any:
    mvn = _stats().multivariate_normal
    return mvn.logpdf(x, _mean_for(mean, cov), cov, allow_singular)


def stats_multivariate_normal_pdf(x: Any, mean: Any, cov: Any, allow_singular: bool) -> Any:
    mvn = _stats().multivariate_normal
    return mvn.pdf(x, _mean_for(mean, cov), cov, allow_singular)


def stats_multivariate_normal_cdf(x: Any, mean: Any, cov: Any, allow_singular: bool) -> Any:
    mvn = _stats().multivariate_normal
    return mvn.cdf(x, _mean_for(mean, cov), cov, allow_singular)


def stats_multivariate_normal_logcdf(x: Any, mean: Any, cov: Any, allow_singular: bool) -> Any:
    mvn = _stats().multivariate_normal
    return mvn.logcdf(x, _mean_for(mean, cov), cov, allow_singular)


def stats_dirichlet_logpdf(x: Any, alpha: Any) -> Any:
    return _stats().dirichlet.logpdf(x, alpha)


def stats_dirichlet_pdf(x: Any, alpha: Any) -> Any:
    return _stats().dirichlet.pdf(x, alpha)


# ---- what SciPy reads, and its transpose -------------------------------------------------------


def _dimension(cov: Any, mean: Any) -> int:
    if np.ndim(mean) == 1:
        return int(np.shape(mean)[0])
    return int(np.shape(cov)[0]) if np.ndim(cov) == 2 else 1


def stats_mvn_covariance(cov: Any, mean: Any) -> Any:
    """The symmetric matrix ``multivariate_normal`` reads from ``cov``: its lower triangle
    mirrored, ``cov * I`` of a scalar, ``diag(cov)`` of a vector. Linear in ``cov``."""
    cov = np.asarray(cov) * 1.0  # an integer cov as a float; float32 stays float32
    if cov.ndim == 2:
        return np.tril(cov) + np.tril(cov, -1).T
    if cov.ndim == 1:
        return np.diag(cov)
    return cov * np.eye(_dimension(cov, mean), dtype=cov.dtype)


def stats_mvn_covariance_backward(grad: Any, cov: Any, mean: Any) -> Any:
    """The transpose of `stats_mvn_covariance`: a gradient of the symmetric matrix as one of
    ``cov`` (a lower entry gets both its own and its mirror's share, the upper triangle none)."""
    grad = np.asarray(grad)
    if np.ndim(cov) == 2:
        return np.tril(grad) + np.tril(grad.T, -1)
    if np.ndim(cov) == 1:
        return np.diagonal(grad).copy()
    return np.trace(grad)


def stats_dirichlet_complete(x: Any, alpha: Any, total: float) -> Any:
    """``x`` as ``dirichlet`` reads it: with one row fewer than ``alpha``, the row
    ``total - sum(x, 0)`` appended (``total`` is 1.0; 0.0 gives the linear part)."""
    x = np.asarray(x)
    if x.shape[0] == np.shape(alpha)[0]:
        return x
    return np.concatenate([x, (total - np.sum(x, 0))[np.newaxis]])


def stats_dirichlet_complete_backward(grad: Any, x: Any, alpha: Any) -> Any:
    """The transpose of `stats_dirichlet_complete`'s linear part: the appended row's gradient
    taken off every other row's."""
    grad = np.asarray(grad)
    if np.shape(x)[0] == np.shape(alpha)[0]:
        return grad
    return grad[:-1] - grad[-1]


# ---- shape rules --------------------------------------------------------------------------------


def _squeezed(shape: tuple[int | None, ...] | None) -> list[Type]:
    if shape is None or None in shape:
        return tensor("float64", None)
    return tensor("float64", tuple(d for d in shape if d != 1))


def _mvn_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    """The shape of ``x`` without its component axis, squeezed: SciPy's result."""
    x, mean, cov = (as_array_like(types[i], i).shape for i in range(3))
    if x is None or mean is None or cov is None:
        return tensor("float64", None)
    # SciPy's dimension: the mean's length, else a matrix cov's
    dim = mean[0] if len(mean) == 1 else (cov[0] if len(cov) == 2 else 1)
    if len(x) == 0:
        return _squeezed(())
    if len(x) == 1:
        return _squeezed(x if dim == 1 else ())
    return _squeezed(x[:-1])


def _dirichlet_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    """The shape of ``x`` without its category axis (the first), squeezed."""
    x = as_array_like(types[0], 0).shape
    return _squeezed(None if x is None else x[1:])


def _dtype(ty: Type) -> str | None:
    """An operand's dtype: a Python float is a float64."""
    return ty.dtype if isinstance(ty, TensorType) else "float64"


def _covariance_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    cov, mean = (as_array_like(types[i], i).shape for i in range(2))
    if cov is None or mean is None:
        return tensor(_dtype(types[0]), None)
    if cov:
        return tensor(_dtype(types[0]), (cov[0], cov[0]))
    dim = mean[0] if len(mean) == 1 else 1
    return tensor(_dtype(types[0]), (dim, dim))


def _covariance_backward_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    return tensor(_dtype(types[0]), as_array_like(types[1], 1).shape)


def _complete_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    x, alpha = (as_array_like(types[i], i).shape for i in range(2))
    if x is None or alpha is None or not x:
        return tensor(_dtype(types[0]), None)
    return tensor(_dtype(types[0]), (alpha[0], *x[1:]))


def _complete_backward_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    return tensor(_dtype(types[0]), as_array_like(types[1], 1).shape)


# ---- records ------------------------------------------------------------------------------------

_MVN_PARAMETERS = "x:self mean=None cov=None allow_singular"
_MVN_CDF_REFUSAL = (
    "the gradient of scipy.stats.multivariate_normal.{method} is not implemented: the cdf is a "
    "randomised numerical integration, and its derivative another; differentiate "
    "multivariate_normal.logpdf, or stop_gradient the cdf's operands"
)

for _method in ("logpdf", "pdf"):
    register_op(
        f"aten::stats_multivariate_normal_{_method}(Any self, Any mean=0.0, Any cov=1.0,"
        " bool allow_singular=False) -> Tensor",
        shape=refusing_complex(
            f"aten::stats_multivariate_normal_{_method}",
            f"scipy.stats.multivariate_normal.{_method}",
            _mvn_rule,
            REAL_VARIABLE,
        ),
        derivative=Derivative.FORMULA,
        may_raise=True,  # a covariance that is not positive definite
        spellings={f"scipy.stats.multivariate_normal.{_method}": _MVN_PARAMETERS},
    )(globals()[f"stats_multivariate_normal_{_method}"])

for _method in ("cdf", "logcdf"):
    register_op(
        f"aten::stats_multivariate_normal_{_method}(Any self, Any mean=0.0, Any cov=1.0,"
        " bool allow_singular=False) -> Tensor",
        shape=refusing_complex(
            f"aten::stats_multivariate_normal_{_method}",
            f"scipy.stats.multivariate_normal.{_method}",
            _mvn_rule,
            REAL_VARIABLE,
        ),
        derivative=Derivative.REFUSED,
        pure=False,
        may_raise=True,
        spellings={
            f"scipy.stats.multivariate_normal.{_method}": f"{_MVN_PARAMETERS} !maxpts !abseps"
            " !releps * !lower_limit !rng"
        },
        refused_because=_MVN_CDF_REFUSAL.format(method=_method),
    )(globals()[f"stats_multivariate_normal_{_method}"])

for _method in ("logpdf", "pdf"):
    register_op(
        f"aten::stats_dirichlet_{_method}(Any self, Any alpha) -> Tensor",
        shape=refusing_complex(
            f"aten::stats_dirichlet_{_method}",
            f"scipy.stats.dirichlet.{_method}",
            _dirichlet_rule,
            REAL_VARIABLE,
        ),
        derivative=Derivative.FORMULA,
        may_raise=True,  # x off the simplex, alpha not positive
        spellings={f"scipy.stats.dirichlet.{_method}": "x:self alpha"},
    )(globals()[f"stats_dirichlet_{_method}"])

register_op(
    "aten::_stats_mvn_covariance(Any cov, Any mean) -> Tensor",
    shape=_covariance_rule,
    derivative=Derivative.FORMULA,
    read_for_type=("mean",),  # its length, the dimension of a scalar cov
)(stats_mvn_covariance)
register_op(
    "aten::_stats_mvn_covariance_backward(Any grad, Any cov, Any mean) -> Tensor",
    shape=_covariance_backward_rule,
    derivative=Derivative.FORMULA,
    read_for_type=("cov", "mean"),
)(stats_mvn_covariance_backward)
register_op(
    "aten::_stats_dirichlet_complete(Any self, Any alpha, float total) -> Tensor",
    shape=_complete_rule,
    derivative=Derivative.FORMULA,
    read_for_type=("alpha", "total"),  # alpha's length; total is a constant
)(stats_dirichlet_complete)
register_op(
    "aten::_stats_dirichlet_complete_backward(Any grad, Any self, Any alpha) -> Tensor",
    shape=_complete_backward_rule,
    derivative=Derivative.FORMULA,
    read_for_type=("self", "alpha"),
)(stats_dirichlet_complete_backward)

MULTIVARIATE_OPS = frozenset(
    f"aten::stats_{name}_{method}"
    for name, methods in (
        ("multivariate_normal", ("logpdf", "pdf", "cdf", "logcdf")),
        ("dirichlet", ("logpdf", "pdf")),
    )
    for method in methods
)
"""The operators of this module whose kernels call ``scipy.stats``."""

HELPER_OPS = frozenset(
    [
        "aten::_stats_mvn_covariance",
        "aten::_stats_mvn_covariance_backward",
        "aten::_stats_dirichlet_complete",
        "aten::_stats_dirichlet_complete_backward",
    ]
)
"""The helpers the formulas of this module's operators call: what SciPy reads, and its
transpose."""
