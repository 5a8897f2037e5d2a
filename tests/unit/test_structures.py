"""The structure-specialised flattening of container arguments (Note [Structure-specialised
flattening] in `autodiff.structures`): it gives optree's leaves for a call of the same
structure and None for any other, and a cache hit with containers goes through it."""

from __future__ import annotations

import collections
from collections import OrderedDict
from typing import Any

import numpy as np
import optree
from hypothesis import given, settings
from hypothesis import strategies as st

import autodiff as ad
from autodiff.structures import builder, structure_of

Pair = collections.namedtuple("Pair", "left right")
OtherPair = collections.namedtuple("OtherPair", "left right")

_LEAVES = st.sampled_from([1.0, 2, np.float64(3.0), "leaf"]) | st.builds(np.ones, st.just(2))


def _trees(leaves: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.recursive(
        leaves | st.none(),
        lambda inner: st.one_of(
            st.lists(inner, max_size=3),
            st.lists(inner, max_size=3).map(tuple),
            st.dictionaries(st.sampled_from("abc"), inner, max_size=3),
            st.builds(Pair, inner, inner),
            st.builds(OtherPair, inner, inner),
            st.dictionaries(st.sampled_from("abc"), inner, max_size=3).map(OrderedDict),
        ),
        max_leaves=8,
    )


def _flatten(args: tuple[Any, ...]) -> tuple[list[Any], optree.PyTreeSpec]:
    return optree.tree_flatten(args, none_is_leaf=False)


@settings(max_examples=300, deadline=None)
@given(st.lists(_trees(_LEAVES), min_size=1, max_size=3), st.lists(_trees(_LEAVES), max_size=3))
def test_leaves_are_optrees_for_the_same_structure_and_none_for_another(
    first: list[Any], second: list[Any]
) -> None:
    leaves, spec = _flatten(tuple(first))
    structure = structure_of(spec)
    assert _same(structure.leaves(tuple(first)), leaves)
    other_leaves, other_spec = _flatten(tuple(second))
    found = structure.leaves(tuple(second))
    # Leaves are not checked: a None or a container where a leaf was comes back as a "leaf",
    # whose signature key (NoneType, list, ...) nothing is compiled under.
    if found is not None and all(_is_leaf(leaf) for leaf in found):
        assert other_spec == spec
        assert _same(found, other_leaves)


def _is_leaf(value: Any) -> bool:
    return optree.tree_structure(value, none_is_leaf=False).is_leaf()


def _same(found: list[Any] | None, expected: list[Any]) -> bool:
    return (
        found is not None
        and len(found) == len(expected)
        and all(a is b for a, b in zip(found, expected, strict=True))
    )


def test_equal_structures_are_one_object() -> None:
    a = structure_of(optree.tree_structure(([1.0, 2.0], {"x": 1.0})))
    b = structure_of(optree.tree_structure(([3.0, 4.0], {"x": 5.0})))
    assert a is b


def test_a_dict_in_another_key_order_is_the_same_structure_but_an_ordered_dict_is_not() -> None:
    spec = optree.tree_structure(({"a": 1.0, "b": 2.0},), none_is_leaf=False)
    assert structure_of(spec).leaves(({"b": 20.0, "a": 10.0},)) == [10.0, 20.0]
    ordered = optree.tree_structure((OrderedDict(a=1.0, b=2.0),), none_is_leaf=False)
    assert structure_of(ordered).leaves((OrderedDict(b=2.0, a=1.0),)) is None


def test_a_call_after_a_call_of_another_structure_is_right() -> None:
    @ad.script
    def total(params, x):
        return sum(np.sum(w * x) for w in params)

    x = np.ones(2)
    one = [np.ones(2), 2 * np.ones(2)]
    assert total(one, x) == 6.0
    assert total((np.ones(2),), x) == 2.0  # another structure: the general path
    assert total(one, x) == 6.0
    assert total([np.ones(2), np.ones(2), np.ones(2)], x) == 6.0
    assert total(one, x) == 6.0


def test_gradients_after_calls_of_other_structures_are_right() -> None:
    def loss(params, x):
        return sum(np.sum(np.tanh(w * x)) for w in params.values())

    grad = ad.grad(loss)
    x = np.linspace(0.1, 0.5, 3)
    first = {"a": np.ones(3), "b": np.full(3, 2.0)}
    second = {"a": np.ones(3)}
    for params in (first, second, first, {"b": np.full(3, 2.0), "a": np.ones(3)}):
        got = grad(params, x)
        assert got.keys() == params.keys()
        for key, w in params.items():
            np.testing.assert_allclose(got[key], x / np.cosh(w * x) ** 2)


@settings(max_examples=300, deadline=None)
@given(st.lists(_trees(_LEAVES), max_size=3))
def test_builder_gives_what_optree_unflatten_gives(trees: list[Any]) -> None:
    leaves, spec = _flatten(tuple(trees))
    markers = [object() for _ in leaves]
    built = builder(spec)(markers)
    expected = optree.tree_unflatten(spec, markers)
    assert built == expected
    assert _kinds(built) == _kinds(expected)  # types and dict key orders too


def _kinds(tree: Any) -> Any:
    if isinstance(tree, dict):
        return (type(tree), [(k, _kinds(v)) for k, v in tree.items()])
    if isinstance(tree, list | tuple):
        return (type(tree), [_kinds(v) for v in tree])
    return type(tree)
