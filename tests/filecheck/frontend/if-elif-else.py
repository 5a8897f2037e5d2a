# RUN: autodiff dump %s:f --stage parsed | filecheck %s

# if/elif/else is a prim::If whose else block holds the nested prim::If of the elif; a name
# assigned in the branches becomes an output of the prim::If.

import numpy as np


def f(x, k: int):
    if k > 1:
        y = x * 2.0
    elif k == 0:
        y = np.exp(x)
    else:
        y = -x
    return y


# CHECK-LABEL: graph @f(%x : Tensor, %k : int):
# CHECK:         %[[GT:[0-9]+]] : bool = prim::gt(%k, %{{[0-9]+}})
# CHECK-NEXT:    %y : Tensor = prim::If(%[[GT]])  # {{.*}}if-elif-else.py:10:5
# CHECK-NEXT:      block0():
# CHECK:             %y.1 : Tensor = aten::mul(%x, %{{[0-9]+}})
# CHECK-NEXT:        -> (%y.1)
# CHECK-NEXT:      block1():
# CHECK:             %[[EQ:[0-9]+]] : bool = prim::eq(%k, %{{[0-9]+}})
# CHECK-NEXT:        %y.2 : Tensor = prim::If(%[[EQ]])  # {{.*}}if-elif-else.py:12:5
# CHECK-NEXT:          block0():
# CHECK-NEXT:            %y.3 : Tensor = aten::exp(%x)
# CHECK-NEXT:            -> (%y.3)
# CHECK-NEXT:          block1():
# CHECK-NEXT:            %y.4 : Tensor = aten::neg(%x)
# CHECK-NEXT:            -> (%y.4)
# CHECK-NEXT:        -> (%y.2)
# CHECK-NEXT:    return (%y)
