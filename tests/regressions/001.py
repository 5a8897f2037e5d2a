"""Found by tests/property/fuzz.py: property 'gradients' fails with

gradient w.r.t. a: relative error 1.99e+00 at (np.int64(2), np.int64(3)): analytic np.float64(1.9781519937042704), finite differences np.float64(-1.9890459994620358)
"""

import numpy as np

PROPERTY = "gradients"
ERROR = "AssertionError: gradient w.r.t. a: relative error N at (np.intN(N), np.intN(N)): analytic np.floatN(N), finite differences np.floatN(-N)"
XFAIL = None
ARGS = (("a", (3, 4)),)
SEED = 0


def f(a):
    t1 = a.T
    t1 *= t1
    return a


def loss(a):
    return np.sum(f(a))
