"""Objects a scripted function reads from outside: global and closure variables, the containers
they hold, the attributes of ``self`` and of other objects, bound methods and
``functools.partial``.

Note [Reading objects from outside]
Every value a function reads from outside has a `FreeVariable`: a root (a module global, a
closure cell, or an object known while compiling, such as the ``self`` of a bound method or a
``functools.partial``) and a path of attributes and items from it (``self.W``,
``PARAMS[0][1]``, ``partial.keywords['x']``). What the path reaches decides how it is read:
- an array or a random generator is a hidden input of the graph, read again at each call
  through the path (Note [Free variables] in `frontend.compile`);
- a list, tuple, dict or namedtuple of arrays, numbers and None is a container known while
  compiling (Note [Containers known while compiling] in `frontend.trees`) whose array leaves are
  hidden inputs and whose numbers are constants; its structure and numbers are guarded
  (`fingerprint`): a call that finds them changed compiles again, so appending to a global
  list or changing a number in it is never stale;
- anything else (a number, a function, an object) is read once and guarded by identity (Note
  [Values read once] in `frontend.compile`); an object keeps its variable (`PyObject.origin`), so
  its own attributes are read the same way.

A method bound to an object and a partial are called as their function with the bound values
as parameters known while compiling (`KnownObject`): they are not graph inputs, each is read as the
path from the method or partial says, and the function is compiled once per object bound.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from types import (
    BuiltinFunctionType,
    BuiltinMethodType,
    CellType,
    FunctionType,
    MethodType,
    ModuleType,
)
from typing import Any

import numpy as np

from frontend.environment import PyObject
from frontend.errors import ScriptError
from ir.source import SourceRange
from ir.types import Type

# One step of a path from a variable: ("attr", name) or ("item", key).
Step = tuple[str, Hashable]
NO_OWNER = object()
_GENERATORS = (np.random.Generator, np.random.RandomState)
_CONTAINERS = (list, tuple, dict)


@dataclass(frozen=True, slots=True, eq=False)
class FreeVariable:
    """Where a value read from outside lives (Note [Reading objects from outside]): a module
    global, a closure cell or an object known while compiling, then a path of attributes and
    items.

    >>> X.read() is module.X
    True
    """

    name: str  # as spelled in messages: "X", "PARAMS[0]", "self.W"
    cell: CellType | None  # the closure's cell, or None for a module global
    namespace: dict[str, Any] | None  # the module's globals, for a global
    path: tuple[Step, ...] = ()
    owner: object = NO_OWNER  # the object the path starts from, when not a variable

    @staticmethod
    def of_object(name: str, owner: object) -> FreeVariable:
        """The object ``owner`` itself, known while compiling, spelled ``name``."""
        return FreeVariable(name, None, None, (), owner)

    def child(self, step: Step) -> FreeVariable:
        """The attribute or item ``step`` of this variable's value."""
        kind, key = step
        spelled = f"{self.name}.{key}" if kind == "attr" else f"{self.name}[{key!r}]"
        return FreeVariable(spelled, self.cell, self.namespace, (*self.path, step), self.owner)

    @property
    def key(self) -> tuple[object, ...]:
        """What tells this variable from others: `same_as` compares it."""
        return (self.name, id(self.cell), id(self.namespace), id(self.owner), self.path)

    def same_as(self, other: FreeVariable) -> bool:
        """Whether both read the same variable (the same cell, the same module's name or the
        same object, and the same path)."""
        return (
            self.name == other.name
            and self.cell is other.cell
            and self.namespace is other.namespace
            and self.owner is other.owner
            and self.path == other.path
        )

    @property
    def hint(self) -> str:
        """A name for the graph input that reads it: ``self_W``, ``PARAMS_0``."""
        text = "".join(c if c.isalnum() or c == "_" else "_" for c in self.name)
        return "_".join(part for part in text.split("_") if part) or "free"

    def read(self) -> Any:
        """The variable's value now; a global deleted since raises ScriptError."""
        if self.owner is not NO_OWNER:
            value = self.owner
        elif self.cell is not None:
            value = self.cell.cell_contents
        else:
            assert self.namespace is not None
            root = self.name.split(".")[0].split("[")[0]
            try:
                value = self.namespace[root]
            except KeyError:
                raise ScriptError(
                    f"the global '{root}' that this function reads is no longer defined",
                    doc="globals-and-closures",
                ) from None
        for kind, key in self.path:
            try:
                value = getattr(value, str(key)) if kind == "attr" else value[key]  # type: ignore[index]
            except (AttributeError, LookupError, TypeError):
                raise ScriptError(
                    f"'{self.name}', which this function reads, is no longer there",
                    doc="globals-and-closures",
                ) from None
        return value


@dataclass(frozen=True, eq=False)
class KnownObject(Type):
    """The type of a parameter whose argument is known while compiling: the ``self`` of a bound
    method, a value fixed by a ``functools.partial``. It is no graph input: the emitter reads it
    as its `FreeVariable` says (Note [Reading objects from outside])."""

    variable: FreeVariable
    value: object

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, KnownObject)
            and self.variable.same_as(other.variable)
            and self.value is other.value
        )

    def __hash__(self) -> int:
        return hash((self.variable.key, id(self.value)))

    def __str__(self) -> str:
        return f"KnownObject({self.variable.name})"


def is_array(obj: object) -> bool:
    return type(obj) is np.ndarray or isinstance(obj, _GENERATORS)


def is_data_tree(obj: object) -> bool:
    """Whether ``obj`` is a list, tuple, dict or namedtuple whose leaves are all arrays,
    Python numbers and None, with at least one array (a tuple of numbers is a constant)."""
    found = [False]

    def walk(item: object, depth: int) -> bool:
        if depth > 50:
            return False
        if is_array(item):
            found[0] = True
            return type(item) is np.ndarray
        if item is None or type(item) in (bool, int, float):
            return True
        if isinstance(item, dict) and type(item) is dict:
            return all(isinstance(k, str | int) for k in item) and all(
                walk(v, depth + 1) for v in item.values()
            )
        if type(item) in (list, tuple) or _is_namedtuple(item):
            return all(walk(v, depth + 1) for v in item)  # type: ignore[attr-defined]
        return False

    return walk(obj, 0) and found[0]


def _is_namedtuple(obj: object) -> bool:
    return isinstance(obj, tuple) and hasattr(type(obj), "_fields")


def fingerprint(obj: object) -> object:
    """What a container read while compiling fixes: its kinds, lengths, keys and numbers (the
    arrays' dtypes and shapes are in the signature key, as hidden inputs')."""
    if type(obj) is np.ndarray:
        return np.ndarray
    if isinstance(obj, dict):
        return (dict, tuple((k, fingerprint(v)) for k, v in obj.items()))
    if isinstance(obj, list | tuple):
        return (type(obj), tuple(fingerprint(v) for v in obj))
    return (type(obj), obj)


def items_of(obj: Any) -> list[tuple[Hashable, Any]]:
    """The (key, item) pairs of a container, in iteration order: a namedtuple's by field."""
    if isinstance(obj, dict):
        return list(obj.items())
    if _is_namedtuple(obj):
        return list(zip(type(obj)._fields, obj, strict=True))
    return list(enumerate(obj))


def has_origin(obj: object) -> bool:
    """Whether the attributes of ``obj`` are read through its variable (Note [Reading objects
    from outside]): objects and classes, not modules or functions."""
    return not isinstance(
        obj,
        ModuleType
        | FunctionType
        | BuiltinFunctionType
        | BuiltinMethodType
        | MethodType
        | np.ufunc
        | functools.partial,
    )


def call_signature(fn: Callable[..., Any]) -> inspect.Signature:
    """The parameters a call of ``fn`` binds: a partial's keyword-fixed parameters are not
    among them (they are read from the partial, `partial_types`)."""
    signature = inspect.signature(fn)
    if isinstance(fn, functools.partial):
        fixed = set(fn.keywords)
        kept = [p for n, p in signature.parameters.items() if n not in fixed]
        signature = signature.replace(parameters=kept)
    return signature


def unwrap_callable(
    fn: object, r: SourceRange | None = None
) -> tuple[FunctionType, list[KnownObject], dict[str, KnownObject]]:
    """The Python function behind a bound method or a partial, with the values bound to it as
    `KnownObject` arguments: those passed first by position, and those passed by keyword."""
    if isinstance(fn, MethodType):
        func = fn.__func__
        if not isinstance(func, FunctionType | functools.partial):
            raise ScriptError(_not_python(fn, "method"), r, doc="partial-and-methods")
        inner, prefix, keywords = unwrap_callable(func, r)
        self_name = next(iter(inspect.signature(inner).parameters), "self")
        bound_self = KnownObject(FreeVariable.of_object(self_name, fn.__self__), fn.__self__)
        return inner, [*prefix, bound_self], keywords
    if isinstance(fn, functools.partial):
        func = fn.func
        if not isinstance(func, FunctionType | MethodType | functools.partial):
            raise ScriptError(_not_python(func, "partial"), r, doc="partial-and-methods")
        inner, prefix, keywords = unwrap_callable(func, r)
        root = FreeVariable.of_object(f"partial({getattr(func, '__name__', 'f')})", fn)
        args = root.child(("attr", "args"))
        fixed = root.child(("attr", "keywords"))
        bound = (KnownObject(args.child(("item", i)), v) for i, v in enumerate(fn.args))
        prefix = [*prefix, *bound]
        keywords = {**keywords}
        for name, value in fn.keywords.items():
            keywords[name] = KnownObject(fixed.child(("item", name)), value)
        return inner, prefix, keywords
    if isinstance(fn, FunctionType):
        return fn, [], {}
    raise ScriptError(_not_python(fn, "callable"), r, doc="partial-and-methods")


def fixed_slots(
    fn: FunctionType,
    prefix: Sequence[KnownObject],
    keywords: dict[str, KnownObject],
    r: SourceRange | None,
) -> list[KnownObject | None]:
    """Per parameter of ``fn``, the `KnownObject` value bound to it, or None for one a call
    binds."""
    names = list(inspect.signature(fn).parameters)
    if len(prefix) > len(names):
        raise ScriptError(
            f"{fn.__qualname__}() is given more arguments than it takes",
            r,
            doc="partial-and-methods",
        )
    slots: list[KnownObject | None] = [*prefix, *([None] * (len(names) - len(prefix)))]
    for name, value in keywords.items():
        if name not in names or slots[names.index(name)] is not None:
            raise ScriptError(
                f"{fn.__qualname__}() cannot be given '{name}' here", r, doc="partial-and-methods"
            )
        slots[names.index(name)] = value
    return slots


def full_types(fixed: Sequence[KnownObject | None], given: Sequence[Type]) -> list[Type]:
    """The types of every parameter of the unwrapped function: the `KnownObject` ones, the others
    from ``given`` in order."""
    rest = iter(given)
    return [k if k is not None else next(rest) for k in fixed]


def _spelled(fn: object) -> str:
    if isinstance(fn, functools.partial):
        return f"functools.partial({getattr(fn.func, '__name__', repr(fn.func))}, ...)"
    return getattr(fn, "__qualname__", None) or repr(fn)


def _not_python(fn: object, what: str) -> str:
    """Why ``fn`` (behind a method, a partial or given as is) cannot be scripted."""
    kind = type(getattr(fn, "__self__", fn)).__name__
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
    if what == "partial":
        return (
            f"functools.partial of {name} (a {type(fn).__name__}) cannot be scripted: only a "
            "partial of a Python function, method or partial can; write a def that calls it "
            "with the fixed arguments instead"
        )
    if what == "method":
        return (
            f"cannot script {name}, a method of the C-implemented type '{kind}': call it "
            "outside, or write a Python function that computes what it computes"
        )
    return (
        f"cannot script {name} (a {type(fn).__name__}): script a Python function, a method "
        "of a Python class or a functools.partial of one"
    )


def tree_of_container(
    obj: object,
    variable: FreeVariable,
    leaf: Callable[[FreeVariable, object], Any],
    make: Callable[[Sequence[Any], type, tuple[Hashable, ...]], Any],
) -> Any:
    """Build a container read from outside: ``leaf(variable, obj)`` for each array or number,
    ``make(items, kind, keys)`` for each container, bottom up. Returns what ``make`` returns."""
    if not isinstance(obj, _CONTAINERS):
        return leaf(variable, obj)
    pairs = items_of(obj)
    step = "attr" if _is_namedtuple(obj) else "item"
    items = [tree_of_container(v, variable.child((step, k)), leaf, make) for k, v in pairs]
    keys: tuple[Hashable, ...] = ()
    if isinstance(obj, dict) or _is_namedtuple(obj):
        keys = tuple(k for k, _ in pairs)
    return make(items, type(obj), keys)


def origin_object(obj: object, spelled: str, variable: FreeVariable | None) -> PyObject:
    """A compile-time object that keeps its variable when its attributes are to be read
    through it."""
    return PyObject(obj, spelled, variable if has_origin(obj) else None)


@dataclass(frozen=True, slots=True, eq=False)
class LocalPartial:
    """``functools.partial(f, ...)`` made inside the function compiled: ``f`` (a compile-time
    function, a local function or another of these) and the values it fixes, emitted where the
    partial is made, as Python evaluates them. A call emits ``f`` with them first."""

    func: Any  # a PyObject or a LocalFunction
    args: tuple[Any, ...]  # Values
    keywords: tuple[tuple[str, Any], ...]  # (name, Value)


def is_bound_callable(obj: object) -> bool:
    """Whether a call of ``obj`` binds values before the caller's: a bound method, a partial
    (or ``functools.partial`` itself, called to make one), a `LocalPartial`."""
    return (
        isinstance(obj, MethodType | functools.partial | LocalPartial)
        or obj is functools.partial
    )


def refuse_foreign_method(obj: object, spelled: str, r: SourceRange) -> None:
    """Refuse a call of a method of an object implemented in C (``d.get`` of a global dict,
    ``lst.append`` of a global list), saying what to write."""
    owner = getattr(obj, "__self__", None)
    if owner is None or isinstance(owner, ModuleType):
        return
    kind = type(owner).__name__
    raise ScriptError(
        f"'{spelled}' is a method of a '{kind}' from outside the function, implemented in C, "
        "which scripted code cannot call: call it before, and pass what it gives as an "
        "argument (or read it as a global)",
        r,
        doc="partial-and-methods",
    )
