"""What NumPy and Python spellings mean: the table from callables, methods and attributes to IR
operators, how their parameters fill the operator's schema, and Python objects as constants.

Functions are looked up by the object itself (``np.tanh`` under any alias, or imported with
``from numpy import tanh``); array methods and attributes by name. Each entry lists the NumPy
parameters in order, in a small notation (tinygrad-style: one line per spelling):

    a            fills the schema argument of the same name
    a:self       fills schema argument ``self``
    !out         a NumPy parameter the operator does not support (refused, naming it)
    /            the parameters before it are positional-only
    *            the parameters after it are keyword-only
    *shape       takes every positional argument: one is passed as it is, several as a tuple
                 (``x.reshape(3, 4)`` and ``x.reshape((3, 4))``)
    a *rest      after other parameters, takes the remaining positional arguments, always as
                 one tuple (``np.einsum("ij,jk", a, b)``)

Schema arguments no parameter fills keep the schema's default.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Literal

import numpy as np

from ir.ops import OPS, Schema, taps
from ir.types import BOOL, DTYPE_TO_NAME, FLOAT, INT, NONE, STR, TupleType, Type


@dataclass(frozen=True, slots=True)
class Parameter:
    name: str  # NumPy's name
    argument: str | None  # the schema argument it fills; None when not supported
    positional: bool = True
    keyword: bool = True
    varargs: bool = False


@dataclass(frozen=True, slots=True)
class Spelling:
    """One NumPy or Python spelling of an IR operator."""

    name: str  # as messages show it: "numpy.sum", "ndarray.sum"
    op: str
    params: tuple[Parameter, ...]
    method: bool = False  # the receiver fills the schema's first argument

    @property
    def schema(self) -> Schema:
        return OPS[self.op].schema


def _parameters(text: str) -> tuple[Parameter, ...]:
    params: list[Parameter] = []
    keyword_only = False
    for token in text.split():
        if token == "/":
            params = [Parameter(p.name, p.argument, keyword=False) for p in params]
            continue
        if token == "*":
            keyword_only = True
            continue
        varargs = token.startswith("*")
        supported = not token.startswith("!")
        name, _, argument = token.lstrip("*!").partition(":")
        params.append(
            Parameter(
                name,
                (argument or name) if supported else None,
                positional=not keyword_only,
                keyword=not varargs,
                varargs=varargs,
            )
        )
    return tuple(params)


def _function(name: str, op: str, params: str) -> Spelling:
    return Spelling(f"numpy.{name}", op, _parameters(params))


def _method(name: str, op: str, params: str) -> Spelling:
    return Spelling(f"ndarray.{name}", op, _parameters(params), method=True)


_UFUNC_KEYWORDS = "* !out !where !casting !order !dtype !subok"
_REDUCTION_PARAMS = {
    "sum": "a:self axis !dtype !out keepdims !initial !where",
    "prod": "a:self axis !dtype !out keepdims !initial !where",
    "mean": "a:self axis !dtype !out keepdims * !where",
    "max": "a:self axis !out keepdims !initial !where",
    "min": "a:self axis !out keepdims !initial !where",
    "var": "a:self axis !dtype !out ddof keepdims * !where !mean !correction",
    "std": "a:self axis !dtype !out ddof keepdims * !where !mean !correction",
    "argmax": "a:self axis !out * keepdims",
    "argmin": "a:self axis !out * keepdims",
}

UNARY_UFUNCS: dict[str, str] = {
    "negative": "neg",
    "positive": "positive",
    "exp": "exp",
    "log": "log",
    "sqrt": "sqrt",
    "sin": "sin",
    "cos": "cos",
    "frexp": "frexp",
    "tan": "tan",
    "tanh": "tanh",
    "absolute": "abs",
    "abs": "abs",
    "sign": "sign",
    "reciprocal": "reciprocal",
    "square": "square",
    "logical_not": "logical_not",
    "exp2": "exp2",
    "expm1": "expm1",
    "log2": "log2",
    "log10": "log10",
    "log1p": "log1p",
    "arcsin": "arcsin",
    "arccos": "arccos",
    "arctan": "arctan",
    "sinh": "sinh",
    "cosh": "cosh",
    "arcsinh": "arcsinh",
    "arccosh": "arccosh",
    "arctanh": "arctanh",
    "deg2rad": "deg2rad",
    "radians": "deg2rad",
    "rad2deg": "rad2deg",
    "degrees": "rad2deg",
    "fabs": "fabs",
    "floor": "floor",
    "ceil": "ceil",
    "trunc": "trunc",
    "isnan": "isnan",
    "isfinite": "isfinite",
    "isinf": "isinf",
}
BINARY_UFUNCS: dict[str, str] = {
    "add": "add",
    "subtract": "sub",
    "multiply": "mul",
    "divide": "div",
    "true_divide": "div",
    "floor_divide": "floordiv",
    "remainder": "remainder",
    "mod": "remainder",
    "power": "pow",
    "pow": "pow",
    "maximum": "maximum",
    "minimum": "minimum",
    "equal": "eq",
    "not_equal": "ne",
    "less": "lt",
    "less_equal": "le",
    "greater": "gt",
    "greater_equal": "ge",
    "logical_and": "logical_and",
    "logical_or": "logical_or",
    "logical_xor": "logical_xor",
    "arctan2": "arctan2",
    "hypot": "hypot",
    "logaddexp": "logaddexp",
    "logaddexp2": "logaddexp2",
    "fmax": "fmax",
    "fmin": "fmin",
    "matmul": "matmul",
}
OTHER_FUNCTIONS: dict[str, tuple[str, str]] = {
    "amax": ("aten::max", _REDUCTION_PARAMS["max"]),
    "amin": ("aten::min", _REDUCTION_PARAMS["min"]),
    "dot": ("aten::dot", "a:self b:other !out"),
    "where": ("aten::where", "condition x y /"),
    "clip": ("aten::clip", "a:self a_min a_max !out"),
    "sinc": ("aten::sinc", "x:self"),
    "nan_to_num": ("aten::nan_to_num", "x:self !copy nan posinf neginf"),
    "round": ("aten::round", "a:self decimals !out"),
    "around": ("aten::round", "a:self decimals !out"),
    "cumsum": ("aten::cumsum", "a:self axis !dtype !out"),
    "diff": ("aten::diff", "a:self n axis !prepend !append"),
    "argsort": ("aten::argsort", "a:self axis kind !order * stable"),
    "zeros": ("aten::zeros", "shape dtype !order * !device !like"),
    "ones": ("aten::ones", "shape dtype !order * !device !like"),
    "full": ("aten::full", "shape fill_value dtype !order * !device !like"),
    "arange": ("aten::arange", "start stop step dtype * !device !like"),
    "eye": ("aten::eye", "N M k dtype !order * !device !like"),
    "zeros_like": ("aten::zeros_like", "a:self dtype !order !subok !shape * !device"),
    "ones_like": ("aten::ones_like", "a:self dtype !order !subok !shape * !device"),
    "full_like": ("aten::full_like", "a:self fill_value dtype !order !subok !shape * !device"),
    "reshape": ("aten::reshape", "a:self / shape !order * !copy"),
    "transpose": ("aten::transpose", "a:self axes"),
    "squeeze": ("aten::squeeze", "a:self axis"),
    "expand_dims": ("aten::expand_dims", "a:self axis"),
    "ravel": ("aten::ravel", "a:self !order"),
    "broadcast_to": ("aten::broadcast_to", "array:self shape !subok"),
    "concatenate": ("aten::concatenate", "arrays:tensors / axis !out * !dtype !casting"),
    "concat": ("aten::concatenate", "arrays:tensors / axis !out * !dtype !casting"),
    "stack": ("aten::stack", "arrays:tensors axis !out * !dtype !casting"),
    "moveaxis": ("aten::moveaxis", "a:self source destination"),
    "swapaxes": ("aten::swapaxes", "a:self axis1 axis2"),
    "rollaxis": ("aten::rollaxis", "a:self axis start"),
    "atleast_1d": ("aten::atleast_1d", "arys:self /"),
    "atleast_2d": ("aten::atleast_2d", "arys:self /"),
    "atleast_3d": ("aten::atleast_3d", "arys:self /"),
    "hstack": ("aten::hstack", "tup:tensors * !dtype !casting"),
    "vstack": ("aten::vstack", "tup:tensors * !dtype !casting"),
    "split": ("aten::split", "ary:self indices_or_sections axis"),
    "array_split": ("aten::array_split", "ary:self indices_or_sections axis"),
    "hsplit": ("aten::hsplit", "ary:self indices_or_sections"),
    "vsplit": ("aten::vsplit", "ary:self indices_or_sections"),
    "dsplit": ("aten::dsplit", "ary:self indices_or_sections"),
    "repeat": ("aten::repeat", "a:self repeats axis"),
    "tile": ("aten::tile", "A:self reps"),
    "pad": (
        "aten::pad",
        "array:self pad_width mode * !stat_length constant_values !end_values !reflect_type",
    ),
    "flip": ("aten::flip", "m:self axis"),
    "fliplr": ("aten::fliplr", "m:self"),
    "flipud": ("aten::flipud", "m:self"),
    "rot90": ("aten::rot90", "m:self k axes"),
    "roll": ("aten::roll", "a:self shift axis"),
    "diag": ("aten::diag", "v:self k"),
    "diagonal": ("aten::diagonal", "a:self offset axis1 axis2"),
    "trace": ("aten::trace", "a:self offset axis1 axis2 !dtype !out"),
    "tril": ("aten::tril", "m:self k"),
    "triu": ("aten::triu", "m:self k"),
    "take": ("aten::take", "a:self indices axis !out !mode"),
    "tensordot": ("aten::tensordot", "a:self b:other axes"),
    "einsum": ("aten::einsum", "subscripts *operands * !out !dtype !order !casting !optimize"),
    "inner": ("aten::inner", "a:self b:other /"),
    "outer": ("aten::outer", "a:self b:other !out"),
    "kron": ("aten::kron", "a:self b:other"),
    "cross": ("aten::cross", "a:self b:other !axisa !axisb !axisc !axis"),
    "sort": ("aten::sort", "a:self axis kind !order * stable"),
    "partition": ("aten::partition", "a:self kth axis !kind !order"),
    "argpartition": ("aten::argpartition", "a:self kth axis !kind !order"),
    "astype": ("aten::astype", "x:self dtype / * !copy !device"),
    "copy": ("aten::copy", "a:self !order !subok"),
    # np.array of an array copies it; of a list or tuple literal it stacks the items, as does
    # np.asarray (`CallEmitter.emit_array`, Note [Python numbers as arrays] in frontend.calls).
    "array": ("aten::copy", "object:self !dtype * !copy !order !subok !ndmin !like"),
    "real": ("aten::real", "val:self"),
    "imag": ("aten::imag", "val:self"),
    "conj": ("aten::conj", f"x:self / {_UFUNC_KEYWORDS}"),
    "conjugate": ("aten::conj", f"x:self / {_UFUNC_KEYWORDS}"),
    "shape": ("aten::shape", "a:self"),
    "ndim": ("aten::ndim", "a:self"),
    "size": ("aten::size", "a:self !axis"),
}


# ``np.linalg`` functions, found by identity like the others (``np.linalg.norm`` resolves to the
# function object, whatever the module is called in the user's globals).
LINALG_FUNCTIONS: dict[str, tuple[str, str]] = {
    "inv": ("aten::linalg_inv", "a:self"),
    "det": ("aten::linalg_det", "a:self"),
    "slogdet": ("aten::linalg_slogdet", "a:self"),
    "solve": ("aten::linalg_solve", "a:self b:other"),
    "cholesky": ("aten::linalg_cholesky", "a:self / * !upper"),
    "eigh": ("aten::linalg_eigh", "a:self !UPLO"),
    "svd": ("aten::linalg_svd", "a:self full_matrices compute_uv !hermitian"),
    "pinv": ("aten::linalg_pinv", "a:self !rcond !hermitian * !rtol"),
    "norm": ("aten::linalg_norm", "x:self ord axis keepdims"),
}

# ``np.fft`` functions, found by identity like ``np.linalg``'s. The shape argument ``s`` of the
# multi-axis transforms is not supported.
FFT_FUNCTIONS: dict[str, tuple[str, str]] = {
    "fftshift": ("aten::fft_fftshift", "x:self axes"),
    "ifftshift": ("aten::fft_ifftshift", "x:self axes"),
    "fft": ("aten::fft_fft", "a:self n axis norm !out"),
    "ifft": ("aten::fft_ifft", "a:self n axis norm !out"),
    "rfft": ("aten::fft_rfft", "a:self n axis norm !out"),
    "irfft": ("aten::fft_irfft", "a:self n axis norm !out"),
    "fft2": ("aten::fft_fft2", "a:self !s axes norm !out"),
    "ifft2": ("aten::fft_ifft2", "a:self !s axes norm !out"),
    "fftn": ("aten::fft_fftn", "a:self !s axes norm !out"),
    "ifftn": ("aten::fft_ifftn", "a:self !s axes norm !out"),
}


def _numpy_functions() -> dict[object, Spelling]:
    table: dict[object, Spelling] = {}
    entries: list[tuple[str, str, str]] = []
    for name, op in UNARY_UFUNCS.items():
        entries.append((name, f"aten::{op}", f"x:self / {_UFUNC_KEYWORDS}"))
    for name, op in BINARY_UFUNCS.items():
        entries.append((name, f"aten::{op}", f"x1:self x2:other / {_UFUNC_KEYWORDS}"))
    for name, params in _REDUCTION_PARAMS.items():
        entries.append((name, f"aten::{name}", params))
    entries.extend((name, op, params) for name, (op, params) in OTHER_FUNCTIONS.items())
    for name, op, params in entries:
        obj = getattr(np, name, None)
        if obj is not None and obj not in table:  # aliases (np.abs is np.absolute) keep the first
            table[obj] = _function(name, op, params)
    for name, (op, params) in LINALG_FUNCTIONS.items():
        table[getattr(np.linalg, name)] = _function(f"linalg.{name}", op, params)
    for name, (op, params) in FFT_FUNCTIONS.items():
        table[getattr(np.fft, name)] = _function(f"fft.{name}", op, params)
    return table


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
            params = " ".join(argument.name for argument in OPS[names[0]].schema.arguments)
            table[kernel] = _function(getattr(kernel, "__name__", names[0]), names[0], params)


NUMPY_FUNCTIONS: dict[object, Spelling] = _numpy_functions()
# The project's own functions a scripted function may call (``ad.tap``, re-exported by
# `autodiff`): each is its operator's kernel, so the plain Python function runs it too.
NUMPY_FUNCTIONS[taps.tap] = Spelling("autodiff.tap", "aten::_tap", _parameters("value:self name"))
_kernel_spellings(NUMPY_FUNCTIONS)

METHODS: dict[str, Spelling] = {
    "sum": _method("sum", "aten::sum", "axis !dtype !out * keepdims !initial !where"),
    "prod": _method("prod", "aten::prod", "axis !dtype !out * keepdims !initial !where"),
    "mean": _method("mean", "aten::mean", "axis !dtype !out * keepdims !where"),
    "max": _method("max", "aten::max", "axis !out * keepdims !initial !where"),
    "min": _method("min", "aten::min", "axis !out * keepdims !initial !where"),
    "var": _method("var", "aten::var", "axis !dtype !out ddof * keepdims !where !mean"),
    "std": _method("std", "aten::std", "axis !dtype !out ddof * keepdims !where !mean"),
    "argmax": _method("argmax", "aten::argmax", "axis !out * keepdims"),
    "argmin": _method("argmin", "aten::argmin", "axis !out * keepdims"),
    "cumsum": _method("cumsum", "aten::cumsum", "axis !dtype !out"),
    "argsort": _method("argsort", "aten::argsort", "axis kind !order * stable"),
    "argpartition": _method("argpartition", "aten::argpartition", "kth axis !kind !order"),
    "round": _method("round", "aten::round", "decimals !out"),
    "reshape": _method("reshape", "aten::reshape", "*shape * !order !copy"),
    "transpose": _method("transpose", "aten::transpose", "*axes"),
    "squeeze": _method("squeeze", "aten::squeeze", "axis"),
    "ravel": _method("ravel", "aten::ravel", "!order"),
    "flatten": _method("flatten", "aten::flatten", "!order"),
    "swapaxes": _method("swapaxes", "aten::swapaxes", "axis1 axis2"),
    "repeat": _method("repeat", "aten::repeat", "repeats axis"),
    "take": _method("take", "aten::take", "indices axis !out !mode"),
    "diagonal": _method("diagonal", "aten::diagonal", "offset axis1 axis2"),
    "trace": _method("trace", "aten::trace", "offset axis1 axis2 !dtype !out"),
    "astype": _method("astype", "aten::astype", "dtype !order !casting !subok !copy"),
    "copy": _method("copy", "aten::copy_method", "!order"),
    "dot": _method("dot", "aten::dot", "b:other !out"),
    "clip": _method("clip", "aten::clip", "min:a_min max:a_max !out"),
}

# Array attributes: ``x.T`` is a transpose with the default (reversed) axes; ``x.real`` and
# ``x.imag`` are views of a complex array's parts (Note [Views] in `ir.ops.views`).
ATTRIBUTES: dict[str, str] = {
    "T": "aten::transpose",
    "real": "aten::real",
    "imag": "aten::imag",
    "shape": "aten::shape",
    "ndim": "aten::ndim",
    "size": "aten::size",
}

# Python builtins the emitter lowers itself (scalar or array operator depending on the operands).
Builtin = Literal["len", "abs", "min", "max", "float", "int", "bool", "range", "print"]
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
    numbers, bools, strings, None and tuples of them (module constants like ``EPS = 1e-5``,
    ``np.pi``, ``np.newaxis``), and dtypes, which become their name (``np.float32``)."""
    if obj is None:
        return None, NONE
    if isinstance(obj, bool):
        return obj, BOOL
    if isinstance(obj, int):
        return int(obj), INT
    if isinstance(obj, float):
        return float(obj), FLOAT
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
