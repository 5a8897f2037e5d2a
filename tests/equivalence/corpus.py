"""Plain NumPy functions that the scripted version must reproduce exactly, each with an input
factory ``make(rng, n)``: ``n`` sets the sizes, so two sizes give two call signatures.

Functions whose names start with an underscore are helpers the cases call; only functions
registered with ``@case`` are test cases.
"""

# The corpus spells out if/else statements on purpose: each is a prim::If to compile.
# ruff: noqa: SIM108

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

Factory = Callable[[np.random.Generator, int], tuple[Any, ...]]


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


def arr(rng: np.random.Generator, *shape: int, dtype: type = np.float64) -> np.ndarray:
    return rng.standard_normal(shape).astype(dtype)


def vec(rng: np.random.Generator, n: int) -> tuple[Any, ...]:
    return (arr(rng, n),)


def two_vecs(rng: np.random.Generator, n: int) -> tuple[Any, ...]:
    return arr(rng, n), arr(rng, n)


def mat(rng: np.random.Generator, n: int) -> tuple[Any, ...]:
    return (arr(rng, n, 4),)


def two_mats(rng: np.random.Generator, n: int) -> tuple[Any, ...]:
    return arr(rng, n, 4), arr(rng, n, 4)


def mat_f32(rng: np.random.Generator, n: int) -> tuple[Any, ...]:
    return (arr(rng, n, 4, dtype=np.float32),)


def two_mats_f32(rng: np.random.Generator, n: int) -> tuple[Any, ...]:
    return arr(rng, n, 4, dtype=np.float32), arr(rng, n, 4, dtype=np.float32)


def mat_and_int(rng: np.random.Generator, n: int) -> tuple[Any, ...]:
    return arr(rng, n, 4), int(rng.integers(0, n))


def vec_and_int(rng: np.random.Generator, n: int) -> tuple[Any, ...]:
    return arr(rng, n), int(rng.integers(1, 5))


def ints(rng: np.random.Generator, n: int) -> tuple[Any, ...]:
    return (rng.integers(-10, 10, size=(n, 3)),)


N = -1  # in a shape given to `shapes`, stands for the size n


def shapes(*dims: tuple[int, ...]) -> Factory:
    """A factory of float64 arrays of these shapes, ``N`` replaced by the size."""

    def make(rng: np.random.Generator, n: int) -> tuple[Any, ...]:
        return tuple(arr(rng, *(n if d == N else d for d in shape)) for shape in dims)

    return make


def f32_and_f64(rng: np.random.Generator, n: int) -> tuple[Any, ...]:
    return arr(rng, n, 4, dtype=np.float32), arr(rng, n, 4)


def vec_and_longer_vec(rng: np.random.Generator, n: int) -> tuple[Any, ...]:
    return arr(rng, n), arr(rng, n + 1)


def mat_and_indices(rng: np.random.Generator, n: int) -> tuple[Any, ...]:
    return arr(rng, n, 4), rng.integers(0, n, size=3)


def two_floats(rng: np.random.Generator, n: int) -> tuple[Any, ...]:
    return float(rng.standard_normal()), float(rng.standard_normal())


def one_int(rng: np.random.Generator, n: int) -> tuple[Any, ...]:
    return (int(rng.integers(1, 10)),)


def vec_and_float(rng: np.random.Generator, n: int) -> tuple[Any, ...]:
    return arr(rng, n), float(rng.uniform(0.1, 1.0))


def vec_and_numpy_scalar(rng: np.random.Generator, n: int) -> tuple[Any, ...]:
    return arr(rng, n), np.float64(rng.standard_normal())


def zero_dim_array(rng: np.random.Generator, n: int) -> tuple[Any, ...]:
    return (np.array(rng.standard_normal()),)


def numpy_scalar(rng: np.random.Generator, n: int) -> tuple[Any, ...]:
    return (np.float64(rng.standard_normal()),)


# ---- elementwise --------------------------------------------------------------------------------


@case(two_mats)
def add_mul(x, y):
    return x * y + x


@case(mat)
def unary_chain(x):
    return np.exp(-x) + np.sin(x) * np.cos(x)


@case(mat)
def tanh_squared(x):
    return np.tanh(x) ** 2


@case(mat)
def log_sqrt_abs(x):
    return np.log(np.abs(x) + 1.0) + np.sqrt(np.abs(x))


@case(two_mats)
def safe_division(x, y):
    return (x - y) / (np.abs(y) + 1)


@case(mat)
def sigmoid(x):
    return 1 / (1 + np.exp(-x))


@case(mat)
def floordiv_mod(x):
    return x // 0.5 + x % 0.3


@case(two_mats)
def negation(x, y):
    return -x + (+y) - -x


@case(mat)
def square_and_sign(x):
    return np.square(x) * np.sign(x) + np.tan(x * 0.1)


@case(two_mats_f32)
def float32_stays_float32(x, y):
    return x * 2.5 + y / 3


@case(f32_and_f64)
def float32_plus_float64(x, y):
    return x + y


@case(ints)
def integer_arithmetic(a):
    return a * 3 + a // 2 - a % 4


@case(ints)
def integer_true_division(a):
    return a / 2


@case(two_mats)
def comparison_select(x, y):
    return np.where(x > y, x, y)


@case(two_mats)
def boolean_mask(x, y):
    return np.logical_and(x > 0, y < 0)


@case(two_mats)
def boolean_or_not(x, y):
    return np.logical_or(np.logical_not(x >= 0), y <= 0)


@case(mat)
def power_float(x):
    return np.abs(x) ** 1.5 + 2.0**x


# ---- broadcasting ------------------------------------------------------------------------------


@case(shapes((N, 4), (4,)))
def row_broadcast(x, b):
    return x + b


@case(shapes((N, 4), (N,)))
def column_broadcast(x, c):
    return x * c[:, None]


@case(vec_and_longer_vec)
def outer_by_broadcast(x, y):
    return x[:, None] * y[None, :]


# ---- reductions --------------------------------------------------------------------------------


@case(mat)
def sum_all(x):
    return np.sum(x)


@case(mat)
def sum_axis(x):
    return np.sum(x, axis=0)


@case(mat)
def center_rows(x):
    return x - np.mean(x, axis=1, keepdims=True)


@case(mat)
def max_minus_min(x):
    return np.max(x) - np.min(x, axis=0)


@case(mat)
def method_reductions(x):
    return x.sum(axis=1) + x.mean() + x.max(axis=1)


@case(mat)
def product_axis(x):
    return np.prod(x * 0.5 + 1.0, axis=0)


@case(mat)
def softmax_rows(x):
    shifted = x - np.max(x, axis=1, keepdims=True)
    e = np.exp(shifted)
    return e / np.sum(e, axis=1, keepdims=True)


@case(mat)
def logsumexp(x):
    m = np.max(x)
    return m + np.log(np.sum(np.exp(x - m)))


@case(two_mats)
def mean_squared_error(x, y):
    return np.mean((x - y) ** 2)


@case(mat_f32)
def float32_mean(x):
    return np.mean(x, axis=0)


# ---- linear algebra ----------------------------------------------------------------------------


@case(shapes((N, 4), (4, 2)))
def matmul(x, w):
    return x @ w


@case(shapes((N, 4), (4, 3)))
def dot_matrix(x, w):
    return np.dot(x, w)


@case(vec)
def dot_vector(v):
    return np.dot(v, v)


@case(shapes((N, 4), (4, 5), (5, 2)))
def two_layers(x, w1, w2):
    return np.tanh(x @ w1) @ w2


@case(shapes((N, 4), (4,)))
def matrix_vector(x, v):
    return x @ v


@case(mat)
def gram(x):
    return x.T @ x


@case(mat)
def transpose_function(x):
    return np.transpose(x) * 2.0


# ---- indexing and slicing ----------------------------------------------------------------------


@case(vec)
def differences(x):
    return x[1:] - x[:-1]


@case(vec)
def strided_slices(x):
    return np.sum(x[::2]) + x[::-1]


@case(vec)
def negative_index(x):
    return x[-1] + x[0] * x[-2]


@case(mat)
def two_dim_slices(x):
    return x[1:, :2] * x[:-1, -2:]


@case(mat)
def last_column(x):
    return x[:, -1] + x[:, 0]


@case(mat)
def none_and_ellipsis(x):
    return x[..., None] * x[None, ...][0, ..., None] + x[..., 0][:, None, None]


@case(mat_and_indices)
def integer_array_index(x, idx):
    return x[idx]


@case(mat)
def list_index(x):
    return x[[0, 2]] + x[[-1, 1]]


@case(mat_and_int)
def row_by_int(x, k: int):
    return x[k] * 2.0


@case(mat)
def slice_and_select(x):
    return x[1:3, 2]


@case(vec)
def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


@case(mat)
def write_into_copy(x):
    y = x * 1.0
    y[0] = 5.0
    y[:, 1] = x[:, 2]
    return y


@case(vec)
def mutate_argument(x):
    x[0] = 0.0
    return np.sum(x)


# ---- control flow ------------------------------------------------------------------------------


@case(mat_and_int)
def branch_on_int(x, k: int):
    if k > 1:
        y = x * 2.0
    else:
        y = x - 1.0
    return y


@case(mat)
def branch_on_data(x):
    if np.sum(x) > 0:
        return np.exp(-x)
    return x


@case(vec_and_int)
def if_elif_else(x, k: int):
    if k == 1:
        y = x
    elif k == 2:
        y = x * x
    elif k < 4:
        y = x * x * x
    else:
        y = -x
    return y + 1.0


@case(vec_and_int)
def early_return(x, k: int):
    if k > 2:
        return np.sum(x)
    y = x * 3.0
    return np.sum(y)


@case(two_mats)
def nested_if(x, y):
    if np.mean(x) > 0:
        if np.mean(y) > 0:
            z = x + y
        else:
            z = x - y
    else:
        z = y
    return z


@case(mat)
def for_accumulate_rows(x):
    acc = np.zeros_like(x[0])
    for i in range(x.shape[0]):
        acc = acc + x[i] * i
    return acc


@case(vec)
def range_start_stop_step(x):
    total = 0.0
    for i in range(1, x.shape[0], 2):
        total = total + x[i]
    return total


@case(vec_and_int)
def while_counter(x, k: int):
    i = 0
    y = x
    while i < k:
        y = y * 0.5 + x
        i += 1
    return y


@case(vec)
def while_data_dependent(x):
    y = x * 10.0
    while np.max(np.abs(y)) > 1.0:
        y = y / 2.0
    return y


@case(vec_and_int)
def integer_accumulator(x, k: int):
    total = 0
    for i in range(k):
        total += i * 2
    return x * total


@case(mat)
def augmented_assignment(x):
    acc = x + 0.0
    acc += x
    acc *= 2.0
    acc -= 1.0
    acc /= 3.0
    return acc


@case(two_mats)
def tuple_unpacking(x, y):
    a, b = x + y, x - y
    c, d = b, a
    return c * d


@case(mat)
def nested_loops(x):
    total = 0.0
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            total = total + x[i, j] * (i - j)
    return total


@case(shapes((N, 2, 3), (3, 4), (4, 4)))
def rnn(x, w_in, w_h):
    h = np.zeros((x.shape[1], w_h.shape[0]))
    for t in range(x.shape[0]):
        h = np.tanh(x[t] @ w_in + h @ w_h)
    return np.sum(h)


@case(vec)
def loop_with_break_free_condition(x):
    i = 0
    acc = x
    while i < x.shape[0] and np.sum(acc) < 100.0:
        acc = acc + np.abs(x)
        i = i + 1
    return acc


# ---- helper calls ------------------------------------------------------------------------------


def _affine(x, w, b):
    return x @ w + b


def _layer(x, w, b):
    return np.tanh(_affine(x, w, b))


def _mlp(x, w1, b1, w2, b2):
    return _affine(_layer(x, w1, b1), w2, b2)


def _moments(x):
    return np.mean(x), np.max(x)


def _scale(x, factor=2.0):
    return x * factor


@case(shapes((N, 4), (4, 3), (3,)))
def helper_call(x, w, b):
    return _affine(x, w, b) * 2.0


@case(shapes((N, 4), (4, 5), (5,), (5, 2), (2,)))
def helpers_three_levels(x, w1, b1, w2, b2):
    return np.sum(_mlp(x, w1, b1, w2, b2) ** 2)


@case(mat)
def helper_returning_tuple(x):
    mean, top = _moments(x)
    return top - mean


@case(mat)
def helper_with_default(x):
    return _scale(x) + _scale(x, 0.5) + _scale(x, factor=3.0)


# ---- scalar arguments and results ----------------------------------------------------------------


@case(vec_and_int)
def power_by_int(x, k: int):
    return x**k


@case(vec_and_int)
def int_arithmetic_argument(x, n: int):
    return x * (n + 1) + n // 2


@case(two_floats)
def python_float_result(a: float, b: float):
    return a * b + 1.0


@case(one_int)
def python_int_result(n: int):
    return n * 2 - 1


@case(vec_and_float)
def float_step(x, lr: float):
    return x - lr * x


@case(vec_and_float)
def unannotated_float(x, lr):
    return x * lr


@case(vec_and_numpy_scalar)
def numpy_scalar_argument(x, s):
    return x * s + s


@case(zero_dim_array)
def zero_dim_argument(x):
    return x * 2.0


@case(numpy_scalar)
def numpy_scalar_unary(x):
    return np.tanh(x)


# ---- tuple returns -----------------------------------------------------------------------------


@case(two_mats)
def return_pair(x, y):
    return x + y, x - y


@case(mat)
def return_mixed(x):
    return np.sum(x), x.shape[0], x


# ---- creation ----------------------------------------------------------------------------------


@case(mat)
def zeros_ones(x):
    return np.zeros((x.shape[0], 3)) + np.ones(3)


@case(mat)
def full_matrix(x):
    return np.full((2, x.shape[0]), 1.5)


@case(vec)
def arange_times(x):
    return np.arange(x.shape[0]) * x


@case(vec)
def arange_float(x):
    return np.arange(0.0, 1.0, 0.25) + np.sum(x)


@case(mat)
def eye_matmul(x):
    return np.eye(x.shape[0]) @ x


@case(mat)
def like_creations(x):
    return np.zeros_like(x) + np.ones_like(x) * 2.0 + np.full_like(x, 3.0)


@case(mat)
def creation_with_dtype(x):
    return np.zeros(4, dtype=np.float32) + np.ones(x.shape[1], dtype=np.float32)


# ---- dtypes, attributes, shape ops ---------------------------------------------------------------


@case(mat)
def astype_float32(x):
    return x.astype(np.float32) * 2


@case(mat)
def relu_mask(x):
    return (x > 0).astype(np.float64) * x


@case(mat)
def astype_int(x):
    return (x * 10).astype(np.int64)


@case(mat)
def shape_attributes(x):
    return x.shape[0] * 2 + x.ndim + x.size + len(x)


@case(mat)
def reshape_and_ravel(x):
    return x.reshape(-1) + np.ravel(x.T) + x.reshape((x.shape[0] * 2, -1)).reshape(-1)


@case(two_mats)
def max_min_clip_abs(x, y):
    return np.maximum(x, 0.0) + np.minimum(x, y) + np.clip(y, -0.5, 0.5) + np.abs(x)


@case(mat)
def where_scalar(x):
    return np.where(x > 0, x, 0.0)


@case(two_mats)
def concatenate_lists(x, y):
    return np.concatenate([x, y]) * 1.0 + np.concatenate([y, x], axis=0)


@case(two_mats)
def concatenate_axis1(x, y):
    return np.concatenate([x, y, x], axis=1)


@case(two_mats)
def stack_lists(x, y):
    return np.stack([x, y]) + np.stack([y, x], axis=0)


@case(mat)
def expand_and_squeeze(x):
    return np.squeeze(np.expand_dims(x, 0), axis=0) + np.expand_dims(x, axis=-1)[..., 0]


@case(mat_f32)
def float32_softmax(x):
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


@case(vec_and_float)
def array_of_a_list_of_numbers_and_arrays(x, s: float):
    # np.array of a list stacks its items, numbers as 0-d arrays; nested lists stack first.
    row = np.array([1.0, s, 2.0 * s])
    grid = np.array([[x, 2.0 * x], [x * x, np.sin(x)]])
    return np.sum(row) * grid + np.array((x, x + s))[1]


@case(vec)
def asarray_is_an_alias_of_an_array(x):
    y = np.asarray(x)
    y[0] = 5.0
    z = np.array(x)
    z[1] = -1.0
    return x + y + z + np.asarray(2.5)


@case(two_floats)
def unannotated_python_floats_compute_in_python(a, b):
    # a and b are Python floats: a * b is a float, np.sum(a) a NumPy float64.
    return a * b + a, np.sum(a) + np.mean(b)


@case(one_int)
def unannotated_python_int(n):
    return n * 2 + 1, np.sum(n), np.zeros(n + 1)
