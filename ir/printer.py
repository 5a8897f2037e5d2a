"""IR text: print a Graph in the TorchScript-like format that `ir.parser` reads back exactly.

Names are made at print time (Note [Print-time names]): a value prints as its hint, then
``hint.1``, ``hint.2`` … for later values with the same hint, and a value without a hint prints
as its position among all values in definition order (``%3``), as TorchScript numbers them.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from typing import Any

import numpy as np

from ir.graph import Block, Graph, Node, Value
from ir.types import TensorType

INDENT = "  "
# Integers of more bits are printed in hexadecimal: 2**14000 has 4215 decimal digits, within
# Python's limit of 4300 on converting to decimal.
HEX_ABOVE_BITS = 14_000

_NUMBERED_SUFFIX = re.compile(r"(\.\d+)+$")
_NAME = re.compile(r"[\w.]+")


def canonical_hint(hint: str | None) -> str | None:
    """The part of a name hint that names print: without a trailing ``.N`` (which only the
    printer adds), and None when nothing usable is left (empty, only digits, or characters the
    IR syntax cannot spell). `ir.parser` applies the same function to the names it reads."""
    if hint is None:
        return None
    base = _NUMBERED_SUFFIX.sub("", hint)
    if not base or base.isdigit() or _NAME.fullmatch(base) is None:
        return None
    return base


class Namer:
    """One print's namespace: a unique name for every value."""

    def __init__(self) -> None:
        self.names: dict[Value, str] = {}
        self.taken: set[str] = set()
        self.hint_counts: dict[str, int] = {}

    def define(self, value: Value) -> str:
        hint = canonical_hint(value.name_hint)
        if hint is None:
            name = str(len(self.names))
        else:
            count = self.hint_counts.get(hint, 0)
            name = hint if count == 0 else f"{hint}.{count}"
            while name in self.taken:
                count += 1
                name = f"{hint}.{count}"
            self.hint_counts[hint] = count + 1
        # An anonymous number can coincide with nothing else: hints never start with a digit.
        self.taken.add(name)
        self.names[value] = name
        return name

    def __getitem__(self, value: Value) -> str:
        name = self.names.get(value)
        if name is None:  # a value from outside the graph: the verifier reports it
            return f"<undefined {value.node.kind}>"
        return name


def format_float(x: float) -> str:
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    text = repr(float(x))
    return text[:-1] if text.endswith(".0") else text


def format_attr(value: Any) -> str:
    """An attribute value as IR text; `ir.parser` reads every form back to an equal value."""
    if value is None or isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        # Python refuses to write more than 4300 decimal digits (`sys.get_int_max_str_digits`);
        # hexadecimal has no limit. See Note [Limits of IR text] in `ir.parser`.
        return hex(value) if value.bit_length() > HEX_ABOVE_BITS else str(value)
    if isinstance(value, float):
        return format_float(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(format_attr(v) for v in value) + "]"
    if isinstance(value, tuple):
        inner = ", ".join(format_attr(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, np.ndarray | np.generic):
        array = np.asarray(value)
        flat = ", ".join(format_attr(v) for v in array.ravel().tolist())
        return f"tensor<{TensorType.of(array)}>[{flat}]"
    if isinstance(value, complex):  # an item of a complex tensor
        return f"complex({format_float(value.real)}, {format_float(value.imag)})"
    raise TypeError(f"cannot print an attribute of type {type(value).__name__}")


def print_graph(graph: Graph) -> str:
    """The IR text of ``graph``, ending in a newline."""
    namer = Namer()
    lines: list[str] = []
    params = _typed_values(graph.inputs, namer, define=True)
    head = f"graph @{graph.name}" if graph.name else "graph"
    lines.append(f"{head}({params}):")
    _print_nodes(graph.block, namer, lines, depth=1)
    lines.append(f"{INDENT}return ({_names(graph.outputs, namer)})")
    return "\n".join(lines) + "\n"


def print_module(graphs: Iterable[Graph]) -> str:
    """Several graphs, separated by blank lines (e.g. ``@f`` and ``@df``)."""
    return "\n".join(print_graph(g) for g in graphs)


def print_node(node: Node) -> str:
    """One node's line (nested blocks omitted), for error messages."""
    namer = Namer()
    for value in node.inputs:
        namer.define(value)
    for out in node.outputs:
        namer.define(out)
    return _node_line(node, namer).strip()


def _typed_values(values: Iterable[Value], namer: Namer, define: bool) -> str:
    parts = []
    for value in values:
        name = namer.define(value) if define else namer[value]
        parts.append(f"%{name} : {value.ty}")
    return ", ".join(parts)


def _names(values: Iterable[Value], namer: Namer) -> str:
    return ", ".join(f"%{namer[v]}" for v in values)


def _node_line(node: Node, namer: Namer) -> str:
    outputs = _typed_values(node.outputs, namer, define=False)
    attrs = ""
    if node.attrs:
        attrs = "[" + ", ".join(f"{k}={format_attr(v)}" for k, v in node.attrs.items()) + "]"
    call = f"{node.kind}{attrs}({_names(node.inputs, namer)})"
    line = f"{outputs} = {call}" if outputs else call
    if node.source_range is not None and not node.source_range.in_ir_text:
        line += f"  # {node.source_range}"
    return line


def _print_nodes(block: Block, namer: Namer, lines: list[str], depth: int) -> None:
    pad = INDENT * depth
    for node in block.nodes():
        for out in node.outputs:
            namer.define(out)
        lines.append(pad + _node_line(node, namer))
        for index, inner in enumerate(node.blocks):
            params = _typed_values(inner.inputs, namer, define=True)
            lines.append(f"{pad}{INDENT}block{index}({params}):")
            _print_nodes(inner, namer, lines, depth + 2)
            lines.append(f"{pad}{INDENT * 2}-> ({_names(inner.outputs, namer)})")
