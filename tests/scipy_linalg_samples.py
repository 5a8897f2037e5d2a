"""Sample calls of the `ir.ops.scipy_linalg` operators, joined to `tests.scipy_samples`'s for the
checks of `tests/unit/test_formulas.py` (which skip without SciPy).

Matrices keep away from singularity (near 3 I, or B B^T + I where a factor or a square root is
taken). The solves that read one triangle get full matrices, so that finite differences see
that the other triangle moves nothing; the pairs ``cho_solve`` and ``lu_solve`` take are made
here, their unread entries filled with noise, without calling SciPy.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tests.formula_samples import Rng, Sample, _positive_definite, _well_conditioned, normal

# (a's shape, b's shape): one vector, columns, a stack against one vector, stacks, and b's
# stack broadcast against one matrix.
SOLVE_SHAPES = [
    ((3, 3), (3,)),
    ((3, 3), (3, 2)),
    ((2, 3, 3), (3,)),
    ((2, 3, 3), (2, 3, 2)),
    ((3, 3), (2, 3, 1)),
]


def _label(a: tuple[int, ...], b: tuple[int, ...]) -> str:
    return f"{'x'.join(map(str, a))}\\{'x'.join(map(str, b))}"


def _solve_triangular() -> list[Sample]:
    samples = [
        Sample(
            _label(a, b),
            lambda r, a=a, b=b: (_well_conditioned(r, *a), normal(r, *b), 0, False, False, True),
            (0, 1),
        )
        for a, b in SOLVE_SHAPES
    ]
    options: list[tuple[Any, bool, bool]] = [
        ("T", True, False),
        (2, False, True),
        ("C", True, True),
        (1, False, False),
        ("N", True, False),
    ]
    samples += [
        Sample(
            f"trans={trans!r}-lower={lower}-unit={unit}",
            lambda r, trans=trans, lower=lower, unit=unit: (
                _well_conditioned(r, 3, 3),
                normal(r, 3, 2),
                trans,
                lower,
                unit,
                True,
            ),
            (0, 1),
        )
        for trans, lower, unit in options
    ]
    return samples


def _factor(lower: bool) -> list[Sample]:
    return [
        Sample(
            f"{'x'.join(map(str, shape))}-lower={lower}",
            lambda r, shape=shape: (_positive_definite(r, *shape), lower, True),
        )
        for shape in ((3, 3), (2, 3, 3))
    ]


def _cholesky_pair(r: Rng, lower: bool, *shape: int) -> tuple[np.ndarray, bool]:
    """A Cholesky factor in one triangle (a diagonal near 3), noise in the other."""
    full = _well_conditioned(r, *shape)
    noise = normal(r, *shape)
    if lower:
        return np.tril(full) + np.triu(noise, 1), True
    return np.triu(full) + np.tril(noise, -1), False


def _cho_solve() -> list[Sample]:
    return [
        Sample(
            f"{_label(a, b)}-lower={lower}",
            lambda r, a=a, b=b, lower=lower: (_cholesky_pair(r, lower, *a), normal(r, *b), True),
            (0, 1),
        )
        for a, b in SOLVE_SHAPES
        for lower in (False, True)
    ]


def _lu_pair(r: Rng, *shape: int) -> tuple[np.ndarray, np.ndarray]:
    """LU factors near 3 I and valid LAPACK pivots (row i swapped with a row at or below it)."""
    n = shape[-1]
    pivots = np.stack([r.integers(i, n, shape[:-2]) for i in range(n)], -1).astype(np.int32)
    return _well_conditioned(r, *shape) * 0.5 + 1.5 * np.eye(n), pivots


def _lu_solve() -> list[Sample]:
    samples = [
        Sample(
            _label(a, b),
            lambda r, a=a, b=b: (_lu_pair(r, *a), normal(r, *b), 0, True),
            (0, 1),
        )
        for a, b in SOLVE_SHAPES
    ]
    return samples + [
        Sample(
            f"trans={trans!r}",
            lambda r, trans=trans: (_lu_pair(r, 3, 3), normal(r, 3, 2), trans, True),
            (0, 1),
        )
        for trans in (1, 2)  # lu_solve takes no letters
    ]


def _sylvester(a: tuple[int, ...], b: tuple[int, ...], q: tuple[int, ...], label: str) -> Sample:
    return Sample(
        label,
        lambda r: (_well_conditioned(r, *a), _well_conditioned(r, *b), normal(r, *q)),
        (0, 1, 2),
    )


def _solve() -> list[Sample]:
    samples = [
        Sample(
            _label(a, b),
            lambda r, a=a, b=b: (_well_conditioned(r, *a), normal(r, *b), False, True, None, False),
            (0, 1),
        )
        for a, b in SOLVE_SHAPES
    ]
    structures: list[tuple[Any, bool, bool]] = [
        ("gen", False, True),
        ("sym", False, False),
        ("symmetric", True, False),
        ("her", True, True),
        ("pos", False, False),
        ("positive definite", True, False),
        ("upper triangular", True, False),
        ("lower triangular", False, True),
        ("diagonal", False, False),
        ("tridiagonal", False, True),
    ]
    return samples + [
        Sample(
            f"assume_a={assume_a}-lower={lower}-transposed={transposed}",
            lambda r, assume_a=assume_a, lower=lower, transposed=transposed: (
                _well_conditioned(r, 3, 3) + 2.0 * np.eye(3),
                normal(r, 3, 2),
                lower,
                True,
                assume_a,
                transposed,
            ),
            (0, 1),
        )
        for assume_a, lower, transposed in structures
    ]


def _matrices(draw: Any, *rest: Any) -> list[Sample]:
    return [
        Sample("x".join(map(str, shape)), lambda r, shape=shape: (draw(r, *shape), *rest))
        for shape in ((3, 3), (2, 3, 3))
    ]


def _halved(r: Rng, *shape: int) -> np.ndarray:
    return normal(r, *shape) * 0.5


LINALG_SAMPLES: dict[str, list[Sample]] = {
    "aten::scipy_solve_triangular": _solve_triangular(),
    "aten::scipy_cholesky": _factor(False) + _factor(True),
    "aten::scipy_cho_factor": _factor(False) + _factor(True),
    "aten::scipy_cho_solve": _cho_solve(),
    "aten::scipy_lu_factor": _matrices(normal, True),  # rows pivot
    "aten::scipy_lu_solve": _lu_solve(),
    "aten::scipy_expm": _matrices(_halved),
    "aten::scipy_sqrtm": _matrices(_positive_definite),
    "aten::scipy_solve_sylvester": [
        _sylvester((3, 3), (2, 2), (3, 2), "3x3-2x2"),
        _sylvester((2, 3, 3), (2, 2), (3, 2), "stacked-a"),
        _sylvester((3, 3), (3, 3), (2, 3, 3), "stacked-q"),
    ],
    "aten::scipy_det": _matrices(normal, True),
    "aten::scipy_solve": _solve(),
}
