"""Found by tests/property/fuzz.py: property 'scripted' fails with

Not equal to tolerance rtol=1e-10, atol=1e-12
result
Mismatched elements: 4 / 4 (100%)
Mismatch at indices:
 [0, 0]: 0.8909862166569977 (ACTUAL), 0.8909541303437528 (DESIRED)
 [1, 0]: 0.8935960085240182 (ACTUAL), 0.8909663280570924 (DESIRED)
 [2, 0]: 0.8913602874285156 (ACTUAL), 0.890954984884372 (DESIRED)
 [3, 0]: 0.8942696119341014 (ACTUAL), 0.8909697154038991 (DESIRED)
"""

import numpy as np

PROPERTY = "scripted"
ERROR = "AssertionError: Not equal to tolerance rtol=N, atol=N"
XFAIL = None
ARGS = (
    ("a", (3, 4)),
    ("n", "int=2"),
)
SEED = 785


def f(a, n):
    t1 = (a[0:1] * np.tanh(a.T @ a)).T
    t2 = (-a.T[0:1]) + a[:, n]
    t1 += np.sin(t1.T)
    acc3 = np.tanh(((a[0, -2] - a[:, -3]) @ (a @ a[n])))
    for i4 in range(n):
        t1 *= np.sum(a, axis=0, keepdims=True) + (0.25 * t1)
        acc3 = np.tanh(acc3 + (np.tanh((t1[:, 0:3] @ a[:, 2])) @ np.sin(a[i4])))
    return np.tanh(np.exp(((0.5 + a[n, n]) / (2.0 + np.cos(t1[:, 3:4])))))


def loss(a, n):
    return np.sum(f(a, n))
