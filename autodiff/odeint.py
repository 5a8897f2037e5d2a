"""``scipy.integrate.odeint`` called from compiled code, differentiable with respect to the
initial state, the time points and ``args`` by the adjoint method: `ad.custom_vjp` put to use.

Note [Odeint adjoint]
A scripted ``odeint(func, y0, t, args=(theta,))`` (SciPy's function under any name, Note
[Opaque calls] in `frontend.opaque_calls`) is one ``prim::CustomVjp`` node whose function is
a custom_vjp made once per dynamics ``func`` (a Python function: module level, or a closure a
factory made). Its forward is SciPy's ``odeint`` itself, calling ``func`` as Python, so results
are SciPy's to the bit. Its ``bwd`` is the adjoint method (Pontryagin; Chen et al. 2018, as
HIPS autograd's ``odeint`` does it). With ``y' = f(y, s, theta)``, outputs ``y_i = y(t_i)``
and their cotangents ``g_i``, the adjoint ``a(s)`` (the gradient of the loss w.r.t. ``y(s)``)
obeys ``a' = -a df/dy`` between time points and jumps by ``g_i`` at ``t_i``; the gradient
w.r.t. ``theta`` is the integral of ``a df/dtheta``. So from ``t_N`` back to ``t_0``, between
consecutive time points, one SciPy ``odeint`` integrates the augmented state ``(y, a,
theta_bar)`` backwards: ``y' = f``, ``a' = -a df/dy``, ``theta_bar' = -a df/dtheta``, starting
from ``y_i`` as the forward found it (``y`` is integrated back rather than stored, as autograd
does: fine for the non-stiff dynamics the method is meant for). The products ``a df/dy`` and
``a df/dtheta`` are one vector-Jacobian product of ``func`` compiled by the project (`ad.vjp`
of ``func``, cached by signature), never finite differences. The time points' gradients need
no integral: moving ``t_i`` (i > 0) moves the output along the trajectory, ``dL/dt_i = g_i .
f(y_i, t_i)``; moving ``t_0`` shifts the whole solution, ``dL/dt_0 = -(a(t_0) - g_0) . f(y_0,
t_0)`` (the ``(a f)' = a df/dt`` identity turns autograd's integral into this). The backward
solve uses the forward's ``rtol``, ``atol`` (its smallest entry when an array), ``mxstep``,
``hmax`` and ``hmin``, so the gradient's error is of the order of the solver's tolerance:
pass tight ones when the gradient matters.

The ``bwd`` is opaque, so a second derivative is refused where ``odeint`` is called (it would
need the adjoint of the adjoint). ``y0`` is 1-D (SciPy's rule; a number is one state), ``t``
1-D, ``args`` a tuple of arrays and floats (pytrees of them too). ``Dfun``, ``full_output``
and SciPy's other options are refused where they are written. `autodiff.solve_ivp` uses the
same `adjoint` for ``scipy.integrate.solve_ivp`` (Note [solve_ivp adjoint] there).
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Sequence
from types import FunctionType
from typing import Any

import numpy as np

from autodiff.cotangents import vjp
from autodiff.custom_vjp import CustomVjpFunction, _CustomVjpEntry
from autodiff.opaque import function_label, register, structure_key
from autodiff.pytrees import flatten, ravel
from frontend.errors import ScriptError
from frontend.opaque_calls import STAND_INS
from ir.errors import ShapeError
from ir.source import SourceRange
from ir.types import TENSOR, TensorType, Type

SECOND_ORDER = (
    "odeint's gradient is the adjoint method, an opaque computation with no derivative of "
    "its own: a second derivative through scipy.integrate.odeint is not supported"
)


def _signature(
    func: Callable[..., Any],
    y0: Any,
    t: Any,
    args: tuple[Any, ...] = (),
    *,
    rtol: Any = None,
    atol: Any = None,
    h0: float = 0.0,
    hmax: float = 0.0,
    hmin: float = 0.0,
    mxstep: int = 0,
    tfirst: bool = False,
) -> None:
    """The parameters of SciPy's ``odeint`` a compiled call may pass (the others, such as
    ``Dfun`` and ``full_output``, are refused where they are written)."""


_OPTIONS = ("rtol", "atol", "h0", "hmax", "hmin", "mxstep", "tfirst")


class _Odeint:
    """What compiled code calls for ``scipy.integrate.odeint`` (Note [Odeint adjoint])."""

    __name__ = "odeint"
    __autodiff_static__ = 1
    __autodiff_signature__ = inspect.signature(_signature)

    def __init__(self) -> None:
        self._solvers: dict[Callable[..., Any], _OdeintSolver] = {}

    def __autodiff_opaque__(
        self, static: Sequence[Any], types: Sequence[Type], where: SourceRange
    ) -> tuple[str, str, Type]:
        (func,) = static
        if not isinstance(func, FunctionType):
            raise ScriptError(
                "odeint's func must be a Python function defined outside the compiled one (at "
                "module level, or a closure a factory made), not "
                f"{type(func).__name__}: the adjoint compiles it on its own",
                where,
                doc="opaque-calls",
            )
        solver = self._solvers.get(func)
        if solver is None:
            solver = self._solvers[func] = _OdeintSolver(func)
        return solver.__autodiff_opaque__((), types, where)


class _OdeintSolver(CustomVjpFunction):
    """``odeint`` with one dynamics ``func``: a custom_vjp of ``(y0, t, args, *options)``."""

    second_order_refusal = SECOND_ORDER

    def __init__(self, func: Callable[..., Any]) -> None:
        self.func = func

        def odeint(y0: Any, t: Any, args: Any, *options: Any) -> Any:
            return _solve(func, y0, t, args, options)

        super().__init__(Labelled(f"odeint[{function_label(func)}]", odeint))
        self.defvjp(self._fwd, self._bwd)

    def __autodiff_opaque__(
        self, static: Sequence[Any], types: Sequence[Type], where: SourceRange
    ) -> tuple[str, str, Type]:
        structure = structure_key(types)
        key = self._keys.get(structure)
        if key is None:
            entry = _OdeintEntry(self, types)
            key = self._keys[structure] = register(f"odeint[{function_label(self.func)}]", entry)
        return "prim::CustomVjp", key, TENSOR

    def _fwd(self, y0: Any, t: Any, args: Any, *options: Any) -> tuple[Any, Any]:
        ys = _solve(self.func, y0, t, args, options)
        return ys, (ys, np.shape(y0), t, args, options)

    def _bwd(self, residuals: Any, g: Any) -> tuple[Any, ...]:
        ys, y0_shape, given_t, args, options = residuals
        t = np.asarray(given_t, dtype=np.float64)
        settings = dict(zip(_OPTIONS, options, strict=True))
        backward = {
            "rtol": settings["rtol"],
            "atol": None if settings["atol"] is None else float(np.min(settings["atol"])),
            "mxstep": settings["mxstep"],
            "hmax": settings["hmax"],
            "hmin": settings["hmin"],
        }

        def integrate(fn: Callable[..., Any], state: np.ndarray, s: float, end: float) -> Any:
            return _scipy_odeint()(fn, state, np.array([s, end]), **backward)[1]

        tfirst = bool(settings["tfirst"])
        dy0, dt, dt0, dargs = adjoint(self.func, tfirst, ys, t, (ys[0], t[0]), args, integrate, g)
        dt[0] += dt0  # t[0] is both the start and the first output's time
        return (dy0.reshape(y0_shape), like(dt, given_t), dargs, *(None for _ in options))


class _OdeintEntry(_CustomVjpEntry):
    def result_types(self, arg_types: Sequence[Type]) -> list[Type]:
        """``(len(t), len(y0))`` float64, as SciPy's result; y0 and t 1-D."""
        y0, t = arg_types[0], arg_types[1]
        if not all(isinstance(ty, TensorType) and ty.shape is not None for ty in (y0, t)):
            return [TENSOR]
        assert isinstance(y0, TensorType)
        assert isinstance(t, TensorType)
        assert y0.shape is not None
        assert t.shape is not None
        if len(y0.shape) > 1 or len(t.shape) != 1:
            raise ShapeError(
                f"odeint takes a 1-D y0 and a 1-D t, given shapes {y0.shape} and {t.shape}"
            )
        states = y0.shape[0] if y0.shape else 1
        return [TensorType("float64", (t.shape[0], states))]


class Labelled:
    """``fn`` under a name of its own, which messages and IR text show (``odeint[f@m.py:3]``)."""

    def __init__(self, label: str, fn: Callable[..., Any]) -> None:
        self.__qualname__ = self.__name__ = label
        self.fn = fn

    def __call__(self, *args: Any) -> Any:
        return self.fn(*args)


def like(gradient: np.ndarray, given: Any) -> Any:
    """``gradient`` structured as the argument ``given`` was: floats for a tuple of numbers."""
    return tuple(float(v) for v in gradient) if isinstance(given, tuple) else gradient


def _scipy_odeint() -> Callable[..., Any]:
    odeint: Callable[..., Any] = importlib.import_module("scipy.integrate").odeint
    return odeint


def _solve(func: Callable[..., Any], y0: Any, t: Any, args: Any, options: Sequence[Any]) -> Any:
    return _scipy_odeint()(
        func, y0, t, args=tuple(args), **dict(zip(_OPTIONS, options, strict=True))
    )


def adjoint(
    func: Callable[..., Any],
    tfirst: bool,
    ys: np.ndarray,
    times: np.ndarray,
    start: tuple[np.ndarray, float],
    args: Sequence[Any],
    integrate: Callable[[Callable[..., Any], np.ndarray, float, float], np.ndarray],
    g: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, float, tuple[Any, ...]]:
    """The gradients of the outputs ``ys[i] = y(times[i])`` of ``y' = func`` from ``y(t0) =
    y0`` (``start``) for their cotangent ``g``: w.r.t. y0, the times, t0 and args (Note [Odeint
    adjoint]). ``integrate(fn, state, s, s_end)`` is the state at ``s_end`` of ``state' =
    fn(state, s)`` from ``state`` at ``s``."""
    args = tuple(args)
    y0, t0 = start
    count, states = ys.shape
    theta, unflatten = ravel(args)
    theta = np.asarray(theta, dtype=np.float64)

    def dynamics(y: np.ndarray, s: float) -> np.ndarray:
        dy = func(s, y, *args) if tfirst else func(y, s, *args)
        return np.ravel(np.asarray(dy, dtype=np.float64))

    structure = flatten(args)[1]
    sizes = [int(np.size(leaf)) for leaf in flatten(args)[0]]

    def as_vector(cotangents: Sequence[Any]) -> np.ndarray:
        """The args' cotangents as one vector, laid out as ``theta`` (zeros for None)."""
        parts: list[Any] = structure.flatten_up_to(tuple(cotangents))  # type: ignore[arg-type]
        return np.concatenate(
            [
                np.zeros(size) if part is None else np.ravel(part).astype(np.float64)
                for part, size in zip(parts, sizes, strict=True)
            ]
            or [np.zeros(0)]
        )

    def products(y: np.ndarray, s: float, a: np.ndarray) -> tuple[Any, np.ndarray, np.ndarray]:
        """f(y, s), a df/dy and a df/dtheta, by one compiled vector-Jacobian product."""
        dy, pullback = vjp(func, s, y, *args) if tfirst else vjp(func, y, s, *args)
        seed = type(dy)(a) if isinstance(dy, list | tuple) else a.reshape(np.shape(dy))
        first, second, *a_fargs = pullback(seed)  # a list result (as SciPy allows) takes a list
        a_fy = second if tfirst else first
        return np.ravel(dy), np.asarray(a_fy, dtype=np.float64), as_vector(a_fargs)

    def augmented(state: np.ndarray, s: float) -> np.ndarray:
        y, a = state[:states], state[states : 2 * states]
        dy, a_fy, a_ftheta = products(y, s, a)
        return np.concatenate([np.ravel(dy), -np.ravel(a_fy), -a_ftheta])

    g = np.asarray(g, dtype=np.float64).reshape(count, states)
    a = np.zeros(states)
    theta_bar = np.zeros_like(theta)
    dtimes = np.zeros(count)
    for i in range(count - 1, -1, -1):
        a = a + g[i]
        dtimes[i] = g[i] @ dynamics(ys[i], times[i])
        earlier = times[i - 1] if i > 0 else t0
        if earlier != times[i]:
            end = integrate(augmented, np.concatenate([ys[i], a, theta_bar]), times[i], earlier)
            a, theta_bar = end[states : 2 * states], end[2 * states :]
    dt0 = -float(a @ dynamics(np.ravel(y0), t0))
    return a, dtimes, dt0, tuple(unflatten(theta_bar))


ODEINT = _Odeint()
STAND_INS["scipy.integrate.odeint"] = ODEINT
