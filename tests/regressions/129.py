"""Found by tests/property/fuzz.py: property 'nested' fails with

    <generated-program-421>:16:12: error: cannot differentiate the jacobian of loss~402() again: the shape of the value it returns is not known from the shapes of its arguments (type Tensor)
            return (np.tanh(a[0, 1]) + np.tanh(s1))
                   ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
"""

import numpy as np

PROPERTY = 'nested'
ERROR = 'DifferentiationError: cannot differentiate the jacobian of loss~N() again: the shape of the value it returns is not known from the shapes of its arguments (type'
XFAIL = None
ARGS = (('a', (3, 4)), ('b', (4, 3)), ('c', (4, 3)), ('d', (1, 4)),)
SEED = 10


def f(a, b, c, d):
    s1 = 0
    for i2 in range(2):
        s1 += np.sum(np.sin(b[1]))
    d.T[0] -= (np.tanh((a[:, 0] @ a[:, -1])) + (np.tanh(s1) + s1))
    t3 = (np.tanh(b[:, 0:1]) * d[0])
    t4 = a[2, 0]
    return (np.tanh(a[0, 1]) + np.tanh(s1))


def loss(a, b, c, d):
    return f(a, b, c, d)
