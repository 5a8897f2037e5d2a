"""``np.fft``: the discrete Fourier transforms, the frequency shifts, and the complex parts
(``np.real``, ``np.imag``, ``np.conj``) that turn a transform's complex result back into real
values.

Transforms follow ``np.fft``: a complex result of the input's precision (``complex64`` from
float32 or complex64, ``complex128`` otherwise), ``n`` padding or truncating the transformed
axis, ``norm`` one of None, ``"backward"``, ``"ortho"`` or ``"forward"``. The multi-axis
transforms take ``axes`` but not ``s`` (the frontend refuses it).

The helpers at the end serve the derivative formulas (see `autodiff.formulas`, Note [Complex
gradients] in its docstring).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from ir.errors import ShapeError
from ir.ops.registry import NOT_CONSTANT, Derivative, register_op
from ir.ops.shape_ops import axis_argument
from ir.ops.shape_rules import (
    as_array_like,
    as_tensor,
    elementwise,
    fixed,
    known_int,
    normalize_axis,
    tensor,
)
from ir.ops.spellings import ATTRIBUTE, UNARY_UFUNC
from ir.ops.views import IMAG, REAL
from ir.types import BOOL, FLOAT, INT, NONE, TensorType, Type

_NORMS = (None, "backward", "ortho", "forward")
Norm = Literal["backward", "ortho", "forward"] | None


def complex_dtype(dtype: str | None) -> str | None:
    """The dtype of a transform's complex result for an operand of ``dtype``."""
    if dtype is None:
        return None
    return "complex64" if dtype in ("float32", "complex64") else "complex128"


def real_dtype(dtype: str | None) -> str | None:
    """The dtype of ``irfft``'s real result for an operand of ``dtype``."""
    if dtype is None:
        return None
    return "float32" if dtype in ("float32", "complex64") else "float64"


def _check_norm(norm: Any) -> None:
    if norm is not NOT_CONSTANT and norm not in _NORMS:
        raise ShapeError(f'Invalid norm value {norm}; should be "backward", "ortho" or "forward".')


def _shift_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    x = as_tensor(types[0])
    axes = None if types[1] is NONE else consts[1]
    if x.shape is not None and axes not in (None, NOT_CONSTANT):
        for a in axes if isinstance(axes, tuple | list) else (axes,):
            normalize_axis(int(a), len(x.shape))
    return tensor(x.dtype, x.shape)


def fftshift(x: Any, axes: Any) -> Any:
    return np.fft.fftshift(x, axis_argument(axes))


def ifftshift(x: Any, axes: Any) -> Any:
    return np.fft.ifftshift(x, axis_argument(axes))


register_op(
    "aten::fft_fftshift(Tensor self, Any axes=None) -> Tensor",
    shape=_shift_rule,
    derivative=Derivative.FORMULA,
    spellings={"numpy.fft.fftshift": "x:self axes"},
)(fftshift)
register_op(
    "aten::fft_ifftshift(Tensor self, Any axes=None) -> Tensor",
    shape=_shift_rule,
    derivative=Derivative.FORMULA,
    spellings={"numpy.fft.ifftshift": "x:self axes"},
)(ifftshift)

# ---- one-axis transforms ------------------------------------------------------------------------


def _one_axis_rule(kind: str) -> Any:
    """Rule of ``fft``/``ifft`` (``kind`` "c"), ``rfft`` ("r") and ``irfft`` ("ir")."""

    def rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
        x = as_tensor(types[0])
        _check_norm(consts[3])
        dtype = real_dtype(x.dtype) if kind == "ir" else complex_dtype(x.dtype)
        if x.shape is None or consts[2] is NOT_CONSTANT:
            return tensor(dtype, None if x.shape is None else (None,) * len(x.shape))
        if not x.shape:
            raise ShapeError("axis -1 is out of bounds for array of dimension 0")
        axis = normalize_axis(int(consts[2]), len(x.shape))
        n = None if types[1] is NONE else known_int(consts[1])
        if types[1] is not NONE and n is None:
            length = None
        else:
            length = _result_length(kind, x.shape[axis], n)
        shape = list(x.shape)
        shape[axis] = length
        return tensor(dtype, tuple(shape))

    return rule


def _result_length(kind: str, dim: int | None, n: int | None) -> int | None:
    if n is not None and n < 1:
        raise ShapeError(f"Invalid number of FFT data points ({n}) specified.")
    if kind == "ir":
        if n is not None:
            return n
        if dim is not None and 2 * (dim - 1) < 1:
            raise ShapeError(f"Invalid number of FFT data points ({2 * (dim - 1)}) specified.")
        return None if dim is None else 2 * (dim - 1)
    full = n if n is not None else dim
    if kind == "r":
        return None if full is None else full // 2 + 1
    return full


def _one_axis(name: str, kind: str, fn: Any, spellings: dict[str, str]) -> None:
    register_op(
        f"aten::fft_{name}(Tensor self, int? n=None, int axis=-1, str? norm=None) -> Tensor",
        shape=_one_axis_rule(kind),
        derivative=Derivative.FORMULA,
        spellings=spellings,
    )(fn)


def fft(x: Any, n: int | None, axis: int, norm: Norm) -> Any:
    return np.fft.fft(x, n, axis, norm)


def ifft(x: Any, n: int | None, axis: int, norm: Norm) -> Any:
    return np.fft.ifft(x, n, axis, norm)


def rfft(x: Any, n: int | None, axis: int, norm: Norm) -> Any:
    if np.iscomplexobj(x):
        raise TypeError("rfft of a complex array: use fft")
    return np.fft.rfft(x, n, axis, norm)


def irfft(x: Any, n: int | None, axis: int, norm: Norm) -> Any:
    return np.fft.irfft(x, n, axis, norm)


_one_axis("fft", "c", fft, {"numpy.fft.fft": "a:self n axis norm !out"})
_one_axis("ifft", "c", ifft, {"numpy.fft.ifft": "a:self n axis norm !out"})
_one_axis("rfft", "r", rfft, {"numpy.fft.rfft": "a:self n axis norm !out"})
_one_axis("irfft", "ir", irfft, {"numpy.fft.irfft": "a:self n axis norm !out"})

# ---- several axes ----------------------------------------------------------------------------


def transform_axes(ndim: int, s: Any, axes: Any) -> tuple[list[int], list[int] | None]:
    """The axes a transform over several axes runs along, as NumPy's ``s`` and ``axes`` give
    them (every axis by default, or the last ``len(s)``), and the lengths ``s`` sets."""
    if axes is None:
        chosen = list(range(ndim - (ndim if s is None else len(s)), ndim))
    else:
        chosen = [normalize_axis(int(a), ndim) for a in axes]
    if len(set(chosen)) != len(chosen):
        raise ShapeError("repeated axis in the axes of a Fourier transform")
    if s is None:
        return chosen, None
    if len(s) != len(chosen):
        raise ShapeError("Shape and axes have different lengths.")
    lengths = [int(n) for n in s]
    for n in lengths:
        if n < 1:
            raise ShapeError(f"Invalid number of FFT data points ({n}) specified.")
    return chosen, lengths


def _many_axes_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    x = as_tensor(types[0])
    _check_norm(consts[3])
    s = None if types[1] is NONE else consts[1]
    axes = None if types[2] is NONE else consts[2]
    if x.shape is None or s is NOT_CONSTANT or axes is NOT_CONSTANT:
        known = x.shape if s is None and x.shape is not None else None
        return tensor(complex_dtype(x.dtype), known)
    chosen, lengths = transform_axes(len(x.shape), s, axes)
    shape = list(x.shape)
    for axis, n in zip(chosen, lengths or [], strict=False):
        shape[axis] = n
    return tensor(complex_dtype(x.dtype), tuple(shape))


def fftn(x: Any, s: Any, axes: Any, norm: Norm) -> Any:
    return np.fft.fftn(x, axis_argument(s), axis_argument(axes), norm)


def ifftn(x: Any, s: Any, axes: Any, norm: Norm) -> Any:
    return np.fft.ifftn(x, axis_argument(s), axis_argument(axes), norm)


def fft2(x: Any, s: Any, axes: Any, norm: Norm) -> Any:
    return np.fft.fft2(x, axis_argument(s), axis_argument(axes), norm)


def ifft2(x: Any, s: Any, axes: Any, norm: Norm) -> Any:
    return np.fft.ifft2(x, axis_argument(s), axis_argument(axes), norm)


def fftn_backward(grad: Any, like: Any, s: Any, axes: Any, norm: Norm, inverse: bool) -> Any:
    """The vjp of ``fftn`` (``ifftn`` when ``inverse``) with the lengths ``s``: the transform of
    the gradient (the DFT matrices are symmetric), then the adjoint of ``s``'s padding or
    truncation back to ``like``'s shape along each axis."""
    chosen, _ = transform_axes(np.ndim(like), axis_argument(s), axis_argument(axes))
    transform = np.fft.ifftn if inverse else np.fft.fftn
    out = transform(grad, None, chosen, norm)
    for axis in chosen:
        out = _resized(out, np.shape(like)[axis], axis)
    return grad_like(out, like)


for _name, _fn, _default, _spellings in [
    ("fft2", fft2, "(-2, -1)", {"numpy.fft.fft2": "a:self s axes norm !out"}),
    ("ifft2", ifft2, "(-2, -1)", {"numpy.fft.ifft2": "a:self s axes norm !out"}),
    ("fftn", fftn, "None", {"numpy.fft.fftn": "a:self s axes norm !out"}),
    ("ifftn", ifftn, "None", {"numpy.fft.ifftn": "a:self s axes norm !out"}),
]:
    register_op(
        f"aten::fft_{_name}(Tensor self, Any s=None, Any axes={_default}, str? norm=None)"
        " -> Tensor",
        shape=_many_axes_rule,
        derivative=Derivative.FORMULA,
        spellings=_spellings,
    )(_fn)

# ---- complex parts ---------------------------------------------------------------------------


def conj(x: Any) -> Any:
    return np.conjugate(x)


# ``x.real`` and ``x.imag`` are views of a complex array's parts (Note [Views] in `ir.ops.views`).
register_op(
    "aten::real(Any(a) self) -> Tensor(a)",
    shape=elementwise(np.real),
    derivative=Derivative.FORMULA,
    view=REAL,
    spellings={"numpy.real": "val:self", "ndarray.real": ATTRIBUTE},
)(np.real)
register_op(
    "aten::imag(Any(a) self) -> Tensor(a)",
    shape=elementwise(np.imag),
    derivative=Derivative.FORMULA,
    view=IMAG,
    spellings={"numpy.imag": "val:self", "ndarray.imag": ATTRIBUTE},
)(np.imag)
register_op(
    "aten::conj(Any self) -> Tensor",
    shape=elementwise(np.conjugate),
    derivative=Derivative.FORMULA,
    spellings={"numpy.conj": UNARY_UFUNC, "numpy.conjugate": UNARY_UFUNC},
)(conj)


def _angle_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    return list(elementwise(np.angle)(types[:1], consts[:1]))


def _complex_test_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    return tensor("bool", as_array_like(types[0]).shape)


register_op(
    "aten::angle(Any self, bool deg=False) -> Tensor",
    shape=_angle_rule,
    derivative=Derivative.FORMULA,
    spellings={"numpy.angle": "z:self deg"},
)(np.angle)


def _real_if_close_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    x = as_tensor(types[0])
    if x.dtype is not None and np.dtype(x.dtype).kind == "c":
        raise ShapeError(
            "np.real_if_close of a complex array is not supported: whether its result is real "
            "or complex depends on the values, and the compiler must know it while compiling; "
            "write np.real(x) where the imaginary parts are known to be negligible"
        )
    return tensor(x.dtype, x.shape)


def real_if_close(x: Any, tol: Any) -> Any:
    return np.real_if_close(x, tol)


# Of a real array, the array itself (a copy); of a complex one, refused (its rule says why).
register_op(
    "aten::real_if_close(Tensor self, Scalar tol=100) -> Tensor",
    shape=_real_if_close_rule,
    derivative=Derivative.FORMULA,
    spellings={"numpy.real_if_close": "a:self tol"},
)(real_if_close)
# Tests of the type or of the imaginary part: no gradient flows through a bool.
register_op(
    "aten::iscomplex(Any self) -> Tensor",
    shape=_complex_test_rule,
    derivative=Derivative.NONE,
    spellings={"numpy.iscomplex": "x:self"},
)(np.iscomplex)
register_op(
    "aten::isreal(Any self) -> Tensor",
    shape=_complex_test_rule,
    derivative=Derivative.NONE,
    spellings={"numpy.isreal": "x:self"},
)(np.isreal)


# ---- compile-time helpers of the derivative formulas ------------------------------------------


def grad_like(grad: Any, like: Any) -> Any:
    """``grad`` as the gradient of ``like``: its real part when ``like`` is real (a real
    argument's gradient is real, as in JAX), in ``like``'s dtype."""
    dtype = np.result_type(like)
    if dtype.kind != "c":
        grad = np.real(grad)
    return np.asarray(grad, dtype=dtype if dtype.kind in "fc" else np.float64)


def _grad_like_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    grad, like = as_tensor(types[0]), as_tensor(types[1], 1)
    dtype = like.dtype
    if dtype is not None and np.dtype(dtype).kind not in "fc":
        dtype = "float64"
    return tensor(dtype, grad.shape)


def is_complex(x: Any) -> bool:
    """Whether ``x`` is complex: a constant once types are specialised, so a formula's branch
    on it (``sign``, ``pow``, ``nan_to_num``) folds away and a real program pays nothing."""
    return bool(np.iscomplexobj(x))


def _is_complex_value(types: Sequence[Type]) -> Any:
    ty = types[0]
    if isinstance(ty, TensorType) and ty.dtype is not None:
        return np.dtype(ty.dtype).kind == "c"
    if ty in (FLOAT, INT, BOOL):
        return False
    return NOT_CONSTANT


register_op(
    "aten::_is_complex(Any self) -> bool",
    shape=fixed(BOOL),
    derivative=Derivative.NONE,
    value_from_types=_is_complex_value,
    spellings={"numpy.iscomplexobj": "x:self"},
)(is_complex)


def is_real(x: Any) -> bool:
    """``np.isrealobj``: whether ``x``'s type is not complex (a constant, as `is_complex`)."""
    return not np.iscomplexobj(x)


def _is_real_value(types: Sequence[Type]) -> Any:
    complex_type = _is_complex_value(types)
    return complex_type if complex_type is NOT_CONSTANT else not complex_type


register_op(
    "aten::_is_real(Any self) -> bool",
    shape=fixed(BOOL),
    derivative=Derivative.NONE,
    value_from_types=_is_real_value,
    spellings={"numpy.isrealobj": "x:self"},
)(is_real)


def imag_backward(grad: Any, like: Any) -> Any:
    """The vjp of ``np.imag``: ``-1j * grad`` (0 for a real ``like``)."""
    return grad_like(-1j * np.asarray(grad), like)


def _resized(grad: np.ndarray, length: int, axis: int) -> np.ndarray:
    """``grad`` truncated or zero-padded along ``axis`` to ``length``: the adjoint of the
    padding or truncation a transform's ``n`` does."""
    have = grad.shape[axis]
    if have >= length:
        return np.take(grad, np.arange(length), axis=axis)
    widths = [(0, 0)] * grad.ndim
    widths[axis] = (0, length - have)
    return np.pad(grad, widths)


def fft_backward(grad: Any, like: Any, n: int | None, axis: int, norm: Norm, inverse: bool) -> Any:
    """The vjp of ``fft`` (``ifft`` when ``inverse``): the DFT matrix is symmetric, so its
    transpose is the same transform, followed by the adjoint of ``n``'s resizing."""
    transform = np.fft.ifft if inverse else np.fft.fft
    out = transform(grad, None, axis, norm)
    return grad_like(_resized(out, np.shape(like)[axis], axis), like)


def rfft_backward(grad: Any, like: Any, n: int | None, axis: int, norm: Norm) -> Any:
    """The vjp of ``rfft``: the transpose of the first ``n // 2 + 1`` rows of the DFT matrix is
    the full transform of the cotangent zero-padded to ``n``; its real part, as ``like`` is
    real."""
    full = np.shape(like)[axis] if n is None else n
    out = np.fft.fft(grad, full, axis, norm)
    return grad_like(_resized(out, np.shape(like)[axis], axis), like)


def irfft_backward(grad: Any, like: Any, n: int | None, axis: int, norm: Norm) -> Any:
    """The vjp of ``irfft`` in JAX's convention (∂L/∂Re z - i ∂L/∂Im z): ``irfft`` reads the
    first ``n // 2 + 1`` coefficients and counts every one but the zero-frequency term (and the
    Nyquist term of an even ``n``) twice, so the cotangent is ``ifft`` of the real cotangent
    with those weights."""
    full = np.shape(grad)[axis]
    half = full // 2 + 1
    out = _resized(np.fft.ifft(grad, None, axis, norm), half, axis)
    weights = np.full(half, 2.0)
    weights[0] = 1.0
    if full % 2 == 0:
        weights[-1] = 1.0
    shape = [1] * out.ndim
    shape[axis] = half
    out = out * weights.reshape(shape)
    return grad_like(_resized(out, np.shape(like)[axis], axis), like)


def _like_second_rule(types: Sequence[Type], consts: Sequence[Any]) -> list[Type]:
    like = as_tensor(types[1], 1)
    dtype = like.dtype
    if dtype is not None and np.dtype(dtype).kind not in "fc":
        dtype = "float64"
    return tensor(dtype, like.shape)


register_op(
    "aten::_grad_like(Tensor grad, Tensor like) -> Tensor",
    shape=_grad_like_rule,
    derivative=Derivative.FORMULA,
    read_for_type=("like",),
)(grad_like)
register_op(
    "aten::_imag_backward(Tensor grad, Tensor like) -> Tensor",
    shape=_grad_like_rule,
    derivative=Derivative.FORMULA,
    read_for_type=("like",),
)(imag_backward)
register_op(
    "aten::_fft_backward(Tensor grad, Tensor like, int? n, int axis, str? norm, bool inverse)"
    " -> Tensor",
    shape=_like_second_rule,
    derivative=Derivative.FORMULA,
    read_for_type=("like",),
)(fft_backward)
register_op(
    "aten::_fftn_backward(Tensor grad, Tensor like, Any s, Any axes, str? norm, bool inverse)"
    " -> Tensor",
    shape=_like_second_rule,
    derivative=Derivative.FORMULA,
    read_for_type=("like",),
)(fftn_backward)
register_op(
    "aten::_rfft_backward(Tensor grad, Tensor like, int? n, int axis, str? norm) -> Tensor",
    shape=_like_second_rule,
    derivative=Derivative.FORMULA,
    read_for_type=("like",),
)(rfft_backward)
register_op(
    "aten::_irfft_backward(Tensor grad, Tensor like, int? n, int axis, str? norm) -> Tensor",
    shape=_like_second_rule,
    derivative=Derivative.FORMULA,
    read_for_type=("like",),
)(irfft_backward)
