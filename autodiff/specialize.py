"""Call arguments of a scripted function: binding, conversion to runtime values, IR types, and
the signature key that compiled code is cached by.

A compiled graph depends on each argument's kind, dtype, shape and strides, never on a
number's value: ``f(x, 3)`` and ``f(x, 4)`` share one executable, as in TorchScript's profiling
executor. The strides are there because NumPy's reshape and ravel make a view or a copy
depending on them (Note [Views] in `ir.ops.views`): a write through ``x.reshape(-1)`` reaches
``x`` when ``x`` is C-contiguous and not when it is ``a.T``, so each layout compiles its own.
"""

from __future__ import annotations

import inspect
from collections import OrderedDict
from collections.abc import Hashable, Mapping, Sequence
from typing import Any, cast

import numpy as np

from ir.backends import dtype_name, is_backend_array
from ir.collector import gc_paused
from ir.errors import AutodiffError
from ir.graph import Graph
from ir.types import (
    BOOL,
    COMPLEX_SCALAR,
    DTYPE_TO_NAME,
    FLOAT,
    GENERATOR,
    INT,
    TensorType,
    Type,
)
from passes.registry import PipelineStep, run_passes
from passes.shape_propagation import specialise

# Note [One specialisation pipeline]
# A plain call and a gradient specialise a function the same way (`typed_graph`): shapes and
# dtypes propagated from the arguments' types, then writes made pure SSA first (Note
# [Functionalisation] in `passes.functionalize`: no other pass may touch a graph that writes
# in place), then the cleanup that shape propagation makes possible: sizes it learnt turned
# into constants, loop invariants hoisted, and what that made common or dead removed. One
# pass is for gradients only: `lower-tuples` (differentiation needs tuples taken apart)
# rebuilds a value typed as a tuple as a tuple, and the pieces of a split an ``if`` chooses
# are a list at run time, which a plain call must return as it is (a gradient restores it
# from its output tree). The ``typed`` stage `autodiff dump` prints is a plain call's.
FORWARD_CLEANUP = (
    "lower-tuples",
    "constant-propagation",
    "fold-sizes",
    "hoist-loop-invariants",
    "cse",
    "dce",
)
SPECIALISE_PIPELINE: tuple[PipelineStep, ...] = (
    ("functionalize", {}),
    *((name, {}) for name in FORWARD_CLEANUP),
)

EXPECTED_KINDS = (
    "a NumPy array, a NumPy scalar, a Python int, float, complex or bool, a list of numbers, "
    "or a "
    "np.random.Generator"
)
# What random draws are drawn from: Note [Random draws] in `ir.ops.random`.
GENERATORS = (np.random.Generator, np.random.RandomState)

SignatureKey = tuple[Hashable, ...]


class PythonComplex(np.complex128):
    """A Python complex argument as the 0-d complex128 array it computes as (Note [Python
    complex numbers] in `ir.types`); its type tells `autodiff.gradient_call.cast_like` to give its
    gradient back as a Python complex, as a Python float's is a float."""

    __slots__ = ()


class ArgumentError(AutodiffError, TypeError):
    """Call arguments a scripted function cannot take: the wrong number, an unknown keyword, or
    a value of a kind the compiler does not handle. A TypeError too, as Python's would be."""


def bind_arguments(
    qualname: str,
    signature: inspect.Signature,
    args: Sequence[Any],
    kwargs: Mapping[str, Any],
) -> list[Any]:
    """The value of every parameter of ``signature``, in order, defaults applied; a wrong call
    raises ArgumentError with the message Python gives for the plain function."""
    parameters = list(signature.parameters.values())
    if any(p.kind != p.POSITIONAL_OR_KEYWORD for p in parameters):
        return _bind_variadic(qualname, signature, args, kwargs)
    names = [p.name for p in parameters]
    if len(args) > len(parameters):
        raise ArgumentError(f"{qualname}() {_too_many(parameters, len(args))}")
    bound: dict[str, Any] = dict(zip(names, args, strict=False))
    for name, value in kwargs.items():
        if name not in names:
            raise ArgumentError(f"{qualname}() got an unexpected keyword argument '{name}'")
        if name in bound:
            raise ArgumentError(f"{qualname}() got multiple values for argument '{name}'")
        bound[name] = value
    missing = [p.name for p in parameters if p.name not in bound and p.default is p.empty]
    if missing:
        count = len(missing)
        plural = "argument" if count == 1 else "arguments"
        raise ArgumentError(
            f"{qualname}() missing {count} required positional {plural}: {_and_list(missing)}"
        )
    return [bound.get(p.name, p.default) for p in parameters]


def _bind_variadic(
    qualname: str,
    signature: inspect.Signature,
    args: Sequence[Any],
    kwargs: Mapping[str, Any],
) -> list[Any]:
    """`bind_arguments` for a signature with ``*args``, ``**kwargs`` or keyword-only
    parameters: the extra positional arguments as a tuple, the extra keyword ones as an
    ``OrderedDict`` (a pytree that keeps the order they were given in, as ``**kwargs`` does)."""
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError as error:
        raise ArgumentError(f"{qualname}() {error}") from None
    values = []
    for parameter in signature.parameters.values():
        given = bound.arguments.get(parameter.name, parameter.default)
        if parameter.kind == parameter.VAR_POSITIONAL:
            given = tuple(bound.arguments.get(parameter.name, ()))
        elif parameter.kind == parameter.VAR_KEYWORD:
            given = OrderedDict(bound.arguments.get(parameter.name, {}))
        values.append(given)
    return values


def _too_many(parameters: list[inspect.Parameter], given: int) -> str:
    required = sum(1 for p in parameters if p.default is p.empty)
    total = len(parameters)
    takes = f"from {required} to {total}" if required != total else str(total)
    noun = "argument" if total == 1 and required == total else "arguments"
    verb = "was" if given == 1 else "were"
    return f"takes {takes} positional {noun} but {given} {verb} given"


def _and_list(names: list[str]) -> str:
    quoted = [f"'{name}'" for name in names]
    if len(quoted) == 1:
        return quoted[0]
    if len(quoted) == 2:
        return f"{quoted[0]} and {quoted[1]}"
    return ", ".join(quoted[:-1]) + f", and {quoted[-1]}"


def runtime_value(qualname: str, name: str, value: Any) -> Any:
    """``value`` as the interpreter receives it: arrays, NumPy scalars and Python numbers as
    they are (never copied), lists and tuples of numbers as arrays."""
    if type(value) is not np.ndarray and isinstance(value, np.ndarray):
        _check_array_subclass(qualname, name, value)
    if isinstance(value, (bool, int, float, np.ndarray, np.generic, *GENERATORS)):
        return value
    if is_backend_array(value):  # Note [Array backends] in ir.backends
        return value
    if isinstance(value, complex):
        return PythonComplex(value)
    if isinstance(value, list | tuple):
        try:
            array = np.asarray(value)
        except ValueError as error:
            raise ArgumentError(
                f"argument '{name}' of {qualname}() is a ragged {type(value).__name__}: "
                f"its items do not have one shape ({error})"
            ) from error
        if array.dtype.kind not in "biufc":
            raise ArgumentError(
                f"argument '{name}' of {qualname}() is a {type(value).__name__} of "
                f"{array.dtype.name} items; expected {EXPECTED_KINDS}"
            )
        return array
    raise ArgumentError(
        f"argument '{name}' of {qualname}() is {_describe(value)}; expected {EXPECTED_KINDS}"
    )


# Array subclasses whose meaning the compiled code, which sees plain arrays, would lose: it
# would silently compute something else. Any other subclass (np.memmap) is an array.
_REFUSED_SUBCLASSES: tuple[tuple[type, str], ...] = (
    (np.matrix, "'*' is a matrix product and every result stays 2-D; pass np.asarray(m)"),
    (
        np.ma.MaskedArray,
        "its mask would be ignored; pass m.filled(value) or select the unmasked items",
    ),
)


def _check_array_subclass(qualname: str, name: str, value: np.ndarray[Any, Any]) -> None:
    for kind, why in _REFUSED_SUBCLASSES:
        if isinstance(value, kind):
            spelled = f"{kind.__module__}.{kind.__name__}"
            raise ArgumentError(f"argument '{name}' of {qualname}() is a {spelled}: {why}")


def _describe(value: Any) -> str:
    if value is None:
        return "None"
    kind = type(value).__name__
    article = "an" if kind[:1].lower() in "aeiou" else "a"
    return f"{article} {kind}"


def argument_type(qualname: str, name: str, value: Any) -> Type:
    """The IR type of a runtime value (after `runtime_value`). A NumPy scalar is a 0-d tensor
    (np.float64 is a Python float too, so it is tested first)."""
    if isinstance(value, np.ndarray | np.generic):
        dtype = value.dtype.name
        if dtype not in DTYPE_TO_NAME:
            raise ArgumentError(
                f"argument '{name}' of {qualname}() has dtype {dtype}, which is not supported; "
                f"supported dtypes: {', '.join(DTYPE_TO_NAME)}"
            )
        return TensorType(dtype, tuple(value.shape))
    if is_backend_array(value):
        return _backend_array_type(qualname, name, value)
    if isinstance(value, bool):
        return BOOL
    if isinstance(value, int):
        return INT
    if isinstance(value, GENERATORS):
        return GENERATOR
    if isinstance(value, complex):
        return COMPLEX_SCALAR  # Note [Python complex numbers] in `ir.types`
    return FLOAT


def _backend_array_type(qualname: str, name: str, value: Any) -> Type:
    """The type of a Dask, CuPy or Array API array: its dtype and shape, which must be known
    (a Dask array of unknown chunk sizes has NaN in its shape)."""
    dtype = dtype_name(value.dtype)
    if dtype not in DTYPE_TO_NAME:
        raise ArgumentError(
            f"argument '{name}' of {qualname}() has dtype {dtype}, which is not supported; "
            f"supported dtypes: {', '.join(DTYPE_TO_NAME)}"
        )
    shape = tuple(value.shape)
    if not all(isinstance(d, int) for d in shape):
        raise ArgumentError(
            f"argument '{name}' of {qualname}() has shape {shape}, not known in full; "
            "for a Dask array, compute its chunk sizes first (x.compute_chunk_sizes())"
        )
    return TensorType(dtype, shape)


def numpy_scalar_positions(values: Sequence[Any]) -> str:
    """The positions of the NumPy scalars among ``values``, as `passes.functionalize` takes
    them (``"0,2"``): ``s += v`` rebinds one, where it writes into a 0-d array (Note [Numbers
    and 0-d arrays] in `passes.number_updates`). The signature key tells the two apart."""
    return ",".join(str(i) for i, value in enumerate(values) if isinstance(value, np.generic))


def strided_inputs(values: Sequence[Any]) -> str:
    """The arrays among ``values`` that are not C-contiguous, each as its position and its
    strides in bytes, as `passes.functionalize` takes them (``"0:8,24;2:-8"``)."""
    return ";".join(
        f"{i}:{','.join(str(step) for step in value.strides)}"
        for i, value in enumerate(values)
        if isinstance(value, np.ndarray) and not value.flags.c_contiguous
    )


def unknown_layouts(types: Sequence[Type]) -> str:
    """`strided_inputs` for arrays of ``types`` whose strides are not known (a scripted
    caller's values): ``"0:?;2:?"``."""
    return ";".join(f"{i}:?" for i, ty in enumerate(types) if isinstance(ty, TensorType))


def typed_graph(
    graph: Graph,
    input_types: Sequence[Type],
    number_inputs: str = "",
    strided_inputs: str = "",
    *,
    lower_tuples: bool = True,
) -> Graph:
    """``graph`` specialised to ``input_types`` and cleaned up (Note [One specialisation
    pipeline]); the inputs at ``number_inputs`` are NumPy scalars (`numpy_scalar_positions`),
    those in ``strided_inputs`` arrays that are not C-contiguous (`strided_inputs`). A plain
    call leaves tuples as they are (``lower_tuples=False``).

    >>> typed = typed_graph(scripted.graph, [TensorType("float64", (3, 4))])
    """
    steps = with_input_layouts(SPECIALISE_PIPELINE, number_inputs, strided_inputs)
    if not lower_tuples:
        steps = [step for step in steps if step[0] != "lower-tuples"]
    with gc_paused():  # Note [Compile-time cost] in autodiff.pipeline
        typed = specialise(graph, input_types)
        run_passes(typed, steps)
    return typed


def with_input_layouts(
    pipeline: Sequence[PipelineStep], number_inputs: str, strided_inputs: str
) -> list[PipelineStep]:
    """``pipeline`` with functionalisation told which inputs are NumPy scalars and which are
    arrays that are not C-contiguous (`strided_inputs`)."""
    layouts = functionalize_options(number_inputs, strided_inputs)
    return [
        (name, {**options, **layouts} if name == "functionalize" else options)
        for name, options in pipeline
    ]


def functionalize_options(number_inputs: str, strided_inputs: str) -> dict[str, str]:
    """The options that tell `passes.functionalize` the inputs' kinds and layouts (the strides
    only when some input has other strides than C-contiguous ones)."""
    options = {"number_inputs": number_inputs}
    if strided_inputs:
        options["strided_inputs"] = strided_inputs
    return options


def signature_key(values: Sequence[Any]) -> SignatureKey:
    """What compiled code depends on, per argument: its kind, and for arrays and NumPy scalars
    their dtype and shape, and an array's strides (`strided_inputs`). The values of Python
    numbers are left out on purpose.

    An array is keyed by ``(dtype, shape, strides)``, anything else by its type (a NumPy
    scalar's type names its dtype); one loop with the array case inline, since every call of a
    compiled function computes it (Note [Gradient calls] in `autodiff.gradient_call`). It takes
    values of any kind: a value `runtime_value` would convert or reject gets a key no
    compilation was stored under (its type: list, tuple, str, ...), so a hit on raw call
    arguments means they are runtime values already."""
    key: list[Hashable] = []
    append = key.append
    for v in values:  # a loop: a comprehension is a function call more in Python 3.11
        append((v.dtype, v.shape, v.strides) if type(v) is _NDARRAY else _other_key(v))
    return tuple(key)


_NDARRAY = np.ndarray


_NUMBER_KINDS = frozenset({int, float, bool, complex})


def _other_key(value: Any) -> Hashable:
    kind = type(value)
    if kind in _NUMBER_KINDS:  # the common case, before the array tests
        return cast(Hashable, kind)
    if isinstance(value, np.ndarray):  # a subclass: keyed apart, so that a call checks it
        return (type(value), value.dtype, value.shape, value.strides)
    if is_backend_array(value):  # its type names its backend: Note [Array backends]
        return (type(value), dtype_name(value.dtype), tuple(value.shape))
    return cast(Hashable, type(value))
