# RUN: autodiff dump %s:f --stage parsed | filecheck %s

# `for i in range(...)` is a prim::Loop; names the body reassigns are loop-carried.

import numpy as np


def f(x):
    acc = np.zeros_like(x[0])
    for i in range(x.shape[0]):
        acc = acc + x[i]
    return acc


# The trip count is x.shape[0]; the loop carries acc, whose last value the graph returns.
# CHECK-LABEL: graph @f(%x : Tensor):
# CHECK:         %acc : Tensor = aten::zeros_like(
# CHECK-NEXT:    %[[SHAPE:[0-9]+]] : int[] = aten::shape(%x)
# CHECK-NEXT:    %[[ZERO:[0-9]+]] : int = prim::Constant[value=0]()
# CHECK-NEXT:    %[[N:[0-9]+]] : int = prim::TupleIndex(%[[SHAPE]], %[[ZERO]])
# CHECK-NEXT:    %[[TRUE:[0-9]+]] : bool = prim::Constant[value=True]()
# CHECK-NEXT:    %acc.1 : Tensor = prim::Loop(%[[N]], %[[TRUE]], %acc)  # {{.*}}for-range.py:10:5
# CHECK-NEXT:      block0(%i : int, %acc.2 : Tensor):
# CHECK:             %[[ROW:[0-9]+]] : Tensor = aten::select(%x, %{{[0-9]+}}, %i)
# CHECK-NEXT:        %acc.3 : Tensor = aten::add(%acc.2, %[[ROW]])
# CHECK-NEXT:        %[[GO:[0-9]+]] : bool = prim::Constant[value=True]()
# CHECK-NEXT:        -> (%[[GO]], %acc.3)
# CHECK-NEXT:    return (%acc.1)
