"""Found by tests/property/fuzz.py: property 'gradients' fails with

    error: operand 0 must be an array, got a value of type float
      while specialising %3 : Tensor = aten::sum(%b, %1, %2)

(the generator's loss leaves np.sum out for a scalar result since).
"""

import numpy as np

PROPERTY = "gradients"
ERROR = "ShapeError: operand N must be an array, got a value of type float"
XFAIL = None
ARGS = (("a", (3, 4)), ("b", "float"))
SEED = 0


def f(a, b: float):
    return b


def loss(a, b: float):
    return np.sum(f(a, b))
