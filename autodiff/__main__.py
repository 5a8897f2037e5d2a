"""`python -m autodiff`: the same command line as the `autodiff` console script."""

from __future__ import annotations

import sys

from autodiff.cli import main

if __name__ == "__main__":
    sys.exit(main())
