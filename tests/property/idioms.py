"""Idioms people write that the base generator left out (issue 15), each a named option of
`programs(idioms=...)`.

An idiom is one top-level statement group the generator draws like any other statement (and,
with ``focus``, first): it reads and writes the generator's variables through the same
bookkeeping (`Variable.array` bounds, `_Generator.targets`), so what it leaves behind (a NumPy
scalar, a view, a list of tuples) is read and written by the statements after it too. What
each writes is in `IDIOMS` (``name: what``); the functions below write them.

Every generated program stays one NumPy runs: the only programs NumPy refuses are those of
``readonly_writes``, which write through a read-only view on purpose (`checks` then asks the
compiler to refuse them too).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tests.property.call_idioms import CALL_IDIOMS
from tests.property.programs import SHAPES, WRAP_ABOVE, Expr, Shape, Variable
from tests.property.python_idioms import PYTHON_IDIOMS
from tests.property.python_idioms import block as _block
from tests.property.rule_idioms import RULE_IDIOMS

if TYPE_CHECKING:
    from tests.property.programs import _Generator

AUGMENTED = ["+=", "-=", "*=", "/="]


@dataclass(frozen=True)
class Idiom:
    name: str
    what: str
    write: Callable[[_Generator], None]


# ---- helpers -----------------------------------------------------------------------------------


def _loop(g: _Generator, kind: str, trips: tuple[str, int]) -> tuple[str, tuple[str, int]]:
    """Emit what goes before a loop's header; returns the header and its index's bound."""
    text, count = trips
    if kind == "for":
        index = g.fresh("i")
        return f"for {index} in range({text}):", (index, count)
    counter = g.fresh("k")
    g.emit(f"{counter} = 0")
    return f"while {counter} < {text}:", (counter, count + 1)


def _while_step(g: _Generator, header: str) -> None:
    if header.startswith("while"):
        counter = header.split()[1]
        g.emit(f"{counter} = {counter} + 1")


def _bounded(text: str, bound: float, limit: float) -> Expr:
    """``text`` as a () expression bounded by ``limit``: wrapped in ``np.tanh`` if need be."""
    if bound <= limit:
        return Expr(text, (), bound)
    return Expr(f"np.tanh({text})", (), 1.0)


def numpy_scalar(g: _Generator) -> Expr:
    """A NumPy scalar read out of an array: ``x[i, j]``, ``x[i]`` of a vector, ``np.sum(x[i])``
    or ``np.sum`` / ``np.mean`` of an expression."""
    arrays = [v for v in g.variables() if len(v.shape) in (1, 2)]
    form = g.choose(["item", "sum_row", "reduce"] if arrays else ["reduce"])
    if form == "reduce":
        e = g.expr(g.choose([s for s in SHAPES if s]), 1)
        op = g.choose(["sum", "mean"])
        size = math.prod(e.shape) if op == "sum" else 1
        return Expr(f"np.{op}({e.text})", (), e.bound * size)
    v = g.choose(arrays)
    if len(v.shape) == 1:
        return Expr(f"{v.name}[{g.index(v.shape[0])}]", (), v.bound)
    rows, cols = v.shape
    if form == "item":
        return Expr(f"{v.name}[{g.index(rows)}, {g.index(cols)}]", (), v.bound)
    return Expr(f"np.sum({v.name}[{g.index(rows)}])", (), v.bound * cols)


def _operand(g: _Generator, op: str, value: Expr, room: float) -> Expr:
    """The right-hand side of ``s op= value`` that keeps ``s`` bounded: a factor of at most 1
    for ``*=``, a divisor of at least 1 for ``/=``, a term of at most ``room`` otherwise."""
    if op == "*=":
        return value if value.bound <= 1.0 else Expr(f"np.tanh({value.text})", (), 1.0)
    if op == "/=":
        return Expr(f"(2.0 + np.cos({value.text}))", (), 3.0)
    return _bounded(value.text, value.bound, room)


def _use(g: _Generator, name: str) -> None:
    """Make the result read ``name``, so that what the idiom computed is not dead."""
    g.must_use.append(name)


def _base(g: _Generator, ranks: tuple[int, ...] = (1, 2)) -> Variable:
    """An array to write into: an argument, a local or a view of either, or a new local."""
    targets = [v for v in g.targets() if len(v.shape) in ranks]
    if targets and g.flag():
        return g.choose(targets)
    while True:
        v = g.new_array()
        if len(v.shape) in ranks:
            return v


# ---- Python-number accumulators ----------------------------------------------------------------


def accumulators(g: _Generator) -> None:
    """``s = 0.0`` (or ``0``, or a float parameter), then ``s op= <NumPy scalar>`` in a
    ``for`` or ``while`` loop, in a branch of one, in an ``if``, or straight; sometimes then
    the fill value of ``np.full`` or ``np.full_like``."""
    place = g.choose(["for", "while", "for_if", "while_if", "if", "straight"])
    op = g.choose(AUGMENTED)
    trips = g.trip_count()
    # An int accumulator stays an int where its update may not run (zero trips, a branch not
    # taken): a result whose Python type depends on the data, so only where it certainly runs.
    sure = place in ("for", "while", "straight") and trips[1] >= 1 and not trips[0].isalpha()
    init = g.choose(["0.0", "0", "param"] if sure else ["0.0", "param"])
    if init == "param":
        init = g.argument("p", "float")
    name = g.fresh("s")
    g.emit(f"{name} = {init}")
    runs = 1 if place in ("if", "straight") else max(trips[1], 1)
    room = max(1.0, WRAP_ABOVE / (2 * runs))

    def update() -> None:
        g.emit(f"{name} {op} {_operand(g, op, numpy_scalar(g), room).text}")

    if place == "straight":
        update()
    elif place == "if":
        with _block(g, f"if {g.condition()}:"):
            update()
        if g.flag():
            with _block(g, "else:"):
                update()
    else:
        header, index = _loop(g, place.removesuffix("_if"), trips)
        with _block(g, header, index):
            _while_step(g, header)
            if place.endswith("_if"):
                with _block(g, f"if {g.condition()}:"):
                    update()
            else:
                update()
    bound = 1.0 if op in ("*=", "/=") else 1.0 + room * runs
    g.define(name, Expr(name, (), bound))
    if g.flag():
        # The accumulated number as a fill value: its gradient is the sum over the array
        # (np.full and np.full_like gave it none, silently).
        filled = g.fresh("f")
        spelling, shape = g.choose(
            [
                (f"np.full((3, 4), {name} * 1.0)", (3, 4)),
                (f"np.full(4, {name} * 1.0)", (4,)),
                (f"np.full_like(a, {name})", (3, 4)),
            ]
        )
        g.emit(f"{filled} = {spelling}")
        g.define(filled, Expr(filled, shape, bound))
        _use(g, filled)
        return
    _use(g, name)


# ---- NumPy scalars read out of arrays, updated, and the array written ---------------------------


def scalar_reads(g: _Generator) -> None:
    """``s = y[i]`` (``y[i, j]``, ``y[i][j]``, ``y[n]``): a copy; ``s op= …``; then ``y``
    written (often at ``s``'s element), which ``s`` must not see."""
    v = _base(g)
    if len(v.shape) == 1:
        where = g.index(v.shape[0])
        read, element = f"{v.name}[{where}]", f"{v.name}[{where}]"
    else:
        rows, cols = v.shape
        i, j = g.index(rows), g.index(cols)
        read = g.choose([f"{v.name}[{i}, {j}]", f"{v.name}[{i}][{j}]"])
        element = f"{v.name}[{i}, {j}]"
    name = g.fresh("s")
    g.emit(f"{name} = {read}")
    bound = v.bound
    if g.draw_int(0, 3):
        op = g.choose(AUGMENTED)
        operand = _operand(g, op, numpy_scalar(g) if g.flag() else g.expr((), 1), 2.0)
        g.emit(f"{name} {op} {operand.text}")
        bound = bound if op in ("*=", "/=") else bound + 2.0
    g.define(name, Expr(name, (), bound))
    if g.flag():
        g.write(element, v, (), ["=", "+=", "*="])
    else:
        target, shape = g.subscript(v)
        g.write(target, v, shape, ["=", "+=", "-=", "*="])
    _use(g, name)


# ---- integer-indexed reads of every rank -------------------------------------------------------


def int_reads(g: _Generator) -> None:
    """Integer indexing of a 1-, 2- or 3-D array (``e[i]``, ``e[i, j]``, ``e[i, j, k]``,
    ``e[i][j]``, with loop indices and int parameters as indices), kept as a variable."""
    rank = g.choose([1, 2, 3, 3])
    if rank == 3:
        e = g.lookup("e") if g.flag() else None
        if e is None:
            e = g.argument_variable("e", (3, 3, 4))
        source, shape, bound = e.name, e.shape, e.bound
    else:
        arrays = [v for v in g.variables() if len(v.shape) == rank]
        if not arrays:
            v = g.new_array() if rank == 2 else None
            arrays = [v] if v is not None and len(v.shape) == rank else []
        if not arrays:
            rank, source, shape, bound = 2, "a", (3, 4), 1.0
            a = g.lookup("a")
            bound = a.bound if a else 1.0
        else:
            v = g.choose(arrays)
            source, shape, bound = v.name, v.shape, v.bound
    depth = g.draw_int(1, len(shape))
    indices = [g.index(size) for size in shape[:depth]]
    read = g.choose(
        [f"{source}[{', '.join(indices)}]", "".join([source, *(f"[{i}]" for i in indices)])]
    )
    name = g.fresh("t")
    g.emit(f"{name} = {read}")
    g.define(name, Expr(name, shape[depth:], bound, fresh=False, view_of=source))
    _use(g, name)


# ---- NumPy functions that return views ---------------------------------------------------------

View = tuple[str, Shape, bool]  # text, shape, read-only


def views_of(v: Variable) -> list[View]:
    """The view spellings of ``v`` (1-D or 2-D) NumPy has, each with its shape and whether
    NumPy makes it read-only."""
    x = v.name
    if len(v.shape) == 1:
        (n,) = v.shape
        k = n - 1
        return [
            (f"np.flip({x})", (n,), False),
            (f"{x}[::-1]", (n,), False),
            (f"{x}[::2]", ((n + 1) // 2,), False),
            (f"np.atleast_2d({x})", (1, n), False),
            (f"np.atleast_3d({x})", (1, n, 1), False),
            (f"np.atleast_1d({x})", (n,), False),
            (f"np.split({x}, [1])[1]", (k,), False),
            (f"np.array_split({x}, 2)[0]", ((n + 1) // 2,), False),
            (f"np.hsplit({x}, [{k}])[0]", (k,), False),
            (f"np.real({x})", (n,), False),
            (f"np.expand_dims({x}, 0)", (1, n), False),
            (f"{x}[::-1].reshape(-1)", (n,), False),
            (f"{x}.reshape(1, {n})", (1, n), False),
            (f"np.broadcast_to({x}, (3, {n}))", (3, n), True),
            (f"np.imag({x})", (n,), True),
        ]
    r, c = v.shape
    m = min(r, c)
    found: list[View] = [
        (f"np.flip({x})", (r, c), False),
        (f"np.flip({x}, axis=0)", (r, c), False),
        (f"np.flip({x}, 1)", (r, c), False),
        (f"np.fliplr({x})", (r, c), False),
        (f"np.flipud({x})", (r, c), False),
        (f"{x}[::-1, ::-1]", (r, c), False),
        (f"np.rot90({x})", (c, r), False),
        (f"np.rot90({x}, 2)", (r, c), False),
        (f"np.rot90({x}, k=-1)", (c, r), False),
        (f"np.rollaxis({x}, 1)", (c, r), False),
        (f"np.moveaxis({x}, 0, 1)", (c, r), False),
        (f"np.swapaxes({x}, 0, 1)", (c, r), False),
        (f"np.transpose({x})", (c, r), False),
        (f"np.atleast_2d({x})", (r, c), False),
        (f"np.atleast_3d({x})", (r, c, 1), False),
        (f"np.einsum('ij->ji', {x})", (c, r), False),
        (f"np.einsum('ij', {x})", (r, c), False),
        (f"np.einsum('ji', {x})", (c, r), False),
        (f"np.real({x})", (r, c), False),
        (f"np.expand_dims({x}, 0)", (1, r, c), False),
        (f"{x}[None]", (1, r, c), False),
        (f"{x}[::-1].reshape(-1)", (r * c,), False),
        (f"{x}[:, ::2].reshape(-1)", (r * ((c + 1) // 2),), False),
        (f"{x}[::-1].ravel()", (r * c,), False),
        (f"{x}.T.reshape({c}, {r})", (c, r), False),
        (f"{x}.reshape(-1)", (r * c,), False),
        (f"{x}.reshape({c}, {r})", (c, r), False),
        (f"np.diagonal({x})", (m,), True),
        (f"np.diag({x})", (m,), True),
        (f"{x}.diagonal()", (m,), True),
        (f"np.broadcast_to({x}, (2, {r}, {c}))", (2, r, c), True),
        (f"np.imag({x})", (r, c), True),
    ]
    if c >= 3:
        found.append((f"{x}[:, 1:3].reshape({r}, 2, 1)", (r, 2, 1), False))
    if r > 1:
        found += [
            (f"np.split({x}, [1], axis=0)[1]", (r - 1, c), False),
            (f"np.vsplit({x}, [1])[0]", (1, c), False),
            (f"np.array_split({x}, 2, axis=0)[1]", (r // 2, c), False),
        ]
    if c > 1:
        found += [
            (f"np.hsplit({x}, [1])[1]", (r, c - 1), False),
            (f"np.array_split({x}, 2, axis=1)[0]", (r, (c + 1) // 2), False),
            (f"np.dsplit({x}[:, None, :], [1])[0]", (r, 1, 1), False),
        ]
    if r == c:
        found.append((f"np.einsum('ii->i', {x})", (r,), False))
    if r == 1 or c == 1:
        found.append((f"np.squeeze({x})", (max(r, c),), False))
    return found


def _view_write(g: _Generator, name: str, shape: Shape) -> None:
    """A write through the view ``name``: an element, its first entry, or all of it."""
    value = Expr(f"np.{g.choose(['tanh', 'sin', 'cos'])}({g.expr((), 1).text})", (), 1.0)
    index = ", ".join(g.index(size) for size in shape)
    target = g.choose([f"{name}[{index}]", f"{name}[0]", f"{name}[...]"]) if shape else name
    op = g.choose(["=", "+=", "*="])
    g.emit(f"{target} {op} {value.text}")


def views(g: _Generator) -> None:
    """``w = <a view of y>``, then maybe a write to ``y`` and a write through ``w`` (never a
    read-only ``w``), then a read of ``w``: the write to either must show in both."""
    v = _base(g)
    text, shape, readonly = g.choose(views_of(v))
    name = g.fresh("w")
    g.emit(f"{name} = {text}")
    keep = shape in SHAPES
    writable = keep and not readonly
    g.define(name, Expr(name, shape, v.bound, fresh=False, view_of=v.name), writable=writable)
    if g.flag():
        target, target_shape = g.subscript(v)
        g.write(target, v, target_shape, ["=", "+=", "*="])
    if not readonly and g.flag():
        _view_write(g, name, shape)
        v.array.bound = max(v.bound, 2.0 * v.bound, 1.0)
    if keep:
        _use(g, name)
    if not keep or g.flag():
        read = g.fresh("t")
        g.emit(f"{read} = np.sum(np.sin({name}))")
        g.define(read, Expr(read, (), float(math.prod(shape))))
        _use(g, read)
    if not keep:
        g.scopes[-1] = [variable for variable in g.scopes[-1] if variable.name != name]
    g.returns.append((name, shape))


def readonly_writes(g: _Generator) -> None:
    """A write through a read-only view (``np.diagonal``, ``np.diag`` of a matrix,
    ``np.broadcast_to``, ``np.imag`` of a real array): NumPy raises, so must the compiler."""
    v = _base(g)
    text, shape, _ = g.choose([view for view in views_of(v) if view[2]])
    name = g.fresh("w")
    g.emit(f"{name} = {text}")
    _view_write(g, name, shape)


# ---- float operands that are not differentiable -----------------------------------------------


def float_operands(g: _Generator) -> None:
    """A float parameter ``h`` used where the result varies with it but the operator's formula
    gives it no gradient: ``np.gradient``'s spacing, a vector norm's ``ord``. A zero gradient
    for ``h`` was returned once, silently; now differentiating w.r.t. ``h`` is refused, located
    (Note [No gradient is not a zero gradient]), and `checks.check_gradients` checks that and
    then the other parameters' gradients."""
    h = g.argument(g.fresh("h"), "float")
    name = g.fresh("t")
    if g.flag():
        x = g.expr((3, 4), 1)
        axis = g.choose(["0", "1", "-1"])
        g.emit(f"{name} = np.gradient({x.text}, 1.5 + np.tanh({h}), axis={axis})")
        g.define(name, Expr(name, (3, 4), 2 * x.bound * 2))
    else:
        x = g.expr((4,), 1)
        g.emit(f"{name} = np.linalg.norm({x.text}, 1.5 + {h} * {h})")
        g.define(name, Expr(name, (), 4 * x.bound))
    g.must_use.append(name)


# ---- operands a derivative saves, written afterwards -------------------------------------------


def saved_of(x: str, shape: Shape) -> list[tuple[str, Shape, float]]:
    """Expressions whose derivative saves ``x`` (or a view of it), with shape and a bound for
    ``x`` bounded by 1."""
    n = shape[-1]
    size = math.prod(shape)
    found = [
        (f"({x} * {x})", shape, 1.0),
        (f"np.sin({x})", shape, 1.0),
        (f"({x} ** 2)", shape, 1.0),
        (f"np.exp({x})", shape, math.e),
        (f"(1.5 / (2.0 + np.cos({x})))", shape, 1.5),
        (f"np.sum({x} * {x})", (), size),
        (f"np.prod({x})", (), 1.0),
        (f"np.linalg.norm({x})", (), math.sqrt(size)),
        (f"np.sqrt(1.0 + {x} * {x})", shape, 1.5),
        (f"np.einsum('{'ij'[: len(shape)]},{'ij'[: len(shape)]}->', {x}, {x})", (), size),
    ]
    if len(shape) == 1:
        found += [(f"np.dot({x}, {x})", (), n), (f"({x} @ {x})", (), n)]
    else:
        r, c = shape
        found += [
            (f"({x} @ {x}.T)", (r, r), c),
            (f"np.einsum('ij,kj->ik', {x}, {x})", (r, r), c),
            (f"np.einsum('ij->i', {x} * {x})", (r,), c),
            (f"np.max({x} * {x}, axis=1)", (r,), 1.0),
            (f"np.tanh({x}[0] * {x}[1])", (c,), 1.0) if r > 1 else (f"np.tanh({x})", shape, 1.0),
        ]
    return found


def saved_operands(g: _Generator) -> None:
    """``s = <op>(y)``, whose derivative saves ``y``, then ``y`` written: the gradient must use
    ``y`` as it was (``s = np.einsum('i,i->', x, x); x[0] = 5.0; return s``)."""
    v = _base(g)
    operand = v.name if v.bound <= 1.0 else f"np.tanh({v.name})"
    text, shape, bound = g.choose(saved_of(operand, v.shape))
    name = g.fresh("s")
    g.emit(f"{name} = {text}")
    g.define(name, Expr(name, shape, bound))
    if g.flag():
        g.write(v.name, v, v.shape, ["+=", "*=", "-="])
    else:
        target, target_shape = g.subscript(v)
        g.write(target, v, target_shape, ["=", "+=", "*="])
    if shape in SHAPES:
        _use(g, name)
    else:
        g.scopes[-1] = [variable for variable in g.scopes[-1] if variable.name != name]
        read = g.fresh("t")
        g.emit(f"{read} = np.sum(np.sin({name}))")
        g.define(read, Expr(read, (), float(math.prod(shape))))
        _use(g, read)


# ---- split and einsum with broadcasting --------------------------------------------------------


def split_einsum(g: _Generator) -> None:
    """``np.einsum`` whose batch axes of size 1 broadcast (``'mnd,mdo->mno'`` with ``m`` 1 in
    one operand; ``...`` in subscripts is refused, with a located error), and the split family
    with pieces of unequal size, several of them read, sometimes a slice of them."""
    form = g.choose(["einsum_batch", "einsum_batch", "split", "split", "split"])
    name = g.fresh("t")
    if form == "einsum_batch":
        x = g.expr((3, 4), 1)
        w1, w2 = g.expr((4, 3), 1), g.expr((4, 3), 1)
        left, right = f"{x.text}[None]", f"np.stack([{w1.text}, {w2.text}])"
        if g.flag():
            left, right = right, left
            spec = "mdo,mnd->mno"
        else:
            spec = "mnd,mdo->mno"
        g.emit(f"{name} = np.sum(np.einsum('{spec}', {left}, {right}), axis=0)")
        g.define(name, Expr(name, (3, 3), 2 * x.bound * w1.bound * w2.bound * 4))
    else:
        v = g.lookup("a") if g.flag() else None
        source = v.name if v is not None else g.expr((3, 4), 1).text
        bound = v.bound if v is not None else 1.0
        spelling, count = g.choose(
            [
                (f"np.split({source}, [1, 3], axis=1)", 3),
                (f"np.array_split({source}, 3, axis=1)", 3),
                (f"np.array_split({source}[None], 2, axis=1)", 2),
                (f"np.hsplit({source}, [3])", 2),
                (f"np.vsplit({source}, [1])", 2),
                (f"np.dsplit({source}[:, None, :], [1, 2])", 3),
                (f"np.split({source}, 2, axis=1)", 2),
            ]
        )
        pieces = g.fresh("parts")
        # A slice of the pieces (``np.split(x, 3)[1:]``), whose gradient was refused.
        start = g.draw_int(0, count - 1) if g.flag() else 0
        if start:
            spelling, count = f"{spelling}[{start}:]", count - start
        g.emit(f"{pieces} = {spelling}")
        used = sorted({g.draw_int(0, count - 1) for _ in range(g.draw_int(1, count))})
        terms = " + ".join(f"np.sum(np.sin({pieces}[{i}]) * {pieces}[{i}])" for i in used)
        g.emit(f"{name} = {terms}")
        g.define(name, Expr(name, (), 12 * bound))
    _use(g, name)


# ---- lists of tuples of arrays -----------------------------------------------------------------


def list_of_tuples(g: _Generator) -> None:
    """``params = [(W, b), …]`` built in the function, then ``params[i][0]`` /
    ``params[i][1]`` read (in a ``for`` over the list or its indices too): a two-layer
    perceptron."""
    w1, b1 = g.expr((4, 4), 1), g.expr((4,), 1)
    w2, b2 = g.expr((4, 4), 1), g.expr((4,), 1)
    h = g.expr((4,), 1)
    params, out = g.fresh("params"), g.fresh("h")
    g.emit(f"{params} = [({w1.text}, {b1.text}), ({w2.text}, {b2.text})]")
    # A list holds the arrays themselves; a read of one once an array it holds has been
    # written is refused by design: no later statement writes them.
    for e in (w1, b1, w2, b2):
        source = None if e.fresh else g.lookup(e.view_of or "")
        if source is not None:
            g.pinned.append(source.array)
    # A fresh array: a loop that may give out a view of an argument written afterwards is
    # refused by design (Note [Functionalisation]).
    g.emit(f"{out} = np.tanh({h.text})")
    form = g.choose(["index", "loop", "unpack", "range"])
    if form == "index":
        for layer in range(2):
            g.emit(f"{out} = np.tanh({params}[{layer}][0] @ {out} + {params}[{layer}][1])")
    elif form == "loop":
        layer = g.fresh("layer")
        with _block(g, f"for {layer} in {params}:"):
            g.emit(f"{out} = np.tanh({layer}[0] @ {out} + {layer}[1])")
    elif form == "unpack":
        weight, bias = g.fresh("W"), g.fresh("b")
        with _block(g, f"for {weight}, {bias} in {params}:"):
            g.emit(f"{out} = np.tanh({weight} @ {out} + {bias})")
    else:
        index = g.fresh("i")
        with _block(g, f"for {index} in range(len({params})):", (index, 2)):
            g.emit(f"{out} = np.tanh({params}[{index}][0] @ {out} + {params}[{index}][1])")
    g.define(out, Expr(out, (4,), 1.0))
    _use(g, out)


def dict_params(g: _Generator) -> None:
    """A dict of parameters built in the function (``{"W1": …, "b1": …}``) and read as JAX and
    autograd examples read one: by key, by ``.items()``/``.values()``/keys in a loop, with
    ``len``, or through ``.get`` with a default (Note [Containers known while compiling])."""
    keys = ["W1", "b1", "W2", "b2"]
    shapes = [(4, 4), (4,), (4, 4), (4,)]
    exprs = [g.expr(shape, 1) for shape in shapes]
    for e in exprs:  # the dict holds the arrays themselves: none is written later
        source = None if e.fresh else g.lookup(e.view_of or "")
        if source is not None:
            g.pinned.append(source.array)
    params, out = g.fresh("params"), g.fresh("h")
    items = ", ".join(f"'{k}': {e.text}" for k, e in zip(keys, exprs, strict=True))
    g.emit(f"{params} = {{{items}}}")
    g.emit(f"{out} = np.tanh({g.expr((4,), 1).text})")
    form = g.choose(["keys", "items", "values", "get"])
    if form == "keys":
        for layer in ("1", "2"):
            g.emit(f"{out} = np.tanh({params}['W{layer}'] @ {out} + {params}['b{layer}'])")
    elif form == "items":
        name, value = g.fresh("name"), g.fresh("value")
        with _block(g, f"for {name}, {value} in {params}.items():"):
            g.emit(
                f"{out} = np.tanh({value} @ {out}) if {name} == 'W1' or {name} == 'W2' "
                f"else {out} + {value} / len({params})"
            )
    elif form == "values":
        value = g.fresh("value")
        with _block(g, f"for {value} in {params}.values():"):
            g.emit(f"{out} = np.tanh({out} * np.sum({value}) / 16.0)")
    else:
        key = g.fresh("key")
        with _block(g, f"for {key} in {params}:"):
            g.emit(f"{out} = {out} + np.sum({params}.get({key}, {out})) / 16.0")
        g.emit(f"{out} = np.tanh({out} * np.sum({params}.get('W3', {out})))")
    g.emit(f"{out} = np.tanh({out})")
    g.define(out, Expr(out, (4,), 1.0))
    _use(g, out)


# ---- complex inputs ----------------------------------------------------------------------------


def complex_expr(g: _Generator, shape: Shape, depth: int) -> Expr:
    """A complex expression of ``shape`` ((3, 4), (4, 3), (4,) or (3,)), bounded by 2."""
    z = g.complex_argument(shape)
    if depth <= 0:
        return z
    kind = g.choose(["leaf", "mix", "unary", "binary", "binary", "linear"])
    if kind == "leaf":
        return z
    if kind == "mix":  # a real expression mixed in, or rotated by a complex literal
        x = g.expr(shape, 1)
        op = g.choose(["+", "*", "-", "literal"])
        if op == "literal":  # Note [Python complex numbers] in ir.types; |0.6 - 0.8j| = 1
            return _wrapped(Expr(f"({x.text} * (0.6 - 0.8j) + {z.text})", shape, x.bound + z.bound))
        bound = x.bound * z.bound if op == "*" else x.bound + z.bound
        return _wrapped(Expr(f"({x.text} {op} {z.text})", shape, bound))
    e = complex_expr(g, shape, depth - 1)
    if kind == "unary":
        op = g.choose(["exp", "sin", "cos", "conj", "neg", "square", "sqrt", "log", "tanh"])
        if op == "neg":
            return Expr(f"(-{e.text})", shape, e.bound)
        if op == "square":
            return _wrapped(Expr(f"({e.text} ** 2)", shape, e.bound**2))
        if op in ("sqrt", "log"):  # away from the branch cut on the negative real axis
            return Expr(f"np.{op}(3.0 + {e.text})", shape, 2.5)
        if op == "tanh":  # away from its poles at ±iπ/2
            return Expr(f"np.tanh(0.5 * {e.text})", shape, 2.0)
        if op == "conj":
            return Expr(f"np.conj({e.text})", shape, e.bound)
        return _wrapped(Expr(f"np.{op}({e.text})", shape, math.exp(e.bound)))
    if kind == "binary":
        other = complex_expr(g, shape, depth - 1) if g.flag() else g.expr(shape, 1)
        op = g.choose(["+", "-", "*", "/"])
        if op == "-" and other.text == e.text:
            op = "+"  # e - e is 0, where abs, norms and eigenvectors are not smooth
        if op == "/":
            return Expr(f"({e.text} / (3.0 + {other.text}))", shape, e.bound)
        bound = e.bound * other.bound if op == "*" else e.bound + other.bound
        return _wrapped(Expr(f"({e.text} {op} {other.text})", shape, bound))
    # linear maps
    if len(shape) == 2:
        options = [
            (f"np.fft.fft({e.text}, axis=1)", e.bound * shape[1]),
            (f"np.fft.ifft({e.text})", e.bound),
            (f"np.cumsum({e.text}, axis=0)", e.bound * shape[0]),
            (f"np.flip({e.text}, axis=1)", e.bound),
        ]
    else:
        options = [
            (f"np.fft.fft({e.text})", e.bound * shape[0]),
            (f"np.cumsum({e.text})", e.bound * shape[0]),
            (f"{e.text}[::-1]", e.bound),
        ]
    text, bound = g.choose(options)
    return _wrapped(Expr(text, shape, bound))


def _wrapped(e: Expr) -> Expr:
    if e.bound <= 2.0:
        return e
    return Expr(f"({e.text} / (1.0 + np.abs({e.text}) ** 2))", e.shape, 0.5)


def complex_inputs(g: _Generator) -> None:
    """A complex argument through complex operators (arithmetic, exp/sin/cos/tanh/sqrt/log,
    conj, fft, cumsum, matmul, einsum), then read out as a real value by every complex-capable
    reduction (``np.real``/``np.imag``, ``np.abs``, ``np.var``,
    ``np.std``, ``np.linalg.norm`` of every kind, ``svd`` values and ``abs`` of its vectors,
    ``eigh`` of a Hermitian matrix); gradients are checked in the real and the imaginary
    directions."""
    shape = g.choose([(3, 4), (4,), (4, 3), (3,)])
    z = complex_expr(g, shape, g.draw_int(1, 2))
    product = g.fresh("z")
    if len(shape) == 2 and g.flag():
        other = complex_expr(g, shape[::-1], 1)
        spelling = g.choose(
            ["({x} @ {y})", "np.matmul({x}, {y})", "np.einsum('ij,jk->ik', {x}, {y})"]
        )
        g.emit(f"{product} = " + spelling.format(x=z.text, y=other.text))
        # A (4, 3) @ (3, 4) product has rank 3: a zero singular value, where their sum
        # and the smallest are not differentiable (the second derivative is not defined).
        rank_deficient = shape[1] < shape[0]
        shape, bound = (shape[0], shape[0]), z.bound * other.bound * shape[1]
    else:
        rank_deficient = False
        g.emit(f"{product} = {z.text}")
        bound = z.bound
    z = Expr(product, shape, bound)
    real_shape_readouts = [
        ("np.real({z})", bound),
        ("np.imag({z})", bound),
        ("np.abs({z})", bound),
        ("(np.abs({z}) ** 2)", bound**2),
        ("np.real({z} * np.conj({z}))", bound**2),
    ]
    size = math.prod(shape)
    scalar_readouts = [
        ("np.var({z})", bound**2),
        ("np.std({z})", bound),
        ("np.linalg.norm({z})", bound * math.sqrt(size)),
        ("np.sum(np.abs({z}))", bound * size),
        ("np.sum(np.real({z} * np.conj({z})))", bound**2 * size),
    ]
    if len(shape) == 1:
        scalar_readouts += [(f"np.linalg.norm({{z}}, ord={k})", bound * size) for k in (1, 2, 3, 4)]
    else:
        scalar_readouts += [
            ("np.linalg.norm({z}, 'fro')", bound * math.sqrt(size)),
            ("np.linalg.norm({z}, 2)", bound * math.sqrt(size)),
            ("np.linalg.norm({z}, -2)", bound * math.sqrt(size)),
            ("np.linalg.norm({z}, 'nuc')", bound * size),
            # (row axis, column axis) as given: the 1/inf norms' gradient once read them sorted.
            ("np.linalg.norm({z}, 1, axis=(1, 0))", bound * size),
            ("np.linalg.norm({z}, np.inf, axis=(1, 0))", bound * size),
            ("np.sum(np.linalg.norm({z}, axis=1))", bound * size),
            ("np.sum(np.linalg.svd({z}, compute_uv=False))", bound * size),
            ("np.sum(np.var({z}, axis=0))", bound**2 * shape[1]),
            # Singular vectors and eigenvectors are defined (up to phase, which abs drops)
            # where the values are apart: {sep} adds well separated ones.
            # Weighted along both axes: the rows (or columns) of a unitary U have norm 1, so a
            # weighting of one axis only sums to a constant, whose finite differences are noise.
            (
                "np.sum(np.abs({u}) ** 2 * np.arange(1.0, {r1}.0)[:, None]"
                " * np.arange(2.0, {k2}.0))",
                float(size) * (min(shape) + 1),
            ),
        ]
        if rank_deficient:
            scalar_readouts = [
                readout
                for readout in scalar_readouts
                if not any(word in readout[0] for word in ("svd", "'nuc'", ", -2)"))
            ]
        if shape[0] == shape[1]:
            hermitian = "({z} + np.conj({z}).T + np.diag(4.0 * np.arange(1.0, {r1}.0)))"
            scalar_readouts += [
                (f"np.sum(np.linalg.eigh({hermitian})[0] * np.arange(1.0, {{r1}}.0))", 80.0),
                (
                    f"np.sum(np.abs(np.linalg.eigh({hermitian})[1][:, 0]) ** 2"
                    " * np.arange(1.0, {r1}.0))",
                    4.0,
                ),
            ]
    name = g.fresh("t")
    if g.flag():
        text, out_bound = g.choose(real_shape_readouts)
        out_shape = shape
    else:
        text, out_bound = g.choose(scalar_readouts)
        out_shape = ()
    u = ""
    if "{u}" in text:  # `np.linalg.svd(x)[0]` is refused: unpack
        u, values, vh = g.fresh("left"), g.fresh("sv"), g.fresh("vh")
        separated = (
            f"{product} + 4.0 * np.eye({shape[0]}, {shape[1]}) * np.arange(1.0, {shape[1] + 1}.0)"
        )
        g.emit(f"{u}, {values}, {vh} = np.linalg.svd({separated}, full_matrices=False)")
    g.emit(f"{name} = " + text.format(z=product, r1=shape[0] + 1, k2=min(shape) + 2, u=u))
    g.define(name, Expr(name, out_shape, out_bound))
    _use(g, name)


def complex_views(g: _Generator) -> None:
    """``np.real(z)`` / ``np.imag(z)`` (``z.real`` / ``z.imag``) of a complex array are
    writable views: ``r =
    np.real(z); z[...] = …; read r`` and ``np.imag(z)[i] = …; read z``."""
    shape = g.choose([(3, 4), (4,)])
    z = complex_expr(g, shape, 1)
    local = g.fresh("z")
    g.emit(f"{local} = {z.text} * 1.0")
    other = g.complex_argument((4,))
    part = g.fresh("r")
    spelling = g.choose(["np.real({z})", "np.imag({z})", "{z}.real", "{z}.imag"])
    g.emit(f"{part} = " + spelling.format(z=local))
    index = ", ".join(g.index(size) for size in shape)
    if g.flag():
        value = g.choose([f"{other.text}[{g.index(4)}]", "0.25", f"np.conj({other.text}[0])"])
        g.emit(f"{local}[{index}] = {value}")
        g.emit(f"{part}[{g.index(shape[0])}] *= 0.5")
    else:
        g.emit(f"{part}[{index}] = np.tanh({g.expr((), 1).text})")
    name = g.fresh("t")
    g.emit(f"{name} = np.sum({part}) + np.abs(np.sum({local}))")
    g.define(name, Expr(name, (), 40.0))
    _use(g, name)


# ---- draws from a generator seeded in the program -------------------------------------------


def seeded_draws(g: _Generator) -> None:
    """``rng = np.random.default_rng(7)`` (or RandomState, or Generator(PCG64)) inside the
    program and a draw from it: each call seeds afresh, so the compiled program must draw what
    the plain one draws, and finite differences see the same sample
    (Note [Generators made inside] in `ir.ops.random`)."""
    shape = g.choose([(3,), (4,), (3, 4)])
    rng = g.fresh("rng")
    make = g.choose(
        [
            "np.random.default_rng({s})",
            "np.random.RandomState({s})",
            "np.random.Generator(np.random.PCG64({s}))",
        ]
    )
    g.emit(f"{rng} = " + make.format(s=g.choose([0, 1, 7])))
    x = g.expr(shape, 2)
    draws = [
        (f"{x.text} + 0.1 * {rng}.standard_normal({shape})", x.bound + 1.0),
        (f"{x.text} * {rng}.uniform(-1.0, 1.0, size={shape})", x.bound),
        (f"{rng}.permutation({x.text})", x.bound),
    ]
    if len(shape) == 1:  # RandomState chooses elements of a 1-D array only, as NumPy does
        draws.append((f"{rng}.choice({x.text}, size={shape[0]}, replace=False)", x.bound))
    text, bound = g.choose(draws)
    name = g.fresh("t")
    g.emit(f"{name} = {text}")
    g.define(name, Expr(name, shape, bound))
    _use(g, name)


# ---- the table ---------------------------------------------------------------------------------

IDIOMS: dict[str, Idiom] = {
    idiom.name: idiom
    for idiom in [
        Idiom("accumulators", "s = 0.0; for …: s op= <NumPy scalar> (every op)", accumulators),
        Idiom("scalar_reads", "s = y[i, j]; s op= …; then y written", scalar_reads),
        Idiom("int_reads", "e[i], e[i, j], e[i, j, k], e[i][j] of 1-3-D arrays", int_reads),
        Idiom("views", "every NumPy view spelling, base and view written", views),
        Idiom("readonly_writes", "a write through a read-only view: refused", readonly_writes),
        Idiom("saved_operands", "s = op(y); y written; s returned", saved_operands),
        Idiom("split_einsum", "einsum batch broadcasting, split pieces", split_einsum),
        Idiom("list_of_tuples", "params = [(W, b), …]; params[i][0]", list_of_tuples),
        Idiom("dict_params", "params = {'W1': …}; by key, items, values, get", dict_params),
        Idiom("complex", "complex arguments through complex operators", complex_inputs),
        Idiom("complex_views", "np.real/np.imag views of complex arrays", complex_views),
        Idiom("seeded_draws", "rng = np.random.default_rng(7) in the program; draws", seeded_draws),
        Idiom("float_operands", "np.gradient(x, h), norm(x, ord=h): h refused", float_operands),
        *(Idiom(name, what, write) for name, what, write in PYTHON_IDIOMS),
        *(Idiom(name, what, write) for name, what, write in CALL_IDIOMS),
        *(Idiom(name, what, write) for name, what, write in RULE_IDIOMS),
    ]
}
