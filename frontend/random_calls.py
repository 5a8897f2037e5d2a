"""Random draws in compiled code: ``rng.normal(...)``, ``np.random.choice(a, 3)``,
``rng.shuffle(x)``, and generators made inside the function (``np.random.default_rng(seed)``).

What each becomes is in Note [Random draws], Note [Draws of rows] and Note [Generators made
inside], all in `ir.ops.random`.
"""

from __future__ import annotations

from typing import cast

import numpy as np

from frontend import syntax
from frontend.environment import PyObject
from frontend.errors import ScriptError
from frontend.subscripts import SubscriptEmitter, _Item
from ir.graph import Value
from ir.ops import NOT_CONSTANT
from ir.ops.random import METHODS as DRAW_METHODS
from ir.ops.random import ROW_METHODS
from ir.types import INT, NONE, STR, TensorType

# What a generator (or np.random) may be asked for in compiled code.
RANDOM_METHODS = frozenset({*DRAW_METHODS, "shuffle"})

# Bit generators ``np.random.Generator(...)`` may be built on.
_BIT_GENERATORS: dict[object, str] = {
    getattr(np.random, name): name for name in ("PCG64", "PCG64DXSM", "MT19937", "Philox", "SFC64")
}
# Constructors of a generator, by the kind `prim::MakeGenerator` is given.
_CONSTRUCTORS: dict[object, str] = {
    np.random.default_rng: "default_rng",
    np.random.RandomState: "RandomState",
    np.random.Generator: "Generator",
}


def makes_generator(obj: object) -> bool:
    """Whether calling ``obj`` makes a generator or reseeds the global stream here."""
    return any(obj is known for known in (*_CONSTRUCTORS, *_BIT_GENERATORS, np.random.seed))


class RandomEmitter(SubscriptEmitter):
    def emit_random_method(self, source: Value, method: str, call: syntax.Call) -> Value:
        """``rng.<method>(...)`` of the generator ``source`` (a None constant: np.random's
        global stream)."""
        if method == "shuffle":
            return self.emit_shuffle(source, call)
        params = DRAW_METHODS[method]
        if params is None:  # randn(d0, d1, ...)
            if call.keywords:
                raise ScriptError(
                    f"{method}() takes no keyword arguments", call.range, doc="random-numbers"
                )
            return self.apply_draw(source, method, [self.emit_expr(a) for a in call.args], call)
        args = self.draw_arguments(method, params, call)
        if method not in ("choice", "permutation"):
            return self.apply_draw(source, method, args, call)
        first, rest = args[0], args[1:]
        if first.ty == INT:
            return self.apply_draw(source, method, args, call)
        r = call.range
        if not isinstance(first.ty, TensorType):
            raise ScriptError(
                f"{method}() of a {first.ty} is not supported: pass an int or an array, "
                "as in np.array([...])",
                r,
                doc="random-numbers",
            )
        positions = self.row_positions(source, f"{method}_rows", first, rest, call)
        return self.array_subscript(first, [self.value_item(positions, r)], r)

    def row_positions(
        self, source: Value, method: str, array: Value, rest: list[Value], call: syntax.Call
    ) -> Value:
        """Positions along ``array``'s first axis, drawn as Note [Draws of rows] in
        `ir.ops.random` says."""
        shape = self.apply("aten::shape", [array], call.range)
        return self.apply_draw(source, method, [shape, *rest], call)

    def emit_shuffle(self, source: Value, call: syntax.Call) -> Value:
        """``rng.shuffle(x)``: ``x[:] = x[rng.permutation(len(x))]``, a write of ``x`` in place
        (Note [Draws of rows] in `ir.ops.random`)."""
        r = call.range
        if len(call.args) != 1 or call.keywords:
            raise ScriptError(
                "shuffle() takes one argument here, the array shuffled", r, doc="random-numbers"
            )
        array = self.emit_expr(call.args[0])
        if not isinstance(array.ty, TensorType):
            raise ScriptError(
                f"shuffle() of a {array.ty} is not supported: shuffle an array in place, or "
                "draw a permutation and index with it",
                call.args[0].range,
                doc="random-numbers",
            )
        positions = self.row_positions(source, "permutation_rows", array, [], call)
        shuffled = self.array_subscript(array, [self.value_item(positions, r)], r)
        self.array_store(array, [_Item("slice", r)], shuffled, r)
        return self.constant(None, NONE, r)

    def draw_arguments(
        self, method: str, params: tuple[tuple[str, object], ...], call: syntax.Call
    ) -> list[Value]:
        """The call's arguments by position, in NumPy's order, defaults filled in."""
        r = call.range
        names = [name for name, _ in params]
        if len(call.args) > len(names):
            raise ScriptError(
                f"{method}() takes at most {len(names)} arguments here", r, doc="random-numbers"
            )
        given = dict(zip(names, (self.emit_expr(a) for a in call.args), strict=False))
        for keyword in call.keywords:
            if keyword.name not in names or keyword.name in given:
                raise ScriptError(
                    f"{method}() takes {', '.join(names)} here, not '{keyword.name}'",
                    keyword.range,
                    doc="random-numbers",
                )
            given[keyword.name] = self.emit_expr(keyword.value)
        args = []
        for name, default in params:
            if name in given:
                args.append(given[name])
            elif default is NOT_CONSTANT:
                raise ScriptError(
                    f"{method}() missing its argument '{name}'", r, doc="random-numbers"
                )
            else:
                args.append(cast(Value, self.python_constant(default, r)))
        return args

    def apply_draw(self, source: Value, method: str, args: list[Value], call: syntax.Call) -> Value:
        assert method in DRAW_METHODS or method in ROW_METHODS
        method_value = self.constant(method, STR, call.range)
        return self.apply("prim::Draw", [source, method_value, *args], call.range)

    # ---- generators made inside the function (Note [Generators made inside]) ----------------

    def emit_generator_call(self, obj: object, spelled: str, call: syntax.Call) -> Value:
        r = call.range
        if obj is np.random.seed:
            params = DRAW_METHODS["seed"]
            assert params is not None
            args = self.draw_arguments("seed", params, call)
            self.check_seed(args[0], call)
            return self.apply_draw(self.constant(None, NONE, r), "seed", args, call)
        if obj in _BIT_GENERATORS:
            name = f"np.random.{_BIT_GENERATORS[obj]}"
            raise ScriptError(
                f"{name}() alone is not supported: make the generator with "
                f"np.random.Generator({name}(seed))",
                r,
                doc="random-numbers",
            )
        kind = _CONSTRUCTORS[obj]
        seed_call = call
        if kind == "Generator":
            inner = call.args[0] if len(call.args) == 1 and not call.keywords else None
            bit = self.resolve(inner.func) if isinstance(inner, syntax.Call) else None
            if not isinstance(bit, PyObject) or bit.obj not in _BIT_GENERATORS:
                raise ScriptError(
                    "np.random.Generator(...) is supported of a bit generator made here, as "
                    "in np.random.Generator(np.random.PCG64(seed))",
                    r,
                    doc="random-numbers",
                )
            assert isinstance(inner, syntax.Call)
            kind, seed_call = _BIT_GENERATORS[bit.obj], inner
        args = self.draw_arguments(kind, (("seed", None),), seed_call)
        self.check_seed(args[0], seed_call)
        kind_value = self.constant(kind, STR, r)
        return self.apply("prim::MakeGenerator", [kind_value, args[0]], r)

    @staticmethod
    def check_seed(seed: Value, call: syntax.Call) -> None:
        if seed.ty not in (INT, NONE):
            at = call.args[0].range if call.args else call.range
            raise ScriptError(
                f"a seed must be an int or None here, not {seed.ty}: pass int(seed)",
                at,
                doc="random-numbers",
            )
