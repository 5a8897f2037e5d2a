"""Results that NumPy gives as an argument the function wrote to, or a view of one, derived
again from the argument after `functionalize` has written it back, so that they share its
memory as NumPy's do.

# Note [Returned arguments]
# NumPy's function returns the very array it was given, or a view of it, when it returns the
# argument (``return x``, ``x[1:]``, ``x.T``, ``np.flip(x)``, a reshape NumPy makes a view, a
# split's pieces, tuples and lists of them): the caller's later write into the result changes
# the argument. Functionalised, such a result reads the argument's final version ``%x.1``, a
# new array. So each result that is the final version of an argument written back, or a chain
# of view operators (Note [Views]) rooted at it, is derived again after the prim::WriteBack
# nodes from the argument itself, which holds the final contents by then:
# ``prim::WrittenArgument(%x.1, %x)`` gives ``%x`` (its derivative is ``%x.1``'s: the gradient
# stays w.r.t. the values passed in, and the result depends on them through the written
# version), then clones of the view nodes, whose kernels make NumPy's view of ``%x`` (a reshape
# NumPy's stride rule makes a copy is a copy again, as in NumPy). The operator is impure: no
# pass merges it with another, folds it or moves it; and it is not a call that returns a new
# array, so no memory plan writes into it or hands it to ``df`` as a private temporary (Note
# [Typed calls] in `ir.typed_calls`). Tuples and lists of results are built again from the
# derived elements.
#
# A result an If gives out is derived again in each branch where it is such a value, the
# branch's own version of the argument (what it gives out as the final version) being the root,
# and given out as one more output of the If, which only the return reads (the first one keeps
# its other readers, and DCE drops it when none is left): ``y = x[1:] if c else x * 2`` is the
# argument's view when ``c`` holds and a new array otherwise, as in NumPy. There the operator
# runs before the prim::WriteBack, which comes to the same: it gives the argument's own memory,
# which the WriteBack then fills, and nothing reads it before the function returns.
#
# A result a loop gives out is derived again the same way as one more carried value, which
# nothing in the body reads: at the end of the body from the body's versions of the arguments
# (those the last iteration gives out as the final ones; in an earlier iteration the derived
# value is the argument's memory too, which a view taken then would be in NumPy), and in front
# of the loop from the versions it starts with, the final ones when it runs no iteration. Where
# the body (or a branch in it) gives the carried value on unchanged, the derived one is given
# on unchanged too. Gradients flow through the derived value's prim::WrittenArgument to the
# version it was derived from, which is the final one whenever the loop gives it out: a
# carried value that an iteration gives on after writing the argument it may be a view of is
# refused where it is read (Note [Functionalisation]), so one given on unchanged comes from an
# iteration that did not write it.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager

from ir.graph import Block, Graph, Node, Value
from ir.ops.registry import OPS, Holds
from ir.ops.views import view_rule

WRITTEN_ARGUMENT = "prim::WrittenArgument"


def return_arguments(
    graph: Graph,
    written: dict[Value, Value],
    written_through: dict[Value, tuple[Value, tuple[Node, ...]]],
) -> None:
    """Derive the graph's results that NumPy gives as a written argument or a view of it from
    the argument itself (Note [Returned arguments]). ``written`` maps the final version of
    each argument written back to that argument; ``written_through`` each write's new contents
    of what it wrote to the base's version it made and the views from that base."""
    if written:
        block = graph.block
        rederive = _Rederivation(graph, block, written, written_through)
        for index, output in enumerate(list(block.outputs)):
            block.return_node.replace_input(index, rederive(output))


class _Rederivation:
    """Results of ``block`` derived again from the arguments: ``finals`` maps each value that
    is, in this block, the final version of an argument written back to that argument. New
    nodes go in front of ``before``, or at the end of ``block`` when it is None."""

    def __init__(
        self,
        graph: Graph,
        block: Block,
        finals: dict[Value, Value],
        written_through: dict[Value, tuple[Value, tuple[Node, ...]]],
        before: Node | None = None,
        carried: dict[Value, Value] | None = None,
    ) -> None:
        self.graph = graph
        self.block = block
        self.finals = finals
        self.written_through = written_through
        self.before = before
        # A loop-carried parameter -> the parameter of the loop's carried value derived again
        # for it, which holds what the previous iteration gave derived again.
        self.carried = carried or {}
        self.derived: dict[Value, Value] = {}

    def __call__(self, value: Value) -> Value:
        found = self.derived.get(value)
        if found is None:
            found = self.derived[value] = self.rederive(value)
        return found

    def inserting(self) -> AbstractContextManager[None]:
        if self.before is None:
            return self.graph.inserting_at_end(self.block)
        return self.graph.inserting_before(self.before)

    def nested(
        self,
        block: Block,
        finals: dict[Value, Value],
        before: Node | None = None,
        carried: dict[Value, Value] | None = None,
    ) -> _Rederivation:
        return _Rederivation(self.graph, block, finals, self.written_through, before, carried)

    def rederive(self, value: Value) -> Value:
        if value in self.carried:
            return self.carried[value]
        node = value.node
        chain = _view_chain(value, self.finals)
        if chain is None and value in self.written_through:
            # What a write through a view wrote, read where its base's version is the final
            # one (a stale one would have been derived again where it was read).
            version, through = self.written_through[value]
            if version in self.finals:
                chain = version, list(through)
        if chain is not None:
            root, views = chain
            argument = self.finals[root]
            if root is argument:
                return value  # a branch that did not write: the argument already
            if views:
                return self.clone_views(views, self(root))
            with self.inserting():
                derived = self.graph.insert(WRITTEN_ARGUMENT, (root, argument), (root.ty,))
            derived.output.name_hint = argument.name_hint
            return derived.output
        if node.owning_block is not self.block:
            return value
        if (op := OPS.get(node.kind)) is not None and op.holds is Holds.PACKED:
            elements = [self(element) for element in node.inputs]
            if all(new is old for new, old in zip(elements, node.inputs, strict=True)):
                return value
            with self.inserting():
                return self.graph.insert(node.kind, elements, (value.ty,)).output
        if node.kind == "prim::If":
            return self.branches(node, node.outputs.index(value))
        if node.kind == "prim::Loop":
            return self.loop(node, node.outputs.index(value))
        return value

    def branches(self, node: Node, index: int) -> Value:
        """The If's result at ``index`` derived again in each branch, given out as one more
        output of the If: it runs before the prim::WriteBack, which is the same as after it,
        since it gives the argument's own memory and only the return reads it."""
        derived = []
        for branch in node.blocks:
            finals = dict(self.finals)
            for output, given in zip(node.outputs, branch.outputs, strict=True):
                if output in self.finals:
                    finals[given] = self.finals[output]
            rederivation = self.nested(branch, finals, carried=self.carried)
            derived.append(rederivation(branch.outputs[index]))
        result = node.outputs[index]
        if all(
            new is branch.outputs[index] for new, branch in zip(derived, node.blocks, strict=True)
        ):
            return result
        for branch, new in zip(node.blocks, derived, strict=True):
            branch.register_output(new)
        return node.add_output(result.ty, result.name_hint)

    def loop(self, node: Node, position: int) -> Value:
        """The loop's carried result at ``position`` derived again, given out as one more
        carried value of the loop that nothing in the body reads: at the end of the body from
        the body's own versions of the arguments (the final ones after the last iteration),
        and, for a loop that runs no iteration, in front of the loop from the versions it
        starts with (the final ones then)."""
        body = node.blocks[0]
        body_finals, initial_finals = dict(self.finals), dict(self.finals)
        for index, output in enumerate(node.outputs):
            if output in self.finals:
                body_finals[body.outputs[1 + index]] = self.finals[output]
                initial_finals[node.inputs[2 + index]] = self.finals[output]
        param = body.inputs[1 + position]
        carried = {**self.carried, param: body.add_input(param.ty, param.name_hint)}
        result = self.nested(body, body_finals, carried=carried)(body.outputs[1 + position])
        initial = self.nested(self.block, initial_finals, node, self.carried)(
            node.inputs[2 + position]
        )
        output = node.outputs[position]
        if result is body.outputs[1 + position] and initial is node.inputs[2 + position]:
            body.erase_input(len(body.inputs) - 1)
            return output
        node.add_input(initial)
        body.register_output(result)
        return node.add_output(output.ty, output.name_hint)

    def clone_views(self, views: list[Node], root: Value) -> Value:
        """The chain of ``views`` applied again to ``root``, where this derivation inserts."""
        result = root
        for view in views:
            with self.inserting():
                clone = self.graph.create_clone(view, _replacing(view.inputs[0], result))
                result = self.graph.insert_node(clone).output
        return result


def _view_chain(value: Value, finals: dict[Value, Value]) -> tuple[Value, list[Node]] | None:
    """The final version of a written argument that ``value`` is, or is a chain of views of,
    with those view nodes in order; None when ``value`` is neither."""
    views: list[Node] = []
    while value not in finals:
        node = value.node
        if view_rule(node) is None:
            return None
        views.append(node)
        value = node.inputs[0]
    return value, views[::-1]


def _replacing(old: Value, new: Value) -> Callable[[Value], Value]:
    return lambda value: new if value is old else value
