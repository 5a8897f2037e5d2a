# RUN: autodiff dump %s:f --stage parsed | filecheck %s

# Subscripts: an int selects, a slice slices, None adds an axis, integer arrays index.


def f(x, idx):
    a = x[0]
    b = x[1:, ::2]
    c = x[:, None]
    d = x[..., -1]
    e = x[idx]
    return a, b, c, d, e


# aten::select(self, axis, index); aten::slice(self, axis, start, stop, step).
# CHECK-LABEL: graph @f(%x : Tensor, %idx : Tensor):
# CHECK:         %a : Tensor = aten::select(%x, %{{[0-9]+}}, %{{[0-9]+}})  # {{.*}}.py:7:11
# CHECK:         %[[ROWS:[0-9]+]] : Tensor = aten::slice(%x, %{{[0-9]+, %[0-9]+, %[0-9]+, %[0-9]+}})
# CHECK:         %b : Tensor = aten::slice(%[[ROWS]], %{{[0-9]+, %[0-9]+, %[0-9]+, %[0-9]+}})
# CHECK:         %[[AXIS:[0-9]+]] : int = prim::Constant[value=1]()
# CHECK-NEXT:    %c : Tensor = aten::expand_dims(%x, %[[AXIS]])
# CHECK:         prim::Constant[value=-1]()
# CHECK:         %d : Tensor = aten::select(%x, %{{[0-9]+}}, %{{[0-9]+}})  # {{.*}}.py:10:16
# CHECK-NEXT:    %e : Tensor = aten::index(%x, %idx)
# CHECK-NEXT:    %[[T:[0-9]+]] : ({{.*}}) = prim::TupleConstruct(%a, %b, %c, %d, %e)
# CHECK-NEXT:    return (%[[T]])
