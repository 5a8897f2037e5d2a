"""``python -m benchmarks.odeint``: the gradient of a neural ODE's fit through
``scipy.integrate.odeint`` (Note [Odeint adjoint] in `autodiff.odeint`), ours against HIPS
autograd's ``odeint`` when it is installed. Both run SciPy's solver forward and the same
adjoint backwards; the difference is the dynamics' vector-Jacobian products, compiled here,
traced at every step there. Recorded in benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.integrate import odeint

import autodiff as ad


def neural(y: Any, t: Any, W: Any, b: Any) -> Any:
    return np.tanh(W @ y + b)


def fit_loss(W: Any, b: Any, y0: Any, t: Any, data: Any) -> Any:
    ys = odeint(neural, y0, t, args=(W, b), rtol=1e-8, atol=1e-8)
    return np.mean((ys - data) ** 2)


def problem(states: int, times: int) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(0)
    W = rng.normal(size=(states, states)) / np.sqrt(states)
    b = rng.normal(size=states) * 0.3
    y0 = rng.normal(size=states)
    t = np.linspace(0.0, 2.0, times)
    data = rng.normal(size=(times, states))
    return W, b, y0, t, data


def autograd_gradient() -> Callable[..., Any] | None:
    try:
        import autograd
        import autograd.numpy as anp
        from autograd.builtins import tuple as atuple
        from autograd.scipy.integrate import odeint as aodeint
    except ImportError:
        return None

    def a_neural(y: Any, t: Any, W: Any, b: Any) -> Any:
        return anp.tanh(anp.dot(W, y) + b)

    def a_loss(W: Any, b: Any, y0: Any, t: Any, data: Any) -> Any:
        ys = aodeint(a_neural, y0, t, atuple((W, b)), rtol=1e-8, atol=1e-8)
        return anp.mean((ys - data) ** 2)

    gradient: Callable[..., Any] = autograd.value_and_grad(a_loss, argnum=(0, 1, 2))
    return gradient


def best_of(fn: Callable[[], Any], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    ours = ad.value_and_grad(fit_loss, argnums=(0, 1, 2))
    theirs = autograd_gradient()
    print(f"{'states':>6} {'times':>5} {'ours (ms)':>10} {'autograd (ms)':>14} {'ratio':>6}")
    for states, times in ((4, 10), (16, 10), (64, 10)):
        inputs = problem(states, times)
        value, grads = ours(*inputs)  # compiles
        mine = best_of(lambda inputs=inputs: ours(*inputs), args.rounds)
        if theirs is None:
            print(f"{states:>6} {times:>5} {mine * 1e3:>10.1f} {'-':>14} {'-':>6}")
            continue
        other_value, other_grads = theirs(*inputs)
        assert np.isclose(value, other_value, rtol=1e-12)
        for a, b in zip(grads, other_grads, strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-9)
        other = best_of(lambda inputs=inputs: theirs(*inputs), args.rounds)
        ratio = other / mine
        print(f"{states:>6} {times:>5} {mine * 1e3:>10.1f} {other * 1e3:>14.1f} {ratio:>5.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
