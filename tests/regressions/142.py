"""Found by tests/property/fuzz.py: property 'scripted' fails with

    <generated-program-321>:11:10: error: sorted() orders items known while compiling (numbers, strings, or keys= that give them): use np.sort for values known only at run time
            t2 = sorted([0.5, -2.0, 1.0], key=abs)[-1] * a[:, n]
                 ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^

(the `builtins` idiom of tests/property/call_idioms.py). ``sorted`` takes keys that are
``prim::Constant`` nodes only: a key function that computes on a number known while compiling
(``key=abs``, ``key=lambda c: -c``) gives an operator node not folded while compiling, so it is
refused with a message that says keys= giving numbers are accepted (a key choosing among
strings, as in tests/unit/test_compile_time_builtins.py, is a constant and works). A false refusal, not a wrong value, fixed in 10be8eb: the keys are folded
while compiling.
"""

import numpy as np

PROPERTY = 'scripted'
ERROR = 'ScriptError: sorted() orders items known while compiling (numbers, strings, or keys= that give them): use np.sort for values known only at run time'
ARGS = (('a', (3, 4)), ('b', 'float'), ('n', 'int=0'),)
LAYOUTS = {'a': 'fortran'}
SEED = 0


def f(a, b: float, n):
    t2 = sorted([0.5, -2.0, 1.0], key=abs)[-1] * a[:, n]
    return (b + np.tanh(np.sum(t2)))


def loss(a, b: float, n):
    return f(a, b, n)
