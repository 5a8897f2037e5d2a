"""The frontend: Python source of a function to the SSA graph IR (parse, then emit)."""

from __future__ import annotations

from frontend.compile import compile_function
from frontend.emit import emit_function
from frontend.errors import ScriptError

__all__ = ["ScriptError", "compile_function", "emit_function"]
