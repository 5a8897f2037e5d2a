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
# gradient is w.r.t. the values passed in, so when ``df`` reads such an argument it reads a copy
# ``f`` made before overwriting it, captured as a temporary; so does it for a captured view of
# such an argument (``a[:, 1]`` shares the argument's memory), copied where it is computed.
# A value an If or a loop gives out may be such a view too (``s = a[1] if c else t``, or a view
# a loop carries): it is copied after that node when any branch's result, or a loop's initial
# or carried value, may be one. A loop tape of varying length is a list its pushes append to
# (Note [Loop tapes] in `autodiff.differentiate`): a pushed view of such an argument is copied
# as it is pushed.
"""

from __future__ import annotations

from autodiff.errors import DifferentiationError
from autodiff.gradient import Gradient
from ir.graph import PARAM, Graph, Node, Value
from ir.types import TupleType
from passes.functionalize import WRITE_BACK, is_view
from passes.lift_constants import is_within, reverse_nodes
from passes.registry import Module, register_module_pass


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
    written_back = {node.inputs[0] for node in graph.nodes() if node.kind == WRITE_BACK}
    if written_back:
        _copy_pushed_views(graph, written_back)
    for value in captures:
        if _may_share_memory(value, written_back):
            # See Note [Arguments written to]: df gets a copy made before f overwrites it.
            captured_outputs.append(graph.register_output(_copy_for_reverse(graph, value, reverse)))
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


def _may_share_memory(value: Value, arrays: set[Value]) -> bool:
    """Whether ``value`` may be one of ``arrays`` or a view of one: through view operators, and
    the values an If or a loop may give out (each branch's result; a loop's initial value and
    what its body carries on)."""
    seen: set[Value] = set()
    pending = [value]
    while pending:
        value = pending.pop()
        if value in arrays:
            return True
        if value in seen:
            continue
        seen.add(value)
        node = value.node
        if is_view(node):
            pending.append(node.inputs[0])
        elif node.kind == "prim::If":
            pending.extend(block.outputs[value.index] for block in node.blocks)
        elif node.kind == "prim::Loop":
            pending.extend(_loop_sources(node, value.index))
        elif node.kind == PARAM and value.index > 0:
            loop = node.owning_block.owning_node if node.owning_block else None
            if loop is not None and loop.kind == "prim::Loop":
                pending.extend(_loop_sources(loop, value.index - 1))
    return False


def _copy_pushed_views(graph: Graph, arrays: set[Value]) -> None:
    """Push a copy instead of a value a tape list would keep that may share memory with one of
    ``arrays`` (see Note [Arguments written to]): only the reverse block reads tapes."""
    pushes = [node for node in graph.all_nodes() if node.kind == "prim::TapePush"]
    for push in pushes:
        value = push.inputs[1]
        if _may_share_memory(value, arrays):
            with graph.inserting_before(push):
                copy = graph.insert("aten::copy", (value,), (value.ty,)).output
            push.replace_input(1, copy)


def _loop_sources(loop: Node, carried: int) -> list[Value]:
    """What a prim::Loop's carried value number ``carried`` may be: its initial value or what
    the body returns for it."""
    return [loop.inputs[2 + carried], loop.blocks[0].outputs[1 + carried]]


def _copy_for_reverse(graph: Graph, value: Value, reverse: Node) -> Value:
    """A copy of ``value``, made where it is computed (when ``f`` starts, for an input), that
    the reverse block reads in its place: ``value`` is an argument ``f`` overwrites at its
    end, or a view of one."""
    where = graph.block.param_node if value.node.kind == PARAM else value.node
    with graph.inserting_after(where):
        copy = graph.insert("aten::copy", (value,), (value.ty,)).output
    copy.name_hint = value.name_hint
    for use in list(value.uses):
        if is_within(use.user, reverse):
            use.user.replace_input(use.index, copy)
    return copy


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


@register_module_pass("lambda-lift")
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
