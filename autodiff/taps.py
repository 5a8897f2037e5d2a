"""Named intermediates: `tap` in scripted code, and the retained gradients and hooks that
``ad.grad(f, retain=..., hooks=...)`` give them.

# Note [Taps]
# ``ad.tap(value, "h")`` is ``aten::_tap(value, "h")``, the identity, whose formula passes the
# gradient through. A gradient compiled with no retained or hooked names drops every tap
# before differentiating (`prepare_taps`), so ``f`` and ``df`` are those of the function
# without them. A compilation for some names (one per set of names: Note [Compilation units]
# in `autodiff.unit`) turns those names' taps into ``aten::_tap_hooked``, whose formula's
# backward is ``aten::_run_hooks(grad, "h")``: impure, so the gradient flowing into the tapped value
# reaches it as ``df`` runs, wherever the tap is (a branch's reverse runs it only when the
# branch ran, a loop's once per iteration). The kernel is a hook point
# (`ir.ops.taps.running_hooks`) into which `HookRun` installs itself around one backward run:
# the hooks registered for the name in order, each non-None result replacing the gradient,
# then the retained gradient is recorded (after the hooks, as torch's ``retain_grad`` sees
# what the tensor's hooks returned). What the last hook returned is what ``df`` passes on to
# earlier operations.
#
# A name that may be computed more than once (tapped in a loop, or by several taps) is
# retained as a list of gradients, in the order the forward computed the values; otherwise
# as one gradient, or None when no gradient reached it (a branch not taken, a value the
# output does not depend on through the differentiated arguments), as torch leaves ``.grad``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from autodiff.errors import DifferentiationError
from ir.analysis import constant_value, in_loop, is_constant
from ir.graph import Graph, Node
from ir.ops.taps import running_hooks, tap

TAP = "aten::_tap"
TAP_HOOKED = "aten::_tap_hooked"

Hook = Callable[[Any], Any]

__all__ = [
    "HookRun",
    "check_names",
    "normalise_hooks",
    "prepare_taps",
    "repeated_names",
    "tap",
    "tap_sites",
]


def normalise_hooks(hooks: Mapping[str, Hook | Sequence[Hook]] | None) -> dict[str, list[Hook]]:
    """``hooks`` as name → list of callables, in registration order.

    >>> normalise_hooks({"h": clip, "z": [first, second]})
    {'h': [clip], 'z': [first, second]}
    """
    result: dict[str, list[Any]] = {}
    for name, fns in (hooks or {}).items():
        listed = list(fns) if isinstance(fns, list | tuple) else [fns]
        for fn in listed:
            if not callable(fn):
                raise DifferentiationError(
                    f"the hook for tap {name!r} must be callable, got {type(fn).__name__}"
                )
        result[str(name)] = listed
    return result


def tap_sites(graph: Graph) -> dict[str, list[Node]]:
    """The tap nodes of ``graph`` (nested ones included) by name, in program order. A tap
    whose name is not a constant string is refused where it is written."""
    sites: dict[str, list[Node]] = {}
    for node in graph.all_nodes():
        if node.kind not in (TAP, TAP_HOOKED):
            continue
        name = node.inputs[1]
        if not is_constant(name) or not isinstance(constant_value(name), str):
            raise DifferentiationError(
                "ad.tap needs a constant string as its name", node.source_range
            )
        sites.setdefault(constant_value(name), []).append(node)
    return sites


def check_names(qualname: str, sites: Mapping[str, list[Node]], names: Iterable[str]) -> None:
    """Refuse names no tap of the function carries, listing the ones it has."""
    unknown = [name for name in names if name not in sites]
    if unknown:
        known = ", ".join(repr(name) for name in sites) or "none"
        raise DifferentiationError(
            f"{qualname}() taps no value named {unknown[0]!r} (its taps: {known}); "
            "name an intermediate with ad.tap(value, name) in the function"
        )


def prepare_taps(graph: Graph, names: frozenset[str]) -> dict[str, bool]:
    """Before differentiating: turn the taps of ``names`` into ``aten::_tap_hooked`` and drop
    every other tap (Note [Taps]). Returns, per name of ``names``, whether it may be computed
    more than once (several taps, or one inside a loop).

    Given:   %h = aten::_tap(%t, "h"); %z = aten::_tap(%u, "z")
    Execute: prepare_taps(graph, frozenset({"h"}))
    Result:  %h = aten::_tap_hooked(%t, "h"); the uses of %z read %u
    """
    sites = tap_sites(graph)
    repeated = repeated_names(sites, names)
    for name, nodes in sites.items():
        for node in nodes:
            if name in names:
                node.kind = TAP_HOOKED
            else:
                node.output.replace_all_uses_with(node.inputs[0])
                node.destroy()
    return repeated


def repeated_names(sites: Mapping[str, list[Node]], names: Iterable[str]) -> dict[str, bool]:
    """Per name of ``names`` that ``sites`` has, whether it may be computed more than once:
    tapped by several nodes, or inside a loop."""
    return {
        name: len(sites[name]) > 1 or any(in_loop(node) for node in sites[name])
        for name in names
        if name in sites
    }


class HookRun:
    """One backward run's hooks and retained gradients (Note [Taps]).

    >>> run = HookRun({"h": [clip]}, {"h": False})
    >>> with run.active():
    ...     compiled.backward(saved, seeds)
    >>> run.retained()
    {'h': array([...])}
    """

    def __init__(self, hooks: Mapping[str, list[Hook]], retain: Mapping[str, bool]) -> None:
        self.hooks = hooks
        self.retain = retain
        self.seen: dict[str, list[Any]] = {name: [] for name in retain}

    def __call__(self, grad: Any, name: str) -> Any:
        for fn in self.hooks.get(name, ()):
            replaced = fn(grad)
            if replaced is not None:
                if np.shape(replaced) != np.shape(grad):
                    raise DifferentiationError(
                        f"the hook {getattr(fn, '__qualname__', fn)!r} on tap {name!r} "
                        f"returned shape {np.shape(replaced)} for a gradient of shape "
                        f"{np.shape(grad)}"
                    )
                grad = replaced
        if name in self.seen:
            self.seen[name].append(grad.copy() if isinstance(grad, np.ndarray) else grad)
        return grad

    @contextmanager
    def active(self) -> Any:
        with running_hooks(self):
            yield self

    def retained(self) -> dict[str, Any]:
        """Name → gradient, or a list of them in forward order for a repeated name. The
        reverse program meets the values last first, so the recorded order is turned round."""
        result: dict[str, Any] = {}
        for name, repeated in self.retain.items():
            grads = self.seen[name][::-1]
            result[name] = grads if repeated else (grads[0] if grads else None)
        return result
