"""The structure of a call's container arguments, as a cache key and as the code that takes a
call of that structure apart.

# Note [Structure-specialised flattening]
# A cache hit with container arguments must cost a few microseconds (issue 17), but flattening
# them with ``optree`` and hashing the ``PyTreeSpec`` in the signature key cost several each,
# every call. So each structure seen is interned once as a `Structure`: the key holds it (a
# hash by identity), and it carries a small Python function, generated from the spec, that
# checks a call has that very structure (each container's exact type and length, each dict's
# keys, None where None was) and returns its leaves in ``optree``'s order, or None when the
# call has another structure. A call first tries the structure its function was last called
# with; on None it falls back to the general path, which flattens with ``optree``. The
# leaves are not checked here: the signature key of a leaf that is not an array or a number
# (a list where an array was) is its type, under which nothing is compiled. Gradients go back
# into a container the same way, through code generated once per structure (`builder`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import optree

PyTreeSpec = optree.PyTreeSpec
_KINDS = optree.PyTreeKind
_SEQUENCES = {_KINDS.TUPLE: "tuple", _KINDS.LIST: "list"}


class Structure:
    """A container structure, interned: equal specs give the same object (`structure_of`).

    >>> structure_of(optree.tree_structure(([1.0], {"a": 2.0}))).leaves(([3.0], {"a": 4.0}))
    [3.0, 4.0]
    """

    __slots__ = ("leaves", "spec")

    def __init__(self, spec: PyTreeSpec) -> None:
        self.spec = spec
        self.leaves: Callable[[Sequence[Any]], list[Any] | None] = _leaves_function(spec)

    def __repr__(self) -> str:
        return f"Structure({self.spec})"


_INTERNED: dict[PyTreeSpec, Structure] = {}


def structure_of(spec: PyTreeSpec) -> Structure:
    """The one `Structure` of specs equal to ``spec``."""
    found = _INTERNED.get(spec)
    if found is None:
        found = _INTERNED[spec] = Structure(spec)
    return found


class _Unsupported(Exception):
    pass


def _no_leaves(args: Sequence[Any]) -> None:
    return None


def _leaves_function(spec: PyTreeSpec) -> Callable[[Sequence[Any]], list[Any] | None]:
    """Generate ``leaves(args)`` for the structure ``spec`` of the tuple of all arguments (see
    Note [Structure-specialised flattening]): straight-line checks and reads, no recursion."""
    lines: list[str] = []
    leaves: list[str] = []
    constants: dict[str, Any] = {}
    names = iter(range(1 << 30))

    def visit(node: PyTreeSpec, expr: str) -> None:
        kind = node.kind
        if kind == _KINDS.LEAF:
            leaves.append(expr)
            return
        if kind == _KINDS.NONE:
            lines.append(f"if {expr} is not None: return None")
            return
        name = f"n{next(names)}"
        lines.append(f"{name} = {expr}")
        if kind in _SEQUENCES or kind == _KINDS.NAMEDTUPLE:
            kind_name = _SEQUENCES.get(kind)
            if kind_name is None:  # a namedtuple: its class fixes its length
                kind_name = f"k{next(names)}"
                constants[kind_name] = node.type
                lines.append(f"if type({name}) is not {kind_name}: return None")
            else:
                lines.append(
                    f"if type({name}) is not {kind_name} or len({name}) != {node.num_children}: "
                    "return None"
                )
            for index, child in enumerate(node.children()):
                visit(child, f"{name}[{index}]")
            return
        if kind in (_KINDS.DICT, _KINDS.ORDEREDDICT):
            keys = f"k{next(names)}"
            dict_type = f"k{next(names)}"
            constants[dict_type] = node.type
            if kind == _KINDS.DICT:  # any order: optree sorts the keys
                constants[keys] = frozenset(node.entries())
                same_keys = f"{name}.keys() != {keys}"
            else:  # an OrderedDict's order is part of its structure
                constants[keys] = list(node.entries())
                same_keys = f"list({name}) != {keys}"
            lines.append(f"if type({name}) is not {dict_type} or {same_keys}: return None")
            for key, child in zip(node.entries(), node.children(), strict=True):
                constant = f"k{next(names)}"
                constants[constant] = key
                visit(child, f"{name}[{constant}]")
            return
        raise _Unsupported  # a kind a call refuses (a deque, a custom node): no fast path

    lines.append(f"if len(args) != {spec.num_children}: return None")
    try:
        for index, child in enumerate(spec.children()):
            visit(child, f"args[{index}]")
    except _Unsupported:
        return _no_leaves
    body = "\n    ".join([*lines, f"return [{', '.join(leaves)}]"])
    source = f"def leaves(args):\n    {body}\n"
    namespace = dict(constants)
    exec(compile(source, f"<leaves of {spec}>", "exec"), namespace)
    leaves_of: Callable[[Sequence[Any]], list[Any] | None] = namespace["leaves"]
    return leaves_of


def builder(spec: PyTreeSpec) -> Callable[[Sequence[Any]], Any]:
    """``optree.tree_unflatten(spec, leaves)`` as generated straight-line code: a dict's keys
    in the order optree gives them back (the order they were inserted in, kept by the spec).

    >>> builder(optree.tree_structure([(1.0, 2.0)]))([3.0, 4.0])
    [(3.0, 4.0)]
    """
    constants: dict[str, Any] = {}
    leaf_count = iter(range(spec.num_leaves))
    names = iter(range(1 << 30))

    def constant(value: Any) -> str:
        name = f"k{next(names)}"
        constants[name] = value
        return name

    def build(node: PyTreeSpec) -> str:
        kind = node.kind
        if kind == _KINDS.LEAF:
            return f"leaves[{next(leaf_count)}]"
        if kind == _KINDS.NONE:
            return "None"
        children = [build(child) for child in node.children()]
        if kind == _KINDS.TUPLE:
            return "(" + "".join(f"{c}, " for c in children) + ")"
        if kind == _KINDS.LIST:
            return "[" + ", ".join(children) + "]"
        if kind == _KINDS.NAMEDTUPLE:
            return f"{constant(node.type)}({', '.join(children)})"
        if kind in (_KINDS.DICT, _KINDS.ORDEREDDICT):
            by_key = dict(zip(node.entries(), children, strict=True))
            placeholder = optree.tree_unflatten(node, [None] * node.num_leaves)
            items = ", ".join(f"({constant(k)}, {by_key[k]})" for k in placeholder)
            return f"{constant(node.type)}([{items}])"
        raise _Unsupported

    try:
        expression = build(spec)
    except _Unsupported:
        return lambda leaves: optree.tree_unflatten(spec, list(leaves))
    source = f"def build(leaves):\n    return {expression}\n"
    namespace = dict(constants)
    exec(compile(source, f"<build {spec}>", "exec"), namespace)
    built: Callable[[Sequence[Any]], Any] = namespace["build"]
    return built
