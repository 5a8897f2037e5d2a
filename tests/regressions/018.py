"""Found by tests/property/fuzz.py: property 'scripted' fails with

    Not equal to tolerance rtol=1e-10, atol=1e-12
    argument a after the call
    Mismatched elements: 12 / 12 (100%)
    First 5 mismatches are at indices:
     [0, 0]: 0.8217701239287258 (ACTUAL), 1.0956934985716344 (DESIRED)
     [0, 1]: -0.6469297703016101 (ACTUAL), -0.37300639565870153 (DESIRED)
     [0, 2]: -1.5621825296123126 (ACTUAL), -1.288259154969404 (DESIRED)
     [0, 3]: -1.659966083242975 (ACTUAL), -1.3860427086000664 (DESIRED)

v1 may be a view of a (which branch ran decides), and a is written after the If: the
compiled function read v1 as it was before the write. Functionalisation now refuses such a
read with a located error (Note [Functionalisation]), a documented limit; the generator
does not write to an array an If or a loop may have given a view of.
"""

import numpy as np

PROPERTY = "scripted"
ERROR = "IRError: cannot tell what '_' holds here: it comes out of an if or a loop that may give '_' or a view of it, which has been written since; copy it where it is a"
XFAIL = "refused by design: an If or loop output that may be a view of an array written since"
ARGS = (
    ("a", (3, 4)),
    ("b", (3,)),
)
SEED = 0


def f(a, b):
    if np.sum(b) < 0.0:
        v1 = a[:, 0:1]
    else:
        v1 = a[:, 0:1]
    a += a
    a += v1
    return b


def loss(a, b):
    return np.sum(f(a, b))
