"""The value model of `ir.native_scalar`: what a value of the block is while the numba source
is generated (`Elements`, one scalar expression per element of a small array; `Static`, a
constant; `BigArray`; `RowUpdate`), and the conversions between them, dtypes and literals
(`cast`, `literal`, `as_elements`, `static_value`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ir.types import BOOL, FLOAT, INT, TensorType, Type

SMALL = 16  # the most elements an array may have to be held as scalar locals


class Unsupported(Exception):
    """The block holds something this tier does not scalarize (the generic emitter runs it)."""


@dataclass
class Elements:
    """A small array, or a number (shape ()): ``items`` is an object array of the static
    shape whose entries are Python expressions (local names or literals) of dtype ``dtype``
    (a NumPy dtype name, or ``int``/``float``/``bool`` for a Python number). ``array`` names
    a numba array holding the same values, where there is one (an input), for reads at an
    index known only at run time."""

    items: np.ndarray[Any, Any]
    dtype: str
    array: str | None = None

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.items.shape)

    @property
    def scalar(self) -> str:
        """The expression of a 0-d value."""
        return str(self.items[()])

    def at(self, index: tuple[int, ...]) -> str:
        return str(self.items[index])


@dataclass
class Static:
    """A value known while generating: a constant (None, a str, a tuple of ints, a number)."""

    value: Any


@dataclass
class BigArray:
    """An array too large for scalars, held as a numba array named ``name``."""

    name: str
    ty: TensorType
    owned: bool = False  # created by this function (zeros, a tape): it may be written in place


@dataclass
class RowUpdate:
    """`select_backward` into a big shape at a run-time index: zeros but for ``grad`` at
    ``index`` along ``axis``. Only adding it to an owned big array is written (in place)."""

    grad: Elements
    axis: int
    index: str


# A value while generating: a tuple holds the parts of a prim::TupleConstruct.
Repr = Elements | Static | BigArray | RowUpdate | tuple[Any, ...]
PYTHON_NUMBERS: dict[Type, str] = {INT: "int", FLOAT: "float", BOOL: "bool"}


PYTHON_DTYPES = {"int": "int64", "float": "float64", "bool": "bool"}
NUMERIC_DTYPES = frozenset({"float64", "float32", "int64", "bool", "int", "float"})
_LITERAL_TYPES = {"float64": float, "int64": int, "bool": bool}


def elements_of(items: Any, dtype: str) -> Elements:
    array = np.empty(np.shape(items), dtype=object)
    array[...] = items
    return Elements(array, dtype)


def literal(value: Any) -> str:
    """The Python spelling of a number that numba reads back as the same value."""
    if isinstance(value, bool | np.bool_):
        return repr(bool(value))
    if isinstance(value, int | np.integer):
        return repr(int(value))
    number = float(value)
    if np.isnan(number):
        return "np.nan"
    if np.isinf(number):
        return "np.inf" if number > 0 else "(-np.inf)"
    return repr(number)


def as_elements(value: Elements | Static) -> Elements:
    """An operand as elements: a numeric constant becomes a literal of its Python type."""
    if isinstance(value, Elements):
        return value
    number = value.value
    if isinstance(number, bool | int | float) and not isinstance(number, np.generic):
        return elements_of(literal(number), type(number).__name__)
    if isinstance(number, np.ndarray | np.generic) and number.size <= SMALL:
        # an array constant (or a NumPy scalar) of the graph: a literal per element
        array = np.asarray(number)
        dtype = array.dtype.name
        if dtype not in NUMERIC_DTYPES:
            raise Unsupported(f"a constant of dtype {dtype}")
        items = np.empty(array.shape, dtype=object)
        for index in np.ndindex(array.shape):
            items[index] = cast(literal(array[index]), _python_kind(dtype), dtype)
        return Elements(items, dtype)
    raise Unsupported(f"operand {number!r} is not a number")


def _python_kind(dtype: str) -> str:
    """The Python number type whose literal spells an element of ``dtype``."""
    return {"bool": "bool", "int64": "int"}.get(dtype, "float")


def cast(expression: str, source: str, target: str) -> str:
    """``expression`` of dtype ``source`` converted to ``target`` as NumPy's ufunc loop would
    convert it (a literal is rewritten; a Python number of the same kind needs nothing)."""
    source = PYTHON_DTYPES.get(source, source)
    target = PYTHON_DTYPES.get(target, target)
    if source == target:
        return expression
    kind = _LITERAL_TYPES.get(target)
    if kind is not None and _is_literal(expression):
        return literal(kind(eval(expression, {"np": np})))
    if target == "bool":  # nonzero, NaN included, as NumPy casts
        return f"({expression} != 0)"
    return f"np.{target}({expression})"


def _is_literal(expression: str) -> bool:
    try:
        float(expression)
        return True
    except ValueError:
        return expression in ("True", "False", "np.nan", "np.inf", "(-np.inf)")


def static_value(value: Elements | Static) -> Any:
    if isinstance(value, Static):
        return value.value
    if value.shape == () and _is_literal(value.scalar):
        return eval(value.scalar, {"np": np})
    raise Unsupported("an operand that must be known while compiling is computed at run time")


def weak_sample(dtype: str) -> Any:
    """What `np.result_type` takes for an operand of this dtype: Python numbers are weak."""
    samples: dict[str, Any] = {"int": 0, "float": 0.0, "bool": False}
    return samples.get(dtype, np.dtype(dtype) if dtype in NUMERIC_DTYPES else None)


def static_shape(ty: Type) -> tuple[int, ...] | None:
    """The shape of a complete array type of a dtype this tier computes in."""
    if isinstance(ty, TensorType) and ty.is_complete and ty.dtype in NUMERIC_DTYPES:
        return tuple(d for d in ty.shape or () if d is not None)
    return None


def is_small(ty: Type) -> bool:
    """An array held as scalar locals."""
    shape = static_shape(ty)
    return shape is not None and int(np.prod(shape, dtype=np.int64)) <= SMALL
