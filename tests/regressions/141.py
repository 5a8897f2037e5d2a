"""Found by tests/property/fuzz.py: property 'scripted' fails with

    <generated-program-405>:12:9: error: cannot tell which array this writes to: 't1' comes out of an if or a loop that may give different arrays; write to the array itself, or copy it first (x.copy())
      while running pass 'functionalize{number-inputs=}' (the first pass)
                t1[0] = np.tanh(0.5)
                ^^^^^

(the `builtins` idiom of tests/property/call_idioms.py). ``t1 = d * 2.0 if all(u.ndim == 1
for u in (d, d)) else d`` is decided while compiling, yet stays an IR ``if`` whose output may
be ``d`` or a new array, so the write to ``t1`` is refused, located, as for an ``if`` on data
(Note [Functionalisation]; the same for ``if a.ndim == 1:`` statements). A false refusal, not a
wrong value; the generator no longer writes into such a result.
"""

import numpy as np

PROPERTY = 'scripted'
ERROR = "IRError: cannot tell which array this writes to: '_' comes out of an if or a loop that may give different arrays; write to the array itself, or copy it first (x"
XFAIL = "refused: a write to an if's output that may be either array, even when the condition is known while compiling"
ARGS = (('a', (3, 4)), ('b', (3, 4)), ('c', (3, 4)), ('d', (3,)),)
SEED = 0


def f(a, b, c, d):
    t1 = d * 2.0 if all(u.ndim == 1 for u in (d, d)) else d
    for i2 in range(0):
        t1[0] = np.tanh(0.5)
    t3 = 0.5
    t4 = t3
    return (t3 + np.tanh(np.sum(t1)))


def loss(a, b, c, d):
    return f(a, b, c, d)
