"""Issue 15, found by the 10,000-program run: property 'scripted' fails with

    error: cannot tell whether 'w2' sees the write to 'y1': NumPy makes this reshape a view or a copy depending on the array's strides, which the compiler cannot tell here; copy it where it is made (.copy())
      while running pass 'functionalize{number-inputs= strided-inputs=1:8,24;2:16}' (the first pass)

The false refusal of regression 132, the same way reached.
"""

import numpy as np

PROPERTY = "scripted"
ERROR = "IRError: cannot tell whether '_' sees the write to '_': NumPy makes this reshape a view or a copy depending on the array's strides, which the compiler cannot te"
XFAIL = None
ARGS = (
    ("a", (3, 4)),
    ("b", (3, 4)),
    ("c", (4,)),
)
LAYOUTS = {"b": "fortran", "c": "strided"}
SEED = 0


def f(a, b, c):
    y1 = a.T * 1.0
    w2 = y1.reshape(3, 4)
    y1[0] = 0.5
    t3 = c
    return w2


def loss(a, b, c):
    return np.sum(f(a, b, c))
