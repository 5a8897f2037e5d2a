"""Compiled gradients of every corpus function equal central finite differences of the plain
function: the value is the plain function's, each gradient has its argument's shape and dtype,
and `gradcheck` agrees. A few functions are checked against torch as well, when it is there."""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

import autodiff as ad
from tests.gradients import corpus
from tests.gradients.corpus import CASES, Case

# Relative error allowed against finite differences, by the precision the gradient is
# computed in; an element is compared relative to max(|numeric|, FLOOR * largest |numeric|).
RTOL = {np.dtype(np.float64): 1e-6, np.dtype(np.float32): 1e-4}
FLOOR = 1e-3
EPS = 1e-5


def params() -> list[Any]:
    marks = []
    for case in CASES:
        xfail = [pytest.mark.xfail(reason=case.xfail, strict=True)] if case.xfail else []
        marks.append(pytest.param(case, id=case.name, marks=xfail))
    return marks


def is_differentiable(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, float):
        return True
    return isinstance(value, np.ndarray) and value.dtype.kind == "f"


def widened(value: Any) -> Any:
    """float32 arrays as float64: finite differences of float32 code are mostly noise."""
    if isinstance(value, np.ndarray) and value.dtype == np.float32:
        return value.astype(np.float64)
    return value


def finite_differences(
    fn: Callable[..., Any], args: Sequence[Any], position: int, eps: float = EPS
) -> Any:
    """d fn / d args[position] by central differences, computed in float64. Every evaluation
    gets its own copies of the arguments, since a function may write to them."""
    wide = [widened(a) for a in args]
    base = np.array(wide[position], dtype=np.float64)
    grad = np.zeros(base.shape)
    for index in np.ndindex(base.shape):
        ends = []
        for sign in (1.0, -1.0):
            bumped = base.copy()
            bumped[index] += sign * eps
            values = [copy.deepcopy(v) for v in wide]
            values[position] = float(bumped) if isinstance(args[position], float) else bumped
            ends.append(float(fn(*values)))
        grad[index] = (ends[0] - ends[1]) / (2 * eps)
    return grad


def assert_close_to_numeric(actual: Any, numeric: Any, rtol: float, where: str) -> None:
    actual = np.asarray(actual, dtype=np.float64)
    scale = float(np.max(np.abs(numeric), initial=0.0))
    denominator = np.maximum(np.abs(numeric), FLOOR * scale) if scale > 0 else 1.0
    error = np.abs(actual - numeric) / denominator
    worst = np.unravel_index(np.argmax(error), error.shape) if error.size else ()
    assert error.size == 0 or error.max() <= rtol, (
        f"{where}: relative error {error.max():.2e} at {worst}: "
        f"analytic {actual[worst]!r}, finite differences {numeric[worst]!r}"
    )


def differentiated_positions(args: tuple[Any, ...]) -> tuple[int, ...]:
    return tuple(i for i, value in enumerate(args) if is_differentiable(value))


@pytest.mark.parametrize("case", params())
def test_gradient_matches_finite_differences(case: Case) -> None:
    args = case.make(np.random.default_rng(0))
    argnums = differentiated_positions(args)
    assert argnums, f"{case.name} has no float argument to differentiate"
    value, grads = ad.value_and_grad(case.fn, argnums=argnums)(*args)
    expected = case.fn(*args)
    precision = max(
        (np.asarray(args[i]).dtype for i in argnums if isinstance(args[i], np.ndarray)),
        key=lambda dtype: RTOL[dtype],
        default=np.dtype(np.float64),
    )
    assert np.asarray(value).dtype == np.asarray(expected).dtype
    np.testing.assert_allclose(value, expected, rtol=1e-12 if precision.itemsize == 8 else 1e-6)
    for position, grad in zip(argnums, grads, strict=True):
        argument = args[position]
        where = f"gradient of argument {position}"
        if isinstance(argument, float):
            assert type(grad) is float, f"{where}: {type(grad)} for a Python float"
        else:
            assert isinstance(grad, np.ndarray), f"{where}: {type(grad)}"
            assert grad.shape == argument.shape, f"{where}: shape {grad.shape}"
            assert grad.dtype == argument.dtype, f"{where}: dtype {grad.dtype}"
        numeric = finite_differences(case.fn, args, position)
        assert_close_to_numeric(grad, numeric, RTOL[precision], where)


@pytest.mark.parametrize("case", params())
def test_gradcheck_passes(case: Case) -> None:
    args = case.make(np.random.default_rng(1))
    result = ad.gradcheck(case.fn, *args)
    assert result.ok
    assert result.argument in differentiated_positions(args)


def test_the_corpus_is_large_and_varied() -> None:
    assert len(CASES) >= 30
    assert len({case.name for case in CASES}) == len(CASES)


# ---- against torch ------------------------------------------------------------------------------


def torch_gradients(torch_fn: Callable[..., Any], args: tuple[Any, ...]) -> list[Any]:
    torch = pytest.importorskip("torch")
    tensors = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in args]
    torch_fn(torch, *tensors).backward()
    return [t.grad.numpy() for t in tensors]


def _torch_mlp(torch: Any, x: Any, w1: Any, b1: Any, w2: Any, b2: Any, labels: Any) -> Any:
    logits = torch.tanh(x @ w1 + b1) @ w2 + b2
    return -(labels * torch.log_softmax(logits, dim=1)).sum(dim=1).mean()


def _torch_layer_norm(torch: Any, x: Any, gain: Any, bias: Any, target: Any) -> Any:
    y = torch.nn.functional.layer_norm(x, (x.shape[-1],), gain, bias, eps=1e-5)
    return ((y - target) ** 2).sum()


def _torch_attention(torch: Any, x: Any, wq: Any, wk: Any, wv: Any) -> Any:
    q, k, v = x @ wq, x @ wk, x @ wv
    attention = torch.softmax(q @ k.T / q.shape[1] ** 0.5, dim=-1)
    return torch.tanh(attention @ v).sum()


def _torch_rosenbrock(torch: Any, x: Any) -> Any:
    return (100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2).sum()


TORCH_TWINS = {
    "mlp_softmax_cross_entropy": (corpus.mlp_softmax_cross_entropy, _torch_mlp),
    "layer_norm": (corpus.layer_norm, _torch_layer_norm),
    "self_attention": (corpus.self_attention, _torch_attention),
    "rosenbrock": (corpus.rosenbrock, _torch_rosenbrock),
}


@pytest.mark.parametrize("name", sorted(TORCH_TWINS))
def test_gradient_matches_torch(name: str) -> None:
    fn, torch_fn = TORCH_TWINS[name]
    case = next(case for case in CASES if case.name == name)
    args = case.make(np.random.default_rng(2))
    expected = torch_gradients(torch_fn, args)
    actual = ad.grad(fn, argnums=tuple(range(len(args))))(*args)
    for position, (a, e) in enumerate(zip(actual, expected, strict=True)):
        np.testing.assert_allclose(a, e, rtol=1e-10, atol=1e-12, err_msg=f"argument {position}")
