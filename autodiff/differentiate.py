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

# Note [Static control flow]
# The reverse program follows straight-line code. Control flow that a gradient flows through is
# straightened before differentiating, when its decisions are known at compile time: the Python
# int and bool arguments of such a function become constants of its compiled gradient (their
# values join the cache key, Note [Gradient cache] in `autodiff.grad`), constant propagation
# inlines the branch a prim::If on them takes, and `unroll_loops` unrolls each prim::Loop whose
# condition becomes a constant iteration after iteration (``for t in range(x.shape[0])``,
# ``for _ in range(k)``, ``while i < k``). A decision that depends on array data is refused at
# its ``if`` or loop: differentiating data-dependent control flow is not supported yet.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from autodiff.derivatives import Formula, formula_for
from autodiff.errors import DifferentiationError
from ir.graph import Block, Graph, Node, Value
from ir.ops import OPS
from ir.types import ANY, FLOAT, INT, NONE, STR, TensorType, TupleType
from passes.constant_propagation import constant_value, is_constant, propagate_constants
from passes.requires_grad import can_hold_gradient, values_requiring_grad

REVERSE = "prim::Reverse"

# Beyond this many iterations a loop is not unrolled: its reverse program would be as long.
MAX_UNROLLED_ITERATIONS = 1000

# Nodes that compute no gradient-carrying value, whatever their inputs.
_NO_GRADIENT = {"prim::Constant"}

# What is left of control flow once Note [Static control flow] has straightened what it can.
_CONTROL_FLOW = {
    "prim::If": "an if statement whose condition",
    "prim::Loop": "a loop whose number of iterations",
}


@dataclass
class ReverseDetails:
    """What `add_reverse` built: the reverse node and, per forward value, its gradient."""

    reverse_node: Node
    grad_map: dict[Value, Value] = field(default_factory=dict)
    df_input_vjps: list[int] = field(default_factory=list)
    df_output_vjps: list[int] = field(default_factory=list)

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


def add_reverse(graph: Graph, wrt: list[Value]) -> ReverseDetails:
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

    See Note [The reverse block].
    """
    needs = values_requiring_grad(graph, wrt)
    reverse_node = graph.create(REVERSE, output_types=(), num_blocks=1)
    graph.block.append_node(reverse_node)
    details = ReverseDetails(reverse_node)
    builder = _ReverseBuilder(graph, details, needs)

    # 1. One vjp parameter per output that needs a gradient.
    for index, output in enumerate(graph.outputs):
        if output in needs:
            vjp = details.reverse_block.add_input(output.ty, _grad_name(output) or "dout")
            builder.set_grad(output, vjp)
            details.df_input_vjps.append(index)

    # 2. Forward nodes in reverse order; each needing a gradient gets a GradOf.
    forward_nodes = [n for n in graph.nodes() if n is not reverse_node]
    for node in reversed(forward_nodes):
        if any(out in needs for out in node.outputs) and node.kind not in _NO_GRADIENT:
            builder.differentiate_node(node)

    # 3. The gradients of the differentiated inputs are the reverse block's results.
    for index, value in enumerate(graph.inputs):
        if value in needs and value in details.grad_map:
            details.reverse_block.register_output(details.grad_map[value])
            reverse_node.add_output(value.ty, _grad_name(value))
            details.df_output_vjps.append(index)
    reverse_node.attrs["output_vjps"] = list(details.df_input_vjps)
    reverse_node.attrs["input_grads"] = list(details.df_output_vjps)
    return details


def unroll_loops(graph: Graph, wrt: list[Value]) -> bool:
    """Unroll every top-level prim::Loop that a gradient w.r.t. ``wrt`` flows through, one
    iteration at a time while its condition folds to a constant. Returns True if changed.
    See Note [Static control flow].

    Given:   %c : int = prim::Constant[value=2]()
             %y = prim::Loop(%c, %true, %x)
               block0(%i : int, %h):
                 %h.1 = aten::sin(%h)
                 -> (%true, %h.1)
    Execute: unroll_loops(graph, [%x])
    Result:  %h.1 = aten::sin(%x)
             %h.2 = aten::sin(%h.1)       (%y is %h.2)
    """
    changed = False
    while True:
        needs = values_requiring_grad(graph, wrt)
        loop = next(
            (
                node
                for node in graph.nodes()
                if node.kind == "prim::Loop" and any(out in needs for out in node.outputs)
            ),
            None,
        )
        if loop is None:
            return changed
        _unroll(graph, loop)
        changed = True


def _unroll(graph: Graph, loop: Node) -> None:
    """Peel iterations off ``loop`` until constant propagation removes what remains of it."""
    propagate_constants(graph)
    iteration = 0
    while loop.in_block:
        if not (is_constant(loop.inputs[0]) and is_constant(loop.inputs[1])):
            raise DifferentiationError(
                "cannot differentiate through a loop whose number of iterations is only known "
                "at run time (data-dependent control flow is not supported yet)",
                loop.source_range,
            )
        if iteration == MAX_UNROLLED_ITERATIONS:
            raise DifferentiationError(
                f"cannot differentiate through a loop of more than {MAX_UNROLLED_ITERATIONS} "
                "iterations: it is unrolled, one copy of its body per iteration",
                loop.source_range,
            )
        _peel(graph, loop, iteration)
        propagate_constants(graph)
        iteration += 1


def _peel(graph: Graph, loop: Node, iteration: int) -> None:
    """Copy ``loop``'s body in front of it as iteration ``iteration``, and make the loop's
    operands describe the iterations still to run: constant propagation then drops the loop
    once its trip count reaches 0 or its condition is False, forwarding the carried values."""
    body = loop.blocks[0]
    counter, *params = body.inputs
    condition, *results = body.outputs
    copies: dict[Value, Value] = dict(zip(params, loop.inputs[2:], strict=True))

    def lookup(value: Value) -> Value:
        return copies.get(value, value)

    with graph.inserting_before(loop):
        copies[counter] = graph.insert_constant(iteration, INT, loop.source_range)
        remaining = int(constant_value(loop.inputs[0])) - 1
        loop.replace_input(0, graph.insert_constant(remaining, INT, loop.source_range))
        for inner in body.nodes():
            copy = graph.insert_node(graph.create_clone(inner, lookup))
            copies.update(zip(inner.outputs, copy.outputs, strict=True))
    loop.replace_input(1, lookup(condition))
    for offset, result in enumerate(results):
        loop.replace_input(2 + offset, lookup(result))


def _grad_name(value: Value) -> str | None:
    return f"d{value.name_hint}" if value.name_hint else None


class _ReverseBuilder:
    def __init__(self, graph: Graph, details: ReverseDetails, needs: set[Value]) -> None:
        self.graph = graph
        self.details = details
        self.needs = needs

    @property
    def block(self) -> Block:
        return self.details.reverse_block

    def get_grad(self, value: Value) -> Value:
        grad = self.details.grad_map.get(value)
        if grad is None:
            with self.graph.inserting_at_end(self.block):
                grad = self.graph.insert("prim::AutogradZero", (), (value.ty,)).output
            self.details.grad_map[value] = grad
        return grad

    def set_grad(self, value: Value, grad: Value) -> None:
        previous = self.details.grad_map.get(value)
        if previous is None:
            self.details.grad_map[value] = grad
            return
        with self.graph.inserting_at_end(self.block):
            total = self.graph.insert("prim::AutogradAdd", (previous, grad), (value.ty,))
        total.output.name_hint = _grad_name(value)
        self.details.grad_map[value] = total.output

    def differentiate_node(self, node: Node) -> None:
        if node.kind == "prim::TupleConstruct":
            self.differentiate_tuple(node)
            return
        if node.kind in ("prim::TupleUnpack", "prim::TupleIndex"):
            self.differentiate_parts(node)
            return
        if node.kind in _CONTROL_FLOW:
            raise DifferentiationError(
                f"cannot differentiate through {_CONTROL_FLOW[node.kind]} is only known at run "
                "time (data-dependent control flow is not supported yet)",
                node.source_range,
            )
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
        _set_ranges(grad_of.blocks[0], node)
        body = grad_of.blocks[0]
        results = list(body.outputs)
        body.return_node.remove_all_inputs()
        for input_value, result in zip(context.inputs, results, strict=True):
            if result.ty == NONE or input_value not in self.needs:
                continue
            body.register_output(result)
            grad = grad_of.add_output(input_value.ty, _grad_name(input_value))
            self.set_grad(input_value, grad)
        for inner in body.nodes(reverse=True):  # the None gradients' constants
            if inner.kind == "prim::Constant" and not inner.has_uses():
                inner.destroy()

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
            parts = self.graph.insert("prim::TupleUnpack", [tuple_grad], types).outputs
        for element, part in zip(node.inputs, parts, strict=True):
            if element in self.needs:
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
        grads = {i: self.details.grad_map[v] for i, v in read.items() if v in self.details.grad_map}
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
        with self.graph.inserting_after(node):
            for inner in formula.forward.nodes():
                copy = self.graph.create_clone(inner, values.__getitem__)
                copy.source_range = node.source_range
                self.graph.insert_node(copy)
                values.update(zip(inner.outputs, copy.outputs, strict=True))
                cloned.update(copy.outputs)
                copies.append(copy)
        results = [values[v] for v in formula.forward.outputs]
        count = len(node.outputs)
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


@dataclass
class _Inlined:
    inputs: list[Value]
    outputs: list[Value]
    saved: list[Value]


def _set_ranges(block: Block, origin: Node) -> None:
    """Every node of a GradOf keeps the forward node's source range (for error messages)."""
    for inner in block.nodes():
        inner.source_range = origin.source_range
        for nested in inner.blocks:
            _set_ranges(nested, origin)
