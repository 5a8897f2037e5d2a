"""Found by tests/property/fuzz.py: property 'nested' fails with

    <generated-program-258>:24:12: error: cannot differentiate the jacobian of loss~251() again: the shape of the value it returns is not known from the shapes of its arguments (type Tensor)
            return np.sum(f(a, b, c, d, n, p))
                   ^^^^^^^^^^^^^^^^^^^^^^^^^^^
"""

import numpy as np

PROPERTY = 'nested'
ERROR = 'DifferentiationError: cannot differentiate the jacobian of loss~N() again: the shape of the value it returns is not known from the shapes of its arguments (type'
XFAIL = None
ARGS = (('a', (3, 4)), ('b', 'float'), ('c', (3, 4)), ('d', 'float'), ('n', 'int=3'), ('p', 'float'),)
SEED = 0


def f(a, b: float, c, d: float, n, p: float):
    s1 = p
    for i2 in range(0):
        s1 += a[i2, 0]
    if np.tanh(np.tanh(b)) > 0.0:
        v3 = np.tanh(np.tanh(a[:, 0]))
    else:
        v3 = a[:, 0]
    s4 = 0
    for i5 in range(1):
        s4 += a[0, 0]
    return ((v3 + np.tanh(s1)) + np.tanh(s4))


def loss(a, b: float, c, d: float, n, p: float):
    return np.sum(f(a, b, c, d, n, p))
