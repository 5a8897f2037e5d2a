"""Derivative formulas of the operators of `ir.ops.linalg_decompositions`.

Matrices may come in stacks, so transposes swap the last two axes. Decompositions assume what makes
their derivative exist: distinct eigenvalues (eigh) and singular values (svd), a positive definite
input (cholesky), full rank (pinv). cholesky and eigh read one triangle of their input only, as
NumPy does: the other triangle gets no gradient."""

import numpy as np

from ir.ops.fourier import grad_like, is_complex
from ir.ops.gradients.common import dtype_of
from ir.ops.gradients.linalg_decompositions import (
    NORM_COLUMN_SUMS,
    NORM_COUNT,
    NORM_EUCLIDEAN,
    NORM_LARGEST,
    NORM_LARGEST_SINGULAR,
    NORM_NUCLEAR,
    NORM_POWER,
    NORM_ROW_SUMS,
    matrix_norm_axis,
    norm_kind,
    svd_leading,
)
from ir.ops.gradients.reductions import unreduce
from ir.ops.linalg_decompositions import reads_upper
from ir.ops.shape_ops import sum_to_size


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


def linalg_eig(self):
    out = np.linalg.eig(self)
    w = out[0]
    v = out[1]
    eye = np.eye(self.shape[-1], dtype=dtype_of(w))

    def backward(dout):
        # With X = V^-1 dA V: dw = diag(X), and dV = V (F * X) with F_jk = 1 / (w_k - w_j) off
        # the diagonal, less V diag(Re(diag(V^H V (F * X)))), which keeps each column of unit
        # norm as NumPy returns it. Transposed (Note [Complex gradients]): the vectors'
        # cotangent loses Re(sum_i gv_ik V_ik) conj(V_ik), and the gradient is
        # V^-T (diag(gw) + F * (V^T gv)) V^T, real where A is.
        f = (1.0 - eye) / (np.expand_dims(w, -2) - np.expand_dims(w, -1) + eye)
        along = np.real(np.sum(dout[1] * v, axis=-2))
        gv = dout[1] - np.expand_dims(along, -2) * np.conj(v)
        v_t = np.swapaxes(v, -1, -2)
        inner = f * (v_t @ gv) + np.expand_dims(dout[0], -1) * eye
        return grad_like(np.linalg.solve(v_t, inner @ v_t), self)

    return out, backward


def linalg_eigh(self, UPLO):
    out = np.linalg.eigh(self, UPLO)
    upper = reads_upper(UPLO)
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
        return np.triu(both) if upper else np.tril(both), None

    return out, backward


def linalg_svd(self, full_matrices, compute_uv):
    out = np.linalg.svd(self, full_matrices, compute_uv)
    complex_input = is_complex(self)

    def backward(dout):
        if compute_uv:
            # Wan and Zhang (2019) in the conjugate convention, the cotangents conjugated on
            # the way in and the result on the way out (Note [Complex gradients]); i Im(w) is
            # written (w - conj(w)) / 2, and H is the conjugate transpose. For a square U (V)
            # its term is 0 up to rounding. In differentiable operators, so that it
            # differentiates again. With full_matrices the columns of U (rows of V^H) past
            # min(m, n) are not unique: `svd_leading` refuses a cotangent on them.
            u, s, vh = out
            grad_u, grad_s, grad_vh = dout
            if full_matrices:
                count = s.shape[-1]
                u, grad_u = u[..., :count], svd_leading(grad_u, count, -1)
                vh, grad_vh = vh[..., :count, :], svd_leading(grad_vh, count, -2)
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
        elif kind == NORM_COLUMN_SUMS or kind == NORM_ROW_SUMS:  # noqa: SIM109 (no `in` here)
            # The extreme column (row) sum of magnitudes: its column (row) gets the slope of
            # |x|, and columns (rows) tied with it share it evenly. A full-shaped tie mask
            # counts each tied line once per element along the summed axis.
            summed = matrix_norm_axis(axis, self.ndim, 0 if kind == NORM_COLUMN_SUMS else 1)
            sums = np.sum(np.abs(self), axis=summed, keepdims=True)
            hits = (sums == norm).astype(dtype_of(out))
            lines = np.sum(hits, axis=axis, keepdims=True) / shape[summed]
            grad = spread * slope * hits / lines
        else:
            # The spectral (ord 2, -2) and nuclear norms: the sum of conj(u_i vh_i) over the
            # singular pairs the norm takes, through svd (differentiable again where the
            # singular values are distinct). Tied extremes share evenly; the nuclear norm
            # takes the pairs whose value is not 0, the least-norm subgradient. atleast_2d
            # and the reshape are no-ops on the matrices this branch is taken for; they type
            # it for a vector, whose shapes are propagated through it too.
            rows = matrix_norm_axis(axis, self.ndim, 0)
            columns = matrix_norm_axis(axis, self.ndim, 1)
            matrices = np.moveaxis(np.atleast_2d(self), (rows, columns), (-2, -1))
            u, s, vh = np.linalg.svd(matrices, full_matrices=False)
            if kind == NORM_NUCLEAR:
                taken = (s > 0.0).astype(dtype_of(s))
            else:
                extreme = np.max(s, axis=-1, keepdims=True)
                if kind != NORM_LARGEST_SINGULAR:
                    extreme = np.min(s, axis=-1, keepdims=True)
                taken = (s == extreme).astype(dtype_of(s))
                taken = taken / np.sum(taken, axis=-1, keepdims=True)
            pairs = (u * np.expand_dims(taken, -2)) @ vh
            pairs = np.conj(pairs) if complex_input else pairs
            grad = spread * np.reshape(np.moveaxis(pairs, (-2, -1), (rows, columns)), shape)
        return grad, None, None, None

    return out, backward
