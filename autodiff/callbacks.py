"""``ad.pure_callback``: arbitrary Python called from scripted code, its result a constant for
differentiation; and HIPS autograd's names for a custom gradient, ``ad.primitive`` and
``ad.defvjp``.

Note [Pure callbacks]
``ad.pure_callback(fn, result_shape, *args)`` is ``fn(*args)``. In a scripted function it is
one ``prim::PureCallback(%fn, args...)`` node (Note [Opaque calls] in
`frontend.opaque_calls`) whose result has the declared shape and dtype (``result_shape``: a
pytree of ``ad.ShapeDtype``, as JAX's ``pure_callback`` takes ``ShapeDtypeStruct``); the
result ``fn`` returns is checked against it when the node runs. The operator carries no
gradient (Note [Derivatives] in `ir.ops.registry`): what is computed from the result is a
constant for differentiation, its gradient zero, as though ``ad.stop_gradient`` were applied to
it. JAX does the same for ``pure_callback`` without a custom rule; wrap the call in
``ad.custom_vjp`` to give it one. As the name says, ``fn`` should be pure: the compiler runs it
once per call of the compiled code, never while compiling.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from autodiff.custom_vjp import CustomVjpError, CustomVjpFunction
from autodiff.opaque import Entry, function_label, register, structure_key
from frontend.errors import ScriptError
from frontend.trees import Tree, as_tuples
from ir.source import SourceRange
from ir.types import TensorType, Type

_KEYS: dict[tuple[int, Any, tuple[Any, ...]], tuple[str, Entry]] = {}


def pure_callback(callback: Callable[..., Any], result_shape: Any, *args: Any) -> Any:
    """``callback(*args)``, callable from scripted code, whose result (of the declared
    ``result_shape``) is a constant for differentiation (Note [Pure callbacks]).

    >>> def host_median(x):                       # any Python, any library
    ...     return np.float64(statistics.median(x.tolist()))
    >>> def loss(w):
    ...     m = ad.pure_callback(host_median, ad.ShapeDtype((), np.float64), w)
    ...     return np.sum((w - m) ** 2)           # d/dw treats m as a constant
    """
    return callback(*args)


def _pure_callback_node(
    static: Sequence[Any], types: Sequence[Type], where: SourceRange
) -> tuple[str, str, Type]:
    callback, result_shape = static
    if not callable(callback):
        raise ScriptError(
            f"pure_callback's first argument must be a function, not {type(callback).__name__}",
            where,
            doc="opaque-calls",
        )
    structure = (id(callback), _hashable(result_shape), structure_key(types))
    found = _KEYS.get(structure)
    if found is None or found[1].fn is not callback:
        made = _CallbackEntry(callback, types, result_shape)
        found = _KEYS[structure] = (register(function_label(callback), made), made)
    return "prim::PureCallback", found[0], found[1].result


def _hashable(spec: Any) -> Any:
    if isinstance(spec, dict):
        return tuple((key, _hashable(spec[key])) for key in sorted(spec))
    if isinstance(spec, list | tuple) and not hasattr(spec, "dtype"):
        return (type(spec), tuple(_hashable(item) for item in spec))
    return (tuple(getattr(spec, "shape", ())), str(np.dtype(getattr(spec, "dtype", None))))


pure_callback.__autodiff_static__ = 2  # type: ignore[attr-defined]
pure_callback.__autodiff_opaque__ = _pure_callback_node  # type: ignore[attr-defined]


class _CallbackEntry(Entry):
    def call(self, *args: Any) -> Any:
        result = super().call(*args)
        if self.declared is None:  # found by one run: Note [Result types of opaque functions]
            return result
        return _checked(function_label(self.fn), as_tuples(result, self.declared), self.declared)


def _checked(label: str, value: Any, declared: Type) -> Any:
    """``value`` as ``declared`` says (an array of its dtype), or an error naming ``label``."""
    if isinstance(declared, Tree):
        if not isinstance(value, tuple) or len(value) != len(declared.children):
            raise CustomVjpError(f"{label} returned a value not structured like result_shape")
        return tuple(
            _checked(label, item, child)
            for item, child in zip(value, declared.children, strict=True)
        )
    assert isinstance(declared, TensorType)
    assert declared.shape is not None
    array = np.asarray(value)
    if array.shape != declared.shape:
        raise CustomVjpError(
            f"{label} returned shape {array.shape}; its result_shape says {declared.shape}"
        )
    return array.astype(declared.dtype, copy=False)


def primitive(fun: Callable[..., Any]) -> CustomVjpFunction:
    """HIPS autograd's name for a function whose gradient ``ad.defvjp`` gives: a
    `custom_vjp`.

    >>> @ad.primitive
    ... def logsumexp(x):
    ...     return np.log(np.sum(np.exp(x)))
    >>> ad.defvjp(logsumexp, lambda ans, x: lambda g: g * np.exp(x - ans))
    """
    return CustomVjpFunction(fun)


def defvjp(
    prim: CustomVjpFunction,
    *vjpmakers: Callable[..., Any] | None,
    argnums: Sequence[int] | None = None,
) -> None:
    """Autograd's ``defvjp``: for each argument (at ``argnums``, by default the first ones), a
    ``vjpmaker(ans, *args)`` returning ``g -> cotangent``; an argument without one (or with
    None) gets no gradient."""
    if not isinstance(prim, CustomVjpFunction):
        raise TypeError("defvjp takes a function made with ad.primitive (or ad.custom_vjp)")
    positions = list(range(len(vjpmakers)) if argnums is None else argnums)
    makers = dict(zip(positions, vjpmakers, strict=True))

    def fwd(*args: Any) -> tuple[Any, Any]:
        ans = prim.fun(*args)
        return ans, (ans, args)

    def bwd(residuals: Any, g: Any) -> tuple[Any, ...]:
        ans, args = residuals
        return tuple(
            None if makers.get(i) is None else makers[i](ans, *args)(g)  # type: ignore[misc]
            for i in range(len(args))
        )

    fwd.__qualname__ = f"{function_label(prim.fun)}.fwd"
    bwd.__qualname__ = f"{function_label(prim.fun)}.bwd"
    prim.defvjp(fwd, bwd)
