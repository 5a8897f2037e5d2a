"""``python -m benchmarks``: the thread count is fixed before NumPy is imported, so that ours,
the reference and the other systems all run on the same number of BLAS threads."""

from __future__ import annotations

import os
import sys


def _threads(argv: list[str]) -> str:
    for index, arg in enumerate(argv):
        if arg == "--threads" and index + 1 < len(argv):
            return argv[index + 1]
        if arg.startswith("--threads="):
            return arg.split("=", 1)[1]
    return "1"


if __name__ == "__main__":
    threads = _threads(sys.argv[1:])
    for variable in (
        "OMP_NUM_THREADS",
        "OPENBLAS_NUM_THREADS",
        "MKL_NUM_THREADS",
        "VECLIB_MAXIMUM_THREADS",
        "NUMEXPR_NUM_THREADS",
    ):
        os.environ[variable] = threads
    if threads == "1":  # JAX's CPU backend, when it is installed
        os.environ.setdefault(
            "XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
        )

    from benchmarks.run import main

    raise SystemExit(main())
