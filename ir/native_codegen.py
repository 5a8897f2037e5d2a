"""One numba function per prim::Native region, compiled.

``compile_region(node)`` compiles the region's block with ``numba.njit``, eagerly, for the
argument types the IR gives (so a region numba refuses is known before any run), and returns a
callable ``fn(*operands) -> tuple of results`` or, when numba refuses, None and why. It asks
`ir.native_scalar.scalarized_source` first, when that module exists: for small static shapes
it keeps every array in scalar locals, and its source is used as is; else the source is
`ir.native_source.region_source`'s.

# Note [Region arguments]
# A region is compiled once, eagerly, for the types its IR gives its operands: C-contiguous
# arrays of their dtype and rank, Python numbers, 0-d arrays as scalars (the caller passes
# ``x[()]`` and gets 0-d results back as NumPy scalars of their dtype, as NumPy's reductions
# give them). Then the dispatcher is closed: compiling at run time would stall a call for a
# second. A call whose arguments fit no compiled signature (numba's TypeError) runs again with
# contiguous copies of its arrays (a transposed operand), and failing that, runs the block as
# generated Python: a value the IR types as an array may be None at run time (a
# prim::Uninitialized a branch never assigns), and the NumPy tier's kernels accept it.
#
# Note [Packed results]
# numba boxes each array a compiled function returns as a new NumPy array, about 0.6 us
# apiece: a region of the 16-element chain returns 19 saved values for ``df``, and boxing them
# cost more than its arithmetic. So results of one dtype and one small static shape, when
# there are at least `PACK_AT_LEAST` of them, are copied into the rows of one array by a
# wrapper compiled with the region, and the caller hands out the rows (views that do not
# overlap: a write into one, by the NumPy tier's memory plan, reaches no other).
"""

from __future__ import annotations

import importlib
import math
import re
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from ir.codegen import CompiledGraph
from ir.graph import Block, Graph, Node, Value
from ir.native_helpers import HELPERS
from ir.native_source import NativeCompileError, region_source
from ir.native_spellings import PYTHON_DTYPES
from ir.types import TensorType

__all__ = ["compile_region", "numba_available", "region_graph"]


def numba_available() -> bool:
    """Whether numba can be imported (imports it: about a second the first time)."""
    try:
        importlib.import_module("numba")
    except ImportError:
        return False
    return True


def compile_region(node: Node) -> tuple[Callable[..., tuple[Any, ...]] | None, str]:
    """``node``'s region compiled by numba, eagerly for its operands' IR types: the callable
    and which code it runs (scalarized or on arrays) and how long compiling took, or None and
    why numba refused. See Note [Native region code] in `ir.native_source`."""
    import numba

    block = node.blocks[0]
    name = "region"
    source = _scalarized(block, name)
    form = "scalarized"
    if source is None:
        form = "array"
        try:
            source = region_source(block, name)
        except NativeCompileError as error:
            return None, str(error)
    packs = _packs(block)
    if packs:
        source += _packing_source(name, "packed", len(block.inputs), len(block.outputs), packs)
        name = "packed"
    namespace: dict[str, Any] = {"np": np}
    for helper, function in HELPERS.items():
        namespace[helper] = _jitted(function)
    start = time.perf_counter()
    try:
        exec(compile(source, f"<native region of {node.kind}>", "exec"), namespace)
        if packs:
            namespace["region"] = numba.njit(error_model="numpy", boundscheck=True)(
                namespace["region"]
            )
        compiled = numba.njit(error_model="numpy", boundscheck=True, nogil=True)(namespace[name])
        compiled.compile(tuple(_numba_type(v) for v in block.inputs))
        compiled.disable_compile()  # Note [Region arguments]
    except Exception as error:  # numba's typing and lowering errors have no common base
        return None, _first_line(error)
    took = time.perf_counter() - start
    return _boundary(compiled, block, packs), f"{form} code compiled in {took:.2f} s"


# Note [Packed results]: how many results of one small shape make packing pay, and how small.
PACK_AT_LEAST = 4
PACK_AT_MOST_ELEMENTS = 4096


def _packs(block: Block) -> list[list[int]]:
    """The positions of ``block``'s results to return packed, one list per array of rows."""
    groups: dict[tuple[str, tuple[int, ...]], list[int]] = {}
    for index, value in enumerate(block.outputs):
        ty = value.ty
        if isinstance(ty, TensorType) and ty.dtype in ("float64", "int64") and ty.shape:
            shape = tuple(n for n in ty.shape if isinstance(n, int))
            if len(shape) == len(ty.shape) and math.prod(shape) <= PACK_AT_MOST_ELEMENTS:
                groups.setdefault((ty.dtype, shape), []).append(index)
    return [rows for rows in groups.values() if len(rows) >= PACK_AT_LEAST]


def _packing_source(inner: str, name: str, arity: int, count: int, packs: list[list[int]]) -> str:
    """``def name(...)``: ``inner``'s results with each of ``packs`` as the rows of one array,
    the packed arrays first, then the other results in order."""
    params = ", ".join(f"a{i}" for i in range(arity))
    lines = ["", "", f"def {name}({params}):", f"    r = {inner}({params})"]
    packed = {index for rows in packs for index in rows}
    results = []
    for number, rows in enumerate(packs):
        lines.append(
            f"    p{number} = np.empty((({len(rows)},) + r[{rows[0]}].shape), r[{rows[0]}].dtype)"
        )
        lines += [f"    p{number}[{row}] = r[{index}]" for row, index in enumerate(rows)]
        results.append(f"p{number}")
    results += [f"r[{index}]" for index in range(count) if index not in packed]
    lines.append(f"    return ({''.join(r + ', ' for r in results)})")
    return "\n".join(lines) + "\n"


def _scalarized(block: Block, name: str) -> str | None:
    """`ir.native_scalar.scalarized_source` when that module is there."""
    try:
        module = importlib.import_module("ir.native_scalar")
    except ImportError:
        return None
    source: str | None = module.scalarized_source(block, name)
    return source


_JITTED: dict[Callable[..., Any], Any] = {}


def _jitted(function: Callable[..., Any]) -> Any:
    found = _JITTED.get(function)
    if found is None:
        import numba

        found = _JITTED[function] = numba.njit(error_model="numpy", boundscheck=True)(function)
    return found


def _numba_type(value: Value) -> Any:
    from numba import types

    ty = value.ty
    scalars = {"float64": types.float64, "int64": types.int64, "bool": types.boolean}
    if isinstance(ty, TensorType):
        assert ty.dtype is not None
        assert ty.shape is not None
        if not ty.shape:
            return scalars[ty.dtype]
        return types.Array(scalars[ty.dtype], len(ty.shape), "C")
    return scalars[PYTHON_DTYPES[ty]]


def _boundary(compiled: Any, block: Block, packs: list[list[int]]) -> Callable[..., Any]:
    """``compiled`` as the generated code calls it: Note [Region arguments], Note [Packed
    results]."""
    scalar_ins = frozenset(
        i for i, v in enumerate(block.inputs) if isinstance(v.ty, TensorType) and v.ty.shape == ()
    )
    scalar_outs = [
        (i, np.dtype(v.ty.dtype).type)
        for i, v in enumerate(block.outputs)
        if isinstance(v.ty, TensorType) and v.ty.shape == ()
    ]
    python: list[CompiledGraph] = []  # the block as generated Python, made when first needed

    count = len(block.outputs)
    packed = {index for rows in packs for index in rows}
    rest = [index for index in range(count) if index not in packed]

    leading = len(packs) == 1 and packs[0] == list(range(len(packs[0])))

    def unpack(results: tuple[Any, ...]) -> Any:
        """The compiled function's results in the block's order: Note [Packed results]."""
        if not packs:
            return results
        if leading:  # the rows are the first results: list() makes the views in C
            first = list(results[0])
            first += results[1:]
            return first
        out: list[Any] = [None] * count
        for rows, array in zip(packs, results, strict=False):
            for index, row in zip(rows, array, strict=True):
                out[index] = row
        for index, value in zip(rest, results[len(packs) :], strict=True):
            out[index] = value
        return out

    def other_arguments(args: tuple[Any, ...]) -> Any:
        contiguous = tuple(
            np.ascontiguousarray(a) if type(a) is np.ndarray and not a.flags.c_contiguous else a
            for a in args
        )
        try:
            return unpack(compiled(*contiguous))
        except TypeError:  # still no compiled signature: a None, another dtype
            pass
        if not python:
            python.append(CompiledGraph(region_graph(block)))
        return python[0](*args)

    def call(*args: Any) -> Any:
        if scalar_ins:
            args = tuple(np.asarray(a)[()] if i in scalar_ins else a for i, a in enumerate(args))
        try:
            results = unpack(compiled(*args))
        except TypeError:  # numba's dispatcher: no compiled signature for these arguments
            results = other_arguments(args)
        if not scalar_outs:
            return results
        results = list(results)
        for index, kind in scalar_outs:
            if not isinstance(results[index], np.ndarray):
                results[index] = kind(results[index])
        return results

    return call


def region_graph(block: Block) -> Graph:
    """A region's block as a graph of its own (its parameters the graph's inputs)."""
    graph = Graph("region")
    mapping: dict[Value, Value] = {v: graph.add_input(v.ty, v.name_hint) for v in block.inputs}
    graph.block._clone_body(block, mapping, mapping.__getitem__)
    return graph


def _first_line(error: BaseException) -> str:
    """The line of numba's message that says what it refused, without its colours."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", str(error))
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    useful = [line for line in lines if not line.startswith(("Failed in", "During:", "File "))]
    summary = (useful or lines or [type(error).__name__])[0]
    return f"numba: {summary[:200]}"
