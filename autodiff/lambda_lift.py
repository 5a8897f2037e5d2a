"""Lambda lifting: cut the prim::Reverse block out of a differentiated graph into its own graph
``df``, turning every forward value it reads into an input, and describe the pair as a
`Gradient` (TorchScript's lambdaLiftReverse). ``df`` returns its gradients packed in one
tuple, in the order of ``df_output_vjps``, as TorchScript's does.

# Note [No vjps for temporaries]
# TorchScript gives ``df`` one more vjp input per captured temporary that requires grad, because
# a differentiable subgraph sits inside a larger graph whose later code may use the temporary
# (it is an output of ``f``) and send a gradient back through it. Here ``f`` is always the whole
# function: nothing outside it reads a temporary, so such a vjp would always be zero. ``df``
# takes vjps for the real outputs only, and ``df_input_vjps`` is exactly the Reverse node's
# ``output_vjps``.

# Note [Arguments written to]
# A function that writes to an argument ends with ``prim::WriteBack`` (Note [Functionalisation]
# in `passes.functionalize`): ``f`` leaves the final contents in the caller's array. The
# gradient is w.r.t. the values passed in, so what ``df`` reads must be saved as it was before
# that write. Which saved values share memory with such an argument is not a question to
# answer operator by operator: a view (``a[:, 1]``), an operator that NumPy lets return its
# operand itself (``np.real``, ``np.atleast_1d`` of a real vector, ``np.einsum('i->i', a)``),
# the tuple of operands ``np.einsum`` keeps, a list ``[a, b]``, a loop's tape list of pushed
# rows, a value an If or a loop gives out, each may hold the argument's memory. So ``f`` asks
# the arrays themselves: just before its first prim::WriteBack (nothing in ``f`` writes an
# argument before then), each value ``df`` reads that may hold an array goes through
# ``prim::CopyIfShared(%v, %written...)``, which copies the arrays in it (in tuples and lists
# too) that may share memory with an argument about to be written (`np.may_share_memory`,
# a bounds check), and ``df`` reads its result. An argument written back is copied the same
# way; one that is not is read as it is, like any argument (arguments that share memory with
# each other are taken to be distinct arrays).
#
# A custom_vjp's residuals are the user's own object, which may hold its arguments in any
# structure (a dict, a class instance) that CopyIfShared cannot look into. So its forward
# (prim::CustomVjpFwd) never receives such memory: each of its operands goes through
# CopyIfShared just before it when ``f`` writes an argument back (`_protect_opaque_operands`).
"""

from __future__ import annotations

from autodiff.errors import DifferentiationError
from autodiff.gradient import Gradient
from ir.analysis import is_within, reverse_nodes
from ir.graph import PARAM, Graph, Node, Value
from ir.types import BOOL, FLOAT, INT, NONE, SCALAR, STR, ListType, OptionalType, TupleType, Type
from passes.functionalize import WRITE_BACK
from passes.registry import Module


def lambda_lift(graph: Graph) -> Gradient:
    """Split ``graph``, which holds one prim::Reverse node, into ``f`` and ``df``. ``graph``
    itself becomes ``f``: the Reverse node is removed and captured temporaries are added to
    its outputs.

    Given:   graph @g(%x):
               %t = aten::tanh(%x)
               %dx = prim::Reverse[output_vjps=[0], input_grads=[0]]()
                 block0(%dt):
                   %sq = aten::mul(%t, %t)
                   ... -> (%g)
               return (%t)
    Execute: lambda_lift(graph)
    Result:  graph @f(%x): %t = aten::tanh(%x); return (%t)
             graph @df(%dt, %t): %sq = aten::mul(%t, %t) ... return (%g)
             Gradient(f_real_outputs=1, df_input_vjps=(0,), df_input_captured_inputs=(),
                      df_input_captured_outputs=(0,), df_output_vjps=(0,))
    """
    # ----------------------------------------------------------------------------------------
    # 1. Find the Reverse node and the forward values its block reads.
    # ----------------------------------------------------------------------------------------
    found = reverse_nodes(graph)
    if len(found) != 1:
        raise DifferentiationError(
            f"lambda lifting needs exactly one prim::Reverse node in graph @{graph.name}, "
            f"found {len(found)}"
        )
    reverse = found[0]
    block = reverse.blocks[0]
    captures = reverse_captures(graph, reverse)

    # ----------------------------------------------------------------------------------------
    # 2. Sort the captures: f inputs are captured as inputs; f outputs by their (first)
    #    output index; any other value becomes a temporary output of f.
    # ----------------------------------------------------------------------------------------
    f_real_outputs = len(graph.outputs)
    input_index = {value: i for i, value in enumerate(graph.inputs)}
    output_index: dict[Value, int] = {}
    for i, value in enumerate(graph.outputs):
        output_index.setdefault(value, i)  # an output listed twice is read at its first place
    captured_inputs: list[int] = []
    captured_outputs: list[int] = []
    write_backs = [node for node in graph.nodes() if node.kind == WRITE_BACK]
    written_back = list(dict.fromkeys(node.inputs[0] for node in write_backs))
    if written_back:
        _protect_opaque_operands(graph, written_back)
    for value in captures:
        next_write_back = _write_back_after(value, write_backs)
        if next_write_back and (value in written_back or _may_hold_array(value, input_index)):
            # See Note [Arguments written to]: df reads what f saved before writing them back.
            saved = _save_before(graph, next_write_back, value, written_back, reverse)
            captured_outputs.append(graph.register_output(saved))
        elif value in input_index:
            captured_inputs.append(input_index[value])
        elif value in output_index:
            captured_outputs.append(output_index[value])
        else:
            captured_outputs.append(graph.register_output(value))

    # ----------------------------------------------------------------------------------------
    # 3. Build df: inputs [vjps][captured inputs][captured outputs], body a copy of the
    #    Reverse block, the gradients returned as one tuple (as TorchScript's df returns).
    # ----------------------------------------------------------------------------------------
    df = Graph("df")
    copies: dict[Value, Value] = {}
    for param in block.inputs:
        copies[param] = df.add_input(param.ty, param.name_hint)
    for value in [graph.inputs[i] for i in captured_inputs]:
        copies[value] = df.add_input(value.ty, value.name_hint)
    for value in [graph.outputs[i] for i in captured_outputs]:
        copies[value] = df.add_input(value.ty, value.name_hint)

    def lookup(value: Value) -> Value:
        return copies[value]

    for node in block.nodes():
        copy = df.create_clone(node, lookup)
        df.block.append_node(copy)
        copies.update(zip(node.outputs, copy.outputs, strict=True))
    gradients = [lookup(result) for result in block.outputs]
    packed = df.insert(
        "prim::TupleConstruct", gradients, (TupleType(tuple(g.ty for g in gradients)),)
    )
    df.register_output(packed.output)

    # ----------------------------------------------------------------------------------------
    # 4. The Reverse node only held the reverse program; f is what remains.
    # ----------------------------------------------------------------------------------------
    output_vjps = tuple(reverse.attrs.get("output_vjps", ()))
    input_grads = tuple(reverse.attrs.get("input_grads", ()))
    reverse.destroy()
    graph.name = "f"
    return Gradient(
        f=graph,
        df=df,
        f_real_outputs=f_real_outputs,
        df_input_vjps=output_vjps,
        df_input_captured_inputs=tuple(captured_inputs),
        df_input_captured_outputs=tuple(captured_outputs),
        df_output_vjps=input_grads,
    )


# Nodes whose saved context is an opaque object of the user's (Note [Custom vjp]).
_OPAQUE_SAVERS = frozenset(["prim::CustomVjpFwd"])


def _protect_opaque_operands(graph: Graph, written: list[Value]) -> None:
    """Give every node that saves an opaque object copies of its operands that may share
    memory with an argument written back (Note [Arguments written to])."""
    for node in list(graph.all_nodes()):
        if node.kind not in _OPAQUE_SAVERS:
            continue
        for index, operand in enumerate(node.inputs):
            if not _holds_arrays(operand.ty) or operand.node.kind == "prim::Constant":
                continue
            with graph.inserting_before(node):
                copied = graph.insert("prim::CopyIfShared", (operand, *written), (operand.ty,))
            copied.output.name_hint = operand.name_hint
            node.replace_input(index, copied.output)


def _may_hold_array(value: Value, inputs: dict[Value, int]) -> bool:
    """Whether ``value``, which ``df`` reads, may hold an array that shares memory with an
    argument ``f`` writes back: any value computed in ``f`` whose type may hold an array (an
    argument not written back is an array of its own)."""
    return value not in inputs and _holds_arrays(value.ty)


def _write_back_after(value: Value, write_backs: list[Node]) -> Node | None:
    """The first of ``write_backs`` (top-level nodes, in order) that runs after ``value`` is
    computed, where ``df``'s copy of it must be taken; None when every write back has run
    before it (a nested derivative's graph may compute after its inner write back)."""
    if not write_backs or value.node.kind == PARAM:
        return write_backs[0] if write_backs else None
    block = write_backs[0].owning_block
    assert block is not None
    later = False
    for node in block.nodes():
        later = later or node is value.node
        if later and node.kind == WRITE_BACK:
            return node
    return None


def _holds_arrays(ty: Type) -> bool:
    if isinstance(ty, TupleType):
        return any(_holds_arrays(elem) for elem in ty.elems)
    if isinstance(ty, ListType | OptionalType):
        return _holds_arrays(ty.elem)
    return ty not in _NO_ARRAYS


_NO_ARRAYS = frozenset([INT, FLOAT, BOOL, STR, NONE, SCALAR])


def _save_before(
    graph: Graph, write_back: Node, value: Value, written: list[Value], reverse: Node
) -> Value:
    """``value`` as ``df`` must read it: through prim::CopyIfShared just before
    ``write_back`` (the first), so that no array in it shares memory with ``written``."""
    with graph.inserting_before(write_back):
        saved = graph.insert("prim::CopyIfShared", (value, *written), (value.ty,)).output
    saved.name_hint = value.name_hint
    for use in list(value.uses):
        if is_within(use.user, reverse):
            use.user.replace_input(use.index, saved)
    return saved


def reverse_captures(graph: Graph, reverse: Node) -> list[Value]:
    """The forward values (graph inputs and top-level node outputs) read anywhere inside
    ``reverse``'s block, once each, inputs first in input order, then in node order."""
    captures: list[Value] = []

    def read_in_reverse(value: Value) -> bool:
        return any(is_within(use.user, reverse) for use in value.uses)

    captures.extend(v for v in graph.inputs if read_in_reverse(v))
    for node in graph.nodes():
        if node is reverse:
            break
        captures.extend(v for v in node.outputs if read_in_reverse(v))
    return captures


def lambda_lift_module(module: Module) -> bool:
    """Replace the graph holding a prim::Reverse node by ``f`` and ``df``.

    Given:   {"g": graph @g(...) with a prim::Reverse node}
    Execute: lambda_lift_module(module)
    Result:  {"f": graph @f(...), "df": graph @df(...)}
    """
    lifted = [name for name, graph in module.items() if reverse_nodes(graph)]
    if not lifted:
        return False
    if len(lifted) > 1:
        raise DifferentiationError(
            f"lambda-lift lifts one graph per module, found prim::Reverse in {len(lifted)}: "
            + ", ".join(f"@{name}" for name in lifted)
        )
    clashes = [name for name in ("f", "df") if name in module and name != lifted[0]]
    if clashes:
        raise DifferentiationError(f"lambda-lift would replace the module's graph @{clashes[0]}")
    gradient = lambda_lift(module[lifted[0]])
    rebuilt: Module = {}
    for name, graph in module.items():
        if name == lifted[0]:
            rebuilt["f"] = gradient.f
            rebuilt["df"] = gradient.df
        else:
            rebuilt[name] = graph
    module.clear()
    module.update(rebuilt)
    return True
