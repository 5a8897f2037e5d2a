"""Found by tests/property/fuzz.py: property 'scripted' fails with

    result: <class 'numpy.float64'> != <class 'float'>

(the generator annotates float parameters since).
"""

import numpy as np

PROPERTY = "scripted"
ERROR = "AssertionError: result: <class 'numpy.floatN'> != <class 'float'>"
XFAIL = None
ARGS = (("a", (3, 4)), ("b", "float"))
SEED = 0


def f(a, b):
    return b * b


def loss(a, b):
    return f(a, b)
