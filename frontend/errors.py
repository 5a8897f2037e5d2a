"""Errors found while scripting a function: refused constructs and syntax errors, with location."""

from __future__ import annotations

from ir.errors import AutodiffError


class ScriptError(AutodiffError):
    """Source the frontend cannot compile. Prints ``file:line:col: error: message``, the source
    line and a caret under the construct (re-exported as ``autodiff.ScriptError``)."""


class ContainerUseError(ScriptError):
    """An array used as a container: iterated with ``for``, unpacked, indexed with a string,
    asked for a field or ``.items()``. Raised for a parameter typed as an array only because
    nothing says otherwise, it is held back until a call's arguments tell (Note [Compiling
    for containers] in `autodiff.script`): the function may be meant to take a list or a
    dict."""
