"""Compilation units: what one scripted function compiles for one call signature. The gradient
call that ``grad`` and ``value_and_grad`` run for a unit is `autodiff.gradient_call`'s.

# Note [Compilation units]
# A ScriptFunction keeps one `CompilationUnit` per signature key (`signature_key`: kind, dtype,
# shape and strides per argument; not the values of Python numbers) in one bounded cache,
# `ScriptFunction.cache` (Note [Cache bounds] in `autodiff.cache`). The unit holds the
# arguments' types and layouts, worked out once, and builds lazily what calls with that
# signature need, each from the one specialisation pipeline (Note [One specialisation
# pipeline] in `autodiff.specialize`):
#
# - ``executable``: the plain call's compiled graph;
# - ``gradients``: a `CompiledFunction` per (wrt, taps, seeded): the `Gradient` with its one
#   compiled ``f`` and one compiled ``df`` (`CompiledGradient`), ``df`` owning ``f``'s
#   private temporaries (Note [Owned temporaries] in `autodiff.runtime`) and, when
#   ``seeded``, with the loss's seed folded in (Note [Seeded df] there);
# - ``calls``: per way of calling a gradient (argnums, has_aux, with_value), the
#   `GradientCall` that runs it (Note [Gradient calls] in `autodiff.gradient_call`).
#
# A unit enters the cache once something compiled for it succeeded, so an error leaves
# nothing behind for the next call to trip on; evicting it drops all it holds at once.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from autodiff.backend_calls import backend_kernels
from autodiff.errors import DifferentiationError
from autodiff.gradient_call import GradientCall, describe, loss_seed
from autodiff.pipeline import OutputTree, differentiate_typed, output_tree
from autodiff.pytrees import PyTreeSpec
from autodiff.runtime import CompiledGradient, Saved
from autodiff.specialize import typed_graph
from autodiff.taps import check_names, repeated_names, tap_sites
from autodiff.tiering import NativeTier
from frontend.trees import as_tuples, rebuild
from ir.codegen import Runnable
from ir.types import TensorType, Type
from passes.requires_grad import can_hold_gradient

if TYPE_CHECKING:
    from autodiff.script import ScriptFunction
    from ir.backends import Backend

GradientKey = tuple[tuple[int, ...], frozenset[str], bool]
"""What a compiled gradient of a unit is for: (wrt, taps, seeded)."""


class CompilationUnit:
    """What a function compiles for one call signature. See Note [Compilation units].

    >>> unit = scripted.cache[signature_key([x, y])]
    >>> unit.types, unit.executable, unit.gradients
    """

    __slots__ = (
        "backend",
        "calls",
        "executable",
        "gradients",
        "names",
        "native",
        "number_inputs",
        "parameters",
        "rebuild",
        "spec",
        "strided_inputs",
        "types",
    )

    def __init__(
        self,
        types: list[Type],
        number_inputs: str,
        strided_inputs: str,
        parameters: Sequence[Type] | None = None,
        spec: PyTreeSpec | None = None,
    ) -> None:
        self.types = types
        """One per graph input: per argument, or per leaf of container arguments, then per
        global array read."""
        self.parameters = parameters
        """With container arguments, the parameters' types (`Tree`s among them), else None:
        Note [Pytree arguments] in `autodiff.pytrees`."""
        self.spec = spec
        """With container arguments, the structure of the parameters, else None."""
        self.names: list[str] = []
        """A name per graph input, for messages (``params[0]['W']``)."""
        self.rebuild: Type | None = None
        """The result's `Tree` when it holds dicts, lists or namedtuples to rebuild."""
        self.number_inputs = number_inputs
        """The positions of the NumPy scalars (`autodiff.specialize.numpy_scalar_positions`)."""
        self.strided_inputs = strided_inputs
        """The arrays not C-contiguous, with strides (`autodiff.specialize.strided_inputs`)."""
        self.executable: Runnable | None = None
        self.native: NativeTier | None = None
        """The plain call's graph on the native tier, once a call asked (Note [Tiering])."""
        self.gradients: dict[GradientKey, CompiledFunction] = {}
        self.calls: dict[Hashable, GradientCall] = {}
        self.backend: Backend | None = None
        """The library the arguments' arrays are from, None for NumPy (Note [Array backends]
        in `ir.backends`)."""


@dataclass(frozen=True, slots=True)
class CompiledFunction:
    """A function's compiled gradient for one call signature. When the function returns
    tuples, the values in them are the gradient's outputs, one vjp each (`flatten_outputs`)."""

    runtime: CompiledGradient
    tree: OutputTree
    repeats: Mapping[str, bool] = field(default_factory=dict)
    """Per retained or hooked tap name, whether it may be computed more than once."""
    rebuild: Type | None = None
    """The result's `Tree` when it holds dicts, lists or namedtuples (`CompilationUnit`)."""
    backend: Backend | None = None
    """The arguments' array library, None for NumPy (Note [Array backends] in `ir.backends`)."""

    def forward(self, values: Sequence[Any]) -> tuple[list[Any], Saved]:
        return self.runtime.forward(values)

    def result(self, outputs: list[Any]) -> Any:
        """The outputs of a forward run nested as the plain function returns them."""
        leaves = iter(outputs)

        def build(tree: OutputTree) -> Any:
            return next(leaves) if tree is None else type(tree)(build(t) for t in tree)

        result = build(self.tree)
        return result if self.rebuild is None else rebuild(result, self.rebuild)

    def flatten(self, cotangent: Any, qualname: str) -> list[Any]:
        """The leaves of a cotangent nested like the result (None stands for zeros)."""
        if self.rebuild is not None:
            cotangent = as_tuples(cotangent, self.rebuild)

        def leaves(tree: OutputTree, part: Any) -> list[Any]:
            if tree is None:
                return [part]
            if part is None:
                return [leaf for t in tree for leaf in leaves(t, None)]
            if not (isinstance(part, tuple | list) and len(part) == len(tree)):
                raise DifferentiationError(
                    f"the cotangent must nest like the result of {qualname}(), which has "
                    f"{describe(tree)} where the cotangent has {describe(part)}"
                )
            return [leaf for t, p in zip(tree, part, strict=True) for leaf in leaves(t, p)]

        return leaves(self.tree, cotangent)


def compiled_gradient(
    scripted: ScriptFunction,
    values: Sequence[Any],
    wrt: tuple[int, ...],
    taps: frozenset[str] = frozenset(),
    *,
    seeded: bool = False,
    spec: PyTreeSpec | None = None,
) -> tuple[CompilationUnit, CompiledFunction]:
    """The unit for these arguments (runtime values) and its gradient w.r.t. the parameters
    ``wrt``, handing the gradients of the ``taps`` named to hooks, with the loss's seed
    folded in when ``seeded`` (Note [Seeded df] in `autodiff.runtime`): compiled on first
    use. ``spec``: the structure of container arguments, whose leaves ``values`` and ``wrt``
    count (Note [Pytree arguments] in `autodiff.pytrees`). See Note [Compilation units]."""
    key, unit = scripted.unit_for(values, spec)
    gradient_key = (wrt, taps, seeded)
    compiled = unit.gradients.get(gradient_key)
    if compiled is None:
        for index in wrt:
            _check_differentiable(scripted, unit, index)
        parsed = scripted.parsed_for(unit.types, unit.strided_inputs, unit.parameters)
        typed = typed_graph(parsed, unit.types, unit.number_inputs, unit.strided_inputs)
        sites = tap_sites(typed) if taps else {}
        check_names(scripted.qualname, sites, sorted(taps))
        gradient = differentiate_typed(typed, wrt, taps).gradient
        backend = unit.backend
        runtime = (
            CompiledGradient(gradient, values, seed=loss_seed(gradient) if seeded else None)
            if backend is None
            else CompiledGradient(
                gradient, ops=backend_kernels(gradient, backend, values), backend=backend
            )
        )
        compiled = CompiledFunction(
            runtime,
            output_tree(typed, [output.ty for output in parsed.outputs]),
            repeated_names(sites, taps),
            unit.rebuild,
            backend,
        )
        unit.gradients[gradient_key] = compiled
        scripted.keep(key, unit, f"the gradient of {scripted.qualname}()")
    return unit, compiled


def _check_differentiable(scripted: ScriptFunction, unit: CompilationUnit, index: int) -> None:
    ty = unit.types[index]
    if not can_hold_gradient(ty) or (isinstance(ty, TensorType) and ty.dtype is None):
        name = unit.names[index] if unit.names else list(scripted.signature.parameters)[index]
        raise DifferentiationError(
            f"cannot differentiate {scripted.qualname}() with respect to argument "
            f"'{name}' of type {ty}: only floating-point arrays and Python floats "
            "have gradients"
        )
