"""Gradients as graphs: what ``ad.grad`` computes, as a plain graph that can be differentiated
again (second derivatives, Hessians) or inlined into a scripted caller.

# Note [Gradient graphs]
# `gradient_graph` builds, for given argument types, the graph of a function's gradient: the
# typed graph with its prim::Reverse block (Note [The reverse block]) inlined after the forward
# nodes, the vjp seeded with ones (the function returns a scalar), and the gradients of the
# inputs at ``wrt`` as its result. The vjp is an ordinary array, never AUTOGRAD_ZERO, so
# specialize-autograd-zero unwraps every GradOf it feeds and turns AutogradAdd of two such
# values into aten::add: the result is made of differentiable operators only (the helpers of
# `ir.ops.gradients` have formulas for that). A gradient that still needs a GradOf guard, an
# AutogradAdd or an AutogradZero is refused with a DifferentiationError naming it rather than
# handed to a second differentiation that would not know it.

# Note [Gradients of gradients at generic types]
# ``ad.grad(g)`` of a gradient ``g`` builds g's graph for its parameters' declared types
# (``Tensor``, no shape), and scripted callers build it for the types they know. At such types
# specialize-autograd-zero cannot materialise a zero from a gradient's type, so a gradient
# that is zero in some places and not in others stays a run-time choice: a reverse loop whose
# carried gradient starts as the sentinel (the gradient of a loop result only a non-
# differentiable use reads), or a GradOf with one zero input. Below the third derivative
# through a loop this happens to resolve; from it on it does not. So when the first attempt
# leaves reverse nodes, the gradient is built again with `add_reverse`'s
# ``materialise_zeros``: every array gradient nothing is sent to starts as ``zeros_like`` of
# its value, a real array, and the specialisation resolves everything (at the cost of some
# arithmetic on zeros, only in graphs that would otherwise be refused). What still remains
# is refused with the location of the value whose gradient stays undecided.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from autodiff.errors import DifferentiationError
from autodiff.pipeline import add_reverse
from autodiff.specialize import FORWARD_CLEANUP, typed_graph
from ir.graph import Graph, Node, Value
from ir.types import BOOL, FLOAT, INT, NONE, SCALAR, TENSOR, TensorType, TupleType, Type
from passes.functionalize import WRITE_BACK
from passes.registry import run_passes
from passes.shape_propagation import propagate_shapes

_REVERSE_NODES = ("prim::GradOf", "prim::AutogradAdd", "prim::AutogradZero")


def complex_output_message(name: str, dtype: str) -> str:
    """Why ``grad`` refuses a complex loss, as JAX and PyTorch do: its derivative is not one
    gradient (Note [Complex gradients] in `autodiff.formulas` is for real losses)."""
    return (
        f"grad requires real-valued outputs, but {name}() returns {dtype}: differentiate "
        "np.real, np.imag or np.abs of it, or use ad.vjp with a complex cotangent"
    )


def _write_back_last(graph: Graph) -> None:
    """Arguments the function writes to are overwritten after the inlined reverse program,
    which reads them as they were passed (Note [Arguments written to] in
    `autodiff.lambda_lift`)."""
    for node in [n for n in graph.nodes() if n.kind == WRITE_BACK]:
        node.move_before(graph.block.return_node)


def gradient_graph(
    graph: Graph,
    input_types: Sequence[Type],
    wrt: Sequence[int],
    *,
    several: bool,
    with_value: bool = False,
    strided_inputs: str = "",
) -> Graph:
    """The graph of the gradient of scalar-valued ``graph`` w.r.t. the inputs at ``wrt``,
    specialised to ``input_types`` and ``strided_inputs`` (`autodiff.specialize`): it returns
    the gradient (a tuple of them when ``several``), preceded by the value when
    ``with_value``. See Note [Gradient graphs] and Note [Gradients of gradients at generic
    types].

    Given:   graph(%x : Tensor): %y = aten::sum(aten::sin(%x)); return (%y)
    Execute: gradient_graph(graph, [Tensor], [0], several=False)
    Result:  graph(%x : Tensor): ... %dx = aten::mul(..., aten::cos(%x)); return (%dx)
    """
    result = _gradient_graph(graph, input_types, wrt, several, with_value, False, strided_inputs)
    if _left_reverse_nodes(result):
        result = _gradient_graph(graph, input_types, wrt, several, with_value, True, strided_inputs)
    left = _left_reverse_nodes(result)
    if left:
        kinds = ", ".join(sorted({n.kind for n in left}))
        raise DifferentiationError(
            f"cannot differentiate {graph.name}() again or call its gradient from scripted "
            "code: the gradient of the value computed here stays a run-time choice between "
            f"zero and not zero ({kinds})",
            next((n.source_range for n in left if n.source_range is not None), None),
        )
    return result


def _left_reverse_nodes(graph: Graph) -> list[Node]:
    return [n for n in graph.all_nodes() if n.kind in _REVERSE_NODES]


def _gradient_graph(
    graph: Graph,
    input_types: Sequence[Type],
    wrt: Sequence[int],
    several: bool,
    with_value: bool,
    materialise_zeros: bool,
    strided_inputs: str,
) -> Graph:
    result = typed_graph(graph, input_types, "", strided_inputs)
    if len(result.outputs) != 1 or isinstance(result.outputs[0].ty, TupleType):
        raise DifferentiationError(
            f"the gradient of {graph.name}() as a graph needs it to return one scalar array"
        )
    (value,) = result.outputs
    if isinstance(value.ty, TensorType) and value.ty.dtype and value.ty.dtype.startswith("complex"):
        raise DifferentiationError(
            complex_output_message(str(graph.name), value.ty.dtype), value.node.source_range
        )
    wrt_values = [result.inputs[i] for i in wrt]
    details = add_reverse(result, wrt_values, materialise_zeros=materialise_zeros)
    run_passes(result, [("specialize-autograd-zero", {})])
    grads = _inline_reverse(result, value, details.reverse_node.attrs["input_grads"])
    _write_back_last(result)
    gradients = [_real_if_unknown(result, grads.get(i), result.inputs[i]) for i in wrt]
    while result.outputs:
        result.block.erase_output(0)
    with result.inserting_at_end(result.block):
        packed = (
            result.insert(
                "prim::TupleConstruct", gradients, (TupleType(tuple(g.ty for g in gradients)),)
            ).output
            if several
            else gradients[0]
        )
        if with_value:
            packed = result.insert(
                "prim::TupleConstruct", [value, packed], (TupleType((value.ty, packed.ty)),)
            ).output
    result.register_output(packed)
    run_passes(result, [(name, {}) for name in FORWARD_CLEANUP if name != "lower-tuples"])
    return result


def _inline_reverse(graph: Graph, value: Value, input_grads: list[int]) -> dict[int, Value]:
    """Move the prim::Reverse block's nodes in its place, its vjp parameter bound to
    ``ones_like(value)``; returns the gradient per graph input position."""
    (reverse,) = [n for n in graph.nodes() if n.kind == "prim::Reverse"]
    block = reverse.blocks[0]
    copies: dict[Value, Value] = {}
    with graph.inserting_before(reverse):
        for param in block.inputs:
            copies[param] = _ones_like(graph, value)
        for node in block.nodes():
            copy = graph.insert_node(graph.create_clone(node, lambda v: copies.get(v, v)))
            copies.update(zip(node.outputs, copy.outputs, strict=True))
    results = [copies.get(v, v) for v in block.outputs]
    for out, result in zip(reverse.outputs, results, strict=True):
        out.replace_all_uses_with(result)
    block.destroy()
    reverse.destroy()
    return dict(zip(input_grads, results, strict=True))


def _real_if_unknown(graph: Graph, grad: Value | None, argument: Value) -> Value:
    """The gradient of ``argument``: zeros when it got none and, when its dtype is not known
    here (a gradient called from scripted code is built for generic types), the real part
    where it turns out real, as `_grad_like` takes it at run time: otherwise a real argument
    mixed with complex values would get a complex gradient (Note [Real operands of complex
    operators] in `autodiff.differentiate` takes it per node where dtypes are known)."""
    if grad is None:
        return _zeros_like(graph, argument)
    if isinstance(argument.ty, TensorType) and argument.ty.dtype is None:
        with graph.inserting_at_end(graph.block):
            return graph.insert("aten::_grad_like", [grad, argument], (argument.ty,)).output
    return grad


def _ones_like(graph: Graph, value: Value) -> Value:
    """The vjp seed of a scalar result: 1.0 for a Python float, ``ones_like`` of an array."""
    if value.ty in (FLOAT, SCALAR):
        return graph.insert_constant(1.0, FLOAT)
    no_dtype = graph.insert_constant(None, NONE)
    return graph.insert("aten::ones_like", [value, no_dtype], (value.ty,)).output


def _zeros_like(graph: Graph, value: Value) -> Value:
    with graph.inserting_at_end(graph.block):
        no_dtype = graph.insert_constant(None, NONE)
        return graph.insert("aten::zeros_like", [value, no_dtype], (value.ty,)).output


# Note [Jacobian graphs]
# `jacobian_graph` is what makes ``ad.jacobian`` compose like ``ad.grad`` does (Note [Gradient
# graphs]): the graph of a function's Jacobian, which `vjp`, `jacobian` and `grad` differentiate
# again. It is built from one vjp graph, ``vjp(x..., seed) = gradient of sum(f(x...) * seed)``
# (`gradient_graph` of ``f`` with the seed as one more input), inlined once per element ``k``
# of the result with the one-hot seed ``e_k`` as a constant, the rows stacked and reshaped to
# ``result.shape + argument.shape``, as JAX's ``jacrev`` does with ``vmap``. CSE leaves one
# copy of the forward nodes the rows share. Unrolling needs the result's shape, so the graph
# is built per argument shapes (Python calls know them: `ScriptFunction.parsed_for`); a
# Jacobian called from scripted code, whose argument shapes are not known when it is
# compiled, is refused at the call, and one whose result's shape the arguments' shapes do not
# give (a loop carrying a Python number that becomes a NumPy scalar) where it returns. Its size
# grows with the number of result elements: it is meant for the small Jacobians of nested
# derivatives (``jacobian(jacobian(f))``, Hessians). ``hessian`` with a tuple of argnums puts
# one such graph per block side by side (`blocks_graph`).


def jacobian_graph(
    graph: Graph,
    input_types: Sequence[Type],
    wrt: Sequence[int],
    *,
    several: bool,
    strided_inputs: str = "",
) -> Graph:
    """The graph of the Jacobian of array-valued ``graph`` w.r.t. the inputs at ``wrt``,
    specialised to ``input_types`` (which must have shapes): it returns, per input at
    ``wrt``, an array of shape ``result.shape + input.shape`` (a tuple of them when
    ``several``). See Note [Jacobian graphs].

    Given:   graph(%x : Double(2)): %y = aten::sin(%x); return (%y)
    Execute: jacobian_graph(graph, [Double(2)], [0], several=False)
    Result:  graph(%x : Double(2)): ... %j = aten::reshape(aten::stack(...), (2, 2)); return (%j)
    """
    argument_shapes = [_shape_of_type(graph, input_types[i]) for i in wrt]
    typed = typed_graph(graph, input_types, "", strided_inputs)
    if len(typed.outputs) != 1 or isinstance(typed.outputs[0].ty, TupleType):
        raise DifferentiationError(f"jacobian needs {graph.name}() to return one array")
    (value,) = typed.outputs
    if not _has_shape(value.ty):
        # Every argument's shape is known here, yet the result's is not (the type of a value
        # a loop carries changes from a Python number to an array): only a run would say it.
        raise DifferentiationError(
            f"cannot differentiate the jacobian of {graph.name}() again: the shape of the "
            f"value it returns is not known from the shapes of its arguments (type "
            f"{value.ty})",
            value.node.source_range,
        )
    result_shape = _shape_of_type(graph, value.ty)
    dtype = value.ty.dtype if isinstance(value.ty, TensorType) and value.ty.dtype else "float64"
    seed_type = TensorType(dtype, result_shape)
    # sum(f(x...) * seed), whose gradient is f's vjp for the cotangent ``seed``
    seed = typed.add_input(seed_type, "seed")
    with typed.inserting_at_end(typed.block):
        product = typed.insert("aten::mul", [value, seed], (TENSOR,)).output
        none = typed.insert_constant(None, NONE)
        no = typed.insert_constant(False, BOOL)
        total = typed.insert("aten::sum", [product, none, no], (TENSOR,)).output
    typed.block.erase_output(0)
    typed.register_output(total)
    vjp = gradient_graph(typed, [*input_types, seed_type], wrt, several=True)
    (packed,) = vjp.outputs

    result = Graph(graph.name)
    arguments = [
        result.add_input(ty, v.name_hint) for ty, v in zip(input_types, graph.inputs, strict=True)
    ]
    rows: list[list[Value]] = [[] for _ in wrt]
    # The arguments f writes are written once, after every row has read them as passed.
    write_backs = [node for node in vjp.nodes() if node.kind == WRITE_BACK]
    first_copies: dict[Value, Value] | None = None
    with result.inserting_at_end(result.block):
        # An empty result has no rows, but its function still runs for what it writes.
        indices: list[tuple[int, ...] | None] = [*np.ndindex(result_shape)]
        for index in indices or [None]:
            one_hot = np.zeros(result_shape, dtype)
            if index is not None:
                one_hot[index] = 1
            copies = dict(zip(vjp.inputs, arguments, strict=False))
            copies[vjp.inputs[-1]] = result.insert_constant(one_hot, seed_type)
            for node in vjp.nodes():
                if node.kind == WRITE_BACK:
                    continue
                copy = result.insert_node(result.create_clone(node, copies.__getitem__))
                copies.update(zip(node.outputs, copy.outputs, strict=True))
            for row, grad in zip(rows, packed.node.inputs, strict=True):
                if index is not None:
                    row.append(copies[grad])
            first_copies = first_copies or copies
        jacobians = [
            _stacked(result, row, result_shape + shape, dtype)
            for row, shape in zip(rows, argument_shapes, strict=True)
        ]
    assert first_copies is not None  # the loop above runs at least once
    finish_jacobian_graph(result, jacobians, write_backs, first_copies, several=several)
    return result


def finish_jacobian_graph(
    result: Graph,
    jacobians: Sequence[Value],
    write_backs: Sequence[Node],
    copies: Mapping[Value, Value],
    *,
    several: bool,
) -> None:
    """End ``result``, the graph of a Jacobian whose rows (or columns, for `jacfwd_graph` in
    `autodiff.jvp_graphs`) are built: the function's ``write_backs``, cloned through
    ``copies`` (one row's values), write its arguments once, after every row has read them as
    passed; it returns ``jacobians`` (a tuple of them when ``several``), its shapes propagated
    and the forward cleanup run.

    Given:   graph(%x : Double(2)): ... %j = aten::reshape(...)
    Execute: finish_jacobian_graph(graph, [%j], [], {}, several=False)
    Result:  graph(%x : Double(2)): ... %j = aten::reshape(...); return (%j)
    """
    with result.inserting_at_end(result.block):
        for node in write_backs:
            result.insert_node(result.create_clone(node, copies.__getitem__))
        packed = (
            result.insert(
                "prim::TupleConstruct", jacobians, (TupleType(tuple(j.ty for j in jacobians)),)
            ).output
            if several
            else jacobians[0]
        )
    result.register_output(packed)
    propagate_shapes(result)
    run_passes(result, [(name, {}) for name in FORWARD_CLEANUP if name != "lower-tuples"])


def _has_shape(ty: Type) -> bool:
    """Whether type ``ty`` says a value's shape: a Python number's is ()."""
    if ty in (FLOAT, INT, BOOL, SCALAR):
        return True
    return isinstance(ty, TensorType) and ty.shape is not None and None not in ty.shape


def _shape_of_type(graph: Graph, ty: Type) -> tuple[int, ...]:
    """The shape of an argument of type ``ty``: () for a Python number."""
    if not _has_shape(ty):
        raise DifferentiationError(
            f"the jacobian of {graph.name}() as a graph needs the shape of each argument, "
            f"which is not known here (type {ty}): call the jacobian from Python, where the "
            "arguments' shapes are known"
        )
    if isinstance(ty, TensorType) and ty.shape is not None:
        return tuple(size for size in ty.shape if size is not None)
    return ()


def _stacked(graph: Graph, rows: list[Value], shape: tuple[int, ...], dtype: str) -> Value:
    """``np.stack(rows).reshape(shape)``; zeros of ``shape`` when there are no rows."""
    if not rows:
        return graph.insert_constant(np.zeros(shape, dtype), TensorType(dtype, shape))
    if len(rows) == 1 and isinstance(rows[0].ty, TensorType):
        # The one row of a scalar result: reshaped alone, so that differentiating this graph
        # again (a Hessian) needs no stack's backward (Note [Jacobians on backends] in
        # autodiff.jacobians: a backend may have no kernel for it)
        return _reshaped(graph, rows[0], shape)
    items = graph.insert("prim::TupleConstruct", rows, (TupleType(tuple(r.ty for r in rows)),))
    axis = graph.insert_constant(0, INT)
    stacked = graph.insert("aten::stack", [items.output, axis], (TENSOR,)).output
    return _reshaped(graph, stacked, shape)


def _reshaped(graph: Graph, value: Value, shape: tuple[int, ...]) -> Value:
    sizes = [graph.insert_constant(size, INT) for size in shape]
    spec = graph.insert("prim::TupleConstruct", sizes, (TupleType(tuple(INT for _ in shape)),))
    return graph.insert("aten::reshape", [value, spec.output], (TENSOR,)).output


def blocks_graph(name: str, input_types: Sequence[Type], blocks: list[list[Graph]]) -> Graph:
    """One graph returning the results of ``blocks`` (graphs of the same inputs, each
    returning one array) as nested tuples ``((b00, b01, ...), (b10, ...), ...)``: the graph of
    a Hessian's blocks for a tuple of ``argnums``. Each block reads the arguments as passed:
    the arguments the function writes are written once, after every block (as the rows of
    Note [Jacobian graphs])."""
    result = Graph(name)
    arguments = [result.add_input(ty) for ty in input_types]
    first_copies: dict[Value, Value] | None = None
    write_backs: list[Node] = []
    rows: list[Value] = []
    with result.inserting_at_end(result.block):
        for row in blocks:
            outputs: list[Value] = []
            for block in row:
                copies = dict(zip(block.inputs, arguments, strict=True))
                for node in block.nodes():
                    if node.kind == WRITE_BACK:
                        if first_copies is None:
                            write_backs.append(node)
                        continue
                    copy = result.insert_node(result.create_clone(node, copies.__getitem__))
                    copies.update(zip(node.outputs, copy.outputs, strict=True))
                first_copies = first_copies or copies
                outputs.append(copies[block.outputs[0]])
            types = TupleType(tuple(v.ty for v in outputs))
            rows.append(result.insert("prim::TupleConstruct", outputs, (types,)).output)
        for node in write_backs:
            assert first_copies is not None
            result.insert_node(result.create_clone(node, first_copies.__getitem__))
        packed = result.insert(
            "prim::TupleConstruct", rows, (TupleType(tuple(r.ty for r in rows)),)
        ).output
    result.register_output(packed)
    run_passes(result, [(name, {}) for name in FORWARD_CLEANUP if name != "lower-tuples"])
    return result
