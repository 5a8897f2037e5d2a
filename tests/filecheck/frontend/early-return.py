# RUN: autodiff dump %s:f --stage parsed | filecheck %s

# A return inside a branch: the code after the if becomes the other branch, and the graph has
# one return.

import numpy as np


def f(x):
    if np.sum(x) > 0:
        return np.exp(x)
    y = x * 3.0
    return y


# CHECK-LABEL: graph @f(%x : Tensor):
# CHECK:         %[[COND:[0-9]+]] : bool = prim::bool(
# CHECK-NEXT:    %[[RESULT:[0-9]+]] : Tensor = prim::If(%[[COND]])  # {{.*}}early-return.py:10:5
# CHECK-NEXT:      block0():
# CHECK-NEXT:        %[[E:[0-9]+]] : Tensor = aten::exp(%x)
# CHECK-NEXT:        -> (%[[E]])
# CHECK-NEXT:      block1():
# CHECK:             %y : Tensor = aten::mul(%x, %{{[0-9]+}})  # {{.*}}early-return.py:12:9
# CHECK-NEXT:        -> (%y)
# CHECK-NEXT:    return (%[[RESULT]])
