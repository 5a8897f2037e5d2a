"""Found by tests/property/fuzz.py: property 'gradients' fails with

    gradient w.r.t. a: relative error 1.00e+00 at (np.int64(0), np.int64(0)): analytic
    np.float64(-0.9208531449445188), finite differences np.float64(-0.4604265724517109)

The views a[:, 0] and a[:, 1] the else branch saves for the gradient came out of the If
uncopied, and `a += a` overwrote them before df read them (autodiff/lambda_lift.py).
"""

import numpy as np

PROPERTY = "gradients"
ERROR = "AssertionError: gradient w.r.t. a: relative error N at (np.intN(N), np.intN(N)): analytic np.floatN(-N), finite differences np.floatN(-N)"
XFAIL = None
ARGS = (("a", (3, 4)),)
SEED = 0


def f(a):
    if np.sum(a) < 0.0:
        a += np.tanh(((a[:, 0:3] @ a[:, 0]) @ (0.5 + a)))
        v1 = 0.5
    else:
        v1 = a[:, 0] @ a[:, 1]
    t2 = np.tanh(a.T @ a)
    t3 = v1
    a += a
    return v1


def loss(a):
    return f(a)
