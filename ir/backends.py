"""Array backends: the kernels a graph runs with when its arguments are Dask, CuPy or other
Array API arrays rather than NumPy arrays.

Note [Array backends]
A compiled graph is the same whatever library its arguments come from; what changes is the
function each operator calls. The NumPy backend is the operator table itself (`ir.ops.OPS`:
every kernel a NumPy function, with the generated-code tricks of Note [Typed calls] in
`ir.typed_calls`). Any other backend is a `Backend`: a name, how to recognise its arrays, and
its namespace (``array_api_compat.array_namespace`` of its arrays: Dask's and CuPy's wrapped
NumPy-compatible modules, or a strict Array API namespace such as ``array_api_strict``).
`backend_ops` binds, for each operator `NAMESPACE_KERNELS` lists, the kernel that operator
calls through that namespace, and clears ``typed_call`` and ``ufunc_reduce``: ``out=``
buffers, ``ufunc.reduce`` spellings and writes into owned temporaries are NumPy's alone, so
no other backend's code spells a node any other way than ``kernel(args)``.

- Why a namespace rather than NumPy's own dispatch (``__array_ufunc__`` and
  ``__array_function__``, which Dask and CuPy implement): many kernels of the table are
  Python around NumPy (``np.asarray``, ``np.empty`` then ``np.copyto``, ``np.array(x,
  copy=True)``), which dispatch would turn into conversions, and a NumPy function Dask does
  not implement falls back to NumPy on the computed array with only a FutureWarning. A kernel
  written against the namespace either exists, or the operator is refused.
- Which backend runs is decided by the arguments' types (`backend_of`), and is part of the
  signature key a compilation is cached by (the argument's type is in it), so a NumPy call
  and a Dask call of one function compile apart.
- The table is split by kind: `ir.backend_kernels` (arithmetic, reductions, shapes, basic
  indexing), `ir.backend_kernels_indexing` (take, repeat, pad, split),
  `ir.backend_kernels_indexing_gradients` (their gradients: the scatter-adds of Note
  [Scatter-adds on backends]), `ir.backend_kernels_whole` and `ir.backend_kernels_fourier`
  (sorts, factorisations, transforms: on Dask, NumPy's function per block once the axes it
  works on are one chunk), `ir.backend_kernels_products` (einsum, spelled by its definition
  where a namespace has none), and `ir.backend_kernels_elementwise` and
  `ir.backend_kernels_scans`.
- A kernel must compute what its gradient formula recomputes, bit for bit, where the formula
  compares the two (ties of a max, of a matrix norm's extreme line): Dask's 1 and inf matrix
  norms are therefore Dask sums, as the formula's are, not NumPy's norm per block.
- A factory may find nothing to make its kernel of in a namespace (``scipy.special.erf`` in a
  strict Array API one): it returns None, and the operator is refused there as if it had no
  entry.
- A kernel never converts a backend array to NumPy (``np.asarray`` of a Dask array would
  compute it, 40 GB and all): the table's kernels call the namespace only. An operator with
  no entry is refused before anything runs, by `check_supported`, with a located
  `BackendError` naming the operator and the backend.
- Writes were made pure by functionalisation (Note [Functionalisation] in
  `passes.functionalize`); its scatters (``slice_scatter``, ``select_scatter``) are, here, a
  copy and an item assignment, which Dask builds as a new graph (its ``__setitem__`` is a
  lazy out-of-place ``where``) and the Array API allows on a new array. A write back into a
  caller's argument (``prim::WriteBack``) has no entry: it is refused.
- Dask mixes with NumPy as ``X @ w`` does in plain Dask, so a NumPy weight vector and a Dask
  data matrix compile for the Dask backend and run with Dask's kernels (`mixes_numpy`). A
  strict namespace and CuPy refuse NumPy operands; there, the graph's NumPy constants
  (a 0-d float64, a NumPy scalar) are handed to kernels as the namespace's arrays or as
  Python numbers (`_to_namespace`), and NumPy arrays among the arguments are refused.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np

from ir.backend_kernel_parts import Kernel
from ir.backend_kernels import NAMESPACE_KERNELS
from ir.errors import BackendError
from ir.graph import Graph, Node
from ir.ops import OPS, OpDef
from ir.source import SourceRange


@dataclass(frozen=True)
class Backend:
    """An array library other than NumPy that compiled graphs run on (Note [Array backends]).

    >>> backend_of([dask_array, numpy_weights]).name
    'dask'
    """

    name: str
    modules: tuple[str, ...]  # top-level modules whose array types are this backend's
    namespace_module: str  # its Array API namespace, imported only when a call needs it
    mixes_numpy: bool  # NumPy arrays may be operands of its kernels (Dask's rule)

    def owns(self, value: Any) -> bool:
        module = type(value).__module__.split(".")[0]
        return module in self.modules and hasattr(value, "shape") and hasattr(value, "dtype")

    def namespace(self) -> Any:
        try:
            return importlib.import_module(self.namespace_module)
        except ImportError as error:
            raise BackendError(
                f"running on {self.name} arrays needs {self.namespace_module}: "
                "pip install array-api-compat"
            ) from error


DASK = Backend("dask", ("dask",), "array_api_compat.dask.array", mixes_numpy=True)
CUPY = Backend("cupy", ("cupy",), "array_api_compat.cupy", mixes_numpy=False)
ARRAY_API_STRICT = Backend(
    "array_api_strict", ("array_api_strict",), "array_api_strict", mixes_numpy=False
)
BACKENDS = (DASK, CUPY, ARRAY_API_STRICT)


def backend_of(values: Sequence[Any]) -> Backend | None:
    """The backend the arrays among ``values`` call for, or None for NumPy. Arrays of two
    libraries, or NumPy arrays next to a library that does not mix with them, are refused."""
    found: Backend | None = None
    for value in values:
        for backend in BACKENDS:
            if backend.owns(value):
                if found is not None and found is not backend:
                    raise BackendError(
                        f"arguments mix {found.name} and {backend.name} arrays; "
                        "convert them to one library"
                    )
                found = backend
    if (
        found is not None
        and not found.mixes_numpy
        and any(isinstance(v, np.ndarray) for v in values)
    ):
        raise BackendError(
            f"arguments mix NumPy and {found.name} arrays, which {found.name} does not "
            f"combine; convert the NumPy ones with the {found.name} namespace's asarray"
        )
    return found


def is_backend_array(value: Any) -> bool:
    """Whether ``value`` is an array of a non-NumPy backend."""
    return any(backend.owns(value) for backend in BACKENDS)


def dtype_name(dtype: Any) -> str:
    """A backend dtype's NumPy name: ``float64`` for ``array_api_strict.float64`` too."""
    name = getattr(dtype, "name", None)
    if isinstance(name, str):
        return name
    return str(dtype).rsplit(".", 1)[-1]


# Operators whose kernel is Python's own, with nothing of NumPy in it: every backend runs them
# as they are (tuples, lists, Python numbers, a condition's truth, which computes a Dask value
# as ``if`` on it does in plain Dask).
_LIBRARY_FREE = frozenset(
    {
        "prim::bool",
        "prim::TapeList",
        "aten::_sequence_as",  # a tuple or list of its parts
        "prim::TapePush",
        "prim::Uninitialized",
    }
)


def _to_namespace(xp: Any, kernel: Kernel) -> Kernel:
    """``kernel`` with NumPy constants as the namespace takes them: a NumPy scalar as a
    Python number, a (small, constant) NumPy array as the namespace's array."""

    def convert(value: Any) -> Any:
        if isinstance(value, np.generic):
            return value.item()
        if isinstance(value, np.ndarray):
            return xp.asarray(value)
        if isinstance(value, tuple | list):  # a sequence operand (np.concatenate's)
            return type(value)(convert(item) for item in value)
        return value

    def converted(*args: Any) -> Any:
        return kernel(*(convert(a) for a in args))

    return converted


@cache
def _ops_for(backend: Backend, namespace: Any) -> Mapping[str, OpDef]:
    table: dict[str, OpDef] = {}
    for name, op in OPS.items():
        factory = NAMESPACE_KERNELS.get(name)
        kernel = None if factory is None else factory(namespace)
        if kernel is not None:
            if not backend.mixes_numpy:
                kernel = _to_namespace(namespace, kernel)
            op = dataclasses.replace(op, kernel=kernel, typed_call=None, ufunc_reduce=None)
        elif op.kernel is not None and not (
            name in _LIBRARY_FREE or (name.startswith("prim::") and _python_only(op))
        ):
            continue  # no entry: `check_supported` refuses it
        table[name] = op
    return table


def _python_only(op: OpDef) -> bool:
    """A ``prim::`` operator on Python values (numbers, tuples, lists), not on arrays."""
    return not any("Tensor" in str(arg.ty) for arg in op.schema.arguments) and (
        "Tensor" not in str(op.schema.returns)
    )


def backend_ops(backend: Backend) -> Mapping[str, OpDef]:
    """The operator table for ``backend``, its kernels bound through its namespace. See Note
    [Array backends]."""
    return _ops_for(backend, backend.namespace())


def check_supported(graph: Graph, backend: Backend, ops: Mapping[str, OpDef]) -> None:
    """Refuse ``graph`` when it runs an operator ``backend`` has no kernel for: a located
    BackendError naming the operator and the backend, raised before anything runs."""
    for node in graph.all_nodes():
        op = OPS.get(node.kind)
        if op is None or op.kernel is None or node.kind in ops:
            continue
        raise BackendError(
            f"{node.kind} has no implementation on the {backend.name} backend (Note [Array "
            f"backends]); it is never run by converting {backend.name} arrays to NumPy",
            _site(node),
        )


def _site(node: Node) -> SourceRange | None:
    """Where the user wrote what ``node`` computes: its own source range, or, for a node a
    pass made without one, the nearest located node that feeds it or reads it."""
    seen: set[int] = set()
    frontier = [node]
    while frontier:
        nearby: list[Node] = []
        for current in frontier:
            if current.source_range is not None:
                return current.source_range
            seen.add(id(current))
            nearby += [value.node for value in current.inputs]
            nearby += [use.user for value in current.outputs for use in value.uses]
        frontier = [n for n in nearby if id(n) not in seen]
    return None
