# RUN: autodiff dump %s:f --stage parsed | filecheck %s

# `acc += x` on a name rebinds it to the result of the operator, as `acc = acc + x` does.


def f(x):
    acc = x * 2.0
    acc += x
    acc *= x
    acc -= 1.0
    return acc


# CHECK-LABEL: graph @f(%x : Tensor):
# CHECK:         %acc : Tensor = aten::mul(%x, %{{[0-9]+}})
# CHECK-NEXT:    %acc.1 : Tensor = aten::add(%acc, %x)  # {{.*}}augmented-assignment.py:8:5
# CHECK-NEXT:    %acc.2 : Tensor = aten::mul(%acc.1, %x)  # {{.*}}augmented-assignment.py:9:5
# CHECK-NEXT:    %[[ONE:[0-9]+]] : float = prim::Constant[value=1.]()
# CHECK-NEXT:    %acc.3 : Tensor = aten::sub(%acc.2, %[[ONE]])  # {{.*}}augmented-assignment.py:10:5
# CHECK-NEXT:    return (%acc.3)
