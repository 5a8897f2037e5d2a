"""``scipy.linalg`` as operators: triangular, Cholesky and LU solves, ``cholesky``, ``expm``,
``sqrtm``, ``solve_sylvester``, ``det`` and ``solve`` (``inv`` is ``np.linalg.inv``'s record:
SciPy's computes the same, in the same dtypes).

Each kernel calls SciPy, found as Note [SciPy spellings] in `frontend.resolve` says, so results
are SciPy's, stacks of matrices included (SciPy 1.15 and later broadcast leading axes as NumPy's
solve does: a 1-d ``b`` is one vector). ``cholesky`` differs from NumPy's in its default
(``lower=False``: the upper factor, from the upper triangle), and ``det`` in its dtype (float64
for a float32 matrix), so each has its own operator. ``cho_factor`` and ``lu_factor`` return
SciPy's pairs, which ``cho_solve`` and ``lu_solve`` take whole: ``(c, lower)`` and ``(lu, piv)``.

Note [Real scipy.linalg]
These operators are real: their derivative formulas are written for real matrices, so a complex
operand is refused when the graph is specialised, naming the operator. ``solve``'s ``assume_a``
may be general, symmetric (``"sym"``, ``"her"``) or positive definite (``"pos"``), which read one
triangle (``lower``) as a symmetric matrix, or triangular, diagonal or tridiagonal, which read
those entries as they are; ``"banded"`` is refused (SciPy finds the bands from the values), as
``sqrtm`` of a real matrix whose square root is complex is at run time. Each entry SciPy leaves
unread gets no gradient. ``scipy.linalg.inv`` is NumPy's record, which takes none of SciPy's
options (``assume_a``, ``lower``, ``overwrite_a``, ``check_finite``): each is refused, naming it;
the other operators accept ``check_finite``.

>>> float(scipy_det(np.eye(2) * 3.0, check_finite=True))
9.0
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from ir.errors import ShapeError
from ir.ops.promotion import probe_dtype
from ir.ops.registry import NOT_CONSTANT, OPS, Derivative, ShapeRule, register_op
from ir.ops.shape_rules import Shape, as_tensor, broadcast_shapes, tensor
from ir.types import ANY, BOOL, TensorType, TupleType, Type

SOLVE_STRUCTURES = {
    None: "general",
    "gen": "general",
    "general": "general",
    "sym": "symmetric",
    "symmetric": "symmetric",
    "her": "symmetric",
    "hermitian": "symmetric",
    "pos": "symmetric",
    "positive definite": "symmetric",
    "upper triangular": "upper",
    "lower triangular": "lower",
    "diagonal": "diagonal",
    "tridiagonal": "tridiagonal",
}
"""``solve``'s ``assume_a`` values differentiated here, and how each reads ``a``: whole, one
triangle as a symmetric matrix (a real Hermitian one is symmetric, and a positive definite one
is read as a symmetric one is), or the entries of a triangle or band (Note [Real
scipy.linalg])."""


def _linalg() -> Any:
    return importlib.import_module("scipy.linalg")


def _real_matrices(name: str, x: TensorType, square: bool = True) -> Shape | None:
    """The shape of a stack of (square) matrices, a wrong one refused as SciPy refuses it, a
    complex one as Note [Real scipy.linalg] says."""
    if x.dtype is not None and np.dtype(x.dtype).kind == "c":
        raise ShapeError(f"scipy.linalg.{name} of a complex matrix is not supported (real only)")
    if x.shape is None:
        return None
    if len(x.shape) < 2:
        raise ShapeError(f"scipy.linalg.{name}: expected a matrix, got {len(x.shape)} dimensions")
    rows, cols = x.shape[-2:]
    if square and rows is not None and cols is not None and rows != cols:
        raise ShapeError(f"scipy.linalg.{name}: expected a square matrix, got {rows}x{cols}")
    return x.shape


def _float(*xs: TensorType) -> str | None:
    """The dtype SciPy computes in: NumPy's, float32 kept, integers made float64."""
    if len(xs) == 1:
        return probe_dtype(np.linalg.inv, xs, [2])
    return probe_dtype(np.linalg.solve, xs, [2, 2])


def _square_rule(name: str) -> ShapeRule:
    def rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
        x = as_tensor(types[0])
        return tensor(_float(x), _real_matrices(name, x))

    return rule


def solve_shape(name: str, a: TensorType, b: TensorType) -> list[Type]:
    """A solve's result: SciPy's (NumPy 2's) rule, a 1-d ``b`` one vector, a stack of columns
    otherwise, with the leading axes broadcast."""
    if b.dtype is not None and np.dtype(b.dtype).kind == "c":
        raise ShapeError(f"scipy.linalg.{name} of a complex b is not supported (real only)")
    dtype = _float(a, b)
    shape_a = _real_matrices(name, a)
    if shape_a is None or b.shape is None:
        return tensor(dtype, None)
    n = shape_a[-1]
    if len(b.shape) == 0:
        raise ShapeError(f"scipy.linalg.{name}: b must be at least one-dimensional")
    rows = b.shape[0] if len(b.shape) == 1 else b.shape[-2]
    if n is not None and rows is not None and n != rows:
        raise ShapeError(f"scipy.linalg.{name}: a has {n} columns, b {rows} rows")
    if len(b.shape) == 1:
        return tensor(dtype, shape_a[:-1])
    batch = broadcast_shapes(shape_a[:-2], b.shape[:-2])
    return tensor(dtype, None if batch is None else (*batch, n, b.shape[-1]))


def _solve_rule(name: str, pair: bool = False) -> ShapeRule:
    def rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
        first = types[0]
        if pair:  # ``(c, lower)`` or ``(lu, piv)``
            if not isinstance(first, TupleType) or len(first.elems) != 2:
                raise ShapeError(f"scipy.linalg.{name} takes the pair its factor returns")
            first = first.elems[0]
        return solve_shape(name, as_tensor(first), as_tensor(types[1], 1))

    return rule


def transposes(trans: Any) -> bool:
    """Whether ``trans`` (0, 1, 2 or "N", "T", "C") solves with the transpose; refuses what
    SciPy refuses. For a real matrix "C" is "T"."""
    if trans not in (0, 1, 2, "N", "T", "C"):
        raise ValueError(f"unknown trans {trans!r}: expected 0, 1, 2, 'N', 'T' or 'C'")
    return trans not in (0, "N")


def reads_one_triangle(assume_a: Any) -> bool:
    """Whether ``solve`` reads one triangle of ``a`` for this ``assume_a``, a symmetric matrix
    (Note [Real scipy.linalg]); refuses the values not differentiated here."""
    return _structure(assume_a) == "symmetric"


def solve_read_mask(assume_a: Any, like: Any) -> Any:
    """Ones where ``solve`` reads a matrix as it is (in ``like``'s dtype, ``like``'s last axis
    long): a triangle, a diagonal or a band, and everywhere for the other structures."""
    structure = _structure(assume_a)
    n = np.shape(like)[-1]
    ones = np.ones((n, n), dtype=np.result_type(like))
    if structure == "upper":
        return np.triu(ones)
    if structure == "lower":
        return np.tril(ones)
    if structure == "diagonal":
        return np.eye(n, dtype=ones.dtype)
    if structure == "tridiagonal":
        return np.triu(np.tril(ones, 1), -1)
    return ones


def _structure(assume_a: Any) -> str:
    if assume_a not in SOLVE_STRUCTURES:
        raise ValueError(
            f"scipy.linalg.solve(assume_a={assume_a!r}) is not supported: "
            f"use one of {', '.join(repr(k) for k in SOLVE_STRUCTURES)}"
        )
    return SOLVE_STRUCTURES[assume_a]


def _solve_general_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    if consts[4] is not NOT_CONSTANT:
        try:
            reads_one_triangle(consts[4])
        except ValueError as exc:
            raise ShapeError(str(exc)) from exc
    return solve_shape("solve", as_tensor(types[0]), as_tensor(types[1], 1))


def _triangular_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    if consts[2] is not NOT_CONSTANT:
        try:
            transposes(consts[2])
        except ValueError as exc:
            raise ShapeError(str(exc)) from exc
    return solve_shape("solve_triangular", as_tensor(types[0]), as_tensor(types[1], 1))


def _lu_solve_rule(types: Sequence[Type], consts: Sequence[Any]) -> Sequence[Type]:
    if consts[2] is not NOT_CONSTANT and consts[2] not in (0, 1, 2):
        raise ShapeError(f"scipy.linalg.lu_solve: trans must be 0, 1 or 2, got {consts[2]!r}")
    return _solve_rule("lu_solve", pair=True)(types, consts)


def _det_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    shape = _real_matrices("det", as_tensor(types[0]))
    return tensor("float64", None if shape is None else shape[:-2])


def _cho_factor_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    (factor,) = _square_rule("cho_factor")(types, consts)
    assert isinstance(factor, TensorType)
    if factor.shape is None:
        return [TupleType((factor, ANY))]
    lower = BOOL if len(factor.shape) == 2 else TensorType("bool", factor.shape[:-2])
    return [TupleType((factor, lower))]


def _lu_factor_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    (factor,) = _square_rule("lu_factor")(types, consts)
    assert isinstance(factor, TensorType)
    pivots = None if factor.shape is None else factor.shape[:-1]
    return [TupleType((factor, TensorType("int32", pivots)))]


def _sylvester_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    a, b, q = (as_tensor(t, i) for i, t in enumerate(types))
    shape_a = _real_matrices("solve_sylvester", a)
    shape_b = _real_matrices("solve_sylvester", b)
    shape_q = _real_matrices("solve_sylvester", q, square=False)
    dtype = probe_dtype(lambda *m: np.linalg.solve(m[0], m[1] @ m[2]), [a, b, q], [2, 2, 2])
    if shape_a is None or shape_b is None or shape_q is None:
        return tensor(dtype, None)
    for got, want, what in ((shape_q[-2], shape_a[-1], "rows"), (shape_q[-1], shape_b[-1], "cols")):
        if got is not None and want is not None and got != want:
            raise ShapeError(f"scipy.linalg.solve_sylvester: q has {got} {what}, expected {want}")
    batch = broadcast_shapes(shape_a[:-2], shape_b[:-2], shape_q[:-2])
    return tensor(dtype, None if batch is None else (*batch, *shape_q[-2:]))


def scipy_solve_triangular(
    a: Any, b: Any, trans: Any, lower: bool, unit_diagonal: bool, check_finite: bool
) -> Any:
    return _linalg().solve_triangular(a, b, trans, lower, unit_diagonal, check_finite=check_finite)


def scipy_cholesky(a: Any, lower: bool, check_finite: bool) -> Any:
    return _linalg().cholesky(a, lower, check_finite=check_finite)


def scipy_cho_factor(a: Any, lower: bool, check_finite: bool) -> tuple[Any, Any]:
    """SciPy's ``(c, lower)``: ``lower`` a bool, or for a stack one bool per matrix (SciPy
    returns a stack's pair as a list, the same when unpacked)."""
    c, lower_out = _linalg().cho_factor(a, lower, check_finite=check_finite)
    return c, lower_out if np.ndim(lower_out) else bool(lower_out)


def scipy_cho_solve(c_and_lower: Any, b: Any, check_finite: bool) -> Any:
    return _linalg().cho_solve(tuple(c_and_lower), b, check_finite=check_finite)


def scipy_lu_factor(a: Any, check_finite: bool) -> tuple[Any, Any]:
    lu, piv = _linalg().lu_factor(a, check_finite=check_finite)
    return lu, piv


def scipy_lu_solve(lu_and_piv: Any, b: Any, trans: Any, check_finite: bool) -> Any:
    return _linalg().lu_solve(tuple(lu_and_piv), b, trans, check_finite=check_finite)


def lu_permutation(piv: Any, like: Any) -> Any:
    """The permutation matrix P of ``lu_factor``'s pivots (``a = P L U``), in ``like``'s dtype:
    LAPACK swaps row i with row ``piv[i]``, for i in order."""
    piv = np.asarray(piv)
    n = piv.shape[-1]
    rows = np.broadcast_to(np.arange(n), piv.shape).copy()
    flat_rows, flat_piv = rows.reshape(-1, n), piv.reshape(-1, n)
    for order, pivots in zip(flat_rows, flat_piv, strict=True):
        for i, j in enumerate(pivots):
            order[i], order[j] = order[j], order[i]
    # P^T a = a[order]: P's column i is the unit vector e_order[i].
    eye = np.eye(n, dtype=np.result_type(like))
    return np.swapaxes(eye[flat_rows.reshape(rows.shape)], -1, -2)


def scipy_expm(a: Any) -> Any:
    return _linalg().expm(a)


def scipy_sqrtm(a: Any) -> Any:
    root = _linalg().sqrtm(a)
    if np.iscomplexobj(root) and not np.iscomplexobj(a):
        raise ValueError(
            "scipy.linalg.sqrtm: the square root of this real matrix is complex (it has "
            "negative real eigenvalues); give a complex matrix if that is meant"
        )
    return root


def scipy_solve_sylvester(a: Any, b: Any, q: Any) -> Any:
    return _linalg().solve_sylvester(a, b, q)


def scipy_det(a: Any, check_finite: bool) -> Any:
    return _linalg().det(a, check_finite=check_finite)


def scipy_solve(
    a: Any, b: Any, lower: bool, check_finite: bool, assume_a: Any, transposed: bool
) -> Any:
    reads_one_triangle(assume_a)
    return _linalg().solve(
        a, b, lower, check_finite=check_finite, assume_a=assume_a, transposed=transposed
    )


def _read_mask_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    like = as_tensor(types[1], 1)
    n = None if like.shape is None else like.shape[-1]
    return tensor(like.dtype, (n, n))


def _lu_permutation_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    piv, like = as_tensor(types[0]), as_tensor(types[1], 1)
    return tensor(like.dtype, None if piv.shape is None else (*piv.shape, piv.shape[-1]))


FINITE = "!overwrite_a check_finite"
register_op(
    "aten::scipy_solve_triangular(Tensor self, Tensor other, Any trans=0, bool lower=False,"
    " bool unit_diagonal=False, bool check_finite=True) -> Tensor",
    shape=_triangular_rule,
    derivative=Derivative.FORMULA,
    may_raise=True,
    spellings={
        "scipy.linalg.solve_triangular": (
            "a:self b:other trans lower unit_diagonal !overwrite_b check_finite"
        )
    },
)(scipy_solve_triangular)
register_op(
    "aten::scipy_cholesky(Tensor self, bool lower=False, bool check_finite=True) -> Tensor",
    shape=_square_rule("cholesky"),
    derivative=Derivative.FORMULA,
    may_raise=True,
    spellings={"scipy.linalg.cholesky": f"a:self lower {FINITE}"},
)(scipy_cholesky)
register_op(
    "aten::scipy_cho_factor(Tensor self, bool lower=False, bool check_finite=True)"
    " -> ((Tensor, Any))",
    shape=_cho_factor_rule,
    derivative=Derivative.FORMULA,
    may_raise=True,
    spellings={"scipy.linalg.cho_factor": f"a:self lower {FINITE}"},
)(scipy_cho_factor)
register_op(
    "aten::scipy_cho_solve(Any c_and_lower, Tensor other, bool check_finite=True) -> Tensor",
    shape=_solve_rule("cho_solve", pair=True),
    derivative=Derivative.FORMULA,
    may_raise=True,
    spellings={"scipy.linalg.cho_solve": "c_and_lower b:other !overwrite_b check_finite"},
)(scipy_cho_solve)
register_op(
    "aten::scipy_lu_factor(Tensor self, bool check_finite=True) -> ((Tensor, Tensor))",
    shape=_lu_factor_rule,
    derivative=Derivative.FORMULA,
    may_raise=True,
    spellings={"scipy.linalg.lu_factor": f"a:self {FINITE}"},
)(scipy_lu_factor)
register_op(
    "aten::scipy_lu_solve(Any lu_and_piv, Tensor other, Any trans=0, bool check_finite=True)"
    " -> Tensor",
    shape=_lu_solve_rule,
    derivative=Derivative.FORMULA,
    may_raise=True,
    spellings={"scipy.linalg.lu_solve": "lu_and_piv b:other trans !overwrite_b check_finite"},
)(scipy_lu_solve)
register_op(
    "aten::_lu_permutation(Tensor piv, Tensor like) -> Tensor",
    shape=_lu_permutation_rule,
    derivative=Derivative.NONE,
)(lu_permutation)
register_op(
    "aten::_transposes(Any trans) -> bool",
    shape=lambda types, consts: [BOOL],
    derivative=Derivative.NONE,
    may_raise=True,
)(transposes)
register_op(
    "aten::_reads_one_triangle(Any assume_a) -> bool",
    shape=lambda types, consts: [BOOL],
    derivative=Derivative.NONE,
    may_raise=True,
)(reads_one_triangle)
register_op(
    "aten::_solve_read_mask(Any assume_a, Tensor like) -> Tensor",
    shape=_read_mask_rule,
    derivative=Derivative.NONE,
    may_raise=True,
)(solve_read_mask)
register_op(
    "aten::scipy_expm(Tensor self) -> Tensor",
    shape=_square_rule("expm"),
    derivative=Derivative.FORMULA,
    spellings={"scipy.linalg.expm": "A:self"},
)(scipy_expm)
register_op(
    "aten::scipy_sqrtm(Tensor self) -> Tensor",
    shape=_square_rule("sqrtm"),
    derivative=Derivative.FORMULA,
    may_raise=True,
    spellings={"scipy.linalg.sqrtm": "A:self !disp !blocksize"},
)(scipy_sqrtm)
register_op(
    "aten::scipy_solve_sylvester(Tensor self, Tensor b, Tensor q) -> Tensor",
    shape=_sylvester_rule,
    derivative=Derivative.FORMULA,
    may_raise=True,
    spellings={"scipy.linalg.solve_sylvester": "a:self b q"},
)(scipy_solve_sylvester)
register_op(
    "aten::scipy_det(Tensor self, bool check_finite=True) -> Tensor",
    shape=_det_rule,
    derivative=Derivative.FORMULA,
    spellings={"scipy.linalg.det": f"a:self {FINITE}"},
)(scipy_det)
register_op(
    "aten::scipy_solve(Tensor self, Tensor other, bool lower=False, bool check_finite=True,"
    " str? assume_a=None, bool transposed=False) -> Tensor",
    shape=_solve_general_rule,
    derivative=Derivative.FORMULA,
    may_raise=True,
    spellings={
        "scipy.linalg.solve": (
            "a:self b:other lower !overwrite_a !overwrite_b check_finite assume_a transposed"
        )
    },
)(scipy_solve)

LINALG_OPS = frozenset(
    name for name, op in OPS.items() if op.kernel is not None and op.kernel.__module__ == __name__
)
"""The operators whose kernels call ``scipy.linalg`` (and the helpers of their formulas)."""
