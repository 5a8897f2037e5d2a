"""Run a graph on NumPy values: a plan compiled once, dispatching on the operator table.

``Executable(graph)`` compiles ``graph`` into a plan: every value gets a slot in a flat frame,
every node becomes a step that reads its input slots, calls the kernel `OPS` gives for its kind
(looked up once, here) and writes its output slots. Calling the executable runs the plan on a
fresh frame and returns a list with one item per graph output. ``run_graph(graph, *args)``
compiles and runs once. The plan is a snapshot: after mutating the graph, build a new
Executable.

Only the structural prim ops are run by the interpreter itself: prim::Constant and
prim::AutogradZero (whose values sit in the frame from the start), prim::If, prim::Loop,
prim::GradOf, prim::Native (its block, as if inlined), prim::CallFunction, and prim::Reverse
(not run: it is differentiation's reverse program before lambda lifting, and the forward
results do not depend on it).

# Note [GradOf semantics]
# prim::GradOf(%grads...) runs its block only when some input gradient is not AUTOGRAD_ZERO.
# When every input is AUTOGRAD_ZERO (or there are no inputs), the gradients it would compute are
# all zero: each output is AUTOGRAD_ZERO and the block is skipped, as TorchScript's
# `any_defined` guard does. prim::AutogradAdd treats AUTOGRAD_ZERO as the additive identity.

# Note [Freeing values]
# A step drops the frame's reference to every value whose last use it is, so NumPy memory is
# released as early as the program allows. A use inside a nested block counts as a use by the
# node that owns the block, so a value a loop body or branch reads lives until that node
# finishes. Block results are dropped once the owning node has copied them out; constants are
# never dropped, since a loop body reads them on every iteration. The arguments are dropped
# too: `Executable.run` takes them in a list it empties, so that the caller keeps no reference
# to what the graph frees (``__call__``'s argument tuple lives until the call returns).

# Note [Observers]
# ``Executable(graph, observer=fn)`` runs every kernel node as ``fn(node, kernel, args)``, which
# must return ``kernel(*args)`` — the hook anomaly mode and the profiler time and check nodes
# with. The choice is made once, when the plan is compiled: an executable without an observer
# compiles the very steps it did before, so observing costs nothing until it is asked for.
# Generated code takes the same observer as an option (Note [Observed code] in `ir.codegen`),
# and is what production runs; this interpreter is the oracle tests compare it with.
# Structural nodes (If, Loop, GradOf, calls) are not observed themselves; the kernel nodes in
# their blocks are.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ir.analysis import last_uses
from ir.errors import AutodiffError, InterpreterError, ProgramRaised, located_user_exception
from ir.graph import Block, Graph, Node, Value
from ir.ops import AUTOGRAD_ZERO, OPS, OpDef
from ir.printer import print_node

__all__ = ["AUTOGRAD_ZERO", "Executable", "Observer", "run_graph"]

Frame = list[Any]
Step = Callable[[Frame], None]
# observer(node, kernel, args) runs one kernel node; it returns kernel(*args). Note [Observers]
Observer = Callable[[Node, Callable[..., Any], tuple[Any, ...]], Any]


@dataclass(frozen=True, slots=True)
class BlockPlan:
    """The compiled form of one block."""

    param_slots: tuple[int, ...]
    steps: tuple[Step, ...]
    result_slots: tuple[int, ...]
    entry_frees: tuple[int, ...]  # parameters nothing reads
    exit_frees: tuple[int, ...]  # values last read by the block's return


def run_block(plan: BlockPlan, frame: Frame) -> list[Any]:
    """Run a block whose parameters are already in ``frame``; returns its results."""
    for slot in plan.entry_frees:
        frame[slot] = None
    for step in plan.steps:
        step(frame)
    results = [frame[slot] for slot in plan.result_slots]
    for slot in plan.exit_frees:
        frame[slot] = None
    return results


class Executable:
    """``graph`` compiled for repeated runs: ``Executable(g)(x, w) -> [outputs...]``.

    With an ``observer``, every kernel node runs through it (Note [Observers]):

    >>> seen = []
    >>> def observe(node, kernel, args):
    ...     seen.append(node.kind)
    ...     return kernel(*args)
    >>> Executable(graph, observer=observe)(x)
    """

    def __init__(
        self,
        graph: Graph,
        ops: Mapping[str, OpDef] = OPS,
        functions: Mapping[str, Graph] | None = None,
        observer: Observer | None = None,
    ) -> None:
        self.graph = graph
        self.observer = observer
        compiler = _Compiler(ops, functions or {}, observer)
        self.plan = compiler.block(graph.block)
        self.template: Frame = [None] * len(compiler.slots)
        for slot, value in compiler.static.items():
            self.template[slot] = value
        # A constant array handed to the caller is copied, so mutating it cannot change later runs.
        self.copied_outputs = tuple(
            i
            for i, slot in enumerate(self.plan.result_slots)
            if isinstance(compiler.static.get(slot), np.ndarray)
        )

    def __call__(self, *args: Any) -> list[Any]:
        return self.run(list(args))

    def run(self, args: list[Any]) -> list[Any]:
        """Run on ``args``, emptying the list as the values move into the frame, so that each
        is freed after its last use rather than when the call returns. Note [Freeing values]

        >>> inputs = [vjp, saved_a, saved_b]
        >>> (dx,) = executable.run(inputs)        # inputs == [] from the start of the run
        """
        expected = len(self.plan.param_slots)
        if len(args) != expected:
            name = f"graph @{self.graph.name}" if self.graph.name else "the graph"
            raise InterpreterError(f"{name} takes {expected} arguments, got {len(args)}")
        frame = self.template.copy()
        for slot, arg in zip(self.plan.param_slots, args, strict=True):
            frame[slot] = arg
        args.clear()
        results = run_block(self.plan, frame)
        for index in self.copied_outputs:
            results[index] = results[index].copy()
        return results


def run_graph(graph: Graph, *args: Any, functions: Mapping[str, Graph] | None = None) -> list[Any]:
    """Run ``graph`` once on ``args``; returns one item per graph output. ``functions`` holds
    the graphs that ``prim::CallFunction[callee="name"]`` nodes call (a module's graphs)."""
    return Executable(graph, functions=functions)(*args)


def node_error(node: Node, exc: BaseException) -> AutodiffError:
    """An InterpreterError naming the failing node, its IR line and its source location; for
    the program's own ``raise`` or ``assert``, the exception it names, located there."""
    if isinstance(exc, ProgramRaised):
        return located_user_exception(exc, node.source_range)
    detail = str(exc) or type(exc).__name__
    error = InterpreterError(f"{node.kind}: {detail}", node.source_range)
    error.add_note_line(f"while executing {print_node(node)}")
    return error


class _Compiler:
    def __init__(
        self, ops: Mapping[str, OpDef], functions: Mapping[str, Graph], observer: Observer | None
    ) -> None:
        self.ops = ops
        self.functions = functions
        self.observer = observer
        self.slots: dict[Value, int] = {}
        self.static: dict[int, Any] = {}  # constant slots, filled in every frame from the start

    def slot(self, value: Value) -> int:
        found = self.slots.get(value)
        if found is None:
            found = self.slots[value] = len(self.slots)
        return found

    def slots_of(self, values: list[Value]) -> tuple[int, ...]:
        return tuple(self.slot(v) for v in values)

    def block(self, block: Block) -> BlockPlan:
        nodes = list(block.nodes())
        last_use = last_uses(block, nodes)
        frees: list[list[int]] = [[] for _ in range(len(nodes) + 2)]  # entry, each node, exit
        for position, node in enumerate([block.param_node, *nodes]):
            if node.kind in STATIC_KINDS:
                continue
            for value in node.outputs:
                frees[last_use.get(value, position)].append(self.slot(value))
        steps: list[Step] = []
        for position, node in enumerate(nodes, start=1):
            step = self.node(node, tuple(frees[position]))
            if step is not None:
                steps.append(step)
        return BlockPlan(
            self.slots_of(block.inputs),
            tuple(steps),
            self.slots_of(block.outputs),
            tuple(frees[0]),
            tuple(frees[-1]),
        )

    def node(self, node: Node, frees: tuple[int, ...]) -> Step | None:
        op = self.ops.get(node.kind)
        if op is None:
            raise compile_error(node, f"unknown operator {node.kind}")
        if op.kernel is not None:
            unpack = op.num_outputs != 1
            ins = self.slots_of(node.inputs)
            if self.observer is not None:  # See Note [Observers]
                outs = self.slots_of(node.outputs)
                return _observed_step(op.kernel, node, ins, outs, unpack, frees, self.observer)
            return _kernel_step(op.kernel, node, ins, self, unpack, frees)
        structural = _STRUCTURAL.get(node.kind)
        if structural is None:
            raise compile_error(
                node, f"{node.kind} has no kernel and the interpreter cannot run it"
            )
        return structural(self, node, frees)

    # -- structural ops ----------------------------------------------------------------------

    def constant(self, node: Node, frees: tuple[int, ...]) -> Step | None:
        self.static[self.slot(node.output)] = node.attrs.get("value")
        return None

    def autograd_zero(self, node: Node, frees: tuple[int, ...]) -> Step | None:
        self.static[self.slot(node.output)] = AUTOGRAD_ZERO
        return None

    def reverse(self, node: Node, frees: tuple[int, ...]) -> Step | None:
        return None

    def if_(self, node: Node, frees: tuple[int, ...]) -> Step:
        cond = self.slot(node.inputs[0])
        then_plan, else_plan = self.block(node.blocks[0]), self.block(node.blocks[1])
        outs = self.slots_of(node.outputs)

        def step(frame: Frame) -> None:
            try:
                taken = then_plan if frame[cond] else else_plan
            except Exception as exc:
                raise node_error(node, exc) from exc
            for slot, value in zip(outs, run_block(taken, frame), strict=True):
                frame[slot] = value
            for slot in frees:
                frame[slot] = None

        return step

    def loop(self, node: Node, frees: tuple[int, ...]) -> Step:
        trip_slot, cond_slot = self.slot(node.inputs[0]), self.slot(node.inputs[1])
        carried = self.slots_of(node.inputs[2:])
        body = self.block(node.blocks[0])
        if len(body.param_slots) != 1 + len(carried):
            raise compile_error(node, "prim::Loop body must take (%i, carried values...)")
        iteration, params = body.param_slots[0], body.param_slots[1:]
        outs = self.slots_of(node.outputs)

        def step(frame: Frame) -> None:
            try:
                trip_count, go_on = frame[trip_slot], bool(frame[cond_slot])
            except Exception as exc:
                raise node_error(node, exc) from exc
            values = [frame[slot] for slot in carried]
            i = 0
            while go_on and i < trip_count:
                frame[iteration] = i
                for slot, value in zip(params, values, strict=True):
                    frame[slot] = value
                values.clear()  # the body frees its parameters after their last use
                condition, *values = run_block(body, frame)
                try:
                    go_on = bool(condition)
                except Exception as exc:
                    raise node_error(node, exc) from exc
                i += 1
            for slot, value in zip(outs, values, strict=True):
                frame[slot] = value
            for slot in frees:
                frame[slot] = None

        return step

    def grad_of(self, node: Node, frees: tuple[int, ...]) -> Step:
        # See Note [GradOf semantics]
        grads = self.slots_of(node.inputs)
        body = self.block(node.blocks[0])
        outs = self.slots_of(node.outputs)

        def step(frame: Frame) -> None:
            if all(frame[slot] is AUTOGRAD_ZERO for slot in grads):
                for slot in outs:
                    frame[slot] = AUTOGRAD_ZERO
            else:
                for slot, value in zip(outs, run_block(body, frame), strict=True):
                    frame[slot] = value
            for slot in frees:
                frame[slot] = None

        return step

    def native(self, node: Node, frees: tuple[int, ...]) -> Step:
        """A native region (Note [Native regions] in `passes.native_regions`): its block run
        here as if inlined, its parameters bound to the node's operands."""
        ins, outs = self.slots_of(node.inputs), self.slots_of(node.outputs)
        body = self.block(node.blocks[0])
        if len(body.param_slots) != len(ins):
            raise compile_error(node, "prim::Native block must take one parameter per operand")

        def step(frame: Frame) -> None:
            for slot, source in zip(body.param_slots, ins, strict=True):
                frame[slot] = frame[source]
            for slot, value in zip(outs, run_block(body, frame), strict=True):
                frame[slot] = value
            for slot in frees:
                frame[slot] = None

        return step

    def call_function(self, node: Node, frees: tuple[int, ...]) -> Step:
        if "callee" in node.attrs:
            return self.call_graph(node, frees)
        callee_slot, args = self.slot(node.inputs[0]), self.slots_of(node.inputs[1:])
        outs = self.slots_of(node.outputs)

        def step(frame: Frame) -> None:
            callee = frame[callee_slot]
            try:
                if isinstance(callee, Graph):
                    results: Any = run_graph(callee, *[frame[s] for s in args])
                elif isinstance(callee, Executable):
                    results = callee(*[frame[s] for s in args])
                else:
                    result = callee(*[frame[s] for s in args])
                    results = (result,) if len(outs) == 1 else result if outs else ()
                for slot, value in zip(outs, results, strict=True):
                    frame[slot] = value
            except AutodiffError:
                raise
            except Exception as exc:
                raise node_error(node, exc) from exc
            for slot in frees:
                frame[slot] = None

        return step

    def call_graph(self, node: Node, frees: tuple[int, ...]) -> Step:
        """``prim::CallFunction[callee="name"](args...)``: run graph @name of ``functions``,
        compiled on its first call (so recursive graphs compile)."""
        name = node.attrs["callee"]
        callee = self.functions.get(name)
        if callee is None:
            raise compile_error(
                node, f"no graph @{name} to call: pass the module's graphs, or run the inline pass"
            )
        args, outs = self.slots_of(node.inputs), self.slots_of(node.outputs)
        compiled: list[Executable] = []
        ops, functions, observer = self.ops, self.functions, self.observer

        def step(frame: Frame) -> None:
            if not compiled:
                compiled.append(Executable(callee, ops, functions, observer))
            results = compiled[0](*[frame[s] for s in args])
            for slot, value in zip(outs, results, strict=True):
                frame[slot] = value
            for slot in frees:
                frame[slot] = None

        return step


# Their values are put in every frame before the run and never freed.
STATIC_KINDS = frozenset({"prim::Constant", "prim::AutogradZero"})

_STRUCTURAL: dict[str, Callable[[_Compiler, Node, tuple[int, ...]], Step | None]] = {
    "prim::Constant": _Compiler.constant,
    "prim::AutogradZero": _Compiler.autograd_zero,
    "prim::Reverse": _Compiler.reverse,
    "prim::If": _Compiler.if_,
    "prim::Loop": _Compiler.loop,
    "prim::GradOf": _Compiler.grad_of,
    "prim::Native": _Compiler.native,
    "prim::CallFunction": _Compiler.call_function,
}


def _kernel_step(
    kernel: Callable[..., Any],
    node: Node,
    ins: tuple[int, ...],
    compiler: _Compiler,
    unpack: bool,
    frees: tuple[int, ...],
) -> Step:
    outs = compiler.slots_of(node.outputs)
    if len(outs) == 1 and not unpack:
        return _single_output_step(kernel, node, ins, outs[0], frees)

    def multiple(frame: Frame) -> None:
        try:
            result = kernel(*[frame[slot] for slot in ins])
            if outs:
                for slot, value in zip(outs, result, strict=True):
                    frame[slot] = value
        except Exception as exc:
            raise node_error(node, exc) from exc
        for slot in frees:
            frame[slot] = None

    return multiple


def _single_output_step(
    kernel: Callable[..., Any], node: Node, ins: tuple[int, ...], out: int, frees: tuple[int, ...]
) -> Step:
    # Unary and binary kernels are most nodes: reading their slots directly, rather than
    # building an argument list, is most of the per-node overhead.
    if len(ins) == 1:
        (a,) = ins

        def unary(frame: Frame) -> None:
            try:
                frame[out] = kernel(frame[a])
            except Exception as exc:
                raise node_error(node, exc) from exc
            for slot in frees:
                frame[slot] = None

        return unary
    if len(ins) == 2:
        a, b = ins

        def binary(frame: Frame) -> None:
            try:
                frame[out] = kernel(frame[a], frame[b])
            except Exception as exc:
                raise node_error(node, exc) from exc
            for slot in frees:
                frame[slot] = None

        return binary

    def single(frame: Frame) -> None:
        try:
            frame[out] = kernel(*[frame[slot] for slot in ins])
        except Exception as exc:
            raise node_error(node, exc) from exc
        for slot in frees:
            frame[slot] = None

    return single


def _observed_step(
    kernel: Callable[..., Any],
    node: Node,
    ins: tuple[int, ...],
    outs: tuple[int, ...],
    unpack: bool,
    frees: tuple[int, ...],
    observer: Observer,
) -> Step:
    """A kernel node run through ``observer``. See Note [Observers]."""

    def observed(frame: Frame) -> None:
        args = tuple(frame[slot] for slot in ins)
        try:
            result = observer(node, kernel, args)
            if len(outs) == 1 and not unpack:
                frame[outs[0]] = result
            elif outs:
                for slot, value in zip(outs, result, strict=True):
                    frame[slot] = value
        except AutodiffError:
            raise  # the observer's own diagnostic (anomaly mode) is already located
        except Exception as exc:
            raise node_error(node, exc) from exc
        del args, result
        for slot in frees:
            frame[slot] = None

    return observed


def compile_error(node: Node, message: str) -> InterpreterError:
    error = InterpreterError(message, node.source_range)
    error.add_note_line(f"while compiling {print_node(node)}")
    return error
