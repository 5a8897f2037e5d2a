"""Derivative rules users write themselves, for the fuzzer: ``ad.custom_vjp`` functions
(issue 20) defined at module level and called from ``f``, once or in a loop.

Each rule is the true derivative of its function, so the ``gradients`` property checks the
whole path (the node's forward, the residuals handed from ``f`` to ``df``, per iteration in a
loop, the cotangents checked and cast) against central differences. The forms vary what
went wrong before in hand-written rules elsewhere: residuals as a tuple, a dict or one array;
two arguments, one broadcast against the other (``bwd`` must give the cotangent in the
argument's own shape); ``result_shape`` declared instead of found by a run; ``scripted=True``,
whose second derivatives go through ``fwd`` and ``bwd``. An opaque rule's second derivative
is refused, located, and `tests.property.checks.check_nested` accepts only that refusal.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tests.property.call_idioms import NONEMPTY, _module, _result
from tests.property.programs import SHAPES
from tests.property.python_idioms import _bounded
from tests.property.python_idioms import block as _block

if TYPE_CHECKING:
    from tests.property.programs import _Generator

# The refusal of a second derivative through an opaque custom_vjp (ir/ops/opaque.py).
OPAQUE_SECOND_ORDER = "of an opaque custom_vjp function has no derivative"


def _import_autodiff(g: _Generator) -> None:
    if "import autodiff as ad" not in g.module_lines:
        g.module_lines.insert(0, "import autodiff as ad")


def _decorator(g: _Generator, shape: tuple[int, ...]) -> str:
    form = g.choose(["plain", "scripted", "declared"])
    if form == "scripted":
        return "@ad.custom_vjp(scripted=True)"
    if form == "declared":
        return f"@ad.custom_vjp(result_shape=ad.ShapeDtype({shape}, np.float64))"
    return "@ad.custom_vjp"


def custom_vjps(g: _Generator) -> None:
    """``@ad.custom_vjp`` functions with ``defvjp(fwd, bwd)``: ``soft(x) = 2 tanh(x)`` (one
    argument) or ``wave(x, w) = x * sin(w)`` with ``w`` maybe broadcast along ``x``'s first
    axis; called once, twice or in a loop."""
    _import_autodiff(g)
    shape = g.choose(NONEMPTY)
    decorator = _decorator(g, shape)
    name = g.fresh("soft" if g.flag() else "wave")
    fwd, bwd = g.fresh("fwd"), g.fresh("bwd")
    residuals = g.choose(["tuple", "dict", "array"])
    if name.startswith("soft"):
        pack = {"tuple": "(y,)", "dict": '{"y": y}', "array": "y"}[residuals]
        unpack = {"tuple": "(y,) = r", "dict": 'y = r["y"]', "array": "y = r"}[residuals]
        _module(
            g,
            f"{decorator}\ndef {name}(x):\n    return 2.0 * np.tanh(x)\n\n\n"
            f"def {fwd}(x):\n    y = np.tanh(x)\n    return 2.0 * y, {pack}\n\n\n"
            f"def {bwd}(r, g):\n    {unpack}\n    return (g * 2.0 * (1.0 - y * y),)\n\n\n"
            f"{name}.defvjp({fwd}, {bwd})",
        )

        def call(v: str) -> str:
            return f"{name}({v})"

        bound = 2.0
    else:
        broadcast = len(shape) == 2 and shape[1:] in SHAPES and g.flag()
        w_shape = shape[1:] if broadcast else shape
        # bwd gives w's cotangent in w's own shape: summed over the broadcast axis.
        dw = "np.sum(g * x * np.cos(w), axis=0)" if broadcast else "g * x * np.cos(w)"
        pack = {"tuple": "(x, w)", "dict": '{"x": x, "w": w}', "array": "np.stack([x, x])"}
        if residuals == "array":
            # one array residual cannot hold w beside x when they differ in shape
            residuals = "tuple"
        unpack = {"tuple": "x, w = r", "dict": 'x, w = r["x"], r["w"]'}[residuals]
        _module(
            g,
            f"{decorator}\ndef {name}(x, w):\n    return x * np.sin(w)\n\n\n"
            f"def {fwd}(x, w):\n    return x * np.sin(w), {pack[residuals]}\n\n\n"
            f"def {bwd}(r, g):\n    {unpack}\n    return g * np.sin(w), {dw}\n\n\n"
            f"{name}.defvjp({fwd}, {bwd})",
        )
        weight = _bounded(g.expr(w_shape, 2)).text

        def call(v: str) -> str:
            return f"{name}({v}, {weight})"

        bound = 1.0
    value = _bounded(g.expr(shape, 2)).text
    form = g.choose(["once", "twice", "loop"])
    if form == "once":
        _result(g, call(value), shape, bound)
    elif form == "twice":
        _result(g, f"{call(value)} + 0.5 * {call(call(value) + ' * 0.5')}", shape, 1.5 * bound)
    else:
        carried = g.fresh("c")
        g.emit(f"{carried} = {value}")
        with _block(g, f"for _ in range({g.choose([2, 3])}):"):
            g.emit(f"{carried} = 0.5 * {call(carried)}")
        _result(g, carried, shape, max(bound * 0.5, 1.0))


RULE_IDIOMS = [
    ("custom_vjps", "@ad.custom_vjp with defvjp(fwd, bwd), once or in a loop", custom_vjps),
]
