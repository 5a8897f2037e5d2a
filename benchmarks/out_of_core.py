"""Models trained on lazily generated Dask data larger than it keeps in memory, on a
`dask.distributed.LocalCluster`: time per gradient step and the peak resident memory of the
process (the workers are threads in it), next to the data's size.

    python -m benchmarks.out_of_core --gb 2 --steps 2                  # logistic regression
    python -m benchmarks.out_of_core --model mlp --gb 2 --steps 2      # 100 -> 64 tanh -> 1
    python -m benchmarks.out_of_core --model dask-glm --gb 2 --steps 2 # against dask-glm

The gradient of a sample that fits in memory is checked against NumPy's first. ``dask-glm``
times our logistic-regression value and gradient next to dask-glm's hand-written gradient of
the same model (``dask_glm.families.Logistic``) on the same data, after checking that they
agree; it needs ``pip install dask-ml`` and says so without it. Needs ``pip install -e
'.[dask]'``.
"""

from __future__ import annotations

import argparse
import resource
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import autodiff as ad


def logistic_loss(w, X, y):
    p = 1 / (1 + np.exp(-(X @ w)))
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))


def mlp_loss(params, X, y):
    """Mean squared error of a one-hidden-layer tanh network with one output."""
    W1, b1, W2, b2 = params
    h = np.tanh(X @ W1 + b1)
    return np.mean((h @ W2 + b2 - y) ** 2)


def mlp_parameters(features: int, hidden: int, seed: int) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    return (
        rng.standard_normal((features, hidden)) / np.sqrt(features),
        np.zeros(hidden),
        rng.standard_normal(hidden) / np.sqrt(hidden),
        np.zeros(()),
    )


def lazy_data(n: int, d: int, chunk_rows: int, model: str) -> tuple[Any, Any]:
    """``X`` of n x d standard normals and a target, both generated chunk by chunk when
    computed: labels of a noisy linear model (logistic), or a noisy teacher network's output
    (MLP), so that the gradients are those of a problem with something to learn."""
    import dask.array as da

    X = da.random.default_rng(0).standard_normal((n, d), chunks=(chunk_rows, d))
    noise = da.random.default_rng(1).standard_normal(n, chunks=chunk_rows)
    teacher = np.random.default_rng(3).standard_normal(d) / np.sqrt(d)
    if model == "mlp":
        return X, np.sin(X @ teacher) + 0.1 * noise
    return X, (X @ teacher + 0.5 * noise > 0) * 1.0


def descend(params: Any, grads: Any, rate: float) -> Any:
    if isinstance(params, tuple):
        return tuple(p - rate * g for p, g in zip(params, grads, strict=True))
    return params - rate * grads


def max_difference(a: Any, b: Any) -> float:
    pairs = zip(a, b, strict=True) if isinstance(a, tuple) else [(a, b)]
    return max(float(np.max(np.abs(np.asarray(x) - np.asarray(y)))) for x, y in pairs)


def train(
    loss: Callable[..., Any], params: Any, X: Any, y: Any, steps: int, rate: float, sample: int
) -> None:
    """Check the Dask gradient of the first ``sample`` rows against NumPy's, then take
    ``steps`` gradient steps on all of the data, each one ``dask.compute``."""
    part = slice(0, sample)
    on_dask = ad.grad(loss, compute=True)(params, X[part], y[part])
    on_numpy = ad.grad(loss)(params, X[part].compute(), y[part].compute())
    difference = max_difference(on_dask, on_numpy)
    print(f"sample gradient, Dask vs NumPy: max abs difference {difference:.1e}")
    print(f"peak resident memory after the sample's check {peak_memory():.2f} GB")
    for step in range(steps):
        start = time.perf_counter()
        value, grads = ad.value_and_grad(loss, compute=True)(params, X, y)
        params = descend(params, grads, rate)
        print(f"step {step}: loss {float(value):.6f}, {time.perf_counter() - start:.1f} s")


def against_dask_glm(w: np.ndarray, X: Any, y: Any, repeats: int, with_hessian: bool) -> None:
    """Our value, gradient and Hessian of the logistic loss next to dask-glm's hand-written
    ones for the same model (``dask_glm.families.Logistic``), on the same Dask data. Its
    loss is the *summed* negative log-likelihood ``sum(Xb + log1p(exp(-Xb))) - y . Xb``,
    gradient ``X.T @ (sigmoid(Xb) - y)``, Hessian ``(p (1 - p) X.T) @ X``; ours is the mean,
    so each of theirs is n times ours. ``repeats`` runs of each, the Hessians' when asked."""
    try:
        from dask_glm.families import Logistic
    except ImportError:
        print("dask-glm is not installed (pip install dask-ml): no comparison")
        return
    import dask

    n = X.shape[0]
    value_and_grad = ad.value_and_grad(logistic_loss)
    hessian = ad.hessian(logistic_loss)
    runs: dict[str, Callable[[], Any]] = {
        "ours: value and gradient": lambda: dask.compute(*value_and_grad(w, X, y)),
        "dask-glm: value and gradient": lambda: dask.compute(
            Logistic.pointwise_loss(w, X, y), Logistic.pointwise_gradient(w, X, y)
        ),
        "ours: gradient": lambda: dask.compute(ad.grad(logistic_loss)(w, X, y)),
        "dask-glm: gradient": lambda: dask.compute(Logistic.pointwise_gradient(w, X, y)),
    }
    if with_hessian:
        runs["ours: Hessian"] = lambda: dask.compute(hessian(w, X, y))
        runs["dask-glm: Hessian"] = lambda: dask.compute(Logistic.hessian(X.dot(w), X))
    results = {}
    for name, run in runs.items():
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            results[name] = run()
            times.append(time.perf_counter() - start)
        print(f"{name}: {', '.join(f'{t:.1f} s' for t in times)}")
    value, grad = results["ours: value and gradient"]
    their_value, their_grad = results["dask-glm: value and gradient"]
    compared = [("loss", value, their_value / n), ("gradient", grad, their_grad / n)]
    if with_hessian:
        compared.append(
            ("Hessian", results["ours: Hessian"][0], results["dask-glm: Hessian"][0] / n)
        )
    for what, ours, theirs in compared:
        relative = np.max(np.abs(ours - theirs)) / np.max(np.abs(theirs))
        print(f"{what}: max relative difference to dask-glm's / n {float(relative):.1e}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=("logistic", "mlp", "dask-glm"), default="logistic")
    parser.add_argument("--gb", type=float, default=2.0, help="size of X in GB (float64)")
    parser.add_argument("--features", type=int, default=100)
    parser.add_argument("--hidden", type=int, default=64, help="hidden units of the MLP")
    parser.add_argument("--chunk-rows", type=int, default=100_000)
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument(
        "--hessian", action="store_true", help="dask-glm: compare the Hessians too (slow)"
    )
    args = parser.parse_args()

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
        X, y = lazy_data(n, d, args.chunk_rows, "mlp" if args.model == "mlp" else "logistic")
        print(f"data {n * d * 8 / 1e9:.1f} GB: {n:,} x {d}, chunks of {args.chunk_rows:,} rows")
        w = np.random.default_rng(2).standard_normal(d) * 0.01
        if args.model == "mlp":
            params = mlp_parameters(d, args.hidden, seed=2)
            train(mlp_loss, params, X, y, args.steps, rate=0.1, sample=args.chunk_rows)
        elif args.model == "dask-glm":
            against_dask_glm(w, X, y, args.steps, with_hessian=args.hessian)
        else:
            train(logistic_loss, w, X, y, args.steps, rate=0.5, sample=args.chunk_rows)
    print(f"peak resident memory {peak_memory():.2f} GB")


def peak_memory() -> float:
    """The process's peak resident memory so far, in GB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6  # KB on Linux


if __name__ == "__main__":
    main()
