"""Short tracebacks: an error the project raises to a user shows the user's frames and the
located message, not the frames of the compiler that found it.

# Note [Traceback filtering]
# As JAX's ``api_boundary`` does, every public entry point is a boundary: calling an
# ``ad.script`` function, what ``ad.grad``, ``value_and_grad``, ``jacobian`` and ``hessian``
# return, ``ad.vjp`` and its vjp function, ``differentiate``, ``gradcheck``, ``profile``,
# ``flatten`` and its unflatten, ``graph``, ``graph_for`` and ``graph_for_types``, and making any
# of these. When an `AutodiffError` (its subclasses and a compiled program's own ``raise``
# included: `ir.errors.located_user_exception`) leaves the outermost boundary, `shorten` keeps
# of its traceback only the frames outside the project's packages (ir, frontend, passes,
# autodiff) and outside the code it generates (``<generated graph @f #3>``), adds one note
# saying so, and stops the exception it was raised from (a NumPy error under an
# InterpreterError, a KeyError under a ScriptError) from being printed: the message already
# names the operation and the user's line. That exception stays reachable as ``__context__``.
# One raised in user code (a hook, a callback the program calls) is printed as before.
#
# - Outermost: no frame of the project above the boundary. A boundary reached from the
#   project's own code (``hessian`` calling ``jacobian``, the CLI calling ``graph_for``)
#   leaves the error alone, so the outer one sees it whole and the CLI's ``--traceback``
#   prints every frame.
# - Cost: the hot entry points (calls of scripted functions and gradients, a vjp function,
#   which a Jacobian calls once per row) hold a ``try`` in their own body, which costs nothing
#   in CPython 3.11 while nothing raises; the others use the `api_boundary` decorator. All
#   else happens when an error is on its way out.
# - The handler ends with a bare ``raise``, which in CPython 3.11 re-raises with the traceback
#   `shorten` set, without adding the boundary's frame again.
# - ``AUTODIFF_TRACEBACK=full`` in the environment, read when an error is raised, leaves every
#   error as it is. Other exceptions (a user's hook raising ValueError) are never touched.
"""

from __future__ import annotations

import functools
import os
import site
import sysconfig
from collections.abc import Callable
from types import TracebackType
from typing import ParamSpec, TypeVar

import frontend
import ir
import passes
from ir.errors import AutodiffError

__all__ = ["NOTE", "api_boundary", "shorten"]

NOTE = "(autodiff's internal frames are hidden; AUTODIFF_TRACEBACK=full shows them)"

_PACKAGE_ROOTS = tuple(
    os.path.join(os.path.abspath(root), "")
    for root in (*ir.__path__, *frontend.__path__, *passes.__path__, os.path.dirname(__file__))
)
# The file names of generated code: `ir.codegen.CompiledGraph` and `autodiff.structures`.
_GENERATED = ("<generated graph ", "<leaves of ", "<build ")
_INTERNAL = _PACKAGE_ROOTS + _GENERATED

# Where the standard library and installed packages live: frames there are neither the
# project's nor the user's (NumPy under a kernel, importlib, functools).
_LIBRARY_ROOTS = tuple(
    os.path.join(os.path.abspath(path), "")
    for path in {
        *(sysconfig.get_paths()[key] for key in ("stdlib", "platstdlib", "purelib", "platlib")),
        *site.getsitepackages(),
        site.getusersitepackages(),
    }
)

P = ParamSpec("P")
R = TypeVar("R")


def api_boundary(fn: Callable[P, R]) -> Callable[P, R]:
    """Make ``fn`` a public entry point whose errors reach the user with short tracebacks
    (Note [Traceback filtering]). Hot entry points inline its ``try`` instead.

    >>> @api_boundary
    ... def differentiate(graph): ...
    """

    @functools.wraps(fn)
    def boundary(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except AutodiffError as error:
            shorten(error)
            raise

    return boundary


def shorten(error: AutodiffError) -> None:
    """Called by a boundary's handler, before a bare ``raise``: when this boundary is the
    outermost one and ``AUTODIFF_TRACEBACK`` is not ``full``, drop the project's frames from
    ``error``'s traceback and hide the exception it was raised from, unless user code raised
    that one (Note [Traceback filtering])."""
    if os.environ.get("AUTODIFF_TRACEBACK") == "full":
        return
    traceback = error.__traceback__
    if traceback is None or not _outermost(traceback):
        return
    entries = _entries(traceback)
    shortened: TracebackType | None = None
    removed = 0
    for entry in reversed(entries):
        if entry.tb_frame.f_code.co_filename.startswith(_INTERNAL):
            removed += 1
        else:
            shortened = TracebackType(shortened, entry.tb_frame, entry.tb_lasti, entry.tb_lineno)
    error.with_traceback(shortened)
    chained = error.__cause__
    if chained is None and not error.__suppress_context__:
        chained = error.__context__
    if chained is not None and not _raised_in_user_code(chained):
        error.__context__ = chained  # still reachable, not printed
        error.__cause__ = None
        error.__suppress_context__ = True
    if removed and NOTE not in getattr(error, "__notes__", ()):
        error.add_note(NOTE)


def _outermost(traceback: TracebackType) -> bool:
    """Whether no frame of the project calls the boundary ``traceback`` starts at."""
    frame = traceback.tb_frame.f_back
    while frame is not None:
        if frame.f_code.co_filename.startswith(_INTERNAL):
            return False
        frame = frame.f_back
    return True


def _entries(traceback: TracebackType | None) -> list[TracebackType]:
    entries = []
    while traceback is not None:
        entries.append(traceback)
        traceback = traceback.tb_next
    return entries


def _raised_in_user_code(exception: BaseException) -> bool:
    """Whether ``exception`` went through a frame of the user's code: neither the project's,
    nor the standard library's or an installed package's, nor frozen (importlib)."""
    for traceback in _entries(exception.__traceback__):
        filename = traceback.tb_frame.f_code.co_filename
        if not (
            filename.startswith(_INTERNAL)
            or filename.startswith(_LIBRARY_ROOTS)
            or filename.startswith("<frozen ")
        ):
            return True
    return False
