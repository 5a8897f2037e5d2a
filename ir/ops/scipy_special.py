"""``scipy.special`` as operators: the ufuncs (``gammaln``, ``erf``, ``expit``, the Bessel
functions...), ``polygamma`` and ``multigammaln``, and the reductions ``logsumexp``,
``softmax`` and ``log_softmax``.

Each kernel calls SciPy's function, which it imports when it first runs: SciPy is optional, and
nothing here imports it. User code finds these operators through SciPy's own function objects,
under any alias (Note [SciPy spellings] in `frontend.resolve`); the kernels below, named
``special_x``, are what the derivative formulas call. Operators of an order ``n`` or ``v``
(``polygamma``, ``jv``, ``iv``...) are differentiable in their argument only.

>>> float(special_gammaln(4.0))  # log(3!)
1.791759469228055
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

import numpy as np

from ir.errors import ShapeError
from ir.ops.promotion import probe_dtype
from ir.ops.registry import NOT_CONSTANT, Derivative, ShapeRule, register_op
from ir.ops.shape_rules import (
    as_array_like,
    broadcast_shapes,
    elementwise,
    normalize_axes,
    tensor,
)
from ir.ops.spellings import UFUNC_KEYWORDS
from ir.types import NONE, TensorType, TupleType, Type

SCIPY_EXTRA = "pip install 'numpy-autodiff[scipy]'"


def scipy_installed() -> bool:
    """Whether SciPy can be imported (without importing it)."""
    return importlib.util.find_spec("scipy") is not None


def _special() -> ModuleType:
    return importlib.import_module("scipy.special")


# ---- kernels ------------------------------------------------------------------------------------


def special_expit(x: Any) -> Any:
    return _special().expit(x)


def special_logit(x: Any) -> Any:
    return _special().logit(x)


def special_gammaln(x: Any) -> Any:
    return _special().gammaln(x)


def special_gamma(x: Any) -> Any:
    return _special().gamma(x)


def special_digamma(x: Any) -> Any:
    return _special().digamma(x)


def special_erf(x: Any) -> Any:
    return _special().erf(x)


def special_erfc(x: Any) -> Any:
    return _special().erfc(x)


def special_erfinv(x: Any) -> Any:
    return _special().erfinv(x)


def special_erfcinv(x: Any) -> Any:
    return _special().erfcinv(x)


def special_ndtr(x: Any) -> Any:
    return _special().ndtr(x)


def special_log_ndtr(x: Any) -> Any:
    return _special().log_ndtr(x)


def special_ndtri(x: Any) -> Any:
    return _special().ndtri(x)


def special_entr(x: Any) -> Any:
    return _special().entr(x)


def special_i0(x: Any) -> Any:
    return _special().i0(x)


def special_i1(x: Any) -> Any:
    return _special().i1(x)


def special_i0e(x: Any) -> Any:
    return _special().i0e(x)


def special_i1e(x: Any) -> Any:
    return _special().i1e(x)


def special_j0(x: Any) -> Any:
    return _special().j0(x)


def special_j1(x: Any) -> Any:
    return _special().j1(x)


def special_y0(x: Any) -> Any:
    return _special().y0(x)


def special_y1(x: Any) -> Any:
    return _special().y1(x)


def special_betaln(a: Any, b: Any) -> Any:
    return _special().betaln(a, b)


def special_beta(a: Any, b: Any) -> Any:
    return _special().beta(a, b)


def special_xlogy(x: Any, y: Any) -> Any:
    return _special().xlogy(x, y)


def special_xlog1py(x: Any, y: Any) -> Any:
    return _special().xlog1py(x, y)


def special_rel_entr(x: Any, y: Any) -> Any:
    return _special().rel_entr(x, y)


def special_polygamma(n: Any, x: Any) -> Any:
    return _special().polygamma(n, x)


def special_jv(v: Any, x: Any) -> Any:
    return _special().jv(v, x)


def special_yn(n: Any, x: Any) -> Any:
    return _special().yn(n, x)


def special_yv(v: Any, x: Any) -> Any:
    return _special().yv(v, x)


def special_iv(v: Any, x: Any) -> Any:
    return _special().iv(v, x)


def special_ive(v: Any, x: Any) -> Any:
    return _special().ive(v, x)


def special_multigammaln(a: Any, d: int) -> Any:
    return _special().multigammaln(a, d)


def special_logsumexp(a: Any, axis: Any, b: Any, keepdims: bool, return_sign: bool) -> Any:
    """SciPy's ``logsumexp``; ``b`` is 1.0 where SciPy's default is None: one formula.
    ``return_sign`` is always False here (Note [Constant variants])."""
    return _special().logsumexp(a, axis=_axis(axis), b=b, keepdims=keepdims)


def special_logsumexp_signed(a: Any, axis: Any, b: Any, keepdims: bool) -> tuple[Any, Any]:
    """``logsumexp(..., return_sign=True)``: the log of the sum's magnitude, and its sign."""
    out, sign = _special().logsumexp(a, axis=_axis(axis), b=b, keepdims=keepdims, return_sign=True)
    return out, sign


def special_softmax(x: Any, axis: Any) -> Any:
    return _special().softmax(x, axis=_axis(axis))


def special_log_softmax(x: Any, axis: Any) -> Any:
    return _special().log_softmax(x, axis=_axis(axis))


def _axis(axis: Any) -> Any:
    """A list of axes as SciPy takes it: a tuple."""
    return tuple(axis) if isinstance(axis, list) else axis


# ---- complex operands ---------------------------------------------------------------------------

# Note [Complex SciPy operands]
# SciPy computes erf, erfc, ndtr, log_ndtr, gamma, digamma, xlogy, xlog1py, jv, yv, iv, ive,
# logsumexp (with its sign too), softmax and log_softmax of complex values. Where the function
# is holomorphic the real formula is the complex one (Note [Complex gradients] in
# `autodiff.formulas`); ive, iv(v, z) exp(-|Re z|), is not, and neither are the magnitude and
# the sign logsumexp returns: their formulas say so. The operators below are refused for
# complex operands by their shape rule, with a located error: those SciPy computes for real
# arguments only, polygamma (so digamma's gradient and gamma's second derivative of a complex
# value are refused too: SciPy has no complex polygamma).
_REAL_ONLY = "SciPy computes it for real arguments only"
COMPLEX_REFUSED: dict[str, str] = {
    **{
        f"aten::special_{name}": _REAL_ONLY
        for name in (
            *("expit", "logit", "gammaln", "erfinv", "erfcinv", "ndtri", "entr", "rel_entr"),
            *("i0", "i1", "i0e", "i1e", "j0", "j1", "y0", "y1", "yn"),
            *("betaln", "beta", "multigammaln"),
        )
    },
    "aten::special_polygamma": (
        f"{_REAL_ONLY} (and it is digamma's derivative: the gradient of digamma and the second "
        "derivative of gamma are refused for complex values too)"
    ),
}
"""operator -> why complex operands are refused (Note [Complex SciPy operands])."""


REAL_VARIABLE = "a distribution of a real variable takes real values"


def refusing_complex(op: str, name: str, rule: ShapeRule, why: str | None = None) -> ShapeRule:
    """``rule``, refusing complex operands with the reason ``COMPLEX_REFUSED`` (or ``why``)
    gives for ``op``, spelled ``name`` in the message; ``rule`` itself where there is none."""
    reason = why or COMPLEX_REFUSED.get(op)
    if reason is None:
        return rule

    def refuse(types: Sequence[Type], consts: Sequence[Any]) -> Sequence[Type]:
        for ty in types:
            if isinstance(ty, TensorType) and ty.dtype and np.dtype(ty.dtype).kind == "c":
                raise ShapeError(f"{name} of a complex value is not supported: {reason}")
        return rule(types, consts)

    return refuse


# ---- records ------------------------------------------------------------------------------------

_UNARY = f"x:self / {UFUNC_KEYWORDS}"
_BINARY = f"x1:self x2:other / {UFUNC_KEYWORDS}"
_OF_N = f"n:order x:self / {UFUNC_KEYWORDS}"
_OF_V = f"v:order x:self / {UFUNC_KEYWORDS}"

# kernel -> the scipy.special names that spell it (the first in messages)
UNARY: dict[Callable[..., Any], tuple[str, ...]] = {
    special_expit: ("expit",),
    special_logit: ("logit",),
    special_gammaln: ("gammaln",),
    special_gamma: ("gamma",),
    special_digamma: ("digamma", "psi"),
    special_erf: ("erf",),
    special_erfc: ("erfc",),
    special_erfinv: ("erfinv",),
    special_erfcinv: ("erfcinv",),
    special_ndtr: ("ndtr",),
    special_log_ndtr: ("log_ndtr",),
    special_ndtri: ("ndtri",),
    special_entr: ("entr",),
    special_i0: ("i0",),
    special_i1: ("i1",),
    special_i0e: ("i0e",),
    special_i1e: ("i1e",),
    special_j0: ("j0",),
    special_j1: ("j1",),
    special_y0: ("y0",),
    special_y1: ("y1",),
}
BINARY: dict[Callable[..., Any], tuple[str, ...]] = {
    special_betaln: ("betaln",),
    special_beta: ("beta",),
    special_xlogy: ("xlogy",),
    special_xlog1py: ("xlog1py",),
    special_rel_entr: ("rel_entr",),
}
# Of an order (an integer ``n`` or a real ``v``) and an argument; differentiable in the argument.
OF_ORDER: dict[Callable[..., Any], tuple[tuple[str, ...], str]] = {
    special_polygamma: (("polygamma",), "n:order x:self"),  # a Python function, not a ufunc
    special_jv: (("jv", "jn"), _OF_V),
    special_yn: (("yn",), _OF_N),
    special_yv: (("yv",), _OF_V),
    special_iv: (("iv",), _OF_V),
    special_ive: (("ive",), _OF_V),
}


def _spellings(names: tuple[str, ...], params: str) -> dict[str, str]:
    return {f"scipy.special.{name}": params for name in names}


def _probe_kernel(kernel: Callable[..., Any]) -> Callable[..., Any]:
    """What the shape rule probes: the kernel, or for ``polygamma``, whose integer order SciPy
    checks as a value, the kernel of order 1."""
    if kernel is special_polygamma:
        return lambda n, x: special_polygamma(1, x)
    return kernel


def _rule(kernel: Callable[..., Any], names: tuple[str, ...], rule: ShapeRule) -> ShapeRule:
    return refusing_complex(f"aten::{kernel.__name__}", f"scipy.special.{names[0]}", rule)


for _kernel, _names in UNARY.items():
    register_op(
        f"aten::{_kernel.__name__}(Any self) -> Tensor",
        shape=_rule(_kernel, _names, elementwise(_kernel)),
        derivative=Derivative.FORMULA,
        spellings=_spellings(_names, _UNARY),
    )(_kernel)

for _kernel, _names in BINARY.items():
    register_op(
        f"aten::{_kernel.__name__}(Any self, Any other) -> Tensor",
        shape=_rule(_kernel, _names, elementwise(_kernel)),
        derivative=Derivative.FORMULA,
        spellings=_spellings(_names, _BINARY),
    )(_kernel)

for _kernel, (_names, _params) in OF_ORDER.items():
    register_op(
        f"aten::{_kernel.__name__}(Any order, Any self) -> Tensor",
        shape=_rule(_kernel, _names, elementwise(_probe_kernel(_kernel))),
        derivative=Derivative.FORMULA,
        spellings=_spellings(_names, _params),
    )(_kernel)


def _multigammaln_probe(a: Any) -> Any:
    return special_multigammaln(np.abs(a) + 1.0, 1)  # SciPy checks a > (d - 1) / 2


def _multigammaln_rule(types: Sequence[Type], consts: Sequence[Any]) -> Sequence[Type]:
    return elementwise(_multigammaln_probe)(types[:1], consts[:1])


register_op(
    "aten::special_multigammaln(Any self, int d) -> Tensor",
    shape=_rule(special_multigammaln, ("multigammaln",), _multigammaln_rule),
    derivative=Derivative.FORMULA,
    spellings={"scipy.special.multigammaln": "a:self d"},
)(special_multigammaln)


def _logsumexp_probe(a: Any, b: Any) -> Any:
    return special_logsumexp(a, None, b, False, False)


def _logsumexp_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    """A reduction of ``a`` broadcast against ``b``."""
    dtype = probe_dtype(_logsumexp_probe, [types[0], types[2]])
    shapes = [as_array_like(types[0], 0).shape, as_array_like(types[2], 2).shape]
    broadcast = TensorType(dtype, broadcast_shapes(*shapes))
    axis, keepdims = consts[1], consts[3]
    if axis is NOT_CONSTANT and types[1] is NONE:
        axis = None
    return _reduced(broadcast, axis, keepdims)


def _reduced(x: TensorType, axis: Any, keepdims: Any) -> list[Type]:
    if x.shape is None and axis is None and keepdims is False:
        return tensor(x.dtype, ())
    if x.shape is None or keepdims is NOT_CONSTANT:
        return tensor(x.dtype, None)
    if axis is NOT_CONSTANT:
        return tensor(x.dtype, (None,) * len(x.shape) if keepdims else None)
    axes = normalize_axes(axis, len(x.shape))
    if keepdims:
        return tensor(x.dtype, tuple(1 if i in axes else d for i, d in enumerate(x.shape)))
    return tensor(x.dtype, tuple(d for i, d in enumerate(x.shape) if i not in axes))


def _logsumexp_signed_rule(types: Sequence[Type], consts: Sequence[Any]) -> Sequence[Type]:
    """The log of the sum's magnitude, real, and its sign (complex for a complex sum)."""
    (like,) = _logsumexp_rule(types, consts)
    assert isinstance(like, TensorType)
    magnitude = like
    if like.dtype is not None:
        magnitude = TensorType(np.real(np.zeros((), like.dtype)).dtype.name, like.shape)
    return [TupleType((magnitude, like))]


# Note [Constant variants]: ``return_sign=True`` makes logsumexp return a pair, another
# operator; the spelling fills ``return_sign``, which must be a constant, and the call becomes
# the variant the constant names (`CONSTANT_VARIANTS`).
register_op(
    "aten::special_logsumexp(Any self, Any axis=None, Any b=1.0, bool keepdims=False,"
    " bool return_sign=False) -> Tensor",
    shape=_logsumexp_rule,
    derivative=Derivative.FORMULA,
    spellings={"scipy.special.logsumexp": "a:self axis b=None keepdims return_sign"},
)(special_logsumexp)
register_op(
    "aten::special_logsumexp_signed(Any self, Any axis=None, Any b=1.0, bool keepdims=False)"
    " -> Tensor[]",
    shape=_logsumexp_signed_rule,
    derivative=Derivative.FORMULA,
)(special_logsumexp_signed)

CONSTANT_VARIANTS: dict[str, tuple[str, str]] = {
    "aten::special_logsumexp": ("return_sign", "aten::special_logsumexp_signed"),
}
"""operator -> (its last argument, the operator a call with that argument constant True is):
Note [Constant variants]."""


def _along_axis_rule(kernel: Callable[..., Any]) -> ShapeRule:
    """softmax's and log_softmax's: the shape of ``x``, the dtype the kernel computes."""
    probe = elementwise(lambda x: kernel(x, None))
    return lambda types, consts: probe(types[:1], consts[:1])


for _kernel, _name in ((special_softmax, "softmax"), (special_log_softmax, "log_softmax")):
    register_op(
        f"aten::{_kernel.__name__}(Any self, Any axis=None) -> Tensor",
        shape=_along_axis_rule(_kernel),
        derivative=Derivative.FORMULA,
        spellings={f"scipy.special.{_name}": "x:self axis"},
    )(_kernel)

SCIPY_OPS = frozenset(
    f"aten::{kernel.__name__}"
    for kernel in (
        *UNARY,
        *BINARY,
        *OF_ORDER,
        special_multigammaln,
        special_logsumexp,
        special_logsumexp_signed,
        special_softmax,
        special_log_softmax,
    )
)
"""The operators whose kernels call SciPy."""
