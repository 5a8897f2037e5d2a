"""Sample calls of the `ir.ops.scipy_special` operators, for the checks of
`tests/unit/test_formulas.py`, which joins them to `tests.formula_samples.SAMPLES`. Building them
needs no SciPy; running them does, and those checks skip without it.

Each operator's argument keeps inside its domain and away from its kinks: ``logit`` and
``ndtri`` in (0.1, 0.9), the exponentially scaled Bessel functions away from 0, ``y0`` and the
gamma functions at positive values.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ir.ops.scipy_special import COMPLEX_REFUSED
from ir.ops.scipy_stats import STATS_OPS
from tests.formula_samples import Draw, Rng, Sample, normal, positive
from tests.formula_samples import _binary as binary
from tests.formula_samples import _unary as unary


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
}

SCIPY_FLOAT32_OPS = tuple(
    op
    for op in SCIPY_SAMPLES
    if op not in {"aten::special_polygamma", "aten::special_yn", "aten::special_multigammaln"}
)
"""Those whose float32 argument gives a float32 gradient (SciPy's ``polygamma``, ``yn`` and
``multigammaln`` compute in float64; ``scipy.stats`` results are float64, its gradients are cast
to their operands' dtypes)."""

SCIPY_REAL_ONLY: dict[str, str] = {
    **COMPLEX_REFUSED,
    "aten::special_digamma": "its gradient: SciPy's digamma takes complex values, but its"
    " derivative, polygamma, does not",
    **dict.fromkeys(STATS_OPS, "a distribution of a real variable takes real values"),
}
"""The SciPy operators whose complex operands are refused (Note [Complex SciPy operands] in
`ir.ops.scipy_special`); the others are checked complex with the NumPy operators."""
