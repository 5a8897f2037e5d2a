"""Found by tests/property/fuzz.py: property 'passes' fails with

    Not equal to tolerance rtol=1e-10, atol=1e-12
    after functionalize: results[0]
    Mismatched elements: 4 / 12 (33.3%)
    Mismatch at indices:
     [0]: 0.5 (ACTUAL), 0.2739233746429086 (DESIRED)
     [1]: 0.5 (ACTUAL), -0.4604265724722594 (DESIRED)
     [2]: 0.5 (ACTUAL), -0.9180529521276106 (DESIRED)
     [3]: 0.5 (ACTUAL), -0.9669447289429418 (DESIRED)
"""

import numpy as np

PROPERTY = 'passes'
ERROR = 'AssertionError: Not equal to tolerance rtol=N, atol=N'
XFAIL = None
ARGS = (('a', (3, 4)),)
LAYOUTS = {'a': 'fortran'}
SEED = 0


def f(a):
    w1 = a.reshape(-1)
    a[0] = 0.5
    t2 = np.sum(np.sin(w1))
    return w1


def loss(a):
    return np.sum(f(a))
