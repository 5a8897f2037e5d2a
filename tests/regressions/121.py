"""Issue 15 (2c), the property 'scripted' failed with

    Not equal to tolerance rtol=1e-10, atol=1e-12
    result: 4.45 (ACTUAL), 4.15 (DESIRED)

acc is x itself once the if inside the loop has taken its first branch, and x is written after
the loop: the compiled function read acc as x was before the write, since the loop's result
was not known to be x (only an If or loop directly giving out x was). Functionalisation now
follows what nested Ifs and loops give out and refuses the read with a located error (Note
[Functionalisation]), as it does for an if or a loop alone.
"""

import numpy as np

PROPERTY = "scripted"
ERROR = "IRError: cannot tell what '_' holds here: it comes out of an if or a loop that may give '_' or a view of it, which has been written since; copy it where it is a"
XFAIL = "refused by design: an alias an if inside a loop gave out, read after a write to it"
ARGS = (("x", (3,)), ("y", (3,)))
SEED = 0


def f(x, y):
    acc = y
    for i in range(3):
        if np.sum(x) > i - 3.0:
            acc = x
        else:
            acc = acc * 2.0
    x[0] = 1.0
    return acc


def loss(x, y):
    return np.sum(f(x, y))
