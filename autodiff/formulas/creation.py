"""Derivative formulas of the operators of `ir.ops.creation`.

Only a fill value carries a gradient: each element of the result is a copy of it, so it gets the
gradient summed back over its broadcasting and cast to its dtype, as the value of a write does
(`autodiff.formulas.scatter`). A shape, a dtype and the prototype of ``full_like`` (whose values
are not read) get none; the operators without a fill value have no formula (Note [Derivatives]
in `ir.ops.registry`)."""

import numpy as np

from ir.ops.gradients.common import gradient_dtype
from ir.ops.shape_ops import size_if_not_equal, sum_to_size


def full(shape, fill_value, dtype):
    out = np.full(shape, fill_value, dtype)
    fill_size = size_if_not_equal(fill_value, out)
    fill_dtype = gradient_dtype(fill_value, out)

    def backward(dout):
        return None, sum_to_size(dout, fill_size).astype(fill_dtype), None

    return out, backward


def full_like(self, fill_value, dtype):
    out = np.full_like(self, fill_value, dtype)
    fill_size = size_if_not_equal(fill_value, out)
    fill_dtype = gradient_dtype(fill_value, out)

    def backward(dout):
        return None, sum_to_size(dout, fill_size).astype(fill_dtype), None

    return out, backward
