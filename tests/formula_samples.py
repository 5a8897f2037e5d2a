"""Sample calls of every operator that has a derivative formula, for the finite-difference checks
of `tests/unit/test_formulas.py`: per operator, operand factories and the operands to
differentiate.

Operands are in schema order, one per node input (``aten::index`` takes its index items
unpacked). A tuple operand (the arrays of ``concatenate``/``stack``) becomes one graph input per
array; differentiating it means differentiating each array. Inputs are float64 and well scaled,
and they keep away from the points where an operator is not smooth, except where a sample
checks a convention: a two-way tie in ``maximum``/``max`` splits evenly, as central differences do.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

Rng = np.random.Generator
Operands = tuple[Any, ...]
Draw = Callable[..., np.ndarray]  # (rng, *shape) -> an array of that shape


@dataclass(frozen=True, slots=True)
class Sample:
    """One call of an operator."""

    label: str  # test id suffix: what the call exercises
    make: Callable[[Rng], Operands]  # the operands, in schema order
    wrt: tuple[int, ...] = (0,)  # positions of the operands to differentiate
    xfail: str = ""  # why the differentiation machinery fails this sample (strict xfail)
    real: tuple[int, ...] = ()  # operands the complex checks keep real (an order of a function)


def normal(rng: Rng, *shape: int) -> np.ndarray:
    return rng.standard_normal(shape)


def positive(rng: Rng, *shape: int) -> np.ndarray:
    """Values in [0.5, 2): safe for log, sqrt, a divisor or a power's base."""
    return rng.uniform(0.5, 2.0, shape)


def nonzero(rng: Rng, *shape: int) -> np.ndarray:
    """Values with magnitude in [0.5, 2) and a random sign: away from abs's kink and 1/x's pole."""
    return positive(rng, *shape) * rng.choice([-1.0, 1.0], shape)


def _complex(rng: Rng, *shape: int) -> np.ndarray:
    """Normal real and imaginary parts: operands of the transforms and of the complex parts."""
    return normal(rng, *shape) + 1j * normal(rng, *shape)


# (n, axis, norm) of the one-axis transforms: n pads, truncates, or keeps the axis.
_ONE_AXIS_FFTS = [
    (None, -1, None),
    (8, -1, "ortho"),
    (4, 1, "forward"),
    (None, 0, "backward"),
    (3, 0, None),
]
# (axes, norm) of the transforms over several axes.
_MANY_AXES_FFTS = [
    (None, (-2, -1), None),
    (None, (0, 2), "ortho"),
    (None, (1,), "forward"),
    ((3, 2), (0, 2), None),
    ((4, 5), (-2, -1), "ortho"),
]
# (s, axes, norm) of the real transforms over several axes: s pads, truncates, or keeps.
_REAL_MANY_AXES_FFTS = [
    (None, None, None),
    ((4, 6), (0, 2), "ortho"),
    ((2, 3), (1, 2), "forward"),
    (None, (1,), None),
]
# (a, b, a @ b) shapes for the two halves of matmul's gradient: matrix, vector, batch
_MATMUL_SHAPES = [
    ((3, 4), (4, 5), (3, 5)),
    ((4,), (4, 5), (5,)),
    ((3, 4), (4,), (3,)),
    ((4,), (4,), ()),
    ((2, 3, 4), (4, 5), (2, 3, 5)),
]


def _real_eigenvalues(rng: Rng, n: int) -> np.ndarray:
    """A dense matrix Q diag(1, 2, ..., n) Q^-1 that is not symmetric: distinct real eigenvalues
    and real eigenvectors with no zero components."""
    q = np.eye(n) + 0.3 * rng.standard_normal((n, n))
    return q @ np.diag(np.arange(1.0, n + 1.0) * 1.5) @ np.linalg.inv(q)


def _mask(rng: Rng, *shape: int) -> np.ndarray:
    return rng.standard_normal(shape) > 0


def _taken(rng: Rng, *shape: int) -> np.ndarray:
    """Which of two choices, or the default (2), ``np.select`` took at each element."""
    return rng.integers(0, 3, shape)


def _ties(rng: Rng) -> tuple[np.ndarray, np.ndarray]:
    """Two (3, 4) arrays equal at every other element: maximum/minimum ties."""
    x, y = normal(rng, 3, 4), normal(rng, 3, 4)
    y[:, ::2] = x[:, ::2]
    return x, y


def _row_tie(rng: Rng) -> tuple[np.ndarray, np.ndarray]:
    """A (3, 4) array and a (4,) array equal to its middle row: ties under broadcasting."""
    x, y = normal(rng, 3, 4), normal(rng, 4)
    x[1] = y
    return x, y


def _two_way_max(rng: Rng, sign: float) -> np.ndarray:
    """(2, 3, 4) with the extremum along axis 1 held twice (at 0 and 2), and once over all."""
    x = normal(rng, 2, 3, 4)
    top = sign * (np.max(sign * x, axis=1) + 1.0)
    x[:, 0, :] = top
    x[:, 2, :] = top
    x[1, 1, 3] = sign * (np.max(sign * x) + 1.0)
    return x


def _remainder_operands(rng: Rng, divisor: np.ndarray | float) -> tuple[np.ndarray, Any]:
    """A dividend whose quotient by ``divisor`` keeps 0.2 away from an integer (where remainder
    jumps)."""
    quotient = rng.integers(-3, 3, (3, 4)) + rng.uniform(0.2, 0.8, (3, 4))
    return quotient * divisor, divisor


def _with_zeros(rng: Rng) -> np.ndarray:
    """(2, 3, 4): one zero in the slice [0, 0, :], two in [1, 2, :] (prod's 0/0 trap)."""
    x = nonzero(rng, 2, 3, 4)
    x[0, 0, 1] = 0.0
    x[1, 2, 0] = x[1, 2, 3] = 0.0
    return x


def _clip_input(rng: Rng, *shape: int) -> np.ndarray:
    """Values at least 0.05 away from the bounds +-0.5 used below."""
    x = normal(rng, *shape)
    return np.where(np.abs(np.abs(x) - 0.5) < 0.05, x + 0.1, x)


def _binary(draw_x: Draw = normal, draw_y: Draw = normal) -> list[Sample]:
    """The broadcasting patterns every binary elementwise operator is checked on."""

    def scalar(draw: Draw, rng: Rng) -> float:
        return float(draw(rng)[()])

    x, y = draw_x, draw_y
    return [
        Sample("same", lambda r: (x(r, 3, 4), y(r, 3, 4)), (0, 1)),
        Sample("row", lambda r: (x(r, 3, 4), y(r, 4)), (0, 1)),
        Sample("column-row", lambda r: (x(r, 3, 1), y(r, 1, 4)), (0, 1)),
        Sample("zero-d", lambda r: (x(r), y(r, 2, 3)), (0, 1)),
        Sample("float-right", lambda r: (x(r, 3, 4), scalar(y, r)), (0, 1)),
        Sample("float-left", lambda r: (scalar(x, r), y(r, 4)), (0, 1)),
        Sample("constant-right", lambda r: (x(r, 3, 4), scalar(y, r)), (0,)),
        Sample("array-right-only", lambda r: (x(r, 3, 1), y(r, 4)), (1,)),
    ]


def _unary(draw: Draw = normal) -> list[Sample]:
    return [
        Sample("matrix", lambda r: (draw(r, 3, 4),)),
        Sample("zero-d", lambda r: (draw(r),)),
        Sample("float", lambda r: (float(draw(r)[()]),)),
    ]


def _reductions(draw: Callable[[Rng], np.ndarray]) -> list[Sample]:
    """Axis None, int, negative int and tuple, each with keepdims False and True."""
    return [
        Sample(
            f"axis={axis}-keepdims={keepdims}",
            lambda r, axis=axis, keepdims=keepdims: (draw(r), axis, keepdims),
        )
        for axis in (None, 1, -1, (0, 2))
        for keepdims in (False, True)
    ]


def _small_tan(rng: Rng, *shape: int) -> np.ndarray:
    return rng.uniform(-1.0, 1.0, shape)


def _inside_unit(rng: Rng, *shape: int) -> np.ndarray:
    """Values in (-0.9, 0.9): away from the poles of arcsin's, arccos's and arctanh's slopes."""
    return rng.uniform(-0.9, 0.9, shape)


def _above_one(rng: Rng, *shape: int) -> np.ndarray:
    """Values in [1.2, 3): arccosh's domain, away from its pole at 1."""
    return rng.uniform(1.2, 3.0, shape)


def _some_zeros(rng: Rng, *shape: int) -> np.ndarray:
    """Normal values, about half of them exactly 0."""
    return np.where(rng.random(shape) > 0.5, 0.0, normal(rng, *shape))


def _both_zero(rng: Rng) -> tuple[np.ndarray, np.ndarray]:
    """Two (3, 4) arrays both 0 at about half the elements (hypot's origin)."""
    x, y = normal(rng, 3, 4), normal(rng, 3, 4)
    zero = rng.random((3, 4)) > 0.5
    return np.where(zero, 0.0, x), np.where(zero, 0.0, y)


def _nans(rng: Rng) -> tuple[np.ndarray, np.ndarray]:
    """Two (3, 4) arrays with NaNs in different places (never both): fmax/fmin skip them."""
    x, y = normal(rng, 3, 4), normal(rng, 3, 4)
    x[0, 1] = x[2, 3] = np.nan
    y[:, 2] = np.nan
    return x, y


def _non_finite(rng: Rng) -> np.ndarray:
    """(3, 4) with a NaN, an inf and a -inf."""
    x = normal(rng, 3, 4)
    x[0, 0], x[1, 2], x[2, 3] = np.nan, np.inf, -np.inf
    return x


def _moments() -> list[Sample]:
    """var/std: the reduction patterns with ddof 0, and ddof 1 on a few."""
    return [
        *[
            Sample(s.label, lambda r, make=s.make: (*make(r), 0))
            for s in _reductions(lambda r: normal(r, 2, 3, 4))
        ],
        Sample("axis=None-ddof=1", lambda r: (normal(r, 2, 3, 4), None, False, 1)),
        Sample("axis=(0,2)-keepdims-ddof=1", lambda r: (normal(r, 2, 3, 4), (0, 2), True, 1)),
        Sample("axis=1-ddof=2", lambda r: (normal(r, 2, 3, 4), 1, False, 2)),
    ]


def _well_conditioned(rng: Rng, *shape: int) -> np.ndarray:
    """Square matrices (the last two dims) near 3 I: far from singular."""
    return normal(rng, *shape) + 3.0 * np.eye(shape[-1])


def _positive_definite(rng: Rng, *shape: int) -> np.ndarray:
    """Symmetric positive definite matrices: B B^T + I."""
    b = normal(rng, *shape)
    return b @ np.swapaxes(b, -1, -2) + np.eye(shape[-1])


def _distinct_eigenvalues(rng: Rng, *shape: int) -> np.ndarray:
    """Symmetric matrices Q diag(w) Q^T with eigenvalues at least 0.5 apart."""
    q, _ = np.linalg.qr(normal(rng, *shape))
    w = np.arange(shape[-1]) - 1.5 + rng.uniform(0.0, 0.5, shape[:-1])
    return (q * w[..., None, :]) @ np.swapaxes(q, -1, -2)


def _distinct_singular_values(rng: Rng, *shape: int) -> np.ndarray:
    """Matrices U diag(s) V^T with singular values 1, 2, 3, ... (perturbed below 0.5)."""
    m, n = shape[-2:]
    k = min(m, n)
    u, _ = np.linalg.qr(normal(rng, *shape[:-2], m, k))
    v, _ = np.linalg.qr(normal(rng, *shape[:-2], n, k))
    s = np.arange(1.0, k + 1) + rng.uniform(0.0, 0.4, (*shape[:-2], k))
    return (u * s[..., None, :]) @ np.swapaxes(v, -1, -2)


def _linalg(draw: Draw, *shapes: tuple[int, ...]) -> list[Sample]:
    return [
        Sample("x".join(map(str, shape)), lambda r, shape=shape: (draw(r, *shape),))
        for shape in shapes
    ]


def _value_and_target(value: np.ndarray) -> Operands:
    """A written value and the argument that received it (a copy of it)."""
    return value, value.copy()


def _orders(rng: Rng, rows: int, cols: int) -> np.ndarray:
    """One permutation of ``range(cols)`` per row (what argsort along the last axis gives)."""
    return np.argsort(rng.random((rows, cols)), axis=-1)


def _convolutions(*shapes: tuple[int, ...]) -> list[Sample]:
    """Each mode for each pair of shapes (``shapes`` lists them in pairs), both operands
    differentiated: ``np.convolve`` and ``np.correlate``, whose longer operand may be either."""
    pairs = list(zip(shapes[::2], shapes[1::2], strict=True))
    return [
        Sample(
            f"{mode}-{a}x{b}",
            lambda r, a=a, b=b, mode=mode: (normal(r, *a), normal(r, *b), mode),
            (0, 1),
        )
        for a, b in pairs
        for mode in ("full", "valid", "same")
    ]


SAMPLES: dict[str, list[Sample]] = {
    "aten::add": _binary(),
    "aten::sub": _binary(),
    "aten::mul": _binary(),
    "aten::div": _binary(normal, nonzero),
    "aten::pow": [
        *_binary(positive, normal),
        Sample("negative-base-int-exponent", lambda r: (normal(r, 3, 4), 3)),
        Sample("negative-base-float-exponent", lambda r: (normal(r, 3, 4), 2.0)),
    ],
    "aten::remainder": [
        Sample("row", lambda r: _remainder_operands(r, positive(r, 4)), (0, 1)),
        Sample("negative-divisor", lambda r: _remainder_operands(r, -positive(r, 3, 1)), (0, 1)),
        Sample("float-divisor", lambda r: _remainder_operands(r, 1.5), (0, 1)),
    ],
    "aten::maximum": [
        *_binary(),
        Sample("ties", _ties, (0, 1)),
        Sample("broadcast-ties", _row_tie, (0, 1)),
        Sample(
            "relu-at-zero", lambda r: (np.where(normal(r, 3, 4) > 1.0, 0.0, normal(r, 3, 4)), 0.0)
        ),
    ],
    "aten::minimum": [
        *_binary(),
        Sample("ties", _ties, (0, 1)),
        Sample("broadcast-ties", _row_tie, (0, 1)),
    ],
    "aten::neg": _unary(),
    "aten::positive": _unary(),
    "aten::exp": _unary(),
    "aten::log": _unary(positive),
    "aten::sqrt": _unary(positive),
    "aten::sin": _unary(),
    "aten::cos": _unary(),
    "aten::tan": _unary(_small_tan),
    "aten::tanh": _unary(),
    "aten::abs": [*_unary(nonzero), Sample("complex", lambda r: (_complex(r, 3, 4),))],
    "aten::sign": _unary(nonzero),
    "aten::reciprocal": _unary(nonzero),
    "aten::square": _unary(),
    "aten::exp2": _unary(),
    "aten::expm1": _unary(),
    "aten::log2": _unary(positive),
    "aten::log10": _unary(positive),
    "aten::log1p": _unary(positive),
    "aten::arcsin": _unary(_inside_unit),
    "aten::arccos": _unary(_inside_unit),
    "aten::arctan": _unary(),
    "aten::sinh": _unary(),
    "aten::cosh": _unary(),
    "aten::arcsinh": _unary(),
    "aten::arccosh": _unary(_above_one),
    "aten::arctanh": _unary(_inside_unit),
    "aten::sinc": [*_unary(), Sample("zeros", lambda r: (_some_zeros(r, 3, 4),))],
    "aten::deg2rad": _unary(),
    "aten::rad2deg": _unary(),
    "aten::fabs": _unary(nonzero),
    "aten::arctan2": _binary(),
    "aten::hypot": [*_binary(), Sample("origin", _both_zero, (0, 1))],
    "aten::logaddexp": _binary(),
    "aten::logaddexp2": _binary(),
    "aten::fmax": [
        *_binary(),
        Sample("ties", _ties, (0, 1)),
        Sample("broadcast-ties", _row_tie, (0, 1)),
        Sample("nans", _nans, (0, 1)),
    ],
    "aten::fmin": [
        *_binary(),
        Sample("ties", _ties, (0, 1)),
        Sample("nans", _nans, (0, 1)),
    ],
    "aten::nan_to_num": [
        Sample("defaults", lambda r: (_non_finite(r), 0.0, None, None)),
        Sample("replacements", lambda r: (_non_finite(r), 1.5, 100.0, -100.0)),
        Sample("finite", lambda r: (normal(r, 3, 4), 0.0, None, None)),
    ],
    "aten::where": [
        Sample(
            "same", lambda r: (r.random((3, 4)) > 0.5, normal(r, 3, 4), normal(r, 3, 4)), (1, 2)
        ),
        Sample(
            "broadcast",
            lambda r: (r.random((3, 1)) > 0.5, normal(r, 4), normal(r, 2, 3, 4)),
            (1, 2),
        ),
        Sample("float-branch", lambda r: (r.random((3, 4)) > 0.5, normal(r, 3, 4), 0.5), (1, 2)),
        Sample("constant-branch", lambda r: (r.random((3, 4)) > 0.5, normal(r, 3, 4), 0.0), (1,)),
    ],
    "aten::clip": [
        Sample("both-bounds", lambda r: (_clip_input(r, 3, 4), -0.5, 0.5)),
        Sample("no-min", lambda r: (_clip_input(r, 3, 4), None, 0.5)),
        Sample("no-max", lambda r: (_clip_input(r, 3, 4), -0.5, None)),
        Sample(
            "array-bounds",
            lambda r: (_clip_input(r, 3, 4), np.full(4, -0.5), np.full((3, 1), 0.5)),
            (0, 1, 2),
        ),
    ],
    "aten::matmul": [
        Sample(f"{a}@{b}", lambda r, a=a, b=b: (normal(r, *a), normal(r, *b)), (0, 1))
        for a, b in [
            ((3, 4), (4, 5)),
            ((4,), (4, 5)),
            ((3, 4), (4,)),
            ((4,), (4,)),
            ((2, 3, 4), (4, 5)),
            ((2, 3, 4), (2, 4, 5)),
            ((2, 1, 3, 4), (3, 4, 2)),
            ((4,), (2, 4, 5)),
            ((2, 3, 4), (4,)),
        ]
    ],
    "aten::dot": [
        *[
            Sample(f"{a}.{b}", lambda r, a=a, b=b: (normal(r, *a), normal(r, *b)), (0, 1))
            for a, b in [
                ((4,), (4,)),
                ((3, 4), (4, 5)),
                ((3, 4), (4,)),
                ((4,), (4, 5)),
                ((), (3, 4)),
                ((2, 3, 4), (4,)),
                ((2, 3, 4), (5, 4, 2)),
                ((4,), (2, 4, 3)),
            ]
        ],
        Sample("float", lambda r: (1.5, normal(r, 3, 4)), (0, 1)),
    ],
    "aten::tensordot": [
        Sample(
            f"{a}x{b}-axes={axes}",
            lambda r, a=a, b=b, axes=axes: (normal(r, *a), normal(r, *b), axes),
            (0, 1),
        )
        for a, b, axes in [
            ((3, 4), (4, 5), 1),
            ((2, 3, 4), (3, 4, 5), 2),
            ((3, 4), (2, 5), 0),
            ((2, 3, 4), (4, 2, 5), ((0, 2), (1, 0))),
            ((3, 4), (5, 3), ((-2,), (-1,))),
        ]
    ],
    "aten::einsum": [
        Sample(
            f"{subscripts}",
            lambda r, subscripts=subscripts, shapes=shapes: (
                subscripts,
                tuple(normal(r, *shape) for shape in shapes),
            ),
            (1,),
        )
        for subscripts, shapes in [
            ("ij,jk->ik", [(3, 4), (4, 5)]),
            ("ij,jk", [(3, 4), (4, 5)]),
            ("ij->", [(3, 4)]),
            ("ij->ji", [(3, 4)]),
            ("ii->i", [(3, 3)]),
            ("ii", [(3, 3)]),
            ("ij,j->ij", [(3, 4), (4,)]),
            ("bij,bjk,k->bi", [(2, 3, 4), (2, 4, 5), (5,)]),
            ("i,i->", [(4,), (4,)]),
            ("iij,k->jk", [(3, 3, 2), (4,)]),
            ("...ij,...jk->...ik", [(2, 3, 4), (4, 2)]),
            ("i...,i...", [(3, 2), (3, 1, 2)]),
            ("...ii->...", [(2, 3, 3)]),
        ]
    ],
    "aten::inner": [
        Sample(f"{a}.{b}", lambda r, a=a, b=b: (normal(r, *a), normal(r, *b)), (0, 1))
        for a, b in [((4,), (4,)), ((3, 4), (4,)), ((2, 3, 4), (5, 4)), ((), (3, 4))]
    ],
    "aten::outer": [
        Sample(f"{a}x{b}", lambda r, a=a, b=b: (normal(r, *a), normal(r, *b)), (0, 1))
        for a, b in [((3,), (4,)), ((2, 3), (4,)), ((), (3,))]
    ],
    "aten::convolve": _convolutions((5,), (3,), (3,), (5,), (4,), (4,), (), (3,)),
    "aten::correlate": _convolutions((5,), (3,), (3,), (5,), (2,), (5,), (4,), (1,)),
    "aten::kron": [
        Sample(f"{a}x{b}", lambda r, a=a, b=b: (normal(r, *a), normal(r, *b)), (0, 1))
        for a, b in [((3,), (2,)), ((2, 3), (3, 2)), ((3,), (2, 2)), ((2, 1, 2), (2, 3))]
    ],
    "aten::cross": [
        Sample(
            f"{a}x{b}-{axes}",
            lambda r, a=a, b=b, axes=axes: (normal(r, *a), normal(r, *b), *axes),
            (0, 1),
        )
        for a, b, axes in [
            ((3,), (3,), (-1, -1, -1, None)),
            ((4, 3), (4, 3), (-1, -1, -1, None)),
            ((4, 3), (3,), (-1, -1, -1, None)),
            ((2, 1, 3), (4, 3), (-1, -1, -1, None)),
            ((3, 4), (4, 3), (0, 1, 0, None)),
            ((3, 2), (3, 1), (0, 0, 0, 0)),
            ((2, 3, 4), (3,), (1, 0, 1, None)),
        ]
    ],
    "aten::sort": [
        Sample(f"axis={axis}", lambda r, axis=axis: (normal(r, 3, 4, 5), axis, None, None))
        for axis in [-1, 0, 1, None]
    ],
    "aten::partition": [
        Sample(
            f"kth={kth}-axis={axis}",
            lambda r, kth=kth, axis=axis: (normal(r, 4, 6), kth, axis),
        )
        for kth, axis in [(2, -1), (1, 0), ((1, 3), 1), (5, None)]
    ],
    # sort's and partition's adjoints, differentiated again: scatter and gather by a permutation.
    "aten::_unpermute": [
        Sample("axis=-1", lambda r: (normal(r, 3, 4), (3, 4), _orders(r, 3, 4), -1)),
        Sample("axis=None", lambda r: (normal(r, 12), (3, 4), r.permutation(12), None)),
    ],
    "aten::_permute": [
        Sample("axis=-1", lambda r: (normal(r, 3, 4), _orders(r, 3, 4), -1)),
        Sample("axis=None", lambda r: (normal(r, 3, 4), r.permutation(12), None)),
    ],
    # einsum's adjoint, differentiated again (second derivatives of every einsum-based product).
    "aten::_einsum_backward": [
        Sample(
            subscripts,
            lambda r, subscripts=subscripts, shapes=shapes, out=out: (
                normal(r, *out),
                subscripts,
                tuple(normal(r, *shape) for shape in shapes),
            ),
            (0, 2),
        )
        for subscripts, shapes, out in [
            ("ij,jk->ik", [(3, 4), (4, 5)], (3, 5)),
            ("ii->i", [(3, 3)], (3,)),
            ("iij,k->jk", [(3, 3, 2), (4,)], (2, 4)),
            ("bij,bjk,k->bi", [(2, 3, 4), (2, 4, 5), (5,)], (2, 3)),
        ]
    ],
    # ... and once more (third derivatives of the einsum-based products).
    "aten::_einsum_double_backward": [
        Sample(
            subscripts,
            lambda r, subscripts=subscripts, shapes=shapes, out=out: (
                tuple(normal(r, *shape) for shape in shapes),
                normal(r, *out),
                subscripts,
                tuple(normal(r, *shape) for shape in shapes),
            ),
            (0, 1, 3),
        )
        for subscripts, shapes, out in [
            ("ij,jk->ik", [(3, 4), (4, 5)], (3, 5)),
            ("ii->i", [(3, 3)], (3,)),
            ("iij,k->jk", [(3, 3, 2), (4,)], (2, 4)),
            ("bij,bjk,k->bi", [(2, 3, 4), (2, 4, 5), (5,)], (2, 3)),
        ]
    ],
    "aten::sum": _reductions(lambda r: normal(r, 2, 3, 4)),
    "aten::mean": _reductions(lambda r: normal(r, 2, 3, 4)),
    "aten::prod": [
        *_reductions(lambda r: nonzero(r, 2, 3, 4)),
        Sample("zeros-axis=None", lambda r: (_with_zeros(r)[0], None, False)),
        Sample("zeros-axis=-1", lambda r: (_with_zeros(r), -1, False)),
        Sample("zeros-axis=(0,2)-keepdims", lambda r: (_with_zeros(r), (0, 2), True)),
    ],
    "aten::max": [
        *_reductions(lambda r: normal(r, 2, 3, 4)),
        Sample("ties-axis=1", lambda r: (_two_way_max(r, 1.0), 1, False)),
        Sample("ties-axis=None", lambda r: (_two_way_max(r, 1.0), None, True)),
    ],
    "aten::min": [
        *_reductions(lambda r: normal(r, 2, 3, 4)),
        Sample("ties-axis=1", lambda r: (_two_way_max(r, -1.0), 1, True)),
        Sample("ties-axis=None", lambda r: (_two_way_max(r, -1.0), None, False)),
    ],
    "aten::var": _moments(),
    "aten::std": _moments(),
    "aten::cumsum": [
        *[
            Sample(f"axis={axis}", lambda r, axis=axis: (normal(r, 2, 3, 4), axis))
            for axis in (None, 0, 1, -1)
        ],
        Sample("zero-d", lambda r: (normal(r), None)),
    ],
    "aten::diff": [
        Sample(f"n={n}-axis={axis}", lambda r, n=n, axis=axis: (normal(r, 3, 4, 5), n, axis))
        for n, axis in [(1, -1), (2, 1), (1, 0), (0, -1), (3, 1), (4, 0)]
    ],
    "aten::reshape": [
        Sample(f"to-{shape}", lambda r, shape=shape: (normal(r, 3, 4), shape))
        for shape in [(2, 6), (-1,), (2, -1, 3), 12, (1, 12, 1)]
    ],
    "aten::ravel": [
        Sample("matrix", lambda r: (normal(r, 3, 4),)),
        Sample("three-d", lambda r: (normal(r, 2, 3, 4),)),
    ],
    "aten::flatten": [
        Sample("matrix", lambda r: (normal(r, 3, 4),)),
        Sample("three-d", lambda r: (normal(r, 2, 3, 4),)),
    ],
    "aten::_einsum_view": [
        Sample("ij->ji", lambda r: (normal(r, 3, 4), "ij->ji")),
        Sample("ii->i", lambda r: (normal(r, 3, 3), "ii->i")),
        Sample("iji->ij", lambda r: (normal(r, 3, 4, 3), "iji->ij")),
        Sample("implicit-ji", lambda r: (normal(r, 3, 4), "ji")),
    ],
    "aten::squeeze": [
        Sample(f"axis={axis}", lambda r, axis=axis: (normal(r, 3, 1, 4, 1), axis))
        for axis in [None, 1, -1, (1, 3)]
    ],
    "aten::expand_dims": [
        Sample(f"axis={axis}", lambda r, axis=axis: (normal(r, 3, 4), axis))
        for axis in [0, 1, -1, (0, 2), (-1, 0)]
    ],
    "aten::transpose": [
        Sample("matrix", lambda r: (normal(r, 3, 4), None)),
        *[
            Sample(f"axes={axes}", lambda r, axes=axes: (normal(r, 2, 3, 4), axes))
            for axes in [None, (1, 0, 2), (2, 0, 1), (-1, 0, 1)]
        ],
    ],
    "aten::full": [
        Sample("float-fill", lambda r: ((3, 4), float(normal(r)), None), wrt=(1,)),
        Sample("row-fill", lambda r: ((3, 4), normal(r, 4), None), wrt=(1,)),
        Sample("zero-d-fill", lambda r: ((2, 3), normal(r), None), wrt=(1,)),
        Sample("to-float32", lambda r: ((2, 3), normal(r, 3), "float32"), wrt=(1,)),
    ],
    "aten::select_by_conditions": [
        Sample(
            "vectors",
            lambda r: ((_mask(r, 5), _mask(r, 5)), (normal(r, 5), normal(r, 5)), normal(r, 5)),
            (1, 2),
        ),
        Sample(
            "broadcast",
            lambda r: ((_mask(r, 3, 4),), (normal(r, 4),), float(normal(r))),
            (1, 2),
        ),
    ],
    "aten::gradient": [
        Sample("vector", lambda r: (normal(r, 5), (), None, 1)),
        Sample("vector-edge-order-2", lambda r: (normal(r, 5), (0.5,), None, 2)),
        Sample("matrix", lambda r: (normal(r, 3, 4), (2.0, 0.5), None, 1)),
        Sample("axes", lambda r: (normal(r, 2, 3, 4), (0.25,), (2, 0), 1)),
        Sample("one-axis", lambda r: (normal(r, 3, 4), (), -1, 2)),
    ],
    "aten::_gradient_backward": [
        Sample("vector", lambda r: (normal(r, 5), (), None, 1)),
        Sample("matrix", lambda r: ((normal(r, 3, 4), normal(r, 3, 4)), (2.0, 0.5), None, 2)),
        Sample("axes", lambda r: ((normal(r, 2, 3, 4), normal(r, 2, 3, 4)), (), (2, 0), 1)),
    ],
    "aten::linspace": [
        Sample("floats", lambda r: (float(normal(r)), float(normal(r)), 5, True, None, 0), (0, 1)),
        Sample("no-endpoint", lambda r: (normal(r, 3), normal(r, 3), 4, False, None, 0), (0, 1)),
        Sample("axis-last", lambda r: (normal(r, 2, 1), normal(r, 3), 4, True, None, -1), (0, 1)),
        Sample("one-sample", lambda r: (normal(r, 2), 1.5, 1, True, None, 1), (0, 1)),
    ],
    "aten::full_like": [
        Sample("float-fill", lambda r: (normal(r, 3, 4), float(normal(r)), None), wrt=(1,)),
        Sample("column-fill", lambda r: (normal(r, 3, 4), normal(r, 3, 1), None), wrt=(1,)),
    ],
    "aten::broadcast_to": [
        Sample("row", lambda r: (normal(r, 4), (3, 4))),
        Sample("column-to-3d", lambda r: (normal(r, 3, 1), (2, 3, 4))),
        Sample("zero-d", lambda r: (normal(r), (2, 2))),
    ],
    "aten::sum_to_size": [
        Sample(f"to-{shape}", lambda r, shape=shape: (normal(r, 2, 3, 4), shape))
        for shape in [(3, 1), (4,), (2, 1, 4), (2, 3, 4), ()]
    ],
    "aten::concatenate": [
        Sample("two-axis=0", lambda r: ((normal(r, 2, 4), normal(r, 3, 4)), 0)),
        Sample("list-axis=0", lambda r: ([normal(r, 2, 4), normal(r, 3, 4)], 0)),
        Sample("list-axis=None", lambda r: ([normal(r, 2, 2), normal(r, 3)], None)),
        Sample("three-axis=1", lambda r: ((normal(r, 3, 1), normal(r, 3, 2), normal(r, 3, 3)), 1)),
        Sample("two-axis=-1", lambda r: ((normal(r, 2, 3, 1), normal(r, 2, 3, 2)), -1)),
        Sample("axis=None", lambda r: ((normal(r, 2, 2), normal(r, 3)), None)),
    ],
    "aten::stack": [
        Sample("two-axis=0", lambda r: ((normal(r, 3, 4), normal(r, 3, 4)), 0)),
        Sample("list-axis=1", lambda r: ([normal(r, 3, 4), normal(r, 3, 4)], 1)),
        Sample("three-axis=1", lambda r: ((normal(r, 3, 4), normal(r, 3, 4), normal(r, 3, 4)), 1)),
        Sample("two-axis=-1", lambda r: ((normal(r, 3, 4), normal(r, 3, 4)), -1)),
    ],
    "aten::moveaxis": [
        Sample(f"{s}->{d}", lambda r, s=s, d=d: (normal(r, 2, 3, 4), s, d))
        for s, d in [(0, -1), (-1, 0), ((0, 1), (-1, 0)), (1, 1)]
    ],
    "aten::swapaxes": [
        Sample(f"{a}<->{b}", lambda r, a=a, b=b: (normal(r, 2, 3, 4), a, b))
        for a, b in [(0, 2), (-1, 1), (1, 1)]
    ],
    "aten::rollaxis": [
        Sample(f"axis={a}-start={s}", lambda r, a=a, s=s: (normal(r, 2, 3, 4), a, s))
        for a, s in [(2, 0), (0, 3), (-1, 1), (1, -1), (0, 0)]
    ],
    "aten::atleast_1d": [
        Sample(f"{len(shape)}-d", lambda r, shape=shape: (normal(r, *shape),))
        for shape in [(), (3,), (2, 3)]
    ],
    "aten::atleast_2d": [
        Sample(f"{len(shape)}-d", lambda r, shape=shape: (normal(r, *shape),))
        for shape in [(), (4,), (3, 4)]
    ],
    "aten::atleast_3d": [
        Sample(f"{len(shape)}-d", lambda r, shape=shape: (normal(r, *shape),))
        for shape in [(), (4,), (3, 4), (2, 3, 4)]
    ],
    "aten::hstack": [
        Sample("vectors", lambda r: ((normal(r, 3), normal(r, 2)),)),
        Sample("zero-d-and-vector", lambda r: ((normal(r), normal(r, 2), normal(r)),)),
        Sample("matrices", lambda r: ((normal(r, 3, 2), normal(r, 3, 1)),)),
        Sample("three-d", lambda r: ((normal(r, 2, 1, 4), normal(r, 2, 3, 4)),)),
    ],
    "aten::column_stack": [
        Sample("vectors", lambda r: ((normal(r, 3), normal(r, 3)),)),
        Sample("matrix-vector-scalar", lambda r: ((normal(r, 1, 2), normal(r, 1), normal(r)),)),
    ],
    "aten::r_concatenate": [
        Sample("vectors", lambda r: ((normal(r, 3), normal(r), normal(r, 2)),)),
        Sample("matrices", lambda r: ((normal(r, 2, 3), normal(r, 1, 3)),)),
    ],
    "aten::c_concatenate": [
        Sample("vector-and-matrix", lambda r: ((normal(r, 3), normal(r, 3, 2)),)),
        Sample("three-d", lambda r: ((normal(r, 2, 3, 1), normal(r, 2, 3, 2)),)),
    ],
    "aten::append": [
        Sample("flattened", lambda r: (normal(r, 2, 3), normal(r, 4), None), (0, 1)),
        Sample("float", lambda r: (normal(r, 3), float(normal(r)), None), (0, 1)),
        Sample("along-axis", lambda r: (normal(r, 2, 3), normal(r, 2, 1), 1), (0, 1)),
    ],
    "aten::vstack": [
        Sample("vectors", lambda r: ((normal(r, 4), normal(r, 4)),)),
        Sample("vector-and-matrix", lambda r: ((normal(r, 4), normal(r, 2, 4)),)),
        Sample("three-d", lambda r: ((normal(r, 2, 3, 4), normal(r, 1, 3, 4)),)),
    ],
    # frexp's exponent is an integer: its gradient is trimmed, the mantissa's checked.
    "aten::frexp": [Sample("vector", lambda r: (normal(r, 6),))],
    "aten::split": [
        Sample("sections-axis=1", lambda r: (normal(r, 4, 6), 2, 1)),
        Sample("indices", lambda r: (normal(r, 5), (1, 3), 0)),
        Sample("indices-axis=-1", lambda r: (normal(r, 2, 3, 6), (2,), -1)),
        Sample("empty-and-past-the-end", lambda r: (normal(r, 6), (2, 2, 9), 0)),
    ],
    "aten::array_split": [
        Sample("uneven", lambda r: (normal(r, 7), 3, 0)),
        Sample("uneven-axis=-1", lambda r: (normal(r, 3, 5), 2, -1)),
        Sample("more-sections-than-elements", lambda r: (normal(r, 2, 3), 4, 0)),
    ],
    "aten::hsplit": [
        Sample("matrix", lambda r: (normal(r, 3, 4), 2)),
        Sample("vector", lambda r: (normal(r, 6), (2,))),
    ],
    "aten::vsplit": [Sample("matrix", lambda r: (normal(r, 4, 3), 2))],
    "aten::dsplit": [Sample("three-d", lambda r: (normal(r, 2, 3, 4), (1,)))],
    "aten::repeat": [
        Sample("flat", lambda r: (normal(r, 3, 4), 2, None)),
        Sample("counts-axis=0", lambda r: (normal(r, 3, 4), (1, 0, 2), 0)),
        Sample("axis=-1", lambda r: (normal(r, 3, 4), 3, -1)),
        Sample("one-count-broadcast", lambda r: (normal(r, 3, 4), (2,), 1)),
        Sample("zero-d", lambda r: (normal(r), 3, None)),
    ],
    "aten::tile": [
        Sample(f"{shape}-by-{reps}", lambda r, shape=shape, reps=reps: (normal(r, *shape), reps))
        for shape, reps in [((3,), (2,)), ((3, 4), (2, 1)), ((4,), (2, 1, 3)), ((2, 3, 4), 2)]
    ],
    "aten::pad": [
        Sample("constant", lambda r: (normal(r, 3, 4), 1, "constant", 0.0)),
        Sample(
            "constant-value",
            lambda r: (normal(r, 3, 4), ((1, 0), (2, 1)), "constant", 0.5),
            (0, 3),
        ),
        Sample("reflect", lambda r: (normal(r, 3, 4), 2, "reflect", 0)),
        Sample("symmetric", lambda r: (normal(r, 3, 4), ((1, 2), (3, 0)), "symmetric", 0)),
        Sample("wrap", lambda r: (normal(r, 5), (2, 3), "wrap", 0)),
        Sample("edge", lambda r: (normal(r, 3, 4), 1, "edge", 0)),
    ],
    "aten::flip": [
        Sample(f"axis={axis}", lambda r, axis=axis: (normal(r, 2, 3, 4), axis))
        for axis in [None, (0,), -1, (0, 2)]
    ],
    "aten::fliplr": [Sample("matrix", lambda r: (normal(r, 3, 4),))],
    "aten::flipud": [
        Sample("matrix", lambda r: (normal(r, 3, 4),)),
        Sample("vector", lambda r: (normal(r, 4),)),
    ],
    "aten::rot90": [
        Sample(f"k={k}-axes={axes}", lambda r, k=k, axes=axes, s=s: (normal(r, *s), k, axes))
        for k, axes, s in [
            (1, (0, 1), (3, 4)),
            (2, (0, 1), (3, 4)),
            (-1, (1, 0), (3, 4)),
            (3, (-1, 0), (2, 3, 4)),
        ]
    ],
    "aten::roll": [
        Sample(f"shift={shift}-axis={axis}", lambda r, s=shift, a=axis: (normal(r, 2, 3, 4), s, a))
        for shift, axis in [(1, None), (-2, 1), ((1, 2), (0, -1)), (5, 2)]
    ],
    "aten::fft_fftshift": [
        Sample(f"axes={axes}", lambda r, axes=axes: (normal(r, 3, 4, 5), axes))
        for axes in [None, 0, (0, 2), (-1,)]
    ],
    "aten::fft_ifftshift": [
        Sample(f"axes={axes}", lambda r, axes=axes: (normal(r, 3, 4, 5), axes))
        for axes in [None, 1, (0, -1)]
    ],
    "aten::fft_fft": [
        Sample(
            f"{draw.__name__}-n={n}-axis={axis}-norm={norm}",
            lambda r, d=draw, n=n, axis=axis, norm=norm: (d(r, 3, 5), n, axis, norm),
        )
        for n, axis, norm in _ONE_AXIS_FFTS
        for draw in (normal, _complex)
    ],
    "aten::fft_ifft": [
        Sample(
            f"{draw.__name__}-n={n}-axis={axis}-norm={norm}",
            lambda r, d=draw, n=n, axis=axis, norm=norm: (d(r, 3, 5), n, axis, norm),
        )
        for n, axis, norm in _ONE_AXIS_FFTS
        for draw in (normal, _complex)
    ],
    "aten::fft_rfft": [
        Sample(
            f"n={n}-axis={axis}-norm={norm}",
            lambda r, n=n, axis=axis, norm=norm: (normal(r, 3, 5), n, axis, norm),
        )
        for n, axis, norm in _ONE_AXIS_FFTS
    ],
    "aten::fft_irfft": [
        Sample(
            f"{draw.__name__}-n={n}-axis={axis}-norm={norm}",
            lambda r, d=draw, n=n, axis=axis, norm=norm: (d(r, 3, 5), n, axis, norm),
        )
        for n, axis, norm in _ONE_AXIS_FFTS
        for draw in (normal, _complex)
    ],
    "aten::fft_fft2": [
        Sample(
            f"{draw.__name__}-s={s_}-axes={axes}-norm={norm}",
            lambda r, d=draw, s_=s_, a=axes, m=norm: (d(r, 2, 3, 4), s_, a, m),
        )
        for s_, axes, norm in _MANY_AXES_FFTS
        for draw in (normal, _complex)
    ],
    "aten::fft_ifft2": [
        Sample(
            f"{draw.__name__}-s={s_}-axes={axes}-norm={norm}",
            lambda r, d=draw, s_=s_, a=axes, m=norm: (d(r, 2, 3, 4), s_, a, m),
        )
        for s_, axes, norm in _MANY_AXES_FFTS
        for draw in (normal, _complex)
    ],
    "aten::fft_fftn": [
        Sample(
            f"{draw.__name__}-s={s_}-axes={axes}-norm={norm}",
            lambda r, d=draw, s_=s_, a=axes, m=norm: (d(r, 2, 3, 4), s_, a, m),
        )
        for s_, axes, norm in _MANY_AXES_FFTS
        for draw in (normal, _complex)
    ],
    "aten::fft_ifftn": [
        Sample(
            f"{draw.__name__}-s={s_}-axes={axes}-norm={norm}",
            lambda r, d=draw, s_=s_, a=axes, m=norm: (d(r, 2, 3, 4), s_, a, m),
        )
        for s_, axes, norm in _MANY_AXES_FFTS
        for draw in (normal, _complex)
    ],
    "aten::real": [
        Sample("real", lambda r: (normal(r, 3, 4),)),
        Sample("complex", lambda r: (_complex(r, 3, 4),)),
    ],
    "aten::imag": [
        Sample("real", lambda r: (normal(r, 3, 4),)),
        Sample("complex", lambda r: (_complex(r, 3, 4),)),
    ],
    "aten::real_if_close": [Sample("real", lambda r: (normal(r, 3, 4), 100))],
    "aten::angle": [
        Sample("real", lambda r: (normal(r, 3, 4), False)),
        Sample("complex", lambda r: (_complex(r, 3, 4), False)),
        Sample("complex-degrees", lambda r: (_complex(r, 5), True)),
    ],
    "aten::conj": [
        Sample("real", lambda r: (normal(r, 3, 4),)),
        Sample("complex", lambda r: (_complex(r, 3, 4),)),
    ],
    "aten::_grad_like": [
        Sample(
            f"{g.__name__}-to-{like.__name__}",
            lambda r, g=g, like=like: (g(r, 3, 4), like(r, 3, 4)),
        )
        for g, like in [(_complex, normal), (_complex, _complex), (normal, _complex)]
    ],
    "aten::_imag_backward": [
        Sample(
            f"{g.__name__}-to-{like.__name__}",
            lambda r, g=g, like=like: (g(r, 3, 4), like(r, 3, 4)),
        )
        for g, like in [(_complex, normal), (_complex, _complex), (normal, _complex)]
    ],
    "aten::_fft_backward": [
        Sample(
            f"{like.__name__}-n={n}-norm={norm}-inverse={inverse}",
            lambda r, like=like, n=n, norm=norm, inverse=inverse: (
                _complex(r, 3, n or 5),
                like(r, 3, 5),
                n,
                -1,
                norm,
                inverse,
            ),
        )
        for like, n, norm, inverse in [
            (normal, None, "ortho", False),
            (normal, 8, None, True),
            (_complex, 3, "forward", False),
            (_complex, None, None, True),
        ]
    ],
    "aten::_rfft_backward": [
        Sample(
            f"n={n}-norm={norm}",
            lambda r, n=n, norm=norm: (
                _complex(r, 3, (n or 5) // 2 + 1),
                normal(r, 3, 5),
                n,
                -1,
                norm,
            ),
        )
        for n, norm in [(None, None), (8, "ortho"), (4, "forward")]
    ],
    "aten::fft_rfftn": [
        Sample(
            f"s={s_}-axes={axes}-norm={norm}",
            lambda r, s_=s_, a=axes, m=norm: (normal(r, 2, 3, 4), s_, a, m),
        )
        for s_, axes, norm in _REAL_MANY_AXES_FFTS
    ],
    "aten::fft_rfft2": [
        Sample(
            f"s={s_}-norm={norm}", lambda r, s_=s_, m=norm: (normal(r, 2, 3, 4), s_, (-2, -1), m)
        )
        for s_, norm in [(None, None), ((4, 6), "ortho"), ((2, 3), "forward")]
    ],
    "aten::fft_irfftn": [
        Sample(
            f"{draw.__name__}-s={s_}-axes={axes}-norm={norm}",
            lambda r, d=draw, s_=s_, a=axes, m=norm: (d(r, 2, 3, 4), s_, a, m),
        )
        for s_, axes, norm in _REAL_MANY_AXES_FFTS
        for draw in (normal, _complex)
    ],
    "aten::fft_irfft2": [
        Sample(
            f"s={s_}-norm={norm}", lambda r, s_=s_, m=norm: (_complex(r, 2, 3, 4), s_, (-2, -1), m)
        )
        for s_, norm in [(None, None), ((4, 5), "ortho")]
    ],
    "aten::_rfftn_backward": [
        Sample(
            f"s={s_}-axes={axes}",
            lambda r, s_=s_, a=axes, out=out: (_complex(r, *out), normal(r, 2, 3, 4), s_, a, None),
        )
        for s_, axes, out in [(None, None, (2, 3, 3)), ((4, 5), (0, 2), (4, 3, 3))]
    ],
    "aten::_irfftn_backward": [
        Sample(
            f"s={s_}-axes={axes}",
            lambda r, s_=s_, a=axes, out=out: (
                normal(r, *out),
                _complex(r, 2, 3, 4),
                s_,
                a,
                "ortho",
            ),
        )
        for s_, axes, out in [(None, None, (2, 3, 6)), ((4, 5), (0, 2), (4, 3, 5))]
    ],
    "aten::_fftn_backward": [
        Sample(
            f"{draw.__name__}-s={s_}-inverse={inverse}",
            lambda r, d=draw, s_=s_, inverse=inverse: (
                _complex(r, 3, 2, 4),
                d(r, 2, 3, 4),
                s_,
                (0, 1),
                "ortho",
                inverse,
            ),
        )
        for s_ in [(3, 2)]
        for inverse in (False, True)
        for draw in (normal, _complex)
    ],
    "aten::_irfft_backward": [
        Sample(
            f"n={n}-m={m}-norm={norm}",
            lambda r, n=n, m=m, norm=norm: (
                normal(r, 3, n or 2 * (m - 1)),
                _complex(r, 3, m),
                n,
                -1,
                norm,
            ),
        )
        for n, m, norm in [(None, 4, None), (5, 4, "ortho"), (8, 3, "forward")]
    ],
    "aten::diag": [
        Sample(f"{shape}-k={k}", lambda r, shape=shape, k=k: (normal(r, *shape), k))
        for shape, k in [((4,), 0), ((4,), 1), ((4,), -2), ((3, 4), 0), ((3, 4), 1), ((4, 3), -1)]
    ],
    "aten::diagonal": [
        Sample(
            f"{shape}-offset={o}-axes={a},{b}",
            lambda r, shape=shape, o=o, a=a, b=b: (normal(r, *shape), o, a, b),
        )
        for shape, o, a, b in [
            ((3, 4), 0, 0, 1),
            ((3, 4), 1, 0, 1),
            ((2, 3, 4), -1, 1, 2),
            ((2, 3, 4), 1, -1, 0),
        ]
    ],
    "aten::trace": [
        Sample(
            f"{shape}-offset={o}-axes={a},{b}",
            lambda r, shape=shape, o=o, a=a, b=b: (normal(r, *shape), o, a, b),
        )
        for shape, o, a, b in [
            ((3, 4), 0, 0, 1),
            ((3, 4), -1, 0, 1),
            ((2, 3, 4), 1, -1, 1),
        ]
    ],
    "aten::tril": [
        Sample(f"{shape}-k={k}", lambda r, shape=shape, k=k: (normal(r, *shape), k))
        for shape, k in [((3, 4), 0), ((3, 4), -1), ((2, 3, 4), 1), ((4,), 0)]
    ],
    "aten::triu": [
        Sample(f"{shape}-k={k}", lambda r, shape=shape, k=k: (normal(r, *shape), k))
        for shape, k in [((3, 4), 0), ((3, 4), 2), ((2, 3, 4), -1), ((4,), 1)]
    ],
    "aten::take": [
        Sample("flat-repeated", lambda r: (normal(r, 3, 4), np.array([0, 5, 5, 11]), None)),
        Sample("axis=0-repeated", lambda r: (normal(r, 3, 4), np.array([2, 0, 2]), 0)),
        Sample("2-d-indices-axis=-1", lambda r: (normal(r, 3, 4), np.array([[1, 1], [3, 0]]), -1)),
        Sample("scalar-index", lambda r: (normal(r, 3, 4), 1, 1)),
        Sample("negative-repeated", lambda r: (normal(r, 5), np.array([-1, -1, 0]), None)),
        Sample("constant-repeated", lambda r: (normal(r, 3, 4), (11, 0, 11), None)),
    ],
    "aten::astype": [
        Sample("to-float32", lambda r: (normal(r, 3, 4), "float32")),
        Sample("to-float64", lambda r: (normal(r, 3, 4), "float64")),
        Sample("from-float32", lambda r: (normal(r, 3, 4).astype(np.float32), "float64")),
    ],
    "aten::cast": [
        Sample("to-float32", lambda r: (normal(r, 3, 4), "float32")),
        Sample("0-d-to-float64", lambda r: (normal(r), "float64")),
        Sample("from-float32", lambda r: (normal(r, 3).astype(np.float32), "float64")),
    ],
    "aten::_tap": [
        Sample("matrix", lambda r: (normal(r, 3, 4), "h")),
        Sample("float", lambda r: (float(normal(r)[()]), "h")),
    ],
    "aten::_tap_hooked": [Sample("matrix", lambda r: (normal(r, 3, 4), "h"))],
    "aten::_checkpoint_in": [
        Sample("matrix", lambda r: (normal(r, 3, 4), "layer")),
        Sample("float", lambda r: (float(normal(r)[()]), "layer")),
    ],
    "aten::_checkpoint_out": [Sample("matrix", lambda r: (normal(r, 3, 4), "layer"))],
    "aten::asarray": [
        Sample("float", lambda r: (float(r.standard_normal()),)),
        Sample("0-d", lambda r: (normal(r),)),
    ],
    "aten::copy": [
        Sample("matrix", lambda r: (normal(r, 3, 4),)),
        Sample("float32", lambda r: (normal(r, 2, 3).astype(np.float32),)),
    ],
    "aten::select": [
        Sample(f"axis={axis}-index={index}", lambda r, a=axis, i=index: (normal(r, 3, 4, 5), a, i))
        for axis, index in [(0, 1), (1, -1), (-1, 2), (-2, -3)]
    ],
    "aten::slice": [
        Sample(
            f"axis={axis}[{start}:{stop}:{step}]",
            lambda r, a=axis, b=start, e=stop, s=step: (normal(r, 5, 6), a, b, e, s),
        )
        for axis, start, stop, step in [
            (0, 1, 4, None),
            (1, None, None, 2),
            (-1, -1, None, -1),
            (0, -2, -5, -1),
            (0, None, -1, None),
            (-2, 4, 0, -2),
        ]
    ],
    "aten::index": [
        Sample("repeated", lambda r: (normal(r, 5, 4), np.array([0, 2, 2, 4, 2]))),
        Sample("full-then-array", lambda r: (normal(r, 5, 4), None, np.array([3, 1, 3]))),
        Sample(
            "broadcast-arrays",
            lambda r: (normal(r, 5, 4), np.array([[0], [2], [0]]), np.array([[1, 1]])),
        ),
        Sample("int-and-array", lambda r: (normal(r, 5, 4), 1, np.array([-1, 0, -1]))),
        Sample(
            "split-arrays",
            lambda r: (normal(r, 3, 4, 5), np.array([0, 2, 0]), None, np.array([4, 4, 1])),
        ),
        Sample("mask", lambda r: (normal(r, 5, 4), r.random((5, 4)) > 0.5)),
    ],
    # Writes (Note [Scatters]): w.r.t. what is written over and what is written (``_written``
    # overwrites its target whole, which so gets no gradient); repeated positions keep the
    # last value (index_put) or add up (add_at).
    "aten::_written": [
        Sample("same-shape", lambda r: (normal(r, 3, 4), normal(r, 3, 4)), (1,)),
        Sample("broadcast-row", lambda r: (normal(r, 3, 4), normal(r, 4)), (1,)),
        Sample("broadcast-column", lambda r: (normal(r, 3, 4), normal(r, 3, 1)), (1,)),
        Sample("python-float", lambda r: (normal(r, 3, 4), 1.5), (1,)),
        Sample("float32-value", lambda r: (normal(r, 2, 3), normal(r, 3).astype(np.float32)), (1,)),
    ],
    "aten::select_scatter": [
        Sample("axis=1-index=-1", lambda r: (normal(r, 3, 4, 5), normal(r, 3, 5), 1, -1), (0, 1)),
        Sample("axis=-1-broadcast", lambda r: (normal(r, 3, 4), normal(r, 1), -1, 2), (0, 1)),
        Sample("axis=0-row", lambda r: (normal(r, 3, 4), normal(r, 4), 0, 0), (0, 1)),
    ],
    "aten::slice_scatter": [
        Sample(
            "axis=1[::2]", lambda r: (normal(r, 5, 6), normal(r, 5, 3), 1, None, None, 2), (0, 1)
        ),
        Sample("axis=0[1:4]-broadcast", lambda r: (normal(r, 5, 6), normal(r, 6), 0, 1, 4, None)),
        Sample(
            "axis=-1[-1::-2]",
            lambda r: (normal(r, 5, 6), normal(r, 5, 1), -1, -1, None, -2),
            (0, 1),
        ),
    ],
    "aten::_einsum_scatter": [
        Sample("diagonal", lambda r: (normal(r, 3, 3), normal(r, 3), "ii->i"), (0, 1)),
        Sample("transpose", lambda r: (normal(r, 3, 4), normal(r, 4, 3), "ij->ji"), (0, 1)),
        Sample("broadcast", lambda r: (normal(r, 3, 3), normal(r, 1), "ii->i"), (0, 1)),
    ],
    "aten::_real_scatter": [
        Sample("complex", lambda r: (_complex(r, 3, 4), normal(r, 3, 4)), (0, 1)),
        Sample("broadcast", lambda r: (_complex(r, 3, 4), normal(r, 4)), (0, 1)),
    ],
    "aten::_imag_scatter": [
        Sample("complex", lambda r: (_complex(r, 3, 4), normal(r, 3, 4)), (0, 1)),
        Sample("broadcast", lambda r: (_complex(r, 3, 4), normal(r, 4)), (0, 1)),
    ],
    "aten::index_put": [
        Sample(
            "repeated",
            lambda r: (normal(r, 5, 4), normal(r, 5, 4), np.array([0, 2, 2, 4, 2])),
            (0, 1),
        ),
        Sample(
            "repeated-broadcast",
            lambda r: (normal(r, 5, 4), normal(r, 4), np.array([0, 2, 2])),
            (0, 1),
        ),
        Sample("python-float", lambda r: (normal(r, 5, 4), 1.5, np.array([1, 1, 3])), (0, 1)),
        Sample(
            "full-then-array",
            lambda r: (normal(r, 5, 4), normal(r, 5, 3), None, np.array([3, 1, 3])),
            (0, 1),
        ),
        Sample(
            "int-and-negative-repeat",
            lambda r: (normal(r, 5, 4), normal(r, 3), 1, np.array([-1, 0, 3])),
            (0, 1),
        ),
        Sample("mask", lambda r: (normal(r, 5, 4), normal(r, 4), r.random(5) > 0.5), (0, 1)),
        Sample(
            "split-arrays-repeated",
            lambda r: (
                normal(r, 3, 4, 2),
                normal(r, 4),
                np.array([0, 2, 0]),
                None,
                np.array([1] * 3),
            ),
            (0, 1),
        ),
        Sample(
            "broadcast-indices",
            lambda r: (normal(r, 3, 4), normal(r, 2, 1), np.array([[0], [2]]), np.array([1, 1, 3])),
            (0, 1),
        ),
    ],
    "aten::add_at": [
        Sample(
            "repeated",
            lambda r: (normal(r, 5, 4), normal(r, 5, 4), np.array([0, 2, 2, 4, 2])),
            (0, 1),
        ),
        Sample(
            "repeated-broadcast",
            lambda r: (normal(r, 5, 4), normal(r, 4), np.array([0, 2, 2])),
            (0, 1),
        ),
        Sample("python-float", lambda r: (normal(r, 5, 4), 1.5, np.array([1, 1, 3])), (0, 1)),
        Sample(
            "int-and-negative-repeat",
            lambda r: (normal(r, 5, 4), normal(r, 3), 1, np.array([-1, 0, 3])),
            (0, 1),
        ),
        Sample(
            "broadcast-indices",
            lambda r: (normal(r, 3, 4), normal(r, 2, 1), np.array([[0], [0]]), np.array([1, 1, 3])),
            (0, 1),
        ),
    ],
    # Helpers of other formulas (second derivatives): w.r.t. the gradient operand, and for the
    # product helpers the operands too.
    "aten::_unreduce": [
        Sample("axis=None", lambda r: (normal(r), (3, 4), None, False)),
        Sample("axis=None-keepdims", lambda r: (normal(r, 1, 1), (3, 4), None, True)),
        Sample("axis=1", lambda r: (normal(r, 2, 4), (2, 3, 4), 1, False)),
        Sample("axis=(0,2)-keepdims", lambda r: (normal(r, 1, 3, 1), (2, 3, 4), (0, 2), True)),
    ],
    "aten::_transpose_backward": [
        Sample(f"axes={axes}", lambda r, axes=axes: (normal(r, 2, 3, 4), axes))
        for axes in [None, (1, 0, 2), (2, 0, 1)]
    ],
    "aten::_matmul_backward_self": [
        Sample(
            f"{a}@{b}",
            lambda r, a=a, b=b, g=g: (normal(r, *g), normal(r, *a), normal(r, *b)),
            (0, 2),
        )
        for a, b, g in _MATMUL_SHAPES
    ],
    "aten::_matmul_backward_other": [
        Sample(
            f"{a}@{b}",
            lambda r, a=a, b=b, g=g: (normal(r, *g), normal(r, *a), normal(r, *b)),
            (0, 1),
        )
        for a, b, g in _MATMUL_SHAPES
    ],
    "aten::_dot_backward": [
        Sample(
            f"{a}.{b}",
            lambda r, a=a, b=b, g=g: (normal(r, *g), normal(r, *a), normal(r, *b)),
            (0, 1, 2),
        )
        for a, b, g in [((4,), (4,), ()), ((3, 4), (4, 5), (3, 5)), ((3, 4), (4,), (3,))]
    ],
    "aten::_prod_backward": [
        Sample(
            f"{label}-axis={axis}-keepdims={keepdims}",
            lambda r, draw=draw, axis=axis, keepdims=keepdims, out=out: (
                normal(r, *out),
                draw(r),
                axis,
                keepdims,
            ),
            (0, 1),
        )
        for label, draw in [("nonzero", lambda r: nonzero(r, 2, 3, 4)), ("zeros", _with_zeros)]
        for axis, keepdims, out in [
            (None, False, ()),
            (-1, False, (2, 3)),
            (1, True, (2, 1, 4)),
            ((0, 2), False, (3,)),
        ]
    ],
    "aten::_select_backward": [
        Sample("axis=1", lambda r: (normal(r, 3, 5), (3, 4, 5), 1, -1)),
    ],
    "aten::_slice_backward": [
        Sample("axis=0[1:4]", lambda r: (normal(r, 3, 6), (5, 6), 0, 1, 4, None)),
        Sample("axis=-1[::-2]", lambda r: (normal(r, 5, 3), (5, 6), -1, None, None, -2)),
    ],
    # Central differences perturb every entry, and a cotangent past count is refused: the
    # samples keep count whole (a square svd); the full_matrices cases run in
    # tests/unit/test_numpy_forms_linalg.py, differentiated twice against central differences.
    "aten::_svd_leading": [
        Sample("axis=-1", lambda r: (normal(r, 2, 3, 3), 3, -1)),
        Sample("axis=-2", lambda r: (normal(r, 4, 4), 4, -2)),
    ],
    "aten::_index_backward": [
        Sample("repeated", lambda r: (normal(r, 5, 4), (5, 4), (np.array([0, 2, 2, 4, 2]),))),
    ],
    "aten::_index_tuple": [
        Sample("repeated", lambda r: (normal(r, 5, 4), (np.array([0, 2, 2]), None))),
    ],
    "aten::_zero_written": [
        Sample("repeated", lambda r: (normal(r, 5, 4), (None, np.array([3, 1, 3])))),
    ],
    "aten::_gather_last_written": [
        Sample("repeated", lambda r: (normal(r, 5, 4), (np.array([0, 2, 2, 4, 2]),))),
    ],
    "aten::_scatter_last_written": [
        Sample("repeated", lambda r: (normal(r, 5, 4), (5, 4), (np.array([0, 2, 2, 4, 2]),))),
    ],
    "aten::_take_backward": [
        Sample("axis=0-repeated", lambda r: (normal(r, 3, 4), (3, 4), np.array([2, 0, 2]), 0)),
    ],
    "aten::_cumsum_backward": [
        Sample("axis=1", lambda r: (normal(r, 3, 4), (3, 4), 1)),
        Sample("axis=None", lambda r: (normal(r, 12), (3, 4), None)),
    ],
    "aten::_concatenate_backward": [
        Sample("axis=1", lambda r: (normal(r, 3, 5), ((3, 2), (3, 3)), 1)),
        Sample("axis=None", lambda r: (normal(r, 10), ((2, 2), (3, 2)), None)),
    ],
    "aten::_stack_backward": [Sample("axis=1", lambda r: (normal(r, 3, 2, 4), 1))],
    "aten::_list_index_backward": [
        Sample("last-of-three", lambda r: (normal(r, 3), [normal(r, 3)] * 3, -1)),
    ],
    "aten::_list_head": [
        Sample("of-three", lambda r: ([normal(r, 2), normal(r, 3), normal(r, 4)],))
    ],
    "aten::_add_lists": [
        Sample(
            "two-each",
            lambda r: ([normal(r, 2), normal(r, 3)], [normal(r, 2), normal(r, 3)]),
            wrt=(0, 1),
        ),
    ],
    "aten::_sequence_as": [
        Sample("tuple-as-list", lambda r: ((normal(r, 2), normal(r, 3, 2)), True)),
        Sample("tuple-as-tuple", lambda r: ((normal(r, 2), normal(r, 3, 2)), False)),
    ],
    # Lists are built by appending to an empty list (`tests.unit.test_formulas`).
    "prim::ListAppend": [
        Sample("to-two", lambda r: ([normal(r, 3), normal(r, 2, 2)], normal(r, 4)), wrt=(0, 1)),
        Sample("to-empty", lambda r: ([], normal(r, 2, 3)), wrt=(1,)),
    ],
    # A tape is filled in place, but the harness builds a new list for every run.
    "prim::TapePush": [
        Sample("to-two", lambda r: ([normal(r, 3), normal(r, 3)], normal(r, 3)), wrt=(0, 1)),
        Sample("to-empty", lambda r: ([], normal(r, 2, 3)), wrt=(1,)),
    ],
    # The argument once written back: its target holds its value (Note [Returned arguments]).
    "prim::WrittenArgument": [
        Sample("matrix", lambda r: _value_and_target(normal(r, 3, 4))),
        Sample("0-d", lambda r: _value_and_target(normal(r))),
    ],
    "prim::ListIndex": [
        Sample("middle", lambda r: ([normal(r, 3), normal(r, 2, 2), normal(r, 4)], 1)),
        Sample("last", lambda r: ([normal(r, 3), normal(r, 2, 2)], -1)),
    ],
    "aten::_repeat_backward": [
        Sample("axis=0", lambda r: (normal(r, 5, 4), (3, 4), np.array([2, 0, 3]), 0)),
        Sample("axis=None", lambda r: (normal(r, 12), (2, 3), 2, None)),
    ],
    "aten::_diagonal_backward": [
        Sample("offset=1", lambda r: (normal(r, 2, 3), (2, 3, 4), 1, 1, 2)),
        Sample("trace-broadcast", lambda r: (normal(r, 2, 1), (2, 3, 3), 0, 1, 2)),
    ],
    "aten::_diag_backward": [
        Sample("of-vector", lambda r: (normal(r, 4, 4), (3,), 1)),
        Sample("of-matrix", lambda r: (normal(r, 3), (3, 4), 0)),
    ],
    "aten::_diff_backward": [Sample("n=2-axis=0", lambda r: (normal(r, 3, 4), (5, 4), 2, 0))],
    "aten::_tile_backward": [
        Sample("(2,3)-by-(2,1,2)", lambda r: (normal(r, 2, 2, 6), (2, 3), (2, 1, 2))),
        Sample("(2,3,2)-by-3", lambda r: (normal(r, 2, 3, 6), (2, 3, 2), 3)),
    ],
    "aten::_join_backward": [
        Sample("hstack-vectors", lambda r: (normal(r, 4), ((), (2,), ()), 0)),
        Sample("hstack-matrices", lambda r: (normal(r, 3, 3), ((3, 2), (3, 1)), 1)),
        Sample("vstack-vector-and-matrix", lambda r: (normal(r, 3, 4), ((4,), (2, 4)), 0)),
        Sample("vstack-three-d", lambda r: (normal(r, 3, 3, 4), ((2, 3, 4), (1, 3, 4)), 0)),
    ],
    "aten::_select_choices_backward": [
        Sample("broadcast", lambda r: (normal(r, 3, 4), _taken(r, 3, 4), ((3, 4), (4,), ()))),
    ],
    "aten::_select_choices_join": [
        Sample("broadcast", lambda r: ((normal(r, 3, 4), normal(r, 4)), _taken(r, 3, 4))),
    ],
    "aten::_column_join_backward": [
        Sample("matrices-and-vector", lambda r: (normal(r, 3, 4), ((3, 2), (3,), (3, 1)), 1)),
        Sample("three-d-last", lambda r: (normal(r, 2, 3, 4), ((2, 3, 1), (2, 3, 3)), -1)),
    ],
    "aten::_column_join": [
        Sample("vector-and-matrix", lambda r: ((normal(r, 4), normal(r, 4, 2)), 1)),
        Sample("three-d-last", lambda r: ((normal(r, 2, 3, 1), normal(r, 2, 3, 2)), -1)),
    ],
    "aten::_join": [
        Sample("vectors-as-rows", lambda r: ((normal(r, 4), normal(r, 2, 4)), 0, 2)),
        Sample("scalars-and-vector", lambda r: ((normal(r), normal(r, 2)), 0, 1)),
    ],
    "aten::_pad_backward": [
        Sample(
            f"{mode}",
            lambda r, mode=mode: (normal(r, 5, 7), (3, 4), ((1, 1), (2, 1)), mode),
        )
        for mode in ["constant", "edge", "reflect", "symmetric", "wrap"]
    ],
    "aten::linalg_inv": _linalg(_well_conditioned, (3, 3), (2, 3, 3)),
    "aten::linalg_det": _linalg(_well_conditioned, (3, 3), (2, 3, 3), (1, 1)),
    "aten::linalg_slogdet": [
        *_linalg(_well_conditioned, (3, 3), (2, 3, 3)),
        Sample("negative-det", lambda r: (-_well_conditioned(r, 3, 3),)),
    ],
    "aten::linalg_solve": [
        Sample(f"{a}\\{b}", lambda r, a=a, b=b: (_well_conditioned(r, *a), normal(r, *b)), (0, 1))
        for a, b in [
            ((3, 3), (3,)),
            ((3, 3), (3, 2)),
            ((2, 3, 3), (3,)),
            ((2, 3, 3), (2, 3, 2)),
            ((2, 3, 3), (3, 2)),
            ((3, 3), (2, 3, 1)),
        ]
    ],
    "aten::linalg_cholesky": _linalg(_positive_definite, (3, 3), (2, 3, 3)),
    # Real distinct eigenvalues: the eigenvectors are real, so their phase (a sign) is
    # continuous and a random cotangent on them is a loss with a gradient.
    "aten::linalg_eig": [
        Sample("3x3", lambda r: (_real_eigenvalues(r, 3),)),
        Sample("2x3x3", lambda r: (np.stack([_real_eigenvalues(r, 3), _real_eigenvalues(r, 3)]),)),
    ],
    "aten::linalg_eigh": [
        Sample("3x3", lambda r: (_distinct_eigenvalues(r, 3, 3), "L")),
        Sample("2x4x4", lambda r: (_distinct_eigenvalues(r, 2, 4, 4), "L")),
        Sample("upper-3x3", lambda r: (_distinct_eigenvalues(r, 3, 3), "U")),
        Sample("upper-2x4x4", lambda r: (_distinct_eigenvalues(r, 2, 4, 4), "U")),
    ],
    "aten::linalg_svd": [
        *[
            Sample(
                "x".join(map(str, shape)),
                lambda r, shape=shape: (_distinct_singular_values(r, *shape), False, True),
            )
            for shape in [(3, 3), (4, 3), (3, 4), (2, 4, 3)]
        ],
        Sample("values-only", lambda r: (_distinct_singular_values(r, 4, 3), True, False)),
        Sample("square-full", lambda r: (_distinct_singular_values(r, 3, 3), True, True)),
    ],
    "aten::linalg_pinv": _linalg(_distinct_singular_values, (4, 3), (3, 4), (2, 3, 3)),
    "aten::linalg_norm": [
        *[
            Sample(f"vector-ord={o}", lambda r, o=o: (nonzero(r, 5), o, None, False))
            for o in [None, 1, 2, 3, 0.5, np.inf, -np.inf]
        ],
        Sample("flat-3d", lambda r: (normal(r, 2, 3, 4), None, None, False)),
        Sample("fro", lambda r: (normal(r, 3, 4), "fro", None, False)),
        Sample("fro-axes-keepdims", lambda r: (normal(r, 2, 3, 4), "fro", (0, 2), True)),
        Sample("axis=1", lambda r: (normal(r, 3, 4), None, 1, False)),
        Sample("axis=-1-keepdims-ord=1", lambda r: (nonzero(r, 3, 4), 1, -1, True)),
        Sample("axis=0-ord=inf", lambda r: (nonzero(r, 3, 4), np.inf, 0, False)),
        Sample("matrix-ord=1", lambda r: (nonzero(r, 3, 4), 1, None, False)),
        Sample("matrix-ord=inf-axes", lambda r: (nonzero(r, 2, 3, 4), np.inf, (1, 2), False)),
        # (row axis, column axis) in the order given: summed over axis 1, maxed over axis 0.
        Sample("matrix-ord=1-axes-reversed", lambda r: (nonzero(r, 3, 4), 1, (1, 0), False)),
        Sample(
            "matrix-ord=-inf-axes-reversed", lambda r: (nonzero(r, 3, 4), -np.inf, (1, 0), False)
        ),
        Sample("matrix-ord=2", lambda r: (normal(r, 3, 4), 2, None, False)),
        Sample("matrix-ord=-2", lambda r: (normal(r, 4, 3), -2, None, False)),
        Sample("matrix-nuc", lambda r: (normal(r, 3, 4), "nuc", None, False)),
        Sample("matrix-ord=2-axes-keepdims", lambda r: (normal(r, 3, 2, 4), 2, (2, 0), True)),
        Sample("matrix-nuc-axes", lambda r: (normal(r, 2, 3, 4), "nuc", (0, 2), False)),
    ],
}

# Operators whose float32 variant is checked too: the gradient must stay float32.
FLOAT32_OPS = (
    "aten::mul",
    "aten::convolve",
    "aten::correlate",
    "aten::tanh",
    "aten::sum",
    "aten::matmul",
    "aten::where",
    "aten::index",
    "aten::_written",
    "aten::select_scatter",
    "aten::index_put",
    "aten::add_at",
    "aten::concatenate",
    "aten::max",
    "aten::mean",
    "aten::prod",
    "aten::dot",
    "aten::tensordot",
    "aten::einsum",
    "aten::kron",
    "aten::cross",
    "aten::sort",
    "aten::clip",
    "aten::astype",
    "aten::split",
    "aten::hstack",
    "aten::pad",
    "aten::take",
    "aten::trace",
    "aten::repeat",
    "aten::var",
    "aten::std",
    "aten::cumsum",
    "aten::diff",
    "aten::sinc",
    "aten::logaddexp",
    "aten::hypot",
    "aten::fmax",
    "aten::nan_to_num",
    "aten::linalg_inv",
    "aten::linalg_solve",
    "aten::linalg_eigh",
    "aten::linalg_svd",
    "aten::linalg_norm",
    "aten::fft_fftshift",
    "aten::fft_fft",
    "aten::fft_rfft",
    "aten::fft_irfft",
    "aten::fft_fftn",
    "aten::real",
    "aten::linspace",
    "aten::column_stack",
    "aten::append",
    "aten::r_concatenate",
    "aten::c_concatenate",
    "aten::gradient",
    "aten::angle",
    "aten::fft_rfftn",
    "aten::fft_irfftn",
    "aten::linalg_eig",
)
