"""Benchmarks of value-and-gradient calls against hand-written NumPy: ``python -m benchmarks``.

Not installed with the project; run from the repository root (see benchmarks/README.md)."""
