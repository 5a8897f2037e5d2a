"""IR types: tensors with optional dtype/shape/requires_grad, Python scalars, tuples, lists.

Printed forms (and what the IR parser reads back)::

    Tensor                      dtype, shape and requires_grad unknown
    Float(3, 4)                 float32, shape (3, 4)
    Double(*, 4, requires_grad=1)
    Tensor(3)                   shape known, dtype unknown
    Long()                      a 0-d int64 tensor
    Double(requires_grad=1)     rank unknown, requires_grad known
    Double(rank=0, requires_grad=1)
                                a 0-d tensor with requires_grad known (Note [Rank 0 with
                                attributes])
    int  float  bool  str  NoneType  Scalar  Any
    int[]  Tensor[]  int?  (Tensor, int)
    Nothing[]                   an empty list: its element type is not known yet

# Note [Rank 0 with attributes]
# A tensor type lists its dims, then its attributes, between one pair of brackets, and a type
# of unknown rank lists no dims: ``Double`` alone, or ``Double(requires_grad=1)`` with an
# attribute. A 0-d tensor lists no dims either: ``Double()`` alone is unambiguous, but with an
# attribute it would print as the unknown rank does. So a 0-d tensor with attributes says its
# rank first, ``Double(rank=0, requires_grad=1)``; ``rank=0`` is written nowhere else, and the
# older spelling keeps its meaning (rank unknown), so every text printed before still reads
# back as it did.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# TorchScript's scalar-type names for the NumPy dtypes we support, both ways.
DTYPE_TO_NAME: dict[str, str] = {
    "float16": "Half",
    "float32": "Float",
    "float64": "Double",
    "complex64": "ComplexFloat",
    "complex128": "ComplexDouble",
    "int8": "Char",
    "int16": "Short",
    "int32": "Int",
    "int64": "Long",
    "uint8": "Byte",
    "bool": "Bool",
}
NAME_TO_DTYPE: dict[str, str] = {name: dtype for dtype, name in DTYPE_TO_NAME.items()}
# What a 0-d tensor type with attributes lists in place of dims (Note [Rank 0 with attributes]).
RANK_ZERO = "rank=0"


class Type:
    """Base of all IR types. Types are immutable values compared by structure."""

    __slots__ = ()

    def is_subtype_of(self, other: Type) -> bool:
        """True when a value of this type may be passed where ``other`` is expected. ``Any`` is
        the type of a value not yet specialised, so it fits everywhere (gradual typing)."""
        if other is ANY or self is ANY or self is NOTHING or self == other:
            return True
        if isinstance(other, OptionalType):
            return self is NONE or self.is_subtype_of(other.elem)
        if other is SCALAR:
            return self in (INT, FLOAT, BOOL)
        if isinstance(self, TensorType) and isinstance(other, TensorType):
            return self.refines_to(other)
        if isinstance(self, TupleType) and isinstance(other, TupleType):
            return len(self.elems) == len(other.elems) and all(
                a.is_subtype_of(b) for a, b in zip(self.elems, other.elems, strict=True)
            )
        if isinstance(self, ListType) and isinstance(other, ListType):
            return self.elem.is_subtype_of(other.elem)
        return False


@dataclass(frozen=True, slots=True)
class TensorType(Type):
    """An n-d array. ``shape=None`` means rank unknown; a dim of None means that size is unknown."""

    dtype: str | None = None
    shape: tuple[int | None, ...] | None = None
    requires_grad: bool | None = None

    def __post_init__(self) -> None:
        if self.dtype is not None and self.dtype not in DTYPE_TO_NAME:
            raise ValueError(f"unsupported dtype {self.dtype!r}")

    @staticmethod
    def of(array: object, requires_grad: bool | None = None) -> TensorType:
        """The fully specialised type of a NumPy array (or NumPy scalar)."""
        arr = np.asarray(array)
        return TensorType(arr.dtype.name, tuple(arr.shape), requires_grad)

    @property
    def rank(self) -> int | None:
        return None if self.shape is None else len(self.shape)

    @property
    def is_complete(self) -> bool:
        """Dtype and every dim known."""
        return (
            self.dtype is not None
            and self.shape is not None
            and all(d is not None for d in self.shape)
        )

    def refines_to(self, general: TensorType) -> bool:
        """True when this type says at least everything ``general`` says."""
        if general.dtype is not None and general.dtype != self.dtype:
            return False
        if general.requires_grad is not None and general.requires_grad != self.requires_grad:
            return False
        if general.shape is None:
            return True
        if self.shape is None or len(self.shape) != len(general.shape):
            return False
        return all(g is None or g == s for s, g in zip(self.shape, general.shape, strict=True))

    def with_requires_grad(self, requires_grad: bool | None) -> TensorType:
        return TensorType(self.dtype, self.shape, requires_grad)

    def __str__(self) -> str:
        name = "Tensor" if self.dtype is None else DTYPE_TO_NAME[self.dtype]
        parts = [] if self.shape is None else ["*" if d is None else str(d) for d in self.shape]
        if self.requires_grad is not None:
            if self.shape == ():
                parts.append(RANK_ZERO)  # See Note [Rank 0 with attributes]
            parts.append(f"requires_grad={int(self.requires_grad)}")
        if self.shape is None and not parts:
            return name
        return f"{name}({', '.join(parts)})"


@dataclass(frozen=True, slots=True)
class NamedType(Type):
    """A type with no parameters: ``int``, ``float``, ``bool``, ``str``, ``NoneType``, ..."""

    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class TupleType(Type):
    elems: tuple[Type, ...]

    def __str__(self) -> str:
        return f"({', '.join(str(e) for e in self.elems)})"


@dataclass(frozen=True, slots=True)
class ListType(Type):
    elem: Type

    def __str__(self) -> str:
        return f"{self.elem}[]"


@dataclass(frozen=True, slots=True)
class OptionalType(Type):
    elem: Type

    def __str__(self) -> str:
        return f"{self.elem}?"


TENSOR = TensorType()
# Note [Python complex numbers]
# A Python complex (an argument ``1.1 + 1.2j``, a literal ``1j`` in the code, an item of a
# container argument, a module constant) is a 0-d complex128 array, np.complex128, which is a
# Python complex too: it has no scalar type of its own, so every operator NumPy runs on a
# complex array takes it, with the derivative formulas of Note [Complex gradients] in
# `autodiff.formulas`. Its gradient comes back a Python complex. The one difference from NumPy:
# NumPy promotes a Python complex weakly, ``1j * x`` of a float32 ``x`` is complex64, where a
# 0-d complex128 array makes it complex128 (write ``np.complex64(1j) * x`` to keep it).
COMPLEX_SCALAR = TensorType("complex128", ())
INT = NamedType("int")
FLOAT = NamedType("float")
BOOL = NamedType("bool")
STR = NamedType("str")
NONE = NamedType("NoneType")
SCALAR = NamedType("Scalar")  # int, float or bool: schema arguments that take any Python number
ANY = NamedType("Any")  # schema arguments of structural operators that take anything
# The element type of an empty list (``hs = []``): no value has it, so it is a subtype of every
# type and joins to the other type, and appending an array to ``Nothing[]`` gives that array's
# list type (`join_types`).
NOTHING = NamedType("Nothing")
# A np.random.Generator or RandomState: what random draws are drawn from (Note [Random draws]
# in `ir.ops.random`).
GENERATOR = NamedType("Generator")

NAMED_TYPES: dict[str, Type] = {
    t.name: t for t in (INT, FLOAT, BOOL, STR, NONE, SCALAR, ANY, NOTHING, GENERATOR)
}


def is_tensor(ty: Type) -> bool:
    return isinstance(ty, TensorType)


def type_of_value(value: object) -> Type:
    """The IR type of a runtime value (the type the specialiser gives an argument)."""
    if isinstance(value, bool | np.bool_) and not isinstance(value, np.ndarray):
        return BOOL if isinstance(value, bool) else TensorType.of(value)
    if isinstance(value, int):
        return INT
    if isinstance(value, float):
        return FLOAT
    if isinstance(value, str):
        return STR
    if value is None:
        return NONE
    if isinstance(value, tuple):
        return TupleType(tuple(type_of_value(v) for v in value))
    if isinstance(value, np.ndarray | np.generic):
        return TensorType.of(value)
    raise TypeError(f"no IR type for a value of Python type {type(value).__name__}")


def _join_number(number: Type, tensor: TensorType) -> Type:
    """A Python float or int joined with an array: a 0-d array when the array may be one, as
    NumPy makes a number that meets one (``total = 0.0`` or ``total = 0``, then ``total +=
    np.sum(x)`` in a loop), so the shape, (), is known (a Jacobian needs it). The dtype stays
    only when it is a float's own, float64: an int may stay an int, or become a float."""
    if tensor.shape is not None and tensor.shape != ():
        return ANY
    dtype = tensor.dtype if number == FLOAT and tensor.dtype == "float64" else None
    return TensorType(dtype, (), tensor.requires_grad)


def join_types(a: Type, b: Type) -> Type:
    """The most precise type that both ``a`` and ``b`` are subtypes of (for If outputs and
    loop-carried values): tensor facts that disagree become unknown. ``Nothing`` joins to the
    other type: an empty list joined with ``Float(3)[]`` is ``Float(3)[]``."""
    if a == b or b is NOTHING:
        return a
    if a is NOTHING:
        return b
    if isinstance(a, TensorType) and isinstance(b, TensorType):
        dtype = a.dtype if a.dtype == b.dtype else None
        shape: tuple[int | None, ...] | None = None
        if a.shape is not None and b.shape is not None and len(a.shape) == len(b.shape):
            shape = tuple(x if x == y else None for x, y in zip(a.shape, b.shape, strict=True))
        requires_grad = a.requires_grad if a.requires_grad == b.requires_grad else None
        return TensorType(dtype, shape, requires_grad)
    if isinstance(a, TensorType) and b in (FLOAT, INT):
        return _join_number(b, a)
    if isinstance(b, TensorType) and a in (FLOAT, INT):
        return _join_number(a, b)
    if isinstance(a, TupleType) and isinstance(b, TupleType) and len(a.elems) == len(b.elems):
        return TupleType(tuple(join_types(x, y) for x, y in zip(a.elems, b.elems, strict=True)))
    if isinstance(a, ListType) and isinstance(b, ListType):
        return ListType(join_types(a.elem, b.elem))
    if a is NONE:
        return b if isinstance(b, OptionalType) else OptionalType(b)
    if b is NONE:
        return a if isinstance(a, OptionalType) else OptionalType(a)
    return ANY
