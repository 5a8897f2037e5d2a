"""Found by tests/property/fuzz.py: property 'scripted' fails with

    <generated-program-639>:13:5: error: cannot tell whether this writes to 'y1': NumPy makes the reshape a view or a copy depending on the array's strides, which the compiler cannot tell here; copy it first (.copy())
      while running pass 'functionalize{number-inputs= strided-inputs=0:8,24}' (the first pass)
            w2[0] = np.tanh(0.5)
            ^^^^^
"""

import numpy as np

PROPERTY = 'scripted'
ERROR = "IRError: cannot tell whether this writes to '_': NumPy makes the reshape a view or a copy depending on the array's strides, which the compiler cannot tell here;"
XFAIL = None
ARGS = (('a', (3, 4)),)
LAYOUTS = {'a': 'fortran'}
SEED = 0


def f(a):
    y1 = np.tanh(a.T @ a) * 1.0
    w2 = y1[:, ::2].reshape(-1)
    w2[0] = np.tanh(0.5)
    t3 = np.sum(np.sin(w2))
    return w2


def loss(a):
    return np.sum(f(a))
