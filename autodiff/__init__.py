"""Graph-compiling automatic differentiation for NumPy code: ``ad.script`` compiles a NumPy
function; `autodiff.cli` is the command line."""

from __future__ import annotations

from autodiff.api import script
from autodiff.script import ScriptFunction
from autodiff.specialize import ArgumentError
from frontend.errors import ScriptError

__all__ = ["ArgumentError", "ScriptError", "ScriptFunction", "script"]
