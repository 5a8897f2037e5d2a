"""Errors found while scripting a function: refused constructs and syntax errors, with location."""

from __future__ import annotations

from ir.errors import AutodiffError


class ScriptError(AutodiffError):
    """Source the frontend cannot compile. Prints ``file:line:col: error: message``, the source
    line and a caret under the construct (re-exported as ``autodiff.ScriptError``)."""
