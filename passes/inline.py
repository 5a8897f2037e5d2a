"""Inlining: every ``prim::CallFunction[callee="name"]`` becomes a copy of graph @name's body.

A graph is inlined with a work list rather than recursion: each call is replaced by a copy of
its callee's body, and the calls inside that copy join the list, so a chain of a thousand
nested helpers costs no Python stack. (The result is the same as inlining callees first.) The
module keeps all its graphs; with ``entry-only`` only its first graph (the function
`frontend.compile_function` compiled) is inlined, which costs time linear in the inlined size,
where flattening every graph of a deep call chain costs its square. Copied nodes keep their
source ranges, which point into the callee's source.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from ir.errors import IRError
from ir.graph import Graph, Node, Value
from passes.registry import Module, register_module_pass

CALL = "prim::CallFunction"


@register_module_pass("inline")
def inline_calls(module: Module, *, entry_only: bool = False) -> bool:
    """Replace each call of a module graph by a copy of the callee's body; True if any was.

    Given:   graph @main(%x): %y = prim::CallFunction[callee="helper"](%x); return (%y)
             graph @helper(%a): %b = aten::neg(%a); return (%b)
    Execute: inline_calls(module)
    Result:  graph @main(%x): %b = aten::neg(%x); return (%b)      (@helper is unchanged)
    """
    _check_call_graph(module)
    changed = False
    graphs = list(module.values())
    for graph in graphs[:1] if entry_only else graphs:
        pending = _calls_in(graph.all_nodes())
        changed |= bool(pending)
        while pending:
            call = pending.pop()
            copies = inline_call(call, module[str(_callee(call))])
            pending.extend(_calls_in(_walk(copies)))
    return changed


def inline_call(call: Node, callee: Graph) -> list[Node]:
    """Replace ``call`` by a copy of ``callee``'s body, its parameters bound to the call's
    operands.

    Given:   %y = prim::CallFunction[callee="helper"](%x)      (@helper(%a): %b = aten::neg(%a))
    Execute: inline_call(node of %y, helper)
    Result:  %b = aten::neg(%x), and uses of %y read %b

    Returns the copies of the callee's top-level nodes.
    """
    graph = call.graph
    name = callee.name or "?"
    if len(call.inputs) != len(callee.inputs):
        raise IRError(
            f"@{name} takes {len(callee.inputs)} arguments, the call passes {len(call.inputs)}",
            call.source_range,
        )
    if len(call.outputs) != len(callee.outputs):
        raise IRError(
            f"@{name} returns {len(callee.outputs)} values, the call has {len(call.outputs)}",
            call.source_range,
        )
    copies: dict[Value, Value] = dict(zip(callee.inputs, call.inputs, strict=True))
    inserted: list[Node] = []
    with graph.inserting_before(call):
        for node in callee.nodes():
            copy = graph.insert_node(graph.create_clone(node, copies.__getitem__))
            copies.update(zip(node.outputs, copy.outputs, strict=True))
            inserted.append(copy)
    for out, result in zip(call.outputs, callee.outputs, strict=True):
        out.replace_all_uses_with(copies[result])
    call.destroy()
    return inserted


def _callee(node: Node) -> str | None:
    if node.kind != CALL:
        return None
    callee = node.attrs.get("callee")
    return callee if isinstance(callee, str) else None


def _calls_in(nodes: Iterable[Node]) -> list[Node]:
    return [node for node in nodes if _callee(node) is not None]


def _walk(nodes: list[Node]) -> Iterator[Node]:
    """``nodes`` and every node nested in their blocks."""
    pending = list(reversed(nodes))
    while pending:
        node = pending.pop()
        yield node
        for block in reversed(node.blocks):
            pending.extend(reversed(list(block.nodes())))


def _check_call_graph(module: Module) -> None:
    """Refuse a call of a graph the module does not hold, and call cycles (found by a
    depth-first walk of the call graph with an explicit stack)."""
    calls: dict[str, list[tuple[str, Node]]] = {}
    for name, graph in module.items():
        found = [(str(_callee(node)), node) for node in graph.all_nodes() if _callee(node)]
        for callee, node in found:
            if callee not in module:
                raise IRError(
                    f"prim::CallFunction calls @{callee}, which is not in the module",
                    node.source_range,
                )
        calls[name] = found
    state: dict[str, str] = {}  # "active" while on the stack, then "done"
    for root in module:
        if root in state:
            continue
        stack: list[tuple[str, int]] = [(root, 0)]
        state[root] = "active"
        while stack:
            name, position = stack[-1]
            if position == len(calls[name]):
                stack.pop()
                state[name] = "done"
                continue
            stack[-1] = (name, position + 1)
            callee, node = calls[name][position]
            if state.get(callee) == "active":
                cycle = [n for n, _ in stack[[n for n, _ in stack].index(callee) :]]
                path = " -> ".join(f"@{n}" for n in [*cycle, callee])
                raise IRError(f"recursive calls cannot be inlined: {path}", node.source_range)
            if callee not in state:
                state[callee] = "active"
                stack.append((callee, 0))
