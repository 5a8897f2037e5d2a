"""Graph-compiling automatic differentiation for NumPy code; `autodiff.cli` is the command line."""

from __future__ import annotations

from autodiff import lambda_lift as lambda_lift  # registers the lambda-lift module pass
