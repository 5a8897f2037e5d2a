"""Found by tests/property/fuzz.py: property 'scripted' failed with

    Not equal to tolerance rtol=1e-10, atol=1e-12
    result
    Mismatched elements: 4 / 12 (33.3%)

acc1 is the view a.T in the first iteration, which sees the write to a[0], and a new array in
the next: the compiled function read it as if it never saw the write. Functionalisation now
refuses such a read with a located error (Note [Functionalisation]), a documented limit like
writing to an array an if or a loop chose; the generator does not write, in a loop, to the
array a variable the loop carries started as.
"""

import numpy as np

PROPERTY = "scripted"
ERROR = "IRError: cannot tell what '_' holds here: the loop carries it, and its first value shares memory with '_', which the loop has written since (the next iterations"
XFAIL = "refused by design: a loop-carried value that starts as a view of an array the loop writes"
ARGS = (("a", (3, 4)), ("n", "int=1"))
SEED = 0


def f(a, n):
    acc1 = a.T
    for i2 in range(n):
        a[0] = np.tanh(0.5)
        acc1 = np.tanh(acc1 + acc1)
    return acc1


def loss(a, n):
    return np.sum(f(a, n))
