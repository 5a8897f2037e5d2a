"""The idioms of ordinary Python that issue 17 lets into compiled code, for the fuzzer: arrays
read from outside ``f`` (module globals, closure variables), lambdas and nested ``def``s
closing over locals, comprehensions and generator expressions, and Python-level loops over
lists, ``zip``, ``enumerate``, ``reversed`` and an array's rows.

Each is an option of `tests.property.idioms.IDIOMS` (which imports `PYTHON_IDIOMS`) and, like
the idioms there, reads and writes the generator's variables: what it defines (a local
function's result, a comprehension's sum, a loop's carried value) is read by the statements
after it, and its bodies read whatever the generator holds.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from tests.property.programs import SHAPES, WRAP_ABOVE, Expr, Shape, Variable, averaged_in

if TYPE_CHECKING:
    from tests.property.programs import _Generator


@contextmanager
def block(g: _Generator, header: str, index: tuple[str, int] | None = None) -> Iterator[None]:
    """``header`` (an ``if``, ``for``, ``while`` or ``def`` line) and a body indented under it;
    ``index`` is a loop's index and its bound, for `_Generator.index`."""
    g.emit(header)
    g.indent += 1
    g.scopes.append([])
    if index is not None:
        g.loop_indices.append(index)
    try:
        yield
    finally:
        if index is not None:
            g.loop_indices.pop()
        g.scopes.pop()
        g.indent -= 1


def _bounded(e: Expr) -> Expr:
    return e if e.bound <= WRAP_ABOVE else Expr(f"np.tanh({e.text})", e.shape, 1.0)


def _term(g: _Generator, x: Expr, shape: Shape) -> Expr:
    """An expression of ``shape`` that reads ``x`` (of any shape) and what the generator holds."""
    other = g.expr(shape, 1)
    if _broadcasts(x.shape, shape):
        return _bounded(Expr(f"({x.text} * {other.text})", shape, x.bound * other.bound))
    return Expr(f"(np.sum(np.sin({x.text})) * np.tanh({other.text}))", shape, math.prod(x.shape))


def _broadcasts(shape: Shape, target: Shape) -> bool:
    return len(shape) <= len(target) and all(
        s in (1, t) for s, t in zip(shape[::-1], target[::-1], strict=False)
    )


def _carry(g: _Generator, shape: Shape | None = None) -> Variable:
    """A fresh local a loop or a call carries, assigned here."""
    shape = shape or g.choose(SHAPES)
    e = g.expr(shape, 1)
    name = g.fresh("acc")
    g.emit(f"{name} = {e.text}")
    g.define(name, e)
    found = g.lookup(name)
    assert found is not None
    return found


def _carrying_loop(
    g: _Generator,
    header: str,
    index: str,
    trips: int,
    targets: list[tuple[str, Expr]],
) -> None:
    """A loop (``header``, already preceded by what it needs) that binds ``targets``, runs a
    few of the generator's statements, and carries a local updated from the first target."""
    acc = _carry(g)
    g.emit(header)
    # As `_Generator.loop_body`: the carried array may be given out as it is (no trips).
    inside = g.carry_into_loop(acc)
    g.loop_indices.append((index, trips))
    g.loop_scopes.append(len(g.scopes))
    g.block(1, g.draw_int(0, 1), targets)
    name, x = targets[-1]
    term = _term(g, Expr(name, x.shape, x.bound), acc.shape)
    if g.flag():
        g.emit(f"{acc.name} = np.tanh({acc.name} + {term.text})")
        bound = max(acc.bound, 1.0)
    else:
        term = averaged_in(term, inside)
        g.emit(f"{acc.name} = 0.5 * {acc.name} + 0.5 * {term.text}")
        bound = max(acc.bound, term.bound)
    g.end_block()
    g.loop_scopes.pop()
    g.loop_indices.pop()
    g.rebind(acc.name, acc.shape, bound, writable=False)
    g.must_use.append(acc.name)


# ---- arrays read from outside ------------------------------------------------------------------


def free_arrays(g: _Generator) -> None:
    """``f`` reads an array no argument passes, a module global ``G1`` or a closure variable
    ``C1`` (Note [Free variables] in `frontend.compile`): as data of a least-squares loss, a
    weight matrix, or a factor; later statements may read it like any variable."""
    form = g.choose(["lstsq", "matmul", "elementwise"])
    name = g.fresh("t")
    if form == "lstsq":
        data, target = g.free_array((3, 4)), g.free_array((3,))
        w = g.expr((4,), 1)
        g.emit(f"{name} = np.mean(({data.name} @ np.tanh({w.text}) - {target.name}) ** 2)")
        g.define(name, Expr(name, (), 25.0))
    elif form == "matmul":
        rows = g.choose([3, 4])
        weights = g.free_array((rows, 4))
        x = g.expr((4,), 1)
        g.emit(f"{name} = np.tanh({weights.name} @ {x.text})")
        g.define(name, Expr(name, (rows,), 1.0))
    else:
        shape = g.choose([s for s in SHAPES if s])
        factor = g.free_array(shape)
        x = g.expr(shape, 1)
        g.emit(f"{name} = {x.text} * {factor.name}")
        g.define(name, Expr(name, shape, x.bound))
    g.must_use.append(name)


# ---- lambdas and nested defs -------------------------------------------------------------------


def local_functions(g: _Generator) -> None:
    """``h = lambda u: …`` or ``def h(u, v=0.5): …`` closing over a local ``w`` (sometimes
    rebound after the definition: the call reads the new one, Python's late binding), called
    straight, with the default given, or in a loop carrying a value through it."""
    shape = g.choose([s for s in SHAPES if s])
    w = g.fresh("w")
    closed = g.expr(g.choose(g.broadcast_sources(shape)), 1)
    g.emit(f"{w} = {closed.text}")
    g.define(w, Expr(w, closed.shape, closed.bound))
    h, u, v = g.fresh("h"), g.fresh("u"), g.fresh("v")
    parameter = Expr(u, shape, WRAP_ABOVE)
    if g.flag():
        g.scopes.append([])
        g.define(u, parameter, writable=False)
        body = g.expr(shape, 1)
        g.scopes.pop()
        g.emit(f"{h} = lambda {u}: np.tanh({u} * {w} + {body.text})")
        scale = 1.0
        defaults = False
    else:
        with block(g, f"def {h}({u}, {v}=0.5):"):
            g.define(u, parameter, writable=False)
            g.define(v, Expr(v, (), 2.0))
            z = g.fresh("z")
            g.emit(f"{z} = {g.expr(shape, 2).text}")
            g.define(z, Expr(z, shape, WRAP_ABOVE))
            g.emit(f"return np.tanh({z} + {u} * {w}) * {v}")
        scale = 2.0
        defaults = True
    if g.flag():  # late binding: the call reads w as it is then
        g.emit(f"{w} = 0.5 * {w} + 0.5 * {_bounded(g.expr(closed.shape, 1)).text}")
        g.rebind(w, closed.shape, WRAP_ABOVE, writable=False)

    def call(argument: str) -> str:
        if defaults and g.flag():
            return g.choose([f"{h}({argument}, 2.0)", f"{h}({argument}, {v}=-1.5)"])
        return f"{h}({argument})"

    name = g.fresh("t")
    if g.flag():
        g.emit(f"{name} = {call(_bounded(g.expr(shape, 2)).text)}")
        g.define(name, Expr(name, shape, scale))
        g.must_use.append(name)
        return
    acc = _carry(g, shape)
    trips = g.trip_count()
    i = g.fresh("i")
    g.carry_into_loop(acc, scale)  # the argument may read acc: Note [Bounds of carried values]
    with block(g, f"for {i} in range({trips[0]}):", (i, trips[1])):
        argument = _bounded(g.expr(shape, 1))
        g.emit(f"{acc.name} = 0.5 * {acc.name} + 0.5 * {call(argument.text)}")
    g.rebind(acc.name, shape, max(acc.bound, scale), writable=False)
    g.must_use.append(acc.name)


# ---- comprehensions and generator expressions --------------------------------------------------


def comprehensions(g: _Generator) -> None:
    """A list comprehension or a generator expression into ``sum``, ``np.stack``, ``np.array``,
    ``np.max``/``np.min`` of a stack, or ``max``/``min`` of Python numbers (a factor); over
    ``range``, a tuple of expressions, ``zip`` or ``enumerate``, with an ``if`` and nested
    (Note [Comprehensions] in `frontend.iteration`)."""
    form = g.choose(["sum", "sum", "stack", "scalars", "extreme", "python_max", "zip", "enumerate"])
    name = g.fresh("t")
    i, j = g.fresh("i"), g.fresh("j")
    count = g.choose([2, 3])

    def over_range(
        shape: Shape, nested: bool = False, every: bool = False
    ) -> tuple[str, str, float]:
        """An element reading ``i`` (and ``j``) as an index, its clauses ``for i in
        range(count)`` (``for j …`` too when ``nested``; an ``if`` unless ``every``), and a
        bound on it."""
        g.loop_indices.append((i, count))
        if nested:
            g.loop_indices.append((j, 2))
        element = _bounded(g.expr(shape, 2))
        clauses = f"for {i} in range({count})"
        if nested:
            g.loop_indices.pop()
            clauses += f" for {j} in range(2)"
        elif not every and g.flag():
            clauses += f" if {i} != {g.draw_int(0, count - 1)}"
        g.loop_indices.pop()
        return element.text, clauses, element.bound

    if form == "sum":
        shape = g.choose(SHAPES)
        nested = g.flag()
        element, clauses, bound = over_range(shape, nested)
        spelling = g.choose(["sum({})", "sum([{}])"]).format(f"{element} {clauses}")
        g.emit(f"{name} = {spelling}")
        g.define(name, Expr(name, shape, bound * count * (2 if nested else 1)))
    elif form == "stack":
        size = g.choose([3, 4])
        shape, axis = g.choose([((size, 3), 1), ((size, 4), 1), ((3, size), 0), ((4, size), 0)])
        count = shape[axis]
        element, clauses, bound = over_range((shape[1 - axis],), every=True)
        g.emit(f"{name} = np.stack([{element} {clauses}], axis={axis})")
        g.define(name, Expr(name, shape, bound))
    elif form == "scalars":
        count = g.choose([3, 4])
        # np.stack, not np.array: np.array of a comprehension is refused (reported, issue 17).
        element, clauses, bound = over_range((), every=True)
        g.emit(f"{name} = np.stack([{element} {clauses}])")
        g.define(name, Expr(name, (count,), bound))
    elif form == "extreme":
        element, clauses, bound = over_range(g.choose([s for s in SHAPES if s]))
        reduce = g.choose(["max", "min"])
        g.emit(f"{name} = np.{reduce}(np.stack([np.sum({element}) {clauses}]))")
        g.define(name, Expr(name, (), bound * 16))
    elif form == "python_max":
        factor = g.fresh("c")
        numbers = g.choose(
            [
                f"max(0.25 * {i} for {i} in range({count}))",
                f"min([{i} + 1 for {i} in range({count})])",
                f"max([0.5, {count} * 0.25])",
                f"min(0.5 * {i} - 1.0 for {i} in range({count}) if {i} > 0)",
            ]
        )
        g.emit(f"{factor} = {numbers}")
        x = g.expr(g.choose(SHAPES), 2)
        g.emit(f"{name} = {factor} * {_bounded(x).text}")
        g.define(name, Expr(name, x.shape, 2.0 * min(x.bound, WRAP_ABOVE)))
    else:
        shape = g.choose([s for s in SHAPES if s])
        first = [_bounded(g.expr(shape, 1)) for _ in range(count)]
        x, y = g.fresh("x"), g.fresh("y")
        if form == "zip":
            second = [_bounded(g.expr(shape, 1)) for _ in range(count)]
            element = f"np.sum(np.sin({x}) * {y})"
            source = (
                f"for {x}, {y} in zip([{', '.join(e.text for e in first)}], "
                f"({', '.join(e.text for e in second)},))"
            )
            bound = max(e.bound for e in second)
        else:
            element = f"{i} * np.sum(np.sin({x}))"
            source = f"for {i}, {x} in enumerate([{', '.join(e.text for e in first)}])"
            bound = float(count)
        g.emit(f"{name} = sum({element} {source})")
        g.define(name, Expr(name, (), bound * count * math.prod(shape)))
    g.must_use.append(name)


# ---- Python-level loops ------------------------------------------------------------------------


def python_loops(g: _Generator) -> None:
    """``for x in [e1, e2]`` (a tuple, ``reversed``), ``for x, y in zip(…)``, ``for i, x in
    enumerate(…)`` (unrolled while compiling), and ``for row in x`` / ``for i, row in
    enumerate(x)`` over an array's first axis (an IR loop), each carrying a local through
    the generator's statements; or ``for i, row in enumerate(out): row[...] = …``, which
    writes ``out`` through the rows."""
    form = g.choose(["list", "reversed", "zip", "enumerate", "rows", "enumerate_rows", "written"])
    if form in ("rows", "enumerate_rows", "written"):
        arrays = [v for v in g.variables() if len(v.shape) in (1, 2)]
        if form == "written" or not arrays or g.flag():
            shape = g.choose([s for s in SHAPES if len(s) == 2] + [(3,), (4,)])
            e = g.expr(shape, 1)
            source, bound, view_of = e.text, e.bound, e.view_of if not e.fresh else None
        else:
            v = g.choose(arrays)
            shape, source, bound, view_of = v.shape, v.name, v.bound, v.name
            if len(shape) == 2 and g.flag():
                shape, source = shape[::-1], f"{v.name}.T"
        row, i = g.fresh("row"), g.fresh("i")
        # A row of a matrix is a view of it; an element of a vector a NumPy scalar (a copy).
        row_is_view = len(shape) == 2 and view_of is not None
        target = Expr(row, shape[1:], bound, not row_is_view, view_of if row_is_view else None)
        if form == "written":
            _rows_written(g, shape, source, bound)
            return
        if form == "rows":
            _carrying_loop(g, f"for {row} in {source}:", "", shape[0], [(row, target)])
        else:
            if not source.isidentifier():
                # enumerate() of an expression (``enumerate(x.T)``) is refused, only a name's
                # rows are a loop (reported, issue 17): name it first, as a user would.
                rows = g.fresh("xs")
                g.emit(f"{rows} = {source}")
                source = rows
            _carrying_loop(
                g, f"for {i}, {row} in enumerate({source}):", i, shape[0], [(row, target)]
            )
        return
    shape = g.choose(SHAPES)
    count = g.choose([1, 2, 3])
    items = [_bounded(g.expr(shape, 1)) for _ in range(count)]
    listed = ", ".join(e.text for e in items)
    container = g.choose([f"[{listed}]", f"({listed},)"])
    bound = max(e.bound for e in items)
    x, i = g.fresh("x"), g.fresh("i")
    item = Expr(x, shape, bound)
    if form == "list":
        _carrying_loop(g, f"for {x} in {container}:", "", count, [(x, item)])
    elif form == "reversed":
        _carrying_loop(g, f"for {x} in reversed({container}):", "", count, [(x, item)])
    elif form == "enumerate":
        _carrying_loop(g, f"for {i}, {x} in enumerate({container}):", i, count, [(x, item)])
    else:
        other_shape = g.choose(SHAPES)
        others = [_bounded(g.expr(other_shape, 1)) for _ in range(count)]
        y = g.fresh("y")
        pairs = f"zip({container}, [{', '.join(e.text for e in others)}])"
        other = Expr(y, other_shape, max(e.bound for e in others))
        _carrying_loop(g, f"for {x}, {y} in {pairs}:", "", count, [(x, item), (y, other)])


def _rows_written(g: _Generator, shape: Shape, source: str, bound: float) -> None:
    """``out = <source> * 1.0; for i, row in enumerate(out): row[...] op= …`` (a matrix's rows
    are views: the writes reach ``out``), or ``out[i] = …`` for a vector."""
    out, i, row = g.fresh("out"), g.fresh("i"), g.fresh("row")
    g.emit(f"{out} = {source} * 1.0")
    g.define(out, Expr(out, shape, bound))
    with block(g, f"for {i}, {row} in enumerate({out}):", (i, shape[0])):
        value = g.choose(["np.tanh", "np.sin", "np.cos"])
        other = g.expr(shape[1:], 1)
        if len(shape) == 2:
            op = g.choose(["=", "+=", "*="])
            g.emit(f"{row}[...] {op} {value}({row} * {other.text})")
        else:
            g.emit(f"{out}[{i}] = {value}({row} * {other.text})")
    variable = g.lookup(out)
    assert variable is not None
    variable.array.bound = bound + shape[0]
    g.must_use.append(out)


PYTHON_IDIOMS: list[tuple[str, str, Callable[[_Generator], None]]] = [
    ("free_arrays", "f reads a global G1 or a closure's C1 no argument passes", free_arrays),
    ("local_functions", "lambda / nested def over a local, called in a loop", local_functions),
    ("comprehensions", "comprehensions into sum, np.stack, np.max, max/min", comprehensions),
    ("python_loops", "for over a list, zip, enumerate, reversed, an array's rows", python_loops),
]
