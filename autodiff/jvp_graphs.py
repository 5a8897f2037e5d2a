"""Forward mode as a graph: the JVP graph of a function, built by transposing its reverse mode.

# Note [Forward mode by transposition]
# A VJP is linear in its cotangent: ``vjp(x, u) = J(x)^T u``. So the scalar
# ``h(x, u, v) = <vjp(x, u), v> = <u, J(x) v>`` is linear in ``u`` and its gradient with
# respect to ``u`` is the JVP ``J(x) v``, whatever ``u`` is. `jvp_graph` builds exactly that,
# from what the project already has, rather than a second table of derivative rules:
#
# 1. the typed graph of ``f`` with one seed input ``u_k`` per floating result ``y_k``, returning
#    ``sum_k sum(y_k * u_k)``; its gradient graph (Note [Gradient graphs] in
#    `autodiff.higher_order`) is the VJP, with its reverse loops, branches and the scatters of
#    in-place writes;
# 2. ``h = sum_i sum(vjp_i * v_i)`` over the arguments differentiated, with tangent inputs
#    ``v_i``, differentiated again with respect to the seeds: reverse over reverse, which
#    every operator with a second-order formula and every loop and branch already supports;
# 3. one graph of ``(x..., v...)`` running ``f`` and that gradient with the seeds bound to
#    ``zeros_like(y_k)`` (any value would do), returning ``(y..., Jv...)``.
#
# Since the result does not depend on the seeds, nothing of the first reverse program that
# carries them (the VJP's own arithmetic on the cotangent) is read by the result, and the
# cleanup passes (constant propagation, CSE, DCE, loop DCE) drop it: what remains is the
# forward program, once (CSE merges the copies of step 1 and step 3), and the transposed
# transpose, which runs in forward order. What the reverse program keeps in tapes for its loops
# (the primal values of each iteration) stays where the transposed loop reads them, so a JVP
# through a loop costs a tape as reverse mode does; it never forms the Jacobian.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from autodiff.errors import DifferentiationError
from autodiff.higher_order import gradient_graph
from autodiff.pipeline import OutputTree, output_tree
from autodiff.specialize import FORWARD_CLEANUP, typed_graph
from ir.analysis import constant_value, is_constant
from ir.graph import Graph, Value
from ir.types import BOOL, FLOAT, NONE, TENSOR, TensorType, Type
from passes.functionalize import WRITE_BACK
from passes.registry import run_passes
from passes.requires_grad import can_hold_gradient
from passes.rewriting import known_shape, static_value


def _sum_of_products(graph: Graph, pairs: Sequence[tuple[Value, Value]]) -> Value:
    """``sum_k sum(a_k * b_k)`` at the end of ``graph``'s block."""
    total: Value | None = None
    with graph.inserting_at_end(graph.block):
        none = graph.insert_constant(None, NONE)
        no = graph.insert_constant(False, BOOL)
        for a, b in pairs:
            product = graph.insert("aten::mul", [a, b], (TENSOR,)).output
            term = graph.insert("aten::sum", [product, none, no], (TENSOR,)).output
            total = (
                term
                if total is None
                else graph.insert("aten::add", [total, term], (TENSOR,)).output
            )
    assert total is not None
    return total


def _returning(graph: Graph, value: Value) -> None:
    while graph.outputs:
        graph.block.erase_output(0)
    graph.register_output(value)


def _tensor_type(ty: Type) -> Type:
    """The type of a seed for a result of type ``ty``: a Python float's is a 0-d array."""
    return ty if isinstance(ty, TensorType) else TensorType("float64", ())


@dataclass(frozen=True, slots=True)
class JvpGraph:
    """A forward-mode graph: inputs ``(x..., v...)``, outputs ``(y..., t...)``."""

    graph: Graph
    tree: OutputTree
    """How the results ``y`` nest in tuples and lists (`autodiff.pipeline.output_tree`)."""
    has_tangent: tuple[bool, ...]
    """Per result, whether it has a tangent among the outputs (a floating one)."""


def _result_leaves(values: Sequence[Value]) -> list[Value]:
    """The values a graph returns, tuples built by prim::TupleConstruct opened."""
    leaves: list[Value] = []
    for value in values:
        if value.node.kind == "prim::TupleConstruct":
            leaves.extend(_result_leaves(value.node.inputs))
        else:
            leaves.append(value)
    return leaves


def _is_complex(ty: Type) -> bool:
    return isinstance(ty, TensorType) and (ty.dtype or "").startswith("complex")


def jvp_graph(
    graph: Graph,
    input_types: Sequence[Type],
    wrt: Sequence[int],
    *,
    number_inputs: str = "",
    strided_inputs: str = "",
) -> JvpGraph:
    """The forward-mode graph of ``graph`` for ``input_types``: inputs ``(x..., v...)`` with
    one tangent ``v`` per input at ``wrt``, outputs ``(y..., t...)``: the results ``y`` of the
    function (tuples opened) and, per floating result, its tangent ``t = J v``. See Note
    [Forward mode by transposition].

    Given:   graph(%x : Double(3)): %y = aten::sin(%x); return (%y)
    Execute: jvp_graph(graph, [Double(3)], [0])
    Result:  graph(%x : Double(3), %dx : Double(3)): ... aten::mul(%dx, aten::cos(%x)) ...
    """
    typed = typed_graph(graph, input_types, number_inputs, strided_inputs)
    tree = output_tree(typed, [v.ty for v in graph.outputs])
    types = [v.ty for v in typed.inputs]
    for i in wrt:
        if _is_complex(types[i]):
            raise DifferentiationError(
                f"forward mode of {graph.name}() with respect to the complex argument "
                f"'{typed.inputs[i].name_hint or i}' is not supported: pass its real and "
                "imaginary parts as two real arguments"
            )
    results = _result_leaves(typed.outputs)
    has_tangent = [can_hold_gradient(y.ty) for y in results]
    for y, differentiable in zip(results, has_tangent, strict=True):
        if differentiable and _is_complex(y.ty):
            raise DifferentiationError(
                f"forward mode of {graph.name}() with a complex result is not supported: "
                "return np.real and np.imag of it as two results",
                y.node.source_range,
            )
    if not any(has_tangent):
        raise DifferentiationError(
            f"{graph.name}() returns no floating-point result to differentiate",
            results[0].node.source_range if results else None,
        )
    # 1. sum_k <y_k, u_k>, whose gradient is the VJP
    seeded = typed.copy()
    outputs = [y for y, d in zip(_result_leaves(seeded.outputs), has_tangent, strict=True) if d]
    seeds = [seeded.add_input(_tensor_type(y.ty), f"seed{k}") for k, y in enumerate(outputs)]
    _returning(seeded, _sum_of_products(seeded, list(zip(outputs, seeds, strict=True))))
    seed_types = [s.ty for s in seeds]
    vjp = gradient_graph(seeded, [*types, *seed_types], wrt, several=True)
    # 2. h = sum_i <vjp_i, v_i>, differentiated w.r.t. the seeds
    (packed,) = vjp.outputs
    grads = list(packed.node.inputs)
    # A Python float's tangent is a Python float: NumPy's promotion treats both alike.
    tangent_types = [types[i] if types[i] == FLOAT else _tensor_type(types[i]) for i in wrt]
    tangents = [vjp.add_input(ty, f"t{i}") for i, ty in zip(wrt, tangent_types, strict=True)]
    _returning(vjp, _sum_of_products(vjp, list(zip(grads, tangents, strict=True))))
    seed_positions = list(range(len(types), len(types) + len(seeds)))
    transposed = gradient_graph(
        vjp, [*types, *seed_types, *tangent_types], seed_positions, several=True
    )
    # 3. (x..., v...) -> (y..., Jv...)
    result = Graph(graph.name)
    arguments = [
        result.add_input(ty, v.name_hint) for ty, v in zip(types, typed.inputs, strict=True)
    ]
    tangent_inputs = [
        result.add_input(ty, f"d{typed.inputs[i].name_hint or i}")
        for i, ty in zip(wrt, tangent_types, strict=True)
    ]
    write_backs = [n for n in typed.nodes() if n.kind == WRITE_BACK]
    with result.inserting_at_end(result.block):
        copies = dict(zip(typed.inputs, arguments, strict=True))
        for node in typed.nodes():
            if node.kind == WRITE_BACK:
                continue
            copy = result.insert_node(result.create_clone(node, copies.__getitem__))
            copies.update(zip(node.outputs, copy.outputs, strict=True))
        values = [copies[y] for y in results]
        inner = dict(zip(transposed.inputs, arguments, strict=False))
        no_dtype = result.insert_constant(None, NONE)
        differentiated = [y for y, d in zip(results, has_tangent, strict=True) if d]
        for seed, y in zip(
            transposed.inputs[len(types) : len(types) + len(seeds)], differentiated, strict=True
        ):
            inner[seed] = result.insert(
                "aten::zeros_like", [copies[y], no_dtype], (seed.ty,)
            ).output
        for param, tangent in zip(
            transposed.inputs[len(types) + len(seeds) :], tangent_inputs, strict=True
        ):
            inner[param] = tangent
        for node in transposed.nodes():
            if node.kind == WRITE_BACK:
                continue
            copy = result.insert_node(result.create_clone(node, inner.__getitem__))
            inner.update(zip(node.outputs, copy.outputs, strict=True))
        (packed_tangents,) = transposed.outputs
        jvps = [inner[t] for t in packed_tangents.node.inputs]
        for node in write_backs:
            result.insert_node(result.create_clone(node, copies.__getitem__))
    for value in [*values, *jvps]:
        result.register_output(value)
    _fold_unit_seeds(result)
    run_passes(result, [(name, {}) for name in FORWARD_CLEANUP])
    _drop_products_with_ones(result)
    run_passes(result, [("dce", {})])
    return JvpGraph(result, tree, tuple(has_tangent))


# Note [Unit seeds]
# Each gradient graph seeds its reverse program with ``ones_like(loss)``. The value of the loss
# does not matter there, only its type, but the data dependence would keep the whole VJP of
# step 1 of Note [Forward mode by transposition] alive for DCE. A loss of a known 0-d floating
# type gets the constant 1 of its dtype instead; the multiplications by ones it then leaves
# (``_unreduce`` of the constant spread over an array) are dropped where the product has the
# other operand's type, which ``x * 1 == x`` makes exact, NaN and -0.0 included.


def _fold_unit_seeds(graph: Graph) -> None:
    for node in [n for n in graph.all_nodes() if n.kind == "aten::ones_like"]:
        (ty,) = (v.ty for v in node.outputs)
        if not (isinstance(ty, TensorType) and ty.shape == () and ty.dtype is not None):
            continue
        if not all(is_constant(v) and constant_value(v) is None for v in node.inputs[1:]):
            continue
        with graph.inserting_before(node):
            one = graph.insert_constant(np.ones((), ty.dtype), ty)
        node.output.replace_all_uses_with(one)
        node.destroy()


def _is_ones(value: Value) -> bool:
    found = static_value(value)
    return (
        isinstance(found, np.ndarray | np.generic | float | int)
        and not isinstance(found, bool)
        and bool(np.all(np.asarray(found) == 1))
    )


def _drop_products_with_ones(graph: Graph) -> None:
    for node in [n for n in graph.all_nodes() if n.kind == "aten::mul"]:
        (result,) = node.outputs
        for factor, other in (node.inputs, reversed(node.inputs)):
            if _is_ones(factor) and other.ty == result.ty and known_shape(result.ty) is not None:
                result.replace_all_uses_with(other)
                break
