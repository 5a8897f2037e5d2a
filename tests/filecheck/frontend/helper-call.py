# RUN: autodiff dump %s:f --stage parsed | filecheck %s

# Calls to Python helpers, several levels deep, are inlined at the parsed stage.

import numpy as np


def affine(x, w):
    return x @ w + 1.0


def layer(x, w):
    return np.tanh(affine(x, w))


def f(x, w):
    return layer(layer(x, w), w)


# Both calls of layer, and the affine inside each, are inlined with their own source lines.
# CHECK-LABEL: graph @f(%x : Tensor, %w : Tensor):
# CHECK-NOT:     prim::CallFunction
# CHECK:         %[[M1:[0-9]+]] : Tensor = aten::matmul(%x, %w)  # {{.*}}helper-call.py:9:12
# CHECK:         %[[A1:[0-9]+]] : Tensor = aten::add(%[[M1]], %{{[0-9]+}})
# CHECK-NEXT:    %[[T1:[0-9]+]] : Tensor = aten::tanh(%[[A1]])  # {{.*}}helper-call.py:13:12
# CHECK-NEXT:    %[[M2:[0-9]+]] : Tensor = aten::matmul(%[[T1]], %w)
# CHECK:         %[[A2:[0-9]+]] : Tensor = aten::add(%[[M2]], %{{[0-9]+}})
# CHECK-NEXT:    %[[T2:[0-9]+]] : Tensor = aten::tanh(%[[A2]])
# CHECK-NEXT:    return (%[[T2]])
