"""Derivative formulas of the operators of `ir.ops.scipy_stats_multivariate`.

``multivariate_normal.logpdf`` is ``-(x - mean)^T S^-1 (x - mean) / 2 - log det S / 2 - d
log(2 pi) / 2`` for the symmetric ``S`` SciPy reads from ``cov``: with ``r = S^-1 (x - mean)``
per row and ``w`` the row's cotangent, x gets ``-w r``, mean ``sum(w r)`` and ``S`` ``(sum(w r
r^T) - sum(w) S^-1) / 2``, which the transpose of what SciPy reads turns into a gradient of
``cov`` (only its lower triangle gets one). ``dirichlet.logpdf`` is ``sum((alpha - 1) log x, 0)
- sum(gammaln(alpha)) + gammaln(sum(alpha))``. The pdfs are the same with ``w`` scaled by the
result. Every helper is linear in what is differentiated, and its formula is its transpose.
"""

import numpy as np

from ir.ops import scipy_special as sp
from ir.ops import scipy_stats_multivariate as sm
from ir.ops.gradients.common import dtype_of
from ir.ops.shape_ops import sum_to_size


def stats_multivariate_normal_logpdf(self, mean, cov, allow_singular):
    out = sm.stats_multivariate_normal_logpdf(self, mean, cov, allow_singular)
    self_shape, self_dtype = np.shape(self), dtype_of(self)
    mean_shape, mean_dtype = np.shape(mean), dtype_of(mean)
    cov_dtype = dtype_of(cov)

    def backward(dout):
        full = sm.stats_mvn_covariance(cov, mean)
        rows = np.reshape(self, (-1, np.shape(full)[0])) - mean
        solved = np.linalg.solve(full, rows.T).T
        weights = np.reshape(dout, (-1, 1))
        weighted = weights * solved
        grad_full = 0.5 * (solved.T @ weighted - np.sum(dout) * np.linalg.inv(full))
        grad_cov = sm.stats_mvn_covariance_backward(grad_full, cov, mean)
        grad_mean = sum_to_size(np.sum(weighted, axis=0), mean_shape)
        return (
            np.reshape(-weighted, self_shape).astype(self_dtype),
            grad_mean.astype(mean_dtype),
            grad_cov.astype(cov_dtype),
            None,
        )

    return out, backward


def stats_multivariate_normal_pdf(self, mean, cov, allow_singular):
    out = sm.stats_multivariate_normal_pdf(self, mean, cov, allow_singular)
    self_shape, self_dtype = np.shape(self), dtype_of(self)
    mean_shape, mean_dtype = np.shape(mean), dtype_of(mean)
    cov_dtype = dtype_of(cov)

    def backward(dout):
        # logpdf's, each row's cotangent scaled by its density
        full = sm.stats_mvn_covariance(cov, mean)
        rows = np.reshape(self, (-1, np.shape(full)[0])) - mean
        solved = np.linalg.solve(full, rows.T).T
        scaled = dout * out
        weights = np.reshape(scaled, (-1, 1))
        weighted = weights * solved
        grad_full = 0.5 * (solved.T @ weighted - np.sum(scaled) * np.linalg.inv(full))
        grad_cov = sm.stats_mvn_covariance_backward(grad_full, cov, mean)
        grad_mean = sum_to_size(np.sum(weighted, axis=0), mean_shape)
        return (
            np.reshape(-weighted, self_shape).astype(self_dtype),
            grad_mean.astype(mean_dtype),
            grad_cov.astype(cov_dtype),
            None,
        )

    return out, backward


def stats_dirichlet_logpdf(self, alpha):
    out = sm.stats_dirichlet_logpdf(self, alpha)
    self_dtype, alpha_dtype = dtype_of(self), dtype_of(alpha)

    def backward(dout):
        full = sm.stats_dirichlet_complete(self, alpha, 1.0)
        spread = np.reshape(dout, np.shape(full)[1:])  # the squeezed axes back
        grad_full = spread * ((alpha - 1.0) / full.T).T
        grad_self = sm.stats_dirichlet_complete_backward(grad_full, self, alpha)
        logs = np.reshape(spread * np.log(full), (np.shape(full)[0], -1))
        normaliser = sp.special_digamma(alpha) - sp.special_digamma(np.sum(alpha))
        grad_alpha = np.sum(logs, axis=1) - np.sum(dout) * normaliser
        return grad_self.astype(self_dtype), grad_alpha.astype(alpha_dtype)

    return out, backward


def stats_dirichlet_pdf(self, alpha):
    out = sm.stats_dirichlet_pdf(self, alpha)
    self_dtype, alpha_dtype = dtype_of(self), dtype_of(alpha)

    def backward(dout):
        # logpdf's, each point's cotangent scaled by its density
        full = sm.stats_dirichlet_complete(self, alpha, 1.0)
        scaled = dout * out
        spread = np.reshape(scaled, np.shape(full)[1:])
        grad_full = spread * ((alpha - 1.0) / full.T).T
        grad_self = sm.stats_dirichlet_complete_backward(grad_full, self, alpha)
        logs = np.reshape(spread * np.log(full), (np.shape(full)[0], -1))
        normaliser = sp.special_digamma(alpha) - sp.special_digamma(np.sum(alpha))
        grad_alpha = np.sum(logs, axis=1) - np.sum(scaled) * normaliser
        return grad_self.astype(self_dtype), grad_alpha.astype(alpha_dtype)

    return out, backward


# ---- the helpers: each linear in its first operand, its formula its transpose -------------------


def _stats_mvn_covariance(cov, mean):
    def backward(dout):
        return sm.stats_mvn_covariance_backward(dout, cov, mean), None

    return sm.stats_mvn_covariance(cov, mean), backward


def _stats_mvn_covariance_backward(grad, cov, mean):
    def backward(dout):
        return sm.stats_mvn_covariance(dout, mean), None, None

    return sm.stats_mvn_covariance_backward(grad, cov, mean), backward


def _stats_dirichlet_complete(self, alpha, total):
    def backward(dout):
        return sm.stats_dirichlet_complete_backward(dout, self, alpha), None, None

    return sm.stats_dirichlet_complete(self, alpha, total), backward


def _stats_dirichlet_complete_backward(grad, self, alpha):
    def backward(dout):
        # the linear part of completing: the appended row is minus the others' sum
        return sm.stats_dirichlet_complete(dout, alpha, 0.0), None, None

    return sm.stats_dirichlet_complete_backward(grad, self, alpha), backward
