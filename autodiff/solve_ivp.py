"""``scipy.integrate.solve_ivp`` called from compiled code with ``t_eval``, differentiable
with respect to ``y0``, ``t_span[0]``, ``t_eval`` and ``args`` by the adjoint of `autodiff.odeint`.

Note [solve_ivp adjoint]
``sol = solve_ivp(fun, t_span, y0, method="RK45", t_eval=t, args=(theta,))`` is one
``prim::CustomVjp`` node, as ``odeint`` is (Note [Odeint adjoint] in `autodiff.odeint`): its
forward is SciPy's ``solve_ivp`` itself, and its ``bwd`` the same adjoint, each backward leg
solved by ``solve_ivp`` with the forward's method, ``rtol``, ``atol`` and ``max_step``. The
outputs are ``y(t_eval[i])`` from ``y(t_span[0]) = y0``; ``t_span[1]`` only bounds the
interval and gets a zero gradient. In compiled code the result is a named tuple of ``sol.t``
(``t_eval`` itself, so its cotangent joins ``t_eval``'s) and ``sol.y`` (states x times), its
shape fixed by ``t_eval``: so ``t_eval`` is required, and ``dense_output``, ``events`` and
``vectorized`` are refused where written. A failed solve (``sol.success`` false, which would
return fewer columns) raises at the call's line.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Sequence
from types import FunctionType
from typing import Any, NamedTuple

import numpy as np

from autodiff.custom_vjp import CustomVjpError, CustomVjpFunction, _CustomVjpEntry
from autodiff.odeint import SECOND_ORDER, Labelled, adjoint, like
from autodiff.opaque import function_label, register, structure_key
from frontend.errors import ScriptError
from frontend.opaque_calls import STAND_INS
from frontend.trees import Tree
from ir.errors import ShapeError
from ir.source import SourceRange
from ir.types import NONE, TENSOR, TensorType, TupleType, Type


class IvpResult(NamedTuple):
    """What ``solve_ivp`` gives compiled code: the times and the states at them."""

    t: Any
    y: Any


def _signature(
    fun: Callable[..., Any],
    t_span: Any,
    y0: Any,
    method: str = "RK45",
    t_eval: Any = None,
    *,
    args: Any = None,
    rtol: float = 1e-3,
    atol: float = 1e-6,
    max_step: float = float("inf"),
    first_step: Any = None,
) -> None:
    """The parameters of SciPy's ``solve_ivp`` a compiled call may pass."""


_RESULT = Tree(IvpResult, ("t", "y"), (TENSOR, TENSOR))


class _SolveIvp:
    """What compiled code calls for ``scipy.integrate.solve_ivp`` (Note [solve_ivp adjoint])."""

    __name__ = "solve_ivp"
    __autodiff_static__ = 1
    __autodiff_signature__ = inspect.signature(_signature)

    def __init__(self) -> None:
        self._solvers: dict[Callable[..., Any], _IvpSolver] = {}

    def __autodiff_opaque__(
        self, static: Sequence[Any], types: Sequence[Type], where: SourceRange
    ) -> tuple[str, str, Type]:
        (fun,) = static
        if not isinstance(fun, FunctionType):
            raise ScriptError(
                "solve_ivp's fun must be a Python function defined outside the compiled one "
                f"(at module level, or a closure a factory made), not {type(fun).__name__}",
                where,
                doc="opaque-calls",
            )
        if types[3] == NONE:
            raise ScriptError(
                "solve_ivp in compiled code needs t_eval: the times of its result fix its shape",
                where,
                doc="opaque-calls",
            )
        solver = self._solvers.get(fun)
        if solver is None:
            solver = self._solvers[fun] = _IvpSolver(fun)
        return solver.opaque(types)


class _IvpSolver(CustomVjpFunction):
    """``solve_ivp`` with one ``fun``: a custom_vjp of its operands, in the signature's order
    (``t_span, y0, method, t_eval, args, rtol, atol, max_step, first_step``)."""

    second_order_refusal = SECOND_ORDER.replace("odeint", "solve_ivp")

    def __init__(self, fun: Callable[..., Any]) -> None:
        self.func = fun

        def solve_ivp(t_span: Any, y0: Any, *options: Any) -> Any:
            return IvpResult(*_solve(fun, t_span, y0, options))

        super().__init__(Labelled(f"solve_ivp[{function_label(fun)}]", solve_ivp))
        self.defvjp(self._fwd, self._bwd)

    def opaque(self, types: Sequence[Type]) -> tuple[str, str, Type]:
        structure = structure_key(types)
        key = self._keys.get(structure)
        if key is None:
            entry = _IvpEntry(self, types)
            key = self._keys[structure] = register(f"solve_ivp[{function_label(self.func)}]", entry)
        return "prim::CustomVjp", key, _RESULT

    def _fwd(self, t_span: Any, y0: Any, *options: Any) -> tuple[Any, Any]:
        times, ys = _solve(self.func, t_span, y0, options)
        return (times, ys), (ys.T, np.asarray(y0, dtype=np.float64), t_span, times, options)

    def _bwd(self, residuals: Any, g: Any) -> tuple[Any, ...]:
        ys, y0, t_span, times, options = residuals
        method, _, args, rtol, atol, max_step, _ = options
        g_t, g_y = (None, None) if g is None else g
        smallest = atol if np.ndim(atol) == 0 else float(np.min(atol))  # for every component
        settings = {"method": method, "rtol": rtol, "atol": smallest, "max_step": max_step}
        scipy_solve_ivp = _scipy_solve_ivp()

        def integrate(fn: Callable[..., Any], state: np.ndarray, s: float, end: float) -> Any:
            sol = scipy_solve_ivp(lambda r, x: fn(x, r), (s, end), state, **settings)
            if not sol.success:
                raise CustomVjpError(f"solve_ivp's adjoint failed: {sol.message}")
            return sol.y[:, -1]

        t0 = float(np.asarray(t_span, dtype=np.float64)[0])
        cotangent = np.zeros_like(ys) if g_y is None else np.asarray(g_y).T
        arguments = () if args is None else tuple(args)
        dy0, dtimes, dt0, dargs = adjoint(
            self.func, True, ys, times, (y0, t0), arguments, integrate, cotangent
        )
        if g_t is not None:
            dtimes = dtimes + np.asarray(g_t)  # sol.t is t_eval itself
        if isinstance(t_span, tuple | list):
            dspan: Any = (dt0, 0.0)
        else:
            dspan = np.array([dt0, 0.0])
        cotangents: list[Any] = [None] * len(options)
        cotangents[1] = like(dtimes, options[1])
        cotangents[2] = None if args is None else dargs
        return (dspan, dy0.reshape(np.shape(y0)), *cotangents)


def _scipy_solve_ivp() -> Callable[..., Any]:
    solve_ivp: Callable[..., Any] = importlib.import_module("scipy.integrate").solve_ivp
    return solve_ivp


def _solve(
    fun: Callable[..., Any], t_span: Any, y0: Any, options: Sequence[Any]
) -> tuple[np.ndarray, np.ndarray]:
    method, t_eval, args, rtol, atol, max_step, first_step = options
    sol = _scipy_solve_ivp()(
        fun,
        tuple(t_span),
        y0,
        method=method,
        t_eval=t_eval,
        args=args,
        rtol=rtol,
        atol=atol,
        max_step=max_step,
        first_step=first_step,
    )
    if not sol.success:
        raise CustomVjpError(f"solve_ivp failed: {sol.message}")
    return sol.t, sol.y


class _IvpEntry(_CustomVjpEntry):
    def result_types(self, arg_types: Sequence[Type]) -> list[Type]:
        """``(t_eval, y)`` with ``y`` of shape ``(len(y0), len(t_eval))``, float64."""
        y0, t_eval = arg_types[1], arg_types[3]  # t_span, y0, method, t_eval, ...
        known = [ty for ty in (y0, t_eval) if isinstance(ty, TensorType) and ty.shape is not None]
        if len(known) < 2:
            return [TupleType((TENSOR, TENSOR))]
        assert isinstance(y0, TensorType)
        assert isinstance(t_eval, TensorType)
        assert y0.shape is not None
        assert t_eval.shape is not None
        if len(y0.shape) != 1 or len(t_eval.shape) != 1:
            raise ShapeError(
                f"solve_ivp takes a 1-D y0 and a 1-D t_eval, given shapes {y0.shape} and "
                f"{t_eval.shape}"
            )
        times = TensorType("float64", (t_eval.shape[0],))
        return [TupleType((times, TensorType("float64", (y0.shape[0], t_eval.shape[0]))))]


SOLVE_IVP = _SolveIvp()
STAND_INS["scipy.integrate.solve_ivp"] = SOLVE_IVP
