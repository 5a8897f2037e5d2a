"""Graph-compiling automatic differentiation for NumPy code; `autodiff.cli` is the command line."""

from __future__ import annotations
