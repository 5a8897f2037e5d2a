"""Errors raised while differentiating or running compiled gradients."""

from __future__ import annotations

from ir.errors import AutodiffError


class DifferentiationError(AutodiffError):
    """A graph that cannot be differentiated (an operator with no formula, a non-scalar output
    given to ``grad``, ...)."""


class AnomalyError(AutodiffError):
    """A node of ``f`` or ``df`` produced NaN or inf while `autodiff.detect_anomaly` was on."""
