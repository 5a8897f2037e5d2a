"""Derivative formulas of the operators of `ir.ops.creation`.

Only a fill value and linspace's bounds carry a gradient. Each element of ``full``'s result is a
copy of the fill value, so it gets the gradient summed back over its broadcasting and cast to its
dtype, as the value of a write does (`autodiff.formulas.scatter`). Sample ``i`` of ``linspace``
is ``start + t_i * (stop - start)``, with ``t_i = i / (num - 1)`` (``i / num`` without the
endpoint; NumPy sets the last sample to ``stop`` exactly): ``start`` gets the gradient weighted by
``1 - t_i``, ``stop`` by ``t_i``, summed over the samples. A shape, a dtype and the prototype of
``full_like`` (whose values are not read) get none; the operators without a fill value have no
formula (Note [Derivatives] in `ir.ops.registry`)."""

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


def linspace(start, stop, num, endpoint, dtype, axis):
    out = np.linspace(start, stop, num, endpoint, dtype=dtype, axis=axis)
    # The weights t_i of stop, exactly as NumPy spaces them (the last one 1 with the endpoint).
    weights = np.linspace(0.0, 1.0, num, endpoint)
    first = np.take(out, 0, axis=axis)  # shaped like the bounds broadcast together
    start_size = size_if_not_equal(start, first)
    stop_size = size_if_not_equal(stop, first)
    start_dtype = gradient_dtype(start, out)
    stop_dtype = gradient_dtype(stop, out)

    def backward(dout):
        samples_last = np.moveaxis(dout, axis, -1)
        grad_stop = np.sum(samples_last * weights, axis=-1)
        grad_start = np.sum(samples_last, axis=-1) - grad_stop
        return (
            sum_to_size(grad_start, start_size).astype(start_dtype),
            sum_to_size(grad_stop, stop_size).astype(stop_dtype),
            None,
            None,
            None,
            None,
        )

    return out, backward
