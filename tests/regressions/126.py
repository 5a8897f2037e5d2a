"""Found by tests/property/fuzz.py: property 'nested' fails with

    <generated-program-144>:21:10: error: aten::_norm_backward is not differentiable
            t7 = np.linalg.norm(z6, np.inf, axis=(1, 0))
                 ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
"""

import numpy as np

PROPERTY = 'nested'
ERROR = 'DifferentiationError: aten::_norm_backward is not differentiable'
XFAIL = None
ARGS = (('a', (3, 4)), ('n', 'int=0'), ('u34', 'complex(3, 4)'), ('u43', 'complex(4, 3)'),)
SEED = 5470


def f(a, n, u34, u43):
    acc1 = ((a[0, n] + a[2]) + np.tanh(0.5))
    for i2 in range(n):
        y3 = (0.5 + a[:, 0:1]) * 1.0
        y3[n, -1] *= np.cos((np.tanh(0.5) * a[2:3].mean()))
        acc1 = np.tanh(acc1 + (2.0 * acc1))
    if np.sum(a[:, 1:2]) < 0.0:
        v4 = np.cos(a[:, 0:3])
    else:
        v4 = a[:, 1:4]
    t5 = a[:, -2]
    z6 = np.matmul((((u34 + u34) / (1.0 + np.abs((u34 + u34)) ** 2)) - ((u34 - a.T.T) / (1.0 + np.abs((u34 - a.T.T)) ** 2))), ((u43 * u43) / (1.0 + np.abs((u43 * u43)) ** 2)))
    t7 = np.linalg.norm(z6, np.inf, axis=(1, 0))
    return ((np.tanh(a.T @ a) @ a.T).T.T + np.tanh(t7))


def loss(a, n, u34, u43):
    return np.sum(f(a, n, u34, u43))
