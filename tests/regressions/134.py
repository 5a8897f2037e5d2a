"""Issue 15, found by the 10,000-program run: property 'scripted' fails with

    <generated-program-1964>:13:5: error: cannot tell whether this writes to 'y1': NumPy makes the reshape a view or a copy depending on the array's strides, which the compiler cannot tell here; copy it first (.copy())
      while running pass 'functionalize{number-inputs= strided-inputs=1:8,24}' (the first pass)
            w2[0] = np.tanh(0.5)
            ^^^^^

The false refusal of regression 132, the same way reached.
"""

import numpy as np

PROPERTY = "scripted"
ERROR = "IRError: cannot tell whether this writes to '_': NumPy makes the reshape a view or a copy depending on the array's strides, which the compiler cannot tell here;"
XFAIL = None
ARGS = (
    ("a", (3, 4)),
    ("b", (3, 4)),
    ("c", (3, 4)),
    ("n", "int=0"),
)
LAYOUTS = {"b": "fortran"}
SEED = 0


def f(a, b, c, n):
    y1 = a.T * 1.0
    w2 = y1.reshape(-1)
    w2[0] = np.tanh(0.5)
    t3 = np.sum(np.sin(w2))
    return w2


def loss(a, b, c, n):
    return np.sum(f(a, b, c, n))
