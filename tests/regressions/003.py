"""Found by tests/property/fuzz.py (shrunk by hand): property 'scripted' failed with

    error: operand 1: %y4 is used before its definition
      in the return of a block of %v2 : Double(1, 4), %y4 : Double(4, 1) = prim::If(%0)
      after pass 'functionalize' (the first pass)

functionalize carried the version of an array made inside a branch out of the If; fixed.
"""

import numpy as np

PROPERTY = "scripted"
ERROR = "VerifyError: operand N: %_ is used before its definition"
XFAIL = None
ARGS = (("a", (3, 4)),)
SEED = 1


def f(a):
    if np.sum(a) < -100.0:
        v = a
    else:
        y = a * 1.0
        y[1] = 0.5
        v = y
    return v


def loss(a):
    return np.sum(f(a))
