# RUN: autodiff dump %s:f --stage parsed | filecheck %s

# A write through advanced indexing is one aten::index_put_ with aten::index's items (None for a
# full slice), after the partial slices as views, as the read does.


def f(y, v, idx):
    y[idx] = v
    y[y > 0] = 0.0
    y[1:, idx] = v
    return y


# CHECK-LABEL: graph @f(%y : Tensor, %v : Tensor, %idx : Tensor):
# CHECK:         %{{[0-9]+}} : Tensor = aten::index_put_(%y, %v, %idx)  # {{.*}}.py:8:5
# CHECK:         %[[MASK:[0-9]+]] : Tensor = aten::gt(%y, %{{[0-9]+}})
# CHECK:         %{{[0-9]+}} : Tensor = aten::index_put_(%y, %{{[0-9]+}}, %[[MASK]])  # {{.*}}.py:9:5
# CHECK:         %[[ROWS:[0-9]+]] : Tensor = aten::slice(%y,
# CHECK-NEXT:    %[[FULL:[0-9]+]] : NoneType = prim::Constant[value=None]()
# CHECK-NEXT:    %{{[0-9]+}} : Tensor = aten::index_put_(%[[ROWS]], %v, %[[FULL]], %idx)
# CHECK-NEXT:    return (%y)
