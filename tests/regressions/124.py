"""Found by tests/property/fuzz.py: property 'nested' fails with

    <generated-program-106>:17:17: error: simplify-arithmetic: still rewriting after 4096 rewrites (last: delayed_negation on aten::mul)
      while running pass 'simplify-arithmetic' (passes run before it: constant-propagation, fold-sizes, constant-propagation, stack-tapes, share-carried-tapes, specialize-autograd-zero, sink-unreduce)
            t5 = np.sum(np.sin(w4))
                        ^^^^^^^^^^
"""

import numpy as np

PROPERTY = 'nested'
ERROR = 'RewriteLimitError: simplify-arithmetic: still rewriting after N rewrites (last: delayed_negation on aten::mul)'
XFAIL = None
ARGS = (('a', (3, 4)), ('b', (3, 1)), ('c', (3, 4)),)
SEED = 1653


def f(a, b, c):
    s1 = 0.0
    k2 = 0
    while k2 < 1:
        k2 = k2 + 1
        s1 -= a[k2, 2]
    y3 = (0.25 + a.T[:, 2:3]) * 1.0
    w4 = y3.diagonal()
    t5 = np.sum(np.sin(w4))
    return ((np.mean((np.cos(c[2:3]) + (b[0, -1] + y3)), axis=1, keepdims=True) + np.tanh(s1)) + np.tanh(t5))


def loss(a, b, c):
    return np.sum(f(a, b, c))
