# RUN: autodiff dump %s:layer --stage jvp --arg x=f64[2,3] --arg w=f64[3] --wrt w | filecheck %s --check-prefix=LAYER
# RUN: autodiff dump %s:accumulate --stage jvp --arg x=f64[3] --arg n=4 | filecheck %s --check-prefix=LOOP
"""The forward-mode graph `autodiff dump --stage jvp` prints (issue #20): a tangent input per
parameter differentiated, the results then their tangents; the reverse program it is derived
from (Note [Forward mode by transposition]) leaves no seed arithmetic behind, and a loop's
tangent is carried beside the primal by the one loop, with no tape (Note [Tape maps], Note
[Tangent loops])."""

import numpy as np


def layer(x, w):
    return np.tanh(x @ w)


def accumulate(x, n: int):
    y = np.zeros(3)
    for i in range(n):
        y[i % 3] += np.sin(x[i % 3]) * x[0]
    return y


# LAYER-LABEL: graph @layer(%x : Double(2, 3), %w : Double(3), %dw : Double(3)):
# LAYER-NOT:     aten::{{zeros_like|ones_like|_unreduce}}
# LAYER:         %[[Y:.+]] : Double(2) = aten::tanh(
# LAYER:         %[[DZ:.+]] : Double(2) = aten::matmul(%x, %dw)
# LAYER:         %[[T:.+]] : Double(2) = aten::mul(%[[DZ]],
# LAYER-NOT:     aten::{{zeros_like|ones_like|_unreduce}}
# LAYER:         return (%[[Y]], %[[T]])

# LOOP-LABEL: graph @accumulate(%x : Double(3), %n : int, %dx : Double(3)):
# LOOP-NOT:     aten::{{zeros_like|ones_like}}
# LOOP:         %[[Y:[^ ]+]] : Double(3), %[[T:[^ ]+]] : Double(3), %{{[^ ]+}} : Double(3) = prim::Loop(%n, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %dx)
# LOOP-NOT:       prim::Tape
# LOOP:           aten::sin(
# LOOP:           aten::index_put(
# LOOP:           aten::cos(
# LOOP:           aten::_scatter_last_written(
# LOOP-NOT:     prim::Loop
# LOOP:         return (%[[Y]], %[[T]])
