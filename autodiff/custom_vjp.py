"""``ad.custom_vjp``: a function whose gradient the user writes, its body opaque Python.

Note [Custom vjp]
``@ad.custom_vjp`` wraps a function ``f``; ``f.defvjp(fwd, bwd)`` gives its derivative as
JAX's does: ``fwd(*args) -> (out, residuals)`` and ``bwd(residuals, g) -> cotangents``, one
per argument (a pytree like it, None for no gradient). Called from plain Python it is ``f``.
Called from a scripted function it is one node, ``prim::CustomVjp(%fn, args...)``, whose
``%fn`` names ``f`` and its line (Note [Opaque calls] in `frontend.opaque_calls`); the
compiler never reads ``f``, ``fwd`` or ``bwd``, which may use any library. Its result's type
is declared or found by one run (Note [Result types of opaque functions] in
`autodiff.opaque`).

Differentiation (`differentiate_custom_vjp`) replaces the node by
``%out, %residuals = prim::CustomVjpFwd(%fn, args...)``, which ``f`` (the forward graph)
runs instead of ``f``, and gives the reverse program a GradOf holding
``prim::CustomVjpBwd(%fn, %residuals, %dout)``, whose results are the arguments' gradients.
The residuals are one Python value that ``f`` hands to ``df`` as it is (saved per iteration
in a loop, read back in a branch's reverse as any forward value is), so they may be any
pytree or object. ``CustomVjpFwd`` also keeps the arguments' shapes and dtypes beside them,
so that ``bwd``'s cotangents are checked (their number, structure and shapes; a None is
zeros) and cast to the arguments' dtypes, and a wrong one is refused naming ``bwd`` and the
caller's line. The two nodes have no derivative of their own: a second derivative through
them is refused where the function is called.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from autodiff.errors import DifferentiationError
from autodiff.gradient import gradient_name
from autodiff.opaque import Entry, function_label, register, structure_key
from autodiff.scripted_vjp import differentiate_scripted
from frontend.trees import as_tuples
from ir.analysis import constant_value
from ir.graph import Node
from ir.ops.opaque import lookup
from ir.source import SourceRange
from ir.types import ANY, Type


class CustomVjpError(ValueError):
    """An opaque function (a custom_vjp's ``fwd`` or ``bwd``, a callback) returned what its
    contract does not allow. Raised while its node runs, which reports it as an
    `ir.errors.InterpreterError` at the caller's line."""


def custom_vjp(
    fun: Callable[..., Any] | None = None, *, result_shape: Any = None, scripted: bool = False
) -> CustomVjpFunction | Callable[[Callable[..., Any]], CustomVjpFunction]:
    """Give ``fun`` a gradient written by hand, ``fun.defvjp(fwd, bwd)`` (Note [Custom vjp]);
    ``@ad.custom_vjp(result_shape=ad.ShapeDtype(shape, dtype))`` declares its result's shape
    instead of the compiler finding it by running ``fun`` once (Note [Result types of opaque
    functions] in `autodiff.opaque`); a pytree of them declares a tuple or dict result.
    ``scripted=True`` says that ``fwd`` and ``bwd`` are written in the language: they are
    compiled, and second derivatives go through them (Note [Scripted custom vjp] in
    `autodiff.scripted_vjp`).

    >>> @ad.custom_vjp
    ... def fixed_point(W, b):                  # opaque: any Python, any library
    ...     x = np.zeros(len(b))
    ...     for _ in range(100):
    ...         x = np.tanh(W @ x + b)
    ...     return x
    >>> def fwd(W, b):
    ...     x = fixed_point(W, b)
    ...     return x, (W, x)                    # the result, and what bwd needs
    >>> def bwd(residuals, g):
    ...     W, x = residuals
    ...     u = np.linalg.solve((np.eye(len(x)) - (1 - x**2)[:, None] * W).T, g)
    ...     db = (1 - x**2) * u
    ...     return np.outer(db, x), db          # one cotangent per argument
    >>> fixed_point.defvjp(fwd, bwd)
    >>> ad.grad(lambda W, b: np.sum(fixed_point(W, b) ** 2))(W, b)
    """
    if fun is None:
        return lambda f: CustomVjpFunction(f, result_shape=result_shape, scripted=scripted)
    return CustomVjpFunction(fun, result_shape=result_shape, scripted=scripted)


class CustomVjpFunction:
    """What ``ad.custom_vjp`` returns: ``fun``, called as one node from scripted code, with
    the gradient ``defvjp`` gives it."""

    __autodiff_static__ = 0
    # Why a second derivative through it is refused, when its rule says more than the
    # operators' generic refusal (`refusal_of_second_order`).
    second_order_refusal: str | None = None

    def __init__(
        self, fun: Callable[..., Any], *, result_shape: Any = None, scripted: bool = False
    ) -> None:
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.result_shape = result_shape
        self.scripted = scripted
        self.fwd: Callable[..., Any] | None = None
        self.bwd: Callable[..., Any] | None = None
        self._keys: dict[Any, str] = {}

    def defvjp(self, fwd: Callable[..., Any], bwd: Callable[..., Any]) -> None:
        """Give the derivative: ``fwd(*args) -> (out, residuals)``, ``bwd(residuals, g) ->
        tuple of cotangents`` (None for an argument without one)."""
        if not callable(fwd) or not callable(bwd):
            raise TypeError("defvjp(fwd, bwd) takes two functions")
        self.fwd, self.bwd = fwd, bwd

    def __call__(self, *args: Any) -> Any:
        return self.fun(*args)

    @functools.cached_property
    def __autodiff_twin__(self) -> Callable[..., Any]:
        """A function to compile for this one, given to ``ad.grad``, ``ad.vjp`` or
        ``ad.script``: a call of it, with as many parameters as ``fun`` has."""
        return _calling(self, _arity(self.fun))

    def __autodiff_opaque__(
        self, static: Sequence[Any], types: Sequence[Type], where: SourceRange
    ) -> tuple[str, str, Type]:
        """The node that calls this function on arguments of ``types`` (Note [Opaque calls] in
        `frontend.opaque_calls`)."""
        structure = structure_key(types)
        key = self._keys.get(structure)
        if key is None:
            entry = _CustomVjpEntry(self, types)
            key = self._keys[structure] = register(function_label(self.fun), entry)
        return "prim::CustomVjp", key, _entry(key).result

    def rule(self, which: str) -> Callable[..., Any]:
        """``fwd`` or ``bwd`` (`differentiate_custom_vjp` has checked that they are given)."""
        found = self.fwd if which == "fwd" else self.bwd
        assert found is not None
        return found


def _arity(fun: Callable[..., Any]) -> int:
    parameters = inspect.signature(fun).parameters.values()
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in parameters):
        return -1
    return len(parameters)


# One function per number of parameters, so that ``argnums`` counts them as ``fun``'s.
def _calling(custom: CustomVjpFunction, arity: int) -> Callable[..., Any]:
    def call_1(a: Any) -> Any:
        return custom(a)

    def call_2(a: Any, b: Any) -> Any:
        return custom(a, b)

    def call_3(a: Any, b: Any, c: Any) -> Any:
        return custom(a, b, c)

    def call_4(a: Any, b: Any, c: Any, d: Any) -> Any:
        return custom(a, b, c, d)

    calls: dict[int, Callable[..., Any]] = {1: call_1, 2: call_2, 3: call_3, 4: call_4}
    if arity not in calls:
        takes = "*args" if arity < 0 else f"{arity} parameters"
        raise TypeError(
            f"{function_label(custom.fun)} takes {takes}: differentiate a function that calls "
            "it instead"
        )
    return calls[arity]


def _entry(key: str) -> _CustomVjpEntry:
    found = lookup(key)
    assert isinstance(found, _CustomVjpEntry)
    return found


class _Residuals:
    """What ``CustomVjpFwd`` hands ``CustomVjpBwd``: the user's residuals, and the arguments'
    shapes and dtypes to check the cotangents against."""

    __slots__ = ("specs", "user")

    def __init__(self, user: Any, specs: tuple[Any, ...]) -> None:
        self.user = user
        self.specs = specs


def _spec(value: Any) -> Any:
    """The structure, shapes and dtypes of one argument as the node receives it (tuples for
    containers)."""
    if isinstance(value, tuple):
        return tuple(_spec(item) for item in value)
    if isinstance(value, np.ndarray | np.generic):
        return (np.shape(value), value.dtype, type(value))
    return (None, None, type(value))


class _CustomVjpEntry(Entry):
    def __init__(self, owner: CustomVjpFunction, arg_types: Sequence[Type]) -> None:
        super().__init__(owner.fun, arg_types, owner.result_shape)
        self.owner = owner

    def forward(self, *args: Any) -> tuple[Any, Any]:
        fwd = self.owner.rule("fwd")
        result = fwd(*self.arguments(args))
        if not isinstance(result, tuple) or len(result) != 2:
            raise CustomVjpError(
                f"{function_label(fwd)} (the fwd of {function_label(self.fn)}) must return a "
                f"pair (out, residuals), not {type(result).__name__}"
            )
        out, residuals = result
        return as_tuples(out, self.declared) if self.declared else out, _Residuals(
            residuals, tuple(_spec(arg) for arg in args)
        )

    def backward(self, residuals: Any, grad: Any) -> Sequence[Any]:
        bwd = self.owner.rule("bwd")
        assert isinstance(residuals, _Residuals)
        specs = residuals.specs
        cotangents = bwd(residuals.user, self._output_gradient(grad))
        label = f"{function_label(bwd)} (the bwd of {function_label(self.fn)})"
        if not isinstance(cotangents, tuple | list) or len(cotangents) != len(specs):
            got = (
                f"{len(cotangents)} cotangents"
                if isinstance(cotangents, tuple | list)
                else f"a {type(cotangents).__name__}"
            )
            raise CustomVjpError(
                f"{label} returned {got}; it returns a tuple of {len(specs)}, one per argument "
                "of the function (None for no gradient)"
            )
        return [
            _cotangent(label, index, as_tuples(ct, ty), spec)
            for index, (ct, ty, spec) in enumerate(
                zip(cotangents, self.arg_types, specs, strict=True)
            )
        ]

    def _output_gradient(self, grad: Any) -> Any:
        from frontend.trees import rebuild

        return grad if self.declared is None else rebuild(grad, self.declared)


def _cotangent(label: str, index: int, given: Any, spec: Any) -> Any:
    """``given`` checked against argument ``index``'s ``spec``: zeros for None, cast to the
    argument's dtype; a mismatch raises, naming ``bwd``."""
    if _is_container_spec(spec):
        if given is None:
            return tuple(_cotangent(label, index, None, item) for item in spec)
        if not isinstance(given, tuple) or len(given) != len(spec):
            raise CustomVjpError(
                f"{label} returned a cotangent for argument {index} that is not structured "
                "like the argument"
            )
        return tuple(_cotangent(label, index, g, item) for g, item in zip(given, spec, strict=True))
    shape, dtype, kind = spec
    if dtype is None:  # a Python number or string: a float's gradient is a float
        if kind is float:
            return 0.0 if given is None else float(np.real(given))
        return None
    if np.dtype(dtype).kind not in "fc":
        return None
    if given is None:
        return np.zeros(shape, dtype)
    array = np.asarray(given)
    if array.shape != shape:
        raise CustomVjpError(
            f"{label} returned a cotangent of shape {array.shape} for argument {index}, "
            f"of shape {shape}"
        )
    if np.dtype(dtype).kind == "f" and array.dtype.kind == "c":
        array = array.real
    return array.astype(dtype, copy=False)


def _is_container_spec(spec: Any) -> bool:
    return isinstance(spec, tuple) and not (len(spec) == 3 and isinstance(spec[2], type))


def refusal_of_second_order(node: Node) -> str | None:
    """What the custom function a ``prim::CustomVjpFwd``/``CustomVjpBwd`` node runs says of
    its second derivative, if it says anything."""
    found = lookup(constant_value(node.inputs[0])) if node.inputs else None
    return found.owner.second_order_refusal if isinstance(found, _CustomVjpEntry) else None


def differentiate_custom_vjp(builder: Any, node: Node) -> None:
    """Replace ``prim::CustomVjp`` by its fwd in the forward block and add its bwd to the
    reverse (Note [Custom vjp]). ``builder`` is `autodiff.differentiate.ReverseBuilder`."""
    graph = builder.graph
    fn, *args = node.inputs
    where = node.source_range
    entry = _entry(constant_value(fn))
    owner = entry.owner
    if owner.fwd is None or owner.bwd is None:
        raise DifferentiationError(
            f"{function_label(owner.fun)} is a custom_vjp function without a derivative: call "
            "its defvjp(fwd, bwd) before differentiating it",
            where,
        )
    if owner.scripted:
        differentiate_scripted(builder, node, owner, entry.arg_types)
        return
    with graph.inserting_after(node):
        fwd = graph.insert(
            "prim::CustomVjpFwd", list(node.inputs), [node.output.ty, ANY], source_range=where
        )
    out, residuals = fwd.outputs
    out.name_hint = node.output.name_hint
    residuals.name_hint = "residuals"
    grad = builder.get_grad(node.output)
    node.output.replace_all_uses_with(out)
    # The destroyed result's gradient: a loop's reverse looked it up again later and made
    # zeros reading the destroyed value, which the verifier refused.
    builder.grad_map.pop(node.output)
    node.destroy()
    grad_of = graph.create("prim::GradOf", [grad], (), {"name": "prim::CustomVjp"}, num_blocks=1)
    grad_of.source_range = where
    builder.block.append_node(grad_of)
    body = grad_of.blocks[0]
    with graph.inserting_at_end(body):
        bwd = graph.insert(
            "prim::CustomVjpBwd",
            [fn, residuals, grad],
            [arg.ty for arg in args],
            source_range=where and where.of_gradient("prim::CustomVjp"),
        )
    for arg, cotangent in zip(args, bwd.outputs, strict=True):
        if arg in builder.needs:
            body.register_output(cotangent)
            builder.set_grad(arg, grad_of.add_output(arg.ty, gradient_name(arg)))
