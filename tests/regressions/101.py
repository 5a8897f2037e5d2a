"""Found by tests/property/fuzz.py: property 'passes' fails with

    Not equal to tolerance rtol=1e-10, atol=1e-12
    after functionalize: results[0]
    Mismatched elements: 9 / 9 (100%)
    First 5 mismatches are at indices:
     [0, 0]: -0.7591378504611711 (ACTUAL), -0.7285669902625648 (DESIRED)
     [0, 1]: -0.8493670919426553 (ACTUAL), -0.7569476997780034 (DESIRED)
     [0, 2]: -0.7176157446055603 (ACTUAL), -0.6251963524409084 (DESIRED)
     [1, 0]: -0.7882816060976593 (ACTUAL), -0.6535495041465416 (DESIRED)

t1 = a[n] for the int argument n is a view of a in NumPy, but the frontend emits aten::index
(n's type is not known when f is parsed) and functionalize took it for a copy, so the write
to t1[:] never reached a. Such an aten::index is a view now (`is_view`).
"""

import numpy as np

PROPERTY = "passes"
ERROR = "AssertionError: Not equal to tolerance rtol=N, atol=N"
XFAIL = None
ARGS = (
    ("a", (3, 4)),
    ("b", (4,)),
    ("c", (3, 4)),
    ("n", "int=0"),
)
SEED = 1


def f(a, b, c, n):
    b[0] = (0.5 + b) @ a[0]
    t1 = a[n]
    if n > 0:
        v2 = (a[:, 2:3] - a.T[0:1]).T
    else:
        t1[:] += np.mean(a.T.T, axis=0)
        v2 = (a[1] @ a[n]) - (a.T[0:1] * c[:, 0:3])
    return v2


def loss(a, b, c, n):
    return np.sum(f(a, b, c, n))
