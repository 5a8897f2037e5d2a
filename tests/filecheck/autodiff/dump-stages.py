# RUN: autodiff dump %s:f --stage grad --arg x=f64[3,4] --arg y=f64[4] | filecheck %s --check-prefix=GRAD
# RUN: autodiff dump %s:f --stage df --arg x=f64[3,4] --arg y=f64[4] | filecheck %s --check-prefix=DF
# RUN: autodiff dump %s:f --stage f --arg x=f64[3,4] --arg y=f64[4] | filecheck %s --check-prefix=F
# RUN: autodiff dump %s:f --stage all --wrt y --arg x=f64[3,4] --arg y=f64[4] | filecheck %s --check-prefix=ALL
"""The gradient stages of the differentiation issue's example, as `autodiff dump` prints them."""

import numpy as np


def f(x, y):
    return np.sum(np.tanh(x * y + 2.0) * x)


# The reverse program: one GradOf per forward operator, in reverse order, each naming it.
# GRAD-LABEL: graph @f(%x : Double(3, 4), %y : Double(4)):
# GRAD:         prim::Reverse[output_vjps=[0], input_grads=[0, 1]]()
# GRAD-NEXT:      block0(%dout : Double()):
# GRAD:             prim::GradOf[name="aten::sum"](%dout)
# GRAD:             prim::GradOf[name="aten::mul"]
# GRAD:             prim::GradOf[name="aten::tanh"]
# GRAD:             prim::GradOf[name="aten::add"]
# GRAD:             prim::GradOf[name="aten::mul"]
# GRAD:             prim::AutogradAdd

# df captures exactly x, y and the tanh output: no sizes, no constants, no duplicates.
# DF-LABEL: graph @df(%dout : Double(), %x : Double(3, 4), %y : Double(4), %{{[0-9]+}} : Double(3, 4)):
# DF-NOT:     aten::shape
# DF-NOT:     _size_if_not_equal
# DF-NOT:     prim::GradOf
# DF:         aten::sum_to_size
# DF:         %[[DX:dx[.0-9]*]] : Double(3, 4) = aten::add(%dx, %dx.1)
# DF:         prim::TupleConstruct(%[[DX]], %dy)

# f returns its value, then the one temporary df needs: the tanh output.
# F-LABEL: graph @f(%x : Double(3, 4), %y : Double(4)):
# F-NOT:     aten::shape
# F:         %[[T:[0-9]+]] : Double(3, 4) = aten::tanh
# F:         return (%{{[0-9]+}}, %[[T]])

# Every stage under a header; only y is differentiated.
# ALL:       # ---- parsed ----
# ALL:       # ---- typed ----
# ALL:       # ---- grad ----
# ALL:       prim::Reverse[output_vjps=[0], input_grads=[1]]()
# ALL:       # ---- optimized ----
# ALL:       # ---- f and df ----
# ALL:       # df_output_vjps [1]
