"""A custom vjp whose ``fwd`` and ``bwd`` are compiled: ``ad.custom_vjp(f, scripted=True)``.

Note [Scripted custom vjp]
The user says so (``scripted=True``); the compiler does not guess, since trying to compile
opaque code would turn every refusal into a silent change of strategy. Then ``fwd`` and
``bwd`` are written in the language (`docs/language.md`) and, instead of the opaque nodes of
Note [Custom vjp] in `autodiff.custom_vjp`, differentiation inlines their graphs, compiled for
the call's argument structure and specialised to its types: ``fwd``'s nodes replace the
``prim::CustomVjp`` node in the forward block, and ``bwd``'s go in the GradOf, reading the
residuals ``fwd`` computed as a formula's backward reads its context. The residuals are then
a pytree of arrays, saved per leaf. Neither is differentiated at first order (the rule stands
in for ``f``'s own derivative), but both are ordinary nodes, so a second differentiation (a
Hessian, ``ad.grad`` of a gradient) goes through them, as JAX's reverse-over-reverse goes
through a ``custom_vjp``'s ``fwd`` and ``bwd``. Forward mode is not given. ``f`` itself still
runs as one node where it is not differentiated. ``fwd`` and ``bwd`` take what they need as
arguments: one that reads a global array is refused. ``bwd``'s number of cotangents and their
shapes are checked while compiling.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from autodiff.errors import DifferentiationError
from autodiff.gradient import gradient_name
from autodiff.opaque import function_label
from autodiff.specialize import typed_graph
from frontend.compile import compile_with_free_variables
from frontend.trees import Tree
from ir.graph import Graph, Node, Value
from ir.source import SourceRange
from ir.types import INT, NONE, STR, TENSOR, TensorType, TupleType, Type
from passes.registry import run_module_passes


def compiled(
    fn: Callable[..., Any], parameters: Sequence[Type], where: SourceRange | None
) -> tuple[Graph, Type]:
    """``fn`` compiled for ``parameters`` (Trees for containers), helpers inlined: its graph,
    one input per leaf, and its result's type."""
    module = compile_with_free_variables(fn, argument_types=list(parameters))
    if module.free:
        raise DifferentiationError(
            f"{function_label(fn)} reads the global array {module.free[0].name!r}: the fwd and "
            "bwd of a scripted custom_vjp take what they read as arguments",
            where,
        )
    run_module_passes(module.module, [("inline", {"entry_only": True})])
    return next(iter(module.module.values())), module.result


def leaves(graph: Graph, value: Value, where: SourceRange | None) -> list[Value]:
    """The arrays and numbers ``value`` holds, in order (a tuple unpacked at the insertion
    point): a compiled function's inputs for it. Strings and None are no inputs."""
    ty = value.ty
    if isinstance(ty, TupleType):
        if value.node.kind == "prim::TupleConstruct":  # as `item` does
            parts = list(value.node.inputs)
        else:
            unpack = graph.insert("prim::TupleUnpack", [value], list(ty.elems), source_range=where)
            parts = list(unpack.outputs)
        return [leaf for part in parts for leaf in leaves(graph, part, where)]
    return [] if ty in (STR, NONE) else [value]


def inline(graph: Graph, body: Graph, inputs: list[Value], where: SourceRange | None) -> Value:
    """Clone ``body``'s nodes at the insertion point, its inputs bound to ``inputs``; its one
    result."""
    copies: dict[Value, Value] = dict(zip(body.inputs, inputs, strict=True))
    for node in body.nodes():
        copy = graph.insert_node(graph.create_clone(node, copies.__getitem__))
        copy.source_range = where
        copies.update(zip(node.outputs, copy.outputs, strict=True))
    (result,) = body.outputs
    return copies[result]


def item(graph: Graph, value: Value, index: int, where: SourceRange | None) -> Value:
    """Item ``index`` of the tuple ``value``: the value itself where it was built here (so
    that `specialize-autograd-zero` sees what a gradient is made of), else a TupleIndex."""
    assert isinstance(value.ty, TupleType)
    if value.node.kind == "prim::TupleConstruct":
        return value.node.inputs[index]
    position = graph.insert_constant(index, INT)
    return graph.insert(
        "prim::TupleIndex", [value, position], [value.ty.elems[index]], source_range=where
    ).output


def child(ty: Type, index: int) -> Type:
    """Item ``index`` of a compiled function's result type (a Tree or an IR tuple), as a
    parameter type: a tuple is a Tree, so that a function compiled for it takes its leaves."""
    if isinstance(ty, Tree):
        return as_tree(ty.children[index])
    return as_tree(ty.elems[index]) if isinstance(ty, TupleType) else TENSOR


def as_tree(ty: Type) -> Type:
    if ty == NONE:  # a parameter given None (Note [Containers known while compiling])
        return Tree(type(None), (), ())
    if isinstance(ty, Tree):
        return Tree(ty.kind, ty.keys, tuple(as_tree(c) for c in ty.children))
    if isinstance(ty, TupleType):
        return Tree(tuple, (), tuple(as_tree(e) for e in ty.elems))
    return ty


def _typed(
    fn: Callable[..., Any],
    parameters: Sequence[Type],
    inputs: list[Value],
    where: SourceRange | None,
) -> tuple[Graph, Type]:
    graph, result = compiled(fn, parameters, where)
    if len(graph.inputs) != len(inputs):
        raise DifferentiationError(
            f"{function_label(fn)} takes {len(graph.inputs)} arrays here, given {len(inputs)}",
            where,
        )
    return typed_graph(graph, [v.ty for v in inputs], lower_tuples=False), result


def differentiate_scripted(builder: Any, node: Node, owner: Any, arg_types: Sequence[Type]) -> None:
    """Note [Scripted custom vjp]: ``node`` (a ``prim::CustomVjp``) replaced by ``owner``'s
    ``fwd``, and ``owner``'s ``bwd`` in a GradOf of its result's gradient. ``builder`` is
    `autodiff.differentiate.ReverseBuilder`; ``arg_types`` the call's, as compiled."""
    graph = builder.graph
    _, *args = node.inputs
    where = node.source_range
    fwd, bwd = owner.fwd, owner.bwd
    with graph.inserting_after(node):
        arg_leaves = [leaf for arg in args for leaf in leaves(graph, arg, where)]
        fwd_graph, fwd_result = _typed(fwd, arg_types, arg_leaves, where)
        pair = inline(graph, fwd_graph, arg_leaves, where)
        if not isinstance(pair.ty, TupleType) or len(pair.ty.elems) != 2:
            raise DifferentiationError(
                f"{function_label(fwd)} (the fwd of {function_label(owner.fun)}) must return a "
                "pair (out, residuals)",
                where,
            )
        out = item(graph, pair, 0, where)
        # unpacked here, so that the reverse reads (and a loop tapes) arrays, never a tuple
        residuals = leaves(graph, item(graph, pair, 1, where), where)
    out.name_hint = node.output.name_hint
    grad = builder.get_grad(node.output)
    node.output.replace_all_uses_with(out)
    builder.grad_map.pop(node.output)  # the destroyed result's: nothing may look it up again
    node.destroy()

    grad_of = graph.create("prim::GradOf", [grad], (), {"name": "prim::CustomVjp"}, num_blocks=1)
    grad_of.source_range = where
    builder.block.append_node(grad_of)
    body = grad_of.blocks[0]
    tagged = where and where.of_gradient("prim::CustomVjp")
    with graph.inserting_at_end(body):
        inputs = [*residuals, *leaves(graph, grad, tagged)]
        parameters = [child(fwd_result, 1), child(fwd_result, 0)]
        bwd_graph, bwd_result = _typed(bwd, parameters, inputs, tagged)
        cotangents = inline(graph, bwd_graph, inputs, tagged)
        label = f"{function_label(bwd)} (the bwd of {function_label(owner.fun)})"
        count = len(cotangents.ty.elems) if isinstance(cotangents.ty, TupleType) else None
        if count != len(args):
            raise DifferentiationError(
                f"{label} returns {'one value' if count is None else count} where a tuple of "
                f"{len(args)} cotangents is expected, one per argument (None for no gradient)",
                where,
            )
        for index, arg in enumerate(args):
            cotangent = item(graph, cotangents, index, tagged)
            if arg not in builder.needs or cotangent.ty == NONE:
                continue
            cotangent = _conform(graph, cotangent, child(bwd_result, index), arg_types[index])
            _check_shape(label, index, arg.ty, cotangent.ty, where)
            body.register_output(cotangent)
            builder.set_grad(arg, grad_of.add_output(arg.ty, gradient_name(arg)))


def _conform(graph: Graph, value: Value, given: Type, wanted: Type) -> Value:
    """A dict cotangent ``value`` (of type ``given``) with its items in the order of the
    argument's dict (``wanted``: its keys sorted), as the argument's tuple holds them."""
    if not (isinstance(given, Tree) and isinstance(wanted, Tree)):
        return value
    if given.is_dict and wanted.is_dict and given.keys != wanted.keys:
        if set(given.keys) != set(wanted.keys):
            return value  # `_check_shape` describes it
        order = [given.keys.index(key) for key in wanted.keys]
    else:
        order = list(range(len(given.children)))
    if len(order) != len(wanted.children) or len(given.children) != len(wanted.children):
        return value
    items = [
        _conform(graph, item(graph, value, i, None), given.children[i], wanted.children[j])
        for j, i in enumerate(order)
    ]
    ty = TupleType(tuple(v.ty for v in items))
    return graph.insert("prim::TupleConstruct", items, [ty]).output


def _check_shape(
    label: str, index: int, arg: Type, cotangent: Type, where: SourceRange | None
) -> None:
    if (
        isinstance(arg, TensorType)
        and isinstance(cotangent, TensorType)
        and None not in (arg.shape, cotangent.shape)
        and arg.shape != cotangent.shape
    ):
        raise DifferentiationError(
            f"{label} returns a cotangent of shape {cotangent.shape} for argument {index}, of "
            f"shape {arg.shape}",
            where,
        )
    if isinstance(arg, TupleType) and isinstance(cotangent, TupleType):
        if len(arg.elems) != len(cotangent.elems):
            raise DifferentiationError(
                f"{label} returns a cotangent for argument {index} not structured like it", where
            )
        for a, c in zip(arg.elems, cotangent.elems, strict=True):
            _check_shape(label, index, a, c, where)
