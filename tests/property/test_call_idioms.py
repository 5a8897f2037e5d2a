"""The checks of programs whose ``f`` reads arrays through a partial or an object
(`tests.property.call_idioms`): `checks.free_arrays` finds every array a module-level partial
fixes (by position, by keyword, in a partial it wraps) and every array attribute of an object,
and rebinding or writing them must change the compiled result as it changes the plain one's."""

from __future__ import annotations

import numpy as np
import pytest

from tests.property import checks
from tests.property.programs import Program
from tests.property.test_python_idioms import assert_stale_arrays_fail

PARTIALS = """import functools


def mix(x, W, s=1.0, *, k=0.5):
    return np.tanh(x * W) * s + k * np.sin(x)


K1 = np.random.default_rng(3).uniform(-1.0, 1.0, (3, 4))
K2 = np.random.default_rng(4).uniform(-1.0, 1.0, (4,))
P1 = functools.partial(mix, x=K1)
P2 = functools.partial(functools.partial(mix, K1, k=0.25), W=K2)


def f(a):
    return P1(W=a) + P2(s=0.5) * a


def loss(a):
    return np.sum(f(a))
"""

OBJECT = """class Layer:
    def __init__(self, W, b, scale):
        self.W = W
        self.b = b
        self.scale = scale

    def helper(self, u):
        return np.tanh(u + self.b)

    def apply(self, v):
        return self.scale * self.helper(v @ self.W)


OBJ = Layer(
    np.random.default_rng(5).uniform(-1.0, 1.0, (4, 3)),
    np.random.default_rng(6).uniform(-1.0, 1.0, (3,)),
    0.5,
)


def f(a):
    return OBJ.apply(a)


def loss(a):
    return np.sum(f(a))
"""


def test_free_arrays_reach_through_partials_and_objects() -> None:
    partials = checks.free_arrays(checks.loaded(Program(PARTIALS, (("a", (3, 4)),), seed=1)))
    assert [name for name, _, _ in partials] == [
        "P1.keywords['x']",
        "P2.args[0]",  # Python flattens a partial of a partial
        "P2.keywords['W']",
    ]
    objects = checks.free_arrays(checks.loaded(Program(OBJECT, (("a", (3, 4)),), seed=1)))
    assert [name for name, _, _ in objects] == ["OBJ.W", "OBJ.b"]
    _, read, rebind = partials[1]
    original = read()
    rebind(np.zeros(4))
    assert np.array_equal(read(), np.zeros(4))
    rebind(original)
    assert read() is original


@pytest.mark.parametrize(
    ("body", "name"), [(PARTIALS, "P1"), (OBJECT, "OBJ.W")], ids=["partials", "object"]
)
def test_a_stale_array_of_a_partial_or_object_fails_the_scripted_check(
    body: str, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert_stale_arrays_fail(body, f"after {name}.* rebound", monkeypatch)
