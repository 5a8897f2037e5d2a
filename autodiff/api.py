"""The public API: ``ad.script`` compiles a NumPy function into a ScriptFunction."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from autodiff.script import ScriptFunction
from autodiff.tracebacks import api_boundary


@api_boundary
def script(fn: Callable[..., Any], *, native: bool | None = None) -> ScriptFunction:
    """Compile ``fn`` (as a decorator or a call); bad code raises ScriptError here, not at the
    first call. A ScriptFunction is returned as it is (``native``, when given, set on it).
    ``native=True`` runs its calls on the native tier (numba) from the first call of each
    signature; ``False`` never; None as ``AUTODIFF_NATIVE`` says (Note [Tiering] in
    `autodiff.tiering`). As a decorator with the keyword: ``functools.partial(ad.script,
    native=True)``.

    >>> euler_native = ad.script(euler, native=True)
    """
    scripted = fn if isinstance(fn, ScriptFunction) else ScriptFunction(fn)
    if native is not None:
        scripted.native = native
    return scripted
