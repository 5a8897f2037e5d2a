# RUN: autodiff dump %s:euler --stage native --arg theta=f64[2,2] --arg x0=f64[2] | filecheck %s
"""`autodiff dump --stage native` (issue #22): f and df with the regions the native tier runs.
The whole loop of an explicit Euler integration, tapes included, is one prim::Native of f and
one of df; the tuple df returns its gradients in stays outside, on the NumPy tier. A grad call
runs f and df joined into one graph, whose one region holds both loops (Note [Joined f and
df]). With numba
installed each region says which code it runs, else it is not compiled (Note [Native regions]).
"""

import numpy as np


def euler(theta, x0):
    x = x0
    for _t in range(20):
        x = x + 0.1 * np.tanh(theta @ x)
    return np.sum(x**2)


# CHECK-LABEL: # ---- native f ----
# CHECK:       graph @f(%theta : Double(2, 2), %x0 : Double(2)):
# CHECK-NOT:     prim::Loop
# CHECK:         = prim::Native{{(\[native=".+"\])?}}(
# CHECK:             prim::TapeArray
# CHECK:             prim::Loop
# CHECK:               aten::matmul
# CHECK:               prim::TapeWrite
# CHECK:             aten::sum
# CHECK-LABEL: # ---- native df ----
# CHECK:         = prim::Native{{(\[native=".+"\])?}}(
# CHECK:             prim::Loop
# CHECK:               aten::select
# CHECK:               aten::_matmul_backward_self
# CHECK:         prim::TupleConstruct
# CHECK-NOT:     fallback
# CHECK-LABEL: # ---- native f and df joined, as grad calls run them ----
# CHECK:       graph @f_and_df(%theta : Double(2, 2), %x0 : Double(2)):
# CHECK-NOT:     prim::Loop
# CHECK:         = prim::Native{{(\[native=".+"\])?}}(
# CHECK:             prim::TapeArray
# CHECK:             prim::Loop
# CHECK:               prim::TapeWrite
# CHECK:             prim::Loop
# CHECK:               aten::_matmul_backward_self
# CHECK:         prim::TupleConstruct
# CHECK-NOT:     fallback
