"""Issue 15, found by the 10,000-program run: property 'scripted' fails with

    <generated-program-3655>:21:5: error: cannot tell whether 'w5' sees the write to 'y4': NumPy makes this reshape a view or a copy depending on the array's strides, which the compiler cannot tell here; copy it where it is made (.copy())
      while running pass 'functionalize{number-inputs=}' (the first pass)
            w5[0] = np.tanh(0.5)
            ^^^^^

The false refusal of regression 132, the same way reached.
"""

import numpy as np

PROPERTY = "scripted"
ERROR = "IRError: cannot tell whether '_' sees the write to '_': NumPy makes this reshape a view or a copy depending on the array's strides, which the compiler cannot te"
XFAIL = None
ARGS = (
    ("a", (3, 4)),
    ("b", (4, 3)),
    ("n", "int=0"),
)
SEED = 0


def f(a, b, n):
    for i1 in range(2):
        if n > 0:
            y3 = (a[:, 0] + b[:, 0:1]) * 1.0
            y3[0] = np.tanh(np.tanh(np.tanh(a[0, 0])))
            v2 = a[:, 0]
        else:
            v2 = np.tanh(a[:, 0])
        a[1] = np.tanh(((0.5 + a[0]) @ a[0]))
    y4 = b.T * 1.0
    w5 = y4.reshape(-1)
    y4[0] = 0.5
    w5[0] = np.tanh(0.5)
    t6 = np.sum(np.sin(w5))
    return w5


def loss(a, b, n):
    return np.sum(f(a, b, n))
