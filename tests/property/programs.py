"""Random well-typed NumPy programs, as source text, for the property tests.

A `Program` is the source of a module that defines ``f`` (the generated function) and ``loss``
(``np.sum`` of ``f``, for gradients), the arguments' specs and the seed their values are drawn
from. `programs()` is the hypothesis strategy: straight-line code and ``if`` (on data or on an
int argument), ``for … in range`` and counted ``while`` loops, elementwise operators and
functions with broadcasting, reductions, matmul, slicing and indexing reads, and writes
(``y[i] = …``, ``y[:, j] += …``, ``y *= …``) into fresh arrays, into arguments and into views of
either, in straight-line code, in branches and in loops (``out[i] = …`` in a ``for``), over
small float64 arrays of fixed shapes; about one array argument in four comes in Fortran order,
transposed, strided or reversed (`LAYOUTS`), as a NumPy user's ``x.T`` or ``x[::2]`` would.
The idioms of `tests.property.idioms` (accumulators, NumPy scalars read out of arrays, views,
saved operands, complex arguments, …) are options ``programs(idioms=...)`` draws besides.

Writes stay within what the compiler supports (`passes.functionalize`, Note
[Functionalisation]): a write never targets a name an ``if`` or a loop may bind to one array or
another (`Variable.writable`), no two arguments are one array, and every array is float64.

Values stay finite and gradients well conditioned by construction: every expression carries a
bound on its magnitude; ``exp`` only sees small values, ``log`` and ``sqrt`` only ``1 + x*x``,
divisors are ``2 + cos(…)``, and an expression whose bound passes `WRAP_ABOVE` is wrapped in
``np.tanh``; a loop keeps the bound of what it carries (Note [Bounds of carried values]). No
operator is non-smooth where random inputs can land (no abs, max, sort).
"""

from __future__ import annotations

import ast
import copy
import linecache
import math
import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from itertools import count
from types import ModuleType
from typing import Any

import numpy as np
from hypothesis import strategies as st

Shape = tuple[int, ...]
ArgSpec = Shape | str  # an array's shape, "float", "int=N", or "complex(3, 4)" (a complex array)

# Shapes an expression may have. Two different sizes, so a transposition bug cannot hide.
SHAPES: tuple[Shape, ...] = (
    (),
    (3,),
    (4,),
    (3, 4),
    (4, 3),
    (3, 3),
    (4, 4),
    (3, 1),
    (1, 4),
    (4, 1),
    (1, 3),
)
EXTRA_ARGUMENT_SHAPES: tuple[Shape, ...] = ((3, 4), (4,), (3,), (4, 3), (3, 1), (1, 4))
WRAP_ABOVE = 20.0
MAX_DEPTH = 3

HEADER = '"""{doc}"""\n\nimport numpy as np\n\n'


@dataclass(frozen=True)
class Program:
    """A generated module's source, its arguments and the seed of their values."""

    body: str  # the source of ``f`` and ``loss``
    args: tuple[tuple[str, ArgSpec], ...]
    seed: int
    # Array arguments passed in another memory layout than C order: name -> a key of LAYOUTS.
    layouts: tuple[tuple[str, str], ...] = ()

    def source(self, doc: str = "A generated program.", metadata: str = "") -> str:
        """A module that defines ``f``, ``loss``, ``ARGS`` and ``SEED`` (after ``metadata``, a
        few assignments): what a regression file holds."""
        args = ", ".join(f"({name!r}, {spec!r})" for name, spec in self.args)
        layouts = f"LAYOUTS = {dict(self.layouts)!r}\n" if self.layouts else ""
        return (
            HEADER.format(doc=doc)
            + metadata
            + f"ARGS = ({args},)\n{layouts}SEED = {self.seed}\n\n\n"
            + self.body
        )

    @staticmethod
    def from_source(source: str) -> Program:
        """The program a regression file (what `source` wrote) holds."""
        namespace: dict[str, Any] = {}
        exec(compile(source, "<regression>", "exec"), namespace)
        body = source.split(f"SEED = {namespace['SEED']}\n", 1)[1].lstrip("\n")
        layouts = tuple(namespace.get("LAYOUTS", {}).items())
        return Program(body, tuple(namespace["ARGS"]), namespace["SEED"], layouts)

    def arguments(self) -> tuple[Any, ...]:
        """Fresh argument values: arrays and floats uniform in [-1, 1] from ``seed``."""
        rng = np.random.default_rng(self.seed)
        values: list[Any] = []
        layouts = dict(self.layouts)
        for name, spec in self.args:
            if spec == "float":
                values.append(float(rng.uniform(-1, 1)))
            elif is_complex(spec):
                shape = complex_shape(spec)
                values.append(rng.uniform(-1, 1, shape) + 1j * rng.uniform(-1, 1, shape))
            elif isinstance(spec, str):
                values.append(int(spec.split("=")[1]))
            else:
                values.append(rng.uniform(-1, 1, spec))
            if name in layouts:
                values[-1] = LAYOUTS[layouts[name]](values[-1])
        return tuple(values)

    def float_positions(self) -> tuple[int, ...]:
        return tuple(i for i, (_, spec) in enumerate(self.args) if not _is_int(spec))


def _strided(value: np.ndarray) -> np.ndarray:
    """``value`` as every other row of an array twice as long."""
    whole = np.zeros((2 * value.shape[0], *value.shape[1:]), value.dtype)
    whole[::2] = value
    return whole[::2]


# How an argument may be laid out in memory besides C order, and the ndim each needs. NumPy
# users pass all of these (``x.T``, ``x[::2]``, ``np.asfortranarray(x)``, ``x[::-1]``); the
# compiler's own arrays are C-ordered, so a kernel or a view rule that assumes its input is
# would be wrong on them.
LAYOUTS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "fortran": np.asfortranarray,
    "transposed": lambda value: np.ascontiguousarray(value.T).T,
    "strided": _strided,
    "reversed": lambda value: np.ascontiguousarray(value[::-1])[::-1],
}
LAYOUT_MIN_NDIM = {"fortran": 2, "transposed": 2, "strided": 1, "reversed": 1}


def copy_keeping_layout(value: Any) -> Any:
    """A deep copy of ``value``; an array keeps its strides (``copy.deepcopy`` would make a
    strided or reversed view C-ordered)."""
    if not isinstance(value, np.ndarray) or value.flags.c_contiguous:
        return copy.deepcopy(value)
    extents = [(n - 1) * stride for n, stride in zip(value.shape, value.strides, strict=True)]
    low = sum(min(0, e) for e in extents)
    high = sum(max(0, e) for e in extents) + value.itemsize
    memory = np.zeros(high - low, np.uint8)
    copied = np.ndarray(value.shape, value.dtype, memory, -low, value.strides)
    copied[...] = value
    return copied


def _is_int(spec: ArgSpec) -> bool:
    return isinstance(spec, str) and spec.startswith("int")


def is_complex(spec: ArgSpec) -> bool:
    return isinstance(spec, str) and spec.startswith("complex")


def complex_shape(spec: str) -> Shape:
    """The shape of a ``"complex(3, 4)"`` spec."""
    shape = ast.literal_eval(spec.removeprefix("complex"))
    return tuple(shape) if isinstance(shape, tuple) else (shape,)


_modules = count()


def load(source: str, name: str | None = None) -> ModuleType:
    """Execute ``source`` as a module whose functions `ad.script` can find the source of."""
    filename = name or f"<generated-program-{next(_modules)}>"
    # inspect.getsource reads it from linecache; a None mtime keeps checkcache from evicting it.
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    module = ModuleType(re.sub(r"\W", "_", filename))
    module.__file__ = filename
    exec(compile(source, filename, "exec"), module.__dict__)
    return module


def load_program(program: Program) -> ModuleType:
    return load(program.source())


# ---- the generator ------------------------------------------------------------------------------


@dataclass
class Expr:
    text: str
    shape: Shape
    bound: float
    fresh: bool = True  # a new array, not a view of (or the same array as) a variable
    view_of: str | None = None  # the variable a view or alias reads


@dataclass
class Array:
    """One array the program holds, shared by every variable that is it or a view of it: a
    write through any of them raises the bound all of them read."""

    bound: float


@dataclass
class Variable:
    name: str
    shape: Shape
    array: Array
    local: bool  # assigned in the function
    writable: bool = True  # not picked by an if or a loop (functionalize refuses those writes)

    @property
    def bound(self) -> float:
        return self.array.bound


@dataclass
class _Generator:
    draw: Callable[[st.SearchStrategy[Any]], Any]
    scopes: list[list[Variable]] = field(default_factory=lambda: [[]])
    lines: list[str] = field(default_factory=list)
    indent: int = 1
    names: count = field(default_factory=lambda: count(1))
    ints: list[tuple[str, int]] = field(default_factory=list)  # int names and their upper bound
    # name, trip count; a loop with no int index (``for row in x``) has the name "".
    loop_indices: list[tuple[str, int]] = field(default_factory=list)
    loop_scopes: list[int] = field(default_factory=list)  # where each enclosing loop's body starts
    # Arrays an if or a loop may have given out (a branch's view, a carried value's first one):
    # writing one would change what that output holds in a way functionalize refuses to tell.
    pinned: list[Array] = field(default_factory=list)
    # The idioms (tests/property/idioms.py) this program may draw, and what they leave: names
    # the result must read so that they are not dead, views it may return as they are, and
    # the arguments they asked for.
    idioms: tuple[str, ...] = ()
    must_use: list[str] = field(default_factory=list)
    returns: list[tuple[str, Shape]] = field(default_factory=list)
    extra_args: list[tuple[str, ArgSpec]] = field(default_factory=list)
    # Arrays ``f`` reads from outside (issue 17): name -> the source of its value, defined at
    # module level, or in the closure ``f`` and ``loss`` are made in when ``closure``.
    free: dict[str, str] = field(default_factory=dict)
    closure: bool = False
    # Module-level source before ``f`` (always at module level, also when ``closure``): the
    # helpers, classes, objects and partials of `tests.property.call_idioms`, in order.
    module_lines: list[str] = field(default_factory=list)

    # -- helpers --

    def draw_int(self, low: int, high: int) -> int:
        return int(self.draw(st.integers(low, high)))

    def argument(self, name: str, spec: ArgSpec) -> str:
        """A parameter ``name`` of ``spec`` an idiom reads, added on first use."""
        if (name, spec) not in self.extra_args:
            self.extra_args.append((name, spec))
        return name

    def argument_variable(self, name: str, shape: Shape) -> Variable:
        """An array parameter an idiom adds, as a variable the statements after it see."""
        found = self.lookup(name)
        if found is None:
            self.argument(name, shape)
            self.scopes[0].append(Variable(name, shape, Array(1.0), local=False))
            found = self.scopes[0][-1]
        return found

    def complex_argument(self, shape: Shape) -> Expr:
        """The complex array parameter of ``shape`` (``u34``, ``u4``, …)."""
        name = "u" + "".join(map(str, shape))
        return Expr(self.argument(name, f"complex{shape}"), shape, math.sqrt(2))

    def free_array(self, shape: Shape) -> Variable:
        """A new array ``f`` reads from outside, which no argument passes: a module global
        (``G1``) or, in a program whose ``f`` is made in a closure, a variable of that closure
        (``C1``); drawn uniform in [-1, 1] from a seed in the source, sometimes transposed.
        Never written in ``f``: the checks call the plain and the compiled ``f`` on the same
        one."""
        if not self.free:
            self.closure = self.flag()
        name = self.fresh("C" if self.closure else "G")
        seed = self.draw_int(0, 999)
        if len(shape) == 2 and self.draw_int(0, 3) == 0:
            value = f"np.random.default_rng({seed}).uniform(-1.0, 1.0, {shape[::-1]}).T"
        else:
            value = f"np.random.default_rng({seed}).uniform(-1.0, 1.0, {shape})"
        self.free[name] = value
        variable = Variable(name, shape, Array(1.0), local=False, writable=False)
        self.scopes[0].append(variable)
        return variable

    def choose(self, options: Any) -> Any:
        return self.draw(st.sampled_from(list(options)))

    def flag(self) -> bool:
        return bool(self.draw(st.booleans()))

    def emit(self, line: str) -> None:
        self.lines.append("    " * self.indent + line)

    def variables(self) -> list[Variable]:
        found: dict[str, Variable] = {}
        for scope in self.scopes:
            for variable in scope:
                found[variable.name] = variable
        return list(found.values())

    def lookup(self, name: str) -> Variable | None:
        for scope in reversed(self.scopes):
            for variable in reversed(scope):
                if variable.name == name:
                    return variable
        return None

    def define(self, name: str, expr: Expr, local: bool = True, writable: bool = True) -> None:
        """Bind ``name`` to ``expr``'s value: the array it views, or a new one."""
        source = None if expr.fresh else self.lookup(expr.view_of or "")
        if source is None:
            array = Array(expr.bound)
        else:
            array = source.array
            writable = writable and source.writable
        self.scopes[-1].append(Variable(name, expr.shape, array, local, writable))

    def fresh(self, prefix: str = "t") -> str:
        return f"{prefix}{next(self.names)}"

    # -- expressions --

    def expr(self, shape: Shape, depth: int) -> Expr:
        if depth <= 0 or self.draw(st.integers(0, 3)) == 0:
            result = self.leaf(shape)
        else:
            kinds = ["unary", "binary", "binary"]
            if len(shape) == 2:
                kinds.append("transpose")
            if self.reduction_sources(shape):
                kinds.append("reduce")
            if self.matmul_sources(shape):
                kinds.append("matmul")
            kind = self.choose(kinds)
            result = getattr(self, kind)(shape, depth - 1)
        if result.bound > WRAP_ABOVE:
            return Expr(f"np.tanh({result.text})", shape, 1.0)
        return result

    def unary(self, shape: Shape, depth: int) -> Expr:
        e = self.expr(shape, depth)
        op = self.choose(
            ["tanh", "sin", "cos", "neg", "exp", "sqrt1p", "log1p", "square", "method"]
        )
        if op in ("tanh", "sin", "cos"):
            return Expr(f"np.{op}({e.text})", shape, 1.0)
        if op == "neg":
            return Expr(f"(-{e.text})", shape, e.bound)
        if op == "exp":
            if e.bound > 3:
                return Expr(f"np.exp(np.tanh({e.text}))", shape, math.e)
            return Expr(f"np.exp({e.text})", shape, math.exp(e.bound))
        if op == "sqrt1p":
            return Expr(f"np.sqrt(1.0 + {e.text} * {e.text})", shape, math.sqrt(1 + e.bound**2))
        if op == "log1p":
            return Expr(f"np.log(1.0 + {e.text} ** 2)", shape, math.log1p(e.bound**2))
        if op == "square":
            return Expr(f"({e.text} ** 2)", shape, e.bound**2)
        if len(shape) >= 1 and shape[-1] > 1 and self.flag():
            return Expr(f"np.cumsum({e.text}, axis=-1)", shape, e.bound * shape[-1])
        return Expr(f"(2.0 * {e.text})", shape, 2 * e.bound)

    def broadcast_sources(self, shape: Shape) -> list[Shape]:
        """Shapes that broadcast to ``shape`` against ``shape`` itself."""
        sources = {shape, ()}
        for start in range(len(shape)):
            sources.add(shape[start:])
        if len(shape) == 2:
            sources.add((shape[0], 1))
            sources.add((1, shape[1]))
        return sorted(s for s in sources if s in SHAPES or s == ())

    def binary(self, shape: Shape, depth: int) -> Expr:
        sources = self.broadcast_sources(shape)
        left_shape = self.choose(sources)
        right_shape = self.choose(sources)
        if np.broadcast_shapes(left_shape, right_shape) != shape:
            right_shape = shape
        op = self.choose(["+", "-", "*", "/", "+"])
        if op != "/" and left_shape == () and right_shape == () and self.flag():
            left = Expr(self.constant(), (), 2.0)
        else:
            left = self.expr(left_shape, depth)
        right = self.expr(right_shape, depth)
        if left.shape == right.shape == () and op != "/":
            # Either may be a Python float, and gradients of b + b are refused (004.py).
            left = Expr(f"np.tanh({left.text})", (), 1.0)
        if op == "/":
            return Expr(f"({left.text} / (2.0 + np.cos({right.text})))", shape, left.bound)
        if op == "*":
            return Expr(f"({left.text} * {right.text})", shape, left.bound * right.bound)
        return Expr(f"({left.text} {op} {right.text})", shape, left.bound + right.bound)

    def transpose(self, shape: Shape, depth: int) -> Expr:
        e = self.expr(shape[::-1], depth)
        return Expr(f"{e.text}.T", shape, e.bound, e.fresh, e.view_of)

    def reduction_sources(self, shape: Shape) -> list[tuple[Shape, str]]:
        """(operand shape, axis argument text) pairs that reduce to ``shape``."""
        found: list[tuple[Shape, str]] = []
        if shape == ():
            return [(s, "") for s in SHAPES if s != ()]
        if len(shape) == 1:
            for other in (3, 4):
                found.append(((shape[0], other), ", axis=1"))
                found.append(((other, shape[0]), ", axis=0"))
        elif shape[1] == 1:
            found = [((shape[0], 4), ", axis=1, keepdims=True")]
        elif shape[0] == 1:
            found = [((3, shape[1]), ", axis=0, keepdims=True")]
        return [(s, axis) for s, axis in found if s in SHAPES]

    def reduce(self, shape: Shape, depth: int) -> Expr:
        source, axis = self.choose(self.reduction_sources(shape))
        e = self.expr(source, depth)
        op = self.choose(["sum", "mean", "sum_method", "mean_method"])
        size = math.prod(source) // max(math.prod(shape), 1)
        bound = e.bound * size if op.startswith("sum") else e.bound
        if op.endswith("_method"):
            return Expr(f"{e.text}.{op[:-7]}({axis.lstrip(', ')})", shape, bound)
        return Expr(f"np.{op}({e.text}{axis})", shape, bound)

    def matmul_sources(self, shape: Shape) -> list[tuple[Shape, Shape]]:
        found: list[tuple[Shape, Shape]] = []
        for k in (3, 4):
            if shape == ():
                found.append(((k,), (k,)))
            elif len(shape) == 1:
                found.append(((shape[0], k), (k,)))
                found.append(((k,), (k, shape[0])))
            elif 1 not in shape:
                found.append(((shape[0], k), (k, shape[1])))
        return found

    def matmul(self, shape: Shape, depth: int) -> Expr:
        left_shape, right_shape = self.choose(self.matmul_sources(shape))
        left = self.expr(left_shape, depth)
        right = self.expr(right_shape, depth)
        k = left_shape[-1]
        return Expr(f"({left.text} @ {right.text})", shape, left.bound * right.bound * k)

    def constant(self) -> str:
        return self.choose(["0.5", "1.5", "2.0", "-0.75", "0.25"])

    def index(self, size: int) -> str:
        """An index below ``size``: a constant, or a loop index or int argument that fits."""
        bounds = [*self.loop_indices, *((name, value + 1) for name, value in self.ints)]
        names = [name for name, bound in bounds if name and bound <= size]
        if names and self.flag():
            return str(self.choose(names))
        return str(self.draw(st.integers(-size, size - 1)))

    def leaf(self, shape: Shape) -> Expr:
        exact = [v for v in self.variables() if v.shape == shape]
        options: list[Callable[[], Expr]] = [
            lambda v=v: Expr(v.name, v.shape, v.bound, False, v.name) for v in exact
        ]
        if shape == ():
            options.append(lambda: Expr(self.constant(), (), 2.0))
        for v in self.variables():
            options.extend(self.reads(v, shape))
        if not options:
            options.append(lambda: self.fallback(shape))
        return options[self.draw(st.integers(0, len(options) - 1))]()

    def reads(self, v: Variable, shape: Shape) -> list[Callable[[], Expr]]:
        """Subscript reads of ``v`` that have ``shape``."""
        reads: list[Callable[[], Expr]] = []
        if len(v.shape) == 2:
            rows, cols = v.shape
            if shape == (cols,):
                reads.append(
                    lambda: Expr(f"{v.name}[{self.index(rows)}]", shape, v.bound, False, v.name)
                )
            if shape == (rows,):
                reads.append(
                    lambda: Expr(f"{v.name}[:, {self.index(cols)}]", shape, v.bound, False, v.name)
                )
            if shape == ():
                reads.append(
                    lambda: Expr(
                        f"{v.name}[{self.index(rows)}, {self.index(cols)}]", shape, v.bound
                    )
                )
            if len(shape) == 2 and shape[1] == cols and shape[0] < rows:
                start = self.draw(st.integers(0, rows - shape[0]))
                reads.append(
                    lambda: Expr(
                        f"{v.name}[{start}:{start + shape[0]}]", shape, v.bound, False, v.name
                    )
                )
            if len(shape) == 2 and shape[0] == rows and shape[1] < cols:
                start = self.draw(st.integers(0, cols - shape[1]))
                reads.append(
                    lambda: Expr(
                        f"{v.name}[:, {start}:{start + shape[1]}]", shape, v.bound, False, v.name
                    )
                )
        if len(v.shape) == 1:
            (size,) = v.shape
            if shape == ():
                reads.append(
                    lambda: Expr(f"{v.name}[{self.index(size)}]", shape, v.bound, False, v.name)
                )
            if len(shape) == 1 and shape[0] < size:
                start = size - shape[0]
                reads.append(lambda: Expr(f"{v.name}[{start}:]", shape, v.bound, False, v.name))
        return reads

    def fallback(self, shape: Shape) -> Expr:
        """An expression of ``shape`` built from ``a``, the (3, 4) argument every program has."""
        texts = {
            (): "a[0, 0]",
            (3,): "a[:, 0]",
            (4,): "a[0]",
            (3, 4): "a",
            (4, 3): "a.T",
            (3, 3): "a[:, :3]",
            (4, 4): "np.tanh(a.T @ a)",
            (3, 1): "a[:, 1:2]",
            (1, 4): "a[1:2]",
            (4, 1): "a.T[:, 2:3]",
            (1, 3): "a.T[0:1]",
        }
        a = self.lookup("a")
        bound = 1.0 if shape == (4, 4) or a is None else a.bound
        return Expr(texts[shape], shape, bound, shape == (4, 4), "a")

    # -- statements --

    def statement(self, depth: int) -> None:
        kinds = ["assign", "assign", "if", "for", "while", "write", "write", "augassign"]
        if depth <= 0:
            kinds = ["assign", "write", "augassign"]
        if self.idioms and self.indent == 1:
            kinds += ["idiom"] * 3
        kind = self.choose(kinds)
        getattr(self, f"{kind}_statement")(depth)

    def idiom_statement(self, depth: int, name: str | None = None) -> None:
        from tests.property.idioms import IDIOMS

        IDIOMS[name or self.choose(self.idioms)].write(self)

    def assign_statement(self, depth: int) -> None:
        shape = self.choose(SHAPES)
        e = self.expr(shape, MAX_DEPTH)
        name = self.fresh()
        self.emit(f"{name} = {e.text}")
        self.define(name, e)

    def locals_of(self) -> list[Variable]:
        """Arrays assigned in the function."""
        return [v for v in self.variables() if v.local and len(v.shape) in (1, 2)]

    # -- writes --

    def targets(self) -> list[Variable]:
        """Arrays a write may go into: locals, arguments and views of either, but no name an if
        or a loop may have bound to one array or another, and no array an if or a loop may
        have given out, or a view of: what that output holds after such a write depends on
        what ran, and functionalize refuses to read it (tests/regressions/016.py, 017.py)."""
        return [
            v
            for v in self.variables()
            if v.writable and len(v.shape) in (1, 2) and not any(v.array is a for a in self.pinned)
        ]

    def trips(self) -> int:
        """How many times a statement here may run: the enclosing loops' trip counts' product."""
        return math.prod(max(bound, 1) for _, bound in self.loop_indices)

    def new_array(self) -> Variable:
        """A fresh local array to write into, assigned here."""
        shape = self.choose([s for s in SHAPES if s != ()])
        name = self.fresh("y")
        if self.draw(st.integers(0, 3)) == 0:
            self.emit(f"{name} = np.zeros({shape})")
            self.define(name, Expr(name, shape, 0.0))
        else:
            base = self.expr(shape, 1)
            copy = ".copy()" if self.flag() else " * 1.0"
            self.emit(f"{name} = {base.text}{copy}")
            self.define(name, Expr(name, shape, base.bound))
        variable = self.lookup(name)
        assert variable is not None
        return variable

    def subscript(self, v: Variable) -> tuple[str, Shape]:
        """A subscripted target in ``v`` and the shape it selects."""
        if len(v.shape) == 1:
            (size,) = v.shape
            form = self.choose(["item", "item", "tail", "all"])
            if form == "item":
                return f"{v.name}[{self.index(size)}]", ()
            if form == "tail":
                k = self.choose([k for k in (3, 4) if k <= size])
                return f"{v.name}[{size - k}:]", (k,)
            return f"{v.name}[:]", v.shape
        rows, cols = v.shape
        forms = ["row", "col", "item", "all", "transposed"]
        row_blocks = [k for k in range(1, rows) if (k, cols) in SHAPES]
        col_blocks = [k for k in range(1, cols) if (rows, k) in SHAPES]
        forms += ["rows"] * bool(row_blocks) + ["cols"] * bool(col_blocks)
        form = self.choose(forms)
        if form == "row":
            return f"{v.name}[{self.index(rows)}]", (cols,)
        if form == "col":
            return f"{v.name}[:, {self.index(cols)}]", (rows,)
        if form == "item":
            return f"{v.name}[{self.index(rows)}, {self.index(cols)}]", ()
        if form == "transposed":
            return f"{v.name}.T[{self.index(cols)}]", (rows,)
        if form == "rows":
            k = self.choose(row_blocks)
            start = self.draw(st.integers(0, rows - k))
            return f"{v.name}[{start}:{start + k}]", (k, cols)
        if form == "cols":
            k = self.choose(col_blocks)
            start = self.draw(st.integers(0, cols - k))
            return f"{v.name}[:, {start}:{start + k}]", (rows, k)
        return f"{v.name}[{self.choose([':', '...'])}]", v.shape

    def write(self, target: str, v: Variable, shape: Shape, ops: list[str]) -> None:
        """Emit ``target op value`` for ``target`` in ``v``, a value that broadcasts to
        ``shape``, and raise the bound of ``v``'s array.

        In a loop the value is bounded by 1 whatever it reads: the write runs again on what it
        wrote, so a bound computed from the first iteration's would not hold."""
        value = self.expr(self.choose(self.broadcast_sources(shape)), 2)
        op = self.choose(ops)
        if self.loop_indices or _bound_after(op, v.bound, value.bound, 1) > WRAP_ABOVE:
            function = self.choose(["tanh", "sin", "cos"])
            value = Expr(f"np.{function}({value.text})", value.shape, 1.0)
        self.emit(f"{target} {op} {value.text}")
        v.array.bound = max(v.bound, _bound_after(op, v.bound, value.bound, self.trips()))

    def write_statement(self, depth: int) -> None:
        targets = self.targets()
        v = self.choose(targets) if targets and self.flag() else self.new_array()
        target, shape = self.subscript(v)
        self.write(target, v, shape, ["=", "=", "+=", "-=", "*="])

    def augassign_statement(self, depth: int) -> None:
        targets = self.targets()
        if not targets:
            self.assign_statement(depth)
            return
        v = self.choose(targets)
        self.write(v.name, v, v.shape, ["+=", "-=", "*="])

    # -- control flow --

    def block(self, depth: int, statements: int, targets: Sequence[tuple[str, Expr]] = ()) -> None:
        self.indent += 1
        self.scopes.append([])
        for name, expr in targets:
            self.define(name, expr, writable=False)
        for _ in range(statements):
            self.statement(depth - 1)

    def end_block(self) -> list[Variable]:
        self.indent -= 1
        return self.scopes.pop()

    def condition(self) -> str:
        options = ["data", "data"]
        if self.ints:
            options.append("int")
        if self.choose(options) == "int":
            name, bound = self.choose(self.ints)
            return f"{name} > {self.draw(st.integers(0, bound))}"
        e = self.expr(self.choose(SHAPES), 2)
        threshold = self.choose(["0.0", "0.5", "-0.25"])
        if e.shape == ():
            return f"{e.text} > {threshold}"
        return f"np.sum({e.text}) < {threshold}"

    def if_statement(self, depth: int) -> None:
        shape = self.choose(SHAPES)
        name = self.fresh("v")
        self.emit(f"if {self.condition()}:")
        bounds = []
        rebound: dict[str, Variable] = {}
        for branch in range(2):
            if branch == 1:
                self.emit("else:")
            self.block(depth, self.draw(st.integers(0, 1)))
            e = self.expr(shape, MAX_DEPTH - 1)
            self.emit(f"{name} = {e.text}")
            bounds.append(e.bound)
            source = None if e.fresh else self.lookup(e.view_of or "")
            if source is not None:
                self.pinned.append(source.array)
            for variable in self.end_block():
                outer = self.lookup(variable.name)
                if outer is not None and variable.array is not outer.array:
                    rebound[variable.name] = variable  # a loop in the branch rebound it
                    self.pinned.append(outer.array)
        self.define(name, Expr(name, shape, max(bounds)), writable=False)
        for variable in rebound.values():
            outer = self.lookup(variable.name)
            assert outer is not None
            bound = max(variable.bound, outer.bound)
            self.rebind(variable.name, variable.shape, bound, writable=False)

    def rebind(self, name: str, shape: Shape, bound: float, writable: bool) -> None:
        """Bind the local ``name`` to a new array."""
        self.scopes[-1].append(Variable(name, shape, Array(bound), True, writable))

    def carried(self) -> Variable:
        """A variable for a loop to carry: a local, or a new one assigned before the loop."""
        candidates = self.carried_candidates()
        if candidates and self.flag():
            return self.choose(candidates)
        shape = self.choose(SHAPES)
        e = self.expr(shape, 2)
        name = self.fresh("acc")
        self.emit(f"{name} = {e.text}")
        self.define(name, e)
        return self.variables()[-1]

    def carried_candidates(self) -> list[Variable]:
        """Locals a loop here may rebind. In a loop, only those this iteration assigned: one
        assigned before it would be one array or another where its body starts again, and a
        write there could not tell which."""
        start = self.loop_scopes[-1] if self.loop_scopes else 0
        before = {v.name for scope in self.scopes[:start] for v in scope}
        return [v for v in self.locals_of() if v.name not in before]

    def trip_count(self) -> tuple[str, int]:
        if self.ints and self.flag():
            return self.choose(self.ints)
        trips = self.draw(st.integers(0, 3))
        return str(trips), trips

    def loop_kind(self) -> tuple[Variable, bool]:
        """What a loop about to start computes, assigned before its header if new: a variable
        it carries (rebinding it each iteration), True; or an array it writes into
        (``out[i] = …``), False."""
        if self.flag():
            return self.carried(), True
        targets = self.targets()
        return (self.choose(targets) if targets and self.flag() else self.new_array()), False

    def carry_into_loop(self, v: Variable, update_bound: float = 1.0) -> float:
        """Bind ``v`` as the body of a loop that carries it sees it: the array it was or the
        last iteration's, so not writable (and its array pinned), and bounded by what every
        iteration keeps, ``max(v.bound, update_bound)`` for updates bounded by ``update_bound``
        (Note [Bounds of carried values]); returns that bound."""
        inside = max(v.bound, update_bound)
        self.scopes[-1].append(Variable(v.name, v.shape, Array(inside), v.local, writable=False))
        self.pinned.append(v.array)
        return inside

    def loop_body(
        self,
        depth: int,
        index: str,
        bound: int,
        kind: tuple[Variable, bool],
        targets: Sequence[tuple[str, Expr]] = (),
    ) -> None:
        """The body after the loop's header: a few statements, then the update of the carried
        variable or the write into the array ``kind`` names. ``index`` is the int the header
        binds ("" for none), ``targets`` the other names it binds (``row`` in ``for row in x``),
        read-only in the body and gone after it."""
        v, carried = kind
        inside = self.carry_into_loop(v) if carried else 0.0
        self.loop_indices.append((index, bound))
        self.loop_scopes.append(len(self.scopes))
        self.block(depth, self.draw(st.integers(0, 1)), targets)
        if carried:
            e = self.expr(v.shape, MAX_DEPTH - 1)
            if self.flag():
                e = averaged_in(e, inside)
                self.emit(f"{v.name} = 0.5 * {v.name} + 0.5 * {e.text}")
                bound_after = max(v.bound, e.bound)
            else:
                self.emit(f"{v.name} = np.tanh({v.name} + {e.text})")
                bound_after = max(v.bound, 1.0)
        else:
            target, shape = self.subscript(v)
            self.write(target, v, shape, ["=", "+=", "-=", "*="])
        self.end_block()
        self.loop_scopes.pop()
        self.loop_indices.pop()
        if carried:
            self.rebind(v.name, v.shape, bound_after, writable=False)

    def for_statement(self, depth: int) -> None:
        kind = self.loop_kind()
        trips, bound = self.trip_count()
        index = self.fresh("i")
        self.emit(f"for {index} in range({trips}):")
        self.loop_body(depth, index, bound, kind)

    def while_statement(self, depth: int) -> None:
        kind = self.loop_kind()
        trips, bound = self.trip_count()
        counter = self.fresh("k")
        self.emit(f"{counter} = 0")
        self.emit(f"while {counter} < {trips}:")
        self.indent += 1
        self.emit(f"{counter} = {counter} + 1")
        self.indent -= 1
        self.loop_body(depth, counter, bound + 1, kind)


# Note [Bounds of carried values]
# A bound drawn from a loop's first iteration does not hold in the next ones when the body
# reads what it wrote: from |acc| <= 1, ``acc = 0.5 * acc + 0.5 * np.exp(acc)`` claims
# |acc| <= e after the loop, yet from acc = 1 three trips take it to 1.9, 4.1 and 33, and a
# fourth to 1.6e14. Central differences then lose every digit of a right gradient (the
# ``gradients`` property failed on such a ``while`` loop, whose gradient matched JAX's to
# 2e-10). So a carried value's bound is fixed before its loop's body is drawn
# (`_Generator.carry_into_loop`): its bound before the loop, or that of what an iteration may
# set it to if larger (1 for ``np.tanh(acc + …)``). The body reads it with that bound, and a
# value averaged into it (``0.5 * acc + 0.5 * value``) whose bound passes that is wrapped in
# ``np.tanh`` (`averaged_in`): every iteration keeps it within the bound, by induction.


def averaged_in(value: Expr, bound: float) -> Expr:
    """``value`` as ``acc = 0.5 * acc + 0.5 * value`` averages it into a loop's carried
    ``acc`` bounded by ``bound``: wrapped in ``np.tanh`` if its bound passes that, so that
    the average stays within it (Note [Bounds of carried values])."""
    if value.bound <= bound:
        return value
    return Expr(f"np.tanh({value.text})", value.shape, 1.0)


def _bound_after(op: str, bound: float, value: float, times: int) -> float:
    """A bound on an array after ``op`` with a value bounded by ``value`` ran ``times`` times."""
    if op == "=":
        return max(bound, value)
    if op == "*=":
        return bound * max(value, 1.0) ** times
    return bound + value * times


@st.composite
def programs(
    draw: Callable[[st.SearchStrategy[Any]], Any],
    idioms: Collection[str] = (),
    focus: str | None = None,
) -> Program:
    """A `Program`: a function ``f`` of ``a`` (a (3, 4) array) and up to three more array or
    float arguments, and maybe an int ``n``, with up to four statements before its return.
    Programs of the kinds tests/regressions/ records as known bugs (``XFAIL``) are left out.

    ``idioms`` names the idioms of `tests.property.idioms.IDIOMS` the statements may draw
    (none: the base generator); half the programs that may draw one start with one, and
    ``focus`` (one of them) makes every program start with that one."""
    args: list[tuple[str, ArgSpec]] = [("a", (3, 4))]
    for name in ("b", "c", "d")[: draw(st.integers(0, 3))]:
        spec: ArgSpec = (
            "float"
            if draw(st.integers(0, 5)) == 0
            else draw(st.sampled_from(EXTRA_ARGUMENT_SHAPES))
        )
        args.append((name, spec))
    if draw(st.booleans()):
        args.append(("n", f"int={draw(st.integers(0, 3))}"))
    generator = _Generator(draw, idioms=tuple(sorted(idioms)))
    for name, spec in args:
        if spec == "float":
            generator.define(name, Expr(name, (), 1.0), local=False)
        elif isinstance(spec, str):
            generator.ints.append((name, int(spec.split("=")[1])))
        else:
            generator.define(name, Expr(name, spec, 1.0), local=False)
    statements = draw(st.integers(0, 4))
    if focus is not None or (idioms and draw(st.booleans())):
        generator.idiom_statement(2, focus)
        statements = min(statements, 3)
    for _ in range(statements):
        generator.statement(depth=2)
    result = _result(generator, draw)
    generator.emit(f"return {result.text}")
    args += generator.extra_args
    names = ", ".join(name for name, _ in args)
    # Unannotated parameters given Python floats compute NumPy scalars (tests/regressions/011.py).
    parameters = ", ".join(f"{name}: float" if spec == "float" else name for name, spec in args)
    seed = draw(st.integers(0, 2**16))
    return Program(
        _body(generator, parameters, names, result), tuple(args), seed, _layouts(args, draw)
    )


def _body(generator: _Generator, parameters: str, names: str, result: Expr) -> str:
    """The source of ``f`` and ``loss``. When ``f`` reads arrays from outside, ``loss`` repeats
    its body rather than call it (a function called from a compiled one must take the arrays it
    reads as arguments, Note [Free variables] in `frontend.compile`), and both are made in a
    closure over those arrays when the generator chose one."""
    lines = "\n".join(generator.lines)
    preamble = "".join(block + "\n\n\n" for block in generator.module_lines)
    return preamble + _functions(generator, parameters, names, result, lines)


def _functions(generator: _Generator, parameters: str, names: str, result: Expr, lines: str) -> str:
    if not generator.free:
        # np.sum of a Python float is refused (tests/regressions/012.py).
        total = f"f({names})" if result.shape == () else f"np.sum(f({names}))"
        return f"def f({parameters}):\n{lines}\n\n\ndef loss({parameters}):\n    return {total}\n"
    total = result.text if result.shape == () else f"np.sum({result.text})"
    before_return = "".join(line + "\n" for line in generator.lines[:-1])
    functions = (
        f"def f({parameters}):\n{lines}\n\n\n"
        f"def loss({parameters}):\n{before_return}    return {total}\n"
    )
    values = "".join(f"{name} = {value}\n" for name, value in generator.free.items())
    if not generator.closure:
        return f"{values}\n\n{functions}"
    indented = "\n".join(("    " + line) if line else "" for line in functions.splitlines())
    values = "".join(f"    {line}\n" for line in values.splitlines())
    return (
        f"def _closure():\n{values}\n{indented}\n\n    return f, loss\n\n\nf, loss = _closure()\n"
    )


def _layouts(
    args: list[tuple[str, ArgSpec]], draw: Callable[[st.SearchStrategy[Any]], Any]
) -> tuple[tuple[str, str], ...]:
    """About one array argument in four is passed in another layout than C order."""
    layouts = []
    for name, spec in args:
        shape = complex_shape(spec) if is_complex(spec) else spec
        if isinstance(shape, str) or draw(st.integers(0, 3)) != 0:
            continue
        fitting = [key for key, ndim in LAYOUT_MIN_NDIM.items() if len(shape) >= ndim]
        if fitting:
            layouts.append((name, draw(st.sampled_from(fitting))))
    return tuple(layouts)


def _result(generator: _Generator, draw: Callable[[st.SearchStrategy[Any]], Any]) -> Expr:
    """What ``f`` returns: a view an idiom made, as it is, or an expression (mostly of a
    local's shape, so that the statements are not all dead) that reads what the idioms
    computed."""
    if generator.returns and draw(st.integers(0, 2)) == 0:
        name, shape = draw(st.sampled_from(generator.returns))
        if generator.lookup(name) is not None or shape not in SHAPES:
            return Expr(name, shape, 1.0, False, name)
    local_shapes = [v.shape for v in generator.locals_of()]
    shapes = local_shapes if local_shapes and draw(st.integers(0, 2)) else list(SHAPES)
    result = generator.expr(draw(st.sampled_from(shapes)), MAX_DEPTH)
    for name in generator.must_use:
        used = generator.lookup(name)
        if used is None or name in result.text:
            continue
        term = f"np.tanh({name})"
        if not _broadcasts_to(used.shape, result.shape):
            term = f"np.tanh(np.sum({name}))"
        result = Expr(f"({result.text} + {term})", result.shape, result.bound + 1.0)
    return result


def _broadcasts_to(shape: Shape, target: Shape) -> bool:
    try:
        return np.broadcast_shapes(shape, target) == target
    except ValueError:
        return False
