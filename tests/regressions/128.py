"""Found by tests/property/fuzz.py: property 'nested' fails with

    <generated-program-166>:19:12: error: cannot differentiate the jacobian of loss~164() again: the shape of the value it returns is not known from the shapes of its arguments (type Tensor)
            return (np.tanh(t3) + np.tanh(s5))
                   ^^^^^^^^^^^^^^^^^^^^^^^^^^^
"""

import numpy as np

PROPERTY = 'nested'
ERROR = 'DifferentiationError: cannot differentiate the jacobian of loss~N() again: the shape of the value it returns is not known from the shapes of its arguments (type'
XFAIL = None
ARGS = (('a', (3, 4)), ('b', (3, 4)), ('c', (3, 4)), ('u34', 'complex(3, 4)'), ('u4', 'complex(4,)'),)
LAYOUTS = {'a': 'fortran', 'b': 'fortran', 'u34': 'fortran', 'u4': 'strided'}
SEED = 0


def f(a, b, c, u34, u4):
    z1 = ((u34 + a) / (1.0 + np.abs((u34 + a)) ** 2)) * 1.0
    r2 = np.real(z1)
    r2[0, 0] = np.tanh(0.5)
    t3 = np.sum(r2) + np.abs(np.sum(z1))
    t4 = np.tanh(t3)
    s5 = 0
    for i6 in range(1):
        s5 += np.sum(a[0])
    return (np.tanh(t3) + np.tanh(s5))


def loss(a, b, c, u34, u4):
    return f(a, b, c, u34, u4)
