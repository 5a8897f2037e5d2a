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

Note [Draws of rows]
``rng.choice(a, ...)`` and ``rng.permutation(a)`` of an array pick rows of ``a``: NumPy draws
positions along the first axis exactly as ``rng.choice(len(a), ...)`` and
``rng.permutation(len(a))`` do, the same numbers from the same stream, and returns ``a`` at
them (checked for Generator, RandomState and the global stream, with and without ``size``,
``replace`` and ``p``; ``rng.shuffle(a)`` likewise leaves ``a[rng.permutation(len(a))]`` in
``a``). So the frontend draws the positions, ``prim::Draw(source, "choice_rows", shape(a),
size, replace, p)`` or ``"permutation_rows"``, and indexes ``a`` with them: a gradient reaches
the chosen rows through the indexing. The kernel is given the shape rather than the length so
that it can refuse what NumPy does differently: a 0-d ``a``, which NumPy reads as an int, and a
many-dimensional ``a`` for RandomState's choice, which NumPy refuses.

Note [Generators made inside]
``np.random.default_rng(seed)``, ``np.random.RandomState(seed)`` and
``np.random.Generator(np.random.PCG64(seed))`` in a compiled function are
``prim::MakeGenerator(kind, seed)``: a new generator each time the node runs, seeded as the plain
function seeds it (``None``: fresh entropy each call). It is impure like a draw, so two equal
constructions stay two generators and none is folded into a constant or hoisted out of a loop.
``np.random.seed(s)`` is a ``prim::Draw`` of the global stream (method ``seed``): it reseeds the
stream at its place in program order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ir.errors import ShapeError
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
    "choice": (("a", NOT_CONSTANT), ("size", None), ("replace", True), ("p", None)),
    "permutation": (("x", NOT_CONSTANT),),
    "seed": (("seed", None),),
}
# Positions along the first axis of an array argument, whose shape replaces it (Note [Draws of
# rows]); the frontend emits these, a user cannot call them.
ROW_METHODS: dict[str, tuple[tuple[str, Any], ...]] = {
    "choice_rows": (("a", NOT_CONSTANT), ("size", None), ("replace", True), ("p", None)),
    "permutation_rows": (("x", NOT_CONSTANT),),
}
_INTEGER_METHODS = frozenset(
    {"randint", "integers", "choice", "permutation", "choice_rows", "permutation_rows"}
)
# The parameters of a method that shape its draws elementwise (a NumPy array of them gives
# one draw per element).
_SHAPING = {"normal": 2, "uniform": 2, "randint": 2, "integers": 2}


def draw(source: Any, method: str, *args: Any) -> Any:
    """``method(*args)`` of the generator ``source``, or of ``np.random``'s global stream."""
    owner = np.random if source is None else source
    if method == "choice_rows":
        shape, *rest = args
        _check_rows(shape, "choice")
        if len(shape) > 1 and not isinstance(owner, np.random.Generator):
            raise ValueError("a must be 1-dimensional")  # RandomState's own refusal
        return owner.choice(shape[0], *rest)
    if method == "permutation_rows":
        (shape,) = args
        _check_rows(shape, "permutation")
        return owner.permutation(shape[0])
    return getattr(owner, method)(*args)


def _check_rows(shape: tuple[int, ...], method: str) -> None:
    if not shape:  # NumPy would read a 0-d array as an int: not the rows this draw picks
        raise ValueError(
            f"{method}() of a 0-d array is not supported: pass an int, as in {method}(int(a))"
        )


def make_generator(kind: str, seed: Any) -> Any:
    """A new generator, as ``np.random.<kind>(seed)`` or ``Generator(<kind>(seed))`` for a bit
    generator (Note [Generators made inside])."""
    if kind in ("default_rng", "RandomState"):
        return getattr(np.random, kind)(seed)
    return np.random.Generator(getattr(np.random, kind)(seed))


def _draw_rule(types: Sequence[Type], consts: Sequence[Any]) -> Sequence[Type]:
    method = consts[1]
    if method == "seed":
        return [NONE]
    if method not in METHODS and method not in ROW_METHODS:  # not known while compiling
        return [ANY]
    args, arg_types = list(consts[2:]), list(types[2:])
    if method in ROW_METHODS and args[0] == ():
        raise ShapeError(
            f"{method[: -len('_rows')]}() of a 0-d array is not supported (NumPy reads it as an "
            "int): pass an int, as in int(a), or an array of at least one dimension"
        )
    if method in ("permutation", "permutation_rows"):
        return [TensorType("int64", (_permutation_length(method, arg_types[0], args[0]),))]
    integer = method in _INTEGER_METHODS
    dtype = "int64" if integer else "float64"
    if METHODS.get(method, ()) is None:  # randn(d0, d1, ...)
        if not args:
            return [FLOAT]
        dims = tuple(d if isinstance(d, int) else None for d in args)
        return [TensorType(dtype, dims)]
    params = METHODS.get(method) or ROW_METHODS[method]
    at = [name for name, _ in params].index("size")
    size, size_type = args[at], arg_types[at]
    if size_type != NONE:  # size given: it is the shape of the draws
        return [TensorType(dtype, int_sequence(size_type, size))]
    if method in ("choice", "choice_rows"):  # one position: a Python int
        return [INT]
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


def _permutation_length(method: str, ty: Type, value: Any) -> int | None:
    if method == "permutation":
        return value if isinstance(value, int) and not isinstance(value, bool) else None
    shape = int_sequence(ty, value)  # the shape of the array whose rows are permuted
    return shape[0] if shape else None


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


# Impure: each run makes a new generator (Note [Generators made inside]).
register_op(
    "prim::MakeGenerator(str kind, Any? seed) -> Generator",
    shape=None,
    pure=False,
    derivative=Derivative.NONE,
)(make_generator)
