# RUN: autodiff dump %s:loss --stage parsed | filecheck %s --check-prefix=PARSED
# RUN: autodiff dump %s:loss --stage f --arg x=f64[3] | filecheck %s --check-prefix=F
# RUN: autodiff dump %s:loss --stage df --arg x=f64[3] | filecheck %s --check-prefix=DF
"""A custom_vjp function with an opaque body, as `autodiff dump` shows it: one node naming the
function and its line, its fwd in f and its bwd in df (Note [Custom vjp] in
`autodiff.custom_vjp`)."""

import numpy as np

import autodiff as ad


@ad.custom_vjp
def cube(x):
    return np.array([v**3 for v in x.tolist()])


cube.defvjp(lambda x: (cube(x), x), lambda x, g: (3 * x**2 * g,))


def loss(x):
    return np.sum(np.sin(cube(x)))


# PARSED:      %fn : str = prim::Constant[value="cube@dump-custom-vjp.py:13"]()
# PARSED-NEXT: %{{[0-9]+}} : Tensor = prim::CustomVjp(%fn, %x)

# f runs fwd and hands its residuals to df.
# F-LABEL: graph @f(%x : Double(3)):
# F:         %[[OUT:[0-9]+]] : Double(3), %residuals : Any = prim::CustomVjpFwd(%fn, %x)
# F-NOT:     prim::CustomVjp(
# F:         return (%{{[0-9]+}}, %[[OUT]], %residuals)

# df runs bwd once, on the gradient of cube's result.
# DF-LABEL: graph @df(%dout : Double(), %{{[0-9]+}} : Double(3), %residuals : Any):
# DF:         %fn : str = prim::Constant[value="cube@dump-custom-vjp.py:13"]()
# DF:         %dx : Double(3) = prim::CustomVjpBwd(%fn, %residuals, %{{[0-9]+}})
