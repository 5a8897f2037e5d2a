"""Generated pytree arguments and the losses that read them: a random structure of lists,
tuples, dicts, namedtuples and None around arrays and Python floats, and the source of a loss
that reads every leaf the way user code does (an index, a key, a field, a loop over the
container, ``.items()``, ``.values()``, unpacking, a comprehension into ``sum``), checked
against the plain function and central differences (`check_tree`).

    python -m tests.property.pytrees --examples 500     # a longer run than CI's
"""

from __future__ import annotations

import argparse
import collections
import functools
import importlib.util
import itertools
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import optree
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import autodiff as ad
from autodiff.pytrees import is_pytree
from tests.tree_helpers import central_differences

Pair = collections.namedtuple("Pair", "left right")
# The plain functions the loss applies to a leaf, each smooth and bounded on bounded input.
LEAF_READS = ("np.sum(np.sin({v}))", "np.sum(np.tanh({v}) * 0.5)", "np.sum({v} ** 2) * 0.1")
SHAPES = ((), (2,), (3,), (2, 2))


class _Writer:
    """Builds a structure and, leaf by leaf, the expressions of a loss that read it."""

    def __init__(self, draw: Any) -> None:
        self.draw = draw
        self.lines: list[str] = []
        self.terms: list[str] = []
        self.names = itertools.count()

    def fresh(self, stem: str) -> str:
        return f"{stem}{next(self.names)}"

    def leaf(self, access: str) -> Any:
        shape = self.draw(st.sampled_from(SHAPES))
        as_float = shape == () and self.draw(st.booleans())
        read = self.draw(st.sampled_from(LEAF_READS))
        self.terms.append(read.format(v=access))
        return ("float", ()) if as_float else ("array", shape)

    def node(self, access: str, depth: int) -> Any:
        kind = self.draw(st.sampled_from(["leaf", "leaf", "list", "tuple", "dict", "pair", "none"]))
        if depth >= 3 or kind == "leaf":
            return self.leaf(access)
        if kind == "none":
            return None
        if kind == "pair":
            if self.draw(st.booleans()):
                left = self.node(f"{access}.left", depth + 1)
                return Pair(left, self.node(f"{access}[1]", depth + 1))
            left, right = self.fresh("l"), self.fresh("r")
            self.lines.append(f"{left}, {right} = {access}")
            return Pair(self.node(left, depth + 1), self.node(right, depth + 1))
        count = self.draw(st.integers(1, 3))
        if kind == "dict":
            keys = self.draw(
                st.lists(st.sampled_from("abcdefg"), min_size=count, max_size=count, unique=True)
            )
            read = self.draw(st.sampled_from(["{a}[{k!r}]", "{a}.get({k!r})"]))
            children = {key: self.node(read.format(a=access, k=key), depth + 1) for key in keys}
            if all(_is_leaf(child) for child in children.values()) and self.draw(st.booleans()):
                loop = self.draw(
                    st.sampled_from(
                        [
                            "sum(np.sum(np.cos(v)) for k, v in {a}.items())",
                            "sum(np.sum(np.cos(v)) for v in {a}.values())",
                            "sum(np.sum(np.cos({a}[k])) for k in {a})",
                            "sum([np.sum(np.cos({a}[k])) for k in {a}.keys() if k != 'z'])",
                        ]
                    )
                )
                self.terms.append(loop.format(a=access))
            return children
        items = [self.node(f"{access}[{i}]", depth + 1) for i in range(count)]
        if all(_is_leaf(item) for item in items) and self.draw(st.booleans()):
            loop = self.draw(
                st.sampled_from(
                    [
                        "sum(np.sum(np.cos(x)) for x in {a})",
                        "sum([np.sum(np.cos(x)) * (i + 1) for i, x in enumerate({a})])",
                        "sum(np.sum(np.cos({a}[i])) for i in range(len({a})))",
                    ]
                )
            )
            self.terms.append(loop.format(a=access))
        return items if kind == "list" else tuple(items)


def _is_leaf(node: Any) -> bool:
    """Whether ``node`` of a structure being built is a leaf's spec, ("float" or "array",
    shape), rather than a container (a Pair is a namedtuple of two: not a leaf)."""
    return type(node) is tuple and len(node) == 2 and node[0] in ("float", "array")


def values_of(structure: Any, rng: np.random.Generator) -> Any:
    """The argument: each leaf spec made a value."""

    def make(spec: Any) -> Any:
        kind, shape = spec
        if kind == "float":
            return float(rng.uniform(-1.5, 1.5))
        return np.asarray(rng.uniform(-1.5, 1.5, size=shape))  # 0-d: an array still

    return optree.tree_map(make, structure, is_leaf=_is_leaf, none_is_leaf=False)


@st.composite
def tree_programs(draw: Any) -> tuple[str, Any]:
    """(the source of ``loss(params, scale)``, the structure of ``params``)."""
    writer = _Writer(draw)
    structure = writer.node("params", 0)
    if not writer.terms:  # None at the top: read the other argument only
        writer.terms.append("0.0")
    body = "".join(f"    {line}\n" for line in writer.lines)
    total = " + ".join(writer.terms)
    loop = ""
    if draw(st.booleans()):  # the same terms again through a comprehension over a range
        loop = f"    total = total + sum(0.5 * scale for i in range({len(writer.terms)}))\n"
    source = (
        "import numpy as np\n\n\ndef loss(params, scale):\n"
        + body
        + f"    total = ({total}) * scale\n"
        + loop
        + "    return total\n"
    )
    return source, structure


def load(source: str) -> Any:
    directory = Path(tempfile.mkdtemp(prefix="autodiff-tree-"))
    path = directory / "generated_tree.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(f"generated_tree_{abs(hash(source))}", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.loss


def check_tree(source: str, structure: Any, seed: int = 0) -> None:
    """The compiled value equals the plain one; ``ad.grad`` gives a gradient of the argument's
    structure that agrees with central differences; ``ad.vjp`` agrees with it."""
    loss = load(source)
    params = values_of(structure, np.random.default_rng(seed))
    if not is_pytree(params):  # a list of numbers only is one array (Note [Pytree arguments])
        params = np.asarray(params)
        if re.search(r"in (enumerate\()?params|len\(params", source):
            # a comprehension over an array's rows: refused, located
            with pytest.raises(ad.ScriptError) as info:
                ad.script(load(source))(params, 1.25)
            assert info.value.source_range is not None
            return
    scale = 1.25
    expected = loss(params, scale)
    np.testing.assert_allclose(ad.script(loss)(params, scale), expected, rtol=1e-12, atol=1e-12)
    value, grads = ad.value_and_grad(loss)(params, scale)
    np.testing.assert_allclose(value, expected, rtol=1e-12, atol=1e-12)
    numeric = central_differences(loss, params, scale)
    assert optree.tree_structure(grads, none_is_leaf=False) == optree.tree_structure(
        numeric, none_is_leaf=False
    ), f"{grads!r} is not shaped like {params!r}"
    for got, want in zip(optree.tree_leaves(grads), optree.tree_leaves(numeric), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)
    _, vjp_fn = ad.vjp(loss, params, scale)
    dparams, _ = vjp_fn(1.0)
    for got, want in zip(optree.tree_leaves(dparams), optree.tree_leaves(grads), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    # Through a partial that fixes the number, as users close over data; a fresh function,
    # so that nothing compiled for ``loss`` is reused (this once failed for dicts).
    fixed = functools.partial(load(source), scale=scale)
    partial_grads = ad.grad(fixed)(params)
    for got, want in zip(optree.tree_leaves(partial_grads), optree.tree_leaves(grads), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def run(examples: int, derandomize: bool) -> None:
    @settings(
        max_examples=examples,
        derandomize=derandomize,
        database=None,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(tree_programs(), st.integers(0, 2**16))
    def test(program: tuple[str, Any], seed: int) -> None:
        check_tree(*program, seed)

    test()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=200)
    options = parser.parse_args()
    run(options.examples, derandomize=False)
    print(f"{options.examples} pytree programs: no failure", file=sys.stderr)
