"""Sample calls of the `ir.ops.scipy_special` and `ir.ops.scipy_stats` operators (and, from
`tests.scipy_linalg_samples`, of `ir.ops.scipy_linalg`'s), for the checks of
`tests/unit/test_formulas.py`, which joins them to `tests.formula_samples.SAMPLES`. Building them
needs no SciPy; running them does, and those checks skip without it.

Each operator's argument keeps inside its domain and away from its kinks: ``logit`` and
``ndtri`` in (0.1, 0.9), the exponentially scaled Bessel functions away from 0, ``y0`` and the
gamma functions at positive values.
"""

from __future__ import annotations

import importlib
import itertools
from collections.abc import Callable
from typing import Any

import numpy as np

from ir.ops.scipy_special import COMPLEX_REFUSED
from ir.ops.scipy_stats import STATS_OPS
from tests.formula_samples import Draw, Rng, Sample, normal, positive
from tests.formula_samples import _binary as binary
from tests.formula_samples import _unary as unary
from tests.scipy_linalg_samples import LINALG_SAMPLES


def _unit(rng: Rng, *shape: int) -> np.ndarray:
    return rng.uniform(0.1, 0.9, shape)


def _inside_unit(rng: Rng, *shape: int) -> np.ndarray:
    return rng.uniform(-0.9, 0.9, shape)


def _inside_two(rng: Rng, *shape: int) -> np.ndarray:
    return rng.uniform(0.1, 1.9, shape)


def _nonzero(rng: Rng, *shape: int) -> np.ndarray:
    return positive(rng, *shape) * rng.choice([-1.0, 1.0], shape)


def _of_order(order: Callable[[Rng], object], draw: Draw) -> list[Sample]:
    """A scalar order, orders broadcast against the argument, and an argument broadcast
    against the orders (its gradient summed back)."""
    return [
        Sample("scalar-order", lambda r: (order(r), draw(r, 3, 4)), (1,), real=(0,)),
        Sample(
            "orders",
            lambda r: (np.array([order(r), order(r), order(r)]), draw(r, 2, 3)),
            (1,),
            real=(0,),
        ),
        Sample(
            "broadcast-argument",
            lambda r: (np.array([[order(r)], [order(r)]]), draw(r, 3)),
            (1,),
            real=(0,),
        ),
    ]


def _reductions(draw: Draw) -> list[Sample]:
    return [
        Sample(
            f"axis={axis}",
            lambda r, axis=axis: (draw(r, 2, 3, 4), axis),
        )
        for axis in (None, 1, -1, (0, 2))
    ]


def _logsumexp() -> list[Sample]:
    samples = [
        Sample(
            f"axis={axis}-keepdims={keepdims}",
            lambda r, axis=axis, keepdims=keepdims: (
                normal(r, 2, 3, 4),
                axis,
                1.0,
                keepdims,
                False,
            ),
        )
        for axis in (None, 1, -1, (0, 2))
        for keepdims in (False, True)
    ]
    return [
        *samples,
        Sample("b-row", lambda r: (normal(r, 3, 4), 1, positive(r, 4), False, False), (0, 2)),
        Sample("b-wider", lambda r: (normal(r, 3, 1), 0, positive(r, 3, 4), True, False), (0, 2)),
        Sample("b-scalar", lambda r: (normal(r, 3, 4), None, 2.0, False, False), (0, 2)),
    ]


def _signed(rng: Rng, *shape: int) -> np.ndarray:
    """Weights of both signs whose sums along any axis keep away from 0."""
    return normal(rng, *shape) * 0.3 + rng.choice([-1.0, 1.0], shape[-1:]) * 2.0


def _logsumexp_signed() -> list[Sample]:
    return [
        Sample("axis=None", lambda r: (normal(r, 3, 4), None, _signed(r, 3, 4), False), (0, 2)),
        Sample("axis=0-keepdims", lambda r: (normal(r, 3, 4), 0, _signed(r, 3, 4), True), (0, 2)),
        Sample("b-row", lambda r: (normal(r, 2, 3, 4), (0, 1), _signed(r, 4), False), (0, 2)),
        Sample("no-b", lambda r: (normal(r, 3, 4), 1, 1.0, False)),
    ]


def _norm() -> list[Sample]:
    """Every operand differentiated, broadcast against the others, scale positive."""
    return [
        Sample("same", lambda r: (normal(r, 3, 4), normal(r, 3, 4), positive(r, 3, 4)), (0, 1, 2)),
        Sample("row-loc", lambda r: (normal(r, 3, 4), normal(r, 4), positive(r, 3, 1)), (0, 1, 2)),
        Sample("floats", lambda r: (normal(r, 2, 3), 0.3, 1.5), (0, 1, 2)),
        Sample("x-broadcast", lambda r: (normal(r, 4), normal(r, 3, 4), positive(r)), (0, 1, 2)),
        Sample("defaults", lambda r: (normal(r, 3, 4), 0.0, 1.0)),
    ]


def _location_scale(shapes: int, support: Draw, parameter: Draw, wrt_shapes: bool) -> list[Sample]:
    """x = loc + scale * z with z drawn inside the support, ``shapes`` shape parameters drawn
    by ``parameter``; every operand differentiated but the shape parameters of a distribution
    function (refused: Note [Refused operands] in `ir.ops.registry`)."""
    wrt = (
        (0, *range(1, 1 + shapes), 1 + shapes, 2 + shapes)
        if wrt_shapes
        else (0, 1 + shapes, 2 + shapes)
    )

    def same(r: Rng) -> tuple[object, ...]:
        loc, scale = normal(r, 3, 4), positive(r, 3, 4)
        params = [parameter(r, 3, 4) for _ in range(shapes)]
        return (loc + scale * support(r, 3, 4), *params, loc, scale)

    def broadcast(r: Rng) -> tuple[object, ...]:
        loc, scale = normal(r, 4), positive(r, 3, 1)
        params = [parameter(r, 4) for _ in range(shapes)]
        return (loc + scale * support(r, 3, 4), *params, loc, scale)

    def floats(r: Rng) -> tuple[object, ...]:
        params = [float(parameter(r)[()]) for _ in range(shapes)]
        return (0.3 + 1.5 * support(r, 2, 3), *params, 0.3, 1.5)

    def defaults(r: Rng) -> tuple[object, ...]:
        return (support(r, 3, 4), *[parameter(r, 4) for _ in range(shapes)], 0.0, 1.0)

    return [
        Sample("same", same, wrt),
        Sample("broadcast", broadcast, wrt),
        Sample("floats", floats, wrt),
        Sample("defaults", defaults, wrt[: 1 + shapes] if wrt_shapes else (0,)),
    ]


def _shape(low: float, high: float) -> Draw:
    return lambda rng, *shape: rng.uniform(low, high, shape)


def _poisson() -> list[Sample]:
    """Counts (data: only mu is differentiated), mu broadcast, loc shifting the counts."""

    def counts(r: Rng, *shape: int) -> np.ndarray:
        return r.integers(0, 7, shape).astype(float)

    return [
        Sample("same", lambda r: (counts(r, 3, 4), positive(r, 3, 4) * 2.0, 0.0), (1,)),
        Sample("row-mu", lambda r: (counts(r, 3, 4), positive(r, 4) * 2.0, 0.0), (1,)),
        Sample("float-mu", lambda r: (counts(r, 5), 2.5, 1.0), (1,)),
    ]


def _spd(rng: Rng, n: int) -> np.ndarray:
    """A well-conditioned covariance, its upper triangle perturbed: SciPy reads the lower one,
    so the upper triangle's gradient is 0 (finite differences agree)."""
    m = normal(rng, n, n)
    return m @ m.T + n * np.eye(n) + np.triu(normal(rng, n, n), 1)


def _multivariate_normal() -> list[Sample]:
    return [
        Sample("rows", lambda r: (normal(r, 5, 3), normal(r, 3), _spd(r, 3), False), (0, 1, 2)),
        Sample("batch", lambda r: (normal(r, 2, 4, 2), normal(r, 2), _spd(r, 2), False), (0, 1, 2)),
        Sample("one-point", lambda r: (normal(r, 3), normal(r, 3), _spd(r, 3), False), (0, 1, 2)),
        Sample("no-mean", lambda r: (normal(r, 4, 3), 0.0, _spd(r, 3), False), (0, 2)),
        Sample(
            "diagonal", lambda r: (normal(r, 4, 3), normal(r, 3), positive(r, 3), False), (0, 1, 2)
        ),
        Sample("scalar-cov", lambda r: (normal(r, 4, 3), normal(r, 3), 1.5, True), (0, 1, 2)),
        Sample("dim-1", lambda r: (normal(r, 5), normal(r, 1), positive(r), False), (0, 1, 2)),
    ]


def _dirichlet() -> list[Sample]:
    """Points on the simplex: alone, x moved off it by finite differences would be refused by
    SciPy, so x is differentiated where it has one row fewer than alpha (the last completes
    it); a softmax in front keeps it on the simplex in `tests/unit/test_scipy_stats_more.py`."""

    def simplex(r: Rng, *shape: int) -> np.ndarray:
        p = positive(r, *shape)
        return p / np.sum(p, axis=0)

    return [
        Sample("columns", lambda r: (simplex(r, 4, 5), positive(r, 4) + 1.0), (1,)),
        Sample("one-point", lambda r: (simplex(r, 3), positive(r, 3)), (1,)),
        Sample("one-fewer", lambda r: (simplex(r, 4, 5)[:3], positive(r, 4) + 1.0), (0, 1)),
        Sample("one-fewer-point", lambda r: (simplex(r, 3)[:2], positive(r, 3)), (0, 1)),
    ]


# distribution -> (shape parameters, the standardised support, the shape parameters' range)
_CONTINUOUS = {
    "t": (1, normal, _shape(1.5, 6.0)),
    "gamma": (1, positive, _shape(1.5, 4.0)),
    "beta": (2, _unit, _shape(1.5, 4.0)),
    "chi2": (1, positive, _shape(2.5, 6.0)),
}


def _signal_nd() -> list[Sample]:
    """Every mode in 1, 2 and 3 dimensions, the second operand larger in every dimension
    ('valid' swaps them), and each ``method``."""
    shapes = [
        ((6,), (3,)),
        ((3,), (5,)),
        ((4, 5), (2, 3)),
        ((2, 3), (3, 4)),
        ((3, 2, 4), (2, 2, 3)),
    ]
    return [
        Sample(
            f"{mode}-{a}x{b}-{method}",
            lambda r, a=a, b=b, mode=mode, method=method: (
                normal(r, *a),
                normal(r, *b),
                mode,
                method,
            ),
            (0, 1),
        )
        for a, b in shapes
        for mode in ("full", "valid", "same")
        for method in ("direct", "fft")
        if method == "direct" or len(a) == 2
    ]


def _signal_2d() -> list[Sample]:
    """Every mode and boundary; ``fillvalue`` differentiated where the padding reads it."""
    shapes = [((4, 5), (2, 3)), ((3, 3), (3, 2)), ((2, 3), (3, 4))]
    return [
        Sample(
            f"{mode}-{boundary}-{a}x{b}",
            lambda r, a=a, b=b, mode=mode, boundary=boundary: (
                normal(r, *a),
                normal(r, *b),
                mode,
                boundary,
                0.5 if boundary == "fill" else 0.0,
            ),
            (0, 1, 4) if boundary == "fill" and mode != "valid" else (0, 1),
        )
        for a, b in shapes
        for mode in ("full", "valid", "same")
        for boundary in ("fill", "wrap", "symm")
        if mode != "valid" or boundary == "fill"
    ]


SCIPY_SAMPLES: dict[str, list[Sample]] = {
    "aten::special_expit": unary(),
    "aten::special_logit": unary(_unit),
    "aten::special_gammaln": unary(positive),
    "aten::special_gamma": unary(positive),
    "aten::special_digamma": unary(positive),
    "aten::special_erf": unary(),
    "aten::special_erfc": unary(),
    "aten::special_erfinv": unary(_inside_unit),
    "aten::special_erfcinv": unary(_inside_two),
    "aten::special_ndtr": unary(),
    "aten::special_log_ndtr": unary(),
    "aten::special_ndtri": unary(_unit),
    "aten::special_entr": unary(positive),
    "aten::special_i0": unary(),
    "aten::special_i1": unary(),
    "aten::special_i0e": unary(_nonzero),
    "aten::special_i1e": unary(_nonzero),
    "aten::special_j0": unary(),
    "aten::special_j1": unary(),
    "aten::special_y0": unary(positive),
    "aten::special_y1": unary(positive),
    "aten::special_betaln": binary(positive, positive),
    "aten::special_beta": binary(positive, positive),
    "aten::special_xlogy": binary(normal, positive),
    "aten::special_xlog1py": binary(normal, positive),
    "aten::special_rel_entr": binary(positive, positive),
    "aten::special_polygamma": _of_order(lambda r: int(r.integers(0, 3)), positive),
    "aten::special_jv": _of_order(lambda r: float(r.uniform(0.0, 3.0)), positive),
    "aten::special_yn": _of_order(lambda r: int(r.integers(0, 3)), positive),
    "aten::special_yv": _of_order(lambda r: float(r.uniform(0.0, 3.0)), positive),
    "aten::special_iv": _of_order(lambda r: float(r.uniform(0.0, 3.0)), positive),
    "aten::special_ive": _of_order(lambda r: float(r.uniform(0.0, 3.0)), positive),
    "aten::special_multigammaln": [
        Sample("d=1", lambda r: (positive(r, 3, 4), 1)),
        Sample("d=3", lambda r: (positive(r, 3, 4) + 1.0, 3)),
        Sample("float", lambda r: (float(positive(r)[()]) + 1.0, 2)),
    ],
    "aten::special_logsumexp": _logsumexp(),
    "aten::special_logsumexp_signed": _logsumexp_signed(),
    "aten::special_softmax": _reductions(normal),
    "aten::special_log_softmax": _reductions(normal),
    **{
        f"aten::stats_norm_{method}": _norm()
        for method in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf")
    },
    **{
        f"aten::stats_{name}_{method}": _location_scale(
            shapes, support, parameter, method in ("logpdf", "pdf")
        )
        for name, (shapes, support, parameter) in _CONTINUOUS.items()
        for method in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf")
    },
    **{
        f"aten::stats_poisson_{method}": _poisson()
        for method in ("logpmf", "pmf", "cdf", "logcdf", "sf", "logsf")
    },
    "aten::stats_multivariate_normal_logpdf": _multivariate_normal(),
    "aten::stats_multivariate_normal_pdf": _multivariate_normal(),
    "aten::stats_dirichlet_logpdf": _dirichlet(),
    "aten::stats_dirichlet_pdf": _dirichlet(),
    "aten::_stats_mvn_covariance": [
        Sample("matrix", lambda r: (normal(r, 3, 3), 0.0)),
        Sample("diagonal", lambda r: (normal(r, 3), 0.0)),
        Sample("scalar", lambda r: (normal(r), normal(r, 3))),
    ],
    "aten::_stats_mvn_covariance_backward": [
        Sample("matrix", lambda r: (normal(r, 3, 3), normal(r, 3, 3), 0.0)),
        Sample("diagonal", lambda r: (normal(r, 3, 3), normal(r, 3), 0.0)),
        Sample("scalar", lambda r: (normal(r, 3, 3), 1.0, normal(r, 3))),
    ],
    "aten::_stats_dirichlet_complete": [
        Sample("one-fewer", lambda r: (normal(r, 2, 4), positive(r, 3), 1.0)),
        Sample("complete", lambda r: (normal(r, 3), positive(r, 3), 1.0)),
    ],
    "aten::_stats_dirichlet_complete_backward": [
        Sample("one-fewer", lambda r: (normal(r, 3, 4), normal(r, 2, 4), positive(r, 3))),
        Sample("complete", lambda r: (normal(r, 3), normal(r, 3), positive(r, 3))),
    ],
    "aten::signal_convolve": _signal_nd(),
    "aten::signal_correlate": _signal_nd(),
    "aten::signal_convolve2d": _signal_2d(),
    "aten::signal_correlate2d": _signal_2d(),
    **LINALG_SAMPLES,
}

# ---- where a convolution's result lies (Note [Convolution windows] in `ir.ops.convolution`) ----

_STYLES: dict[str, Callable[..., Any]] = {
    "numpy_convolve": lambda sg, a, b, mode: np.convolve(a, b, mode),
    "numpy_correlate": lambda sg, a, b, mode: np.correlate(a, b, mode),
    "scipy": lambda sg, a, b, mode: sg.convolve(a, b, mode),
    "scipy2d": lambda sg, a, b, mode: sg.convolve2d(a, b, mode),
    "scipy_correlate2d": lambda sg, a, b, mode: sg.correlate2d(a, b, mode),
}


def correlate2d_conjugates(shape1: Any, shape2: Any, mode: str) -> bool:
    """Whether SciPy's ``correlate2d`` of complex operands of these shapes is the conjugate of
    ``correlate``'s result (when it swaps them)."""
    sg = importlib.import_module("scipy.signal")
    rng = np.random.default_rng(4)
    a = rng.standard_normal(shape1) + 1j * rng.standard_normal(shape1)
    b = rng.standard_normal(shape2) + 1j * rng.standard_normal(shape2)
    theirs, plain = sg.correlate2d(a, b, mode), sg.correlate(a, b, mode)
    return theirs.shape == plain.shape and np.allclose(theirs, np.conj(plain))


def found_padding(shape1: Any, shape2: Any, mode: str, style: str) -> Any:
    """Where the result of ``style``'s operator lies in the full convolution, found by
    searching it: the zeros before and after it on each axis. For the 2-D functions in modes
    full and same, the full convolution is that of the first operand padded by ``len(k) - 1``
    on each side (with the flipped second operand for correlate2d)."""
    sg = importlib.import_module("scipy.signal")
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal(shape1), rng.standard_normal(shape2)
    result = _STYLES[style](sg, a, b, mode)
    if style.endswith("2d") and mode != "valid":
        a = np.pad(a, [(m - 1, m - 1) for m in shape2])
    if style.startswith("numpy"):
        full = _STYLES[style](sg, a, b, "full")
    else:
        full = sg.convolve(a, b[::-1, ::-1] if style == "scipy_correlate2d" else b, "full")
    ranges = [range(f - r + 1) for f, r in zip(full.shape, result.shape, strict=True)]
    for starts in itertools.product(*ranges):
        window = tuple(slice(s, s + r) for s, r in zip(starts, result.shape, strict=True))
        if np.allclose(full[window], result):
            return tuple(
                (s, f - s - r) for s, f, r in zip(starts, full.shape, result.shape, strict=True)
            )
    raise AssertionError(f"{style} {mode}: no window of the full convolution")


SCIPY_FLOAT32_OPS = tuple(
    op
    for op in SCIPY_SAMPLES
    if op
    not in {
        "aten::special_polygamma",
        "aten::special_yn",
        "aten::special_multigammaln",
        "aten::stats_dirichlet_logpdf",
        "aten::stats_dirichlet_pdf",
    }
)
"""Those whose float32 argument gives a float32 gradient (SciPy's ``polygamma``, ``yn`` and
``multigammaln`` compute in float64; ``scipy.stats`` results are float64, its gradients are cast
to their operands' dtypes; so are ``scipy.linalg.det``'s). SciPy's ``dirichlet`` refuses most
float32 points: they miss the simplex by more than its tolerance, 1e-9
(`tests/unit/test_scipy_stats_more.py` checks float32 concentrations)."""

SCIPY_REAL_ONLY: dict[str, str] = {
    **COMPLEX_REFUSED,
    "aten::special_digamma": "its gradient: SciPy's digamma takes complex values, but its"
    " derivative, polygamma, does not",
    **dict.fromkeys(STATS_OPS, "a distribution of a real variable takes real values"),
}
"""The SciPy operators whose complex operands are refused (Note [Complex SciPy operands] in
`ir.ops.scipy_special`); the others are checked complex with the NumPy operators."""
