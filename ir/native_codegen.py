"""One numba function per prim::Native region: its source, and its compilation.

``region_source(block, "region")`` writes the region's block as Python that numba compiles:

    def region(theta, x0):                        # the block's parameters, in order
        v24 = np.empty((max(1000, 0), 3), np.float64)
        x_1 = x0
        for t in range(1000):                     # a loop whose condition stays True
            v33 = np.dot(theta, x_1)
            ...
            x_1 = x_3
        v42 = np.sum(x_1 * x_1)
        return (x_1, v24, v42)

``compile_region(node)`` compiles it with ``numba.njit``, eagerly, for the argument types the
IR gives (so a region numba refuses is known before any run), and returns a callable
``fn(*operands) -> tuple of results`` or, when numba refuses, None and why. It asks
`ir.native_scalar.scalarized_source` first, when that module exists: for small static shapes
it keeps every array in scalar locals, and its source is used as is.

# Note [Native region code]
# - Operators are spelled by `ir.native_kernels`; constants are literals (None, numbers,
#   strings, tuples) — the pass makes an array constant an operand. Nothing of the NumPy tier's
#   generated-code tricks applies (typed calls, the memory plan, ``del``): numba's own liveness
#   and LLVM do that work, and a region writes into nothing but the tapes it creates.
# - A 0-d array of the IR is a scalar inside a region: the caller passes ``x[()]`` and gets the
#   result back as a NumPy scalar of its dtype (``np.float64``), as NumPy's own reductions give.
# - prim::Loop is ``for i in range(n)`` when its condition is the constant True in and out
#   (every ``for`` loop), a ``while`` otherwise; prim::If is ``if``/``else``.
# - Elementwise chains: Note [Fused loops].
# - Compiled with ``error_model="numpy"`` and ``boundscheck=True``: a tape index out of range
#   raises IndexError (reported on the region's node) rather than reading memory it should
#   not; no fastmath (Note [Native numerics] in `ir.native_kernels`).
#
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
# Note [Fused loops]
# A maximal run of elementwise nodes (a `NativeKernel` with an ``element`` spelling) whose
# results are float64 arrays of one static shape, and whose operands are arrays of that shape
# or Python numbers / 0-d values, becomes one loop nest over the shape: each node is a scalar
# local per element, and only the values read after the run (or by another node than the
# run's) are stored into arrays allocated before the loop. ``y = tanh(a * b) - c`` on 16
# elements costs one allocation and one loop instead of three of each. The scalar operations
# are the same IEEE operations in the same order, so fusing changes no result.
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
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ir.codegen import CompiledGraph
from ir.graph import Block, Graph, Node, Value
from ir.native_helpers import HELPERS
from ir.native_kernels import NATIVE_KERNELS, constant_literal, spell
from ir.native_spellings import PYTHON_DTYPES
from ir.types import BOOL, FLOAT, INT, TensorType

__all__ = [
    "NativeCompileError",
    "compile_region",
    "numba_available",
    "region_graph",
    "region_source",
]


class NativeCompileError(Exception):
    """The emitter met a node it cannot write (the region then runs on the NumPy tier)."""


def numba_available() -> bool:
    """Whether numba can be imported (imports it: about a second the first time)."""
    try:
        importlib.import_module("numba")
    except ImportError:
        return False
    return True


# -- source -----------------------------------------------------------------------------------


def region_source(block: Block, name: str, *, fuse: bool = True) -> str:
    """The source of ``def name(params...): ...; return (results...)`` for a region's block.
    Raises NativeCompileError for a node it cannot write."""
    writer = _Writer(fuse)
    params = [writer.define(v) for v in block.inputs]
    writer.line(0, f"def {name}({', '.join(params)}):")
    writer.block(block, 1)
    results = [writer.expr[v] for v in block.outputs]
    writer.line(1, f"return ({''.join(r + ', ' for r in results)})")
    return "\n".join(writer.lines) + "\n"


class _Writer:
    def __init__(self, fuse: bool) -> None:
        self.fuse = fuse
        self.lines: list[str] = []
        self.expr: dict[Value, str] = {}
        self.used: set[str] = {"np", "range", "max", "min", "float", "int", "abs", *HELPERS}

    def line(self, indent: int, text: str) -> None:
        self.lines.append("    " * indent + text)

    def fresh(self, hint: str | None) -> str:
        base = re.sub(r"\W", "_", hint or "v", flags=re.ASCII) or "v"
        if not base[0].isalpha():
            base = f"v{base}"
        name, count = base, 0
        while name in self.used:
            count += 1
            name = f"{base}_{count}"
        self.used.add(name)
        return name

    def define(self, value: Value) -> str:
        name = self.fresh(value.name_hint)
        self.expr[value] = name
        return name

    def block(self, block: Block, indent: int) -> None:
        nodes = list(block.nodes())
        position = 0
        while position < len(nodes):
            group = _fusable_run(nodes, position) if self.fuse else []
            if sum(node.kind != "prim::Constant" for node in group) >= 2:
                self.fused(group, block, indent)
                position += len(group)
                continue
            self.node(nodes[position], indent)
            position += 1

    def node(self, node: Node, indent: int) -> None:
        if node.kind == "prim::Constant":
            literal = constant_literal(node.attr("value"))
            if literal is None:
                raise NativeCompileError(f"a constant of type {node.output.ty} in a region")
            self.expr[node.output] = literal
        elif node.kind == "prim::Loop":
            self.loop(node, indent)
        elif node.kind == "prim::If":
            self.if_(node, indent)
        else:
            text = spell(node, [self.expr[v] for v in node.inputs])
            if text is None:
                raise NativeCompileError(f"{node.kind} has no native spelling for these operands")
            self.line(indent, f"{self.define(node.output)} = {text}")

    def loop(self, node: Node, indent: int) -> None:
        body = node.blocks[0]
        trip, condition = (self.expr[v] for v in node.inputs[:2])
        carried = [self.expr[v] for v in node.inputs[2:]]
        outs = [self.define(v) for v in node.outputs]
        for out, init in zip(outs, carried, strict=True):
            self.line(indent, f"{out} = {init}")
        counter = self.define(body.inputs[0])
        always = (
            condition == "True"
            and body.outputs[0].node.kind == "prim::Constant"
            and (body.outputs[0].node.attr("value") is True)
        )
        if always:
            self.line(indent, f"for {counter} in range({trip}):")
        else:
            go = self.fresh("go")
            self.line(indent, f"{go} = bool({condition})")
            self.line(indent, f"{counter} = 0")
            self.line(indent, f"while {go} and {counter} < {trip}:")
        for param, out in zip(body.inputs[1:], outs, strict=True):
            self.line(indent + 1, f"{self.define(param)} = {out}")
        self.block(body, indent + 1)
        results = [self.expr[v] for v in body.outputs]
        for out, result in zip(outs, results[1:], strict=True):
            self.line(indent + 1, f"{out} = {result}")
        if not always:
            self.line(indent + 1, f"{go} = bool({results[0]})")
            self.line(indent + 1, f"{counter} += 1")

    def if_(self, node: Node, indent: int) -> None:
        outs = [self.define(v) for v in node.outputs]
        self.line(indent, f"if {self.expr[node.inputs[0]]}:")
        for index, branch in enumerate(node.blocks):
            if index == 1:
                self.line(indent, "else:")
            start = len(self.lines)
            self.block(branch, indent + 1)
            for out, result in zip(outs, branch.outputs, strict=True):
                self.line(indent + 1, f"{out} = {self.expr[result]}")
            if len(self.lines) == start:
                self.line(indent + 1, "pass")

    def fused(self, group: list[Node], block: Block, indent: int) -> None:
        """One loop nest for an elementwise run: Note [Fused loops]."""
        shape = _shape(group[0].output)
        members = set(group)
        for node in group:
            if node.kind == "prim::Constant":
                self.node(node, indent)
        group = [node for node in group if node.kind != "prim::Constant"]
        stored = [
            node.output
            for node in group
            if any(use.user not in members for use in node.output.uses)
        ]
        for value in stored:
            self.line(indent, f"{self.define(value)} = np.empty({shape!r}, np.float64)")
        index_names = [self.fresh(f"k{axis}") for axis in range(len(shape))]
        subscript = ", ".join(index_names)
        for axis, (k, size) in enumerate(zip(index_names, shape, strict=True)):
            self.line(indent + axis, f"for {k} in range({size}):")
        inner = indent + len(shape)
        scalars: dict[Value, str] = {}
        for node in group:
            operands = []
            for value in node.inputs:
                if value in scalars:
                    operands.append(scalars[value])
                elif _rank(value) == 0:
                    operands.append(self.expr[value])
                else:
                    operands.append(f"{self.expr[value]}[{subscript}]")
            element = NATIVE_KERNELS[node.kind].element
            assert element is not None
            name = self.fresh(f"s_{node.output.name_hint or 'v'}")
            scalars[node.output] = name
            self.line(inner, f"{name} = {element.format(*operands)}")
        for value in stored:
            self.line(inner, f"{self.expr[value]}[{subscript}] = {scalars[value]}")


def _rank(value: Value) -> int:
    ty = value.ty
    return len(ty.shape) if isinstance(ty, TensorType) and ty.shape is not None else 0


def _shape(value: Value) -> tuple[int, ...]:
    ty = value.ty
    assert isinstance(ty, TensorType)
    assert ty.shape is not None
    return tuple(d for d in ty.shape if d is not None)


def _fusable(node: Node, shape: tuple[int | None, ...] | None) -> bool:
    kernel = NATIVE_KERNELS.get(node.kind)
    if kernel is None or kernel.element is None or len(node.outputs) != 1:
        return False
    ty = node.output.ty
    if not (isinstance(ty, TensorType) and ty.dtype == "float64" and ty.shape):
        return False
    if None in ty.shape or (shape is not None and ty.shape != shape):
        return False
    if spell(node, ["a"] * len(node.inputs)) is None:
        return False
    for value in node.inputs:
        operand = value.ty
        if isinstance(operand, TensorType):
            if operand.dtype != "float64" or operand.shape not in ((), ty.shape):
                return False
        elif operand not in (INT, FLOAT, BOOL):
            return False
    return True


def _fusable_run(nodes: Sequence[Node], start: int) -> list[Node]:
    """The elementwise nodes from ``start`` on that fuse with ``nodes[start]``."""
    first = nodes[start]
    if not _fusable(first, None):
        return []
    shape = first.output.ty.shape  # type: ignore[attr-defined]
    group = [first]
    for node in nodes[start + 1 :]:
        if node.kind != "prim::Constant" and not _fusable(node, shape):
            break
        group.append(node)
    while group[-1].kind == "prim::Constant":
        group.pop()
    return group


# -- compilation -----------------------------------------------------------------------------


def compile_region(node: Node) -> tuple[Callable[..., tuple[Any, ...]] | None, str]:
    """``node``'s region compiled by numba, eagerly for its operands' IR types: the callable
    and which code it runs (scalarized or on arrays) and how long compiling took, or None and
    why numba refused. See Note [Native region code]."""
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
