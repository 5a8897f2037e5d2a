# RUN: autodiff dump %s:f --stage parsed | filecheck %s

# Array methods and attributes map to the same operators as the NumPy functions.


def f(x):
    s = x.sum(axis=0)
    m = x.mean()
    t = x.T
    r = x.reshape(-1)
    n = x.shape[0]
    return s, m, t, r, n


# CHECK-LABEL: graph @f(%x : Tensor):
# CHECK:         %s : Tensor = aten::sum(%x, %{{[0-9]+}}, %{{[0-9]+}})
# CHECK:         %m : Tensor = aten::mean(%x, %{{[0-9]+}}, %{{[0-9]+}})
# CHECK:         %t : Tensor = aten::transpose(%x, %{{[0-9]+}})
# CHECK:         %r : Tensor = aten::reshape(%x, %{{[0-9]+}})
# CHECK:         %[[SHAPE:[0-9]+]] : int[] = aten::shape(%x)
# CHECK:         %n : int = prim::TupleIndex(%[[SHAPE]], %{{[0-9]+}})
# CHECK-NEXT:    prim::TupleConstruct(%s, %m, %t, %r, %n)
