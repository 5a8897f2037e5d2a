"""Derivative formulas of the operators of `ir.ops.scipy_linalg` (real matrices: Note [Real
scipy.linalg]).

Every backward is written in differentiable operators (the solves themselves, ``expm`` of a
block matrix, ``solve_sylvester``, matmul, triangles), so second derivatives come from these
same formulas. Matrices come in stacks: transposes swap the last two axes, and a gradient
broadcast against another operand's stack is summed back. A solve ``M x = b`` gives ``b`` the
gradient ``M^-T dout`` and ``M`` the gradient ``-(M^-T dout) x^T``; each formula then maps
``M``'s gradient onto the entries of ``a`` SciPy reads (one triangle, a factor). A 1-d ``b`` is
one column. Gradients keep their operand's dtype (``grad_like``).
"""

import numpy as np

from ir.ops import scipy_linalg as sl
from ir.ops.fourier import grad_like
from ir.ops.gradients.common import dtype_of
from ir.ops.shape_ops import sum_to_size


def scipy_solve_triangular(self, other, trans, lower, unit_diagonal, check_finite):
    out = sl.scipy_solve_triangular(self, other, trans, lower, unit_diagonal, check_finite)
    transposed = sl.transposes(trans)
    self_shape = self.shape
    other_shape = other.shape
    vector = other.ndim == 1
    out_columns = np.expand_dims(out, -1) if vector else out
    # The entries the solve reads: one triangle, less the diagonal it takes as ones.
    ones = np.ones((self.shape[-1], self.shape[-1]), dtype=dtype_of(out))
    read = np.tril(ones) if lower else np.triu(ones)
    read = read - np.eye(self.shape[-1], dtype=dtype_of(out)) if unit_diagonal else read

    def backward(dout):
        dout_columns = np.expand_dims(dout, -1) if vector else dout
        flipped = 0 if transposed else 1
        solved = sl.scipy_solve_triangular(
            self, dout_columns, flipped, lower, unit_diagonal, check_finite
        )
        grad_m = -(solved @ np.swapaxes(out_columns, -1, -2))
        grad_self = np.swapaxes(grad_m, -1, -2) if transposed else grad_m
        grad_other = np.sum(solved, -1) if vector else solved
        return (
            grad_like(sum_to_size(grad_self * read, self_shape), self),
            grad_like(sum_to_size(grad_other, other_shape), other),
            None,
            None,
            None,
            None,
        )

    return out, backward


def scipy_cholesky(self, lower, check_finite):
    out = sl.scipy_cholesky(self, lower, check_finite)
    half = 1.0 - 0.5 * np.eye(self.shape[-1], dtype=dtype_of(out))

    def backward(dout):
        # Murray (2016) on the lower factor L (the upper one transposed): S = L^-T phi(L^T dL)
        # L^-1, phi the lower triangle with its diagonal halved; the lower triangle of a gets
        # phi(S + S^T), and SciPy's default reads the upper one: the same, transposed.
        factor = out if lower else np.swapaxes(out, -1, -2)
        d_factor = dout if lower else np.swapaxes(dout, -1, -2)
        inverse = np.linalg.inv(factor)
        phi = np.tril(np.swapaxes(factor, -1, -2) @ d_factor) * half
        s = np.swapaxes(inverse, -1, -2) @ phi @ inverse
        grad = np.tril(s + np.swapaxes(s, -1, -2)) * half
        grad = grad if lower else np.swapaxes(grad, -1, -2)
        return grad_like(grad, self), None, None

    return out, backward


def scipy_cho_factor(self, lower, check_finite):
    out = sl.scipy_cho_factor(self, lower, check_finite)
    c = out[0]
    half = 1.0 - 0.5 * np.eye(self.shape[-1], dtype=dtype_of(c))

    def backward(dout):
        # c is the factor in one triangle and a's other strict triangle, as LAPACK leaves it:
        # that triangle's gradient passes through, the factor's is cholesky's (above).
        dc = dout[0]
        factor = np.tril(c) if lower else np.swapaxes(np.triu(c), -1, -2)
        d_factor = np.tril(dc) if lower else np.swapaxes(np.triu(dc), -1, -2)
        inverse = np.linalg.inv(factor)
        phi = np.tril(np.swapaxes(factor, -1, -2) @ d_factor) * half
        s = np.swapaxes(inverse, -1, -2) @ phi @ inverse
        grad = np.tril(s + np.swapaxes(s, -1, -2)) * half
        grad = grad + np.triu(dc, 1) if lower else np.swapaxes(grad, -1, -2) + np.tril(dc, -1)
        return grad_like(grad, self), None, None

    return out, backward


def scipy_cho_solve(c_and_lower, other, check_finite):
    out = sl.scipy_cho_solve(c_and_lower, other, check_finite)
    c, lowers = c_and_lower
    lower = np.all(lowers)  # a stack's pair holds one (equal) flag per matrix
    c_shape = c.shape
    other_shape = other.shape
    vector = other.ndim == 1
    out_columns = np.expand_dims(out, -1) if vector else out

    def backward(dout):
        # a is L L^T (U^T U), symmetric: with G = -(a^-1 dout) x^T, L gets tril((G + G^T) L)
        # and U gets triu(U (G + G^T)); the other triangle of c, never read, gets 0.
        dout_columns = np.expand_dims(dout, -1) if vector else dout
        solved = sl.scipy_cho_solve(c_and_lower, dout_columns, check_finite)
        grad_a = -(solved @ np.swapaxes(out_columns, -1, -2))
        both = grad_a + np.swapaxes(grad_a, -1, -2)
        grad_c = np.tril(both @ np.tril(c)) if lower else np.triu(np.triu(c) @ both)
        grad_other = np.sum(solved, -1) if vector else solved
        return (
            (grad_like(sum_to_size(grad_c, c_shape), c), None),
            grad_like(sum_to_size(grad_other, other_shape), other),
            None,
        )

    return out, backward


def scipy_lu_factor(self, check_finite):
    out = sl.scipy_lu_factor(self, check_finite)
    lu = out[0]
    p = sl.lu_permutation(out[1], lu)
    eye = np.eye(self.shape[-1], dtype=dtype_of(lu))

    def backward(dout):
        # a = P L U: X = L^-1 P^T da U^-1 gives dL = L tril(X, -1) and dU = triu(X) U, so a gets
        # P L^-T (tril(L^T gL, -1) + triu(gU U^T)) U^-T; the triangles pick gL and gU out of
        # the one cotangent of lu.
        g = dout[0]
        unit_lower = np.tril(lu, -1) + eye
        upper = np.triu(lu)
        inner = np.tril(np.swapaxes(unit_lower, -1, -2) @ g, -1)
        inner = inner + np.triu(g @ np.swapaxes(upper, -1, -2))
        left = sl.scipy_solve_triangular(lu, inner, 1, True, True, check_finite)
        right = sl.scipy_solve_triangular(lu, np.swapaxes(left, -1, -2), 0, False, False, True)
        return grad_like(p @ np.swapaxes(right, -1, -2), self), None

    return out, backward


def scipy_lu_solve(lu_and_piv, other, trans, check_finite):
    out = sl.scipy_lu_solve(lu_and_piv, other, trans, check_finite)
    lu, piv = lu_and_piv
    p = sl.lu_permutation(piv, lu)
    transposed = sl.transposes(trans)
    eye = np.eye(lu.shape[-1], dtype=dtype_of(lu))
    lu_shape = lu.shape
    other_shape = other.shape
    vector = other.ndim == 1
    out_columns = np.expand_dims(out, -1) if vector else out

    def backward(dout):
        # a = P L U with G a's gradient: L gets tril(P^T G U^T, -1), U gets triu(L^T P^T G).
        dout_columns = np.expand_dims(dout, -1) if vector else dout
        flipped = 0 if transposed else 1
        solved = sl.scipy_lu_solve(lu_and_piv, dout_columns, flipped, check_finite)
        grad_m = -(solved @ np.swapaxes(out_columns, -1, -2))
        grad_a = np.swapaxes(grad_m, -1, -2) if transposed else grad_m
        unpermuted = np.swapaxes(p, -1, -2) @ grad_a
        unit_lower = np.tril(lu, -1) + eye
        grad_lu = np.tril(unpermuted @ np.swapaxes(np.triu(lu), -1, -2), -1)
        grad_lu = grad_lu + np.triu(np.swapaxes(unit_lower, -1, -2) @ unpermuted)
        grad_other = np.sum(solved, -1) if vector else solved
        return (
            (grad_like(sum_to_size(grad_lu, lu_shape), lu), None),
            grad_like(sum_to_size(grad_other, other_shape), other),
            None,
            None,
        )

    return out, backward


def scipy_expm(self):
    out = sl.scipy_expm(self)
    n = self.shape[-1]

    def backward(dout):
        # The Frechet derivative L(A, E) is the upper right block of expm([[A, E], [0, A]]) and
        # its adjoint in E is L(A^T, .): one expm of twice the size, differentiable again.
        a_t = np.swapaxes(self, -1, -2)
        top = np.concatenate([a_t, dout], axis=-1)
        bottom = np.concatenate([np.zeros_like(a_t), a_t], axis=-1)
        block = sl.scipy_expm(np.concatenate([top, bottom], axis=-2))
        return grad_like(block[..., :n, n:], self)

    return out, backward


def scipy_sqrtm(self):
    out = sl.scipy_sqrtm(self)

    def backward(dout):
        # X X = A: X dX + dX X = dA, whose adjoint solves X^T G + G X^T = dout.
        out_t = np.swapaxes(out, -1, -2)
        return grad_like(sl.scipy_solve_sylvester(out_t, out_t, dout), self)

    return out, backward


def scipy_solve_sylvester(self, b, q):
    out = sl.scipy_solve_sylvester(self, b, q)
    self_shape = self.shape
    b_shape = b.shape
    q_shape = q.shape

    def backward(dout):
        # A X + X B = Q: Y solving A^T Y + Y B^T = dout is Q's gradient, A gets -Y X^T, B -X^T Y.
        y = sl.scipy_solve_sylvester(np.swapaxes(self, -1, -2), np.swapaxes(b, -1, -2), dout)
        out_t = np.swapaxes(out, -1, -2)
        return (
            grad_like(sum_to_size(-(y @ out_t), self_shape), self),
            grad_like(sum_to_size(-(out_t @ y), b_shape), b),
            grad_like(sum_to_size(y, q_shape), q),
        )

    return out, backward


def scipy_det(self, check_finite):
    out = sl.scipy_det(self, check_finite)

    def backward(dout):
        scale = np.expand_dims(dout * out, (-2, -1))
        return grad_like(scale * np.swapaxes(np.linalg.inv(self), -1, -2), self), None

    return out, backward


def scipy_solve(self, other, lower, check_finite, assume_a, transposed):
    out = sl.scipy_solve(self, other, lower, check_finite, assume_a, transposed)
    symmetric = sl.reads_one_triangle(assume_a)
    read = sl.solve_read_mask(assume_a, self)  # the entries read as they are
    half = 1.0 - 0.5 * np.eye(self.shape[-1], dtype=dtype_of(out))
    self_shape = self.shape
    other_shape = other.shape
    vector = other.ndim == 1
    out_columns = np.expand_dims(out, -1) if vector else out

    def backward(dout):
        # A symmetric solve reads one triangle: each entry off the diagonal stands for two.
        # A triangular, diagonal or tridiagonal one reads those entries, the others get 0.
        dout_columns = np.expand_dims(dout, -1) if vector else dout
        solved = sl.scipy_solve(self, dout_columns, lower, check_finite, assume_a, not transposed)
        grad_m = -(solved @ np.swapaxes(out_columns, -1, -2))
        grad_self = np.swapaxes(grad_m, -1, -2) if transposed else grad_m
        both = (grad_self + np.swapaxes(grad_self, -1, -2)) * half
        folded = np.tril(both) if lower else np.triu(both)
        grad_self = folded if symmetric else grad_self * read
        grad_other = np.sum(solved, -1) if vector else solved
        return (
            grad_like(sum_to_size(grad_self, self_shape), self),
            grad_like(sum_to_size(grad_other, other_shape), other),
            None,
            None,
            None,
            None,
        )

    return out, backward
