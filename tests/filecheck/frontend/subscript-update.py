# RUN: autodiff dump %s:f --stage parsed | filecheck %s

# `y[idx] op= v` reads y[idx] as a read does, applies the operator, and writes the result back
# as `y[idx] = r` does; the index is evaluated once.


def f(y, v, idx):
    y[1:] += v
    y[idx] *= 2.0
    return y


# CHECK-LABEL: graph @f(%y : Tensor, %v : Tensor, %idx : Tensor):
# CHECK:         %[[READ:[0-9]+]] : Tensor = aten::slice(%y,
# CHECK-NEXT:    %[[SUM:[0-9]+]] : Tensor = aten::add(%[[READ]], %v)  # {{.*}}.py:8:5
# CHECK:         %[[VIEW:[0-9]+]] : Tensor = aten::slice(%y,
# CHECK-NEXT:    %{{[0-9]+}} : Tensor = aten::copy_(%[[VIEW]], %[[SUM]])
# CHECK-NEXT:    %[[GATHERED:[0-9]+]] : Tensor = aten::index(%y, %idx)
# CHECK:         %[[PRODUCT:[0-9]+]] : Tensor = aten::mul(%[[GATHERED]], %{{[0-9]+}})
# CHECK-NEXT:    %{{[0-9]+}} : Tensor = aten::index_put_(%y, %[[PRODUCT]], %idx)
# CHECK-NEXT:    return (%y)
