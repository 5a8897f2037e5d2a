"""Issue 15 (2c), the property 'gradients' failed with

    AssertionError: gradient w.r.t. x: relative error 2.26e+01 at (0,): analytic 4.382, finite
    differences -0.203

np.einsum keeps its operands as one tuple, (x, x), for its gradient; f writes x afterwards and
leaves the new contents in the caller's array at its end (prim::WriteBack), and df read the
tuple, which held the caller's array itself: the written x. Lambda lifting copied only views
of written arguments it recognised, not arrays inside tuples or lists. Now every value df reads
goes through prim::CopyIfShared before the write-back (Note [Arguments written to]).
"""

import numpy as np

PROPERTY = "gradients"
ERROR = "AssertionError: gradient"
XFAIL = None
ARGS = (("x", (3,)), ("w", (3,)))
SEED = 0


def f(x, w):
    s = np.einsum("i,i->", x, x) + np.einsum("i,i->", x, w)
    x[0] = 5.0
    held = [x, w]
    return s * held[1]


def loss(x, w):
    return np.sum(f(x, w))
