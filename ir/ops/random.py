"""Random draws: ``np.random.randn(3)``, ``rng.normal(mu, sigma, size=4)`` as
``prim::Draw(source, method, args...)``.

Note [Random draws]
A draw runs when the compiled code runs, from the stream the plain function draws from: the
global one of ``np.random`` (``source`` None), or the ``np.random.Generator`` or
``RandomState`` given as an argument or read from a global or a closure (a hidden input, read
at each call: Note [Free variables] in `frontend.compile`). It is impure, so no pass merges,
folds, hoists, drops or reorders draws: they consume the stream in program order, and the same
seed gives the same draws and the same value as the plain function. A draw is not
differentiated: a gradient flows through what is computed from the sample (``mu + sigma *
rng.standard_normal(...)``, the reparameterised sample), and ``df`` reads the sample ``f``
drew, as it reads any value it captures. A draw whose parameters need a gradient
(``rng.normal(mu, sigma)`` with ``mu`` differentiated) is refused where it is written: NumPy's
sampler has no derivative, and a zero would be a silent wrong gradient.

Each method's parameters are listed in `METHODS`, in NumPy's order; the frontend passes them
all by position, defaults filled in, so that the kernel is ``getattr(source, method)(*args)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ir.ops.registry import NOT_CONSTANT, Derivative, register_op
from ir.ops.shape_rules import int_sequence
from ir.types import ANY, FLOAT, INT, NONE, TensorType, Type

# The methods a draw may call, with their parameters (name, default) in NumPy's order; None
# as a parameter list: any number of ints (``randn(2, 3)``). The draws' dtype: float64, or
# int64 for the integer ones.
METHODS: dict[str, tuple[tuple[str, Any], ...] | None] = {
    "randn": None,
    "rand": None,
    "normal": (("loc", 0.0), ("scale", 1.0), ("size", None)),
    "uniform": (("low", 0.0), ("high", 1.0), ("size", None)),
    "standard_normal": (("size", None),),
    "random": (("size", None),),
    "random_sample": (("size", None),),
    "randint": (("low", NOT_CONSTANT), ("high", None), ("size", None)),
    "integers": (("low", NOT_CONSTANT), ("high", None), ("size", None)),
}
_INTEGER_METHODS = frozenset({"randint", "integers"})
# The parameters of a method that shape its draws elementwise (a NumPy array of them gives
# one draw per element).
_SHAPING = {"normal": 2, "uniform": 2, "randint": 2, "integers": 2}


def draw(source: Any, method: str, *args: Any) -> Any:
    """``method(*args)`` of the generator ``source``, or of ``np.random``'s global stream."""
    owner = np.random if source is None else source
    return getattr(owner, method)(*args)


def _draw_rule(types: Sequence[Type], consts: Sequence[Any]) -> Sequence[Type]:
    method = consts[1]
    if method not in METHODS:  # not known while compiling: any draw
        return [ANY]
    args, arg_types = list(consts[2:]), list(types[2:])
    integer = method in _INTEGER_METHODS
    dtype = "int64" if integer else "float64"
    if METHODS.get(method, ()) is None:  # randn(d0, d1, ...)
        if not args:
            return [FLOAT]
        dims = tuple(d if isinstance(d, int) else None for d in args)
        return [TensorType(dtype, dims)]
    size, size_type = args[-1], arg_types[-1]
    if size_type != NONE:  # size given: it is the shape of the draws
        return [TensorType(dtype, int_sequence(size_type, size))]
    shaping = arg_types[: _SHAPING.get(method, 0)]
    arrays = [t for t in shaping if isinstance(t, TensorType)]
    if not arrays:  # one draw: a Python number, as NumPy gives it
        if method == "integers":
            return [TensorType("int64", ())]
        return [INT if integer else FLOAT]
    shapes = [t.shape for t in arrays]
    if any(s is None or None in s for s in shapes):
        return [TensorType(dtype, None)]
    return [TensorType(dtype, tuple(np.broadcast_shapes(*shapes)))]  # type: ignore[arg-type]


# Impure (Note [Random draws]); REFUSED: a gradient through the draw's parameters is refused.
register_op(
    "prim::Draw(Any? source, str method, Any... args) -> Any",
    shape=_draw_rule,
    pure=False,
    derivative=Derivative.REFUSED,
    refused_because=(
        "a random draw has no derivative with respect to its parameters: draw a standard "
        "sample and transform it, as in mu + sigma * rng.standard_normal(size)"
    ),
)(draw)
