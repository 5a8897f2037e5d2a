# RUN: autodiff dump %s:f --stage parsed | filecheck %s

# A while loop is a prim::Loop with an unbounded trip count and the condition carried out of
# the body.


def f(x, n: int):
    i = 0
    while i < n:
        x = x * 0.5
        i += 1
    return x


# The condition is computed before the loop and again at the end of the body.
# CHECK-LABEL: graph @f(%x : Tensor, %n : int):
# CHECK-NEXT:    %i : int = prim::Constant[value=0]()
# CHECK-NEXT:    %[[FIRST:[0-9]+]] : bool = prim::lt(%i, %n)
# CHECK-NEXT:    %[[MAX:[0-9]+]] : int = prim::Constant[value=9223372036854775807]()
# CHECK-NEXT:    %x.1 : Tensor, %i.1 : int = prim::Loop(%[[MAX]], %[[FIRST]], %x, %i)
# CHECK-NEXT:      block0(%{{[0-9]+}} : int, %x.2 : Tensor, %i.2 : int):
# CHECK:             %x.3 : Tensor = aten::mul(%x.2, %{{[0-9]+}})
# CHECK:             %i.3 : int = prim::add(%i.2, %{{[0-9]+}})
# CHECK-NEXT:        %[[AGAIN:[0-9]+]] : bool = prim::lt(%i.3, %n)
# CHECK-NEXT:        -> (%[[AGAIN]], %x.3, %i.3)
# CHECK-NEXT:    return (%x.1)
