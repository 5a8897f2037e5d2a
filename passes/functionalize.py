"""Functionalisation: every in-place write becomes an out-of-place operator plus scatters into
the array it writes, and every view read after a write is derived again from the new array.

# Note [Functionalisation]
# The frontend emits NumPy's writes as they are written (`frontend.subscripts`, Note [Writes]):
# ``y[1:3] = v`` is a view ``%s = aten::slice(%y, ...)`` and ``aten::copy_(%s, %v)``, ``y += x``
# is ``aten::copy_(%y, aten::add(%y, %x))``, ``y[idx] = v`` is ``aten::index_put_``,
# ``np.add.at`` is ``aten::add_at_``. Such a graph is correct run as it is, but no SSA pass may
# touch it: a value read after a write is not the value it was before. This pass makes it pure
# SSA, as TorchScript's CopySlices makes an in-place write on a view rewrite its base's history:
#
# * Alias analysis (its facts and refusals are in `passes.aliasing`). A view operator's result
#   (one whose OpDef has a ViewRule, Note [Views] in `ir.ops.views`: basic indexing,
#   transposes, flips, rotations, reshapes and dimension changes, a split's pieces, complex
#   parts, diagonals, an einsum that only relabels) is an
#   alias of its operand's base, with the chain of view nodes that leads there; an in-place
#   operator's result is an alias of what it wrote; any other value is a base of its own, since
#   NumPy returns new arrays. A reshape or ravel that NumPy's stride rule makes a copy starts a
#   new base (graph inputs have the strides they are compiled for, ``strided_inputs``, and the
#   arrays operators make of C-contiguous operands are C-contiguous); one whose strides are not
#   known at compile time may be either, so a write through it, or a read of it after its base
#   is written, is refused. First, an einsum that only relabels its one
#   operand becomes ``aten::_einsum_view`` of it, and unpacking a split's pieces one
#   prim::TupleIndex per piece (`_expose_views`). Reading one element (``y[i]`` on a 1-D
#   ``y``, ``y[i, j]`` on a 2-D one) gives a NumPy scalar, a copy: no view (the select's and
#   the index's view rules say so).
# * Numbers. ``s += v`` on a Python number or a NumPy scalar rebinds ``s``; only on an array
#   does it write: such ``copy_`` nodes are replaced by their source first (Note [Numbers and
#   0-d arrays] in `passes.number_updates`).
# * Versions. Walking the graph in order, each base has a current version. A write to an alias
#   computes the alias's new contents out of place (the operator its record names,
#   ``out_of_place``: `ir.ops.scatter`, Note [Scatters]), then scatters them up the chain of
#   views (each view rule's scatter: ``select_scatter`` for a select, ``slice_scatter`` for a
#   slice or a split's piece, the inverse view for a transpose, flip or reshape) into a new
#   version of the base. A write through a read-only view (``np.diagonal``,
#   ``np.broadcast_to``) is refused where it is, as NumPy raises there.
# * Re-derivation. Any later read of the base or of a view of it whose version is stale reads
#   the same chain of views applied to the current version instead (clones of the view nodes).
# * Control flow. A branch that writes a base defined outside it returns the base's new version
#   as one more output of its prim::If (the other branches return the version they have); a
#   loop that does carries the base's version as one more loop-carried value. Loop-carried
#   values and If outputs that are just the same array passed along (``y += 1`` in a loop
#   rebinds ``y`` to the array it already was) are replaced by that array first.
# * Arguments. A graph input written to gets ``prim::WriteBack(%x, %x_final)`` at the end: the
#   caller's array receives the final contents, as the plain function would leave it, while
#   every node (and the gradient) sees the values passed in.
#
# A write whose target may be one array or another, depending on which branch ran (``z = y if c
# else x; z[0] = 1``), is refused: which base to update is not known at compile time. So is a
# read, in a loop, of a loop-carried value that starts as a view of an array the loop writes
# (``acc = y.T`` before the loop, ``y[0] = 1`` in it, then ``acc`` read): in the first iteration
# it is that view and sees the write, in the next ones it is whatever the last iteration bound
# it to. Likewise a read of what an If or a loop gave out that may be an array defined before
# it or a view of one (``v = x[0] if c else y``), once that array has been written, also when
# an If or a loop nested in it gave that array out (``acc = x`` in an ``if`` in a loop: the
# loop's result may be ``x``); a read, in a loop, of a loop-carried value that the previous
# iteration may have left as an array the loop writes, once this iteration has written it
# (``acc = x`` in a branch, then ``x[0] = 1`` and a read of ``acc`` in the next iteration); and
# a write to an If or loop output that a nested If or loop may have bound to such an array.
# A tuple or list holds the arrays themselves in NumPy (``l = [x]; x[0] = 1`` shows in
# ``l[0]``), while a scripted one keeps the values it was given (Note [Lists are values] in
# `ir.ops.prim`): a read of a tuple or list, or of an element read out of one, once an array it
# holds has been written, and a write to such an element, are refused too.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ir.analysis import constant_value, in_block, is_constant
from ir.errors import IRError
from ir.graph import PARAM, Block, Graph, Node, Value
from ir.ops.products import einsum_relabels
from ir.ops.registry import OPS, Holds, is_in_place
from ir.ops.views import (
    ViewRule,
    probe_chain,
    static_shape,
    ufunc_result_strides,
    view_is_copy,
    view_is_copy_in_any_order,
    view_rule,
)
from ir.types import INT, TensorType
from passes.aliasing import (
    WRITES_AND_VIEWS,
    Alias,
    carrying_loop,
    check_carried_view,
    check_first_view,
    check_held,
    check_maybe_view,
    check_one_array,
    check_writable,
    emitted_base,
    is_view,
    loop_sources,
)
from passes.number_updates import rebind_number_updates
from passes.registry import register_pass
from passes.returned_arguments import return_arguments

WRITE_BACK = "prim::WriteBack"


@dataclass
class _Env:
    """Per block: the current version of each base written so far, and views derived again
    from those versions (which only this block and the blocks nested in it may read)."""

    versions: dict[Value, Value] = field(default_factory=dict)
    derived: dict[tuple[Value, Value], Value] = field(default_factory=dict)

    def child(self) -> _Env:
        return _Env(dict(self.versions), dict(self.derived))

    def current(self, base: Value) -> Value:
        return self.versions.get(base, base)


@register_pass("functionalize")
def functionalize(graph: Graph, *, number_inputs: str = "", strided_inputs: str = "") -> bool:
    """Rewrite in-place writes into out-of-place operators and scatters. See Note
    [Functionalisation]. ``number_inputs``: the positions of the inputs that are NumPy scalars
    at run time, comma-separated (``"0,2"``); every other tensor input is an array.
    ``strided_inputs``: the inputs that are arrays not C-contiguous at run time, each as its
    position and its strides in bytes (``"0:8,24;2:-8"``), or ``?`` for strides not known
    (``"1:?"``: any array, as a scripted caller may pass); every other array input is
    C-contiguous (Note [Views]).

    Given:   graph(%y : Double(3, 2), %v : Double(2)):
               %i : int = prim::Constant[value=0]()
               %s : Double(2) = aten::select(%y, %i, %i)
               %w : Double(2) = aten::copy_(%s, %v)
               return (%y)
    Execute: functionalize(graph)
    Result:  %w : Double(2) = aten::_written(%s, %v)
             %y.1 : Double(3, 2) = aten::select_scatter(%y, %w, %i, %i)
             prim::WriteBack(%y, %y.1)
             return (%y.1)
    """
    if not any(is_in_place(node) for node in graph.all_nodes()):
        return False
    positions = {int(position) for position in number_inputs.split(",") if position.strip()}
    rebind_number_updates(graph, positions)  # Note [Numbers and 0-d arrays]
    _expose_views(graph, graph.block)
    _pass_through_carried_arrays(graph.block)
    functionalizer = _Functionalizer(graph, _input_strides(graph, strided_inputs))
    env = _Env()
    functionalizer.block(graph.block, env)
    written: dict[Value, Value] = {}  # the final version of an argument -> the argument
    with graph.inserting_at_end(graph.block):
        for value in graph.inputs:
            final = env.current(value)
            if final is not value:
                graph.insert(WRITE_BACK, (value, final), ())
                written.setdefault(final, value)
    return_arguments(graph, written, functionalizer.written_through)
    return True


def _input_strides(graph: Graph, strided_inputs: str) -> dict[Value, tuple[int, ...] | None]:
    """The inputs named by ``strided_inputs`` (``"0:8,24;2:-8;3:?"``) -> their strides (None:
    not known)."""
    strides: dict[Value, tuple[int, ...] | None] = {}
    for item in strided_inputs.split(";"):
        if item.strip():
            position, _, steps = item.partition(":")
            known = None if steps.strip() == "?" else tuple(int(s) for s in steps.split(","))
            strides[graph.inputs[int(position)]] = known
    return strides


class _Functionalizer:
    def __init__(self, graph: Graph, input_strides: dict[Value, tuple[int, ...] | None]) -> None:
        self.graph = graph
        # The graph inputs that are not C-contiguous -> their strides, None where not known
        # (Note [Views]).
        self.input_strides = input_strides
        self.aliases: dict[Value, Alias] = {}
        self.base_of_version: dict[Value, Value] = {}
        self.version_of: dict[Value, Value] = {}  # the base version a view was computed from
        # A loop-carried parameter whose first value is a view of a base the loop writes: that
        # base, and its version when the body starts.
        self.first_view: dict[Value, tuple[Value, Value]] = {}
        # An If or loop output that may be a base defined before it or a view of one: those
        # bases, each with its version when the node ran.
        self.maybe_view: dict[Value, list[tuple[Value, Value]]] = {}
        # A loop-carried parameter whose value from the previous iteration may be, or be a view
        # of, a base the loop writes: those bases, each with its version when the body starts.
        self.carried_view: dict[Value, list[tuple[Value, Value]]] = {}
        # A tuple or list that holds arrays, or an element read out of one (or an If or loop
        # output that may be either): the bases of those arrays, each with its version then.
        self.held: dict[Value, list[tuple[Value, Value]]] = {}
        self.layouts: dict[Value, bool] = {}
        # A write's new contents of what it wrote (`write`) -> the base's version it made and
        # the chain of views from that base (Note [Returned arguments] in
        # `passes.returned_arguments`).
        self.written_through: dict[Value, tuple[Value, tuple[Node, ...]]] = {}

    def alias(self, value: Value) -> Alias:
        found = self.aliases.get(value)
        if found is not None:
            return found
        return Alias(self.base_of_version.get(value, value))

    def stale(self, value: Value, env: _Env) -> bool:
        info = self.alias(value)
        return self.version_of.get(value, value) is not env.current(info.base)

    def fresh(self, value: Value, env: _Env, before: Node) -> Value:
        """``value`` as it reads now: itself, or its chain of views applied to the current
        version of its base (cloned in front of ``before``)."""
        if not self.stale(value, env):
            return value
        info = self.alias(value)
        if info.undecided is not None:
            raise IRError(
                f"cannot tell whether '{value.name_hint or 'this'}' sees the write to "
                f"'{info.base.name_hint or 'its array'}': NumPy makes this reshape a view or a "
                "copy depending on the array's strides, which the compiler cannot tell here; "
                "copy it where it is made (.copy())",
                before.source_range,
                doc_link=WRITES_AND_VIEWS,
            )
        version = env.current(info.base)
        if not info.chain:
            return version
        key = (value, version)
        found = env.derived.get(key)
        if found is not None:
            return found
        view = info.chain[-1]
        parent = self.fresh(view.inputs[0], env, before)
        operands = {view.inputs[0]: parent}
        with self.graph.inserting_before(before):
            copy = self.graph.insert_node(
                self.graph.create_clone(view, lambda v: operands.get(v, v))
            )
        derived = copy.output
        derived.name_hint = value.name_hint
        self.aliases[derived] = info
        self.version_of[derived] = version
        env.derived[key] = derived
        return derived

    # -- walking ---------------------------------------------------------------------------

    def block(self, block: Block, env: _Env) -> None:
        for node in list(block.nodes()):
            self.read_fresh(node, env)
            if is_in_place(node):
                self.write(node, env)
            elif (rule := view_rule(node)) is not None:
                self.view(node, rule)
            elif node.kind == "prim::If":
                self.branches(node, env)
            elif node.kind == "prim::Loop":
                self.loop(node, env)
            elif (op := OPS.get(node.kind)) is not None and op.holds is not None:
                self.hold(node, op.holds, env)
        self.read_fresh(block.return_node, env)

    def read_fresh(self, node: Node, env: _Env) -> None:
        for index, value in enumerate(list(node.inputs)):
            if value in self.first_view:
                check_first_view(value, *self.first_view[value], env.current, node)
            for base, entry in self.carried_view.get(value, ()):
                check_carried_view(value, base, entry, env.current, node)
            for base, version in self.maybe_view.get(value, ()):
                check_maybe_view(value, base, version, env.current, node)
            for base, version in self.held.get(value, ()):
                check_held(value, base, version, env.current, node)
            current = self.fresh(value, env, node)
            if current is not value:
                node.replace_input(index, current)

    def c_contiguous(self, base: Value) -> bool:
        """Whether ``base`` is known to be C-contiguous (Note [Views]): a graph input given
        so, or made by an operator whose array operands all are (NumPy's ufuncs keep their
        operands' layout)."""
        known = self.layouts.get(base)
        if known is None:
            node = base.node
            if node.kind == PARAM:
                known = node.owning_block is self.graph.block and base not in self.input_strides
            elif node.blocks:
                known = False
            elif node.kind in OPS and OPS[node.kind].c_order_result:
                known = True
            else:
                self.layouts[base] = False  # an operand that is (a version of) base itself
                known = all(
                    self.c_contiguous_value(operand)
                    for operand in node.inputs
                    if isinstance(operand.ty, TensorType)
                )
            self.layouts[base] = known
        return known

    def c_contiguous_value(self, value: Value) -> bool:
        info = self.alias(value)
        strides = self.input_strides.get(info.base)
        if strides is None and not self.c_contiguous(info.base):
            return False
        if strides is None and not info.chain:
            return True
        probe = probe_chain(info.chain, info.base, strides)
        return probe is not None and bool(probe.flags.c_contiguous)

    def ufunc_strides(self, base: Value) -> tuple[int, ...] | None:
        """The strides of ``base`` when it is a ufunc's new array of one array operand of its
        shape whose strides are known (the others numbers), as NumPy lays it out
        (`ufunc_result_strides`); else None."""
        node, shape = base.node, static_shape(base)
        op = OPS.get(node.kind)
        if op is None or not isinstance(op.kernel, np.ufunc) or len(node.outputs) != 1:
            return None
        arrays = [v for v in node.inputs if isinstance(v.ty, TensorType) and v.ty.rank != 0]
        if shape is None or len(arrays) != 1 or static_shape(arrays[0]) != shape:
            return None
        info = self.alias(arrays[0])
        strides = self.input_strides.get(info.base)
        if strides is None and not self.c_contiguous(info.base):
            strides = self.ufunc_strides(info.base)
            if strides is None:
                return None
        probe = probe_chain(info.chain, info.base, strides)
        if probe is None or not isinstance(base.ty, TensorType) or base.ty.dtype is None:
            return None
        itemsize = np.dtype(base.ty.dtype).itemsize
        return ufunc_result_strides(tuple(probe.strides), shape, itemsize)

    def view(self, node: Node, rule: ViewRule) -> None:
        operand = node.inputs[0]
        info = self.alias(operand)
        undecided = info.undecided
        if rule.strided:
            strides = self.input_strides.get(info.base)
            if strides is None and not self.c_contiguous(info.base):
                strides = self.ufunc_strides(info.base)
            if strides is not None or self.c_contiguous(info.base):
                copies = view_is_copy(info.chain, info.base, node, strides)
            elif info.base.node.kind.startswith("aten::"):
                # A new array an operator made (element reads of tuples and lists, parameters,
                # If and loop outputs may be any view): contiguous in an order NumPy chose.
                copies = view_is_copy_in_any_order(info.chain, info.base, node)
            else:
                copies = None
            if copies:
                return  # NumPy copies: a new base
            if copies is None:
                undecided = node
        self.aliases[node.output] = Alias(info.base, (*info.chain, node), undecided)
        self.version_of[node.output] = self.version_of.get(operand, operand)

    def write(self, node: Node, env: _Env) -> None:
        target = node.inputs[0]
        if not isinstance(target.ty, TensorType):  # ``x += 1`` on a number rebinds it
            node.output.replace_all_uses_with(node.inputs[1])
            node.destroy()
            return
        info = self.alias(target)
        check_one_array(info.base, node)
        if info.base in self.held:
            raise IRError(
                f"cannot write to '{info.base.name_hint or 'it'}' here: it is an array a tuple "
                "or list holds, which the scripted tuple or list would not see written; write "
                "to the array itself, or copy it first (x.copy())",
                node.source_range,
                doc_link=WRITES_AND_VIEWS,
            )
        check_writable(info, node)
        out_of_place = OPS[node.kind].out_of_place
        assert out_of_place is not None  # only in-place operators come here
        with self.graph.inserting_before(node):
            contents = self.graph.insert(
                out_of_place, list(node.inputs), (target.ty,)
            ).copy_metadata(node)
            value = contents.output
            position = len(info.chain) - 1
            while position >= 0:
                view = info.chain[position]
                rule = view_rule(view)
                assert rule is not None
                assert rule.scatter is not None  # `check_writable` refused read-only views
                # A piece of a split is written into the split's operand, past the split.
                above = position - 2 if view.kind == "prim::TupleIndex" else position - 1
                parent = env.current(info.base)
                if above >= 0:
                    parent = self.fresh(info.chain[above].output, env, node)
                try:
                    value = rule.scatter(self.graph, view, parent, value)
                except IRError as error:
                    error.source_range = error.source_range or node.source_range
                    raise
                value.node.source_range = node.source_range
                position = above
        value.name_hint = info.base.name_hint
        self.new_version(info.base, value, env)
        written = contents.output
        written.name_hint = node.output.name_hint or target.name_hint
        self.aliases[written] = info
        self.version_of[written] = value
        self.written_through[written] = (value, info.chain)
        node.output.replace_all_uses_with(written)
        node.destroy()

    def written_from_outside(self, body: Block) -> list[Value]:
        """The bases defined outside ``body`` that writes inside it (nested blocks included)
        write, in order of first write. A write's target is followed through the views and
        writes of the body as emitted (a reshape there that NumPy makes a copy may add a base
        the loop carries for nothing), then, out of the body, through what this pass knows of
        the values it already rewrote (an earlier write's result is a version of its base; a
        reshape that copied, ``w = y[::-1].ravel()``, is a base of its own)."""
        found: dict[Value, None] = {}
        pending = [body]
        while pending:
            block = pending.pop()
            for node in block.nodes():
                pending.extend(node.blocks)
                if is_in_place(node) and isinstance(node.inputs[0].ty, TensorType):
                    target = node.inputs[0]
                    while in_block(target.node, body) and (
                        is_in_place(target.node) or is_view(target.node)
                    ):
                        target = target.node.inputs[0]
                    base = self.alias(target).base
                    if not in_block(base.node, body):
                        found.setdefault(base, None)
        return list(found)

    def new_version(self, base: Value, version: Value, env: _Env) -> None:
        env.versions[base] = version
        self.base_of_version[version] = base
        self.version_of[version] = version

    def branches(self, node: Node, env: _Env) -> None:
        inner = [env.child() for _ in node.blocks]
        for block, block_env in zip(node.blocks, inner, strict=True):
            self.block(block, block_env)
        given = list(enumerate(node.outputs))
        # A base made inside a branch has no version outside it to carry.
        written = {
            base
            for block_env in inner
            for base in block_env.versions
            if not any(in_block(base.node, block) for block in node.blocks)
        }
        for base in [b for b in written if any(e.current(b) is not env.current(b) for e in inner)]:
            for block, block_env in zip(node.blocks, inner, strict=True):
                block.register_output(block_env.current(base))
            self.new_version(base, node.add_output(base.ty, base.name_hint), env)
        for index, output in given:
            self.note_maybe_view(output, [block.outputs[index] for block in node.blocks], env)

    def loop(self, node: Node, env: _Env) -> None:
        body = node.blocks[0]
        written = self.written_from_outside(body)
        body_env = env.child()
        carried = list(zip(node.inputs[2:], body.inputs[1:], strict=True))
        for base in written:
            node.add_input(env.current(base))
            self.new_version(base, body.add_input(base.ty, base.name_hint), body_env)
        for initial, param in carried:
            base = self.alias(initial).base
            if base in written and isinstance(param.ty, TensorType):
                self.first_view[param] = (base, body_env.current(base))
        for (_, param), result in zip(carried, body.outputs[1:], strict=True):
            if isinstance(param.ty, TensorType):
                entries = [(b, body_env.current(b)) for b in self.arrays_given(result, written)]
                if entries:
                    self.carried_view[param] = entries
        self.block(body, body_env)
        given = list(enumerate(node.outputs))
        for base in written:
            body.register_output(body_env.current(base))
            self.new_version(base, node.add_output(base.ty, base.name_hint), env)
        for position, output in given:
            sources = [node.inputs[2 + position], body.outputs[1 + position]]
            self.note_maybe_view(output, sources, env)

    def arrays_given(self, result: Value, bases: list[Value]) -> list[Value]:
        """Those of ``bases`` that ``result``, as the frontend emitted it, may be or be a view
        of: through views and writes, each branch's result of an If, and a loop's initial and
        carried values (an ``acc = x`` in a branch makes the loop carry ``x`` on)."""
        found: dict[Value, None] = {}
        seen: set[Value] = set()
        pending = [result]
        while pending:
            value = emitted_base(pending.pop())
            if value in seen:
                continue
            seen.add(value)
            node, loop = value.node, carrying_loop(value)
            if node.kind == "prim::If":
                pending.extend(block.outputs[value.index] for block in node.blocks)
            elif node.kind == "prim::Loop":
                pending.extend(loop_sources(node, value.index))
            elif loop is not None:
                pending.extend(loop_sources(loop, value.index - 1))
            base = self.alias(value).base
            if base in bases:
                found.setdefault(base, None)
        return list(found)

    def hold(self, node: Node, holds: Holds, env: _Env) -> None:
        """A tuple or list holds its elements' arrays themselves, and an element read out of
        one is that array: record their bases, so that a read after a write to one of them
        is refused (the scripted tuple or list keeps the values it was given)."""
        operands = node.inputs[:1] if holds is Holds.ELEMENTS else node.inputs
        entries: dict[Value, Value] = {}
        for operand in operands:
            if isinstance(operand.ty, TensorType):
                base = self.alias(operand).base
                entries.setdefault(base, env.current(base))
            entries.update(self.held.get(operand, ()))
        if entries:
            for output in node.outputs:
                self.held[output] = list(entries.items())

    def note_maybe_view(self, output: Value, sources: list[Value], env: _Env) -> None:
        """Record the bases from before ``output``'s node that ``output`` may be, or be a view
        of, being one of ``sources`` (with their versions after the node)."""
        node = output.node
        held = {b: None for s in sources for b, _ in self.held.get(s, ())}
        held_outside = [b for b in held if not any(in_block(b.node, i) for i in node.blocks)]
        if held_outside:
            self.held[output] = [(base, env.current(base)) for base in held_outside]
        if not isinstance(output.ty, TensorType):
            return
        bases: dict[Value, None] = {}
        for source in sources:
            if isinstance(source.ty, TensorType):
                base = self.alias(source).base
                bases[base] = None
                # An If or a loop inside may have given out an array from further out.
                bases.update((inner, None) for inner, _ in self.maybe_view.get(base, ()))
        outside = [b for b in bases if not any(in_block(b.node, inner) for inner in node.blocks)]
        if outside:
            self.maybe_view[output] = [(base, env.current(base)) for base in outside]


def _expose_views(graph: Graph, block: Block) -> None:
    """Spell the views that hide in other operators as view operators: an einsum of one
    operand that sums nothing becomes ``aten::_einsum_view`` of that operand (NumPy returns a
    view for it), and unpacking a split's pieces becomes one prim::TupleIndex per piece (each
    piece is a view; Note [Views])."""
    for node in list(block.nodes()):
        for inner in node.blocks:
            _expose_views(graph, inner)
        if node.kind == "aten::einsum":
            subscripts, operands = node.inputs
            packed = operands.node
            if (
                is_constant(subscripts)
                and packed.kind == "prim::TupleConstruct"
                and len(packed.inputs) == 1
                and einsum_relabels(str(constant_value(subscripts)))
            ):
                with graph.inserting_before(node):
                    view = graph.insert(
                        "aten::_einsum_view", (packed.inputs[0], subscripts), (node.output.ty,)
                    ).copy_metadata(node)
                node.output.replace_all_uses_with(view.output)
                node.destroy()
        elif node.kind == "prim::TupleUnpack" and is_view(node.inputs[0].node):
            rule = view_rule(node.inputs[0].node)
            if rule is None or not rule.pieces:
                continue
            with graph.inserting_before(node):
                for index, output in enumerate(node.outputs):
                    position = graph.insert_constant(index, INT)
                    piece = graph.insert(
                        "prim::TupleIndex", (node.inputs[0], position), (output.ty,)
                    ).copy_metadata(node)
                    piece.output.name_hint = output.name_hint
                    output.replace_all_uses_with(piece.output)
            node.destroy()


def _pass_through_carried_arrays(block: Block) -> None:
    """Loop-carried values and If outputs that are the same array all along (``y += 1`` in a
    loop: the body returns ``y`` written in place) become that array, so that the writes are
    writes to it (inner blocks first)."""
    for node in list(block.nodes()):
        for inner in node.blocks:
            _pass_through_carried_arrays(inner)
        if node.kind == "prim::If":
            _merge_same_array_outputs(node)
        elif node.kind == "prim::Loop":
            _uncarry_same_array(node)


def _same_array(value: Value) -> Value:
    """``value`` with in-place writes looked through: the array object it is."""
    while is_in_place(value.node):
        value = value.node.inputs[0]
    return value


def _merge_same_array_outputs(node: Node) -> None:
    for index in range(len(node.outputs) - 1, -1, -1):
        arrays = {_same_array(block.outputs[index]) for block in node.blocks}
        if len(arrays) != 1:
            continue
        (array,) = arrays
        if any(in_block(array.node, block) for block in node.blocks):
            continue
        if not isinstance(array.ty, TensorType):
            continue
        # Every branch gives the one array, written or not (a loop in a branch that wrote it
        # has been uncarried, and gives back the array itself).
        node.outputs[index].replace_all_uses_with(array)
        for block in node.blocks:
            block.erase_output(index)
        node.erase_output(index)


def _uncarry_same_array(node: Node) -> None:
    body = node.blocks[0]
    for position in range(len(node.outputs) - 1, -1, -1):
        param, result = body.inputs[1 + position], body.outputs[1 + position]
        if not isinstance(param.ty, TensorType) or _same_array(result) is not param:
            continue
        if result is not param and not is_in_place(result.node):
            continue
        initial = node.inputs[2 + position]
        param.replace_all_uses_with(initial)
        node.outputs[position].replace_all_uses_with(initial)
        body.erase_output(1 + position)
        body.erase_input(1 + position)
        node.erase_output(position)
        node.remove_input(2 + position)
