# RUN: autodiff dump %s:f --stage parsed | filecheck %s

# np.add.at is aten::add_at_ (a repeated index adds once per occurrence); np.copy(x) and
# np.array(x) are the pure aten::copy, x.copy() aten::copy_method (a NumPy scalar's stays one).

import numpy as np


def f(y, idx, i: int, j: int):
    np.add.at(y, idx, 1.0)
    np.add.at(y, (i, j), 2.0)
    return y.copy(), np.copy(y), np.array(y)


# CHECK-LABEL: graph @f(%y : Tensor, %idx : Tensor, %i : int, %j : int):
# CHECK:         %{{[0-9]+}} : Tensor = aten::add_at_(%y, %{{[0-9]+}}, %idx)  # {{.*}}.py:10:5
# CHECK:         %{{[0-9]+}} : Tensor = aten::add_at_(%y, %{{[0-9]+}}, %i, %j)  # {{.*}}.py:11:5
# CHECK:         %{{[0-9]+}} : Tensor = aten::copy_method(%y)  # {{.*}}.py:12:12
# CHECK-NEXT:    %{{[0-9]+}} : Tensor = aten::copy(%y)  # {{.*}}.py:12:22
# CHECK-NEXT:    %{{[0-9]+}} : Tensor = aten::copy(%y)  # {{.*}}.py:12:34
