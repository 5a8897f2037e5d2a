"""Derivative formulas, one per differentiable operator, in the scripted subset of Python.

`autodiff.derivatives` compiles this file with the project's own frontend; Python never runs
it. Each function is named after the operator it differentiates (``mul`` is ``aten::mul``; a
trailing underscore keeps a name off a Python builtin; a capitalised name such as
``ListAppend`` is a ``prim::`` operator) and takes the operator's operands in
schema order. It returns the operator's result and a ``backward`` closure mapping the result's
gradient to one gradient per operand (None where an operand gets none). What ``backward``
reads from the forward is the context that `f` hands to `df`.

Broadcasting is undone with ``sum_to_size(grad, size)``, where ``size`` is
``size_if_not_equal(operand, out)`` computed in the forward: once shapes are specialised,
`fold-sizes` turns it into a constant (None when no broadcasting happened), so no size is ever
computed or captured at run time.

Conventions at non-smooth points follow JAX: ``abs`` has gradient 0 at 0; ties in
``maximum``/``minimum`` and in ``max``/``min`` reductions share the gradient evenly; ``clip``
passes the gradient to its input at the bounds (and to a bound only where it clips); ``sqrt`` at
0 gives inf. Likewise ``fabs`` at 0 and ``hypot`` at the origin give 0; ``sinc`` at 0 gives its
derivative there, 0; ``fmax``/``fmin`` treat ties as ``maximum`` does and pass the gradient to
the operand that is not NaN; ``nan_to_num`` passes it where its input is finite; ``std`` of
values that are all equal gives 0, the least-norm subgradient, as ``norm`` at 0 does (std is a
scaled norm of the centred values); ``x ** 0`` at 0 gives its derivative, 0 (docs/conventions.md
has the table). Gradients keep their operand's dtype: counts and casts go through ``dtype_of``.

Note [Complex gradients]
Complex values (complex arguments, ``np.fft``'s results) follow JAX's convention: the cotangent
of a complex ``z`` for a real loss ``L`` is ``dL/dRe z - 1j * dL/dIm z``, and a vjp is the plain
transpose, never conjugated. So a holomorphic operator's formula is the real one (``mul`` is
``dout * other``), a linear map's vjp is its transpose (the DFT matrix is symmetric: ``fft``'s
vjp is ``fft``),
``real`` passes ``dout`` on, ``imag`` gives ``-1j * dout``, ``conj`` gives ``conj(dout)``
and ``abs`` gives ``dout * conj(z) / |z|``; a real function of ``|z|`` and the like (``var``,
``std``, ``norm``) has the conjugate of what its real formula reads (``conj(centered)``), and
the decompositions (``eigh``, ``svd``) conjugate-transpose. Where an operand is real, its
gradient is the real part, in its dtype (``_grad_like``), as JAX's ``convert_element_type``
transposes; `autodiff.differentiate` takes it for every operator that mixes real and complex
values (Note [Real operands of complex operators]). For any of them, a step ``dz`` changes the
loss by ``Re(sum(g * dz))``: the check `tests/unit/test_complex_gradients.py` makes.
"""

import numpy as np

from ir.ops.arrangement import negated, rollaxis_destination
from ir.ops.fourier import (
    fft_backward,
    grad_like,
    imag_backward,
    irfft_backward,
    is_complex,
    rfft_backward,
)
from ir.ops.gradients import (
    NORM_COUNT,
    NORM_EUCLIDEAN,
    NORM_LARGEST,
    NORM_POWER,
    add_at_tuple,
    add_lists,
    concatenate_backward,
    cumsum_backward,
    diag_backward,
    diagonal_backward,
    diff_backward,
    dot_backward,
    dtype_of,
    gather_last_written,
    gradient_dtype,
    index_backward,
    index_put_tuple,
    index_tuple,
    input_shapes,
    is_list,
    join,
    join_backward,
    list_head,
    list_index_backward,
    matmul_backward_other,
    matmul_backward_self,
    norm_backward,
    norm_kind,
    pad_backward,
    prod_backward,
    prod_double_backward,
    repeat_backward,
    scatter_last_written,
    select_backward,
    sequence_as,
    slice_backward,
    stack_backward,
    svd_backward,
    take_backward,
    tile_backward,
    transpose_backward,
    unreduce,
    zero_written,
)
from ir.ops.indexing import select as select_kernel
from ir.ops.indexing import slice_axis
from ir.ops.prim import list_append, list_index, written_argument
from ir.ops.products import einsum as einsum_kernel
from ir.ops.products import einsum_view as einsum_view_kernel
from ir.ops.products import (
    einsum_vjp,
    einsum_vjp_backward,
    einsum_vjp_backward_backward,
    inner_subscripts,
    kron_split,
    kron_subscripts,
    tensordot_subscripts,
)
from ir.ops.scatter import einsum_scatter as einsum_scatter_kernel
from ir.ops.scatter import imag_scatter as imag_scatter_kernel
from ir.ops.scatter import real_scatter as real_scatter_kernel
from ir.ops.scatter import select_scatter as select_scatter_kernel
from ir.ops.scatter import slice_scatter as slice_scatter_kernel
from ir.ops.scatter import written
from ir.ops.shape_ops import flatten as flatten_kernel
from ir.ops.shape_ops import number_to_array, size_if_not_equal, sum_to_size
from ir.ops.sorting import permute, unpermute
from ir.ops.tapes import tape_push
from ir.ops.taps import run_hooks

# ---- arithmetic -------------------------------------------------------------------------------


def add(self, other):
    out = self + other
    self_size = size_if_not_equal(self, out)
    other_size = size_if_not_equal(other, out)

    def backward(dout):
        return sum_to_size(dout, self_size), sum_to_size(dout, other_size)

    return out, backward


def sub(self, other):
    out = self - other
    self_size = size_if_not_equal(self, out)
    other_size = size_if_not_equal(other, out)

    def backward(dout):
        return sum_to_size(dout, self_size), sum_to_size(-dout, other_size)

    return out, backward


def mul(self, other):
    out = self * other
    self_size = size_if_not_equal(self, out)
    other_size = size_if_not_equal(other, out)

    def backward(dout):
        return sum_to_size(dout * other, self_size), sum_to_size(dout * self, other_size)

    return out, backward


def div(self, other):
    out = self / other
    self_size = size_if_not_equal(self, out)
    other_size = size_if_not_equal(other, out)

    def backward(dout):
        grad_self = sum_to_size(dout / other, self_size)
        grad_other = sum_to_size(-dout * out / other, other_size)
        return grad_self, grad_other

    return out, backward


def remainder(self, other):
    out = self % other
    self_size = size_if_not_equal(self, out)
    other_size = size_if_not_equal(other, out)

    def backward(dout):
        # self - other * floor(self / other): the quotient is piecewise constant.
        grad_other = sum_to_size(-dout * (self // other), other_size)
        return sum_to_size(dout, self_size), grad_other

    return out, backward


def pow_(self, other):
    out = self**other
    self_size = size_if_not_equal(self, out)
    other_size = size_if_not_equal(other, out)
    complex_base = is_complex(self)

    def backward(dout):
        # x ** 0 is 1 everywhere, so its derivative is 0 at x = 0 too (JAX's convention), not
        # 0 * 0 ** -1 = nan: where the exponent is 0 the power is raised to 0 instead of -1,
        # and the factor ``other`` makes the term 0. The same rule applied again makes the
        # second derivative 0 there as well.
        grad_self = sum_to_size(dout * other * self ** (other - 1 + (other == 0)), self_size)
        # log(self) only where it is real (the principal log of a complex base, as NumPy's
        # power takes it, but for 0); the exponent's gradient is 0 elsewhere.
        has_log = self != 0 if complex_base else self > 0
        log_self = np.log(np.where(has_log, self, 1.0))
        grad_other = sum_to_size(dout * out * log_self, other_size)
        return grad_self, grad_other

    return out, backward


def neg(self):
    def backward(dout):
        return -dout

    return -self, backward


def positive(self):
    def backward(dout):
        return dout

    return +self, backward


def matmul(self, other):
    # Two helpers, not one pair: DCE drops the gradient of an operand nothing differentiates.
    def backward(dout):
        return matmul_backward_self(dout, self, other), matmul_backward_other(dout, self, other)

    return self @ other, backward


def dot(self, other):
    def backward(dout):
        grad_self, grad_other = dot_backward(dout, self, other)
        return grad_self, grad_other

    return np.dot(self, other), backward


# ---- elementwise functions --------------------------------------------------------------------


def exp(self):
    out = np.exp(self)

    def backward(dout):
        return dout * out

    return out, backward


def log(self):
    def backward(dout):
        return dout / self

    return np.log(self), backward


def sqrt(self):
    out = np.sqrt(self)

    def backward(dout):
        return dout / (2.0 * out)

    return out, backward


def sin(self):
    def backward(dout):
        return dout * np.cos(self)

    return np.sin(self), backward


def cos(self):
    def backward(dout):
        return -dout * np.sin(self)

    return np.cos(self), backward


def tan(self):
    out = np.tan(self)

    def backward(dout):
        return dout * (1.0 + out * out)

    return out, backward


def tanh(self):
    out = np.tanh(self)

    def backward(dout):
        return dout * (1.0 - out * out)

    return out, backward


def abs_(self):
    out = np.abs(self)

    def backward(dout):
        # dout * sign(x); for a complex z, dout * conj(z) / |z| (0 at 0), written so that it
        # differentiates again (sign's derivative is 0, z / |z|'s is not).
        return dout * np.conj(self) / np.where(out == 0, 1.0, out)

    return out, backward


def sign(self):
    out = np.sign(self)
    complex_input = is_complex(self)
    magnitude = np.abs(self)

    def backward(dout):
        # Piecewise constant on reals. A complex sign is z / |z| (NumPy 2), the direction of z:
        # it moves with z's phase, (dout - Re(dout * s) * conj(s)) / |z| (0 at 0).
        if complex_input:
            along = dout - np.real(dout * out) * np.conj(out)
            grad = np.where(magnitude == 0, 0.0, along / np.where(magnitude == 0, 1.0, magnitude))
        else:
            grad = dout * 0.0
        return grad

    return out, backward


def reciprocal(self):
    out = np.reciprocal(self)

    def backward(dout):
        return -dout * out * out

    return out, backward


def square(self):
    def backward(dout):
        return 2.0 * self * dout

    return np.square(self), backward


def exp2(self):
    out = np.exp2(self)

    def backward(dout):
        return dout * out * 0.6931471805599453  # ln 2, a Python float: float32 stays float32

    return out, backward


def expm1(self):
    out = np.expm1(self)

    def backward(dout):
        return dout * (out + 1.0)

    return out, backward


def log2(self):
    def backward(dout):
        return dout / (self * 0.6931471805599453)  # ln 2

    return np.log2(self), backward


def log10(self):
    def backward(dout):
        return dout / (self * 2.302585092994046)  # ln 10

    return np.log10(self), backward


def log1p(self):
    def backward(dout):
        return dout / (self + 1.0)

    return np.log1p(self), backward


def arcsin(self):
    def backward(dout):
        return dout / np.sqrt(1.0 - self * self)

    return np.arcsin(self), backward


def arccos(self):
    def backward(dout):
        return -dout / np.sqrt(1.0 - self * self)

    return np.arccos(self), backward


def arctan(self):
    def backward(dout):
        return dout / (1.0 + self * self)

    return np.arctan(self), backward


def sinh(self):
    def backward(dout):
        return dout * np.cosh(self)

    return np.sinh(self), backward


def cosh(self):
    def backward(dout):
        return dout * np.sinh(self)

    return np.cosh(self), backward


def arcsinh(self):
    def backward(dout):
        return dout / np.sqrt(self * self + 1.0)

    return np.arcsinh(self), backward


def arccosh(self):
    def backward(dout):
        return dout / np.sqrt((self - 1.0) * (self + 1.0))

    return np.arccosh(self), backward


def arctanh(self):
    def backward(dout):
        return dout / (1.0 - self * self)

    return np.arctanh(self), backward


def sinc(self):
    out = np.sinc(self)

    def backward(dout):
        # (cos(pi x) - sinc(x)) / x, whose limit at x = 0 is 0.
        at_zero = self == 0.0
        safe = np.where(at_zero, 1.0, self)
        return np.where(at_zero, 0.0, dout * (np.cos(np.pi * self) - out) / safe)

    return out, backward


def deg2rad(self):
    def backward(dout):
        return dout * (np.pi / 180.0)

    return np.deg2rad(self), backward


def rad2deg(self):
    def backward(dout):
        return dout * (180.0 / np.pi)

    return np.rad2deg(self), backward


def fabs(self):
    def backward(dout):
        return dout * np.sign(self)

    return np.fabs(self), backward


def maximum(self, other):
    out = np.maximum(self, other)
    self_size = size_if_not_equal(self, out)
    other_size = size_if_not_equal(other, out)

    def backward(dout):
        # Masks multiply the gradient itself, so it keeps its dtype (float32 stays float32).
        mine = dout * (self > other) + 0.5 * dout * (self == other)
        return sum_to_size(mine, self_size), sum_to_size(dout - mine, other_size)

    return out, backward


def minimum(self, other):
    out = np.minimum(self, other)
    self_size = size_if_not_equal(self, out)
    other_size = size_if_not_equal(other, out)

    def backward(dout):
        # Masks multiply the gradient itself, so it keeps its dtype (float32 stays float32).
        mine = dout * (self < other) + 0.5 * dout * (self == other)
        return sum_to_size(mine, self_size), sum_to_size(dout - mine, other_size)

    return out, backward


def fmax(self, other):
    out = np.fmax(self, other)
    self_size = size_if_not_equal(self, out)
    other_size = size_if_not_equal(other, out)

    def backward(dout):
        to_self = np.logical_or(self > other, np.isnan(other))
        grad_self = np.where(to_self, dout, np.where(self == other, 0.5 * dout, 0.0))
        return sum_to_size(grad_self, self_size), sum_to_size(dout - grad_self, other_size)

    return out, backward


def fmin(self, other):
    out = np.fmin(self, other)
    self_size = size_if_not_equal(self, out)
    other_size = size_if_not_equal(other, out)

    def backward(dout):
        to_self = np.logical_or(self < other, np.isnan(other))
        grad_self = np.where(to_self, dout, np.where(self == other, 0.5 * dout, 0.0))
        return sum_to_size(grad_self, self_size), sum_to_size(dout - grad_self, other_size)

    return out, backward


def arctan2(self, other):
    out = np.arctan2(self, other)
    self_size = size_if_not_equal(self, out)
    other_size = size_if_not_equal(other, out)

    def backward(dout):
        scale = dout / (self * self + other * other)
        return sum_to_size(scale * other, self_size), sum_to_size(-scale * self, other_size)

    return out, backward


def hypot(self, other):
    out = np.hypot(self, other)
    self_size = size_if_not_equal(self, out)
    other_size = size_if_not_equal(other, out)

    def backward(dout):
        scale = dout / np.where(out == 0.0, 1.0, out)
        return sum_to_size(scale * self, self_size), sum_to_size(scale * other, other_size)

    return out, backward


def logaddexp(self, other):
    out = np.logaddexp(self, other)
    self_size = size_if_not_equal(self, out)
    other_size = size_if_not_equal(other, out)

    def backward(dout):
        grad_self = sum_to_size(dout * np.exp(self - out), self_size)
        return grad_self, sum_to_size(dout * np.exp(other - out), other_size)

    return out, backward


def logaddexp2(self, other):
    out = np.logaddexp2(self, other)
    self_size = size_if_not_equal(self, out)
    other_size = size_if_not_equal(other, out)

    def backward(dout):
        grad_self = sum_to_size(dout * np.exp2(self - out), self_size)
        return grad_self, sum_to_size(dout * np.exp2(other - out), other_size)

    return out, backward


def where(condition, x, y):
    out = np.where(condition, x, y)
    x_size = size_if_not_equal(x, out)
    y_size = size_if_not_equal(y, out)

    def backward(dout):
        grad_x = sum_to_size(np.where(condition, dout, 0.0), x_size)
        grad_y = sum_to_size(np.where(condition, 0.0, dout), y_size)
        return None, grad_x, grad_y

    return out, backward


def clip(self, a_min, a_max):
    out = np.clip(self, a_min, a_max)
    self_size = size_if_not_equal(self, out)
    min_size = size_if_not_equal(a_min, out)
    max_size = size_if_not_equal(a_max, out)

    def backward(dout):
        # Where self was raised to a_min, the gradient goes to a_min; lowered, to a_max.
        grad_self = sum_to_size(dout * (out == self), self_size)
        grad_min = sum_to_size(dout * (self < out), min_size)
        grad_max = sum_to_size(dout * (self > out), max_size)
        return grad_self, grad_min, grad_max

    return out, backward


def nan_to_num(self, nan, posinf, neginf):
    complex_input = is_complex(self)

    def backward(dout):
        # A complex value's real and imaginary parts are replaced each on its own: Re(dout)
        # where the real part is finite plus i Im(dout) where the imaginary part is.
        if complex_input:
            real_part = (dout + np.conj(dout)) * 0.5 * np.isfinite(np.real(self))
            imag_part = (dout - np.conj(dout)) * 0.5 * np.isfinite(np.imag(self))
            grad = real_part + imag_part
        else:
            grad = dout * np.isfinite(self)
        return grad, None, None, None

    return np.nan_to_num(self, nan=nan, posinf=posinf, neginf=neginf), backward


# ---- reductions -------------------------------------------------------------------------------


def sum_(self, axis, keepdims):
    shape = self.shape

    def backward(dout):
        return unreduce(dout, shape, axis, keepdims), None, None

    return np.sum(self, axis=axis, keepdims=keepdims), backward


def mean(self, axis, keepdims):
    shape = self.shape
    out = np.mean(self, axis=axis, keepdims=keepdims)
    # An empty argument has an empty gradient, whatever the scale (JAX, PyTorch): no 0 / 0.
    scale = np.size(out) / max(np.size(self), 1)

    def backward(dout):
        # Scaled before it is spread: one multiplication per reduced element, same bits.
        return unreduce(dout * scale, shape, axis, keepdims), None, None

    return out, backward


def prod(self, axis, keepdims):
    def backward(dout):
        return prod_backward(dout, self, axis, keepdims), None, None

    return np.prod(self, axis=axis, keepdims=keepdims), backward


def max_(self, axis, keepdims):
    shape = self.shape
    out = np.max(self, axis=axis, keepdims=keepdims)
    dtype = dtype_of(out)

    def backward(dout):
        # Ties share dout evenly. Dividing by the count before spreading gives the same bits
        # as dividing the spread product (hits are 0 or 1), at the reduced size.
        hits = self == unreduce(out, shape, axis, keepdims)
        count = np.sum(hits, axis=axis, keepdims=keepdims).astype(dtype)
        return hits * unreduce(dout / count, shape, axis, keepdims), None, None

    return out, backward


def min_(self, axis, keepdims):
    shape = self.shape
    out = np.min(self, axis=axis, keepdims=keepdims)
    dtype = dtype_of(out)

    def backward(dout):
        # Ties share dout evenly. Dividing by the count before spreading gives the same bits
        # as dividing the spread product (hits are 0 or 1), at the reduced size.
        hits = self == unreduce(out, shape, axis, keepdims)
        count = np.sum(hits, axis=axis, keepdims=keepdims).astype(dtype)
        return hits * unreduce(dout / count, shape, axis, keepdims), None, None

    return out, backward


def var(self, axis, keepdims, ddof):
    shape = self.shape
    out = np.var(self, axis=axis, keepdims=keepdims, ddof=ddof)
    # mean(|x - mean x|^2): its cotangent is the conjugate of the centred values (Note
    # [Complex gradients]); the branch folds away, so a real array is not copied by conj.
    centered = self - np.mean(self, axis=axis, keepdims=True)
    centered = np.conj(centered) if is_complex(self) else centered
    count = np.size(self) / max(np.size(out), 1) - ddof  # an empty result: empty gradients

    def backward(dout):
        # Divided last: a count of 0 (ddof too large) gives inf as np.var does, not an error.
        return unreduce(dout, shape, axis, keepdims) * centered * 2.0 / count, None, None, None

    return out, backward


def std(self, axis, keepdims, ddof):
    shape = self.shape
    out = np.std(self, axis=axis, keepdims=keepdims, ddof=ddof)
    centered = self - np.mean(self, axis=axis, keepdims=True)
    centered = np.conj(centered) if is_complex(self) else centered
    count = np.size(self) / max(np.size(out), 1) - ddof  # an empty result: empty gradients
    # std is a scaled norm of the centred values: where they are all 0 (equal values) its
    # gradient is the least-norm subgradient, 0, as the norm's is at 0, and so is its second
    # derivative (the where routes none through the other branch).
    flat = out == 0.0
    safe = np.where(flat, 1.0, out)

    def backward(dout):
        scale = np.where(flat, 0.0, dout / safe)
        return unreduce(scale, shape, axis, keepdims) * centered / count, None, None, None

    return out, backward


def cumsum(self, axis):
    shape = self.shape

    def backward(dout):
        return cumsum_backward(dout, shape, axis), None

    return np.cumsum(self, axis=axis), backward


def diff(self, n, axis):
    shape = self.shape

    def backward(dout):
        return diff_backward(dout, shape, n, axis), None, None

    return np.diff(self, n=n, axis=axis), backward


# ---- shapes -----------------------------------------------------------------------------------


def reshape(self, shape):
    self_shape = self.shape

    def backward(dout):
        return np.reshape(dout, self_shape), None

    return np.reshape(self, shape), backward


def ravel(self):
    self_shape = self.shape

    def backward(dout):
        return np.reshape(dout, self_shape)

    return np.ravel(self), backward


def flatten(self):
    self_shape = self.shape

    def backward(dout):
        return np.reshape(dout, self_shape)

    return flatten_kernel(self), backward


def squeeze(self, axis):
    self_shape = self.shape

    def backward(dout):
        return np.reshape(dout, self_shape), None

    return np.squeeze(self, axis), backward


def expand_dims(self, axis):
    self_shape = self.shape

    def backward(dout):
        return np.reshape(dout, self_shape), None

    return np.expand_dims(self, axis), backward


def transpose(self, axes):
    def backward(dout):
        return transpose_backward(dout, axes), None

    return np.transpose(self, axes), backward


def broadcast_to(self, shape):
    self_shape = self.shape

    def backward(dout):
        return sum_to_size(dout, self_shape), None

    return np.broadcast_to(self, shape), backward


def sum_to_size_(self, shape):
    self_shape = self.shape

    def backward(dout):
        return np.broadcast_to(dout, self_shape), None

    return sum_to_size(self, shape), backward


# A list of arrays (``np.stack(hs)``) gets a list of gradients, a tuple a tuple: Note [Lists
# are values] in `ir.ops.prim`. ``is_list`` folds to a constant once types are specialised.


def concatenate(tensors, axis):
    sizes = input_shapes(tensors)
    as_list = is_list(tensors)

    def backward(dout):
        return sequence_as(concatenate_backward(dout, sizes, axis), as_list), None

    return np.concatenate(tensors, axis=axis), backward


def stack(tensors, axis):
    as_list = is_list(tensors)

    def backward(dout):
        return sequence_as(stack_backward(dout, axis), as_list), None

    return np.stack(tensors, axis=axis), backward


def astype(self, dtype):
    self_dtype = dtype_of(self)

    def backward(dout):
        return dout.astype(self_dtype), None

    return self.astype(dtype), backward


def copy(self):
    def backward(dout):
        return dout

    return self.copy(), backward


def asarray(self):
    def backward(dout):
        return dout

    return number_to_array(self), backward


# ---- arrangement: moving axes, stacking and splitting, repeating, padding, flipping -----------


def moveaxis(self, source, destination):
    def backward(dout):
        return np.moveaxis(dout, destination, source), None, None

    return np.moveaxis(self, source, destination), backward


def swapaxes(self, axis1, axis2):
    def backward(dout):
        return np.swapaxes(dout, axis1, axis2), None, None

    return np.swapaxes(self, axis1, axis2), backward


def rollaxis(self, axis, start):
    destination = rollaxis_destination(self.ndim, axis, start)

    def backward(dout):
        return np.moveaxis(dout, destination, axis), None, None

    return np.rollaxis(self, axis, start), backward


def atleast_1d(self):
    self_shape = self.shape

    def backward(dout):
        return np.reshape(dout, self_shape)

    return np.atleast_1d(self), backward


def atleast_2d(self):
    self_shape = self.shape

    def backward(dout):
        return np.reshape(dout, self_shape)

    return np.atleast_2d(self), backward


def atleast_3d(self):
    self_shape = self.shape

    def backward(dout):
        return np.reshape(dout, self_shape)

    return np.atleast_3d(self), backward


def hstack(tensors):
    shapes = input_shapes(tensors)
    out = np.hstack(tensors)
    axis = min(out.ndim - 1, 1)

    def backward(dout):
        return join_backward(dout, shapes, axis)

    return out, backward


def vstack(tensors):
    shapes = input_shapes(tensors)

    def backward(dout):
        return join_backward(dout, shapes, 0)

    return np.vstack(tensors), backward


# The split family returns several arrays: ``dout`` is the tuple of their gradients, with zeros
# for the pieces that got none (`autodiff.differentiate` fills them in).


def frexp(self):
    out = np.frexp(self)
    exponent = out[1]

    def backward(dout):
        # dout[1], the integer exponent's gradient, is None: trimmed, as it carries none.
        return dout[0] * 2.0 ** (-exponent)

    return out, backward


def split(self, indices_or_sections, axis):
    def backward(dout):
        return np.concatenate(dout, axis=axis), None, None

    return np.split(self, indices_or_sections, axis), backward


def array_split(self, indices_or_sections, axis):
    def backward(dout):
        return np.concatenate(dout, axis=axis), None, None

    return np.array_split(self, indices_or_sections, axis), backward


def hsplit(self, indices_or_sections):
    def backward(dout):
        return np.hstack(dout), None

    return np.hsplit(self, indices_or_sections), backward


def vsplit(self, indices_or_sections):
    def backward(dout):
        return np.concatenate(dout, axis=0), None

    return np.vsplit(self, indices_or_sections), backward


def dsplit(self, indices_or_sections):
    def backward(dout):
        return np.concatenate(dout, axis=2), None

    return np.dsplit(self, indices_or_sections), backward


def repeat(self, repeats, axis):
    shape = self.shape

    def backward(dout):
        return repeat_backward(dout, shape, repeats, axis), None, None

    return np.repeat(self, repeats, axis), backward


def tile(self, reps):
    shape = self.shape

    def backward(dout):
        return tile_backward(dout, shape, reps), None

    return np.tile(self, reps), backward


def pad(self, pad_width, mode, constant_values):
    shape = self.shape

    def backward(dout):
        grad_self, grad_value = pad_backward(dout, shape, pad_width, mode)
        return grad_self, None, None, grad_value

    return np.pad(self, pad_width, mode, constant_values=constant_values), backward


def flip(self, axis):
    def backward(dout):
        return np.flip(dout, axis), None

    return np.flip(self, axis), backward


def fliplr(self):
    def backward(dout):
        return np.fliplr(dout)

    return np.fliplr(self), backward


def flipud(self):
    def backward(dout):
        return np.flipud(dout)

    return np.flipud(self), backward


def rot90(self, k, axes):
    back = -k

    def backward(dout):
        return np.rot90(dout, back, axes), None, None

    return np.rot90(self, k, axes), backward


def roll(self, shift, axis):
    back = negated(shift)

    def backward(dout):
        return np.roll(dout, back, axis), None, None

    return np.roll(self, shift, axis), backward


# ---- np.fft: shifts, transforms and complex parts (Note [Complex gradients]) -----------------


def fft_fftshift(self, axes):
    def backward(dout):
        return np.fft.ifftshift(dout, axes), None

    return np.fft.fftshift(self, axes), backward


def fft_ifftshift(self, axes):
    def backward(dout):
        return np.fft.fftshift(dout, axes), None

    return np.fft.ifftshift(self, axes), backward


def fft_fft(self, n, axis, norm):
    def backward(dout):
        return fft_backward(dout, self, n, axis, norm, False), None, None, None

    return np.fft.fft(self, n, axis, norm), backward


def fft_ifft(self, n, axis, norm):
    def backward(dout):
        return fft_backward(dout, self, n, axis, norm, True), None, None, None

    return np.fft.ifft(self, n, axis, norm), backward


def fft_rfft(self, n, axis, norm):
    def backward(dout):
        return rfft_backward(dout, self, n, axis, norm), None, None, None

    return np.fft.rfft(self, n, axis, norm), backward


def fft_irfft(self, n, axis, norm):
    def backward(dout):
        return irfft_backward(dout, self, n, axis, norm), None, None, None

    return np.fft.irfft(self, n, axis, norm), backward


def fft_fft2(self, axes, norm):
    def backward(dout):
        return grad_like(np.fft.fft2(dout, axes=axes, norm=norm), self), None, None

    return np.fft.fft2(self, axes=axes, norm=norm), backward


def fft_ifft2(self, axes, norm):
    def backward(dout):
        return grad_like(np.fft.ifft2(dout, axes=axes, norm=norm), self), None, None

    return np.fft.ifft2(self, axes=axes, norm=norm), backward


def fft_fftn(self, axes, norm):
    def backward(dout):
        return grad_like(np.fft.fftn(dout, axes=axes, norm=norm), self), None, None

    return np.fft.fftn(self, axes=axes, norm=norm), backward


def fft_ifftn(self, axes, norm):
    def backward(dout):
        return grad_like(np.fft.ifftn(dout, axes=axes, norm=norm), self), None, None

    return np.fft.ifftn(self, axes=axes, norm=norm), backward


def real(self):
    def backward(dout):
        return grad_like(dout, self)

    return np.real(self), backward


def imag(self):
    def backward(dout):
        return imag_backward(dout, self)

    return np.imag(self), backward


def conj(self):
    def backward(dout):
        return grad_like(np.conj(dout), self)

    return np.conj(self), backward


# Adjoints of the np.fft helpers: each is linear in its gradient, so its own vjp is the
# transform it transposes (Note [Complex gradients]); second derivatives go through them.


def _grad_like(grad, like):
    def backward(dout):
        return grad_like(dout, grad), None

    return grad_like(grad, like), backward


def _imag_backward(grad, like):
    def backward(dout):
        return imag_backward(dout, grad), None

    return imag_backward(grad, like), backward


def _fft_backward(grad, like, n, axis, norm, inverse):
    def backward(dout):
        if inverse:
            transposed = np.fft.ifft(dout, n, axis, norm)
        else:
            transposed = np.fft.fft(dout, n, axis, norm)
        return grad_like(transposed, grad), None, None, None, None, None

    return fft_backward(grad, like, n, axis, norm, inverse), backward


def _rfft_backward(grad, like, n, axis, norm):
    def backward(dout):
        return grad_like(np.fft.rfft(dout, n, axis, norm), grad), None, None, None, None

    return rfft_backward(grad, like, n, axis, norm), backward


def _irfft_backward(grad, like, n, axis, norm):
    def backward(dout):
        return grad_like(np.fft.irfft(dout, n, axis, norm), grad), None, None, None, None

    return irfft_backward(grad, like, n, axis, norm), backward


# ---- selection: diagonals, triangles, take ----------------------------------------------------


def diag(self, k):
    shape = self.shape

    def backward(dout):
        return diag_backward(dout, shape, k), None

    return np.diag(self, k), backward


def diagonal(self, offset, axis1, axis2):
    shape = self.shape

    def backward(dout):
        return diagonal_backward(dout, shape, offset, axis1, axis2), None, None, None

    return np.diagonal(self, offset, axis1, axis2), backward


def trace(self, offset, axis1, axis2):
    shape = self.shape

    def backward(dout):
        # One gradient per matrix, spread along its diagonal.
        spread = np.expand_dims(dout, -1)
        return diagonal_backward(spread, shape, offset, axis1, axis2), None, None, None

    return np.trace(self, offset, axis1, axis2), backward


def tril(self, k):
    out = np.tril(self, k)
    self_size = size_if_not_equal(self, out)

    def backward(dout):
        return sum_to_size(np.tril(dout, k), self_size), None

    return out, backward


def triu(self, k):
    out = np.triu(self, k)
    self_size = size_if_not_equal(self, out)

    def backward(dout):
        return sum_to_size(np.triu(dout, k), self_size), None

    return out, backward


def take(self, indices, axis):
    shape = self.shape

    def backward(dout):
        return take_backward(dout, shape, indices, axis), None, None

    return np.take(self, indices, axis), backward


# ---- products beyond matmul and dot; sorting -----------------------------------------------------


def tensordot(self, other, axes):
    subscripts = tensordot_subscripts(self.ndim, other.ndim, axes)

    def backward(dout):
        grad_self, grad_other = einsum_vjp(dout, subscripts, (self, other))
        return grad_self, grad_other, None

    return np.tensordot(self, other, axes), backward


def einsum(subscripts, operands):
    # The operands come as one tuple; their gradients go back as one tuple too.
    def backward(dout):
        return None, einsum_vjp(dout, subscripts, operands)

    return einsum_kernel(subscripts, operands), backward


def _einsum_view(self, subscripts):
    # A relabelling of one operand's axes and diagonals: its gradient goes back onto them.
    def backward(dout):
        return einsum_scatter_kernel(np.zeros_like(self), dout, subscripts), None

    return einsum_view_kernel(self, subscripts), backward


def inner(self, other):
    subscripts = inner_subscripts(np.ndim(self), np.ndim(other))

    def backward(dout):
        grad_self, grad_other = einsum_vjp(dout, subscripts, (self, other))
        return grad_self, grad_other

    return np.inner(self, other), backward


def outer(self, other):
    self_shape = np.shape(self)
    other_shape = np.shape(other)

    def backward(dout):
        flat = (np.ravel(self), np.ravel(other))
        grad_self, grad_other = einsum_vjp(dout, "i,j->ij", flat)
        return np.reshape(grad_self, self_shape), np.reshape(grad_other, other_shape)

    return np.outer(self, other), backward


def kron(self, other):
    subscripts = kron_subscripts(np.ndim(self), np.ndim(other))
    split = kron_split(np.shape(self), np.shape(other))

    def backward(dout):
        grad_self, grad_other = einsum_vjp(np.reshape(dout, split), subscripts, (self, other))
        return grad_self, grad_other

    return np.kron(self, other), backward


def cross(self, other):
    out = np.cross(self, other)
    self_size = size_if_not_equal(self, out)
    other_size = size_if_not_equal(other, out)

    def backward(dout):
        # dout . (self x other) = self . (other x dout) = other . (dout x self)
        grad_self = sum_to_size(np.cross(other, dout), self_size)
        return grad_self, sum_to_size(np.cross(dout, self), other_size)

    return out, backward


def sort(self, axis, kind, stable):
    shape = self.shape
    order = np.argsort(self, axis, kind, stable=stable)

    def backward(dout):
        return unpermute(dout, shape, order, axis), None, None, None

    return np.sort(self, axis, kind, stable=stable), backward


def partition(self, kth, axis):
    shape = self.shape
    order = np.argpartition(self, kth, axis)

    def backward(dout):
        return unpermute(dout, shape, order, axis), None, None

    return np.partition(self, kth, axis), backward


def _einsum_backward(grad, subscripts, operands):
    # Linear in the gradient and in each operand: its own gradient is einsums again.
    def backward(dout):
        grad_grad, grad_operands = einsum_vjp_backward(dout, grad, subscripts, operands)
        return grad_grad, None, grad_operands

    return einsum_vjp(grad, subscripts, operands), backward


def _einsum_double_backward(cotangents, grad, subscripts, operands):
    # Multilinear in the cotangents, the gradient and the operands: einsums again.
    def backward(dout):
        dout_grad, dout_operands = dout
        grads = einsum_vjp_backward_backward(
            dout_grad, dout_operands, cotangents, grad, subscripts, operands
        )
        grad_cotangents, grad_grad, grad_operands = grads
        return grad_cotangents, grad_grad, None, grad_operands

    return einsum_vjp_backward(cotangents, grad, subscripts, operands), backward


def _unpermute(grad, shape, order, axis):
    # A scatter by a permutation; its adjoint is the gather by that permutation.
    def backward(dout):
        return permute(dout, order, axis), None, None, None

    return unpermute(grad, shape, order, axis), backward


def _permute(self, order, axis):
    shape = self.shape

    def backward(dout):
        return unpermute(dout, shape, order, axis), None, None

    return permute(self, order, axis), backward


# ---- indexing ---------------------------------------------------------------------------------


def select(self, axis, index):
    shape = self.shape

    def backward(dout):
        return select_backward(dout, shape, axis, index), None, None

    return select_kernel(self, axis, index), backward


def slice_(self, axis, start, stop, step):
    shape = self.shape

    def backward(dout):
        return slice_backward(dout, shape, axis, start, stop, step), None, None, None, None

    return slice_axis(self, axis, start, stop, step), backward


def index(self, indices):
    # aten::index is variadic; its formula receives the index operands packed in one tuple.
    shape = self.shape

    def backward(dout):
        return index_backward(dout, shape, indices), None

    return index_tuple(self, indices), backward


# ---- writes: the functional forms of assignment (Note [Scatters] in `ir.ops.scatter`) ---------
# What a write replaces gets no gradient; what it writes gets the gradient of where it landed,
# summed back over its broadcasting and cast to its dtype (``gradient_dtype``: a Python number's
# gradient keeps the result's precision).


def _written(target, value):
    out = written(target, value)
    value_size = size_if_not_equal(value, out)
    value_dtype = gradient_dtype(value, out)

    def backward(dout):
        return None, sum_to_size(dout, value_size).astype(value_dtype)

    return out, backward


def select_scatter(self, src, axis, index):
    out = select_scatter_kernel(self, src, axis, index)
    src_size = size_if_not_equal(src, select_kernel(out, axis, index))
    src_dtype = gradient_dtype(src, out)

    def backward(dout):
        grad_self = select_scatter_kernel(dout, np.zeros(()), axis, index)
        grad_src = sum_to_size(select_kernel(dout, axis, index), src_size).astype(src_dtype)
        return grad_self, grad_src, None, None

    return out, backward


def slice_scatter(self, src, axis, start, stop, step):
    out = slice_scatter_kernel(self, src, axis, start, stop, step)
    src_size = size_if_not_equal(src, slice_axis(out, axis, start, stop, step))
    src_dtype = gradient_dtype(src, out)

    def backward(dout):
        grad_self = slice_scatter_kernel(dout, np.zeros(()), axis, start, stop, step)
        region = slice_axis(dout, axis, start, stop, step)
        grad_src = sum_to_size(region, src_size).astype(src_dtype)
        return grad_self, grad_src, None, None, None, None

    return out, backward


def _einsum_scatter(self, src, subscripts):
    out = einsum_scatter_kernel(self, src, subscripts)
    src_size = size_if_not_equal(src, einsum_view_kernel(out, subscripts))
    src_dtype = gradient_dtype(src, out)

    def backward(dout):
        grad_self = einsum_scatter_kernel(dout, np.zeros(()), subscripts)
        region = einsum_view_kernel(dout, subscripts)
        return grad_self, sum_to_size(region, src_size).astype(src_dtype), None

    return out, backward


def _real_scatter(self, src):
    # out = src + 1j Im(self): self keeps only its imaginary part's gradient (Note [Complex
    # gradients]: the cotangent's imaginary part), src gets the cotangent's real part.
    src_size = size_if_not_equal(src, np.real(self))

    def backward(dout):
        grad_self = real_scatter_kernel(dout, np.zeros(()))
        return grad_self, sum_to_size(np.real(dout), src_size)

    return real_scatter_kernel(self, src), backward


def _imag_scatter(self, src):
    # out = Re(self) + 1j src: the cotangent is dL/dRe - 1j dL/dIm, so src's gradient, dL/dIm,
    # is minus the cotangent's imaginary part.
    src_size = size_if_not_equal(src, np.imag(self))

    def backward(dout):
        grad_self = imag_scatter_kernel(dout, np.zeros(()))
        return grad_self, sum_to_size(-np.imag(dout), src_size)

    return imag_scatter_kernel(self, src), backward


def index_put(self, values, indices):
    # Variadic: the index operands come packed in one tuple. Of the values written to one
    # position only the last stays in the result, so only it gets a gradient.
    out = index_put_tuple(self, values, indices)
    values_size = size_if_not_equal(values, index_tuple(self, indices))
    values_dtype = gradient_dtype(values, out)

    def backward(dout):
        grad_values = sum_to_size(gather_last_written(dout, indices), values_size)
        return zero_written(dout, indices), grad_values.astype(values_dtype), None

    return out, backward


def add_at(self, values, indices):
    # Every value added to a position stays in the sum there: each gets that position's
    # gradient, and self is passed through whole.
    out = add_at_tuple(self, values, indices)
    values_size = size_if_not_equal(values, index_tuple(self, indices))
    values_dtype = gradient_dtype(values, out)

    def backward(dout):
        grad_values = sum_to_size(index_tuple(dout, indices), values_size)
        return dout, grad_values.astype(values_dtype), None

    return out, backward


# ---- helpers of the formulas above: their gradients make gradients differentiable again ------
# Each helper is linear in its gradient operand, so its own gradient is the adjoint map; the
# product helpers are bilinear, so d<G, f(A, B)> in a direction is f in that direction.


def _unreduce(grad, shape, axis, keepdims):
    grad_shape = grad.shape

    def backward(dout):
        summed = np.sum(dout, axis=axis, keepdims=keepdims)
        return np.reshape(summed, grad_shape), None, None, None

    return unreduce(grad, shape, axis, keepdims), backward


def _transpose_backward(grad, axes):
    def backward(dout):
        return np.transpose(dout, axes), None

    return transpose_backward(grad, axes), backward


def _matmul_backward_self(grad, self, other):
    # Linear in grad and other; self gives only its shape.
    def backward(dout):
        return dout @ other, None, matmul_backward_other(grad, dout, other)

    return matmul_backward_self(grad, self, other), backward


def _matmul_backward_other(grad, self, other):
    # Linear in grad and self; other gives only its shape.
    def backward(dout):
        return self @ dout, matmul_backward_self(grad, self, dout), None

    return matmul_backward_other(grad, self, other), backward


def _dot_backward(grad, self, other):
    def backward(dout):
        dout_self, dout_other = dout
        grad_grad = np.dot(dout_self, other) + np.dot(self, dout_other)
        grad_self, _ = dot_backward(grad, self, dout_other)
        _, grad_other = dot_backward(grad, dout_self, other)
        return grad_grad, grad_self, grad_other

    return dot_backward(grad, self, other), backward


def _prod_backward(grad, self, axis, keepdims):
    # Linear in the gradient, not in self: the second derivative of a product.
    def backward(dout):
        grad_grad, grad_self = prod_double_backward(dout, grad, self, axis, keepdims)
        return grad_grad, grad_self, None, None

    return prod_backward(grad, self, axis, keepdims), backward


def _select_backward(grad, shape, axis, index):
    def backward(dout):
        return select_kernel(dout, axis, index), None, None, None

    return select_backward(grad, shape, axis, index), backward


def _slice_backward(grad, shape, axis, start, stop, step):
    def backward(dout):
        return slice_axis(dout, axis, start, stop, step), None, None, None, None, None

    return slice_backward(grad, shape, axis, start, stop, step), backward


def _index_backward(grad, shape, indices):
    def backward(dout):
        return index_tuple(dout, indices), None, None

    return index_backward(grad, shape, indices), backward


def _index_tuple(self, indices):
    shape = self.shape

    def backward(dout):
        return index_backward(dout, shape, indices), None

    return index_tuple(self, indices), backward


def _zero_written(grad, indices):
    # A projection: zeroing the same positions again is its own adjoint.
    def backward(dout):
        return zero_written(dout, indices), None

    return zero_written(grad, indices), backward


def _gather_last_written(grad, indices):
    shape = grad.shape

    def backward(dout):
        return scatter_last_written(dout, shape, indices), None

    return gather_last_written(grad, indices), backward


def _scatter_last_written(grad, shape, indices):
    def backward(dout):
        return gather_last_written(dout, indices), None, None

    return scatter_last_written(grad, shape, indices), backward


def _take_backward(grad, shape, indices, axis):
    def backward(dout):
        return np.take(dout, indices, axis), None, None, None

    return take_backward(grad, shape, indices, axis), backward


def _tile_backward(grad, shape, reps):
    # Sums the tiles' gradients: its adjoint tiles again.
    def backward(dout):
        return np.tile(dout, reps), None, None

    return tile_backward(grad, shape, reps), backward


def _pad_backward(grad, shape, pad_width, mode):
    # Gathers the padded gradient onto the elements and the constant it copies: its adjoint
    # pads again, with the constant's cotangent as the constant (the copying modes have none).
    def backward(dout):
        dout_self, dout_value = dout
        return np.pad(dout_self, pad_width, mode, constant_values=dout_value), None, None, None

    return pad_backward(grad, shape, pad_width, mode), backward


def _join_backward(grad, shapes, axis):
    # Splits hstack's or vstack's gradient: its adjoint joins the pieces again.
    ndim = grad.ndim

    def backward(dout):
        return join(dout, axis, ndim), None, None

    return join_backward(grad, shapes, axis), backward


def _join(tensors, axis, ndim):
    shapes = input_shapes(tensors)

    def backward(dout):
        return join_backward(dout, shapes, axis), None, None

    return join(tensors, axis, ndim), backward


def _cumsum_backward(grad, shape, axis):
    def backward(dout):
        return np.cumsum(dout, axis), None, None

    return cumsum_backward(grad, shape, axis), backward


def _concatenate_backward(grad, sizes, axis):
    def backward(dout):
        return np.concatenate(dout, axis=axis), None, None

    return concatenate_backward(grad, sizes, axis), backward


def _stack_backward(grad, axis):
    def backward(dout):
        return np.stack(dout, axis=axis), None

    return stack_backward(grad, axis), backward


def _repeat_backward(grad, shape, repeats, axis):
    def backward(dout):
        return np.repeat(dout, repeats, axis), None, None, None

    return repeat_backward(grad, shape, repeats, axis), backward


def _diagonal_backward(grad, shape, offset, axis1, axis2):
    grad_shape = grad.shape

    def backward(dout):
        diagonal = np.diagonal(dout, offset, axis1, axis2)
        return sum_to_size(diagonal, grad_shape), None, None, None, None

    return diagonal_backward(grad, shape, offset, axis1, axis2), backward


def _diag_backward(grad, shape, k):
    def backward(dout):
        return np.diag(dout, k), None, None

    return diag_backward(grad, shape, k), backward


def _diff_backward(grad, shape, n, axis):
    def backward(dout):
        return np.diff(dout, n, axis), None, None, None

    return diff_backward(grad, shape, n, axis), backward


# ---- np.linalg --------------------------------------------------------------------------------
# Matrices may come in stacks, so transposes swap the last two axes. Decompositions assume what
# makes their derivative exist: distinct eigenvalues (eigh) and singular values (svd), a
# positive definite input (cholesky), full rank (pinv). cholesky and eigh read one triangle of
# their input only, as NumPy does: the other triangle gets no gradient.


def linalg_inv(self):
    out = np.linalg.inv(self)

    def backward(dout):
        out_t = np.swapaxes(out, -1, -2)
        return -(out_t @ dout @ out_t)

    return out, backward


def linalg_det(self):
    out = np.linalg.det(self)

    def backward(dout):
        scale = np.expand_dims(dout * out, (-2, -1))
        return scale * np.swapaxes(np.linalg.inv(self), -1, -2)

    return out, backward


def linalg_slogdet(self):
    out = np.linalg.slogdet(self)

    def backward(dout):
        # d log det = tr(A^-1 dA): logabsdet takes its real part, and the sign (a phase
        # exp(i arg det), piecewise constant for a real A) moves by i times its imaginary part,
        # so the sign's cotangent adds i Im(dout[0] * sign), written (w - conj(w)) / 2 so that
        # it stays real (0) for a real A.
        phase = dout[0] * out[0]
        scale = np.expand_dims(dout[1] + (phase - np.conj(phase)) / 2.0, (-2, -1))
        return scale * np.swapaxes(np.linalg.inv(self), -1, -2)

    return out, backward


def linalg_solve(self, other):
    out = np.linalg.solve(self, other)
    self_shape = self.shape
    other_shape = other.shape
    # A 1-d ``other`` is one column (NumPy 2), the others stacks of columns.
    vector = other.ndim == 1
    out_columns = np.expand_dims(out, -1) if vector else out

    def backward(dout):
        dout_columns = np.expand_dims(dout, -1) if vector else dout
        solved = np.linalg.solve(np.swapaxes(self, -1, -2), dout_columns)
        grad_self = -(solved @ np.swapaxes(out_columns, -1, -2))
        grad_other = np.sum(solved, -1) if vector else solved
        return sum_to_size(grad_self, self_shape), sum_to_size(grad_other, other_shape)

    return out, backward


def linalg_cholesky(self):
    out = np.linalg.cholesky(self)
    half = 1.0 - 0.5 * np.eye(self.shape[-1], dtype=dtype_of(out))
    hermitian = is_complex(self)

    def backward(dout):
        # Murray (2016): S = L^-T phi(L^T dout) L^-1, phi the lower triangle with its diagonal
        # halved; the lower triangle NumPy reads gets phi(S + S^T). For a Hermitian A the
        # conjugate convention's L^-H and S^H make conj(L^-1) and conj(S^T) here (Note
        # [Complex gradients]); the diagonal, whose imaginary part NumPy ignores, is real.
        inverse = np.linalg.inv(out)
        phi = np.tril(np.swapaxes(out, -1, -2) @ dout) * half
        s = np.swapaxes(inverse, -1, -2) @ phi @ (np.conj(inverse) if hermitian else inverse)
        s_t = np.swapaxes(s, -1, -2)
        return np.tril(s + (np.conj(s_t) if hermitian else s_t)) * half

    return out, backward


def linalg_eigh(self):
    out = np.linalg.eigh(self)
    w = out[0]
    v = out[1]
    eye = np.eye(self.shape[-1], dtype=dtype_of(w))
    half = 1.0 - 0.5 * eye
    hermitian = is_complex(self)

    def backward(dout):
        # conj(V) (diag(dw) + F * (V^T dv)) V^T with F_ij = 1 / (w_j - w_i) off the diagonal
        # (the conjugate of V (diag(dw) + F * (V^H conj(dv))) V^H, the gradient in the
        # conjugate convention: Note [Complex gradients]), then folded onto the lower triangle
        # NumPy reads: A_ji is conj(A_ij), so entry ij gets full_ij + conj(full_ji), and the
        # diagonal, whose imaginary part NumPy ignores, the real part of full_ii.
        f = (1.0 - eye) / (np.expand_dims(w, -2) - np.expand_dims(w, -1) + eye)
        v_t = np.swapaxes(v, -1, -2)
        inner = f * (v_t @ dout[1]) + np.expand_dims(dout[0], -1) * eye
        full = (np.conj(v) if hermitian else v) @ inner @ v_t
        full_t = np.swapaxes(full, -1, -2)
        both = (full + (np.conj(full_t) if hermitian else full_t)) * half
        return np.tril(both)

    return out, backward


def linalg_svd(self, full_matrices, compute_uv):
    out = np.linalg.svd(self, full_matrices, compute_uv)
    complex_input = is_complex(self)

    def backward(dout):
        if compute_uv and full_matrices:
            grad = svd_backward(dout, self, out, full_matrices, compute_uv)
        elif compute_uv:
            # svd_backward for full_matrices=False in differentiable operators (second
            # derivatives through singular vectors): Wan and Zhang (2019) in the conjugate
            # convention, the cotangents conjugated on the way in and the result on the way
            # out (Note [Complex gradients]); i Im(w) is written (w - conj(w)) / 2, and H is
            # the conjugate transpose. For a square U (V) its term is 0 up to rounding.
            u, s, vh = out
            grad_u, grad_s, grad_vh = dout
            grad_u = np.conj(grad_u)
            v = np.conj(np.swapaxes(vh, -1, -2))
            grad_v = np.swapaxes(grad_vh, -1, -2)
            u_h = np.conj(np.swapaxes(u, -1, -2))
            eye = np.eye(s.shape[-1], dtype=dtype_of(s))
            squares = np.expand_dims(s, -2) ** 2 - np.expand_dims(s, -1) ** 2
            apart = (1.0 - eye) / (squares + eye)
            uhgu = u_h @ grad_u
            vhgv = np.conj(np.swapaxes(v, -1, -2)) @ grad_v
            sigma = np.expand_dims(s, -2) * eye
            u_part = apart * (uhgu - np.conj(np.swapaxes(uhgu, -1, -2)))
            v_part = apart * (vhgv - np.conj(np.swapaxes(vhgv, -1, -2)))
            core = u_part @ sigma + sigma @ v_part + np.expand_dims(grad_s, -2) * eye
            inverse = np.expand_dims(1.0 / s, -2)
            if complex_input:
                core = core + (uhgu - np.conj(uhgu)) * 0.5 * eye * inverse
            grad = u @ core @ vh + ((grad_u - u @ uhgu) * inverse) @ vh
            rest = (grad_v - v @ vhgv) * inverse
            grad = grad + u @ np.conj(np.swapaxes(rest, -1, -2))
            grad = np.conj(grad) if complex_input else grad
        else:
            # The values alone: U diag(ds) V^H (conjugated for a complex input: Note [Complex
            # gradients]) in differentiable operators, so that it differentiates again (the
            # Hessian of a nuclear norm). The branch on the constant compute_uv is inlined
            # where the formula is, before shapes: its other branch types dout as a tuple.
            u, _, vh = np.linalg.svd(self, full_matrices=False)
            grad = (u * np.expand_dims(dout, -2)) @ vh
            grad = np.conj(grad) if complex_input else grad
        return grad, None, None

    return out, backward


def linalg_pinv(self):
    out = np.linalg.pinv(self)
    dtype = dtype_of(out)
    rows = np.eye(self.shape[-2], dtype=dtype)
    cols = np.eye(self.shape[-1], dtype=dtype)
    complex_input = is_complex(self)

    def backward(dout):
        # Golub and Pereyra (1973), for a matrix of full rank; for a complex one its conjugate
        # transposes make the conjugates below (Note [Complex gradients]).
        out_t = np.swapaxes(out, -1, -2)
        out_c = np.conj(out) if complex_input else out
        self_c = np.conj(self) if complex_input else self
        dout_t = np.swapaxes(dout, -1, -2)
        dout_h = np.conj(dout_t) if complex_input else dout_t
        grad = -(out_t @ dout @ out_t)
        grad = grad + (rows - self_c @ out_c) @ dout_h @ out_c @ out_t
        return grad + out_t @ out_c @ dout_h @ (cols - out_c @ self_c)

    return out, backward


def linalg_norm(self, order, axis, keepdims):
    out = np.linalg.norm(self, order, axis, keepdims)
    shape = self.shape
    kind = norm_kind(order, axis, self.ndim)
    complex_input = is_complex(self)

    def backward(dout):
        # Written in differentiable operators (its Hessian), as std is; the branch folds
        # once the rank is known. At a norm of 0 the gradient is the least-norm subgradient,
        # 0, and so is its derivative (the where routes none through the other branch).
        spread = unreduce(dout, shape, axis, keepdims)
        norm = unreduce(out, shape, axis, keepdims)
        safe = np.where(norm == 0.0, 1.0, norm)
        slope = np.conj(np.sign(self)) if complex_input else np.sign(self)
        if kind == NORM_EUCLIDEAN:
            direction = np.conj(self) if complex_input else self
            grad = np.where(norm == 0.0, 0.0, spread * direction / safe)
        elif kind == NORM_POWER:
            ratio = (np.abs(self) / safe) ** (float(order) - 1.0)
            grad = np.where(norm == 0.0, 0.0, spread * slope * ratio)
        elif kind == NORM_LARGEST:
            # Ties in the largest (smallest) magnitude share the gradient evenly.
            hits = (np.abs(self) == norm).astype(dtype_of(out))
            grad = spread * slope * hits / np.sum(hits, axis=axis, keepdims=True)
        elif kind == NORM_COUNT:
            grad = spread * slope * 0.0
        else:
            grad = norm_backward(dout, self, out, order, axis, keepdims)
        return grad, None, None, None

    return out, backward


# ---- lists: Note [Lists are values] in `ir.ops.prim` ------------------------------------------
# The gradient of a list is a list of its elements' gradients, zeros for those that got none.


def ListAppend(lst, elem):
    def backward(dout):
        return list_head(dout), list_index(dout, -1)

    return list_append(lst, elem), backward


def WrittenArgument(value, target):
    # The argument once written back holds ``value`` (Note [Returned arguments] in
    # `passes.functionalize`): its gradient is ``value``'s; the argument as passed gets none.
    def backward(dout):
        return dout, None

    return written_argument(value, target), backward


def TapePush(tape, value):
    # A loop tape (Note [Loop tapes]) is filled in place, but as a value it is the list it
    # becomes: its gradient is ListAppend's. This is what differentiates a loop twice.
    def backward(dout):
        return list_head(dout), list_index(dout, -1)

    return tape_push(tape, value), backward


def ListIndex(lst, i):
    def backward(dout):
        return list_index_backward(dout, lst, i), None

    return list_index(lst, i), backward


def _list_index_backward(grad, lst, index):
    # Linear in grad, which lands at one index of a list of zeros; lst only gives the zeros'
    # shapes and dtypes, so it gets no gradient.
    def backward(dout):
        return list_index(dout, index), None, None

    return list_index_backward(grad, lst, index), backward


def _sequence_as(parts, as_list):
    parts_as_list = is_list(parts)

    def backward(dout):
        return sequence_as(dout, parts_as_list), None

    return sequence_as(parts, as_list), backward


def _list_head(lst):
    last = list_index(lst, -1)

    def backward(dout):
        return list_append(dout, np.zeros_like(last))

    return list_head(lst), backward


def _add_lists(a, b):
    def backward(dout):
        return dout, dout

    return add_lists(a, b), backward


# ---- taps: named intermediates (Note [Taps] in `autodiff.taps`) -------------------------------


def _tap(self, name):
    def backward(dout):
        return dout, None

    return self, backward


def _tap_hooked(self, name):
    def backward(dout):
        return run_hooks(dout, name), None

    return self, backward
