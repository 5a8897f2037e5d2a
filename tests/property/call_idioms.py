"""Issue 17's calling idioms, for the fuzzer: ``functools.partial`` objects (at module level
and built inside ``f``), bound methods reading ``self.W``, ``*args``/``**kwargs``/keyword-only
signatures called with unpacking and string modes, and the builtins decided while compiling
(``map``, ``sorted``, ``any``/``all``, ``tuple``/``list``, dict comprehensions, ``type(x) is``,
casts, ``slice`` objects, ``max``/``min`` of NumPy scalars, recursion over nested tuples, a
list a helper builds, ``np.array`` of a comprehension, ``zip`` of arrays).

Each is an option of `tests.property.idioms.IDIOMS`, as those of `tests.property.python_idioms`:
its helpers, classes, objects and partials go before ``f`` (`_Generator.module_lines`), its
calls read the generator's variables, and what they return is read by the statements after.
Module-level arrays a partial fixes or an object holds are seeded in the source; the
``scripted`` property rebinds and writes them (`tests.property.checks.free_arrays` finds them
through the partials and objects ``f`` names), so a compiler that baked one in fails.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from tests.property.programs import SHAPES, Expr, Shape
from tests.property.python_idioms import _bounded, _carrying_loop

if TYPE_CHECKING:
    from tests.property.programs import _Generator

NONEMPTY = [s for s in SHAPES if s]


def _module(g: _Generator, block: str) -> None:
    g.module_lines.append(block)


def _import_functools(g: _Generator) -> None:
    if "import functools" not in g.module_lines:
        g.module_lines.insert(0, "import functools")


def _module_array(g: _Generator, shape: Shape) -> str:
    """A module-level array no argument passes (read by ``f`` only through a partial or an
    object, never by name)."""
    name = g.fresh("K")
    _module(g, f"{name} = np.random.default_rng({g.draw_int(0, 999)}).uniform(-1.0, 1.0, {shape})")
    return name


def _result(g: _Generator, text: str, shape: Shape, bound: float) -> None:
    name = g.fresh("t")
    g.emit(f"{name} = {text}")
    g.define(name, Expr(name, shape, bound))
    g.must_use.append(name)


# ---- functools.partial -------------------------------------------------------------------------


def partials(g: _Generator) -> None:
    """``P = functools.partial(mix, …)`` at module level fixing arrays and numbers by keyword or
    by position (a fixed keyword before a passed one: 54a08d6's silent swap), a passed keyword
    overriding a fixed one, a partial of a partial; or ``q = functools.partial(mix, w)`` built
    inside ``f`` over the generator's values."""
    _import_functools(g)
    shape = g.choose(NONEMPTY)
    mix = g.fresh("mix")
    _module(
        g,
        f"def {mix}(x, W, s=1.0, *, k=0.5):\n    return np.tanh(x * W) * s + k * np.sin(x)",
    )
    # x * W broadcasts to shape; the result is at most |s| + |k|.

    def value() -> str:
        return _bounded(g.expr(shape, 2)).text

    form = g.choose(
        ["W_kw", "x_pos", "s_kw", "override", "both_pos", "x_kw", "nested", "inside", "inside_kw"]
    )
    p = g.fresh("P")
    bound = 1.5
    if form == "W_kw":
        k1 = _module_array(g, shape)
        _module(g, f"{p} = functools.partial({mix}, W={k1})")
        # Not P(x, 0.5): the 0.5 would be a second W, which Python refuses.
        call = g.choose(
            [f"{p}({value()})", f"{p}({value()}, s=0.5, k=0.25)", f"{p}({value()}, s=2.0)"]
        )
        bound = 2.5
    elif form == "x_pos":
        k1 = _module_array(g, shape)
        _module(g, f"{p} = functools.partial({mix}, {k1})")
        call = g.choose([f"{p}({value()})", f"{p}(W={value()}, k=-0.5)"])
    elif form == "s_kw":
        _module(g, f"{p} = functools.partial({mix}, s=0.5)")
        call = g.choose([f"{p}({value()}, {value()})", f"{p}({value()}, W={value()})"])
    elif form == "override":
        k1 = _module_array(g, shape)
        _module(g, f"{p} = functools.partial({mix}, W={k1}, k=2.0)")
        call = g.choose([f"{p}({value()}, k=0.25)", f"{p}({value()}, W={value()})"])
        bound = 3.0
    elif form == "both_pos":
        k1, k2 = _module_array(g, shape), _module_array(g, shape)
        _module(g, f"{p} = functools.partial({mix}, {k1}, {k2})")
        call = g.choose([f"{p}()", f"{p}(s={value()})"])
        bound = 21.0
    elif form == "x_kw":
        # A fixed keyword before a passed argument, in the order of the regression 54a08d6.
        k1 = _module_array(g, shape)
        _module(g, f"{p} = functools.partial({mix}, x={k1})")
        call = g.choose([f"{p}(W={value()})", f"{p}(W={value()}, s=0.5, k=1.0)"])
    elif form == "nested":
        k1 = _module_array(g, shape)
        inner = g.fresh("P")
        _module(g, f"{inner} = functools.partial({mix}, W={k1})")
        _module(g, f"{p} = functools.partial({inner}, s=0.5)")
        call = g.choose([f"{p}({value()})", f"{p}({value()}, k=1.0)"])
    else:
        fixed = value()
        q = g.fresh("q")
        if form == "inside":
            g.emit(f"{q} = functools.partial({mix}, {fixed})")
            call = g.choose([f"{q}({value()})", f"{q}({value()}, 0.5, k=0.25)"])
        else:
            g.emit(f"{q} = functools.partial({mix}, W={fixed}, s=0.5)")
            call = g.choose([f"{q}({value()})", f"{q}(x={value()})"])
    _result(g, call, shape, bound)


# ---- bound methods -----------------------------------------------------------------------------


def methods(g: _Generator) -> None:
    """An object at module level whose array attributes (``self.W``, ``self.b``) and number
    attribute (``self.scale``) its methods read, through ``OBJ.apply(v)`` calling
    ``self.helper(...)``, a bound method kept in a name, or ``OBJ.W`` read straight."""
    rows, cols = g.choose([3, 4]), g.choose([3, 4])
    cls, obj = g.fresh("Layer"), g.fresh("OBJ")
    seeds = g.draw_int(0, 999), g.draw_int(0, 999)
    scale = g.choose(["0.5", "-1.5", "2.0"])
    _module(
        g,
        f"class {cls}:\n"
        f"    def __init__(self, W, b, scale):\n"
        f"        self.W = W\n"
        f"        self.b = b\n"
        f"        self.scale = scale\n"
        f"\n"
        f"    def helper(self, u, shift=0.0):\n"
        f"        return np.tanh(u + self.b + shift)\n"
        f"\n"
        f"    def apply(self, v):\n"
        f"        return self.scale * self.helper(v @ self.W)\n"
        f"\n"
        f"    def apply_t(self, v):\n"
        f"        return self.helper(v @ self.W, shift=0.5) * self.scale\n"
        f"\n"
        f"\n"
        f"{obj} = {cls}(\n"
        f"    np.random.default_rng({seeds[0]}).uniform(-1.0, 1.0, ({rows}, {cols})),\n"
        f"    np.random.default_rng({seeds[1]}).uniform(-1.0, 1.0, ({cols},)),\n"
        f"    {scale},\n"
        f")",
    )
    batch = g.choose([None, 3, 4])
    v_shape: Shape = (rows,) if batch is None else (batch, rows)
    out_shape: Shape = (cols,) if batch is None else (batch, cols)
    v = _bounded(g.expr(v_shape, 2)).text
    form = g.choose(["apply", "apply_t", "bound", "helper", "attribute"])
    bound = abs(float(scale))
    if form == "apply":
        call = f"{obj}.apply({v})"
    elif form == "apply_t":
        call = f"{obj}.apply_t({v})"
    elif form == "bound":
        method = g.fresh("m")
        g.emit(f"{method} = {obj}.apply")
        call = f"{method}({v})"
    elif form == "helper":
        u = _bounded(g.expr(out_shape, 2)).text
        call, bound = f"{obj}.helper({u}, shift={obj}.scale)", 1.0
    else:
        x = _bounded(g.expr(out_shape, 2))
        call = f"{x.text} * {obj}.b + np.sum({obj}.W) * {obj}.scale"
        bound = x.bound + rows * cols * abs(float(scale))
    _result(g, call, out_shape, bound)


# ---- signatures: *args, **kwargs, keyword-only, string modes ---------------------------------


def signatures(g: _Generator) -> None:
    """Helpers with ``*args`` / ``**kwargs`` / keyword-only parameters with defaults, called
    with ``*tuple`` and ``**dict`` unpacking; a string ``mode`` choosing a branch."""
    shape = g.choose(NONEMPTY)

    def value() -> str:
        return _bounded(g.expr(shape, 2)).text

    form = g.choose(["variadic", "keyword_only", "mode"])
    helper = g.fresh("comb" if form == "variadic" else "kw" if form == "keyword_only" else "pick")
    if form == "variadic":
        _module(
            g,
            f"def {helper}(*args, scale=1.0, **kwargs):\n"
            f"    total = args[0] * scale\n"
            f"    for x in args[1:]:\n"
            f"        total = total + np.sin(x)\n"
            f"    for key in kwargs:\n"
            f"        total = total * np.tanh(kwargs[key])\n"
            f"    return total / len(args)",
        )
        spread = g.fresh("xs")
        call = g.choose(
            [
                f"{helper}({value()}, {value()})",
                f"{helper}(*({value()}, {value()}), scale=0.5)",
                f"{helper}({value()}, *[{value()}, {value()}], **{{'u': {value()}}})",
                f"{helper}({value()}, scale=-0.5, u={value()}, w={value()})",
                f"{helper}(*{spread}, **{{'scale': 2.0}})",
            ]
        )
        if f"*{spread}" in call:
            g.emit(f"{spread} = ({value()}, {value()})")
        bound = 20.0
    elif form == "keyword_only":
        _module(
            g,
            f"def {helper}(x, *, scale=0.5, shift=0.0, mode='tanh'):\n"
            f"    if mode == 'tanh':\n"
            f"        return np.tanh(x) * scale + shift\n"
            f"    elif mode == 'sin':\n"
            f"        return np.sin(x) * scale - shift\n"
            f"    return x * scale + shift",
        )
        options = g.choose(["", ", mode='sin'", ", scale=2.0, mode='lin'", ", shift=0.25"])
        call = g.choose(
            [
                f"{helper}({value()}{options})",
                f"{helper}({value()}, **{{'mode': 'lin', 'shift': 0.25}})",
                f"{helper}(*({value()},){options})",
            ]
        )
        bound = 45.0
    else:
        _module(
            g,
            f"def {helper}(x, y, mode='sum', weight=1.0):\n"
            f"    if mode == 'sum':\n"
            f"        return (x + y) * weight\n"
            f"    if mode == 'prod':\n"
            f"        return x * y * weight\n"
            f"    return (x - y) * weight",
        )
        mode = g.choose(["", ", 'prod'", ", mode='diff'", ", 'sum', 0.5", ", weight=2.0"])
        call = g.choose(
            [f"{helper}({value()}, {value()}{mode})", f"{helper}(*({value()}, {value()}){mode})"]
        )
        bound = 800.0
    name = g.fresh("t")
    g.emit(f"{name} = {call}")
    g.define(name, Expr(name, shape, bound))
    g.must_use.append(name)


# ---- builtins decided while compiling ----------------------------------------------------------


def builtins(g: _Generator) -> None:
    """``map``, ``sorted``, ``any``/``all``, ``tuple``/``list``, dict comprehensions,
    ``type(x) is``, ``np.float64``/``float``/``int`` casts, ``slice`` objects, Python's
    ``max``/``min`` of NumPy scalars, recursion over a nested tuple of arrays and on an int, a
    list a helper builds and returns, ``np.array`` of a comprehension, ``zip`` of two arrays'
    rows (an IR loop)."""
    form = g.choose(
        [
            "map",
            "sorted",
            "any_all",
            "tuple_list",
            "dict",
            "type_is",
            "casts",
            "slice",
            "max_min",
            "recursion",
            "fact",
            "helper_list",
            "np_array",
            "zip_rows",
        ]
    )
    shape = g.choose(NONEMPTY)

    def value(of: Shape = shape) -> str:
        return _bounded(g.expr(of, 2)).text

    if form == "map":
        text = g.choose(
            [
                f"sum(map(np.tanh, ({value()}, {value()})))",
                f"sum(map(lambda u: u * 0.5, [{value()}, {value()}]))",
                f"sum(map(lambda u, v: np.sin(u) * v, ({value()}, {value()}), "
                f"({value()}, {value()})))",
            ]
        )
        _result(g, text, shape, 2.0 if "sin" not in text else 40.0)
    elif form == "sorted":
        c = g.fresh("c")
        text = g.choose(
            [
                f"sum({c} * {value()} for {c} in sorted([0.5, -0.25, 1.0]))",
                f"sorted((0.5, 2.0, -1.0), reverse=True)[0] * {value()}",
                f"sorted([0.5, -2.0, 1.0])[-1] * {value()}",
                # keys computed on constants, folded while compiling (tests/regressions/142.py)
                f"sorted([0.5, -2.0, 1.0], key=abs)[-1] * {value()}",
                f"sorted((3, 1, 2), key=lambda {c}: -{c})[0] * {value()}",
            ]
        )
        _result(g, text, shape, 40.0)
    elif form == "any_all":
        v, w = value(), value()
        test = g.choose(
            [
                f"all(u.ndim == {len(shape)} for u in ({v}, {w}))",
                f"any([{len(shape)} > 2, {shape[-1]} == 3])",
                "all(c > 0 for c in (0.5, 1.0)) and not any(c < 0 for c in [1.0])",
                # a shape against a tuple, as Python compares them (prim::sequence_eq)
                f"{v}.shape == {tuple(shape)!r}",
                f"{w}.shape != {tuple(reversed(shape))!r} or {len(shape)} == 1",
            ]
        )
        # Either array, as far as functionalisation knows (tests/regressions/141.py): read only.
        name = g.fresh("t")
        g.emit(f"{name} = {v} * 2.0 if {test} else {w}")
        g.define(name, Expr(name, shape, 40.0), writable=False)
        g.must_use.append(name)
    elif form == "tuple_list":
        parts, u = g.fresh("parts"), g.fresh("u")
        spelling = g.choose(["tuple", "list"])
        g.emit(f"{parts} = {spelling}(np.sin({u}) for {u} in ({value()}, {value()}, {value()}))")
        _result(g, f"{parts}[0] + {parts}[-1] * {parts}[1]", shape, 2.0)
    elif form == "dict":
        d, k, u = g.fresh("d"), g.fresh("k"), g.fresh("u")
        g.emit(
            f"{d} = {{{k}: np.tanh({u}) for {k}, {u} in zip(('p', 'q'), ({value()}, {value()}))}}"
        )
        _result(g, g.choose([f"{d}['p'] - {d}['q']", f"sum({d}[{k}] for {k} in {d})"]), shape, 2.0)
    elif form == "type_is":
        k = g.fresh("k")
        g.emit(f"{k} = {g.choose(['3', '0.5', '(1, 2)'])}")
        text = f"{value()} * (2.0 if type({k}) is int else -1.0 if type({k}) is tuple else 0.5)"
        _result(g, text, shape, 40.0)
    elif form == "casts":
        scalar = _bounded(g.expr((), 2)).text
        text = g.choose(
            [
                f"np.float64(0.5) * {value()}",
                f"float(2) * {value()} + int(2.7)",
                f"np.float64({scalar}) * {value()}",
                # float() of a run-time scalar has no derivative (tests/regressions/140.py):
                # only of a constant.
                f"float(np.tanh(0.5)) * {value()}",
            ]
        )
        _result(g, text, shape, 42.0)
    elif form == "slice":
        # Shapes whose first axis a slice shortens to another shape the generator has.
        size, rest = g.choose([(4, ()), (4, (3,)), (4, (4,)), (3, (3,)), (4, (1,))])
        sl = g.fresh("sl")
        source = value((size, *rest))
        if size == 4:
            g.emit(f"{sl} = {g.choose(['slice(1, 4)', 'slice(0, 3)', 'slice(None, 3)'])}")
            out = (3, *rest)
        else:
            g.emit(f"{sl} = slice(None, None, -1)")
            out = (size, *rest)
        _result(g, f"({source})[{sl}]", out, 20.0)
    elif form == "max_min":
        s1, s2 = _bounded(g.expr((), 2)).text, _bounded(g.expr((), 2)).text
        extreme = g.choose(["max", "min"])
        # Values apart but for measure-zero ties, where neither difference is taken.
        text = g.choose(
            [f"{extreme}({s1}, {s2} + 0.5)", f"{extreme}({s1}, 25.0)", f"{extreme}(-25.0, {s1})"]
        )
        _result(g, f"{text} * {value()}", shape, 25.0 * 20.0)
    elif form == "recursion":
        walk = g.fresh("walk")
        check = g.choose(["isinstance(t, tuple)", "type(t) is tuple"])
        _module(
            g,
            f"def {walk}(t, scale):\n"
            f"    if {check}:\n"
            f"        return sum({walk}(c, scale * 0.5) for c in t)\n"
            f"    return scale * np.sum(np.tanh(t))",
        )
        tree = g.choose(
            [
                f"({value()}, ({value()}, {value()}))",
                f"(({value()},), {value()})",
                f"({value()},)",
            ]
        )
        _result(g, f"{walk}({tree}, 1.0)", (), 12.0 * 3)
    elif form == "fact":
        fact = g.fresh("fact")
        _module(g, f"def {fact}(n):\n    return 1 if n <= 1 else n * {fact}(n - 1)")
        _result(g, f"{fact}({g.draw_int(0, 4)}) * {value()} / 24.0", shape, 20.0)
    elif form == "helper_list":
        build = g.fresh("layers")
        _module(
            g,
            f"def {build}(x, y):\n    out = [np.tanh(x)]\n    out.append(y * 0.5)\n    return out",
        )
        parts = g.fresh("parts")
        g.emit(f"{parts} = {build}({value()}, {value()})")
        _result(g, f"{parts}[0] * {parts}[1]", shape, 10.0)
    elif form == "np_array":
        i = g.fresh("i")
        count = g.choose([3, 4])
        g.loop_indices.append((i, count))
        element = _bounded(g.expr((), 2))
        g.loop_indices.pop()
        _result(g, f"np.array([{element.text} for {i} in range({count})])", (count,), element.bound)
    else:
        rows = g.choose([3, 4])
        first = g.choose([s for s in NONEMPTY if s[0] == rows])
        second = g.choose([s for s in NONEMPTY if s[0] == rows])
        x_text, y_text = value(first), value(second)
        xs, ys, r, s = g.fresh("xs"), g.fresh("ys"), g.fresh("r"), g.fresh("s")
        g.emit(f"{xs} = {x_text}")
        g.emit(f"{ys} = {y_text}")
        _carrying_loop(
            g,
            f"for {r}, {s} in zip({xs}, {ys}):",
            "",
            rows,
            [(r, Expr(r, first[1:], 20.0)), (s, Expr(s, second[1:], 20.0))],
        )


# ---- functions as arguments --------------------------------------------------------------------


def function_arguments(g: _Generator) -> None:
    """A module-level helper ``apply(v, act=np.tanh, scale=0.5)`` called with its default, a
    NumPy function, a module-level ``def`` or lambda, or a partial, by position or by keyword
    (Note [Functions as arguments] in `frontend.function_calls`); each is bounded by 1."""
    _import_functools(g)
    shape = g.choose(NONEMPTY)
    apply, soft, half = g.fresh("apply"), g.fresh("soft"), g.fresh("half")
    _module(g, f"def {apply}(v, act=np.tanh, scale=0.5):\n    return act(v) * scale")
    _module(g, f"def {soft}(z, k=1.0):\n    return np.tanh(k * z) * np.cos(z)")
    _module(g, f"{half} = lambda z: 0.5 * np.sin(z)")
    sharp = g.fresh("SHARP")
    _module(g, f"{sharp} = functools.partial({soft}, k=2.0)")
    value = _bounded(g.expr(shape, 2)).text
    function = g.choose(["np.sin", "np.tanh", "np.cos", soft, half, sharp])
    call = g.choose(
        [
            f"{apply}({value})",
            f"{apply}({value}, {function})",
            f"{apply}({value}, act={function})",
            f"{apply}({value}, {function}, 2.0)",
            f"{apply}(act={function}, v={value})",
        ]
    )
    _result(g, call, shape, 2.0)


CALL_IDIOMS: list[tuple[str, str, Callable[[_Generator], None]]] = [
    ("partials", "functools.partial fixing arrays by keyword / position", partials),
    ("methods", "OBJ.apply(v) reading self.W, self.b, self.scale", methods),
    ("signatures", "*args, **kwargs, keyword-only, f(*xs, **d), string modes", signatures),
    ("builtins", "map, sorted, any/all, casts, slice, recursion, zip of arrays", builtins),
    ("function_arguments", "apply(v, act=np.tanh): functions given to helpers", function_arguments),
]
