"""Symbolic differentiation: add a reverse program to a graph (GradOf, AutogradZero, AutogradAdd).

# Note [The reverse block]
# `add_reverse` appends one `prim::Reverse` node to the graph. Its block takes the vjps of the
# graph outputs that need gradients and returns the gradients of the inputs that need them.
# It lives inside the forward graph, so its nodes read forward values directly, passes such as
# CSE and DCE see one program, and `--stage grad` prints it; lambda lifting later cuts it out
# into `df` and turns every forward value it reads into a capture. prim::Reverse is impure, so
# DCE never drops it. Its attributes make it self-describing: `output_vjps` lists the graph
# outputs whose vjps are the block's parameters, `input_grads` the graph inputs whose gradients
# are the block's results (and the node's outputs), so later passes need nothing but the IR.

# Note [Control-flow derivatives]
# A prim::If's derivative is a prim::If on the same condition in the reverse program; branch b of
# it holds the reverse of forward branch b, and returns the gradients that branch sends to values
# defined outside it (zeros where the other branch sends one and this one does not; see
# `specialize-autograd-zero`). A prim::Loop's derivative is a prim::Loop that runs the same
# number of iterations backwards: its body is the reverse of the forward body, with the
# gradients of the carried values carried from one iteration to the one before, and the
# gradients of values from outside the loop (weights, say) summed in accumulators it carries
# too. Nothing is unrolled: the reverse program's size does not depend on the trip count.
#
# The reverse of a branch or a loop body reads forward values the body computed. Those are not
# visible outside it, so each is routed out (`_route_branch_reads`, `_route_loop_reads`): a
# branch returns it as one more prim::If output (its other branches return
# prim::Uninitialized); a loop writes it to a tape (Note [Loop tapes]). Values from outside a
# loop are read directly, once, however many iterations read them.

# Note [Loop tapes]
# Per iteration, the forward loop appends each value its reverse reads to a tape it carries: a
# list (prim::TapeList before the loop, prim::TapePush in the body), which the reverse loop reads
# at index ``trips - 1 - j`` in its iteration ``j`` (prim::ListIndex). The trip count is the
# loop's own count when it runs to it (no ``break``, not a ``while``), and otherwise one more
# value the loop carries. The loop's counter is never taped: in the reverse it is that index;
# constants and sizes the types fix are not taped either. Once types are specialised, the
# `stack-tapes` pass turns the tape of a fixed-shape value in a loop that runs its count into
# one preallocated array with a row per iteration. Tapes are filled in place, so memory grows
# by one copy of the saved values per iteration and the IR does not grow at all. Values from
# outside the loop (weights, say) are read directly: saved once, however many iterations read
# them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

import numpy as np

from autodiff.derivatives import Formula, formula_for
from autodiff.errors import DifferentiationError
from ir.analysis import REVERSE, constant_value, in_block, is_constant, runs_its_count
from ir.graph import Block, Graph, Node, Value
from ir.ops import NOT_CONSTANT, OPS
from ir.ops.views import not_one_element
from ir.types import (
    ANY,
    BOOL,
    FLOAT,
    INT,
    NONE,
    STR,
    ListType,
    TensorType,
    TupleType,
    Type,
    type_of_value,
)
from passes.autograd_zero import can_materialise
from passes.constant_propagation import inline_constant_branches
from passes.requires_grad import can_hold_gradient, values_requiring_grad
from passes.shape_propagation import propagate_shapes


def _recomputed(node: Node) -> bool:
    """Whether a reverse loop recomputes ``node`` instead of taping its result, when its operands
    come from outside the loop or the counter: an operator whose record says it is
    ``cheap_to_recompute`` (a constant, int arithmetic on the counter), a view that is always a
    view (Note [Views] in `ir.ops.views`), which costs no copy, or a read of one element.
    Cheaper than a tape write, and nothing is kept per iteration."""
    op = OPS.get(node.kind)
    if op is not None and op.cheap_to_recompute:
        return True
    rule = None if op is None else op.view
    if rule is None or rule.strided or rule.pieces:
        return False
    return rule.when(node) or not not_one_element(node)


# Nodes that compute no gradient-carrying value, whatever their inputs.
_NO_GRADIENT = {"prim::Constant"}


@dataclass
class ReverseDetails:
    """What `add_reverse` built: the reverse node and, per forward value, its gradient."""

    reverse_node: Node
    grad_map: dict[Value, Value] = field(default_factory=dict)
    df_input_vjps: list[int] = field(default_factory=list)
    df_output_vjps: list[int] = field(default_factory=list)
    routed: bool = False
    """Whether forward values were routed out of branches or loop bodies after the graph's
    types were last propagated (then they need propagating again)."""

    @property
    def reverse_block(self) -> Block:
        return self.reverse_node.blocks[0]


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


def add_reverse(
    graph: Graph, wrt: list[Value], *, materialise_zeros: bool = False
) -> ReverseDetails:
    """Append the reverse program of ``graph`` w.r.t. ``wrt`` (mutates ``graph``).

    Given:   graph(%x : Double(3)): %y = aten::tanh(%x); return (%y)
    Execute: add_reverse(graph, [%x])
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
    routes: list[Callable[[], None]] = []
    builder = _ReverseBuilder(
        graph, details.reverse_block, needs, graph.block, routes, materialise_zeros
    )
    details.grad_map = builder.grad_map

    # 1. One vjp parameter per output that needs a gradient.
    for index, output in enumerate(graph.outputs):
        if output in needs:
            vjp = details.reverse_block.add_input(output.ty, _grad_name(output) or "dout")
            builder.set_grad(output, vjp)
            details.df_input_vjps.append(index)

    # 2. Forward nodes in reverse order; each needing a gradient gets a GradOf.
    builder.differentiate([n for n in graph.nodes() if n is not reverse_node])

    # 3. The gradients of the differentiated inputs are the reverse block's results.
    for index, value in enumerate(graph.inputs):
        if value in needs and value in details.grad_map:
            details.reverse_block.register_output(details.grad_map[value])
            reverse_node.add_output(value.ty, _grad_name(value))
            details.df_output_vjps.append(index)
    reverse_node.attrs["output_vjps"] = list(details.df_input_vjps)
    reverse_node.attrs["input_grads"] = list(details.df_output_vjps)

    # 4. Route out of branches and loop bodies the forward values their reverses read, inner
    #    ones first, once types are known (so that sizes fold instead of being routed).
    propagate_shapes(graph)
    for route in routes:
        route()
    details.routed = bool(routes)
    return details


def _grad_name(value: Value) -> str | None:
    return f"d{value.name_hint}" if value.name_hint else None


class _ReverseBuilder:
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
        self.grad_map: dict[Value, Value] = {}
        # What `add_reverse` does once every reverse is built: Note [Control-flow derivatives].
        self.routes = routes

    def nested(self, block: Block, forward: Block) -> _ReverseBuilder:
        return _ReverseBuilder(
            self.graph, block, self.needs, forward, self.routes, self.materialise_zeros
        )

    def differentiate(self, forward_nodes: list[Node]) -> None:
        """The reverse of ``forward_nodes`` (listed before any is differentiated, since
        formulas add context nodes to the forward block)."""
        for node in reversed(forward_nodes):
            if any(out in self.needs for out in node.outputs) and node.kind not in _NO_GRADIENT:
                self.differentiate_node(node)

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
        total.output.name_hint = _grad_name(value)
        self.grad_map[value] = total.output

    def differentiate_node(self, node: Node) -> None:
        if node.kind in ("prim::TupleConstruct", "prim::ListConstruct"):
            self.differentiate_tuple(node)
            return
        if node.kind in ("prim::TupleUnpack", "prim::TupleIndex"):
            self.differentiate_parts(node)
            return
        if node.kind == "prim::ListUnpack":
            self.differentiate_list_unpack(node)
            return
        if node.kind == "prim::If":
            self.differentiate_if(node)
            return
        if node.kind == "prim::Loop":
            self.differentiate_loop(node)
            return
        formula = formula_for(node)
        if formula is None:
            raise DifferentiationError(f"{node.kind} is not differentiable", node.source_range)
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
        for input_value, result in zip(context.inputs, results, strict=True):
            if result.ty == NONE or input_value not in self.needs:
                continue
            if involves_complex:
                result = self.real_part_for(input_value, result, body)
            body.register_output(result)
            grad = grad_of.add_output(input_value.ty, _grad_name(input_value))
            self.set_grad(input_value, grad)
        for inner in body.nodes(reverse=True):  # the None gradients' constants
            if inner.kind == "prim::Constant" and not inner.has_uses():
                inner.destroy()

    def real_part_for(self, operand: Value, grad: Value, block: Block) -> Value:
        """``grad`` as the gradient of ``operand`` of a node that mixes real and complex values:
        in ``operand``'s dtype, its real part when ``operand`` is real (Note [Real operands of
        complex operators]); ``grad`` itself where the dtype is not known."""
        with self.graph.inserting_at_end(block):
            if operand.ty == FLOAT:
                return self.graph.insert("aten::real", (grad,), (TensorType(None, ()),)).output
            if isinstance(operand.ty, TensorType) and operand.ty.dtype is not None:
                return self.graph.insert("aten::_grad_like", (grad, operand), (operand.ty,)).output
        return grad

    def carried_start(self, value: Value) -> Value:
        """The gradient of ``value`` so far, to start a reverse loop's carried gradient."""
        grad = self.grad_map.get(value)
        if grad is None:
            with self.graph.inserting_at_end(self.block):
                grad = self.zero_for(value)
        return grad

    # -- prim::If ----------------------------------------------------------------------------

    def differentiate_if(self, node: Node) -> None:
        """A prim::If on the same condition whose branches hold the reverses of the forward
        branches. See Note [Control-flow derivatives].

        Given:   %y = prim::If(%c)
                   block0(): %a = aten::sin(%x) -> (%a)
                   block1(): -> (%x)
        Result:  (reverse)  %dx = prim::If(%c)
                              block0(): %dx.1 = prim::GradOf[name="aten::sin"](%dy) ...
                                        -> (%dx.1)
                              block1(): -> (%dy)
        """
        needed = [k for k, out in enumerate(node.outputs) if out in self.needs]
        output_grads = {k: self.get_grad(node.outputs[k]) for k in needed}
        reverse_if = self.graph.create("prim::If", [node.inputs[0]], (), num_blocks=2)
        reverse_if.source_range = node.source_range
        self.block.append_node(reverse_if)
        branches: list[_ReverseBuilder] = []
        for forward_branch, reverse_branch in zip(node.blocks, reverse_if.blocks, strict=True):
            branch = self.nested(reverse_branch, forward_branch)
            for k, grad in output_grads.items():
                branch.set_grad(forward_branch.outputs[k], grad)
            branch.differentiate(list(forward_branch.nodes()))
            branches.append(branch)
        # Every value a branch sends a gradient to, in a fixed order; a branch that sends it
        # none returns a zero, which `specialize-autograd-zero` materialises.
        receivers = list(dict.fromkeys(v for b in branches for v, _ in b.contributions()))
        for value in receivers:
            for branch in branches:
                found = branch.grad_map.get(value)
                if found is None:
                    with self.graph.inserting_at_end(branch.block):
                        found = branch.zero_for(value)
                branch.block.register_output(found)
            self.set_grad(value, reverse_if.add_output(value.ty, _grad_name(value)))
        for index, branch in enumerate(branches):
            self.routes.append(partial(_route_branch_reads, self.graph, node, index, branch.block))

    # -- prim::Loop --------------------------------------------------------------------------

    def differentiate_loop(self, node: Node) -> None:
        """A prim::Loop running the forward loop's iterations backwards. See Note
        [Control-flow derivatives] and Note [Loop tapes].

        Given:   %h.out = prim::Loop(%n, %true, %h0)
                   block0(%i, %h):
                     %h.1 = aten::tanh(%h) -> (%true, %h.1)
        Result:  (forward)  the loop also carries %h.1_tape, a TapeArray written per iteration
                 (reverse)  %dh0 = prim::Loop(%n, %true, %dh.out)
                              block0(%j, %dh.1):
                                %k = prim::sub(prim::sub(%n, 1), %j)
                                %h.1 = aten::select(%h.1_tape, 0, %k)
                                %dh = prim::GradOf[name="aten::tanh"](%dh.1) ... -> (%true, %dh)
        """
        body = node.blocks[0]
        params = body.inputs[1:]
        results = body.outputs[1:]
        carried = [k for k, param in enumerate(params) if param in self.needs]
        output_grads = [self.carried_start(node.outputs[k]) for k in carried]
        trips = _trip_count(self.graph, node)
        with self.graph.inserting_at_end(self.block):
            go_on = self.graph.insert_constant(True, BOOL, node.source_range)
        reverse_loop = self.graph.create(
            "prim::Loop", [trips, go_on, *output_grads], (), num_blocks=1
        )
        reverse_loop.source_range = node.source_range
        self.block.append_node(reverse_loop)
        reverse_body = reverse_loop.blocks[0]
        reverse_body.add_input(INT, "j")
        loop_body = self.nested(reverse_body, body)
        for k in carried:
            grad = reverse_body.add_input(params[k].ty, _grad_name(results[k]))
            loop_body.set_grad(results[k], grad)
        loop_body.differentiate(list(body.nodes()))

        with self.graph.inserting_at_end(reverse_body):
            reverse_body.register_output(self.graph.insert_constant(True, BOOL))
        for k in carried:
            found = loop_body.grad_map.get(params[k])
            with self.graph.inserting_at_end(reverse_body):
                if found is None:
                    found = loop_body.zero_for(params[k])
                elif isinstance(params[k].ty, TensorType) and not can_materialise(params[k].ty):
                    found = loop_body.never_the_sentinel(params[k], found)
            reverse_body.register_output(found)
            reverse_loop.add_output(params[k].ty, _grad_name(params[k]))
        # Accumulators: what the iterations send to values from outside the loop, summed.
        accumulated: list[Value] = []
        for value, contribution in loop_body.contributions():
            with self.graph.inserting_before(reverse_loop):
                zero = self.zero_for(value)
            reverse_loop.add_input(zero)
            total = reverse_body.add_input(value.ty, _grad_name(value))
            with self.graph.inserting_at_end(reverse_body):
                summed = self.graph.insert("prim::AutogradAdd", (total, contribution), (value.ty,))
            summed.output.name_hint = _grad_name(value)
            reverse_body.register_output(summed.output)
            accumulated.append(value)
            reverse_loop.add_output(value.ty, _grad_name(value))

        for k, grad in zip(carried, reverse_loop.outputs, strict=False):
            initial = node.inputs[2 + k]
            if initial in self.needs:
                self.set_grad(initial, grad)
        for value, grad in zip(accumulated, reverse_loop.outputs[len(carried) :], strict=True):
            self.set_grad(value, grad)
        self.routes.append(partial(_route_loop_reads, self.graph, node, reverse_loop, trips))

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
                self.set_grad(element, grad_of.add_output(element.ty, _grad_name(element)))

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
        grad_of = self.graph.create(
            "prim::GradOf", list(grads.values()), (), {"name": node.kind}, num_blocks=1
        )
        grad_of.source_range = node.source_range
        self.block.append_node(grad_of)
        body = grad_of.blocks[0]
        with self.graph.inserting_at_end(body):
            parts = [
                grads[i] if i in grads else self.zeros_of_part(source, i, read.get(i))
                for i in range(count)
            ]
            types = TupleType(tuple(part.ty for part in parts))
            tuple_grad = self.graph.insert("prim::TupleConstruct", parts, (types,)).output
        _set_ranges(body, node)
        body.register_output(tuple_grad)
        self.set_grad(source, grad_of.add_output(source.ty, _grad_name(source)))

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
        self.set_grad(source, grad_of.add_output(source.ty, _grad_name(source)))

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
                copy.destroy()
        return _Inlined(inputs, list(node.outputs), saved)


_RECOMPUTATIONS: dict[tuple[Formula, int], frozenset[Node]] = {}


def _recomputations(formula: Formula, count: int) -> frozenset[Node]:
    """The nodes of ``formula``'s forward that only recompute the results its first ``count``
    outputs are, each once: `_ReverseBuilder.inline_forward` would clone each, make the
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


def _is_complex(ty: Type) -> bool:
    if isinstance(ty, TensorType):
        return ty.dtype is not None and np.dtype(ty.dtype).kind == "c"
    if isinstance(ty, TupleType):
        return any(_is_complex(elem) for elem in ty.elems)
    if isinstance(ty, ListType):
        return _is_complex(ty.elem)
    return False


def _involves_complex(node: Node) -> bool:
    """Whether some operand or result of ``node`` is complex (then a real operand's gradient
    needs its real part taken, and a complex one's may need its dtype back)."""
    return any(_is_complex(v.ty) for v in (*node.inputs, *node.outputs))


@dataclass
class _Inlined:
    inputs: list[Value]
    outputs: list[Value]
    saved: list[Value]


def _forward_reads(reverse: Block, forward: Block) -> list[Value]:
    """The values of ``forward`` (its parameters and its nodes' outputs) read anywhere inside
    ``reverse``, once each, in the order first read."""
    found: dict[Value, None] = {}

    def visit(block: Block) -> None:
        for node in block.nodes():
            for value in node.inputs:
                note(value)
            for inner in node.blocks:
                visit(inner)
        for value in block.outputs:
            note(value)

    def note(value: Value) -> None:
        if value.owning_block is forward:
            found[value] = None
        elif in_block(value.node, forward):
            raise DifferentiationError(
                f"internal error: the reverse reads {value!r} from inside a nested block",
                value.node.source_range,
            )

    visit(reverse)
    return list(found)


def _replace_uses_within(value: Value, replacement: Value, block: Block) -> None:
    for use in list(value.uses):
        if in_block(use.user, block):
            use.user.replace_input(use.index, replacement)


def _known_at_compile_time(graph: Graph, value: Value, reverse: Block) -> bool:
    """When ``value`` is a constant, or a size its operands' types fix, make the reads of it in
    ``reverse`` read that constant instead (then nothing needs to be routed)."""
    node = value.node
    if node.kind == "prim::Constant":
        known, ty = node.attrs.get("value"), value.ty
    else:
        op = OPS.get(node.kind)
        if op is None or op.value_from_types is None or len(node.outputs) != 1:
            return False
        known = op.value_from_types([v.ty for v in node.inputs])
        if known is NOT_CONSTANT:
            return False
        ty = type_of_value(known)
    with graph.inserting_before(reverse.param_node.next):
        constant = graph.insert_constant(known, ty, node.source_range)
    _replace_uses_within(value, constant, reverse)
    return True


def _route_branch_reads(graph: Graph, forward_if: Node, index: int, reverse: Block) -> None:
    """Make the values of ``forward_if``'s branch ``index`` that ``reverse`` reads outputs of
    ``forward_if``: that branch returns them, the others prim::Uninitialized."""
    for value in _forward_reads(reverse, forward_if.blocks[index]):
        if _known_at_compile_time(graph, value, reverse):
            continue
        for position, branch in enumerate(forward_if.blocks):
            if position == index:
                branch.register_output(value)
                continue
            with graph.inserting_at_end(branch):
                placeholder = graph.insert("prim::Uninitialized", (), (value.ty,)).output
            branch.register_output(placeholder)
        routed = forward_if.add_output(value.ty, value.name_hint)
        _replace_uses_within(value, routed, reverse)


def _trip_count(graph: Graph, loop: Node) -> Value:
    """The number of iterations ``loop`` runs, as a value after it: its trip count when it
    runs to it, and otherwise a count it now carries."""
    if runs_its_count(loop):
        return loop.inputs[0]
    body = loop.blocks[0]
    with graph.inserting_before(loop):
        loop.add_input(graph.insert_constant(0, INT, loop.source_range))
    count = body.add_input(INT, "trips")
    with graph.inserting_at_end(body):
        one = graph.insert_constant(1, INT, loop.source_range)
        body.register_output(graph.insert("prim::add", (count, one), (INT,)).output)
    return loop.add_output(INT, "trips")


def _route_loop_reads(graph: Graph, loop: Node, reverse_loop: Node, trips: Value) -> None:
    """Tape the values of ``loop``'s body that ``reverse_loop``'s body reads, and read them
    back, iteration ``trips - 1 - j`` in reverse iteration ``j`` (Note [Loop tapes])."""
    body = loop.blocks[0]
    reverse_body = reverse_loop.blocks[0]
    reads = _forward_reads(reverse_body, body)
    if not reads:
        return
    counter = body.inputs[0]
    step = reverse_body.inputs[0]
    first = reverse_body.param_node.next
    with graph.inserting_before(first):
        one = graph.insert_constant(1, INT, loop.source_range)
        last = graph.insert("prim::sub", (trips, one), (INT,)).output
        iteration = graph.insert("prim::sub", (last, step), (INT,)).output
        iteration.name_hint = counter.name_hint or "k"
    recomputed: dict[Value, Value] = {counter: iteration}
    for value in reads:
        if _known_at_compile_time(graph, value, reverse_body):
            continue
        again = _recompute(graph, value, body, recomputed, first)
        if again is not None:
            _replace_uses_within(value, again, reverse_body)
            continue
        tape = _tape(graph, loop, value)
        with graph.inserting_before(first):
            read = graph.insert("prim::ListIndex", (tape, iteration), (value.ty,)).output
        read.name_hint = value.name_hint
        _replace_uses_within(value, read, reverse_body)


def _recompute(
    graph: Graph, value: Value, body: Block, copies: dict[Value, Value], before: Node
) -> Value | None:
    """A copy, before ``before`` in the reverse body, of what computes ``value`` in the loop
    ``body`` from values outside it and the counter (``copies`` maps it to the reverse's
    index) through views and int arithmetic only: ``xs[t]`` is read from ``xs`` again rather
    than taped. None when ``value`` is not computed that way."""
    if value in copies:
        return copies[value]
    if not in_block(value.node, body):
        return value
    node = value.node
    if node.owning_block is not body or not _recomputed(node):
        return None
    inputs: dict[Value, Value] = {}
    for operand in node.inputs:
        again = _recompute(graph, operand, body, copies, before)
        if again is None:
            return None
        inputs[operand] = again
    with graph.inserting_before(before):
        copy = graph.insert_node(graph.create_clone(node, inputs.__getitem__))
    copies.update(zip(node.outputs, copy.outputs, strict=True))
    return copies[value]


def _tape(graph: Graph, loop: Node, value: Value) -> Value:
    """Make ``loop`` carry a list that each iteration appends ``value`` to; return the list the
    loop ends with (`stack-tapes` makes it an array where it can)."""
    body = loop.blocks[0]
    hint = value.name_hint or "saved"
    name = hint if hint.endswith("_tape") else f"{hint}_tape"
    with graph.inserting_before(loop):
        start = graph.insert(
            "prim::TapeList", (), (ListType(value.ty),), source_range=loop.source_range
        ).output
    loop.add_input(start)
    carried = body.add_input(start.ty, name)
    with graph.inserting_at_end(body):
        pushed = graph.insert(
            "prim::TapePush", (carried, value), (start.ty,), source_range=loop.source_range
        )
    body.register_output(pushed.output)
    return loop.add_output(start.ty, name)


def _set_ranges(block: Block, origin: Node) -> None:
    """Every node of a GradOf keeps the forward node's source range (for error messages),
    tagged with the forward operator (`SourceRange.gradient_of`, for anomaly mode and the
    profiler)."""
    tagged = origin.source_range and origin.source_range.of_gradient(origin.kind)
    for inner in block.nodes():
        inner.source_range = tagged
        for nested in inner.blocks:
            _set_ranges(nested, origin)
