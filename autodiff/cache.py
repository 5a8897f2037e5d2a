"""Bounded compilation caches, and the warning for a function compiled for many signatures.

# Note [Cache bounds]
# A function's compiled code lives in one cache keyed by call signature, its compilation
# units (`ScriptFunction.cache`: Note [Compilation units] in `autodiff.unit`), next to
# `ScriptFunction.parsed` (graphs per Python-number or gradient argument types). A function
# called with ever new shapes would fill them without end, each unit some tens of KB, so each
# is a `CompilationCache`: least recently used first out, at most `cache_size()` entries
# (DEFAULT_CACHE_SIZE, or ``AUTODIFF_CACHE_SIZE`` in the environment, or
# ``ad.set_cache_size(n)``; a new size applies from each cache's next compilation). A unit
# evicted is compiled again when its signature comes back. What ``ad.vjp`` scripted for a
# plain function is kept on the function (`scripted_for` in `autodiff.script`), so it goes
# with the function.
#
# A hit must stay cheap (the call overhead of Note [Gradient calls] in `autodiff.gradient_call`): a
# lookup is the dict's own ``get``, and a hit marks its entry as recently used only when the
# cache holds more than one, so the common function with one signature pays a ``len`` and
# nothing else.
#
# Many signatures are usually a mistake (a batch dimension that changes each step, a list that
# grows), as ``torch.compile`` says with its ``recompile_limit`` (8): the cache that counts
# compilations warns once, with a `RecompileWarning` naming the function, when one function has
# been compiled for more than `recompile_limit()` signatures (DEFAULT_RECOMPILE_LIMIT, or
# ``AUTODIFF_RECOMPILE_LIMIT``, or ``ad.set_recompile_limit(n)``). Evicted and compiled again
# counts again: it is compile time spent as well.
"""

from __future__ import annotations

import os
import warnings
from collections import OrderedDict
from collections.abc import Hashable
from typing import TypeVar

DEFAULT_CACHE_SIZE = 32
"""Compiled signatures kept per function and per cache (Note [Cache bounds])."""

DEFAULT_RECOMPILE_LIMIT = 8
"""Compilations of one function past which a `RecompileWarning` is given (Note [Cache bounds])."""


class RecompileWarning(UserWarning):
    """One function has been compiled for many call signatures: each costs compile time and
    memory. Silence it with ``warnings.filterwarnings("ignore", category=ad.RecompileWarning)``
    or raise the limit with ``ad.set_recompile_limit(n)``."""


def _from_environment(name: str, default: int) -> int:
    text = os.environ.get(name)
    if text is None:
        return default
    try:
        return _checked(name, int(text))
    except ValueError as error:
        raise ValueError(f"{name}={text!r}: expected a positive integer") from error


def _checked(name: str, size: int) -> int:
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise ValueError(f"{name} must be a positive integer, got {size!r}")
    return size


_cache_size = _from_environment("AUTODIFF_CACHE_SIZE", DEFAULT_CACHE_SIZE)
_recompile_limit = _from_environment("AUTODIFF_RECOMPILE_LIMIT", DEFAULT_RECOMPILE_LIMIT)


def cache_size() -> int:
    """How many compiled signatures each cache keeps per function."""
    return _cache_size


def set_cache_size(size: int) -> None:
    """Keep at most ``size`` compiled signatures per function and cache, least recently used
    first out (default DEFAULT_CACHE_SIZE, or ``AUTODIFF_CACHE_SIZE``).

    >>> ad.set_cache_size(128)
    """
    global _cache_size
    _cache_size = _checked("the cache size", size)


def recompile_limit() -> int:
    """How many compilations of one function pass without a `RecompileWarning`."""
    return _recompile_limit


def set_recompile_limit(limit: int) -> None:
    """Warn (once per function) when a function is compiled for more than ``limit``
    signatures (default DEFAULT_RECOMPILE_LIMIT, or ``AUTODIFF_RECOMPILE_LIMIT``).

    >>> ad.set_recompile_limit(64)
    """
    global _recompile_limit
    _recompile_limit = _checked("the recompile limit", limit)


V = TypeVar("V")


class CompilationCache(OrderedDict[Hashable, V]):
    """What one function compiled, per signature: an LRU bounded by `cache_size`. See Note
    [Cache bounds]. Read with ``get`` (then `touch` on a hit), add with `store`.

    >>> cache = CompilationCache("loss()", counts=True)
    >>> cache.store(key, executable)
    """

    def __init__(self, owner: str, *, counts: bool = False) -> None:
        super().__init__()
        self.owner = owner
        """What was compiled, for the warning: ``loss()``, ``the gradient of loss()``."""
        self.counts = counts
        """Whether this cache counts compilations and warns (one cache per function does)."""
        self.compilations = 0
        self.warned = False

    def touch(self, key: Hashable) -> None:
        """Mark the entry at ``key`` as the most recently used."""
        if len(self) > 1:
            self.move_to_end(key)

    def lookup(self, key: Hashable) -> V | None:
        """The entry at ``key``, marked as recently used, or None."""
        found = self.get(key)
        if found is not None and len(self) > 1:
            self.move_to_end(key)
        return found

    def store(self, key: Hashable, value: V, what: str | None = None) -> None:
        """Add a compilation, dropping the least recently used past `cache_size`; ``what``
        names what was compiled in the warning (default: `owner`)."""
        self[key] = value
        self.move_to_end(key)
        limit = cache_size()
        while len(self) > limit:
            self.popitem(last=False)
        if self.counts:
            self.compilations += 1
            if self.compilations > recompile_limit() and not self.warned:
                self.warned = True
                warnings.warn(
                    f"{what or self.owner} has been compiled for {self.compilations} call "
                    "signatures (argument kinds, dtypes and shapes); each compilation costs time "
                    f"and memory, and the cache keeps the {limit} most recently used. If the "
                    "shapes vary on purpose, raise the limit with ad.set_recompile_limit(n) (or "
                    "AUTODIFF_RECOMPILE_LIMIT=n), or silence this with warnings.filterwarnings("
                    "'ignore', category=ad.RecompileWarning)",
                    RecompileWarning,
                    stacklevel=2,
                )
