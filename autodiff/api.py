"""The public API: ``ad.script`` compiles a NumPy function into a ScriptFunction."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from autodiff.script import ScriptFunction
from autodiff.tracebacks import api_boundary


@api_boundary
def script(fn: Callable[..., Any]) -> ScriptFunction:
    """Compile ``fn`` (as a decorator or a call); bad code raises ScriptError here, not at the
    first call. A ScriptFunction is returned as it is."""
    if isinstance(fn, ScriptFunction):
        return fn
    return ScriptFunction(fn)
