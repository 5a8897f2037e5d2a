"""Wrap the runs of nodes the native tier can run into prim::Native regions.

# Note [Native regions]
# ``%y, %z = prim::Native(%x, %w)`` holds one block, ``block0(%a, %b) -> (%y', %z')``, that
# reads nothing but its parameters (one per operand) and the values it defines itself; its
# results are the node's outputs. The native tier (`autodiff.native_tier`) compiles each
# region to one numba function of its operands; every other executor runs the block as if it
# were inlined (`ir.interpreter`, `ir.codegen`), so a graph with regions is still an ordinary,
# runnable graph, and a region numba refuses runs on the NumPy tier (its node then carries
# ``fallback="why"``). The tier boundary is per region, and shows in the IR:
#
#     %x : Double(3), %t : Double(1000, 3) = prim::Native(%theta, %x0)
#       block0(%theta.1 : Double(3, 3), %x0.1 : Double(3)):
#         ... the loop, natively ...
#         -> (%x.3, %t.2)
#     %out : (Double(3, 3)) = prim::TupleConstruct(%x)          # stays on the NumPy tier
#
# The pass `native-regions` draws them:
# - A region is a maximal run of nodes of one block that each run natively
#   (`ir.native_kernels.runs_natively`: an operator of the native table, operands and results
#   of types numba takes); a prim::Loop or prim::If runs natively when every node of its blocks
#   does and its carried values and results have such types. prim::Constant nodes neither
#   join nor break a run: they stay where they are, and a region that reads one gets a copy
#   (a literal in the compiled code; a NumPy scalar becomes the Python number it holds, as a
#   0-d value is a number in a region) or, for an array, takes it as an operand.
# - The values the run reads from outside become the region's operands, the values used after
#   it (or returned) its results. The region node stands where the run's last node stood.
# - Nodes that cannot run natively stay outside; the pass looks for regions in their blocks
#   (a loop whose body calls a Python callback still gets regions inside its body).
# - A run with fewer than ``min-nodes`` nodes and no loop is left alone: calling a region
#   costs about a microsecond, as much as a NumPy call on a small array.
"""

from __future__ import annotations

import numpy as np

from ir.graph import RETURN, Block, Graph, Node, Value
from ir.native_kernels import constant_literal, native_type, runs_natively
from passes.registry import register_pass

CONSTANT = "prim::Constant"
LOOP = "prim::Loop"
IF = "prim::If"
NATIVE = "prim::Native"


@register_pass("native-regions")
def native_regions(graph: Graph, *, min_nodes: int = 2) -> bool:
    """Wrap maximal runs of nodes the native tier can run into prim::Native regions. Returns
    True if it made one. See Note [Native regions].

    Given:   %h = aten::mul(%x, %w)
             %y = aten::tanh(%h)
             %s = prim::Print(...)(%y)
    Result:  %y = prim::Native(%x, %w)
               block0(%x.1, %w.1): %h = aten::mul(%x.1, %w.1)  %y.1 = aten::tanh(%h) -> (%y.1)
             %s = prim::Print(...)(%y)
    """
    return _Regions(min_nodes).block(graph.block)


class _Regions:
    def __init__(self, min_nodes: int) -> None:
        self.min_nodes = min_nodes
        self.native: dict[Node, bool] = {}

    def block(self, block: Block) -> bool:
        changed = False
        run: list[Node] = []
        for node in list(block.nodes()):
            if node.kind == CONSTANT:
                continue
            if node.kind != NATIVE and self.runs(node):
                run.append(node)
                continue
            changed |= self.wrap(run)
            run = []
            for inner in node.blocks:
                changed |= self.block(inner)
        return self.wrap(run) or changed

    def runs(self, node: Node) -> bool:
        """Whether ``node`` (and everything in its blocks) runs natively."""
        found = self.native.get(node)
        if found is None:
            found = self.native[node] = self.decide(node)
        return found

    def decide(self, node: Node) -> bool:
        if node.kind not in (LOOP, IF):
            return runs_natively(node)
        values = [*node.inputs, *node.outputs]
        for inner in node.blocks:
            values += [*inner.inputs, *inner.outputs]
        if not all(native_type(v.ty) or _literal_constant(v) for v in values):
            return False
        return all(
            inner.kind == CONSTANT or self.runs(inner)
            for block in node.blocks
            for inner in block.nodes()
        )

    def wrap(self, run: list[Node]) -> bool:
        """Make ``run`` a region, if it is worth one."""
        if not run:
            return False
        ordered = _nodes_within(run)
        inside = set(ordered)
        loops = any(node.kind == LOOP for node in ordered)
        work = sum(node.kind not in (CONSTANT, RETURN) for node in ordered)
        if not loops and work < self.min_nodes:
            return False
        defined = {value for node in ordered for value in node.outputs}
        defined.update(param for node in ordered for b in node.blocks for param in b.inputs)
        operands: dict[Value, None] = {}
        copied: dict[Value, None] = {}  # constants the region copies in
        results: dict[Value, None] = {}
        for node in ordered:
            for value in _reads(node):
                if value in defined:
                    continue
                if _literal_constant(value):
                    copied[value] = None
                else:
                    operands[value] = None
        for node in run:
            for value in node.outputs:
                if any(use.user not in inside for use in value.uses):
                    results[value] = None
        if not results:
            return False
        graph = run[0].graph
        region = graph.create(
            NATIVE, list(operands), [v.ty for v in results], num_blocks=1
        ).copy_metadata(run[-1])
        for value, out in zip(results, region.outputs, strict=True):
            out.name_hint = value.name_hint
        body = region.blocks[0]
        mapping: dict[Value, Value] = {}
        for value in operands:
            mapping[value] = body.add_input(value.ty, value.name_hint)
        for value in copied:
            copy = graph.create_clone(value.node, mapping.__getitem__)
            constant = copy.attrs.get("value")
            if isinstance(constant, np.generic):  # a NumPy scalar (a 0-d value) is a number
                copy.attrs["value"] = constant.item()
            body.append_node(copy)
            mapping[value] = copy.output
        for node in run:
            copy = graph.create_clone(node, mapping.__getitem__)
            body.append_node(copy)
            for old, new in zip(node.outputs, copy.outputs, strict=True):
                mapping[old] = new
        for value in results:
            body.register_output(mapping[value])
        region.insert_after(run[-1])
        for value, out in zip(results, region.outputs, strict=True):
            value.replace_all_uses_with(out)
        for node in reversed(run):  # a node's users in the run go first
            node.destroy()
        for value in copied:  # constants only the run read
            if not value.uses:
                value.node.destroy()
        return True


def _literal_constant(value: Value) -> bool:
    node = value.node
    return node.kind == CONSTANT and constant_literal(node.attrs.get("value")) is not None


def _nodes_within(run: list[Node]) -> list[Node]:
    """The nodes of ``run`` and of their blocks (with each block's return), at any depth, in
    program order, so that the region's operands come in the order they are first read."""
    found: list[Node] = []

    def visit(node: Node) -> None:
        found.append(node)
        for block in node.blocks:
            for inner in block.nodes():
                visit(inner)
            found.append(block.return_node)

    for node in run:
        visit(node)
    return found


def _reads(node: Node) -> list[Value]:
    """The operands of ``node`` (a block's results, when ``node`` is its return)."""
    return list(node.inputs)
