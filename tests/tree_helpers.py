"""Helpers for tests of pytree arguments: central differences leaf by leaf, and closeness of two
trees of the same structure."""

from __future__ import annotations

from typing import Any

import numpy as np
import optree


def central_differences(fn: Any, tree: Any, *rest: Any, eps: float = 1e-6) -> Any:
    """d fn(tree, *rest) / d tree, leaf by leaf, element by element, in the tree's structure
    (a Python float leaf gets a float)."""
    leaves, spec = optree.tree_flatten(tree, none_is_leaf=False)
    grads = []
    for index, leaf in enumerate(leaves):
        array = np.array(leaf, dtype=float)
        grad = np.zeros_like(array)
        for position in np.ndindex(array.shape):
            ends = []
            for sign in (1, -1):
                moved = array.copy()
                moved[position] += sign * eps
                changed = list(leaves)
                changed[index] = moved if isinstance(leaf, np.ndarray) else float(moved)
                ends.append(fn(optree.tree_unflatten(spec, changed), *rest))
            grad[position] = (ends[0] - ends[1]) / (2 * eps)
        grads.append(grad if isinstance(leaf, np.ndarray) else float(grad))
    return optree.tree_unflatten(spec, grads)


def assert_trees_close(actual: Any, expected: Any, rtol: float = 1e-6, atol: float = 1e-8) -> None:
    """``actual`` has ``expected``'s structure and its leaves are close to ``expected``'s."""
    structure = optree.tree_structure(expected, none_is_leaf=False)
    assert optree.tree_structure(actual, none_is_leaf=False) == structure, (actual, expected)
    for a, e in zip(optree.tree_leaves(actual), optree.tree_leaves(expected), strict=True):
        np.testing.assert_allclose(a, e, rtol=rtol, atol=atol)
