"""The profiler: time and bytes allocated per node of ``f`` and ``df``, each ``df`` node tied to
the forward operation whose derivative it computes (`SourceRange.gradient_of`) and its line.

# Note [Profiler]
# A `Profile` is a node hook (Note [Instrumented runs] in `autodiff.instrument`): it times each
# kernel node with ``perf_counter_ns`` and counts the bytes of the arrays the node's results
# own — a view of an operand counts nothing, a view of a new array counts that array — and
# records one `NodeEvent` per run of a node (a node in a loop body runs many times). `entries`
# sums the events per node, for tables — per place in f or df and IR line, so that the same
# function compiled again (a new ``ad.grad(f)`` each step) adds to the same entries.
# `chrome_trace` lays the events out in the Chrome trace event format (``chrome://tracing``,
# Perfetto), ``f`` on thread 1 and ``df`` on thread 2.
# Times include the hook's own overhead, a few microseconds per node.
"""

from __future__ import annotations

import html
import json
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from autodiff.errors import DifferentiationError
from autodiff.instrument import held_arrays, node_hook
from autodiff.tracebacks import api_boundary
from ir.dot import display_filename
from ir.graph import Node
from ir.printer import print_node

SORT_KEYS = ("order", "time", "bytes", "calls")


@dataclass(frozen=True, slots=True)
class NodeEvent:
    """One run of one kernel node."""

    graph: str  # "f" or "df"
    node: Node
    start_ns: int
    duration_ns: int
    bytes: int


@dataclass(frozen=True, slots=True)
class ProfileEntry:
    """One node of ``f`` or ``df``, its runs summed."""

    graph: str  # "f" or "df"
    op: str  # the node's operator, e.g. "aten::mul"
    forward_op: str | None  # for df: the forward operator it differentiates; for f: op
    location: str  # "file.py:4:11", or "" when the node has no source range
    source_line: str  # the user's line, stripped ("" when unknown)
    ir: str  # the node as IR text
    calls: int
    time_ns: int
    bytes: int

    @property
    def time_us(self) -> float:
        return self.time_ns / 1000


@dataclass(frozen=True, slots=True)
class LineTime:
    """The time the nodes of one source line took, in ``f`` and in ``df``."""

    location: str  # "mlp.py:17", or "" for nodes with no source line
    source_line: str  # the line's text, stripped ("" when unknown)
    f_ns: int
    df_ns: int
    calls: int

    @property
    def time_ns(self) -> int:
        return self.f_ns + self.df_ns


class Profile:
    """What `profile` or `profiler` recorded.

    >>> prof = ad.profile(loss, w, x, y)
    >>> print(prof.table(sort_by="time", limit=10))
    >>> prof.entries(sort_by="bytes")[0].forward_op
    'aten::matmul'
    >>> prof.export_chrome_trace("loss.json")       # open in chrome://tracing or Perfetto
    """

    def __init__(self) -> None:
        self.events: list[NodeEvent] = []
        self.origin_ns = time.perf_counter_ns()
        self.result: Any = None  # what `profile` computed: (value, gradient)

    def __call__(
        self, graph: str, node: Node, kernel: Callable[..., Any], args: tuple[Any, ...]
    ) -> Any:
        start = time.perf_counter_ns()
        result = kernel(*args)
        duration = time.perf_counter_ns() - start
        self.events.append(NodeEvent(graph, node, start, duration, _allocated(result, args)))
        return result

    def entries(self, sort_by: str = "order") -> list[ProfileEntry]:
        """One entry per node that ran, in order of first run or sorted, largest first, by
        ``"time"``, ``"bytes"`` or ``"calls"``."""
        if sort_by not in SORT_KEYS:
            raise ValueError(f"sort_by must be one of {', '.join(SORT_KEYS)}, not {sort_by!r}")
        # A node is known by its place in its graph and its IR line, so that compilations of
        # one function share entries.
        keys: dict[int, tuple[str, int, str]] = {}
        places: dict[int, dict[int, int]] = {}
        totals: dict[tuple[str, int, str], list[Any]] = {}
        for event in self.events:
            node = event.node
            key = keys.get(id(node))
            if key is None:
                block = node.owning_block
                graph = block.graph if block is not None else None
                place = places.get(id(graph))
                if place is None and graph is not None:
                    place = places[id(graph)] = {id(n): i for i, n in enumerate(graph.all_nodes())}
                where = place.get(id(node), -1) if place is not None else -1
                key = keys[id(node)] = (event.graph, where, print_node(node))
            total = totals.get(key)
            if total is None:
                totals[key] = [event, 1, event.duration_ns, event.bytes]
            else:
                total[1] += 1
                total[2] += event.duration_ns
                total[3] += event.bytes
        entries = [_entry(first, calls, ns, nbytes) for first, calls, ns, nbytes in totals.values()]
        if sort_by == "time":
            entries.sort(key=lambda e: e.time_ns, reverse=True)
        elif sort_by == "bytes":
            entries.sort(key=lambda e: e.bytes, reverse=True)
        elif sort_by == "calls":
            entries.sort(key=lambda e: e.calls, reverse=True)
        return entries

    def table(self, sort_by: str = "order", limit: int | None = None) -> str:
        """The entries as a text table, with each graph's total time and bytes at the end."""
        entries = self.entries(sort_by)
        total_ns = sum(e.time_ns for e in entries) or 1
        header = ("graph", "op", "forward op", "source", "calls", "time (us)", "%", "bytes")
        rows = [
            (
                e.graph,
                e.op,
                e.forward_op or "",
                e.location,
                str(e.calls),
                f"{e.time_us:.1f}",
                f"{100 * e.time_ns / total_ns:.1f}",
                str(e.bytes),
            )
            for e in (entries if limit is None else entries[:limit])
        ]
        for graph in ("f", "df"):
            mine = [e for e in entries if e.graph == graph]
            if mine:
                ns, nbytes = sum(e.time_ns for e in mine), sum(e.bytes for e in mine)
                rows.append(
                    (graph, "total", "", "", str(sum(e.calls for e in mine)),
                     f"{ns / 1000:.1f}", f"{100 * ns / total_ns:.1f}", str(nbytes))
                )  # fmt: skip
        widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
        numeric = {4, 5, 6, 7}

        def line(row: tuple[str, ...]) -> str:
            cells = [
                cell.rjust(width) if i in numeric else cell.ljust(width)
                for i, (cell, width) in enumerate(zip(row, widths, strict=True))
            ]
            return "  ".join(cells).rstrip()

        rule = "  ".join("-" * width for width in widths)
        return "\n".join([line(header), rule, *(line(row) for row in rows)])

    def __str__(self) -> str:
        return self.table()

    def time_per_line(self) -> list[LineTime]:
        """The entries' time summed per source line (a ``df`` node counts for the line it
        differentiates), longest first.

        >>> prof.time_per_line()[0]
        LineTime(location='model.py:6', source_line='h = np.tanh(x @ w)', f_ns=..., ...)
        """
        totals: dict[str, list[Any]] = {}
        for entry in self.entries():
            location = _line_of(entry.location)
            total = totals.setdefault(location, [entry.source_line, 0, 0, 0])
            total[1 if entry.graph == "f" else 2] += entry.time_ns
            total[3] += entry.calls
        lines = [LineTime(where, *total) for where, total in totals.items()]
        lines.sort(key=lambda line: line.time_ns, reverse=True)
        return lines

    def _repr_html_(self) -> str:
        """Jupyter shows a profile as a table of time per source line with a bar for each,
        ``f`` and ``df`` stacked, longest first: plain HTML and CSS (`time_per_line`)."""
        lines = self.time_per_line()
        longest = max((line.time_ns for line in lines), default=0) or 1
        total = sum(line.time_ns for line in lines) or 1
        rows = []
        for line in lines:
            f_width = 100 * line.f_ns / longest
            df_width = 100 * line.df_ns / longest
            bar = (
                f'<div style="display:flex;width:16em;height:0.9em;background:#f3f4f6">'
                f'<div style="width:{f_width:.1f}%;background:{_F_COLOUR}"></div>'
                f'<div style="width:{df_width:.1f}%;background:{_DF_COLOUR}"></div></div>'
            )
            cells = [
                f"<code>{html.escape(line.location or '(no source line)')}</code>",
                f"<code>{html.escape(line.source_line)}</code>",
                f"{line.f_ns / 1000:.1f}",
                f"{line.df_ns / 1000:.1f}",
                f"{100 * line.time_ns / total:.1f}",
                bar,
            ]
            row = "".join(f"<td{_ALIGN[i]}>{cell}</td>" for i, cell in enumerate(cells))
            rows.append(f"<tr>{row}</tr>")
        header = ("line", "source", "f (us)", "df (us)", "%", "time")
        head = "".join(f"<th{_ALIGN[i]}>{name}</th>" for i, name in enumerate(header))
        legend = (
            f'<span style="color:{_F_COLOUR}">&#9632;</span> f &nbsp; '
            f'<span style="color:{_DF_COLOUR}">&#9632;</span> df &nbsp; '
            f"total {total / 1000:.1f} us"
        )
        return (
            f'<table class="autodiff-profile"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table><div>{legend}</div>"
        )

    def chrome_trace(self) -> list[dict[str, Any]]:
        """The events in the Chrome trace event format: complete events (``"ph": "X"``) with
        times in microseconds since the profile started. See Note [Profiler]."""
        pid = os.getpid()
        trace = []
        for event in self.events:
            where = event.node.source_range
            trace.append(
                {
                    "name": event.node.kind,
                    "cat": event.graph,
                    "ph": "X",
                    "ts": (event.start_ns - self.origin_ns) / 1000,
                    "dur": event.duration_ns / 1000,
                    "pid": pid,
                    "tid": 1 if event.graph == "f" else 2,
                    "args": {
                        "graph": event.graph,
                        "forward_op": _forward_op(event.graph, event.node),
                        "source": str(where) if where is not None else "",
                        "bytes": event.bytes,
                        "ir": print_node(event.node).strip(),
                    },
                }
            )
        return trace

    def export_chrome_trace(self, path: str | os.PathLike[str]) -> None:
        """Write `chrome_trace` as JSON to ``path``."""
        Path(path).write_text(json.dumps(self.chrome_trace()))


@contextmanager
def profiler() -> Iterator[Profile]:
    """Profile every compiled gradient run inside the block (``ad.grad``, ``ad.value_and_grad``,
    ``ad.vjp``, `CompiledGradient`).

    >>> with ad.profiler() as prof:
    ...     for _ in range(10):
    ...         ad.grad(loss)(w, x, y)
    >>> print(prof.table(sort_by="time"))
    """
    prof = Profile()
    with node_hook(prof):
        yield prof


@api_boundary
def profile(
    fn: Callable[..., Any], *args: Any, argnums: int | tuple[int, ...] | None = None
) -> Profile:
    """Run ``ad.value_and_grad(fn, argnums)(*args)`` once and return its profile: time and
    bytes allocated per node of ``f`` and ``df``, each ``df`` node with the forward operation
    and source line it differentiates. ``Profile.result`` holds ``(value, gradient)``.

    ``fn`` may also be a gradient, ``ad.grad(f, argnums)`` or ``ad.value_and_grad(f, argnums)``:
    what runs is then f's value and gradient as that gradient takes them (its argnums, has_aux,
    retain and hooks). ``argnums`` defaults to 0, or to the gradient's own.

    >>> prof = ad.profile(loss, w, x, y)          # the same as ad.profile(ad.grad(loss), w, x, y)
    >>> print(prof)
    graph  op           forward op   source       calls  time (us)     %  bytes
    -----  -----------  -----------  -----------  -----  ---------  ----  -----
    f      aten::matmul aten::matmul model.py:4:8     1       12.0  20.1   1600
    ...
    """
    gradient_fn = _value_and_grad_of(fn, argnums)
    with profiler() as prof:
        prof.result = gradient_fn(*args)
    return prof


def _value_and_grad_of(
    fn: Callable[..., Any], argnums: int | tuple[int, ...] | None
) -> Callable[..., Any]:
    """What `profile` runs for ``fn``: its value and gradient; for a gradient already
    (`GradFunction`), the value and gradient of the function it differentiates, as it does."""
    from autodiff.grad import GradFunction, value_and_grad

    if not isinstance(fn, GradFunction):
        return value_and_grad(fn, argnums=0 if argnums is None else argnums)
    if argnums is not None and argnums != fn.argnums:
        raise DifferentiationError(
            f"profile() was given argnums={argnums!r} for a gradient taken with "
            f"argnums={fn.argnums!r}: give argnums to ad.grad or ad.value_and_grad only"
        )
    return GradFunction(
        fn.scripted,
        fn.argnums,
        fn.has_aux,
        with_value=True,
        retain=fn.retain,
        hooks=fn.hooks,
    )


def _forward_op(graph: str, node: Node) -> str | None:
    """The forward operation ``node`` belongs to: the one whose gradient it computes (also in
    f, for a gradient the function itself takes), else in f the node's own."""
    where = node.source_range
    if where is not None and where.gradient_of is not None:
        return where.gradient_of
    return node.kind if graph == "f" else None


def _entry(first: NodeEvent, calls: int, time_ns: int, nbytes: int) -> ProfileEntry:
    node = first.node
    where = node.source_range
    line = where.source.line_text(where.line) if where is not None else None
    return ProfileEntry(
        graph=first.graph,
        op=node.kind,
        forward_op=_forward_op(first.graph, node),
        location=str(where) if where is not None else "",
        source_line=(line or "").strip(),
        ir=print_node(node).strip(),
        calls=calls,
        time_ns=time_ns,
        bytes=nbytes,
    )


_F_COLOUR = "#3b82f6"
_DF_COLOUR = "#f59e0b"
_LEFT, _RIGHT = ' style="text-align:left"', ' style="text-align:right"'
_ALIGN = (_LEFT, _LEFT, _RIGHT, _RIGHT, _RIGHT, _LEFT)  # per column of the HTML table


def _line_of(location: str) -> str:
    """``mlp.py:17`` for an entry's ``/abs/path/mlp.py:17:9`` (see `ir.dot.display_filename`);
    ``""`` stays ``""``."""
    parts = location.rsplit(":", 2)
    if len(parts) != 3:
        return location
    return f"{display_filename(parts[0])}:{parts[1]}"


def _root(array: np.ndarray) -> np.ndarray:
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array


def _allocated(result: Any, args: tuple[Any, ...]) -> int:
    """The bytes of the arrays in ``result`` (through lists and tuples) that are new: neither
    an operand, nor a view of one, nor held in an operand list."""
    if isinstance(result, np.generic):  # a reduction's NumPy scalar
        return int(result.nbytes)
    operands = {id(_root(array)) for array in held_arrays(args)}
    return sum(
        int(root.nbytes)
        for root in {id(_root(a)): _root(a) for a in held_arrays(result)}.values()
        if id(root) not in operands
    )
