"""Generated pytree arguments and losses that read them (`tests.property.pytrees`): a fixed,
derandomised set in CI; ``python -m tests.property.pytrees --examples N`` for a longer run."""

from __future__ import annotations

from tests.property.pytrees import run


def test_generated_pytree_losses_give_exact_values_and_gradients() -> None:
    run(40, derandomize=True)
