"""Found by tests/property/fuzz.py: property 'nested' fails with

    error: cannot differentiate loss~199() again or call its gradient from scripted code: the gradient of the value computed here stays a run-time choice between zero and not zero (prim::AutogradAdd)
"""

import numpy as np

PROPERTY = 'nested'
ERROR = 'DifferentiationError: cannot differentiate loss~N() again or call its gradient from scripted code: the gradient of the value computed here stays a run-time choi'
XFAIL = None
ARGS = (('a', (3, 4)), ('n', 'int=0'),)
LAYOUTS = {'a': 'fortran'}
SEED = 3


def f(a, n):
    w1 = np.einsum('ij->ji', a)
    a[0:1] *= np.cos(a[0:1])
    s2 = 0
    for i3 in range(2):
        s2 -= np.sum(a[:, 1:2].T)
    if np.sum(np.mean(np.tanh(a.T @ a), axis=1, keepdims=True)) < 0.0:
        w1 += np.sin((s2 + w1[0]))
        v4 = np.mean(np.tanh(a[:, 1:4]), axis=0)
    else:
        v4 = (-0.75 - (a[:, 0] @ a[:, 0:3]))
    return ((v4 + np.tanh(np.sum(w1))) + np.tanh(s2))


def loss(a, n):
    return np.sum(f(a, n))
