"""What NumPy and Python spellings mean: the tables from callables, methods and attributes to IR
operators, built from the spellings each operator's record declares (Note [NumPy spellings] in
`ir.ops.spellings`), how a call's arguments fill the operator's schema, and Python objects as
constants.

Functions are looked up by the object itself (``np.tanh`` under any alias, or imported with
``from numpy import tanh``); array methods and attributes by name.

Note [SciPy spellings]
SciPy is optional and never imported here: a ``scipy.special.f`` spelling names its object only
once user code has imported ``scipy.special`` itself. `function_spelling` looks a callee up
among NumPy's functions first; when that fails and a SciPy module some spelling names has been
imported since, that module's objects join the table (``from scipy.special import
logsumexp``, ``import scipy.special as sp``, ``scipy.special.gammaln`` all find one object).
SciPy's ufuncs carry no ``__module__``, so `is_scipy` recognises them as these modules'
attributes. A spelling may name a method of a module-level object (``scipy.stats.norm.logpdf``):
each read of ``norm.logpdf`` makes a new bound method, equal to the others, so the table finds
it by equality.
"""

from __future__ import annotations

import builtins
import importlib
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Literal, TypeVar

import numpy as np

from ir.errors import IRError
from ir.ops import OPS, OpDef
from ir.ops.spellings import METHOD_PREFIX, Spelling, parse_parameters
from ir.types import (
    BOOL,
    COMPLEX_SCALAR,
    DTYPE_TO_NAME,
    FLOAT,
    INT,
    NONE,
    STR,
    TupleType,
    Type,
)

Key = TypeVar("Key")


_DEFERRED = "scipy"  # spellings of this package wait for user code to import it


def _function_object(spelling: Spelling, op: OpDef) -> object | None:
    """The Python object a function spelling names: NumPy's function (None when the installed
    NumPy lacks it), or, for the project's own functions (``autodiff.tap``), the kernel."""
    module, _, name = spelling.name.rpartition(".")
    if module.split(".")[0] != "numpy":
        return op.kernel
    return getattr(importlib.import_module(module), name, None)


def _deferred_module(spelling: Spelling) -> str | None:
    """The SciPy module a function spelling names, its first two parts (``scipy.special``,
    ``scipy.stats`` of ``scipy.stats.norm.logpdf``); None for any other spelling (Note [SciPy
    spellings])."""
    parts = spelling.name.split(".")
    return ".".join(parts[:2]) if parts[0] == _DEFERRED else None


def _claim(table: dict[Key, Spelling], key: Key, spelling: Spelling) -> None:
    """Enter ``spelling`` under ``key``. Two names of one object in one record are aliases and
    the first stays (``numpy.absolute``, ``numpy.abs``); two records may not share a key."""
    claimed = table.setdefault(key, spelling)
    if claimed.op != spelling.op:
        raise IRError(f"{spelling.name} spells both {claimed.op} and {spelling.op}")


def spelling_tables(
    ops: Iterable[OpDef],
) -> tuple[dict[object, Spelling], dict[str, Spelling], dict[str, str]]:
    """The functions (by object), methods and attributes (by name) the records of ``ops`` spell."""
    functions: dict[object, Spelling] = {}
    methods: dict[str, Spelling] = {}
    attributes: dict[str, Spelling] = {}
    for op in ops:
        for spelling in op.spellings:
            if spelling.kind == "function" and _deferred_module(spelling) is not None:
                continue  # Note [SciPy spellings]
            if spelling.kind == "function":
                obj = _function_object(spelling, op)
                if obj is not None:
                    _claim(functions, obj, spelling)
            else:
                table = methods if spelling.kind == "method" else attributes
                _claim(table, spelling.name.removeprefix(METHOD_PREFIX), spelling)
    return functions, methods, {name: spelling.op for name, spelling in attributes.items()}


def _kernel_spellings(table: dict[object, Spelling]) -> None:
    """Every operator's kernel spells that operator too, so code (the derivative formulas) can
    call an operator NumPy has no name for — ``sum_to_size(grad, size)`` — by importing its
    kernel. A kernel shared by several operators spells none of them, and Python's builtins
    (``max`` is prim::max's kernel) keep the meaning `BUILTINS` gives them."""
    owners: dict[int, list[str]] = {}
    kernels: dict[int, object] = {}
    for name, op in OPS.items():
        if op.kernel is not None and not op.schema.variadic:
            owners.setdefault(id(op.kernel), []).append(name)
            kernels[id(op.kernel)] = op.kernel
    for key, names in owners.items():
        kernel = kernels[key]
        python_builtin = getattr(kernel, "__module__", None) == "builtins"
        if len(names) == 1 and kernel not in table and not python_builtin:
            schema = OPS[names[0]].schema
            params = " ".join(argument.name for argument in schema.arguments)
            name = getattr(kernel, "__name__", names[0])
            table[kernel] = Spelling(f"numpy.{name}", schema, parse_parameters(params))


NUMPY_FUNCTIONS, METHODS, ATTRIBUTES = spelling_tables(OPS.values())
_kernel_spellings(NUMPY_FUNCTIONS)

# SciPy module -> the spellings of its functions, until user code imports it.
_WAITING: dict[str, list[Spelling]] = {}
for _op in OPS.values():
    for _spelling in _op.spellings:
        _module = _deferred_module(_spelling) if _spelling.kind == "function" else None
        if _module is not None:
            _WAITING.setdefault(_module, []).append(_spelling)


def _join_imported_scipy() -> bool:
    """Enter the spellings of every waiting SciPy module user code has imported; True when
    any joined (Note [SciPy spellings])."""
    joined = [module for module in _WAITING if module in sys.modules]
    for module in joined:
        for spelling in _WAITING.pop(module):
            obj: object = sys.modules[module]
            for attribute in spelling.name.removeprefix(module + ".").split("."):
                obj = getattr(obj, attribute, None)
            if obj is not None:  # a bound method (``norm.logpdf``) is found by equality
                _claim(NUMPY_FUNCTIONS, obj, spelling)
    return bool(joined)


def function_spelling(obj: object) -> Spelling | None:
    """The spelling of the NumPy or SciPy function ``obj``, or None."""
    found: Spelling | None = lookup(NUMPY_FUNCTIONS, obj)
    if found is None and _join_imported_scipy():
        found = lookup(NUMPY_FUNCTIONS, obj)
    return found


def is_scipy(obj: object) -> bool:
    """True for SciPy's modules and functions, ufuncs included (which name no module)."""
    module = obj.__name__ if isinstance(obj, ModuleType) else getattr(obj, "__module__", None)
    if isinstance(module, str):
        return module == _DEFERRED or module.startswith(_DEFERRED + ".")
    if not isinstance(obj, np.ufunc):
        return False
    special = sys.modules.get("scipy.special")
    return special is not None and getattr(special, obj.__name__, None) is obj


# Python builtins the emitter lowers itself, to a scalar or an array operator depending on the
# operands (``abs(n)`` is prim::abs, ``abs(x)`` aten::abs): Python's meaning, not one operator's
# spelling, so they are not in the records.
Builtin = Literal["len", "abs", "min", "max", "float", "int", "bool", "range", "print", "sum"]
BUILTINS: dict[object, Builtin] = {
    builtins.len: "len",
    builtins.abs: "abs",
    builtins.min: "min",
    builtins.max: "max",
    builtins.float: "float",
    builtins.int: "int",
    builtins.bool: "bool",
    builtins.range: "range",
    builtins.print: "print",
    builtins.sum: "sum",
}


# ---- binding call arguments to a schema ---------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Bound:
    """Where one schema argument's value comes from."""

    kind: Literal["receiver", "positional", "keyword", "packed", "default"]
    key: int | str | None = None  # positional index, keyword name, or first packed position


class BindError(Exception):
    """A call that does not fit the spelling; ``at`` is the offending positional index or
    keyword name (None: the call as a whole)."""

    def __init__(self, message: str, at: int | str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.at = at


def bind(spelling: Spelling, positional: int, keywords: Sequence[str]) -> list[Bound]:
    """One Bound per schema argument, in schema order, for a call with ``positional``
    positional arguments and the given keyword names."""
    name, params = spelling.name, spelling.params
    filled: dict[str, Bound] = {}
    by_position = [p for p in params if p.positional]
    varargs = next((p for p in by_position if p.varargs), None)
    if varargs is not None:
        first = by_position.index(varargs)
        for index in range(min(positional, first)):
            filled[str(by_position[index].argument)] = Bound("positional", index)
        if first == 0 and positional == 1:
            filled[str(varargs.argument)] = Bound("positional", 0)
        elif positional > first and (first > 0 or positional > 1):
            filled[str(varargs.argument)] = Bound("packed", first)
    else:
        if positional > len(by_position):
            count = len(by_position)
            plural = "argument" if count == 1 else "arguments"
            raise BindError(
                f"{name}() takes {count} positional {plural} but {positional} were given",
                count,
            )
        for index in range(positional):
            param = by_position[index]
            if param.argument is None:
                raise BindError(f"argument '{param.name}' of {name} is not supported", index)
            filled[param.argument] = Bound("positional", index)
    for keyword in keywords:
        by_name = next((p for p in params if p.name == keyword and p.keyword), None)
        if by_name is None:
            raise BindError(f"{name}() got an unexpected keyword argument '{keyword}'", keyword)
        if by_name.argument is None:
            raise BindError(f"argument '{keyword}' of {name} is not supported", keyword)
        if by_name.argument in filled:
            raise BindError(f"{name}() got multiple values for argument '{keyword}'", keyword)
        filled[by_name.argument] = Bound("keyword", keyword)

    arguments = spelling.schema.arguments
    bound: list[Bound] = []
    for position, argument in enumerate(arguments):
        if spelling.method and position == 0:
            bound.append(Bound("receiver"))
            continue
        source = filled.get(argument.name)
        if source is None:
            if not argument.has_default:
                shown = next((p.name for p in params if p.argument == argument.name), None)
                raise BindError(f"{name}() missing required argument '{shown or argument.name}'")
            source = Bound("default")
        bound.append(source)
    return bound


def lookup(table: dict[object, Any], obj: object) -> Any:
    """``table[obj]``, or None when ``obj`` is not a key (or cannot be one)."""
    try:
        return table.get(obj)
    except TypeError:  # an unhashable object is in no table
        return None


def numpy_name(spelling: Spelling, argument: str) -> str:
    """The NumPy name of the parameter that fills schema argument ``argument``."""
    return next((p.name for p in spelling.params if p.argument == argument), argument)


# ---- Python objects as constants ----------------------------------------------------------------

_BUILTIN_DTYPES: dict[type, str] = {
    builtins.float: "float64",
    builtins.int: "int64",
    builtins.bool: "bool",
}


def dtype_name(obj: object) -> str | None:
    """The dtype name ``obj`` stands for as a dtype argument (``np.float32``, ``float``), if any."""
    if isinstance(obj, type) and obj in _BUILTIN_DTYPES:
        return _BUILTIN_DTYPES[obj]
    if isinstance(obj, np.dtype) or (isinstance(obj, type) and issubclass(obj, np.generic)):
        name = np.dtype(obj).name
        return name if name in DTYPE_TO_NAME else None
    return None


def constant_of(obj: object) -> tuple[Any, Type] | None:
    """``obj`` as the value and type of a prim::Constant, or None when it is not one: Python
    numbers, bools, strings, None and tuples of them (a complex number is a 0-d complex128
    array) (module constants like ``EPS = 1e-5``,
    ``np.pi``, ``np.newaxis``), and dtypes, which become their name (``np.float32``)."""
    if obj is None:
        return None, NONE
    if isinstance(obj, bool):
        return obj, BOOL
    if isinstance(obj, int):
        return int(obj), INT
    if isinstance(obj, float):
        return float(obj), FLOAT
    if isinstance(obj, complex):
        # See Note [Python complex numbers] in `ir.types`.
        return np.complex128(obj), COMPLEX_SCALAR
    if isinstance(obj, str):
        return str(obj), STR
    if isinstance(obj, tuple):
        items = [constant_of(item) for item in obj]
        if any(item is None for item in items):
            return None
        values = tuple(item[0] for item in items if item is not None)
        return values, TupleType(tuple(item[1] for item in items if item is not None))
    name = dtype_name(obj)
    if name is not None:
        return name, STR
    return None


def describe(obj: object) -> str:
    """A dotted name for ``obj`` in messages: ``numpy``, ``numpy.fft.fft``, ``helper``."""
    if isinstance(obj, ModuleType):
        return obj.__name__
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    if name is None:
        return type(obj).__name__
    module = getattr(obj, "__module__", None)
    if module in (None, "builtins"):
        return str(name)
    return f"{module}.{name}"


def is_numpy(obj: object) -> bool:
    """True for NumPy's modules and the functions and classes they define."""
    module = obj.__name__ if isinstance(obj, ModuleType) else getattr(obj, "__module__", None)
    return isinstance(module, str) and (module == "numpy" or module.startswith("numpy."))
