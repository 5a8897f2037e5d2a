"""Issue 15, found by the run on c95315d: property 'gradients' fails with

    gradient w.r.t. a: relative error 5.01e+00 at (np.int64(1), np.int64(0)): analytic np.float64(6.012323827204359), finite differences np.float64(1.000000000139778)

The check's own bug of regression 137, reached through a Fortran-ordered argument: there
``a.reshape(-1)`` is a copy, on the check's C-ordered copy a view that sees ``a[n] = s1``.
"""

import numpy as np

PROPERTY = "gradients"
ERROR = "AssertionError: gradient w.r.t. a: relative error N at (np.intN(N), np.intN(N)): analytic np.floatN(N), finite differences np.floatN(N)"
XFAIL = None
ARGS = (
    ("a", (3, 4)),
    ("n", "int=0"),
)
LAYOUTS = {"a": "fortran"}
SEED = 0


def f(a, n):
    s1 = a[0, 0]
    a[0] = a[:, 0] @ a[:, 0]
    w2 = a.reshape(-1)
    a[n] = s1
    t3 = np.sum(np.sin(w2))
    return w2


def loss(a, n):
    return np.sum(f(a, n))
