# RUN: autodiff dump %s:f --stage parsed | filecheck %s

# `acc += x` on an array is NumPy's in-place update: the operator, then aten::copy_ of its result
# into `acc` (Note [Writes]), and `acc` is bound to what copy_ returns. On a Python number it is
# `n = n + 1`, a rebinding.


def f(x, n: int):
    acc = x * 2.0
    acc += x
    acc *= x
    acc -= 1.0
    n += 1
    return acc, n


# CHECK-LABEL: graph @f(%x : Tensor, %n : int):
# CHECK:         %acc : Tensor = aten::mul(%x, %{{[0-9]+}})
# CHECK-NEXT:    %[[SUM:[0-9]+]] : Tensor = aten::add(%acc, %x)  # {{.*}}augmented-assignment.py:10:5
# CHECK-NEXT:    %acc.1 : Tensor = aten::copy_(%acc, %[[SUM]])  # {{.*}}augmented-assignment.py:10:5
# CHECK-NEXT:    %[[PRODUCT:[0-9]+]] : Tensor = aten::mul(%acc.1, %x)
# CHECK-NEXT:    %acc.2 : Tensor = aten::copy_(%acc.1, %[[PRODUCT]])
# CHECK-NEXT:    %[[ONE:[0-9]+]] : float = prim::Constant[value=1.]()
# CHECK-NEXT:    %[[DIFFERENCE:[0-9]+]] : Tensor = aten::sub(%acc.2, %[[ONE]])
# CHECK-NEXT:    %acc.3 : Tensor = aten::copy_(%acc.2, %[[DIFFERENCE]])
# CHECK-NEXT:    %[[INT_ONE:[0-9]+]] : int = prim::Constant[value=1]()
# CHECK-NEXT:    %n.1 : int = prim::add(%n, %[[INT_ONE]])  # {{.*}}augmented-assignment.py:13:5
