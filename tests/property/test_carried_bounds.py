"""The generator's bounds hold in every iteration of a loop, not only the first: a loop that
carries a value through ``np.exp`` keeps it within the bound the generator gives it (Note
[Bounds of carried values] in `tests.property.programs`), so central differences of the
``gradients`` property do not lose their digits to values that grow without bound."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from tests.property.programs import Expr, _Generator


def steered(preferred: Sequence[str], levels: list[int]) -> Any:
    """A ``draw`` for `_Generator` that takes the first of ``preferred`` among the options it
    is offered (else the last), says yes to every flag, draws no statement into a loop body,
    takes each ``integers(0, 3)`` (a trip count, or an expression's depth: 0 is a leaf) from
    ``levels`` in turn, and the largest of any other integer."""

    def draw(strategy: Any) -> Any:
        while hasattr(strategy, "wrapped_strategy"):
            strategy = strategy.wrapped_strategy
        kind = type(strategy).__name__
        if kind == "JustStrategy":
            return strategy.value
        if kind == "SampledFromStrategy":
            options = list(strategy.elements)
            return next((p for p in preferred if p in options), options[-1])
        if kind == "IntegersStrategy":
            if (strategy.start, strategy.end) == (0, 1):
                return 0
            if (strategy.start, strategy.end) == (0, 3) and levels:
                return levels.pop(0)
            return strategy.end
        return True

    return draw


def test_a_while_loop_carrying_a_value_through_exp_keeps_it_within_its_bound() -> None:
    # acc = 2.0 * a[0], then three trips of acc = 0.5 * acc + 0.5 * np.exp(acc): a bound
    # drawn from the first trip alone is e**2, and from acc = 2 the trips reach 4.7, 57, 2e24.
    levels = [3, 3, 0]  # three trips; the update an operator (unary: exp) of a leaf (acc)
    generator = _Generator(steered(["while", "unary", "exp"], levels))
    generator.define("a", Expr("a", (3, 4), 1.0), local=False)
    generator.emit("acc = 2.0 * a[0]")
    generator.define("acc", Expr("acc", (4,), 2.0))
    generator.while_statement(depth=1)
    assert not levels
    source = "def f(a):\n" + "\n".join(generator.lines) + "\n    return acc\n"
    assert "np.exp(acc)" in source, source
    namespace: dict[str, Any] = {"np": np}
    exec(compile(source, "<steered>", "exec"), namespace)
    carried = generator.lookup("acc")
    assert carried is not None
    for seed in range(20):
        a = np.random.default_rng(seed).uniform(-1, 1, (3, 4))
        largest = float(np.max(np.abs(namespace["f"](a))))
        assert largest <= carried.bound, f"{largest} > bound {carried.bound}:\n{source}"
