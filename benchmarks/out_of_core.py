"""Logistic regression trained on lazily generated Dask data larger than it keeps in memory,
on a `dask.distributed.LocalCluster`: time per gradient step and the peak resident memory
of the process (the workers are threads in it), next to the data's size.

    python -m benchmarks.out_of_core --gb 2 --steps 2

The gradient of a sample that fits in memory is checked against NumPy's first. Needs
``pip install -e '.[dask]'``.
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np

import autodiff as ad


def logistic_loss(w, X, y):
    p = 1 / (1 + np.exp(-(X @ w)))
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gb", type=float, default=2.0, help="size of X in GB (float64)")
    parser.add_argument("--features", type=int, default=100)
    parser.add_argument("--chunk-rows", type=int, default=100_000)
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()

    import dask.array as da
    from distributed import Client, LocalCluster

    d = args.features
    n = int(args.gb * 1e9 / 8 / d)
    with (
        LocalCluster(
            n_workers=1,
            threads_per_worker=args.threads,
            processes=False,
            dashboard_address=None,
        ) as cluster,
        Client(cluster),
    ):
        X = da.random.default_rng(0).standard_normal((n, d), chunks=(args.chunk_rows, d))
        y = (da.random.default_rng(1).random(n, chunks=args.chunk_rows) > 0.5) * 1.0
        w = np.random.default_rng(2).standard_normal(d) * 0.01

        sample = slice(0, args.chunk_rows)
        on_dask = ad.grad(logistic_loss, compute=True)(w, X[sample], y[sample])
        on_numpy = ad.grad(logistic_loss)(w, X[sample].compute(), y[sample].compute())
        difference = float(np.max(np.abs(on_dask - on_numpy)))
        print(f"data {n * d * 8 / 1e9:.1f} GB: {n:,} x {d}, chunks of {args.chunk_rows:,} rows")
        print(f"sample gradient, Dask vs NumPy: max abs difference {difference:.1e}")
        for step in range(args.steps):
            start = time.perf_counter()
            value, dw = ad.value_and_grad(logistic_loss, compute=True)(w, X, y)
            w = w - 0.5 * dw
            print(f"step {step}: loss {float(value):.6f}, {time.perf_counter() - start:.1f} s")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6  # KB on Linux
    print(f"peak resident memory {peak:.2f} GB")


if __name__ == "__main__":
    main()
