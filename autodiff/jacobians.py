"""Jacobians and Hessians: ``jacobian`` (`JacobianFunction`, one `vjp` row per element of the
result) and ``hessian`` (the Jacobian of the Jacobian; `HessianBlocks` for several arguments),
each also a graph that can be differentiated again (Note [Jacobian graphs] in
`autodiff.higher_order`)."""

from __future__ import annotations

import copy
import functools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from autodiff.cotangents import vjp_of
from autodiff.errors import DifferentiationError
from autodiff.grad import (
    Argnums,
    _as_script,
    _check_declared_types,
    _check_passed,
    _positions,
)
from autodiff.gradient_call import describe
from autodiff.higher_order import blocks_graph, jacobian_graph
from autodiff.pytrees import is_pytree
from autodiff.specialize import unknown_layouts
from autodiff.tracebacks import api_boundary
from ir.backends import DASK, Backend, backend_of, dtype_name, is_backend_array
from ir.errors import BackendError
from ir.graph import Graph
from ir.types import TensorType, Type


def _is_numeric(value: Any) -> bool:
    """A number or an array: what has a dtype to check."""
    return isinstance(value, int | float | complex | np.ndarray | np.generic)


# Note [Complex Jacobians]
# A function of a complex argument is a map of 2n real numbers, whose Jacobian has four real
# blocks; one complex row per output element holds all of them only when the function is
# holomorphic (Cauchy-Riemann). Each row is a vjp, which under Note [Complex gradients] (in
# `autodiff.formulas`) gives ``c * f'(z)`` for a holomorphic f and a cotangent c, so the rows
# are exactly f'(z) then; for any other function they would be the derivative of the real
# part alone, silently. So, as JAX's ``jacrev``, a Jacobian refuses complex arguments and
# complex results unless ``holomorphic=True``, which in turn needs both to be complex.


# Note [Jacobians on backends]
# On Dask or Array API arguments (Note [Array backends] in `ir.backends`) a Jacobian is built
# as on NumPy, one vjp per element of the result, each from the one forward run ``ad.vjp``
# keeps, but the rows are stacked by the backend's namespace: on Dask the Jacobian is one lazy
# array, and computing it reads the data once, the rows sharing the forward's tasks. A
# Hessian is a Jacobian of one such graph (the inner one of a scalar loss has a single row,
# reshaped, not stacked: Note [Jacobian graphs] in `autodiff.higher_order`). This suits what
# a function of Dask data usually asks: the Jacobian of a few outputs (a gradient's entries,
# per-class losses) w.r.t. a small parameter. A result as long as the data (a prediction per
# row) would need a vjp, and a Python loop iteration, per row: on Dask it is refused above
# DASK_JACOBIAN_ROWS rows (and when its length is unknown, NaN chunks) in favour of
# `ad.jacfwd`, whose JVPs number the argument's elements.
DASK_JACOBIAN_ROWS = 10_000


class JacobianFunction:
    """What ``ad.jacobian`` returns: callable like the function, returning its Jacobian; and,
    as a gradient is, differentiable again (Note [Jacobian graphs] in `autodiff.higher_order`).
    ``what`` names it in errors (``jacobian``, or ``hessian`` for the outer of two)."""

    @api_boundary
    def __init__(
        self,
        fn: Callable[..., Any],
        argnums: Argnums,
        *,
        holomorphic: bool = False,
        what: str = "jacobian",
    ) -> None:
        self.scripted = _as_script(fn)
        self.argnums = argnums
        self.holomorphic = holomorphic
        self.what = what
        functools.update_wrapper(self, self.scripted.fn, updated=())

    def check_argument(self, name: str, dtype: np.dtype[Any]) -> None:
        """Refuse a complex argument, or with ``holomorphic``, a real one (Note [Complex
        Jacobians])."""
        if np.issubdtype(dtype, np.complexfloating) == self.holomorphic:
            return
        if self.holomorphic:
            raise DifferentiationError(
                f"{self.what} with holomorphic=True needs complex arguments, but argument "
                f"'{name}' of {self.qualname}() is {dtype}"
            )
        raise DifferentiationError(
            f"{self.what} of {self.qualname}() with respect to argument '{name}', which is "
            f"{dtype}: the Jacobian of a complex argument is one complex matrix only for a "
            "holomorphic function; pass holomorphic=True if it is one, or differentiate "
            "with respect to its real and imaginary parts as separate real arguments"
        )

    def check_complex_result(self, out: Any) -> None:
        complex_result = np.iscomplexobj(out)
        if complex_result == self.holomorphic:
            return
        dtype = np.result_type(out)
        if self.holomorphic:
            raise DifferentiationError(
                f"{self.what} with holomorphic=True needs a complex result, but "
                f"{self.qualname}() returns {dtype}"
            )
        raise DifferentiationError(
            f"{self.what} needs a real result, but {self.qualname}() returns {dtype}: pass "
            "holomorphic=True for a holomorphic function of complex arguments, or take the "
            "Jacobians of np.real and np.imag of the result"
        )

    @property
    def qualname(self) -> str:
        return self.scripted.qualname

    @api_boundary
    def __call__(self, *args: Any) -> Any:
        names = list(self.scripted.signature.parameters)
        star = self.scripted.star
        if star is not None:  # argnums count the arguments given, as `vjp` gives gradients
            names = [*names[:star], *(f"{names[star]}[{i}]" for i in range(len(args) - star))]
        positions = _positions(self.qualname, self.argnums, len(names))
        _check_passed(self.scripted, positions, args)
        for position in positions:
            if is_pytree(args[position]):
                raise DifferentiationError(
                    f"the {self.what} of {self.qualname}() with respect to '{names[position]}', "
                    "a list, tuple or dict of arrays, is not supported yet: pass one array "
                    "(ad.flatten makes one vector of them)"
                )
            if _is_numeric(args[position]):
                self.check_argument(names[position], np.result_type(args[position]))
            elif is_backend_array(args[position]):
                self.check_argument(names[position], np.dtype(dtype_name(args[position].dtype)))
        out, vjp_fn = vjp_of(self.scripted, args, positions)
        if isinstance(out, tuple | list | dict):
            raise DifferentiationError(
                f"jacobian needs {self.qualname}() to return one array, it returned {describe(out)}"
            )
        backend = backend_of(args)
        if backend is not None:  # Note [Jacobians on backends]
            return self.backend_rows(backend, out, vjp_fn, args, positions)
        self.check_complex_result(out)
        out_shape = np.shape(out)
        rows: list[list[Any]] = [[] for _ in positions]
        for index in np.ndindex(out_shape):
            seed = np.zeros(out_shape, dtype=np.result_type(out))
            seed[index] = 1
            grads = vjp_fn(seed)
            for row, position in zip(rows, positions, strict=True):
                row.append(np.asarray(grads[position]))
        jacobians = tuple(
            np.stack(row).reshape(out_shape + np.shape(args[position]))
            if row
            else np.zeros(out_shape + np.shape(args[position]))
            for row, position in zip(rows, positions, strict=True)
        )
        return jacobians[0] if isinstance(self.argnums, int) else jacobians

    def backend_rows(
        self,
        backend: Backend,
        out: Any,
        vjp_fn: Callable[[Any], tuple[Any, ...]],
        args: Sequence[Any],
        positions: Sequence[int],
    ) -> Any:
        """The Jacobian of ``out`` on ``backend``: one vjp per element of it, stacked by the
        backend's namespace. See Note [Jacobians on backends]."""
        xp = backend.namespace()
        dtype = np.dtype(dtype_name(out.dtype)) if hasattr(out, "dtype") else np.result_type(out)
        if (dtype.kind == "c") != self.holomorphic:
            self.check_complex_result(np.zeros((), dtype))
        out_shape = tuple(getattr(out, "shape", ()))
        size = math.prod(out_shape)
        if math.isnan(size) or (backend is DASK and size > DASK_JACOBIAN_ROWS):
            how_many = (
                "a number of rows known only once computed"
                if math.isnan(size)
                else f"more than {DASK_JACOBIAN_ROWS} rows"
            )
            raise BackendError(
                f"the {self.what} of {self.qualname}() takes one vjp per element of its "
                f"result, which on {backend.name} has shape {out_shape}: {how_many} (Note "
                "[Jacobians on backends] in autodiff.jacobians); ad.jacfwd takes one lazy JVP "
                "per element of the argument instead"
            )
        rows: list[list[Any]] = [[] for _ in positions]
        for index in np.ndindex(out_shape):
            seed = np.zeros(out_shape, dtype)
            seed[index] = 1
            grads = vjp_fn(seed if backend.mixes_numpy else xp.asarray(seed))
            for row, position in zip(rows, positions, strict=True):
                row.append(grads[position])
        jacobians = tuple(
            xp.reshape(xp.stack(row), out_shape + tuple(np.shape(args[position])))
            if row
            else xp.zeros(out_shape + tuple(np.shape(args[position])), dtype=xp.float64)
            for row, position in zip(rows, positions, strict=True)
        )
        return jacobians[0] if isinstance(self.argnums, int) else jacobians

    def __autodiff_graph__(
        self, argument_types: Sequence[Type] | None, strided_inputs: str | None = None
    ) -> Graph:
        """The graph of this Jacobian for arguments of these types and layouts, which `vjp`,
        `jacobian` and `grad` differentiate again. See Note [Jacobian graphs]."""
        types = self.scripted.declared_types() if argument_types is None else argument_types
        types = self.scripted.with_free_types(types)  # Note [Free variables] in frontend.compile
        _check_declared_types(self.scripted, types)
        if self.holomorphic:
            raise DifferentiationError(
                f"the {self.what} of {self.qualname}() with holomorphic=True cannot be "
                "differentiated again or called from scripted code"
            )
        positions = _positions(self.qualname, self.argnums, self.scripted.arity)
        names = list(self.scripted.signature.parameters)
        for position in positions:
            ty = types[position]
            if isinstance(ty, TensorType) and ty.dtype is not None:
                self.check_argument(names[position], np.dtype(ty.dtype))
        if strided_inputs is None:  # a scripted caller's values: any layout
            strided_inputs = unknown_layouts(types)
        return jacobian_graph(
            self.scripted.parsed_for(types, strided_inputs),
            types,
            positions,
            several=not isinstance(self.argnums, int),
            strided_inputs=strided_inputs,
        )


@api_boundary
def jacobian(
    fn: Callable[..., Any], argnums: Argnums = 0, *, holomorphic: bool = False
) -> JacobianFunction:
    """The Jacobian of an array-valued function w.r.t. the arguments at ``argnums``, one vjp
    row per element of the result: shape ``result.shape + argument.shape``. It composes with
    itself, `grad`, `hessian` and `vjp` as JAX's ``jacrev`` does, and as it, refuses complex
    arguments and results unless ``holomorphic=True`` (Note [Complex Jacobians]).

    >>> ad.jacobian(np.tanh_of_w)(w)            # (n, n), diagonal
    >>> ad.jacobian(ad.jacobian(f))(w)          # (n, n, n) for f: (n,) -> (n,)
    >>> ad.jacobian(np.square, holomorphic=True)(z)   # diag(2 z) for complex z
    """
    return JacobianFunction(fn, argnums, holomorphic=holomorphic)


@api_boundary
def hessian(fn: Callable[..., Any], argnums: Argnums = 0) -> Callable[..., Any]:
    """The Hessian: the `jacobian` of the Jacobian, which is differentiated as a graph
    (Note [Jacobian graphs] in `autodiff.higher_order`), of shape ``result.shape +
    argument.shape + argument.shape`` as JAX's ``hessian``. For a tuple of ``argnums``, the
    blocks ``H[i][j]`` as nested tuples.

    >>> ad.hessian(loss)(w, x, y)                # (n, n) for w of shape (n,)
    >>> ad.hessian(f)(w)                         # (m, n, n) for f: (n,) -> (m,)
    """
    if isinstance(argnums, int):
        return JacobianFunction(jacobian(fn, argnums), argnums, what="hessian")
    return HessianBlocks(fn, tuple(argnums))


class HessianBlocks:
    """What ``ad.hessian`` returns for a tuple of ``argnums``: callable like the function,
    returning the blocks ``H[i][j]`` (each a `jacobian` of a `jacobian`) as nested tuples;
    and, as a Jacobian is, a graph that `vjp` differentiates and scripted code inlines."""

    @api_boundary
    def __init__(self, fn: Callable[..., Any], argnums: tuple[int, ...]) -> None:
        self.scripted = _as_script(fn)
        self.argnums = argnums
        self.blocks = [
            [JacobianFunction(jacobian(fn, i), j, what="hessian") for j in argnums] for i in argnums
        ]
        functools.update_wrapper(self, self.scripted.fn, updated=())

    @api_boundary
    def __call__(self, *args: Any) -> Any:
        # Each block runs the function: all but the last on copies, so that each reads the
        # arguments as passed and the ones the function writes are written once.
        blocks = [block for row in self.blocks for block in row]
        results = [block(*copy.deepcopy(args)) for block in blocks[:-1]]
        results.append(blocks[-1](*args))
        width = len(self.argnums)
        return tuple(tuple(results[i * width : (i + 1) * width]) for i in range(width))

    def __autodiff_graph__(
        self, argument_types: Sequence[Type] | None, strided_inputs: str | None = None
    ) -> Graph:
        """Every block's graph for these argument types and layouts, side by side."""
        types = self.scripted.declared_types() if argument_types is None else argument_types
        types = self.scripted.with_free_types(types)
        graphs = [
            [_as_script(block).parsed_for(types, strided_inputs or "") for block in row]
            for row in self.blocks
        ]
        return blocks_graph(self.scripted.qualname, types, graphs)
