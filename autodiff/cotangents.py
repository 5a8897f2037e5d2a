"""``vjp``: a function's result, and the map from a cotangent of that result to the gradients
of its arguments (JAX's ``vjp``); `jacobian` and `gradcheck` are built on it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import optree

from autodiff.errors import DifferentiationError
from autodiff.grad import _gradients
from autodiff.gradient_call import describe
from autodiff.pytrees import argument_parts
from autodiff.script import scripted_for
from autodiff.tracebacks import api_boundary, shorten
from autodiff.unit import compiled_gradient
from ir.errors import AutodiffError
from ir.ops.gradients.prim import zeros_like_value
from passes.requires_grad import can_hold_gradient


def _shape_of(value: Any) -> tuple[int, ...]:
    return tuple(np.shape(value))


def _checked_cotangent(seed: Any, output: Any, where: str) -> Any:
    """The cotangent ``seed`` of ``output`` (``where`` names it: "the result of f()"), checked
    to be shaped like it. A result that is a list or tuple as a value (``np.split``'s pieces)
    takes a list or tuple of one cotangent per piece, each of the piece's shape or None for
    zeros, as JAX takes a pytree; ``df`` gets it as the kind of sequence the result is."""
    if seed is None:
        return None
    if isinstance(output, list | tuple):
        if not (isinstance(seed, list | tuple) and len(seed) == len(output)):
            raise DifferentiationError(
                f"the cotangent of {where}, a {type(output).__name__} of {len(output)}, must "
                f"be a list or tuple of {len(output)}, but it is {describe(seed)}"
            )
        return type(output)(
            zeros_like_value(part)
            if part_seed is None
            else _checked_cotangent(part_seed, part, f"piece {index} of {where}")
            for index, (part_seed, part) in enumerate(zip(seed, output, strict=True))
        )
    if isinstance(seed, list | tuple) or _shape_of(seed) != _shape_of(output):
        raise DifferentiationError(
            f"the cotangent of {where} has {describe(seed)}, but {where} has shape "
            f"{_shape_of(output)}"
        )
    return seed


@api_boundary
def vjp(fn: Callable[..., Any], *args: Any) -> tuple[Any, Callable[[Any], tuple[Any, ...]]]:
    """Run ``fn(*args)`` and return its result and a function mapping a cotangent of that
    result to one gradient per argument passed (None for arguments that have no gradient):
    parameters left to their defaults get none, as in JAX.

    >>> out, vjp_fn = ad.vjp(f, x, y)
    >>> dx, dy = vjp_fn(np.ones_like(out))
    """
    return vjp_of(fn, args, None)


def vjp_of(
    fn: Callable[..., Any], args: Sequence[Any], only: Sequence[int] | None
) -> tuple[Any, Callable[[Any], tuple[Any, ...]]]:
    """`vjp`, with gradients for the arguments at the positions ``only`` (all when None) and
    None for the others: a Jacobian w.r.t. some arguments differentiates w.r.t. those alone,
    so that an argument a formula gives no gradient (Note [No gradient is not a zero gradient]
    in `autodiff.differentiate`) is refused only when its gradient is asked for."""
    scripted = scripted_for(fn)
    if scripted.guarded and scripted.stale():  # Note [Values read once] in frontend.compile
        scripted.refresh()
    values, spec = scripted.runtime_call(args, {})
    types = scripted.unit_for(values, spec)[1].types
    # Per argument passed, the positions of its leaves: Note [Pytree arguments]
    if spec is None:
        ranges = [range(i, i + 1) for i in range(len(args))]
    else:  # past *args, an argument is an item of it (Note [Variadic parameters])
        star = scripted.star if scripted.star is not None else len(args)
        positions = [i if i < star else (star, i - star) for i in range(len(args))]
        parts = argument_parts(spec, positions)
        children = [child for child, _ in parts]
        ranges = [part for _, part in parts]
    passed = [
        i for argument, part in enumerate(ranges) if only is None or argument in only for i in part
    ]
    wrt = tuple(i for i in passed if can_hold_gradient(types[i]))
    _, compiled = compiled_gradient(scripted, values, wrt, spec=spec)
    outputs, saved = compiled.forward(values)
    out = compiled.result(outputs)

    def vjp_fn(cotangent: Any) -> tuple[Any, ...]:
        try:  # a boundary: Note [Traceback filtering] in autodiff.tracebacks
            seeds = [
                _checked_cotangent(seed, output, f"the result of {scripted.qualname}()")
                for seed, output in zip(
                    compiled.flatten(cotangent, scripted.qualname), outputs, strict=True
                )
            ]
            grads = _gradients(compiled.runtime, saved, seeds, values, wrt, retain=True)
            by_position = dict(zip(wrt, grads, strict=True))
            if spec is None:
                return tuple(by_position.get(index) for index in range(len(args)))
            return tuple(
                None  # no gradient: Note [Strings known while compiling] in frontend.trees
                if child.type is str
                else optree.tree_unflatten(child, [by_position.get(i) for i in part])
                for child, part in zip(children, ranges, strict=True)
            )

        except AutodiffError as error:
            shorten(error)
            raise

    return out, vjp_fn
