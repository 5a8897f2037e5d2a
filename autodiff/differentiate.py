"""Symbolic differentiation: add a reverse program to a graph (GradOf, AutogradZero, AutogradAdd).

# Note [The reverse block]
# `build_reverse` appends one `prim::Reverse` node to the graph. Its block takes the vjps of the
# graph outputs that need gradients and returns the gradients of the inputs that need them.
# It lives inside the forward graph, so its nodes read forward values directly, passes such as
# CSE and DCE see one program, and `--stage grad` prints it; lambda lifting later cuts it out
# into `df` and turns every forward value it reads into a capture. prim::Reverse is impure, so
# DCE never drops it. Its attributes make it self-describing: `output_vjps` lists the graph
# outputs whose vjps are the block's parameters, `input_grads` the graph inputs whose gradients
# are the block's results (and the node's outputs), so later passes need nothing but the IR.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from autodiff.checkpoints import checkpointed_nodes, recompute_checkpointed
from autodiff.control_flow import differentiate_if, differentiate_loop
from autodiff.custom_vjp import differentiate_custom_vjp, refusal_of_second_order
from autodiff.derivatives import Formula, formula_for
from autodiff.errors import DifferentiationError
from autodiff.gradient import gradient_name
from ir.analysis import REVERSE, constant_value, in_block, is_constant
from ir.graph import Block, Graph, Node, Value
from ir.ops import OPS
from ir.types import ANY, FLOAT, INT, NONE, STR, ListType, TensorType, TupleType, Type
from passes.autograd_zero import can_materialise
from passes.constant_propagation import inline_constant_branches
from passes.requires_grad import can_hold_gradient, values_requiring_grad

# Nodes that compute no gradient-carrying value, whatever their inputs.
_NO_GRADIENT = {"prim::Constant"}


@dataclass
class ReverseDetails:
    """What `build_reverse` built: the reverse node and, per forward value, its gradient."""

    reverse_node: Node
    grad_map: dict[Value, Value] = field(default_factory=dict)
    df_input_vjps: list[int] = field(default_factory=list)
    df_output_vjps: list[int] = field(default_factory=list)
    routes: list[Callable[[], None]] = field(default_factory=list)
    """What routes the forward values the reverses of branches and loop bodies read out of
    them, inner ones first (Note [Control-flow derivatives]): `route_forward_reads` runs
    them."""

    @property
    def reverse_block(self) -> Block:
        return self.reverse_node.blocks[0]


def build_reverse(
    graph: Graph, wrt: list[Value], *, materialise_zeros: bool = False
) -> ReverseDetails:
    """Append the reverse program of typed ``graph`` w.r.t. ``wrt`` (mutates ``graph``). The
    forward values it reads inside branches and loop bodies are not routed out yet: that is
    `route_forward_reads`, once the types of what the reverse added are propagated
    (`autodiff.pipeline.add_reverse` does both).

    Given:   graph(%x : Double(3)): %y = aten::tanh(%x); return (%y)
    Execute: build_reverse(graph, [%x])
    Result:  graph(%x : Double(3)):
               %y = aten::tanh(%x)
               %dx = prim::Reverse()
                 block0(%dy):
                   %dx.1 = prim::GradOf[name="aten::tanh"](%dy)
                     block0(): ... -> (...)
                   -> (%dx.1)
               return (%y)

    With ``materialise_zeros``, the gradient a value gets when nothing sends it one is zeros
    like it rather than the AUTOGRAD_ZERO sentinel wherever its type is an array type without
    a shape (a gradient graph built for generic argument types): see Note [Gradients of
    gradients at generic types] in `autodiff.higher_order`.

    See Note [The reverse block].
    """
    needs = values_requiring_grad(graph, wrt)
    reverse_node = graph.create(REVERSE, output_types=(), num_blocks=1)
    graph.block.append_node(reverse_node)
    details = ReverseDetails(reverse_node)
    builder = ReverseBuilder(
        graph, details.reverse_block, needs, graph.block, details.routes, materialise_zeros
    )
    builder.checkpointed = checkpointed_nodes(graph)  # Note [Checkpoints]
    details.grad_map = builder.grad_map

    # 1. One vjp parameter per output that needs a gradient.
    for index, output in enumerate(graph.outputs):
        if output in needs:
            vjp = details.reverse_block.add_input(output.ty, gradient_name(output) or "dout")
            builder.set_grad(output, vjp)
            details.df_input_vjps.append(index)

    # 2. Forward nodes in reverse order; each needing a gradient gets a GradOf.
    builder.differentiate([n for n in graph.nodes() if n is not reverse_node])

    # 3. The gradients of the differentiated inputs are the reverse block's results.
    for index, value in enumerate(graph.inputs):
        if value in needs and value in details.grad_map:
            details.reverse_block.register_output(details.grad_map[value])
            reverse_node.add_output(value.ty, gradient_name(value))
            details.df_output_vjps.append(index)
    reverse_node.attrs["output_vjps"] = list(details.df_input_vjps)
    reverse_node.attrs["input_grads"] = list(details.df_output_vjps)
    return details


def route_forward_reads(details: ReverseDetails) -> bool:
    """Route out of branches and loop bodies the forward values their reverses read, inner
    ones first. The graph's types must be propagated first, so that sizes they fix fold
    instead of being routed. True if there was anything to route (then the routed values'
    types want propagating again)."""
    for route in details.routes:
        route()
    return bool(details.routes)


class ReverseBuilder:
    """Builds the reverse of the nodes of one forward block (the graph's, a branch's or a loop
    body's) into one reverse block. ``grad_map`` holds the gradient, so far, of every value
    the reverse has sent one to: values of the forward block and, for a nested block, values
    from outside it, whose entries are this block's contributions (Note [Control-flow
    derivatives])."""

    def __init__(
        self,
        graph: Graph,
        block: Block,
        needs: set[Value],
        forward: Block,
        routes: list[Callable[[], None]],
        materialise_zeros: bool = False,
    ) -> None:
        self.graph = graph
        self.block = block
        self.needs = needs
        self.forward = forward
        self.materialise_zeros = materialise_zeros
        self.checkpointed: set[Node] = set()
        """The nodes of checkpointed calls, shared by the nested builders: Note
        [Checkpoints] in `autodiff.checkpoints`."""
        self.grad_map: dict[Value, Value] = {}
        # What `route_forward_reads` does once every reverse is built: Note [Control-flow
        # derivatives].
        self.routes = routes

    def nested(self, block: Block, forward: Block) -> ReverseBuilder:
        builder = ReverseBuilder(
            self.graph, block, self.needs, forward, self.routes, self.materialise_zeros
        )
        builder.checkpointed = self.checkpointed
        return builder

    def differentiate(self, forward_nodes: list[Node]) -> None:
        """The reverse of ``forward_nodes`` (listed before any is differentiated, since
        formulas add context nodes to the forward block)."""
        for node in reversed(forward_nodes):
            if any(out in self.needs for out in node.outputs) and node.kind not in _NO_GRADIENT:
                self.differentiate_node(node)
            elif node.kind == "prim::Draw" and any(v in self.needs for v in node.inputs):
                # positions drawn with probabilities that need a gradient (choice(n, p=p)):
                # an integer result carries none, but a zero would be a silent wrong gradient
                # (Note [Random draws] in `ir.ops.random`)
                why = OPS[node.kind].refused_because or "a random draw has no derivative"
                raise DifferentiationError(why, node.source_range)
        if self.checkpointed:
            recompute_checkpointed(self.graph, self.forward, self.block, self.checkpointed)

    def contributions(self) -> list[tuple[Value, Value]]:
        """The gradients this block sends to values defined outside its forward block."""
        return [
            (value, grad)
            for value, grad in self.grad_map.items()
            if not in_block(value.node, self.forward)
        ]

    def get_grad(self, value: Value) -> Value:
        grad = self.grad_map.get(value)
        if grad is None:
            with self.graph.inserting_at_end(self.block):
                if self.materialise_zeros and isinstance(value.ty, TensorType):
                    grad = self.zero_for(value)
                else:
                    grad = self.graph.insert("prim::AutogradZero", (), (value.ty,)).output
            self.grad_map[value] = grad
        return grad

    def zero_for(self, value: Value) -> Value:
        """A zero gradient for ``value`` that control flow may carry or return: the sentinel
        when ``value``'s type lets `specialize-autograd-zero` materialise it, and otherwise
        zeros like ``value`` itself (a generic gradient graph's), so that the sentinel never
        flows around a loop or out of one branch of an If at run time."""
        if can_materialise(value.ty):
            return self.graph.insert("prim::AutogradZero", (), (value.ty,)).output
        if isinstance(value.ty, TensorType):
            none = self.graph.insert_constant(None, NONE)
            return self.graph.insert("aten::zeros_like", (value, none), (value.ty,)).output
        return self.graph.insert("aten::_zeros_like_value", (value,), (value.ty,)).output

    def never_the_sentinel(self, value: Value, grad: Value) -> Value:
        """``grad`` (the gradient of ``value``) plus zeros like ``value``: what a reverse loop
        carries to its next iteration, which `specialize-autograd-zero` specialises assuming
        it is never AUTOGRAD_ZERO. When ``value``'s shape changes from one iteration to the
        next, a gradient that turns out to be zero (the gradient of a value only a condition
        reads) cannot be materialised from its type, so it is materialised from ``value``: the
        AutogradAdd becomes those zeros, or ``grad`` plus them, or stays a run-time check."""
        zeros = self.zero_for(value)
        total = self.graph.insert("prim::AutogradAdd", (grad, zeros), (value.ty,))
        total.output.name_hint = grad.name_hint
        return total.output

    def set_grad(self, value: Value, grad: Value) -> None:
        previous = self.grad_map.get(value)
        if previous is None:
            self.grad_map[value] = grad
            return
        with self.graph.inserting_at_end(self.block):
            total = self.graph.insert("prim::AutogradAdd", (previous, grad), (value.ty,))
        total.output.name_hint = gradient_name(value)
        self.grad_map[value] = total.output

    def differentiate_node(self, node: Node) -> None:
        if node.kind in ("prim::TupleConstruct", "prim::ListConstruct"):
            self.differentiate_tuple(node)
            return
        if node.kind in ("prim::TupleUnpack", "prim::TupleIndex"):
            self.differentiate_parts(node)
            return
        if node.kind == "prim::TupleSlice":
            self.differentiate_slice(node)
            return
        if node.kind == "prim::ListUnpack":
            self.differentiate_list_unpack(node)
            return
        if node.kind == "prim::If":
            differentiate_if(self, node)
            return
        if node.kind == "prim::Loop":
            differentiate_loop(self, node)
            return
        if node.kind == "prim::CustomVjp":
            differentiate_custom_vjp(self, node)
            return
        formula = formula_for(node)
        if formula is None:
            op = OPS.get(node.kind)
            why = op.refused_because if op is not None and op.refused_because else None
            if node.kind in ("prim::CustomVjpFwd", "prim::CustomVjpBwd"):
                why = refusal_of_second_order(node) or why
            message = why or f"{node.kind} is not differentiable"
            raise DifferentiationError(message, node.source_range)
        self.refuse_operands(node)
        context = self.inline_forward(node, formula)
        output_grads = [self.get_grad(out) for out in context.outputs]
        grad_of = self.graph.create(
            "prim::GradOf", output_grads, output_types=(), attrs={"name": node.kind}, num_blocks=1
        )
        grad_of.source_range = node.source_range
        self.block.append_node(grad_of)
        mapping = dict(zip(formula.backward.inputs, output_grads + context.saved, strict=True))
        grad_of.blocks[0]._clone_body(formula.backward.block, mapping, mapping.__getitem__)
        inline_constant_branches(self.graph, grad_of.blocks[0])
        _set_ranges(grad_of.blocks[0], node)
        body = grad_of.blocks[0]
        results = list(body.outputs)
        body.return_node.remove_all_inputs()
        involves_complex = _involves_complex(node)
        for position, (input_value, result) in enumerate(zip(context.inputs, results, strict=True)):
            if result.ty == NONE and input_value in self.needs:
                _check_no_gradient(node, position)
            if result.ty == NONE or input_value not in self.needs:
                continue
            if involves_complex:
                result = self.real_part_for(input_value, result, body)
            body.register_output(result)
            grad = grad_of.add_output(input_value.ty, gradient_name(input_value))
            self.set_grad(input_value, grad)
        for inner in body.nodes(reverse=True):  # the None gradients' constants
            if inner.kind == "prim::Constant" and not inner.has_uses():
                inner.destroy()

    def refuse_operands(self, node: Node) -> None:
        """Raise when an operand whose gradient the operator refuses needs one (Note [Refused
        operands] in `ir.ops.registry`): a zero would be a silent wrong gradient."""
        op = OPS.get(node.kind)
        if op is None or not op.refused_operands:
            return
        position = {argument.name: i for i, argument in enumerate(op.schema.arguments)}
        for name, why in op.refused_operands:
            if node.inputs[position[name]] in self.needs:
                raise DifferentiationError(why, node.source_range)

    def real_part_for(self, operand: Value, grad: Value, block: Block) -> Value:
        """``grad`` as the gradient of ``operand`` of a node that mixes real and complex values:
        in ``operand``'s dtype, its real part when ``operand`` is real (Note [Real operands of
        complex operators]). An array whose dtype is not known here (``s = 0`` then ``s +=
        x[i]`` in a loop: an int or a float64) is decided the same way at run time by
        `_grad_like`, which reads the operand's dtype (regression 128: the gradient of such a
        real value was left complex, and a Hessian was wrong)."""
        with self.graph.inserting_at_end(block):
            if operand.ty == FLOAT:
                return self.graph.insert("aten::real", (grad,), (TensorType(None, ()),)).output
            if isinstance(operand.ty, TensorType):
                return self.graph.insert("aten::_grad_like", (grad, operand), (operand.ty,)).output
        return grad

    def carried_start(self, value: Value) -> Value:
        """The gradient of ``value`` so far, to start a reverse loop's carried gradient."""
        grad = self.grad_map.get(value)
        if grad is None:
            with self.graph.inserting_at_end(self.block):
                grad = self.zero_for(value)
        return grad

    def differentiate_tuple(self, node: Node) -> None:
        """A tuple's gradient is a tuple of its elements' gradients: unpack it."""
        (tuple_grad,) = [self.get_grad(node.output)]
        grad_of = self.graph.create(
            "prim::GradOf", [tuple_grad], (), {"name": node.kind}, num_blocks=1
        )
        grad_of.source_range = node.source_range
        self.block.append_node(grad_of)
        with self.graph.inserting_at_end(grad_of.blocks[0]):
            types = [v.ty for v in node.inputs]
            unpack = (
                "prim::ListUnpack" if node.kind == "prim::ListConstruct" else "prim::TupleUnpack"
            )
            parts = self.graph.insert(unpack, [tuple_grad], types).outputs
        involves_complex = _involves_complex(node)
        for element, part in zip(node.inputs, parts, strict=True):
            if element in self.needs:
                if involves_complex:
                    part = self.real_part_for(element, part, grad_of.blocks[0])
                grad_of.blocks[0].register_output(part)
                self.set_grad(element, grad_of.add_output(element.ty, gradient_name(element)))

    def differentiate_parts(self, node: Node) -> None:
        """Parts of a tuple an operator returned (``a, b = np.split(x, 2)``, ``parts[1]``): the
        tuple's gradient is a tuple of its parts' gradients. A part that got none gets zeros of
        its shape and dtype, since the operator's formula reads every element; they fold to
        constants once shapes are specialised, so the part itself is not captured."""
        source = node.inputs[0]
        if not isinstance(source.ty, TupleType):
            raise DifferentiationError(
                f"cannot differentiate the parts of a value of type {source.ty}: its number of "
                "elements is only known at run time",
                node.source_range,
            )
        count = len(source.ty.elems)
        if node.kind == "prim::TupleIndex":
            if not is_constant(node.inputs[1]):
                raise DifferentiationError(
                    "cannot differentiate a tuple subscript whose index is only known at run time",
                    node.source_range,
                )
            read = {int(constant_value(node.inputs[1])) % count: node.output}
        else:
            read = dict(enumerate(node.outputs))
        grads = {i: self.grad_map[v] for i, v in read.items() if v in self.grad_map}
        if not grads:
            return
        self.tuple_gradient(
            node,
            source,
            list(grads.values()),
            lambda: [
                grads[i] if i in grads else self.zeros_of_part(source, i, read.get(i))
                for i in range(count)
            ],
        )

    def tuple_gradient(
        self,
        node: Node,
        source: Value,
        grads: list[Value],
        parts: Callable[[], list[Value]],
    ) -> None:
        """``source``'s gradient as a tuple of ``parts()`` (made inside a GradOf of ``grads``,
        so that it runs only when they are not AUTOGRAD_ZERO), at ``node``'s location."""
        grad_of = self.graph.create("prim::GradOf", grads, (), {"name": node.kind}, num_blocks=1)
        grad_of.source_range = node.source_range
        self.block.append_node(grad_of)
        body = grad_of.blocks[0]
        with self.graph.inserting_at_end(body):
            elements = parts()
            types = TupleType(tuple(part.ty for part in elements))
            tuple_grad = self.graph.insert("prim::TupleConstruct", elements, (types,)).output
        _set_ranges(body, node)
        body.register_output(tuple_grad)
        self.set_grad(source, grad_of.add_output(source.ty, gradient_name(source)))

    def differentiate_slice(self, node: Node) -> None:
        """``parts[1:]`` of a tuple an operator returned (``np.split(x, 3)[1:]``): each element
        of the slice gives its gradient to the element of the tuple it is, and the others get
        zeros, as in `differentiate_parts`."""
        source, grad = node.inputs[0], self.grad_map.get(node.output)
        if grad is None:
            return
        bounds = node.inputs[1:]
        if not isinstance(source.ty, TupleType) or not all(is_constant(v) for v in bounds):
            raise DifferentiationError(
                "cannot differentiate a tuple slice whose length or bounds are only known at "
                "run time",
                node.source_range,
            )
        count = len(source.ty.elems)
        taken = range(count)[slice(*(constant_value(v) for v in bounds))]
        elems = source.ty.elems

        def parts() -> list[Value]:
            types = [elems[i] for i in taken]
            pieces = self.graph.insert("prim::TupleUnpack", [grad], types).outputs if types else []
            by_position = dict(zip(taken, pieces, strict=True))
            return [
                by_position[i] if i in by_position else self.zeros_of_part(source, i, None)
                for i in range(count)
            ]

        self.tuple_gradient(node, source, [grad], parts)

    def differentiate_list_unpack(self, node: Node) -> None:
        """``a, b = hs`` on a list: the list's gradient is the list of its parts' gradients.
        Note [Lists are values] in `ir.ops.prim`: a list gradient never holds the sentinel, so
        each part's gradient is added to zeros like the part (``prim::AutogradAdd`` of zeros
        and the sentinel is the zeros), and a part that got none is those zeros."""
        source = node.inputs[0]
        grads = [self.grad_map.get(part) for part in node.outputs]
        known = [grad for grad in grads if grad is not None]
        if not known:
            return
        grad_of = self.graph.create("prim::GradOf", known, (), {"name": node.kind}, num_blocks=1)
        grad_of.source_range = node.source_range
        self.block.append_node(grad_of)
        body = grad_of.blocks[0]
        with self.graph.inserting_at_end(body):
            parts = []
            for grad, part in zip(grads, node.outputs, strict=True):
                zeros = self.zeros_like_part(part)
                if grad is not None:
                    zeros = self.graph.insert("prim::AutogradAdd", (zeros, grad), (part.ty,)).output
                parts.append(zeros)
            list_grad = self.graph.insert("prim::ListConstruct", parts, (source.ty,)).output
        _set_ranges(body, node)
        body.register_output(list_grad)
        self.set_grad(source, grad_of.add_output(source.ty, gradient_name(source)))

    def zeros_like_part(self, part: Value) -> Value:
        """Insert zeros like ``part``, an element of a list: an array's are ``aten::zeros`` of
        its shape and dtype (constants once shapes are specialised); a tuple's (``params =
        [(W1, b1), (W2, b2)]``), which has no shape, the same tuple of zeros made at run time."""
        if isinstance(part.ty, TupleType | ListType):
            return self.graph.insert("aten::_zeros_like_value", (part,), (part.ty,)).output
        shape = self.graph.insert("aten::shape", (part,), (ANY,)).output
        dtype = self.graph.insert("aten::_dtype_of", (part,), (STR,)).output
        return self.graph.insert("aten::zeros", (shape, dtype), (part.ty,)).output

    def zeros_of_part(self, source: Value, index: int, part: Value | None) -> Value:
        """Insert zeros like element ``index`` of the tuple ``source`` (``part`` when the
        forward already unpacked it)."""
        assert isinstance(source.ty, TupleType)
        ty = source.ty.elems[index]
        if not can_hold_gradient(ty):
            # Note [Trimmed gradients]: a part that cannot carry a gradient (the indices next
            # to a max, frexp's integer exponent) gets None, not zeros, as TorchScript's
            # needTrimGrad drops them; its operator's formula ignores that part.
            return self.graph.insert_constant(None, NONE)
        if ty == FLOAT:
            return self.graph.insert_constant(0.0, FLOAT)
        if not isinstance(ty, TensorType) and ty is not ANY:
            return self.graph.insert_constant(None, NONE)
        if part is None:
            position = self.graph.insert_constant(index, INT)
            part = self.graph.insert("prim::TupleIndex", (source, position), (ty,)).output
        shape = self.graph.insert("aten::shape", (part,), (ANY,)).output
        dtype = self.graph.insert("aten::_dtype_of", (part,), (STR,)).output
        return self.graph.insert("aten::zeros", (shape, dtype), (ty,)).output

    def inline_forward(self, node: Node, formula: Formula) -> _Inlined:
        """Add the formula's forward after ``node``; return its outputs and saved context."""
        inputs = list(node.inputs)
        if formula.packs_variadic:
            fixed = len(OPS[node.kind].schema.arguments) - 1
            with self.graph.inserting_before(node):
                packed = self.graph.insert(
                    "prim::TupleConstruct",
                    inputs[fixed:],
                    (TupleType(tuple(v.ty for v in inputs[fixed:])),),
                    source_range=node.source_range,
                ).output
            inputs = [*inputs[:fixed], packed]
        # Note [Keeping the forward node]: the formula's forward is cloned just after ``node``
        # and ``node``'s own outputs stand in for the results it recomputes, so `f` keeps the
        # user's operators exactly (a Python-float prim::add stays one; a variadic aten::index
        # stays variadic) and the recomputation is left for DCE.
        values: dict[Value, Value] = dict(zip(formula.forward.inputs, inputs, strict=True))
        cloned: set[Value] = set()
        copies: list[Node] = []
        count = len(node.outputs)
        recomputations = _recomputations(formula, count)
        with self.graph.inserting_after(node):
            for inner in formula.forward.nodes():
                if inner in recomputations:
                    # Its copy would stand in for ``node``'s outputs and be destroyed below, so
                    # the outputs are used directly (issue #8: a node fewer per operation).
                    for out in inner.outputs:
                        values[out] = node.outputs[formula.forward.outputs.index(out)]
                    continue
                copy = self.graph.create_clone(inner, values.__getitem__)
                copy.source_range = node.source_range
                self.graph.insert_node(copy)
                values.update(zip(inner.outputs, copy.outputs, strict=True))
                cloned.update(copy.outputs)
                copies.append(copy)
        results = [values[v] for v in formula.forward.outputs]
        standing_in: dict[Value, Value] = {}
        for original, recomputed in zip(node.outputs, results[:count], strict=True):
            if recomputed in cloned:
                recomputed.replace_all_uses_with(original)
                standing_in[recomputed] = original
        saved = [standing_in.get(v, v) for v in results[count:]]
        saved_set = set(saved)
        for copy in reversed(copies):  # the recomputations nothing reads any more
            if not copy.has_uses() and not copy.blocks and saved_set.isdisjoint(copy.outputs):
                copies.remove(copy)
                copy.destroy()
        if node in self.checkpointed:  # its saved context is recomputed with it
            self.checkpointed.update(copies)
        return _Inlined(inputs, list(node.outputs), saved)


_RECOMPUTATIONS: dict[tuple[Formula, int], frozenset[Node]] = {}


def _recomputations(formula: Formula, count: int) -> frozenset[Node]:
    """The nodes of ``formula``'s forward that only recompute the results its first ``count``
    outputs are, each once: `ReverseBuilder.inline_forward` would clone each, make the
    differentiated node's outputs stand in for it, and destroy it."""
    key = (formula, count)
    found = _RECOMPUTATIONS.get(key)
    if found is None:
        results = formula.forward.outputs[:count]
        once = set(results) if len(set(results)) == len(results) else set()
        found = frozenset(
            inner
            for inner in formula.forward.nodes()
            if inner.outputs and not inner.blocks and all(out in once for out in inner.outputs)
        )
        _RECOMPUTATIONS[key] = found
    return found


# Note [No gradient is not a zero gradient]
# A formula returns None for an operand to say that it gives it no gradient. For an integer, a
# string or an index that is exact, and such operands never need one. For an operand that does
# (a float a user differentiates with respect to) None would read as a zero gradient, and a
# zero is wrong wherever the result varies with it: np.gradient's spacing, the ord of a norm,
# the order of a Bessel function (tests/unit/test_no_gradient.py). So a None there is refused,
# naming the operand, unless the operator's record lists it in ``read_for_type``: a backward
# helper's ``like`` operand, read for its shape and dtype only, whose gradient is exactly 0.


def _check_no_gradient(node: Node, position: int) -> None:
    op = OPS.get(node.kind)
    arguments = op.schema.arguments if op is not None else ()
    name = arguments[position].name if position < len(arguments) else f"#{position}"
    if op is not None and name in op.read_for_type:
        return
    raise DifferentiationError(
        f"{node.kind} is not differentiable with respect to its operand '{name}': differentiate "
        "with respect to its other operands only, or pass it as a constant",
        node.source_range,
    )


# Note [Real operands of complex operators]
# A formula is written once for real and complex operands: ``mul``'s ``dout * other`` is complex
# when ``other`` is, even where ``self`` is real. The gradient of a real operand is the real
# part of that (Note [Complex gradients] in `autodiff.formulas`: the imaginary part is the
# derivative along a direction the operand cannot move in), so a node whose operands or results
# mix real and complex dtypes (a tuple holding both counts) gets the real part of each real
# operand's gradient in the reverse, as JAX's transpose of `convert_element_type` takes it, and
# each complex operand's gradient in its complex dtype (a helper that casts to a real operand's
# dtype gives a real one). Without it, the gradient
# of a real argument was complex inside the reverse program: a nested `ad.vjp(ad.grad(f))`
# returned it complex, and a Python float's crashed in the final cast.


def _may_be_complex(ty: Type) -> bool:
    """A complex array, an array of unknown dtype, or a tuple or list holding one."""
    if isinstance(ty, TensorType):
        return ty.dtype is None or np.dtype(ty.dtype).kind == "c"
    if isinstance(ty, TupleType):
        return any(_may_be_complex(elem) for elem in ty.elems)
    if isinstance(ty, ListType):
        return _may_be_complex(ty.elem)
    return False


def _involves_complex(node: Node) -> bool:
    """Whether some operand or result of ``node`` is complex, or an array of a dtype not known
    here, which may be (then a real operand's gradient needs its real part taken, and a
    complex one's may need its dtype back). ``y = x * conj(z)`` for a complex ``z`` and an
    ``x`` of unknown dtype is complex but typed without a dtype, and so is what reads it
    next: regression 128's Hessian came out doubled when a real operand of that next node
    kept a complex gradient."""
    return any(_may_be_complex(v.ty) for v in (*node.inputs, *node.outputs))


@dataclass
class _Inlined:
    inputs: list[Value]
    outputs: list[Value]
    saved: list[Value]


def _set_ranges(block: Block, origin: Node) -> None:
    """Every node of a GradOf keeps the forward node's source range (for error messages),
    tagged with the forward operator (`SourceRange.gradient_of`, for anomaly mode and the
    profiler)."""
    tagged = origin.source_range and origin.source_range.of_gradient(origin.kind)
    for inner in block.nodes():
        inner.source_range = tagged
        for nested in inner.blocks:
            _set_ranges(nested, origin)
