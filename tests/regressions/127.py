"""Found by tests/property/fuzz.py: property 'nested' fails with

    <generated-program-365>:19:12: error: cannot differentiate the jacobian of loss~348() again: the shape of the value it returns is not known from the shapes of its arguments (type Tensor)
            return ((-a[0, 0]) + np.tanh(s1))
                   ^^^^^^^^^^^^^^^^^^^^^^^^^^
"""

import numpy as np

PROPERTY = 'nested'
ERROR = 'DifferentiationError: cannot differentiate the jacobian of loss~N() again: the shape of the value it returns is not known from the shapes of its arguments (type'
XFAIL = None
ARGS = (('a', (3, 4)), ('b', (3,)), ('c', (3, 4)),)
LAYOUTS = {'a': 'fortran'}
SEED = 0


def f(a, b, c):
    s1 = 0
    for i2 in range(2):
        s1 += a[0, 0]
    if s1 > 0.0:
        t4 = np.tanh((s1 + b))
        v3 = b
    else:
        v3 = b
    return ((-a[0, 0]) + np.tanh(s1))


def loss(a, b, c):
    return f(a, b, c)
