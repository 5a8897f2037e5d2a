# RUN: autodiff dump %s:f --stage parsed | filecheck %s

# A write whose last item is an int is aten::index_put_ into the view of the items before it,
# with None for each full axis before the int: a select of an array's last axis is a NumPy
# scalar, not a view, so copy_ into it would write nowhere. After an Ellipsis the int's axis
# counts from the end, so it stays a select and copy_.


def f(y, v, i: int):
    y[0] = v
    y[:, i] = v
    y[1:, 2] = v
    y[..., 0] = v
    return y


# CHECK-LABEL: graph @f(%y : Tensor, %v : Tensor, %i : int):
# CHECK:         %[[ZERO:[0-9]+]] : int = prim::Constant[value=0]()
# CHECK-NEXT:    %{{[0-9]+}} : Tensor = aten::index_put_(%y, %v, %[[ZERO]])  # {{.*}}.py:10:5
# CHECK-NEXT:    %[[FULL:[0-9]+]] : NoneType = prim::Constant[value=None]()
# CHECK-NEXT:    %{{[0-9]+}} : Tensor = aten::index_put_(%y, %v, %[[FULL]], %i)  # {{.*}}.py:11:5
# CHECK:         %[[ROWS:[0-9]+]] : Tensor = aten::slice(%y,
# CHECK:         %{{[0-9]+}} : Tensor = aten::index_put_(%[[ROWS]], %v, %{{[0-9]+}}, %{{[0-9]+}})
# CHECK:         %[[LAST:[0-9]+]] : int = prim::Constant[value=-1]()
# CHECK-NEXT:    %[[COLUMN:[0-9]+]] : Tensor = aten::select(%y, %[[LAST]], %{{[0-9]+}})
# CHECK-NEXT:    %{{[0-9]+}} : Tensor = aten::copy_(%[[COLUMN]], %v)  # {{.*}}.py:13:5
# CHECK-NEXT:    return (%y)
