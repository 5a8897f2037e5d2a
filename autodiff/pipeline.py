"""The compilation pipeline from a parsed graph to a `Gradient`, one named stage at a time.

    parsed ─specialise─▶ typed ─add_reverse─▶ grad ─optimise─▶ optimized ─lambda-lift─▶ f, df

Every stage is a graph that `autodiff dump --stage` can print.

# Note [Compile-time cost]
# Compiling must stay linear in the function's size and cheap per operation (issue #8: a
# 5,000-line function in well under 3 s). Three choices keep it so. The passes verify once per
# pipeline rather than after every pass (Note [Verify between passes] in `passes.registry`; the
# tests verify after every pass). The intermediate stages are copied only when someone will
# print them (``keep_stages``): the gradient compiled for a call optimises and lifts one graph
# in place. And each stage runs with Python's cycle collector paused (`gc_paused`): a graph is
# a web of reference cycles of ten or so small objects per node, and a collector left on scans
# every live one again and again as the heap grows, a third of the time for a long function;
# paused, what the compile dropped is collected once, later.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from autodiff.differentiate import ReverseDetails, build_reverse, route_forward_reads
from autodiff.gradient import Gradient
from autodiff.lambda_lift import lambda_lift
from autodiff.specialize import typed_graph
from autodiff.taps import prepare_taps
from ir.analysis import REVERSE
from ir.collector import gc_paused
from ir.graph import Graph, Value
from ir.types import ANY, ListType, TensorType, TupleType, Type
from passes.registry import run_passes
from passes.shape_propagation import propagate_shapes

# Note [Optimisation order]
# Sizes are folded before CSE, so that equal sizes collapse; CSE runs before constants are
# lifted into the reverse block (it would merge each lifted copy back into the forward constant
# it came from, since the reverse block is nested in the forward one) and before DCE, so that
# duplicate captures collapse into one. AutogradZero specialisation runs after the reverse
# program is typed, so that the zeros it materialises have known shapes. Loop invariants are
# hoisted before differentiating, so that a reverse loop reads them once instead of a tape
# keeping them per iteration (Note [Loop tapes] in `autodiff.control_flow`).
REVERSE_OPTIMISATION = (
    "constant-propagation",
    "fold-sizes",
    "constant-propagation",  # again: sizes fold-sizes made constant feed arithmetic (mean's scale)
    "stack-tapes",
    "share-carried-tapes",
    "specialize-autograd-zero",
    "sink-unreduce",
    "simplify-arithmetic",
    "accumulate-slices",
    "cse",
    "lift-constants",
    "dedup-size-captures",
    "dce",
)


OutputTree = tuple["OutputTree", ...] | list["OutputTree"] | None
"""How a graph's results nest in sequences: None for one value, a tuple with one tree per
element for a tuple built by prim::TupleConstruct, a list for such a tuple that is a list in
the plain function (Note [Lists in the output tree])."""

# Note [Lists in the output tree]
# ``np.split`` returns a list of pieces. Specialisation types them as a tuple of known length,
# and lower-tuples rebuilds a tuple that flowed through a prim::If or prim::Loop with a
# prim::TupleConstruct, so the typed graph no longer tells a list from a tuple. The parsed
# graph still does: its results are typed ``Tensor[]`` where the function returns a list.
# `output_tree` reads those types next to the typed graph's structure, so that the result is
# rebuilt as the list NumPy gives, and a cotangent may be given as either kind.


@dataclass(frozen=True, slots=True)
class Stages:
    """Each stage's graph (copies: later stages never mutate earlier ones) and the result.
    ``grad`` and ``optimized`` are there when the stages were kept (``keep_stages``)."""

    typed: Graph
    gradient: Gradient
    kept: tuple[Graph, Graph] | None = None  # grad, optimized

    @property
    def grad(self) -> Graph:
        """The typed graph with its reverse program (GradOf blocks)."""
        return self._kept()[0]

    @property
    def optimized(self) -> Graph:
        """The grad stage after the reverse optimisations."""
        return self._kept()[1]

    def _kept(self) -> tuple[Graph, Graph]:
        if self.kept is None:
            raise ValueError("the grad and optimized stages were not kept: pass keep_stages=True")
        return self.kept


def compile_gradient(graph: Graph, input_types: Sequence[Type], wrt: Sequence[int]) -> Stages:
    """Specialise, differentiate w.r.t. the inputs at positions ``wrt``, optimise, lift;
    every stage is kept."""
    return differentiate_typed(typed_graph(graph, input_types), wrt, keep_stages=True)


def differentiate_typed(
    typed: Graph,
    wrt: Sequence[int],
    taps: frozenset[str] = frozenset(),
    *,
    keep_stages: bool = False,
) -> Stages:
    """Differentiate a typed graph w.r.t. its inputs at positions ``wrt``, optimise, lift.
    A function that returns tuples gets one output per element, each with its own vjp
    (`flatten_outputs`). The ``taps`` named there have their gradients handed to hooks as
    ``df`` runs; other taps are dropped (Note [Taps] in `autodiff.taps`). ``typed`` is not
    changed; the ``grad`` and ``optimized`` stages are copied for the result only when
    ``keep_stages`` (Note [Compile-time cost])."""
    with gc_paused():
        grad = typed.copy()
        flatten_outputs(grad)
        prepare_taps(grad, taps)
        add_reverse(grad, [grad.inputs[i] for i in wrt])
        optimized = grad.copy() if keep_stages else grad
        run_passes(optimized, [(name, {}) for name in REVERSE_OPTIMISATION])
        kept = (grad, optimized) if keep_stages else None
        gradient = lambda_lift(optimized.copy() if keep_stages else optimized)
        _name_gradients(gradient)
    return Stages(typed, gradient, kept)


def add_reverse(
    graph: Graph, wrt: list[Value], *, materialise_zeros: bool = False
) -> ReverseDetails:
    """The ``grad`` stage, in place: the reverse program of typed ``graph`` w.r.t. ``wrt``
    (`autodiff.differentiate.build_reverse`, which see for ``materialise_zeros``), typed, with
    the forward values it reads routed out of branches and loop bodies (Note [Control-flow
    derivatives] in `autodiff.control_flow`).

    Given:   graph(%x : Double(3)): %y = aten::tanh(%x); return (%y)
    Execute: add_reverse(graph, [%x])
    Result:  ... %dx : Double(3) = prim::Reverse[output_vjps=[0], input_grads=[0]]() ...
    """
    details = build_reverse(graph, wrt, materialise_zeros=materialise_zeros)
    # Typed before routing, so that the sizes the types fix fold instead of being routed.
    propagate_shapes(graph)
    if route_forward_reads(details):
        propagate_shapes(graph)  # the values routed out, their tapes and the reads of them
    return details


def differentiable_inputs(graph: Graph) -> list[Value]:
    """The inputs to differentiate: those typed ``requires_grad=1``; when no input says either
    way, every input that can hold a gradient."""
    flagged = [
        v for v in graph.inputs if isinstance(v.ty, TensorType) and v.ty.requires_grad is not None
    ]
    if flagged:
        return [v for v in flagged if isinstance(v.ty, TensorType) and v.ty.requires_grad]
    return list(graph.inputs)


def differentiate_graph(graph: Graph) -> bool:
    """Add the reverse program w.r.t. `differentiable_inputs` (`add_reverse` as a pass, so that
    `autodiff opt` shows it on IR text). True if there was anything to differentiate.

    Given:   graph(%x : Double(3, requires_grad=1)): %y = aten::sin(%x); return (%y)
    Execute: differentiate_graph(graph)
    Result:  ... %dx = prim::Reverse[output_vjps=[0], input_grads=[0]]() ...
    """
    if any(node.kind == REVERSE for node in graph.nodes()):
        return False
    details = add_reverse(graph, differentiable_inputs(graph))
    return bool(details.df_output_vjps)


def _name_gradients(gradient: Gradient) -> None:
    """Name each result of ``df`` after the input it is the gradient of (``%dw1``)."""
    (packed,) = gradient.df.outputs
    for result, index in zip(packed.node.inputs, gradient.df_output_vjps, strict=True):
        hint = gradient.f.inputs[index].name_hint
        if hint and result.node.kind != "prim::Param":
            result.name_hint = f"d{hint}"


def output_tree(graph: Graph, declared: Sequence[Type] | None = None) -> OutputTree:
    """How the result of ``graph`` (one output, or a tuple of its several) nests in sequences;
    ``declared`` are the types of the parsed graph's results, which say where a tuple of the
    typed graph is a list (Note [Lists in the output tree]).

    >>> output_tree(graph_of("return loss, (a, b)"))
    (None, (None, None))
    """

    def tree(value: Value, declared: Type) -> OutputTree:
        if value.node.kind != "prim::TupleConstruct":
            return None
        elements = value.node.inputs
        if isinstance(declared, ListType):
            return [tree(element, declared.elem) for element in elements]
        if isinstance(declared, TupleType) and len(declared.elems) == len(elements):
            return tuple(tree(e, d) for e, d in zip(elements, declared.elems, strict=True))
        return tuple(tree(element, ANY) for element in elements)

    types = list(declared) if declared is not None else [ANY] * len(graph.outputs)
    if len(graph.outputs) != len(types):
        types = [ANY] * len(graph.outputs)
    if len(graph.outputs) == 1:
        return tree(graph.outputs[0], types[0])
    return tuple(tree(output, ty) for output, ty in zip(graph.outputs, types, strict=True))


def flatten_outputs(graph: Graph) -> bool:
    """Return the leaves of `output_tree` in order instead of the tuples that hold them, so
    that each has its own vjp. Returns True if changed.

    Given:   %t = prim::TupleConstruct(%loss, %aux); return (%t)
    Execute: flatten_outputs(graph)
    Result:  return (%loss, %aux)
    """
    leaves: list[Value] = []

    def collect(value: Value) -> None:
        if value.node.kind == "prim::TupleConstruct":
            for element in value.node.inputs:
                collect(element)
        else:
            leaves.append(value)

    for output in graph.outputs:
        collect(output)
    if leaves == graph.outputs:
        return False
    while graph.outputs:
        graph.block.erase_output(0)
    for leaf in leaves:
        graph.register_output(leaf)
    return True
