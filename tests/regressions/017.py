"""Found by tests/property/fuzz.py: property 'gradients' fails with

    Not equal to tolerance rtol=1e-10, atol=1e-12

    Mismatched elements: 1 / 1 (100%)
    Max absolute difference among violations: 8.57770264
    Max relative difference among violations: 0.92982249
     ACTUAL: array(0.647394)
     DESIRED: array(9.225097)

v1 may be a view of a (which branch ran decides), and a is written after the If: the
compiled function read v1 as it was before the write. Functionalisation now refuses such a
read with a located error (Note [Functionalisation]), a documented limit; the generator
does not write to an array an If or a loop may have given a view of.
"""

import numpy as np

PROPERTY = "gradients"
ERROR = "IRError: cannot tell what '_' holds here: it comes out of an if or a loop that may give '_' or a view of it, which has been written since; copy it where it is a"
XFAIL = "refused by design: an If or loop output that may be a view of an array written since"
ARGS = (
    ("a", (3, 4)),
    ("b", "float"),
)
SEED = 0


def f(a, b: float):
    if b > 0.0:
        v1 = a.T
    else:
        v1 = a.T
    a += b
    t2 = b
    return v1


def loss(a, b: float):
    return np.sum(f(a, b))
