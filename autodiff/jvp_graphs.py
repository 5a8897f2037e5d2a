"""Forward mode as a graph: the JVP graph of a function, built by transposing its reverse mode.

# Note [Forward mode by transposition]
# A VJP is linear in its cotangent: ``vjp(x, u) = J(x)^T u``. So the scalar
# ``h(x, u, v) = <vjp(x, u), v> = <u, J(x) v>`` is linear in ``u`` and its gradient with
# respect to ``u`` is the JVP ``J(x) v``, whatever ``u`` is. `jvp_graph` builds exactly that,
# from what the project already has, rather than a second table of derivative rules:
#
# 1. the typed graph of ``f`` returning ``sum_k <y_k, u_k + c_k>`` over its results ``y_k``,
#    with seed inputs ``u_k`` and probes ``c_k``; its gradient graph (Note [Gradient graphs]
#    in `autodiff.higher_order`) w.r.t. the arguments and the probes gives the VJP
#    ``J^T (u + c)``, with its reverse loops, branches and the scatters of in-place writes,
#    and the results themselves: the gradient of ``<y, c>`` w.r.t. ``c`` is ``y``;
# 2. ``h = sum_i <vjp_i, v_i> + sum_k <y_k, p_k>`` with tangent inputs ``v_i`` and probes
#    ``p_k``, differentiated w.r.t. the seeds (``J v``, reverse over reverse, which every
#    operator with a second-order formula and every loop and branch already supports) and
#    the probes (``y`` again);
# 3. one graph of ``(x..., v...)`` inlining that, the seeds and probes bound to zeros (any
#    value would do), returning ``(y..., Jv...)``.
#
# The results come out of the graph that computes the tangents, not out of a copy of ``f``
# beside it: the function runs once, so its random draws, prints and writes to arguments
# happen once, as in a call, and a loop is not run twice. Since nothing depends on the seeds'
# values, the first reverse program's arithmetic on them is dead once the unit seeds are
# constants (Note [Unit seeds]), and the cleanup passes (constant propagation, CSE, DCE, loop
# DCE) drop it: what remains is the forward program and the transposed transpose, which runs
# in forward order. Through a loop that leaves three loops: the forward loop filling tapes, a
# loop mapping them backwards, and the tangent loop reading them in forward order; Note [Tape
# maps] and Note [Tangent loops] (in `autodiff.jvp_loops`) fuse them into one loop that carries
# the tangent beside the primal with no tape. Where they do not apply (a loop that may stop
# early: ``while``, ``break``) the tapes stay, and a JVP keeps per iteration what reverse mode
# keeps. It never forms the Jacobian.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from autodiff.errors import DifferentiationError
from autodiff.higher_order import _shape_of_type, finish_jacobian_graph, gradient_graph
from autodiff.jvp_loops import fuse_tangent_loops, fuse_tape_maps
from autodiff.pipeline import OutputTree, output_tree
from autodiff.specialize import FORWARD_CLEANUP, typed_graph
from ir.analysis import constant_value, is_constant
from ir.graph import Graph, Node, Value
from ir.types import BOOL, FLOAT, INT, NONE, STR, TENSOR, TensorType, TupleType, Type
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
    result_types: tuple[Type, ...]
    """The type of each result as the function returns it (a Python float is one)."""


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


def _check_results(graph: Graph, results: Sequence[Value]) -> None:
    """Forward mode gives a tangent per result: each must be a real floating array or float
    whose shape the arguments' shapes give (seeds of that shape stand in for cotangents)."""
    name = graph.name
    for y in results:
        if _is_complex(y.ty):
            raise DifferentiationError(
                f"forward mode of {name}() with a complex result is not supported: return "
                "np.real and np.imag of it as two results",
                y.node.source_range,
            )
        if not can_hold_gradient(y.ty) or (isinstance(y.ty, TensorType) and y.ty.dtype is None):
            raise DifferentiationError(
                f"forward mode of {name}() needs floating-point results, but this one is "
                f"{y.ty}: return it from another function, or as a float",
                y.node.source_range,
            )
        if known_shape(y.ty) is None:
            raise DifferentiationError(
                f"forward mode of {name}() needs the shape of each result from the shapes of "
                f"the arguments, and the shape of this one is not known until it runs ({y.ty})",
                y.node.source_range,
            )


def _inputs(graph: Graph, types: Sequence[Type], hint: str) -> list[Value]:
    return [graph.add_input(ty, f"{hint}{k}") for k, ty in enumerate(types)]


def _packed(graph: Graph) -> list[Value]:
    """The values of the tuple a gradient graph built with ``several`` returns."""
    (packed,) = graph.outputs
    return list(packed.node.inputs)


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
    function (tuples opened) and their tangents ``t = J v``. See Note [Forward mode by
    transposition].

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
    _check_results(graph, results)
    result_types = [y.ty for y in results]
    seed_types = [_tensor_type(ty) for ty in result_types]
    # A Python float's tangent is a Python float: NumPy's promotion treats both alike.
    tangent_types = [types[i] if types[i] == FLOAT else _tensor_type(types[i]) for i in wrt]
    count, width = len(types), len(results)

    # 1. sum_k <y_k, u_k + c_k>: its gradient is J^T (u + c) and y
    loss = typed.copy()
    outputs = _result_leaves(loss.outputs)
    seeds, probes = _inputs(loss, seed_types, "seed"), _inputs(loss, seed_types, "probe")
    pairs = [*zip(outputs, seeds, strict=True), *zip(outputs, probes, strict=True)]
    _returning(loss, _sum_of_products(loss, pairs))
    probe_positions = list(range(count + width, count + 2 * width))
    vjp = gradient_graph(
        loss, [*types, *seed_types, *seed_types], [*wrt, *probe_positions], several=True
    )
    grads, values = _packed(vjp)[: len(wrt)], _packed(vjp)[len(wrt) :]

    # 2. h = sum_i <vjp_i, v_i> + sum_k <y_k, p_k>: its gradient is J v and y
    tangents = _inputs(vjp, tangent_types, "tangent")
    second_probes = _inputs(vjp, seed_types, "probe")
    pairs = [*zip(grads, tangents, strict=True), *zip(values, second_probes, strict=True)]
    _returning(vjp, _sum_of_products(vjp, pairs))
    all_types = [*types, *seed_types, *seed_types, *tangent_types, *seed_types]
    seed_positions = list(range(count, count + width))
    second_positions = list(range(len(all_types) - width, len(all_types)))
    transposed = gradient_graph(vjp, all_types, [*seed_positions, *second_positions], several=True)

    # 3. (x..., v...) -> (y..., Jv...), with zeros for the seeds and the probes
    result = Graph(graph.name)
    arguments = [
        result.add_input(ty, v.name_hint) for ty, v in zip(types, typed.inputs, strict=True)
    ]
    tangent_inputs = [
        result.add_input(ty, f"d{typed.inputs[i].name_hint or i}")
        for i, ty in zip(wrt, tangent_types, strict=True)
    ]
    with result.inserting_at_end(result.block):
        zeros = [result.insert_constant(_zeros(ty), ty) for ty in seed_types]
        given = [*arguments, *zeros, *zeros, *tangent_inputs, *zeros]
        copies = dict(zip(transposed.inputs, given, strict=True))
        for node in transposed.nodes():
            copy = result.insert_node(result.create_clone(node, copies.__getitem__))
            copies.update(zip(node.outputs, copy.outputs, strict=True))
        found = [copies[v] for v in _packed(transposed)]
        outputs = [
            _cast(result, value, ty)
            for value, ty in zip(found[width:] + found[:width], result_types * 2, strict=True)
        ]
    for value in outputs:
        result.register_output(value)
    _fold_unit_seeds(result)
    run_passes(result, [(name, {}) for name in FORWARD_CLEANUP])
    _drop_products_with_ones(result)
    run_passes(result, [("dce", {})])
    if fuse_tape_maps(result):
        run_passes(result, [("dce", {})])  # the map loops, read by nothing now
    if fuse_tangent_loops(result):
        run_passes(result, [(name, {}) for name in ("hoist-loop-invariants", "cse", "dce")])
    _name_tangents(result)
    return JvpGraph(result, tree, tuple(result_types))


def _name_tangents(graph: Graph) -> None:
    """Name each tangent ``d<primal>``: differentiation named it ``dd<primal>``, the gradient
    of the cotangent ``d<primal>`` of step 1 of Note [Forward mode by transposition], which
    is dead by now."""
    values = [*graph.inputs]
    for node in graph.all_nodes():
        values.extend(node.outputs)
        for block in node.blocks:
            values.extend(block.inputs)
    for value in values:
        hint = value.name_hint
        if hint is not None and hint.startswith("dd") and len(hint) > 2:
            value.set_name(hint[1:])


def _zeros(ty: Type) -> np.ndarray[Any, Any]:
    assert isinstance(ty, TensorType)
    assert ty.dtype is not None
    shape = known_shape(ty)
    assert shape is not None
    return np.zeros(shape, ty.dtype)


def _cast(graph: Graph, value: Value, ty: Type) -> Value:
    """``value`` as an array of the dtype of a result of type ``ty``: the sums of step 1 and 2
    of Note [Forward mode by transposition] promote float32 results met with float64 ones
    (exactly: a float32 widened and narrowed back is itself)."""
    dtype = _tensor_type(ty)
    assert isinstance(dtype, TensorType)
    if not isinstance(value.ty, TensorType) or value.ty.dtype == dtype.dtype:
        return value
    name = graph.insert_constant(dtype.dtype, STR)
    return graph.insert("aten::astype", [value, name], (dtype,)).output


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


# Note [Forward Jacobian graphs]
# `jacfwd_graph` is to ``ad.jacfwd`` what `jacobian_graph` (Note [Jacobian graphs] in
# `autodiff.higher_order`) is to ``ad.jacobian``: the graph of the Jacobian, so that it can be
# differentiated again (``jacfwd(jacfwd(f))``, ``grad`` of a function calling it). The JVP
# graph of each argument differentiated is inlined once per element of that argument, its
# tangent the one-hot constant ``e_j``, and the columns are stacked on the last axis and
# reshaped to ``result.shape + argument.shape``. CSE leaves one copy of the forward nodes the
# columns share (loops, which it does not merge, are repeated). The function's writes to its
# arguments are made once, after every column, and random draws are refused: each column
# would draw its own.


def jacfwd_graph(
    graph: Graph,
    input_types: Sequence[Type],
    wrt: Sequence[int],
    *,
    several: bool,
    strided_inputs: str = "",
) -> Graph:
    """The graph of the forward-mode Jacobian of ``graph`` w.r.t. the inputs at ``wrt`` for
    ``input_types`` (which must have shapes): per input, an array of shape ``result.shape +
    input.shape`` (a tuple of them when ``several``). See Note [Forward Jacobian graphs].

    Given:   graph(%x : Double(2)): %y = aten::sin(%x); return (%y)
    Execute: jacfwd_graph(graph, [Double(2)], [0], several=False)
    Result:  graph(%x : Double(2)): ... %j = aten::reshape(aten::stack(...), (2, 2)); return (%j)
    """
    argument_shapes = [_shape_of_type(graph, input_types[i]) for i in wrt]
    result = Graph(graph.name)
    arguments = [
        result.add_input(ty, v.name_hint) for ty, v in zip(input_types, graph.inputs, strict=True)
    ]
    first: tuple[list[Node], dict[Value, Value]] | None = None  # the writes, made once
    jacobians: list[Value] = []
    with result.inserting_at_end(result.block):
        for position, shape in zip(wrt, argument_shapes, strict=True):
            built = jvp_graph(graph, input_types, [position], strided_inputs=strided_inputs)
            forward = built.graph
            refuse_draws(str(graph.name), forward)
            if len(built.result_types) != 1 or built.tree is not None:
                raise DifferentiationError(f"jacfwd needs {graph.name}() to return one array")
            result_shape = known_shape(built.result_types[0])
            assert result_shape is not None  # `_check_results`
            (tangent,) = forward.inputs[len(input_types) :]
            dtype = _tensor_type(tangent.ty)
            assert isinstance(dtype, TensorType)
            columns = []
            for index in np.ndindex(shape):
                one_hot = np.zeros(shape, dtype.dtype)
                one_hot[index] = 1
                copies = dict(zip(forward.inputs, arguments, strict=False))
                copies[tangent] = result.insert_constant(
                    float(one_hot) if tangent.ty == FLOAT else one_hot, tangent.ty
                )
                for node in forward.nodes():
                    if node.kind != WRITE_BACK:
                        copy = result.insert_node(result.create_clone(node, copies.__getitem__))
                        copies.update(zip(node.outputs, copy.outputs, strict=True))
                first = first or ([n for n in forward.nodes() if n.kind == WRITE_BACK], copies)
                columns.append(copies[forward.outputs[1]])
            jacobians.append(_columns_stacked(result, columns, result_shape + shape))
    write_backs, copies = first or ([], {})
    finish_jacobian_graph(result, jacobians, write_backs, copies, several=several)
    return result


def _columns_stacked(graph: Graph, columns: list[Value], shape: tuple[int, ...]) -> Value:
    """``np.stack(columns, axis=-1).reshape(shape)``: the Jacobian from its columns."""
    items = graph.insert(
        "prim::TupleConstruct", columns, (TupleType(tuple(c.ty for c in columns)),)
    )
    axis = graph.insert_constant(-1, INT)
    stacked = graph.insert("aten::stack", [items.output, axis], (TENSOR,)).output
    sizes = [graph.insert_constant(size, INT) for size in shape]
    spec = graph.insert("prim::TupleConstruct", sizes, (TupleType(tuple(INT for _ in shape)),))
    return graph.insert("aten::reshape", [stacked, spec.output], (TENSOR,)).output


RANDOM_NODES = ("prim::Draw", "prim::MakeGenerator")


def refuse_draws(function: str, graph: Graph) -> None:
    """jacfwd runs the function once per column: a random draw would differ between them."""
    for node in graph.all_nodes():
        if node.kind in RANDOM_NODES:
            raise DifferentiationError(
                f"jacfwd runs {function}() once per column of the Jacobian, and the "
                "random draws here would differ between columns: use ad.jacobian (jacrev), "
                "which runs it once",
                node.source_range,
            )
