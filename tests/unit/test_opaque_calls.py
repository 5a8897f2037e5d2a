"""``ad.pure_callback`` (Note [Pure callbacks] in `autodiff.callbacks`), ``ad.stop_gradient``,
``ad.elementwise_grad`` and autograd's ``ad.primitive``/``ad.defvjp``."""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import autodiff as ad
from ir.errors import AutodiffError

W = np.array([1.0, 5.0, 2.0, -0.5])


def host_median(x):
    return np.float64(statistics.median(x.tolist()))  # Python the compiler never reads


MEDIAN = ad.ShapeDtype((), np.float64)
WRONG = ad.ShapeDtype((2,), np.float64)


def centred(w):
    m = ad.pure_callback(host_median, MEDIAN, w)
    return np.sum((w - m) ** 2)


def test_a_callback_gives_the_plain_functions_value() -> None:
    assert ad.script(centred)(W) == pytest.approx(centred(W))
    assert "prim::PureCallback(%fn, %w)" in str(ad.script(centred).graph_for(W))


def test_a_callbacks_result_is_a_constant_for_differentiation() -> None:
    m = host_median(W)
    np.testing.assert_allclose(ad.grad(centred)(W), 2 * (W - m))
    np.testing.assert_allclose(ad.hessian(centred)(W), 2 * np.eye(4))


def test_a_callback_in_a_loop_runs_each_iteration() -> None:
    seen = []

    def record(x):
        seen.append(x.copy())
        return x * 0.5

    half = ad.ShapeDtype((4,), np.float64)

    def loss(w, n: int):
        for _ in range(n):
            w = w + ad.pure_callback(record, half, w)
        return np.sum(w)

    assert ad.script(loss)(W, 3) == pytest.approx(np.sum(W * 1.5**3))
    assert len(seen) == 3
    np.testing.assert_allclose(ad.grad(loss)(W, 3), np.ones(4))  # the callback's part is constant


def test_a_tuple_result_is_declared_as_a_tuple() -> None:
    both = (ad.ShapeDtype((), np.float64), ad.ShapeDtype((), np.float64))

    def low_high(x):
        values = sorted(x.tolist())
        return values[0], values[-1]

    def spread(w):
        low, high = ad.pure_callback(low_high, both, w)
        return (high - low) * np.sum(w)

    assert ad.script(spread)(W) == pytest.approx(spread(W))


def test_a_result_that_contradicts_its_declaration_is_located() -> None:
    def loss(w):
        return np.sum(ad.pure_callback(host_median, WRONG, w))

    with pytest.raises(AutodiffError, match=r"host_median@.* returned shape \(\)") as info:
        ad.script(loss)(W)
    assert "ad.pure_callback(host_median, WRONG, w)" in str(info.value)


def test_stop_gradient_is_the_identity_with_a_zero_gradient_at_every_order() -> None:
    def loss(w):
        return np.sum(w * ad.stop_gradient(w))

    assert ad.stop_gradient(W) is W
    np.testing.assert_allclose(ad.grad(loss)(W), W)  # not 2 w
    np.testing.assert_allclose(ad.hessian(loss)(W), np.zeros((4, 4)))


def test_stop_gradient_matches_jax() -> None:
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy

    def ours(w):
        return np.sum(np.sin(w) * ad.stop_gradient(np.cos(w)) ** 2)

    def theirs(w):
        return jnp.sum(jnp.sin(w) * jax.lax.stop_gradient(jnp.cos(w)) ** 2)

    np.testing.assert_allclose(ad.grad(ours)(W), np.asarray(jax.grad(theirs)(W)), rtol=1e-12)


def test_elementwise_grad_is_the_derivative_at_each_element() -> None:
    x = np.linspace(-2.0, 2.0, 5)
    np.testing.assert_allclose(ad.elementwise_grad(np.tanh)(x), 1 - np.tanh(x) ** 2)
    second = ad.elementwise_grad(ad.elementwise_grad(np.sin))
    np.testing.assert_allclose(second(x), -np.sin(x), atol=1e-12)


def test_elementwise_grad_is_callable_from_scripted_code() -> None:
    dtanh = ad.elementwise_grad(np.tanh)

    def loss(x):
        return np.sum(dtanh(x) * x)

    x = np.array([0.1, -0.7, 1.3])
    assert ad.script(loss)(x) == pytest.approx(np.sum((1 - np.tanh(x) ** 2) * x))
    ad.gradcheck(loss, x)


def test_elementwise_grad_matches_autograd() -> None:
    autograd = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")

    def theirs(x):
        return anp.exp(-(x**2)) * anp.sin(3 * x)

    def ours(x):
        return np.exp(-(x**2)) * np.sin(3 * x)

    x = np.linspace(-1.0, 1.0, 7)
    np.testing.assert_allclose(
        ad.elementwise_grad(ours)(x), autograd.elementwise_grad(theirs)(x), rtol=1e-12
    )


@ad.primitive
def logsumexp(x):
    top = max(x.tolist())  # opaque: a Python max
    return top + np.log(np.sum(np.exp(x - top)))


ad.defvjp(logsumexp, lambda ans, x: lambda g: g * np.exp(x - ans))


def test_autograd_style_primitive_and_defvjp() -> None:
    def loss(x):
        return logsumexp(x) ** 2

    x = np.array([0.2, 1.5, -0.3])
    value = np.log(np.sum(np.exp(x)))
    np.testing.assert_allclose(ad.grad(loss)(x), 2 * value * np.exp(x - value))
    ad.gradcheck(loss, x)


def test_the_readme_extending_section_runs(tmp_path: Path) -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    start = readme.index("\n## Extending\n")
    section = readme[start : readme.index("\n## ", start + 1)]
    blocks = re.findall(r"^```python\n(.*?)^```$", section, re.MULTILINE | re.DOTALL)
    prelude = """
import numpy as np
import autodiff as ad
rng = np.random.default_rng(0)
W, b = 0.3 * rng.standard_normal((4, 4)), rng.standard_normal(4)
x = rng.standard_normal(5)
def host_median(v):
    return np.float64(np.median(v))
"""
    check = """
dW, db = ad.grad(lambda W, b: np.sum(fixed_point(W, b) ** 2), argnums=(0, 1))(W, b)
eps = 1e-6
loss = lambda b: np.sum(fixed_point(W, b) ** 2)
numeric = [(loss(b + eps * e) - loss(b - eps * e)) / (2 * eps) for e in np.eye(4)]
assert np.allclose(db, numeric, rtol=1e-6, atol=1e-9), (db, numeric)
print("EXTENDING OK")
"""
    program = tmp_path / "extending.py"
    program.write_text("\n".join([prelude, *blocks, check]), encoding="utf-8")
    root = str(Path(__file__).resolve().parents[2])
    result = subprocess.run(
        [sys.executable, str(program)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**os.environ, "PYTHONPATH": root},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.rstrip().endswith("EXTENDING OK")
