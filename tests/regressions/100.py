"""Found by tests/property/fuzz.py: property 'passes' fails with

    Not equal to tolerance rtol=1e-10, atol=1e-12
    gradient stage after hoist-loop-invariants[1]
    Mismatched elements: 12 / 12 (100%)

hoist-loop-invariants moved the inner loop's tape (prim::TapeList, which reads nothing) out of
the outer loop's body on the gradient-stage graph: every outer iteration then appended to one
list, each row of the outer tape was that list, and the reverse read the last iteration's
values for all of them. A `fresh` operator now stays in its loop (Note [Fresh objects stay in
the loop] in passes/loop_invariants.py).
"""

import numpy as np

PROPERTY = "passes"
ERROR = "AssertionError: Not equal to tolerance rtol=N, atol=N"
XFAIL = None
ARGS = (
    ("a", (3, 4)),
    ("b", (3, 4)),
)
SEED = 0


def f(a, b):
    acc = a * 1.0
    k1 = 0
    while k1 < 2:
        k1 = k1 + 1
        k2 = 0
        while k2 < 2:
            k2 = k2 + 1
            acc = np.tanh(acc + b)
        acc = 0.5 * acc + 0.5 * np.tanh(a)
    return np.sum(acc)


def loss(a, b):
    return f(a, b)
