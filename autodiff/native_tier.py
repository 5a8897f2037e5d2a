"""The native tier's entry point: a graph compiled with its regions in numba.

``native_runnable(graph)`` copies ``graph``, draws its native regions (the pass
`native-regions`, Note [Native regions] in `passes.native_regions`), compiles each with numba
(`ir.native_codegen.compile_region`, synchronously, in the calling thread) and returns the
graph as generated code (`ir.codegen.CompiledGraph`) that calls the compiled regions: the same
results as the NumPy tier's `CompiledGraph` of ``graph``, to the tolerance of Note [Native
numerics] in `ir.native_kernels`. A region numba refuses keeps its block, run by the generated
Python code, and records why on its node (``fallback="..."``), which `autodiff dump --stage
native` shows. None when numba is not installed, or when no region compiled.

>>> runnable = native_runnable(gradient.df)
>>> runnable(*df_inputs) if runnable is not None else compiled_df(*df_inputs)
"""

from __future__ import annotations

from typing import Any

from ir.codegen import CompiledGraph, Runnable
from ir.graph import Graph, Node
from ir.native_codegen import compile_region, numba_available
from passes.registry import run_passes

__all__ = ["compile_regions", "native_graph", "native_runnable", "numba_available"]


def native_graph(graph: Graph) -> Graph:
    """A copy of ``graph`` with its native regions drawn (not compiled)."""
    copy = graph.copy()
    run_passes(copy, "native-regions")
    return copy


def native_runnable(graph: Graph) -> Runnable | None:
    """``graph`` with every native region compiled by numba, or None when there is none to
    run natively (or numba is missing). See the module docstring."""
    if not numba_available():
        return None
    regions_graph = native_graph(graph)
    natives = compile_regions(regions_graph)
    if not natives:
        return None
    return CompiledGraph(regions_graph, natives=natives)


def compile_regions(graph: Graph) -> dict[Node, Any]:
    """Compile every prim::Native of ``graph``: the compiled ones by node, each marked
    ``native="scalarized code compiled in 0.41 s"``; each one numba refuses gets
    ``fallback="why"`` and keeps running its block."""
    natives: dict[Node, Any] = {}
    for node in graph.all_nodes():
        if node.kind != "prim::Native":
            continue
        compiled, note = compile_region(node)
        if compiled is None:
            node.attrs["fallback"] = note
        else:
            node.attrs["native"] = note
            natives[node] = compiled
    return natives
