"""Written by hand for issue 15, item 1 (the idiom the fuzzer did not write): property
'gradients' failed with

    Not equal to tolerance rtol=1e-10, atol=1e-12
    ACTUAL: array(-0.340537)
    DESIRED: array(0.905528)

s starts as a Python float and `s *= ...`, `s += ...` in the loops make it a NumPy scalar; the
frontend emits each update as aten::copy_, and functionalize took the loop-carried s for an
array written in place, whose first value is the float: it dropped the loops and returned s
as passed, with a zero gradient. A copy_ into a number is a rebinding now (Note [Numbers and 0-d arrays]
in `passes.number_updates`).
"""

import numpy as np

PROPERTY = "gradients"
ERROR = "AssertionError: Not equal to tolerance rtol=N, atol=N"
XFAIL = None
ARGS = (
    ("a", (3, 4)),
    ("s", "float"),
    ("n", "int=3"),
)
SEED = 1


def f(a, s: float, n: int):
    for i in range(n):
        s *= 0.5 + np.mean(a[i])
    i = 0
    while i < n:
        if np.sum(a[i]) > 0.0:
            s += np.sum(a[i] * a[i])
        else:
            s -= np.max(a[i])
        i += 1
    return s


def loss(a, s: float, n: int):
    return f(a, s, n)
