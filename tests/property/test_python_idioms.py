"""The checks of programs that read arrays from outside ``f`` (`tests.property.python_idioms`):
rebinding the array, or writing into it, between calls must change the compiled result as it
changes the plain one's, so a compiler that baked the array in as a constant fails them."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings

from tests.property import checks
from tests.property.programs import Program, programs

GLOBAL = """G1 = np.random.default_rng(3).uniform(-1.0, 1.0, (4, 3)).T


def f(a):
    return np.tanh(G1 * a)


def loss(a):
    return np.sum(np.tanh(G1 * a))
"""

CLOSURE = """def _closure():
    C1 = np.random.default_rng(4).uniform(-1.0, 1.0, (4,))

    def f(a):
        return a @ C1

    def loss(a):
        return np.sum(a @ C1)

    return f, loss


f, loss = _closure()
"""


@pytest.mark.parametrize(
    ("body", "name"), [(GLOBAL, "G1"), (CLOSURE, "C1")], ids=["global", "closure"]
)
def test_a_stale_free_array_fails_the_scripted_check(
    body: str, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert_stale_arrays_fail(body, f"after {name} rebound", monkeypatch)


def assert_stale_arrays_fail(body: str, message: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """``body`` passes every property, and a compiled ``f`` that keeps returning its first
    result (what baking the arrays it reads from outside in would give) fails `scripted`."""
    program = Program(body, (("a", (3, 4)),), seed=1)
    for check in checks.PROPERTIES.values():
        check(program)
    shared = checks.compiled(program)
    first = shared.scripted(*program.arguments())
    stale = replace(shared, scripted=lambda *args: first)
    monkeypatch.setattr(checks, "compiled", lambda _: stale)
    with pytest.raises(AssertionError, match=message):
        checks.check_scripted(program)


def test_free_arrays_are_globals_and_closure_variables() -> None:
    bodies: list[str] = []

    @settings(
        max_examples=30,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(programs(["free_arrays"], focus="free_arrays"))
    def collect(program: Program) -> None:
        bodies.append(program.body)

    collect()
    assert any(body.startswith("G") for body in bodies)
    assert any(body.startswith("def _closure") for body in bodies)
