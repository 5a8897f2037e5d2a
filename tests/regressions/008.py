"""Found by tests/property/fuzz.py (shrunk by hand): property 'passes' fails with

    error: cannot tell which array this writes to: 'y1' comes out of an if or a loop that may
    give different arrays; write to the array itself, or copy it first (x.copy())
      while running pass 'functionalize' (the first pass)
                y1 += c
                ^^^^^^^

y1 is one array all along: only the write in the if makes the loop carry it.
"""

import numpy as np

PROPERTY = "scripted"
ERROR = "IRError: cannot tell which array this writes to: '_' comes out of an if or a loop that may give different arrays; write to the array itself, or copy it first (x"
XFAIL = None
ARGS = (("a", (3, 4)), ("c", (3, 4)))
SEED = 0


def f(a, c):
    y1 = c.copy()
    for i in range(1):
        if np.sum(a) < 0.5:
            y1 += c
    return y1


def loss(a, c):
    return np.sum(f(a, c))
