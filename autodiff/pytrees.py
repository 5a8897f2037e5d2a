"""Pytree arguments: lists, tuples, dicts, namedtuples and None of arrays and numbers, passed
to and returned from compiled functions and their gradients, and ``ad.flatten``.

# Note [Pytree arguments]
# A call flattens its container arguments with ``optree`` (the pytree library JAX's own is
# compatible with; None is an empty node, a dict's items are in sorted key order), and the
# compiled graph takes one input per leaf: every array-level part of the compiler (the
# signature key, the compilation units, differentiation, the runtime) sees flat arrays and
# numbers only. The structure, an ``optree.PyTreeSpec`` of the tuple of all parameters,
# heads the signature key, so each structure compiles its own graph; the frontend builds each
# container parameter from its leaves as a `frontend.trees.Tree` (Note [Containers known while
# compiling] there). Gradients with respect to a container parameter are its leaves'
# gradients, put back into its structure (``tree_unflatten``); a result with dicts, lists or
# namedtuples in it is rebuilt from the tuples the graph returns.
#
# A list or tuple that holds only numbers stays what it always was, one array
# (``f([1.0, 2.0])`` is ``f(np.array([1.0, 2.0]))``): a container is a pytree when it holds an
# array, a dict, a namedtuple or None somewhere. The ``*args`` tuple and ``**kwargs`` dict of a
# function that takes them are always pytrees (Note [Variadic parameters] in
# `frontend.signatures`).
#
# A string is a node without leaves that holds its text (registered in optree's namespace
# ``autodiff``, so nobody else's pytrees change), so the structure, and with it the cache key,
# tells ``"sum"`` from ``"mean"``: Note [Strings known while compiling] in `frontend.trees`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import optree

from autodiff.specialize import ArgumentError, argument_type, runtime_value
from autodiff.structures import builder
from autodiff.tracebacks import api_boundary
from frontend.trees import KnownString, Tree
from ir.backends import is_backend_array
from ir.types import NONE, TensorType, Type

PyTreeSpec = optree.PyTreeSpec

_KINDS = optree.PyTreeKind
_ACCEPTED = frozenset(
    {
        _KINDS.LEAF,
        _KINDS.NONE,
        _KINDS.TUPLE,
        _KINDS.LIST,
        _KINDS.DICT,
        _KINDS.NAMEDTUPLE,
        _KINDS.ORDEREDDICT,
    }
)
_NUMBERS = (bool, int, float, complex, np.generic)
_NAMESPACE = "autodiff"


def _string_node(text: Any) -> Any:
    return (), text  # no children; the text is the node's data, compared in the structure


def _string_of(text: Any, _children: Any) -> Any:
    return text


optree.register_pytree_node(str, _string_node, _string_of, namespace=_NAMESPACE)
NONE_ARGUMENT = Tree(type(None), (), ())
"""The type of a parameter given None: an empty container, no input (a Tree, which the
frontend gives one input per leaf, unlike the ``NoneType`` of a helper's parameter)."""
CONTAINER_TYPES = (list, tuple, dict, str)
"""What an argument that may be a pytree is an instance of (else it is None or a leaf)."""


def is_pytree(value: Any) -> bool:
    """Whether an argument is taken as a pytree (Note [Pytree arguments]): None, a dict, a
    namedtuple, a string, or a list or tuple that holds more than numbers."""
    if value is None or isinstance(value, dict | str):
        return True
    if not isinstance(value, list | tuple):
        return False
    if type(value) not in (list, tuple):  # a namedtuple
        return True
    return not _numbers_only(value)


def _numbers_only(value: list[Any] | tuple[Any, ...]) -> bool:
    pending: list[Any] = [value]
    while pending:
        item = pending.pop()
        if type(item) in (list, tuple):
            pending.extend(item)
        elif not isinstance(item, _NUMBERS):
            return False
    return True


def flatten(tree: Any) -> tuple[list[Any], PyTreeSpec]:
    """The leaves of ``tree`` and its structure, None an empty node (as JAX has it)."""
    return optree.tree_flatten(tree, none_is_leaf=False, namespace=_NAMESPACE)


def checked_leaves(qualname: str, name: str, value: Any) -> list[Any]:
    """The leaves of the pytree argument ``name``, each checked to be an array or a number,
    with the path to the first that is not in the error."""
    paths, leaves, spec = optree.tree_flatten_with_path(
        value, none_is_leaf=False, namespace=_NAMESPACE
    )
    _check_kinds(qualname, name, spec)
    return [
        runtime_value(qualname, name + _spelled(path), leaf)
        if isinstance(leaf, (np.ndarray, *_NUMBERS)) or is_backend_array(leaf)
        else _refuse_leaf(qualname, name + _spelled(path), leaf)
        for path, leaf in zip(paths, leaves, strict=True)
    ]


def _refuse_leaf(qualname: str, name: str, leaf: Any) -> Any:
    kind = type(leaf).__name__
    raise ArgumentError(
        f"argument '{name}' of {qualname}() is a {kind}; the items of lists, tuples and dicts "
        "passed to a compiled function must be arrays, numbers, None or such containers"
    )


def _check_kinds(qualname: str, name: str, spec: PyTreeSpec) -> None:
    pending = [spec]
    while pending:
        node = pending.pop()
        if node.kind not in _ACCEPTED and node.type is not str:
            raise ArgumentError(
                f"argument '{name}' of {qualname}() holds a {getattr(node.type, '__name__', '?')}: "
                "arguments "
                "may be arrays, numbers, and lists, tuples, dicts, namedtuples or None of them"
            )
        pending.extend(node.children())


def _spelled(path: Sequence[Any]) -> str:
    return "".join(f"[{key!r}]" for key in path)


def parameter_types(spec: PyTreeSpec, leaf_types: Sequence[Type]) -> tuple[Type, ...]:
    """The type of each parameter, from the structure of all parameters (a tuple) and the
    types of the leaves: a `Tree` for a container, ``NoneType`` for None. An array leaf's type
    keeps its rank only (its dtype and sizes come with specialisation; a 0-d one may be a
    NumPy scalar), a number's stays."""
    leaves = iter(_general(ty) for ty in leaf_types)
    return tuple(
        NONE_ARGUMENT if child.kind == _KINDS.NONE else _type_of(child, leaves)
        for child in spec.children()
    )


def _general(ty: Type) -> Type:
    if not isinstance(ty, TensorType):
        return ty
    rank = len(ty.shape or ())
    return TensorType(None, (None,) * rank) if rank else TensorType()


def _type_of(spec: PyTreeSpec, leaves: Iterator[Type]) -> Type:
    kind = spec.kind
    if kind == _KINDS.LEAF:
        return next(leaves)
    if kind == _KINDS.NONE:
        return NONE
    if spec.type is str:  # a string: Note [Strings known while compiling] in frontend.trees
        return KnownString(str(spec.unflatten([])))
    children = tuple(_type_of(child, leaves) for child in spec.children())
    node_type = spec.type
    assert node_type is not None  # a leaf and None have no children
    if kind in (_KINDS.DICT, _KINDS.ORDEREDDICT):
        keys: tuple[Any, ...] = tuple(spec.entries())
    elif kind == _KINDS.NAMEDTUPLE:
        keys = tuple(getattr(node_type, "_fields"))  # noqa: B009 (a namedtuple's fields)
    else:
        keys = ()
    return Tree(node_type, keys, children)


def leaf_names(spec: PyTreeSpec, names: Sequence[str]) -> list[str]:
    """A name per leaf of all parameters, for messages: ``params[0]['W']``."""
    result: list[str] = []
    for name, child in zip(names, spec.children(), strict=True):
        paths = optree.treespec_paths(child)
        result.extend(name + _spelled(path) for path in paths)
    return result


def leaf_ranges(spec: PyTreeSpec) -> list[range]:
    """Per parameter, the positions of its leaves among all leaves."""
    ranges = []
    start = 0
    for child in spec.children():
        ranges.append(range(start, start + child.num_leaves))
        start += child.num_leaves
    return ranges


def argument_types(qualname: str, names: Sequence[str], leaves: Sequence[Any]) -> list[Type]:
    return [argument_type(qualname, n, v) for n, v in zip(names, leaves, strict=True)]


def argument_parts(
    spec: PyTreeSpec, positions: Sequence[int | tuple[int, int]]
) -> list[tuple[PyTreeSpec, range]]:
    """Per parameter position (``(p, i)``: item ``i`` of the ``*args`` parameter at ``p``), its
    structure and the positions of its leaves among all leaves."""
    children = spec.children()
    ranges = leaf_ranges(spec)
    parts: list[tuple[PyTreeSpec, range]] = []
    for position in positions:
        if isinstance(position, int):
            parts.append((children[position], ranges[position]))
            continue
        parameter, item = position
        items = children[parameter].children()
        start = ranges[parameter].start + sum(c.num_leaves for c in items[:item])
        parts.append((items[item], range(start, start + items[item].num_leaves)))
    return parts


def gradient_shaper(
    spec: PyTreeSpec, positions: Sequence[int | tuple[int, int]], several: bool
) -> tuple[tuple[int, ...], Callable[[Sequence[Any]], Any]]:
    """For ``argnums`` at the parameter ``positions``: the leaves to differentiate with
    respect to, and a function putting their gradients back into the parameters' structures
    (a tuple of them when ``several``). A position ``(p, i)`` is the item ``i`` of the
    ``*args`` parameter at ``p``."""
    parts = argument_parts(spec, positions)
    wrt = tuple(i for _, leaves in parts for i in leaves)
    builders = [(builder(child), len(leaves)) for child, leaves in parts]
    if not several:
        ((build, _),) = builders
        return wrt, build

    def shape(grads: Sequence[Any]) -> Any:
        trees = []
        start = 0
        for build, count in builders:
            trees.append(build(grads[start : start + count]))
            start += count
        return tuple(trees)

    return wrt, shape


@api_boundary
def ravel(tree: Any) -> tuple[np.ndarray[Any, Any], Callable[[np.ndarray[Any, Any]], Any]]:
    """``ad.flatten``: every array and number of ``tree`` raveled into one vector, and the
    function that turns such a vector back into a tree of the same structure, dtypes and
    shapes (what ``scipy.optimize.minimize`` needs of a pytree of parameters; JAX's
    ``ravel_pytree``).

    >>> vector, unflatten = ad.flatten({"W": np.ones((2, 3)), "b": np.zeros(3)})
    >>> vector.shape
    (9,)
    >>> unflatten(vector)["W"].shape
    (2, 3)
    """
    leaves, spec = flatten(tree)
    arrays = [np.asarray(leaf) for leaf in leaves]
    dtype = np.result_type(*arrays) if arrays else np.dtype(np.float64)
    vector = (
        np.concatenate([a.ravel() for a in arrays]).astype(dtype, copy=False)
        if arrays
        else np.zeros(0, dtype)
    )
    shapes = [a.shape for a in arrays]
    kinds = [(type(leaf), a.dtype) for leaf, a in zip(leaves, arrays, strict=True)]

    @api_boundary
    def unflatten(flat: np.ndarray[Any, Any]) -> Any:
        flat = np.asarray(flat)
        if flat.shape != vector.shape:
            raise ArgumentError(
                f"unflatten takes a vector of shape {vector.shape}, got shape {flat.shape}"
            )
        parts = []
        start = 0
        for shape, (kind, dtype) in zip(shapes, kinds, strict=True):
            size = int(np.prod(shape, dtype=np.int64))
            part = flat[start : start + size].reshape(shape).astype(dtype)
            start += size
            if kind in (bool, int, float, complex):
                parts.append(kind(part[()]))
            else:
                parts.append(part[()] if issubclass(kind, np.generic) else part)
        return optree.tree_unflatten(spec, parts)

    return vector, unflatten


# ---- ad.flatten inside a compiled function -------------------------------------------------------
# Compiled, never run: a call of ``ad.flatten`` in a compiled function is a call of
# `_ravel_in_graph` (``__autodiff_source__``), whose recursion over the container's structure
# unrolls while compiling (Note [Recursion while compiling] in frontend.recursion). The leaves
# come in optree's order (a dict's keys sorted, an OrderedDict's as inserted). The second
# result is None: an ``unflatten`` is for optimisers outside, and calling it is refused.


def _leaves_in_graph(tree: Any) -> tuple[Any, ...]:
    if type(tree) is dict:
        return tuple(leaf for key in sorted(tree) for leaf in _leaves_in_graph(tree[key]))
    if isinstance(tree, dict):
        return tuple(leaf for key in tree for leaf in _leaves_in_graph(tree[key]))
    if isinstance(tree, (list, tuple)):
        return tuple(leaf for item in tree for leaf in _leaves_in_graph(item))
    if tree is None:
        return ()
    return (tree,)


def _ravel_in_graph(tree: Any) -> tuple[Any, None]:
    return np.concatenate([np.ravel(leaf) for leaf in _leaves_in_graph(tree)]), None


ravel.__autodiff_source__ = _ravel_in_graph  # type: ignore[attr-defined]
