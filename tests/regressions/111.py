"""Written by hand for issue 15, item 2 (the idiom the fuzzer did not write): property
'scripted' failed with

    Not equal to tolerance rtol=1e-10, atol=1e-12
    result
    Mismatched elements: 12 / 12 (100%)

t = a[n, 1] reads one element: in NumPy a NumPy scalar, a copy. functionalize took the select
chain for a view of a, so the later write a[n] = 7.0 was seen through t, and t += 5.0 was
written into a. Reading every axis with ints is no view now (`is_view`).
"""

import numpy as np

PROPERTY = "scripted"
ERROR = "AssertionError: Not equal to tolerance rtol=N, atol=N"
XFAIL = None
ARGS = (
    ("a", (3, 4)),
    ("b", (4,)),
    ("n", "int=-2"),
)
SEED = 1


def f(a, b, n):
    t = a[n, 1]
    u = b[-1]
    a[n] = 7.0
    b[3] = u * 2.0
    t += 5.0
    u *= t
    return t * a + u


def loss(a, b, n):
    return np.sum(f(a, b, n))
