# RUN: autodiff dump %s:f --stage parsed | filecheck %s

# An assignment names the value it binds; rebinding a name gives a new value with the same hint.

import numpy as np


def f(x, y):
    z = x * y
    z = np.tanh(z)
    return z + 1.0


# CHECK-LABEL: graph @f(%x : Tensor, %y : Tensor):
# CHECK-NEXT:    %z : Tensor = aten::mul(%x, %y)  # {{.*}}assignment.py:9:9
# CHECK-NEXT:    %z.1 : Tensor = aten::tanh(%z)  # {{.*}}assignment.py:10:9
# CHECK-NEXT:    %[[ONE:[0-9]+]] : float = prim::Constant[value=1.]()
# CHECK-NEXT:    %[[SUM:[0-9]+]] : Tensor = aten::add(%z.1, %[[ONE]])  # {{.*}}assignment.py:11:12
# CHECK-NEXT:    return (%[[SUM]])
