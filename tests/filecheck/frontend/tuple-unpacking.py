# RUN: autodiff dump %s:f --stage parsed | filecheck %s

# Tuple unpacking binds each element; a tuple return is one prim::TupleConstruct.


def f(x, y):
    a, b = x + y, x - y
    b, a = a, b
    return a, b


# The swap `b, a = a, b` only rebinds names: no node is left of it, nor of the unpacking.
# CHECK-LABEL: graph @f(%x : Tensor, %y : Tensor):
# CHECK-NEXT:    %a : Tensor = aten::add(%x, %y)  # {{.*}}tuple-unpacking.py:7:12
# CHECK-NEXT:    %b : Tensor = aten::sub(%x, %y)  # {{.*}}tuple-unpacking.py:7:19
# CHECK-NEXT:    %[[T:[0-9]+]] : (Tensor, Tensor) = prim::TupleConstruct(%b, %a)
# CHECK-NEXT:    return (%[[T]])
