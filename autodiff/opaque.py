"""What an opaque function needs from the compiler, whatever its kind (``ad.custom_vjp``,
``ad.pure_callback``): a key naming it in IR text, the entries of `ir.ops.opaque.OPAQUE_CALLS`,
and its result's type, declared or found by running it once on sample arguments.

Note [Result types of opaque functions]
The compiler needs a type for every value, and cannot read an opaque function. Its result's
structure (one array, or a tuple or dict of them) must be known when the caller is compiled,
before shapes are: it is one array unless ``result_shape`` declares otherwise. Its shape and
dtype are found when the caller is specialised: the declared ``result_shape`` (a pytree of
``ad.ShapeDtype``, NumPy arrays or anything with ``.shape`` and ``.dtype``, as JAX's
``ShapeDtypeStruct``) when there is one, or else by running the function once on sample
arguments of the argument types (floats uniform in [0.5, 1.5), so that logarithms, square
roots and solves are defined; integers one), as ``jax.eval_shape`` traces once. That run
happens while compiling, once per signature; a function that cannot run on such values (or
must not, as it has effects) declares ``result_shape``. Running it on the real arguments
instead would need the caller's values before the caller is compiled.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Hashable, Sequence
from typing import Any, NamedTuple

import numpy as np

from frontend.trees import KnownString, Tree, as_tuples, ir_type_of, rebuild
from ir.errors import ShapeError
from ir.ops.opaque import OPAQUE_CALLS, OpaqueCall
from ir.types import BOOL, FLOAT, INT, NONE, TENSOR, TensorType, TupleType, Type, type_of_value


class ShapeDtype(NamedTuple):
    """The shape and dtype of an array a function returns, as JAX's ``ShapeDtypeStruct``.

    >>> ad.ShapeDtype((3,), np.float64)
    """

    shape: tuple[int, ...]
    dtype: Any


def function_label(fn: Callable[..., Any]) -> str:
    """``name@file.py:line`` of a Python function, its name for anything else."""
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", type(fn).__name__)
    code = getattr(fn, "__code__", None)
    if code is None:
        return str(name)
    return f"{name}@{os.path.basename(code.co_filename)}:{code.co_firstlineno}"


def register(label: str, entry: OpaqueCall) -> str:
    """Enter ``entry`` in the table under a key no other entry has: ``label``, or ``label#n``."""
    key, count = label, 1
    while key in OPAQUE_CALLS:
        count += 1
        key = f"{label}#{count}"
    OPAQUE_CALLS[key] = entry
    return key


def declared_type(spec: Any) -> Type:
    """The type (a `Tree` for a container) of what ``result_shape`` declares."""
    if isinstance(spec, dict):
        keys = tuple(sorted(spec))
        return Tree(type(spec), keys, tuple(declared_type(spec[key]) for key in keys))
    if isinstance(spec, list | tuple) and not isinstance(spec, ShapeDtype):
        keys = tuple(getattr(spec, "_fields", ()))
        return Tree(type(spec), keys, tuple(declared_type(item) for item in spec))
    shape, dtype = getattr(spec, "shape", None), getattr(spec, "dtype", None)
    if shape is None or dtype is None:
        raise ShapeError(
            f"result_shape must be a pytree of ad.ShapeDtype(shape, dtype) (or of arrays), "
            f"not {type(spec).__name__}"
        )
    return TensorType(np.dtype(dtype).name, tuple(int(d) for d in shape))


def generic(ty: Type) -> Type:
    """``ty`` with every array's shape and dtype forgotten: what the caller is compiled with."""
    if isinstance(ty, Tree):
        return Tree(ty.kind, ty.keys, tuple(generic(child) for child in ty.children))
    return TENSOR if isinstance(ty, TensorType) else ty


class Entry:
    """One opaque function at one structure of its arguments: an `OpaqueCall`."""

    def __init__(
        self,
        fn: Callable[..., Any],
        arg_types: Sequence[Type],
        result_shape: Any | None,
    ) -> None:
        self.fn = fn
        self.arg_types = tuple(arg_types)  # as the caller was compiled: Trees for containers
        self.declared = None if result_shape is None else declared_type(result_shape)
        self.probed: dict[tuple[Type, ...], list[Type]] = {}

    @property
    def result(self) -> Type:
        """The result's type when the caller is compiled (Note [Result types of opaque
        functions])."""
        return TENSOR if self.declared is None else generic(self.declared)

    def arguments(self, args: Sequence[Any]) -> list[Any]:
        """The arguments as the function takes them: its dicts, lists and namedtuples."""
        return [rebuild(arg, ty) for arg, ty in zip(args, self.arg_types, strict=True)]

    def result_types(self, arg_types: Sequence[Type]) -> list[Type]:
        if self.declared is not None:
            return [ir_type_of(self.declared)]
        key = tuple(arg_types)
        found = self.probed.get(key)
        if found is None:
            samples = [sample(parse, ty) for parse, ty in zip(self.arg_types, key, strict=True)]
            if any(value is _UNKNOWN for value in samples):
                return [TENSOR]
            found = self.probed[key] = [self.probe(samples)]
        return found

    def probe(self, samples: list[Any]) -> Type:
        label = function_label(self.fn)
        try:
            with np.errstate(all="ignore"):
                value = self.fn(*self.arguments(samples))
            return type_of_value(value)
        except Exception as error:
            raise ShapeError(
                f"{label} was run once on sample arguments to find its result's shape and "
                f"dtype, and raised {type(error).__name__}: {error}; declare them with "
                "result_shape=ad.ShapeDtype(shape, dtype)"
            ) from error

    def call(self, *args: Any) -> Any:
        result = self.fn(*self.arguments(args))
        return result if self.declared is None else as_tuples(result, self.declared)

    # Only a custom_vjp's entry has a derivative: differentiation creates prim::CustomVjpFwd
    # and prim::CustomVjpBwd for its calls alone, so these are never reached for a callback.
    def forward(self, *args: Any) -> tuple[Any, Any]:
        raise TypeError(f"{function_label(self.fn)} has no derivative (it is a pure callback)")

    def backward(self, residuals: Any, grad: Any) -> Sequence[Any]:
        raise TypeError(f"{function_label(self.fn)} has no derivative (it is a pure callback)")


class _Unknown:
    pass


_UNKNOWN = _Unknown()
_SAMPLES = np.random.default_rng(0)


def sample(parse: Type, ty: Type) -> Any:
    """A value of type ``ty`` (``parse``: its type when the caller was compiled), or
    ``_UNKNOWN`` when ``ty`` leaves its shape or dtype open."""
    if isinstance(parse, KnownString):
        return parse.value
    if isinstance(ty, TupleType) and isinstance(parse, Tree):
        items = [sample(p, t) for p, t in zip(parse.children, ty.elems, strict=True)]
        return _UNKNOWN if any(item is _UNKNOWN for item in items) else tuple(items)
    if isinstance(ty, TensorType):
        if not ty.is_complete:
            return _UNKNOWN
        assert ty.shape is not None
        assert ty.dtype is not None
        shape = tuple(int(d) for d in ty.shape if d is not None)
        dtype = np.dtype(ty.dtype)
        if dtype.kind in "fc":
            return _SAMPLES.uniform(0.5, 1.5, shape).astype(dtype)
        return np.ones(shape, dtype)
    fixed: dict[Type, Any] = {FLOAT: 1.0, INT: 1, BOOL: True, NONE: None}
    return fixed.get(ty, _UNKNOWN)


def structure_key(types: Sequence[Type]) -> tuple[Hashable, ...]:
    """What tells two structures of arguments apart (a caller compiled for the types)."""
    return tuple(generic(ty) for ty in types)
