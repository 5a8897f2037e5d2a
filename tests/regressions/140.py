"""Found by tests/property/fuzz.py (the `builtins` idiom of tests/property/call_idioms.py):
property 'passes' fails with

    <generated-program-146>:19:10: error: prim::float is not differentiable
      while running pass 'differentiate' (the first pass)
            t3 = float((np.tanh(2.0) - (np.tanh(-0.75) * a[n, n]))) * c.T.T
                 ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^

(reduced by hand from the shrunk program). ``float(x)`` of a run-time NumPy scalar compiles
and runs, but has no derivative yet (``prim::float`` is ``Derivative.REFUSED`` in
`ir.ops.scalar`), so every gradient through it is refused, located; ``np.float64(x)``
differentiates. JAX and HIPS autograd refuse ``float`` of a traced value too. The generator
casts run-time scalars with ``np.float64`` only.
"""

import numpy as np

PROPERTY = 'passes'
ERROR = 'DifferentiationError: prim::float is not differentiable'
XFAIL = "refused: float() of a run-time scalar has no derivative yet (np.float64(x) has one)"
ARGS = (('a', (3, 4)),)
SEED = 1


def f(a):
    return float(np.tanh(2.0) - a[0, 0]) * a


def loss(a):
    return np.sum(f(a))
