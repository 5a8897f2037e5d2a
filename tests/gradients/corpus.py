"""Plain NumPy functions with scalar results, each with an input factory ``make(rng)``, whose
compiled gradients must match finite differences of the plain function.

Every float argument (array or Python float) is differentiated; ints, bools and integer arrays
steer the computation. Inputs keep away from kinks (``abs``, ``maximum``, ``clip``, ``where``)
and from ties (``max``, ``min``), where finite differences say nothing useful.
"""

# The corpus spells out if/else statements on purpose: each is a prim::If to compile.
# ruff: noqa: SIM108

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

Factory = Callable[[np.random.Generator], tuple[Any, ...]]


@dataclass(frozen=True)
class Case:
    name: str
    fn: Callable[..., Any]
    make: Factory
    xfail: str | None = None


CASES: list[Case] = []


def case(make: Factory, *, xfail: str | None = None) -> Callable[[Any], Any]:
    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        CASES.append(Case(fn.__name__, fn, make, xfail))
        return fn

    return register


# ---- input factories ----------------------------------------------------------------------------


def normal(rng: np.random.Generator, *shape: int, dtype: type = np.float64) -> np.ndarray:
    return rng.standard_normal(shape).astype(dtype)


def away_from_zero(rng: np.random.Generator, *shape: int) -> np.ndarray:
    """Normal-ish values at least 0.2 from zero, so kinks at 0 are never crossed."""
    z = rng.standard_normal(shape)
    return np.sign(z) * (0.2 + np.abs(z))


def arrays(*shapes: tuple[int, ...]) -> Factory:
    """A factory of float64 normal arrays of these shapes."""

    def make(rng: np.random.Generator) -> tuple[Any, ...]:
        return tuple(normal(rng, *shape) for shape in shapes)

    return make


def float32_arrays(*shapes: tuple[int, ...]) -> Factory:
    def make(rng: np.random.Generator) -> tuple[Any, ...]:
        return tuple(normal(rng, *shape, dtype=np.float32) for shape in shapes)

    return make


def one_hot(rng: np.random.Generator, rows: int, classes: int) -> np.ndarray:
    return np.eye(classes)[rng.integers(0, classes, size=rows)]


# ---- models -------------------------------------------------------------------------------------


def _mlp_inputs(rng: np.random.Generator) -> tuple[Any, ...]:
    x = normal(rng, 5, 4)
    w1, b1 = normal(rng, 4, 6) * 0.5, normal(rng, 6) * 0.1
    w2, b2 = normal(rng, 6, 3) * 0.5, normal(rng, 3) * 0.1
    return x, w1, b1, w2, b2, one_hot(rng, 5, 3)


@case(_mlp_inputs)
def mlp_softmax_cross_entropy(x, w1, b1, w2, b2, labels):
    h = np.tanh(x @ w1 + b1)
    logits = h @ w2 + b2
    m = np.max(logits, axis=1, keepdims=True)
    log_z = m + np.log(np.sum(np.exp(logits - m), axis=1, keepdims=True))
    return -np.mean(np.sum(labels * (logits - log_z), axis=1))


def _logistic_inputs(rng: np.random.Generator) -> tuple[Any, ...]:
    x = normal(rng, 8, 3)
    y = (rng.uniform(size=8) > 0.5).astype(np.float64)
    return normal(rng, 3), float(rng.standard_normal()), x, y


@case(_logistic_inputs)
def logistic_regression(w, b, x, y):
    z = x @ w + b
    p = 1.0 / (1.0 + np.exp(-z))
    return -np.mean(y * np.log(p) + (1.0 - y) * np.log(1.0 - p))


def _layer_norm_inputs(rng: np.random.Generator) -> tuple[Any, ...]:
    x = normal(rng, 3, 5)
    return x, 1.0 + 0.1 * normal(rng, 5), 0.1 * normal(rng, 5), normal(rng, 3, 5)


@case(_layer_norm_inputs)
def layer_norm(x, gain, bias, target):
    mu = np.mean(x, axis=-1, keepdims=True)
    var = np.mean((x - mu) ** 2, axis=-1, keepdims=True)
    y = (x - mu) / np.sqrt(var + 1e-5) * gain + bias
    return np.sum((y - target) ** 2)


@case(arrays((4, 6), (6, 3), (6, 3), (6, 3)))
def self_attention(x, wq, wk, wv):
    q = x @ wq
    k = x @ wk
    v = x @ wv
    scores = q @ k.T / np.sqrt(q.shape[1])
    e = np.exp(scores - np.max(scores, axis=-1, keepdims=True))
    attention = e / np.sum(e, axis=-1, keepdims=True)
    return np.sum(np.tanh(attention @ v))


@case(arrays((5, 4), (4, 3)))
def tanh_rnn_fixed_steps(x, w):
    h = np.zeros(3)
    for t in range(x.shape[0]):
        h = np.tanh(x[t] @ w + h)
    return np.sum(h * h)


# ---- broadcasting -------------------------------------------------------------------------------


@case(arrays((3, 1), (1, 4)))
def outer_by_broadcast(a, b):
    return np.sum(np.sin(a * b) + a - b)


def _vectors_and_scalar(rng: np.random.Generator) -> tuple[Any, ...]:
    return normal(rng, 4), normal(rng, 3), float(rng.uniform(0.5, 1.5))


@case(_vectors_and_scalar)
def row_and_column_vectors(row, col, s):
    grid = row[None, :] * s + col[:, None] ** 2
    return np.sum(np.exp(-grid * grid) * row) + s * np.sum(col)


@case(arrays((2, 3, 4), (3, 1), (4,), ()))
def broadcast_three_ways(x, c, r, s):
    return np.mean((x * c + r) * s)


def _vector_and_lr(rng: np.random.Generator) -> tuple[Any, ...]:
    return normal(rng, 5), float(rng.uniform(0.1, 0.9))


@case(_vector_and_lr)
def python_float_step(x, lr: float):
    x_next = x - lr * x * x
    return np.sum(x_next**2) + lr * lr


# ---- reductions ---------------------------------------------------------------------------------


@case(arrays((5,)))
def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


@case(arrays((2, 3, 4)))
def axis_tuple_reductions(x):
    a = np.sum(x * x, axis=(0, 2))
    b = np.mean(np.sin(x), axis=(1, 2), keepdims=True)
    return np.sum(a * np.arange(3)) + np.sum(b * x)


@case(arrays((3, 4)))
def max_and_min_reductions(x):
    return np.sum(np.max(x, axis=1) ** 2) + np.min(x) * np.max(x) - np.sum(np.min(x, axis=0))


@case(arrays((3, 4)))
def method_reductions(x):
    return x.sum() * x.mean(axis=0).sum() + (x * x).max(axis=1).sum()


def _positive(rng: np.random.Generator) -> tuple[Any, ...]:
    return (rng.uniform(0.5, 1.5, size=(3, 4)),)


@case(_positive)
def product_log_sqrt(x):
    return np.sum(np.prod(x, axis=0)) + np.sum(np.log(x) * np.sqrt(x)) + np.sum(x**1.5)


# ---- linear algebra and shapes ------------------------------------------------------------------


@case(arrays((2, 3), (3, 4), (4, 5), (5,)))
def matmul_chain(a, b, c, v):
    return np.sum((a @ b @ c @ v) ** 2) + np.sum(np.dot(a, b) * 0.5)


@case(arrays((4,), (4,)))
def inner_products_of_vectors(u, v):
    return np.dot(u, v) + (u * u) @ v


@case(arrays((3, 4), (3, 4)))
def transposes(x, y):
    return np.sum(x.T @ y) + np.sum(np.transpose(x) * np.transpose(y)) + np.sum((x @ y.T) ** 2)


@case(arrays((2, 3, 4)))
def transpose_axes(x):
    t = np.transpose(x, (2, 0, 1))
    return np.sum(t * np.arange(24).reshape((4, 2, 3))) + np.sum(t[0] ** 2)


@case(arrays((3, 4), (6, 2)))
def reshapes(x, y):
    flat = x.reshape(-1)
    return np.sum(flat * np.ravel(y)) + np.sum(x.reshape((2, 6)) @ y) + np.sum(np.ravel(x.T)[:3])


@case(arrays((2, 3), (2, 3), (4, 3)))
def concatenate_and_stack(x, y, z):
    c = np.concatenate([x, y, z], axis=0)
    s = np.stack([x, y * 2.0], axis=1)
    return (
        np.sum(c**2 * np.arange(8).reshape((8, 1)))
        + np.sum(np.sin(s))
        + np.sum(np.concatenate([x, y], axis=1) ** 3)
    )


@case(arrays((3, 4)))
def expand_and_squeeze(x):
    e = np.expand_dims(x, 0) * np.expand_dims(x, -1)[..., 0]
    return np.sum(np.squeeze(e[:, :1], axis=1) ** 2) + np.sum(np.squeeze(e, axis=0) * x)


# ---- arrangement and selection ------------------------------------------------------------------


@case(arrays((2, 3, 4)))
def moved_and_rolled_axes(x):
    m = np.moveaxis(x, 0, -1) * np.swapaxes(np.rollaxis(x, 2, 1), 1, 2)[:, :, :1].transpose(1, 2, 0)
    return np.sum(m * np.arange(24).reshape((3, 4, 2))) + np.sum(np.roll(x, (1, -2), (0, 2)) * x)


@case(arrays((6, 4), (3,)))
def split_stack_and_pad(x, v):
    top, middle, bottom = np.split(x, [1, 3], axis=0)
    left, right = np.hsplit(middle, 2)
    joined = np.vstack([top[:, :2], left * right, v[:2]])
    padded = np.pad(joined, ((1, 0), (0, 2)), mode="reflect")
    return np.sum(padded**2 * np.arange(20).reshape((5, 4))) + np.sum(np.hstack([bottom[0], v]))


@case(arrays((3, 4)))
def repeat_tile_and_flip(x):
    r = np.repeat(x, (1, 0, 2), axis=0)
    t = np.tile(np.flip(x, axis=1), (1, 2))
    return (
        np.sum(r * np.rot90(np.fliplr(r), 2))
        + np.sum(np.sin(t) * np.arange(8))
        + np.sum(np.atleast_3d(np.flipud(x)) ** 3)
    )


@case(arrays((4, 4), (2, 3, 3)))
def diagonals_and_triangles(a, b):
    lower = np.tril(a, -1)
    return (
        np.trace(a @ a.T)
        + np.sum(np.diag(np.diag(a, 1)) ** 2)
        + np.sum(b.trace(axis1=1, axis2=2) ** 2)
        + np.sum(np.diagonal(b, 0, 0, 2) * 3.0)
        + np.sum(lower * np.triu(a.T, 1))
    )


def _take_inputs(rng: np.random.Generator) -> tuple[Any, ...]:
    return normal(rng, 3, 4), np.array([[0, 3], [3, 3]])


@case(_take_inputs)
def take_with_repeated_indices(x, idx):
    picked = np.take(x, [11, 0, 11]) * x.take(1, axis=0)[:3]
    return np.sum(np.take(x, idx, axis=1) ** 2) + np.sum(picked)


# ---- indexing -----------------------------------------------------------------------------------


@case(arrays((4, 5)))
def integer_and_slice_indexing(x):
    return x[1, 2] * x[-1, -1] + np.sum(x[0] ** 2) + np.sum(x[1:3, ::2] * x[:2, 1::2][:, :1])


@case(arrays((6,)))
def negative_step_slices(x):
    return np.sum(x[::-1] * np.arange(6)) + np.sum(x[4:0:-2] ** 2)


@case(arrays((3, 4)))
def none_indexing(x):
    return np.sum(x[None, :, :] * x[:, None, :]) + np.sum(x[:, 1, None] ** 2)


def _indices_with_repeats(rng: np.random.Generator) -> tuple[Any, ...]:
    return normal(rng, 4, 3), np.array([0, 2, 2, 3, 0])


@case(_indices_with_repeats)
def integer_array_index_with_repeats(x, idx):
    return np.sum(x[idx] ** 2 * np.arange(5).reshape((5, 1))) + np.sum(x[[1, 1, -1]])


# ---- kinks, kept away from ----------------------------------------------------------------------


def _kinked(rng: np.random.Generator) -> tuple[Any, ...]:
    return away_from_zero(rng, 3, 4), away_from_zero(rng, 3, 4) + 0.0


@case(_kinked)
def where_maximum_clip_abs(x, y):
    a = np.where(x > 0, x * y, y * 2.0)
    b = np.maximum(x, 0.0) + np.minimum(x, 2.0 * x)
    c = np.clip(x * 0.1, -0.05, 0.05)
    return np.sum(a + b * y + c * y) + np.sum(np.abs(x) * y)


# ---- helpers and control flow -------------------------------------------------------------------


def _affine(x, w, b):
    return x @ w + b


def _softplus(z):
    return np.log(1.0 + np.exp(z))


@case(arrays((4, 3), (3, 2), (2,)))
def helper_calls(x, w, b):
    return np.sum(_softplus(_affine(x, w, b))) + np.sum(_affine(x, w, b) ** 2)


def _branch_inputs(flag: bool) -> Factory:
    def make(rng: np.random.Generator) -> tuple[Any, ...]:
        return normal(rng, 3, 4), normal(rng, 4), flag

    return make


def _if_on_bool(x, w, square: bool):
    if square:
        y = (x * w) ** 2
    else:
        y = np.sin(x) * w
    return np.sum(y)


@case(_branch_inputs(True))
def if_on_bool_true(x, w, square: bool):
    return _if_on_bool(x, w, square)


@case(_branch_inputs(False))
def if_on_bool_false(x, w, square: bool):
    return _if_on_bool(x, w, square)


def _steps(k: int) -> Factory:
    def make(rng: np.random.Generator) -> tuple[Any, ...]:
        return normal(rng, 4), k

    return make


def _if_elif_on_int(x, k: int):
    if k == 0:
        y = np.exp(x)
    elif k < 3:
        y = x * x * k
    else:
        y = np.tanh(x) * k
    return np.sum(y * x)


@case(_steps(0))
def if_elif_on_int_0(x, k: int):
    return _if_elif_on_int(x, k)


@case(_steps(2))
def if_elif_on_int_2(x, k: int):
    return _if_elif_on_int(x, k)


@case(_steps(5))
def if_elif_on_int_5(x, k: int):
    return _if_elif_on_int(x, k)


@case(_steps(3))
def loop_on_int(x, k: int):
    y = x
    for _ in range(k):
        y = np.sin(y) + x
    return np.sum(y)


@case(_steps(3))
def while_on_int(x, k: int):
    i = 0
    y = x
    while i < k:
        y = y * 0.5 + np.sin(x) * i
        i += 1
    return np.sum(y * y)


@case(_steps(2))
def nested_loops_branching_on_counters(x, k: int):
    y = x
    for i in range(k):
        for j in range(3):
            if i == j:
                y = np.tanh(y) * x
            else:
                y = y + x * j
    return np.sum(y)


# ---- control flow decided by data (Note [Control-flow derivatives]) -----------------------------


def _rnn_inputs(steps: int) -> Factory:
    def make(rng: np.random.Generator) -> tuple[Any, ...]:
        return normal(rng, 4), normal(rng, 4, 4) * 0.5, normal(rng, steps, 4), steps

    return make


@case(_rnn_inputs(7))
def rnn_over_an_int_count(h, w, xs, steps: int):
    for t in range(steps):
        h = np.tanh(h @ w + xs[t])
    return np.sum(h * h)


@case(_rnn_inputs(0))
def rnn_of_no_steps(h, w, xs, steps: int):
    for t in range(steps):
        h = np.tanh(h @ w + xs[t])
    return np.sum(h * h)


@case(lambda rng: (np.abs(normal(rng, 5)) + 0.5,))
def newton_square_root(a):
    x = a
    while np.max(np.abs(x * x - a)) > 1e-12:
        x = 0.5 * (x + a / x)
    return np.sum(x * np.arange(1.0, 6.0))


def _piecewise(x):
    s = np.sum(x)
    if s > 1.0:
        y = np.sin(x) * s
    elif s > -1.0:
        y = x * x * x
    else:
        y = np.exp(x) / s
    return np.sum(y)


@case(lambda rng: (normal(rng, 5) + 1.0,))
def piecewise_on_data_high(x):
    return _piecewise(x)


@case(lambda rng: (normal(rng, 5) * 0.15,))
def piecewise_on_data_middle(x):
    return _piecewise(x)


@case(lambda rng: (normal(rng, 5) - 1.0,))
def piecewise_on_data_low(x):
    return _piecewise(x)


@case(arrays((4,), (4, 4)))
def branch_on_data_inside_a_loop(x, w):
    h = x
    for _t in range(6):
        h = h @ w
        if np.sum(h) > 0:
            h = np.tanh(h)
        else:
            h = h * 0.5 + np.sin(h)
    return np.sum(h * x)


@case(lambda rng: (normal(rng, 3), 4))
def loop_inside_a_branch_on_data(x, n: int):
    if np.sum(x) > 0:
        y = x
        for _i in range(n):
            y = np.sin(y) * x
    else:
        y = x * 2.0
    return np.sum(y)


@case(lambda rng: (normal(rng, 3) * 3.0,))
def break_when_small(x):
    y = x
    for _i in range(100):
        if np.max(np.abs(y)) < 0.1:
            break
        y = np.sin(y) * 0.8
    return np.sum(y * y)


@case(lambda rng: (normal(rng, 3), normal(rng, 3, 3) * 0.4, 3, 2))
def nested_loops_on_int_counts(x, w, n: int, m: int):
    for i in range(n):
        for _j in range(m):
            x = np.sin(x @ w) + x * 0.5
        x = x * (i + 1.0)
    return np.sum(x)


@case(arrays((3,), (10,)))
def ranges_with_start_stop_and_step(x, w):
    s = np.zeros(3)
    for i in range(1, 9, 3):
        s = s + w[i] * np.sin(x * i)
    for i in range(8, 0, -2):
        s = s * w[i] + x
    for _ in range(5, 2):
        s = s * 100.0
    return np.sum(s * s)


@case(arrays((5, 3), (3,)))
def accumulators_over_rows(x, w):
    total = 0.0
    weighted = np.zeros(3)
    for i in range(x.shape[0]):
        total = total + np.sum(x[i] * w) * (i + 1)
        weighted = weighted + x[i] * total
    return total + np.sum(weighted * weighted)


@case(lambda rng: (normal(rng, 2), 3))
def growing_value_in_a_loop(x, n: int):
    y = x
    for i in range(n):
        y = np.concatenate((y, np.sin(y[:2]) * (i + 1.0)))
    return np.sum(y * y)


@case(arrays((4,)))
def while_on_a_float_counter(x):
    t = 0.0
    y = x
    while t < 2.5:
        y = y + np.cos(y) * t
        t = t + 1.0
    return np.sum(y)


@case(_steps(3))
def float_accumulator_in_a_loop(x, k: int):
    # `total` starts a Python float and becomes a 0-d array: its carried type is the join of
    # both, which must still carry the gradient (it was silently zero before).
    total = 0.0
    for i in range(k):
        total = total + np.sum(np.sin(x) * i)
    return total


# ---- products beyond matmul, and sorting ---------------------------------------------------------


@case(arrays((3, 4), (4, 5), (5,)))
def einsum_chain_and_transpose(a, b, v):
    return np.einsum("ij,jk,k->", a, b, v) + np.sum(np.einsum("ij->ji", a) ** 2)


# The carried value grows, so its shape is only known per iteration: shape propagation used to
# keep what it learnt from the first round's narrower type (zeros of length 2), and the loop
# tape of that fixed shape could not hold the longer arrays of later iterations.
@case(arrays((3,), ()))
def loop_grows_and_sizes_a_fresh_array(x, c):
    s = x[:2] * c
    for _ in range(2):
        w = np.zeros(s.shape[0])
        s = s + w
        s = np.concatenate([np.tanh(s), c[None]])
    return np.sum(s)


# np.einsum broadcasts a label of length 1 against a longer one (issue 15, item 8): the
# gradient of such an operand is summed along it.
@case(arrays((1, 3, 2), (4, 2, 5)))
def einsum_broadcast_batch(x, w):
    return np.sum(np.einsum("mnd,mdo->mno", x, w) ** 2)


@case(arrays((4, 3, 2), (1, 2, 5)))
def einsum_broadcast_batch_of_the_second(x, w):
    return np.sum(np.tanh(np.einsum("mnd,mdo->mno", x, w)))


@case(arrays((1, 3), (4, 1), (1,)))
def einsum_broadcast_each_operand(a, b, c):
    return np.sum(np.einsum("ij,ij,j->i", a, b, c) ** 2)


@case(arrays((1, 2, 3), (4, 1, 2)))
def einsum_broadcast_summed_labels(x, y):
    return np.sum(np.einsum("mij,mjk->ik", x, y) ** 2)


@case(arrays((2, 3, 4), (3, 4, 2), (3,)))
def tensordot_inner_outer(a, b, v):
    t = np.tensordot(a, b, axes=([1, 2], [0, 1]))
    return np.sum(t**2) + np.inner(v, v) * np.sum(np.outer(v, t[0]))


@case(arrays((3,), (4, 3)))
def cross_and_kron(u, w):
    c = np.cross(w, u)
    return np.sum(c * c) + np.sum(np.kron(u, w[0]) ** 2)


@case(arrays((4, 5)))
def trimmed_mean_by_sort_and_partition(x):
    s = np.sort(x, axis=1)
    return np.mean(s[:, 1:-1]) + np.sum(np.partition(np.ravel(x), 3)[:3] ** 2)


# ---- float32 ------------------------------------------------------------------------------------


@case(float32_arrays((4, 3), (3,)))
def float32_softmax_entropy(x, w):
    z = x * w
    e = np.exp(z - np.max(z, axis=-1, keepdims=True))
    p = e / np.sum(e, axis=-1, keepdims=True)
    return -np.sum(p * np.log(p))


@case(float32_arrays((3, 4), (4, 2)))
def float32_matmul_tanh(x, w):
    return np.mean(np.tanh(x @ w) ** 2)


# ---- np.linalg ----------------------------------------------------------------------------------
# Decompositions are checked through functions their sign conventions do not change: eigenvector
# and singular vector signs are arbitrary, so only gauge-invariant results are compared.


def _square_and_vector(rng: np.random.Generator) -> tuple[Any, ...]:
    return normal(rng, 3, 3), normal(rng, 3)


@case(_square_and_vector)
def gaussian_log_likelihood(b, x):
    cov = b @ b.T + np.eye(3)
    chol = np.linalg.cholesky(cov)
    z = np.linalg.solve(chol, x)
    _sign, logdet = np.linalg.slogdet(cov)
    return -0.5 * (np.sum(z * z) + logdet)


@case(_square_and_vector)
def inverse_det_and_norms(b, x):
    a = b + 3.0 * np.eye(3)
    y = np.linalg.inv(a) @ x
    return np.linalg.det(a) * 0.01 + np.linalg.norm(y) + np.linalg.norm(a, "fro")


@case(arrays((3, 3), (3,)))
def eigh_gauge_invariant(b, c):
    w, v = np.linalg.eigh(b + b.T + np.diag(np.arange(3.0) * 3.0))
    return np.sum(w * c) + np.sum((v * v) @ c)


@case(arrays((4, 3), (4, 3)))
def svd_reconstruction(a, target):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    rebuilt = (u * s) @ vh
    return np.sum((rebuilt - target) ** 2) + np.sum(np.linalg.svd(a, compute_uv=False))


@case(arrays((4, 3)))
def pinv_and_vector_norms(a):
    p = np.linalg.pinv(a)
    return np.linalg.norm(p, axis=0, ord=1).sum() + np.linalg.norm(np.ravel(p), np.inf)


# ---- np.fft: real losses of complex intermediates (Note [Complex gradients]) ------------------


@case(arrays((8,)))
def rfft_power_spectrum(x):
    return np.sum(np.abs(np.fft.rfft(x)) ** 2)


@case(arrays((3, 4), (3, 4)))
def fft_real_part_weighted(x, w):
    return np.sum(np.real(np.fft.fft(x)) * w)


@case(arrays((3, 4), (3, 4)))
def fft2_shifted_magnitudes(x, w):
    spectrum = np.fft.fftshift(np.fft.fft2(x * w, norm="ortho"))
    return np.sum(np.abs(spectrum)) + np.sum(np.imag(spectrum) * w)


@case(arrays((6, 4)))
def rfft_filter_irfft_round_trip(x):
    spectrum = np.fft.rfft(x, axis=0)
    smoothed = np.fft.irfft(spectrum * np.conj(spectrum) + spectrum, 6, axis=0)
    return np.sum(np.tanh(smoothed)) + np.sum(np.fft.ifftshift(x, axes=1) * x)


@case(arrays((2, 3, 4)))
def fftn_ifftn_complex_chain(x):
    z = np.fft.fftn(x, axes=(0, 2))
    back = np.fft.ifftn(z * z, axes=(0, 2))
    return np.sum(np.real(back) ** 2) + np.sum(np.abs(np.fft.ifft(x, 5, axis=1)))


@case(float32_arrays((8,)))
def float32_rfft_power(x):
    return np.sum(np.abs(np.fft.rfft(x, 6, norm="forward")) ** 2)


# ---- arrays from lists, Python floats where NumPy wants arrays ---------------------------------


def _vector_and_two_floats(rng: np.random.Generator) -> tuple[Any, ...]:
    return normal(rng, 3), float(rng.uniform(0.5, 1.5)), float(rng.uniform(0.5, 1.5))


@case(_vector_and_two_floats)
def array_of_a_list(x, s: float, t):
    # t is unannotated: a Python float all the same (Note [Python numbers for unannotated
    # parameters] in autodiff.script).
    v = np.array([1.0, s, 2.0 * t])
    m = np.array([[x, x * s], [np.sin(x), np.asarray(x) * t]])
    return np.sum(v * np.cos(v)) + np.sum(m**2 * np.arange(12).reshape((2, 2, 3)))


@case(_vector_and_two_floats)
def numpy_reductions_of_python_floats(x, s: float, t):
    return np.sum(s) * np.mean(t * t) + np.max(s + t) + np.sum(x * np.prod(s)) + s + s * t
