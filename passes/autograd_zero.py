"""AutogradZero specialisation: decide at compile time which gradients are known to be zero, so
the reverse program loses its prim::GradOf guards and prim::AutogradAdd checks where it can.

Each value gets a state: ZERO (always `AUTOGRAD_ZERO` at run time), NONZERO (never), or
UNKNOWN. With those states, in program order and inside nested blocks too:

1. prim::AutogradAdd with a ZERO operand becomes its other operand (zero + zero is zero); with
   two NONZERO tensor operands it becomes an ordinary ``aten::add``, as in TorchScript, and
   with two NONZERO tuples of them one ``aten::add`` per element;
2. a prim::GradOf whose inputs are all ZERO is replaced by one prim::AutogradZero per output;
3. a prim::GradOf whose inputs are all ZERO or NONZERO, one at least NONZERO, is unwrapped (its
   block runs for sure): inside the block each ZERO input is replaced by a materialised zero
   (``aten::zeros`` with the shape and dtype of its type), then the block's nodes take the
   node's place and its results replace the node's outputs. When a zero cannot be
   materialised (its type is not complete) the GradOf stays, and so does one with an UNKNOWN
   input;
4. a result of the prim::Reverse block that is ZERO becomes a materialised zero of the matching
   graph input's type, so callers get arrays and never the sentinel.

# Note [Which values can be AUTOGRAD_ZERO]
# Only prim::AutogradZero creates the sentinel. prim::GradOf, prim::AutogradAdd, prim::If and
# prim::Loop pass it on, and so may ops that hand back an element of a sequence or call a
# function; every other operator produces an ordinary value. Graph inputs and the parameters of
# the prim::Reverse block (the vjps) are never the sentinel: `autodiff.runtime` passes a zero
# array for a missing vjp, which is what makes unwrapping a GradOf fed by a vjp sound.
"""

from __future__ import annotations

import enum

from ir.analysis import REVERSE, is_within
from ir.graph import PARAM, Block, Graph, Node, Value
from ir.ops import OPS
from ir.source import SourceRange
from ir.types import FLOAT, INT, STR, ListType, TensorType, TupleType, Type
from passes.registry import register_pass

AUTOGRAD_ZERO = "prim::AutogradZero"
AUTOGRAD_ADD = "prim::AutogradAdd"
GRAD_OF = "prim::GradOf"

# See Note [Which values can be AUTOGRAD_ZERO]: these may return one of their operands' parts.
_MAY_FORWARD_ZERO = frozenset(
    {
        "prim::CallFunction",
        "prim::TupleUnpack",
        "prim::TupleIndex",
        "prim::ListUnpack",
        "prim::ListIndex",
    }
)


# They read elements of a list, which are never the sentinel when the list itself is not.
_LIST_ELEMENTS = frozenset({"prim::ListIndex", "prim::ListUnpack"})


class State(enum.Enum):
    ZERO = "zero"
    NONZERO = "nonzero"
    UNKNOWN = "unknown"


@register_pass("specialize-autograd-zero")
def specialize_autograd_zero(graph: Graph) -> bool:
    """Resolve AutogradAdd and GradOf nodes whose inputs are known zero or known nonzero.

    Given:   %z = prim::AutogradZero()
             %g = prim::AutogradAdd(%z, %a)              (%a an array)
             %d = prim::GradOf[name="aten::neg"](%g)
               block0():
                 %n = aten::neg(%g)
                 -> (%n)
    Execute: specialize_autograd_zero(graph)
    Result:  %n = aten::neg(%a)
             (uses of %d read %n)
    """
    specializer = _Specializer(graph)
    specializer.visit_block(graph.block)
    for node in graph.nodes():
        if node.kind == REVERSE:
            specializer.materialise_results(node)
    return specializer.changed


def zeros_for(graph: Graph, ty: Type, source_range: SourceRange | None = None) -> Value | None:
    """Insert, at the insertion point, a zero of type ``ty`` (``aten::zeros`` of its shape and
    dtype for a complete tensor type, ``0.`` for a float); None when ``ty`` does not say."""
    if isinstance(ty, TensorType) and ty.is_complete and ty.dtype is not None:
        dims = tuple(d for d in ty.shape or () if d is not None)
        shape = graph.insert_constant(dims, TupleType((INT,) * len(dims)), source_range)
        dtype = graph.insert_constant(ty.dtype, STR, source_range)
        zeros = graph.insert("aten::zeros", (shape, dtype), (ty,), source_range=source_range)
        return zeros.output
    if ty == FLOAT:
        return graph.insert_constant(0.0, FLOAT, source_range)
    return None


def _made_by_a_kernel(value: Value) -> bool:
    """Whether an operator's kernel made ``value``, or the tuple it was unpacked from (a
    double backward's nested gradients): then no part of it is the sentinel."""
    producer = value.node
    if producer.kind in ("prim::TupleUnpack", "prim::TupleIndex"):
        return _made_by_a_kernel(producer.inputs[0])
    if producer.kind in ("prim::TupleConstruct", "prim::ListConstruct"):
        return False
    op = OPS.get(producer.kind)
    return op is not None and op.kernel is not None and producer.kind not in _MAY_FORWARD_ZERO


def _addable(a: Type, b: Type) -> bool:
    """Two gradients that ``aten::add`` sums: arrays, or tuples of them (perhaps nested), or
    two lists (``aten::_add_lists``, element by element)."""
    if isinstance(a, TensorType) and isinstance(b, TensorType):
        return True
    if isinstance(a, ListType) and isinstance(b, ListType):
        return True
    return (
        isinstance(a, TupleType)
        and isinstance(b, TupleType)
        and len(a.elems) == len(b.elems)
        and all(_addable(x, y) for x, y in zip(a.elems, b.elems, strict=True))
    )


def can_materialise(ty: Type) -> bool:
    return (isinstance(ty, TensorType) and ty.is_complete) or ty == FLOAT


def _zero_type(zero: Value, joined: Type) -> Type | None:
    """The type to materialise the zero gradient ``zero`` with, where an If or a Loop returns
    it as ``joined`` (None when neither says a shape): ``joined`` when complete, else the zero's
    own, which prim::AutogradZero has from the value it is the gradient of. ``joined`` may be
    wider than either (``Tensor()`` where the other branch's gradient lost its dtype), and the
    zero still has its value's shape."""
    if can_materialise(joined):
        return joined
    if zero.node.kind == AUTOGRAD_ZERO and can_materialise(zero.ty):
        return zero.ty
    return None


class _Specializer:
    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.states: dict[Value, State] = {}
        self.changed = False

    def state(self, value: Value) -> State:
        found = self.states.get(value)
        if found is not None:
            return found
        if value.node.kind == PARAM and value.node.owning_block is self.graph.block:
            return State.NONZERO  # See Note [Which values can be AUTOGRAD_ZERO]
        return State.UNKNOWN

    def visit_block(self, block: Block) -> None:
        for node in block.nodes():  # fetches the next node first: destroying `node` is safe
            self.visit(node)

    def visit(self, node: Node) -> None:
        kind = node.kind
        if kind == AUTOGRAD_ZERO:
            self.states[node.output] = State.ZERO
        elif kind == AUTOGRAD_ADD:
            self.autograd_add(node)
        elif kind == GRAD_OF:
            self.grad_of(node)
        elif kind == "prim::If":
            self.branches(node)
        elif kind == "prim::Loop":
            self.loop(node)
        elif kind == REVERSE:
            body = node.blocks[0]
            for param in body.inputs:
                self.states[param] = State.NONZERO
            self.visit_block(body)
        elif kind == "prim::TupleUnpack" and self.unpacks_known_parts(node):
            return
        elif kind == "prim::TupleIndex" and self.within_a_list(node.inputs[0]):
            self.states[node.output] = State.NONZERO
        elif kind in _LIST_ELEMENTS and self.state(node.inputs[0]) is State.NONZERO:
            # Note [Lists are values] in `ir.ops.prim`: a list never holds the sentinel.
            for out in node.outputs:
                self.states[out] = State.NONZERO
        else:
            for inner in node.blocks:
                self.visit_block(inner)
            ordinary = kind in OPS and kind not in _MAY_FORWARD_ZERO
            for out in node.outputs:
                self.states[out] = State.NONZERO if ordinary else State.UNKNOWN

    def unpacks_known_parts(self, node: Node) -> bool:
        """Give a TupleUnpack's outputs the states of the parts it unpacks, when known: those
        of a TupleConstruct's operands, or ordinary values when an operator's kernel made the
        tuple (kernels never return the sentinel)."""
        producer = node.inputs[0].node
        if producer.kind == "prim::TupleConstruct":
            for out, part in zip(node.outputs, producer.inputs, strict=True):
                self.states[out] = self.state(part)
            return True
        if _made_by_a_kernel(node.inputs[0]) or self.within_a_list(node.inputs[0]):
            for out in node.outputs:
                self.states[out] = State.NONZERO
            return True
        return False

    def within_a_list(self, value: Value) -> bool:
        """Whether ``value`` is an element of a list that is not the sentinel, or a part of
        one (``params[i][0]`` of ``params = [(W1, b1), ...]``): Note [Lists are values] in
        `ir.ops.prim`, a list holds no sentinel at any depth."""
        producer = value.node
        if producer.kind in _LIST_ELEMENTS:
            return self.state(producer.inputs[0]) is State.NONZERO
        if producer.kind in ("prim::TupleUnpack", "prim::TupleIndex"):
            return self.within_a_list(producer.inputs[0])
        return False

    # -- control flow ------------------------------------------------------------------------

    def branches(self, node: Node) -> None:
        """An output is ZERO when every branch returns ZERO. When some do and the others
        return NONZERO, the ZERO ones return a materialised zero instead, so that the output
        is never the sentinel at run time (the gradient a reverse branch sends to a value only
        the other branch uses: Note [Control-flow derivatives] in `autodiff.control_flow`)."""
        for inner in node.blocks:
            self.visit_block(inner)
        for index, out in enumerate(node.outputs):
            states = {self.state(inner.outputs[index]) for inner in node.blocks}
            zero_types = [
                _zero_type(inner.outputs[index], out.ty)
                for inner in node.blocks
                if self.state(inner.outputs[index]) is State.ZERO
            ]
            if states == {State.ZERO, State.NONZERO} and None not in zero_types:
                for inner in node.blocks:
                    if self.state(inner.outputs[index]) is State.ZERO:
                        ty = _zero_type(inner.outputs[index], out.ty)
                        assert ty is not None
                        self.materialise_result(inner, index, ty, node)
                states = {State.NONZERO}
            self.states[out] = states.pop() if len(states) == 1 else State.UNKNOWN

    def loop(self, node: Node) -> None:
        """A carried value starting ZERO starts as a materialised zero instead; the body then
        runs with each carried value NONZERO when it starts so, and a body result that is ZERO
        for such a value is materialised too, so the value stays NONZERO in every iteration
        (the reverse loop's gradients and accumulators)."""
        body = node.blocks[0]
        self.states[body.inputs[0]] = State.NONZERO
        for offset, (initial, param) in enumerate(
            zip(node.inputs[2:], body.inputs[1:], strict=True)
        ):
            state = self.state(initial)
            if state is State.ZERO and can_materialise(initial.ty):
                with self.graph.inserting_before(node):
                    zero = zeros_for(self.graph, initial.ty, node.source_range)
                assert zero is not None
                zero.name_hint = initial.name_hint
                node.replace_input(2 + offset, zero)
                self.changed = True
                state = State.NONZERO
            self.states[param] = State.NONZERO if state is State.NONZERO else State.UNKNOWN
        self.visit_block(body)
        for offset, out in enumerate(node.outputs):
            param, result = body.inputs[1 + offset], body.outputs[1 + offset]
            steady = self.states[param] is State.NONZERO
            zero_type = _zero_type(result, param.ty)
            if steady and self.state(result) is State.ZERO and zero_type is not None:
                self.materialise_result(body, 1 + offset, zero_type, node)
            # An UNKNOWN result would break the assumption the body was specialised under;
            # with specialised shapes every zero can be materialised, and where a carried
            # value's shape changes per iteration the reverse adds zeros like it to its
            # gradient (`_ReverseBuilder.never_the_sentinel` in `autodiff.differentiate`).
            self.states[out] = State.NONZERO if steady else State.UNKNOWN

    def materialise_result(self, block: Block, index: int, ty: Type, node: Node) -> None:
        with self.graph.inserting_at_end(block):
            zero = zeros_for(self.graph, ty, node.source_range)
        assert zero is not None
        zero.name_hint = block.outputs[index].name_hint
        self.states[zero] = State.NONZERO
        block.return_node.replace_input(index, zero)
        self.changed = True

    # -- prim::AutogradAdd -----------------------------------------------------------------

    def autograd_add(self, node: Node) -> None:
        a, b = node.inputs
        state_a, state_b = self.state(a), self.state(b)
        if State.ZERO in (state_a, state_b):
            node.output.replace_all_uses_with(b if state_a is State.ZERO else a)
            node.destroy()
            self.changed = True
        elif state_a is State.NONZERO and state_b is State.NONZERO and _addable(a.ty, b.ty):
            with self.graph.inserting_before(node):
                total = self.add(a, b, node)
            total.name_hint = node.output.name_hint
            node.output.replace_all_uses_with(total)
            node.destroy()
            self.states[total] = State.NONZERO
            self.changed = True
        else:
            nonzero = State.NONZERO in (state_a, state_b)
            self.states[node.output] = State.NONZERO if nonzero else State.UNKNOWN

    def add(self, a: Value, b: Value, node: Node) -> Value:
        """``a + b`` as ``aten::add``, element by element for tuples of arrays (the gradients
        of a tuple operand that several nodes read, as a double backward's are) and for lists
        (whose length their type does not say: one ``aten::_add_lists``)."""
        if isinstance(a.ty, ListType) and isinstance(b.ty, ListType):
            # The sum has the type the gradient was given (the forward list's).
            ty = node.output.ty
            return self.graph.insert("aten::_add_lists", (a, b), (ty,)).copy_metadata(node).output
        if not isinstance(a.ty, TupleType) or not isinstance(b.ty, TupleType):
            add = self.graph.insert("aten::add", (a, b), (a.ty,)).copy_metadata(node)
            return add.output
        parts_a = self.graph.insert("prim::TupleUnpack", [a], a.ty.elems).outputs
        parts_b = self.graph.insert("prim::TupleUnpack", [b], b.ty.elems).outputs
        sums = [self.add(x, y, node) for x, y in zip(parts_a, parts_b, strict=True)]
        for total in sums:
            self.states[total] = State.NONZERO
        ty = TupleType(tuple(v.ty for v in sums))
        return self.graph.insert("prim::TupleConstruct", sums, (ty,)).copy_metadata(node).output

    # -- prim::GradOf ----------------------------------------------------------------------

    def grad_of(self, node: Node) -> None:
        states = [self.state(v) for v in node.inputs]
        if all(s is State.ZERO for s in states):
            self.replace_by_zeros(node)
            return
        zeros = [v for v, s in zip(node.inputs, states, strict=True) if s is State.ZERO]
        zero_inputs = list(dict.fromkeys(zeros))
        if State.UNKNOWN in states or not all(can_materialise(v.ty) for v in zero_inputs):
            self.visit_block(node.blocks[0])
            for out in node.outputs:
                self.states[out] = State.UNKNOWN
            return
        for zero in zero_inputs:
            self.materialise_inside(node, zero)
        self.visit_block(node.blocks[0])
        self.unwrap(node)

    def replace_by_zeros(self, node: Node) -> None:
        with self.graph.inserting_before(node):
            for out in node.outputs:
                zero = self.graph.insert(AUTOGRAD_ZERO, (), (out.ty,)).copy_metadata(node).output
                zero.name_hint = out.name_hint
                out.replace_all_uses_with(zero)
                self.states[zero] = State.ZERO
        node.destroy()
        self.changed = True

    def materialise_inside(self, node: Node, zero: Value) -> None:
        """Make the uses of ``zero`` inside ``node``'s block read a real zero array."""
        with self.graph.inserting_before(node):
            value = zeros_for(self.graph, zero.ty, node.source_range)
        assert value is not None  # the caller checked can_materialise
        value.name_hint = zero.name_hint
        self.states[value] = State.NONZERO
        for use in list(zero.uses):
            if is_within(use.user, node):
                use.user.replace_input(use.index, value)
        self.changed = True

    def unwrap(self, node: Node) -> None:
        """Move the block's nodes before ``node``; its results replace its outputs."""
        body = node.blocks[0]
        inner = {out for n in body.nodes() for out in n.outputs}
        for out, result in zip(node.outputs, node.hoist_block(0), strict=True):
            if result in inner and out.name_hint:
                # The gradient's name (``dh``, after its primal) over the formula's (grad_self).
                result.name_hint = out.name_hint
            out.replace_all_uses_with(result)
        node.destroy()
        self.changed = True

    # -- prim::Reverse results -------------------------------------------------------------

    def materialise_results(self, reverse: Node) -> None:
        body = reverse.blocks[0]
        input_grads = reverse.attrs.get("input_grads")
        for index, result in enumerate(list(body.outputs)):
            if self.state(result) is not State.ZERO:
                continue
            ty = result.ty
            if input_grads is not None and index < len(input_grads):
                ty = self.graph.inputs[input_grads[index]].ty
            if not can_materialise(ty):
                continue
            with self.graph.inserting_at_end(body):
                value = zeros_for(self.graph, ty, reverse.source_range)
            assert value is not None
            value.name_hint = reverse.outputs[index].name_hint if reverse.outputs else None
            body.return_node.replace_input(index, value)
            self.changed = True
