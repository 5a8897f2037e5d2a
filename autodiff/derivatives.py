"""Compile the derivative formulas (the `autodiff.formulas` package) into forward/backward graphs.

Each formula ``def op(operands): ...; def backward(dout): ...; return out, backward`` becomes:

- ``forward``: a graph from the operands to ``out`` followed by the context, i.e. every value
  ``backward`` reads from the enclosing function (its free variables), in first-use order;
- ``backward``: a graph from ``dout`` then the context to one gradient per operand (a
  ``NoneType`` constant where the formula returns None).

Both are compiled once, on first use, by the project's own frontend, exactly like user code.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import ModuleType

from autodiff import formulas
from autodiff.errors import DifferentiationError
from frontend import emit_function, syntax
from frontend.parse import parse_source
from ir.graph import Graph, Node, Value
from ir.ops import OPS
from ir.source import SourceRange
from ir.types import ANY, TENSOR, Type

# Python-scalar operators share the NumPy operator's formula: the same calculus, on floats.
ALIASES = {
    "prim::add": "aten::add",
    "prim::sub": "aten::sub",
    "prim::mul": "aten::mul",
    "prim::truediv": "aten::div",
    "prim::pow": "aten::pow",
    "prim::mod": "aten::remainder",  # Python's % takes the sign of the divisor, as np.remainder
    "prim::neg": "aten::neg",
    # ``x.copy()`` differs from ``np.copy(x)`` only in the kind of a 0-d result.
    "aten::copy_method": "aten::copy",
}


@dataclass(frozen=True, slots=True)
class Formula:
    """One operator's derivative: see the module docstring for the two graphs' signatures."""

    op: str
    forward: Graph
    backward: Graph
    num_outputs: int
    defined_at: SourceRange  # the formula's ``def``, for the operator reference to link to

    @property
    def packs_variadic(self) -> bool:
        """True when the operator is variadic: its formula takes the trailing operands packed
        in one tuple (the language has no ``*args``)."""
        return OPS[self.op].schema.variadic


def formula_for(node: Node) -> Formula | None:
    """The formula of ``node``'s operator, or None when it has none."""
    return all_formulas().get(ALIASES.get(node.kind, node.kind))


@cache
def all_formulas() -> dict[str, Formula]:
    """Every formula, keyed by operator name (compiled once per process)."""
    table: dict[str, Formula] = {}
    for family in formulas.FAMILIES:
        _compile_family(family, table)
    return table


def _compile_family(family: ModuleType, table: dict[str, Formula]) -> None:
    path = Path(inspect.getfile(family))
    module = parse_source(path.read_text(), str(path))
    # The formulas' own functions are left out: a formula's parameter such as ``index`` must
    # not resolve to the formula of that name, as Python closure scoping would have it.
    namespace = {
        name: value
        for name, value in vars(family).items()
        if not (getattr(value, "__module__", None) or "").startswith(formulas.__name__)
    }
    for fdef in module.functions:
        op = formula_operator(fdef.name)
        if op not in OPS:
            raise DifferentiationError(f"formula {fdef.name!r} names no operator", fdef.range)
        if op in table:
            raise DifferentiationError(f"a second formula for {op}", fdef.range)
        table[op] = _compile(op, fdef, namespace)


def formula_operator(name: str) -> str:
    """The operator a formula of this name differentiates: a capitalised name is a ``prim::``
    operator spelled as the IR spells it, any other an ``aten::`` one (a trailing underscore
    keeps a name off a Python builtin).

    >>> formula_operator("ListAppend"), formula_operator("sum_")
    ('prim::ListAppend', 'aten::sum')
    """
    if name[:1].isupper():
        return "prim::" + name
    return "aten::" + name.rstrip("_")


def _compile(op: str, fdef: syntax.FunctionDef, namespace: dict[str, object]) -> Formula:
    *forward_body, closure, result = fdef.body
    if not (
        isinstance(closure, syntax.FunctionDef)
        and isinstance(result, syntax.Return)
        and isinstance(result.value, syntax.Tuple)
        and len(result.value.elts) == 2
    ):
        raise DifferentiationError(
            "a formula ends with 'def backward(...)' and 'return out, backward'", fdef.range
        )
    outputs = result.value.elts[0]
    output_exprs = outputs.elts if isinstance(outputs, syntax.Tuple) else (outputs,)

    # 1. Which names the backward reads from the forward: its context, in first-use order.
    context: list[str] = []
    _emit_backward(closure, namespace, context, {}, op)

    # 2. The forward returns the results, then the context in the order backward takes it.
    names = tuple(syntax.Name(name, range=closure.range) for name in context)
    returned = syntax.Return(
        syntax.Tuple((*output_exprs, *names), range=result.range), range=result.range
    )
    forward_def = syntax.FunctionDef(
        fdef.name, fdef.params, None, (*forward_body, returned), (), None, range=fdef.range
    )
    forward, _ = emit_function(
        forward_def, namespace, graph_name=op, param_types=_schema_types(op, len(fdef.params))
    )
    _flatten_tuple_return(forward)

    # 3. The backward again, its context typed as the forward computes it.
    count = len(output_exprs)
    context_types = {name: v.ty for name, v in zip(context, forward.outputs[count:], strict=True)}
    backward = _emit_backward(closure, namespace, [], context_types, op)
    _flatten_tuple_return(backward)
    return Formula(op, forward, backward, count, fdef.range)


def _schema_types(op: str, count: int) -> list[Type]:
    """Formula parameter types: the schema's (a variadic tail is packed into one tuple)."""
    types = [argument.ty for argument in OPS[op].schema.arguments]
    if OPS[op].schema.variadic:
        types[-1] = ANY
    return types[:count]


def _gradient_types(op: str, count: int) -> list[Type]:
    """The types of ``backward``'s parameters: each result's gradient has the result's type
    (a list of arrays for ``np.split``), a tensor where the schema says no more."""
    returns = list(OPS[op].schema.returns)
    if len(returns) == count:
        return returns
    return [TENSOR] * count


def _emit_backward(
    closure: syntax.FunctionDef,
    namespace: dict[str, object],
    context: list[str],
    context_types: dict[str, Type],
    op: str,
) -> Graph:
    graphs: list[Graph] = []
    inputs: dict[str, Value] = {}

    def free_name(identifier: str, where: SourceRange) -> Value | None:
        value = inputs.get(identifier)
        if value is None:
            ty = context_types.get(identifier, ANY)
            value = graphs[0].add_input(ty, identifier)
            inputs[identifier] = value
            context.append(identifier)
        return value

    graph, _ = emit_function(
        closure,
        namespace,
        free_name=free_name,
        graph_name=f"{op}.backward",
        param_types=_gradient_types(op, len(closure.params)),
        on_graph=graphs.append,
    )
    return graph


def _flatten_tuple_return(graph: Graph) -> None:
    """Make a graph that returns one tuple return its elements instead."""
    (result,) = graph.outputs
    producer = result.node
    if producer.kind != "prim::TupleConstruct":
        return
    elements = list(producer.inputs)
    graph.block.erase_output(0)
    for element in elements:
        graph.register_output(element)
    if not producer.has_uses():
        producer.destroy()
