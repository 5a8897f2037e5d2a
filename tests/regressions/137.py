"""Issue 15, found by the run on c95315d: property 'gradients' fails with

    gradient w.r.t. b: relative error 1.00e+00 at (np.int64(0), np.int64(0)): analytic np.float64(0.0), finite differences np.float64(1.000000000139778)

The check's own bug, as 131 was: its finite differences ran the plain function on C-ordered
copies of the arguments (`copy.deepcopy`, `base.copy()`), but ``b`` is passed reversed, where
``b[::-1].reshape(-1)`` is a view that sees the write ``b[0] = c``; on a C-ordered copy it is
a copy that does not. The compiled gradient (0 for ``b[0]``, 4 for ``c``) was right for the
arguments given. The differences now run on copies that keep the arguments' strides
(`layout_keeping_differences` in `tests/property/checks.py`).
"""

import numpy as np

PROPERTY = "gradients"
ERROR = "AssertionError: gradient w.r.t. b: relative error N at (np.intN(N), np.intN(N)): analytic np.floatN(N), finite differences np.floatN(N)"
XFAIL = None
ARGS = (
    ("a", (3, 4)),
    ("b", (3, 4)),
    ("c", "float"),
)
LAYOUTS = {"a": "fortran", "b": "reversed"}
SEED = 0


def f(a, b, c: float):
    w1 = b[::-1].reshape(-1)
    b[0] = c
    t2 = np.sum(np.sin(w1))
    t3 = c
    return w1


def loss(a, b, c: float):
    return np.sum(f(a, b, c))
