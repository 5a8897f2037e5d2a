"""Switches that watch or change what a compiled gradient's runs do: anomaly mode and saved-value
hooks here, the profiler in `autodiff.profiler`.

# Note [Instrumented runs]
# Anomaly mode and the profiler see every kernel node of ``f`` and ``df`` through an observer
# (Note [Observers] in `ir.interpreter`), an option of the generated code (Note [Observed
# code] in `ir.codegen`). A `CompiledGradient` keeps a second pair of generated functions,
# compiled from its `Gradient` with a `NodeDispatch` as observer (``df`` with the seed as an
# input: Note [Seeded df] in `autodiff.runtime`), built the first time a run happens while
# some node hook is active (`node_hooks_active`); otherwise it runs its plain executables, so
# a program that uses none of this pays one truth test of a list per run. While node hooks or
# saved-value hooks are on, ``grad`` calls take `CompiledGradient.forward` and ``backward``
# rather than their `GradientCall` (Note [Gradient calls] in `autodiff.gradient_call`).
# The dispatch reads the active hooks at each node, so one instrumented pair serves every
# combination of them. Hooks are process-wide (not per thread), like the switches of NumPy's
# ``errstate`` are not.
#
# Saved-value hooks change what `Saved` holds between ``f`` and ``df``: `CompiledGradient.forward`
# packs every array ``f`` hands to ``df`` (also those inside a loop's tape lists) with the
# innermost active pair's ``pack``, and ``df`` gets them back through that pair's ``unpack``,
# remembered in the `Saved`, so a backward run after the ``with`` block still unpacks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from autodiff.errors import AnomalyError
from ir.graph import Node
from ir.interpreter import AUTOGRAD_ZERO
from ir.printer import print_node

# hook(graph_label, node, kernel, args) -> kernel(*args): what anomaly mode and profilers add.
NodeHook = Callable[[str, Node, Callable[..., Any], tuple[Any, ...]], Any]

_NODE_HOOKS: list[NodeHook] = []
_SAVED_HOOKS: list[tuple[Callable[[Any], Any], Callable[[Any], Any]]] = []


def node_hooks_active() -> bool:
    """Whether some run must go through the instrumented executables."""
    return bool(_NODE_HOOKS)


@contextmanager
def node_hook(hook: NodeHook) -> Iterator[None]:
    """Run every kernel node of compiled gradients through ``hook`` inside the block."""
    _NODE_HOOKS.append(hook)
    try:
        yield
    finally:
        _NODE_HOOKS.remove(hook)


class NodeDispatch:
    """The observer of an instrumented ``f`` or ``df``: runs a node through the active hooks,
    the earliest entered outermost. See Note [Instrumented runs]."""

    __slots__ = ("label",)

    def __init__(self, label: str) -> None:
        self.label = label  # "f" or "df"

    def __call__(self, node: Node, kernel: Callable[..., Any], args: tuple[Any, ...]) -> Any:
        return self._run(tuple(_NODE_HOOKS), node, kernel, args)

    def _run(
        self,
        hooks: tuple[NodeHook, ...],
        node: Node,
        kernel: Callable[..., Any],
        args: tuple[Any, ...],
    ) -> Any:
        if not hooks:
            return kernel(*args)
        first, rest = hooks[0], hooks[1:]

        def inner(*values: Any) -> Any:
            return self._run(rest, node, kernel, values)

        return first(self.label, node, inner, args)


# -- anomaly mode ----------------------------------------------------------------------------


@contextmanager
def detect_anomaly() -> Iterator[None]:
    """Inside the block, a node of a compiled gradient's ``f`` or ``df`` that produces NaN or
    inf raises `AnomalyError` naming the operation — for ``df``, the forward operation whose
    derivative it computes — with the user's source line and a caret.

    >>> with ad.detect_anomaly():
    ...     ad.grad(f)(np.zeros(3))
    Traceback (most recent call last):
    autodiff.errors.AnomalyError: model.py:4:11: error: the gradient of aten::sqrt produced inf
    (in df, at aten::div; anomaly mode)
      while executing %5 = aten::div(%dy, %4)
        return np.sum(np.sqrt(x))
                      ^^^^^^^^^^
    """
    with node_hook(_check_finite):
        yield


def _check_finite(label: str, node: Node, kernel: Callable[..., Any], args: tuple[Any, ...]) -> Any:
    # A NaN or inf is reported here, naming the node and the user's line; NumPy's
    # RuntimeWarning about it ("divide by zero encountered") would only come first, pointing
    # into the compiler.
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        result = kernel(*args)
    found = _non_finite(result)
    if found is not None:
        raise anomaly_error(label, node, found)
    return result


def anomaly_error(label: str, node: Node, found: str) -> AnomalyError:
    """The error for ``node`` of graph ``label`` ("f" or "df") having produced ``found``."""
    where = node.source_range
    forward = where.gradient_of if where is not None else None
    if forward is not None:  # also in f, where it computes a gradient the function takes
        message = (
            f"the gradient of {forward} produced {found} (in {label}, at {node.kind}; anomaly mode)"
        )
    elif label == "df":
        message = f"{node.kind} produced {found} in df, the gradient program (anomaly mode)"
    else:
        message = f"{node.kind} produced {found} in f, the forward program (anomaly mode)"
    error = AnomalyError(message, where)
    error.add_note_line(f"while executing {print_node(node)}")
    return error


def _non_finite(value: Any) -> str | None:
    """ "nan" or "inf" when ``value`` (an array, a number, or a list or tuple of them) holds
    one, else None."""
    if isinstance(value, np.ndarray | np.generic | float | complex) and value is not AUTOGRAD_ZERO:
        if np.asarray(value).dtype.kind not in "fc":
            return None
        if np.isfinite(value).all():
            return None
        return "nan" if np.isnan(value).any() else "inf"
    if isinstance(value, list | tuple):
        for item in value:
            found = _non_finite(item)
            if found is not None:
                return found
    return None


# -- saved-value hooks -----------------------------------------------------------------------


@contextmanager
def saved_value_hooks(
    pack: Callable[[np.ndarray], Any], unpack: Callable[[Any], np.ndarray]
) -> Iterator[None]:
    """Inside the block, each array a compiled gradient's ``f`` hands to ``df`` is kept as
    ``pack(array)``, and ``df`` gets ``unpack(packed)`` back (as PyTorch's
    ``saved_tensors_hooks``). See Note [Instrumented runs].

    >>> def pack(a):
    ...     return a.dtype, a.astype(np.float16)        # half the bytes between f and df
    >>> def unpack(packed):
    ...     dtype, half = packed
    ...     return half.astype(dtype)
    >>> with ad.saved_value_hooks(pack, unpack):
    ...     dw = ad.grad(loss)(w, x, y)
    """
    pair = (pack, unpack)
    _SAVED_HOOKS.append(pair)
    try:
        yield
    finally:
        _SAVED_HOOKS.remove(pair)


def current_saved_hooks() -> tuple[Callable[[Any], Any], Callable[[Any], Any]] | None:
    """The innermost active (pack, unpack) pair, or None."""
    return _SAVED_HOOKS[-1] if _SAVED_HOOKS else None


class Packed:
    """What ``pack`` returned for one saved array, told apart from values ``f`` saved as they
    are (numbers, or a pack result that happens to be a tuple)."""

    __slots__ = ("content", "source_id")

    def __init__(self, content: Any, source: np.ndarray) -> None:
        self.content = content
        self.source_id = id(source)  # to tell a new array from the packed one returned as is


def pack_value(value: Any, pack: Callable[[Any], Any]) -> Any:
    """``value`` with every array in it (through lists and tuples) packed."""
    if isinstance(value, np.ndarray):
        return Packed(pack(value), value)
    if isinstance(value, list | tuple):
        return type(value)(pack_value(item, pack) for item in value)
    return value


def unpack_value(value: Any, unpack: Callable[[Any], Any]) -> Any:
    """The inverse of `pack_value`, through ``unpack``."""
    if isinstance(value, Packed):
        return unpack(value.content)
    if isinstance(value, list | tuple):
        return type(value)(unpack_value(item, unpack) for item in value)
    return value


def held_arrays(value: Any) -> Iterator[np.ndarray]:
    """The arrays ``value`` holds: through lists, tuples and what `pack_value` made."""
    if isinstance(value, np.ndarray):
        yield value
    elif isinstance(value, Packed):
        yield from held_arrays(value.content)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from held_arrays(item)
