"""The source of one numba function per prim::Native region.

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

`ir.native_codegen.compile_region` compiles it with ``numba.njit``.

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
# Note [Fused loops]
# A maximal run of elementwise nodes (a `NativeKernel` with an ``element`` spelling) whose
# results are float64 arrays of one static shape, and whose operands are arrays of that shape
# or Python numbers / 0-d values, becomes one loop nest over the shape: each node is a scalar
# local per element, and only the values read after the run (or by another node than the
# run's) are stored into arrays allocated before the loop. ``y = tanh(a * b) - c`` on 16
# elements costs one allocation and one loop instead of three of each. The scalar operations
# are the same IEEE operations in the same order, so fusing changes no result.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ir.graph import Block, Node, Value
from ir.native_helpers import HELPERS
from ir.native_kernels import NATIVE_KERNELS, constant_literal, spell
from ir.types import BOOL, FLOAT, INT, TensorType

__all__ = ["NativeCompileError", "region_source"]


class NativeCompileError(Exception):
    """The emitter met a node it cannot write (the region then runs on the NumPy tier)."""


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
