"""Python containers whose structure is known while compiling: the lists, tuples, dicts and
namedtuples of arrays a function takes (``params = [(W1, b1), (W2, b2)]``), builds (``{"W":
W}``) and returns.

Note [Containers known while compiling]
A call fixes the structure of a container argument: its kind, its length, a dict's keys, a
namedtuple's class, and what each item is. That structure is a `Tree`, an extra kind of type
the emitter knows (the IR never sees one): the function's graph takes one input per leaf (an
array or a number, in the order ``optree`` flattens the argument: a dict's keys sorted), and the
emitter binds the parameter to a prim::TupleConstruct of those inputs, remembering its `Tree`.
Reading ``params[0]``, ``params["W1"]``, ``p.W`` of a namedtuple, ``len(params)``, ``for W, b in
params`` or ``d.items()`` is then done while compiling, with the keys and indices the Tree
gives: each item is the value of one input or one constant. A called function is compiled for
the Trees of its arguments (its parameter is one tuple input, remembered as that Tree), and a
function that returns a container returns an IR tuple with its Tree, from which
`autodiff.script` builds the dict, list or namedtuple the plain function returns
(`rebuild`). Indices must be known while compiling, as they are in ordinary code over
parameters: a loop ``for i in range(len(params))`` is unrolled for that reason.

Note [Strings known while compiling]
A string a call passes (``loss(w, "sum")``, a default ``mode="sum"``, ``helper(x, "mean")``)
is a value known while compiling, as JAX's static arguments are: its type is `KnownString`, which
holds the string, so the signature a function is compiled for, and the cache key of the
function called (the pytree structure, where a string is a node without leaves), tell
``"sum"`` from ``"mean"``, and each compiles its own graph. The parameter is bound to a
prim::Constant of the string, so ``if mode == "sum"`` is decided while compiling; it is no
input of the function called, and a callee's input for it (which its caller fills with the
same constant) is not read.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass
from typing import Any

from frontend.recursion import Known
from ir.types import NONE, STR, TupleType, Type


@dataclass(frozen=True, slots=True)
class Tree(Type):
    """The type of a container whose structure is known while compiling: its ``kind`` (list,
    tuple, dict or a namedtuple class), its ``keys`` (a dict's, in the order of ``children``;
    a namedtuple's fields; none for a list or a tuple) and the type of each item (a Tree,
    ``NoneType`` for None, else the IR type of an array or a number).

    >>> Tree(dict, ("b", "w"), (TensorType("float64", (3,)), FLOAT))
    """

    kind: type
    keys: tuple[Hashable, ...]
    children: tuple[Type, ...]
    # (A parameter given None is ``Tree(NoneType, (), ())``: an empty container, no input.)

    @property
    def ir_type(self) -> TupleType:
        """The IR type of the value that holds the container: a tuple of its items."""
        return TupleType(tuple(ir_type_of(child) for child in self.children))

    @property
    def is_dict(self) -> bool:
        return issubclass(self.kind, dict)

    @property
    def is_namedtuple(self) -> bool:
        return issubclass(self.kind, tuple) and self.kind is not tuple

    @property
    def kind_name(self) -> str:
        return self.kind.__name__

    def position(self, key: Hashable) -> int | None:
        """Where the item of a dict's key (a namedtuple's field) sits, or None."""
        try:
            return self.keys.index(key)
        except ValueError:
            return None

    def __str__(self) -> str:
        items = [str(child) for child in self.children]
        if self.is_dict:
            pairs = (f"{k!r}: {t}" for k, t in zip(self.keys, items, strict=True))
            return "{" + ", ".join(pairs) + "}"
        if self.is_namedtuple:
            fields = ", ".join(f"{k}={t}" for k, t in zip(self.keys, items, strict=True))
            return f"{self.kind_name}({fields})"
        if self.kind is list:
            return "[" + ", ".join(items) + "]"
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"


@dataclass(frozen=True, slots=True)
class KnownString(Type):
    """The type of a string known while compiling, which it holds: Note [Strings known while
    compiling]. Like a Tree, only the frontend sees one; the IR type of its value is ``str``.

    >>> KnownString("sum")
    """

    value: str

    @property
    def ir_type(self) -> Type:
        return STR

    def __str__(self) -> str:
        return repr(self.value)


def ir_type_of(ty: Type) -> Type:
    """The IR type of a value of type ``ty``: a Tree's tuple, a KnownString's ``str``, a
    `Known` value's type, any other type itself."""
    if isinstance(ty, Known):
        return ty.ty
    return ty.ir_type if isinstance(ty, Tree | KnownString) else ty


def leaf_types(ty: Type) -> Iterator[Type]:
    """The types of the leaves of a value of type ``ty``, in order: none for None or a
    `KnownString` string."""
    if isinstance(ty, Tree):
        for child in ty.children:
            yield from leaf_types(child)
    elif ty != NONE and not isinstance(ty, KnownString):
        yield ty


def map_leaves(ty: Type, change: Callable[[Type], Type]) -> Type:
    """``ty`` with ``change`` applied to the type of every leaf."""
    if isinstance(ty, Tree):
        return Tree(ty.kind, ty.keys, tuple(map_leaves(child, change) for child in ty.children))
    return ty if ty == NONE or isinstance(ty, KnownString) else change(ty)


def rebuild(value: Any, ty: Type) -> Any:
    """A value the compiled code returned (tuples for containers) as the plain function
    returns it: the dicts, lists and namedtuples its Tree says."""
    if not isinstance(ty, Tree):
        return value
    items = [rebuild(item, child) for item, child in zip(value, ty.children, strict=True)]
    if ty.is_dict:
        return ty.kind(zip(ty.keys, items, strict=True))
    if ty.is_namedtuple or ty.kind is slice:
        return ty.kind(*items)
    return ty.kind(items)


def needs_rebuild(ty: Type) -> bool:
    """Whether `rebuild` changes a value of type ``ty``: some container in it is not a
    tuple."""
    return isinstance(ty, Tree) and (
        ty.kind is not tuple or any(needs_rebuild(child) for child in ty.children)
    )


def as_tuples(value: Any, ty: Type) -> Any:
    """The inverse of `rebuild`: ``value``, nested like ``ty``, with every container a tuple of
    its items in the Tree's order (a cotangent given for a dict result). A value that does not
    nest like ``ty`` is returned as it is, for the caller's check to describe."""
    if not isinstance(ty, Tree):
        return value
    if ty.is_dict:
        if not isinstance(value, dict) or set(value) != set(ty.keys):
            return value
        items = [value[key] for key in ty.keys]
    elif isinstance(value, tuple | list) and len(value) == len(ty.children):
        items = list(value)
    else:
        return value
    return tuple(as_tuples(item, child) for item, child in zip(items, ty.children, strict=True))
