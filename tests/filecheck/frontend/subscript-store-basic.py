# RUN: autodiff dump %s:f --stage parsed | filecheck %s

# A write through basic indexing is the view chain a read emits, then aten::copy_ into the view
# (Note [Writes]): the names keep their values; functionalisation rewrites the write later.


def f(y, v):
    y[1:3] = v
    y[:] = 0.0
    y[...] = 1.0
    y[1:, None] = v
    return y


# CHECK-LABEL: graph @f(%y : Tensor, %v : Tensor):
# CHECK:         %[[ROWS:[0-9]+]] : Tensor = aten::slice(%y, %{{[0-9]+, %[0-9]+, %[0-9]+, %[0-9]+}})
# CHECK-NEXT:    %{{[0-9]+}} : Tensor = aten::copy_(%[[ROWS]], %v)  # {{.*}}.py:8:5
# CHECK:         %[[ALL:[0-9]+]] : Tensor = aten::slice(%y, %{{[0-9]+, %[0-9]+, %[0-9]+, %[0-9]+}})
# CHECK-NEXT:    %{{[0-9]+}} : Tensor = aten::copy_(%[[ALL]], %{{[0-9]+}})  # {{.*}}.py:9:5
# CHECK:         %[[ONE:[0-9]+]] : float = prim::Constant[value=1.]()
# CHECK-NEXT:    %{{[0-9]+}} : Tensor = aten::copy_(%y, %[[ONE]])  # {{.*}}.py:10:5
# CHECK:         %[[TAIL:[0-9]+]] : Tensor = aten::slice(%y,
# CHECK:         %[[NEW:[0-9]+]] : Tensor = aten::expand_dims(%[[TAIL]], %{{[0-9]+}})
# CHECK-NEXT:    %{{[0-9]+}} : Tensor = aten::copy_(%[[NEW]], %v)  # {{.*}}.py:11:5
# CHECK-NEXT:    return (%y)
