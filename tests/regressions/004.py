"""Found by tests/property/fuzz.py: property 'gradients' fails with

<generated-program-515>:10:12: error: operand 0 must be an array, got a value of type float
  while specialising %2 : Tensor = aten::sum_to_size(%dout, %self_size)  # <generated-program-515>:10:12
        return (b + b)
               ^^^^^^^
"""

import numpy as np

PROPERTY = "gradients"
ERROR = "ShapeError: operand N must be an array, got a value of type float"
XFAIL = None
ARGS = (
    ("a", (3, 4)),
    ("b", "float"),
)
SEED = 0


def f(a, b: float):
    return b + b


def loss(a, b: float):
    return f(a, b)
