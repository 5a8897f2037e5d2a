"""Written by hand after 013.py: property 'gradients' fails for a view of an argument
carried out of a loop, saved for the gradient, and overwritten before df reads it.
"""

import numpy as np

PROPERTY = "gradients"
ERROR = "AssertionError: gradient w.r.t. a: relative error N at (np.intN(N), np.intN(N)): analytic np.floatN(-N), finite differences np.floatN(-N)"
XFAIL = None
ARGS = (("a", (3, 4)),)
SEED = 0


def f(a):
    s = a[0]
    for i in range(2):
        s = a[i + 1]
    r = np.sum(s * s)
    a += a
    return r


def loss(a):
    return f(a)
