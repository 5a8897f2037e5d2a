"""Running a `Gradient`: ``f`` on the arguments, then ``df`` on the vjps and what ``f`` saved,
stitched field for field by the Gradient's index lists (TorchScript's DifferentiableGraphOp).

# Note [Missing vjps]
# A caller passes None for the vjp of an output it does not differentiate. ``df`` gets a zero
# array of that output's shape and dtype (recorded by `CompiledGradient.forward`) rather than
# `AUTOGRAD_ZERO`: specialize-autograd-zero unwraps GradOf nodes fed by vjps on the promise
# that vjps are arrays (Note [Which values can be AUTOGRAD_ZERO] in `passes.autograd_zero`).
# The other way round, a gradient ``df`` returns as AUTOGRAD_ZERO (when its type was not
# complete enough to materialise at compile time) reaches the caller as a zero array shaped
# like its input, so callers never see the sentinel.

# Note [Owned temporaries]
# ``df``'s memory plan writes into values that die (Note [Typed calls] in `ir.typed_calls`),
# but never into its arguments, since only the caller knows who else holds them. Many of
# them are ``f``'s temporaries that, on the common path, nobody else holds once ``df``
# starts: the tanh output ``t`` that ``1 - t * t`` reads, the ``h`` that ``cos(h)`` reads.
# So a CompiledGradient has two ``df``s: ``df``, which writes into no argument, and
# `owning_df` (compiled on first use), which may write into the arguments at `owned`, and
# those are the captured outputs of ``f`` that
#
# - `CompiledGraph.private_outputs` of ``f`` lists: new arrays from a fresh call in ``f``'s
#   top block, read in ``f`` only by ufuncs and reductions (no view of them, no tape or list
#   holding them), returned once. An argument passed through, a view (``x.T``, ``x[1:]``), a
#   value that shares memory with another output, a list or a tape is never among them;
# - are not real outputs of ``f`` (the caller gets those back), and are captured once.
#
# Which of ``f``'s outputs are private is read from ``f``'s generated code at compile time,
# the same facts its memory plan rests on. When ``f`` is interpreted, ``df`` owns nothing
# (and the interpreter's ``df`` never writes into a value), so results stay bit-identical.
#
# The owning ``df`` runs only where nothing but the call holds those values: the hit path of
# ``grad``/``value_and_grad`` (Note [Gradient cache] in `autodiff.grad`: it hands ``df`` a
# list it empties on entry, and drops f's temporaries from its own list first), and
# `CompiledGradient.backward` without ``retain`` (the `Saved` lets go of them), when no
# saved-value hook packed them (``pack`` may return the very array and keep it) and no node
# hook watches (an observed run's code has no memory plan). A backward with ``retain=True``
# (``ad.vjp``, which may run it again) takes the non-owning ``df``. Compiling ``df`` twice
# would cost a gradient that runs once a tenth more time to its first result (a 5,000-node
# chain: 0.2 s of 2 s), so the owning ``df`` is compiled when a second run could use it: the
# first hit, the second `backward` without ``retain``. Only outputs large enough for the
# memory plan are private (`INPLACE_MIN_SIZE` in `ir.typed_calls`), so a gradient of small
# arrays never compiles it at all.

# Note [Seeded df]
# For ``grad``/``value_and_grad`` of a scalar loss, the vjp of the loss is always the same
# ones: a 0-d array of the loss's dtype (`_seed_maker` in `autodiff.grad`). ``df`` spends its
# first nodes on it: rosenbrock's starts with mul(dout, 2), neg, mul(dout, 100.), mul(_, 2),
# neg, mul(_, 2), each a NumPy call on a 0-d value at about a microsecond, a tenth of the
# whole gradient. So the hit path (Note [Gradient cache]) runs `CompiledGradient.seeded_df`:
# a copy of ``df`` whose seed input is a prim::Constant holding a 0-d array exactly like the
# seed it would have been given (same dtype, same Python type), then constant propagation,
# CSE and DCE, compiled with the owning memory plan (Note [Owned temporaries]; the owned
# positions after the seed's move down by one). Constant propagation folds with the kernels
# that would run, and keeps a NumPy scalar result a NumPy scalar, so each folded constant is
# the value the node would have made, and the gradients are bit-identical to the general
# path's; tuples of constants (slice specs) fold as well. The other vjps (of aux or other
# tuple outputs) stay inputs: they are zeros of shapes only the run knows.
#
# It is taken only for a loss value of the type, dtype and shape the hit path was built for
# (any other value takes the owning ``df`` with a seed of its own), and not built at all for
# a one-element loss that is not 0-d, or when the folded ``df`` would return a constant array
# (``loss = x`` for a 0-d ``x`` gives ``dx = dout``): every call would hand out one array.
# ``vjp``, ``backward``, taps, hooks, anomaly mode and the profiler never take it: they run
# ``df`` on the vjps they are given. Like the owning ``df``, it is compiled on the first hit.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from autodiff import instrument
from autodiff.errors import DifferentiationError
from autodiff.gradient import Gradient
from ir.codegen import CompiledGraph, Runnable, executable
from ir.graph import Graph, Value
from ir.interpreter import AUTOGRAD_ZERO, Observer
from ir.types import TensorType
from passes.constant_propagation import propagate_constants
from passes.cse import eliminate_common_subexpressions
from passes.dce import eliminate_dead_code


@dataclass(frozen=True, slots=True)
class ZeroSpec:
    """The shape and dtype of a runtime value, to make its zero without keeping the value; for
    a list or tuple of arrays (a function that returns a list), one spec per element.

    >>> ZeroSpec.of([np.ones(2), np.ones(())]).zeros()
    [array([0., 0.]), array(0.)]
    """

    shape: tuple[int, ...]
    dtype: np.dtype[Any] | None
    elements: tuple[ZeroSpec, ...] = ()
    container: type[list[Any]] | type[tuple[Any, ...]] | None = None

    @staticmethod
    def of(value: Any) -> ZeroSpec:
        if type(value) is np.ndarray:  # the common case, without np.shape and np.result_type
            return ZeroSpec(value.shape, value.dtype)
        if isinstance(value, list | tuple):
            elements = tuple(ZeroSpec.of(element) for element in value)
            return ZeroSpec((), None, elements, list if isinstance(value, list) else tuple)
        return ZeroSpec(tuple(np.shape(value)), np.result_type(value))

    def zeros(self) -> Any:
        if self.container is not None:
            return self.container(element.zeros() for element in self.elements)
        return np.zeros(self.shape, self.dtype)


@dataclass(slots=True)
class Saved:
    """What one forward run keeps for its backward: only what ``df`` reads, and the shapes
    of the vjps and gradients it may have to stand in zeros for. See Note [Missing vjps]."""

    captured_inputs: list[Any]  # the arguments at df_input_captured_inputs, in that order
    captured_outputs: list[Any]  # f's outputs at df_input_captured_outputs, in that order
    vjp_zeros: list[ZeroSpec]  # one per entry of df_input_vjps
    grad_zeros: list[ZeroSpec]  # one per entry of df_output_vjps
    released: bool = field(default=False)
    unpack: Callable[[Any], Any] | None = None  # set by `pack`; see `instrument.saved_value_hooks`

    def temporary_bytes(self) -> int:
        """The bytes of the arrays the forward run made and keeps for the backward (tapes and
        other temporaries, through lists and tuples; each array once). The captured
        arguments are not counted: the caller holds them anyway; what saved-value hooks
        packed is counted as packed (a packed argument only where ``pack`` made a new array).

        >>> outputs, saved = compiled.forward([x, w])
        >>> saved.temporary_bytes()
        3200
        """
        seen: set[int] = set()

        def size(value: Any, skip: int | None = None) -> int:
            total = 0
            for array in instrument.held_arrays(value):
                if id(array) not in seen and id(array) != skip:
                    seen.add(id(array))
                    total += int(array.nbytes)
            return total

        packed = [v for v in self.captured_inputs if isinstance(v, instrument.Packed)]
        return sum(size(value) for value in self.captured_outputs) + sum(
            size(value, value.source_id) for value in packed
        )

    def pack(self, pack: Callable[[Any], Any], unpack: Callable[[Any], Any]) -> None:
        """Keep every captured array as ``pack(array)``; `take` gives back ``unpack(packed)``."""
        self.captured_inputs = [instrument.pack_value(v, pack) for v in self.captured_inputs]
        self.captured_outputs = [instrument.pack_value(v, pack) for v in self.captured_outputs]
        self.unpack = unpack

    def take(self, retain: bool) -> list[Any]:
        """The captured values in df's order; unless ``retain``, this Saved lets go of them."""
        if self.released:
            raise DifferentiationError(
                "the values saved by this forward run were already used by a backward run; "
                "run forward again, or pass retain=True to backward"
            )
        values = self.captured_inputs + self.captured_outputs
        if not retain:
            self.captured_inputs = []
            self.captured_outputs = []
            self.released = True
        if self.unpack is not None:
            for index, value in enumerate(values):  # the packed form goes as its value comes
                values[index] = instrument.unpack_value(value, self.unpack)
        return values


def executor_for(graph: Graph, observer: Observer | None = None) -> Runnable:
    """What runs ``graph``: generated code, with ``observer`` watching every kernel node when
    given (Note [Observed code] in `ir.codegen`), which `ir.codegen.executable` builds."""
    return executable(graph, observer=observer)


class CompiledGradient:
    """A `Gradient` compiled once for repeated runs.

    >>> outputs, saved = compiled.forward([x, y])        # the function's own outputs
    >>> dx, dy = compiled.backward(saved, [np.ones(())])  # one gradient per df_output_vjps

    ``arguments``, when given, are arguments like those of every run: the same kinds, dtypes
    and shapes, as arguments with one signature key are (Note [Gradient cache] in
    `autodiff.grad`). The zeros that stand in for gradients (`grad_zeros`) are then worked
    out once, here, rather than from the arguments of each run; the arguments are not kept.
    """

    def __init__(self, gradient: Gradient, arguments: Sequence[Any] | None = None) -> None:
        self.gradient = gradient
        self.f = executor_for(gradient.f)
        self.df = executor_for(gradient.df)
        self.observed: tuple[Runnable, Runnable] | None = None
        self.owned = owned_inputs(gradient, self.f)
        """The inputs of ``df`` that ``owning_df`` may write into: Note [Owned temporaries]."""
        self._owning_df: Runnable | None = None
        self._private_runs = 0  # backward runs that could have taken the owning df
        self._seeded_df: Runnable | None = None
        self._seeded_built = False  # whether seeded_df ran (and _seeded_df is all there is)
        self.grad_zeros: list[ZeroSpec] | None = None
        """One spec per entry of df_output_vjps when ``arguments`` fixed them, else None."""
        if arguments is not None:
            self.grad_zeros = [ZeroSpec.of(arguments[i]) for i in gradient.df_output_vjps]

    def executables(self) -> tuple[Runnable, Runnable]:
        """``f`` and ``df`` as this run needs them: instrumented while anomaly mode or a
        profiler is on. See Note [Instrumented runs] in `autodiff.instrument`."""
        if not instrument.node_hooks_active():
            return self.f, self.df
        if self.observed is None:
            self.observed = (
                executor_for(self.gradient.f, instrument.NodeDispatch("f")),
                executor_for(self.gradient.df, instrument.NodeDispatch("df")),
            )
        return self.observed

    def owning_df(self) -> Runnable:
        """``df`` for a run that gives it the only references to what ``f`` saved, compiled on
        first use (``df`` itself when it could own nothing). See Note [Owned temporaries]."""
        if not self.owned:
            return self.df
        if self._owning_df is None:
            self._owning_df = executable(self.gradient.df, owned=self.owned)
        return self._owning_df

    def seeded_df(self, position: int, seed: np.ndarray[Any, Any]) -> Runnable | None:
        """The owning ``df`` with its input at ``position`` (a vjp) fixed to ``seed``, a 0-d
        array, and folded; it takes ``df``'s other inputs, in order. Built on first use; None
        when it cannot stand in for ``df``. See Note [Seeded df]."""
        if not self._seeded_built:
            self._seeded_built = True
            graph = seeded_graph(self.gradient.df, position, seed)
            if graph is not None:
                owned = {i - (i > position) for i in self.owned if i != position}
                self._seeded_df = executable(graph, owned=owned)
        return self._seeded_df

    def forward(self, args: Sequence[Any]) -> tuple[list[Any], Saved]:
        """Run ``f``: its real outputs, and what the backward run needs from this one."""
        grad = self.gradient
        outputs = self.executables()[0](*args)
        saved = Saved(
            captured_inputs=[args[i] for i in grad.df_input_captured_inputs],
            captured_outputs=[outputs[i] for i in grad.df_input_captured_outputs],
            vjp_zeros=[ZeroSpec.of(outputs[i]) for i in grad.df_input_vjps],
            grad_zeros=(
                self.grad_zeros
                if self.grad_zeros is not None
                else [ZeroSpec.of(args[i]) for i in grad.df_output_vjps]
            ),
        )
        del outputs[grad.f_real_outputs :]  # temporaries live on in `saved` only
        hooks = instrument.current_saved_hooks()
        if hooks is not None:
            saved.pack(*hooks)
        return outputs, saved

    def backward(
        self, saved: Saved, vjps: Sequence[Any | None], *, retain: bool = False
    ) -> list[Any]:
        """Run ``df``: one vjp per real output of ``f`` (None for zero) in, one gradient per
        entry of ``df_output_vjps`` out. ``saved`` lets go of its values as ``df`` takes
        them, so a second backward on it raises, unless this one is told to ``retain``."""
        grad = self.gradient
        if len(vjps) != grad.f_real_outputs:
            raise DifferentiationError(
                f"backward takes one vjp per output of the function ({grad.f_real_outputs}), "
                f"got {len(vjps)}"
            )
        run_df = self.executables()[1]
        # Nothing but this call holds the captured temporaries when saved lets go of them
        # and no hook packed them; from the second such run on, the owning df takes them
        # (Note [Owned temporaries]).
        if self.owned and not retain and saved.unpack is None:
            if not instrument.node_hooks_active() and (
                self._owning_df is not None or self._private_runs
            ):
                run_df = self.owning_df()
            self._private_runs += 1
        # df empties the list as it starts, so each captured value goes after its last use.
        (gradients,) = run_df.run(self._df_inputs(saved, vjps, retain))
        return [
            zero.zeros() if value is AUTOGRAD_ZERO else value
            for value, zero in zip(gradients, saved.grad_zeros, strict=True)
        ]

    def _df_inputs(self, saved: Saved, vjps: Sequence[Any | None], retain: bool) -> list[Any]:
        """``df``'s arguments: the vjps at df_input_vjps, then the captured values."""
        inputs = [
            zero.zeros() if vjps[index] is None else vjps[index]
            for index, zero in zip(self.gradient.df_input_vjps, saved.vjp_zeros, strict=True)
        ]
        inputs.extend(saved.take(retain))
        return inputs


def owned_inputs(gradient: Gradient, f: Runnable) -> frozenset[int]:
    """The positions of ``df``'s inputs that a run may give it to own: the captured outputs
    of ``f`` that are private temporaries (`CompiledGraph.private_outputs`), not real
    outputs, each captured once. None when ``f`` is interpreted: the interpreter makes no
    such promise, and its ``df`` writes into nothing anyway. See Note [Owned temporaries]."""
    if not isinstance(f, CompiledGraph):
        return frozenset()
    start = len(gradient.df_input_vjps) + len(gradient.df_input_captured_inputs)
    captured = gradient.df_input_captured_outputs
    return frozenset(
        start + position
        for position, index in enumerate(captured)
        if index >= gradient.f_real_outputs
        and index in f.private_outputs
        and captured.count(index) == 1
    )


def seeded_graph(df: Graph, position: int, seed: np.ndarray[Any, Any]) -> Graph | None:
    """A copy of ``df`` whose input at ``position`` is the constant ``seed``, a 0-d array,
    with what then depends on constants alone folded (constant propagation, CSE, DCE). None
    when the copy would return the seed itself, or a constant array folded from it: every
    run would hand the caller the same array. See Note [Seeded df]."""
    graph = df.copy()
    seed = seed.copy()  # the graph's own: the caller's stays out of reach of generated code
    vjp = graph.inputs[position]
    with graph.inserting_before(graph.block.param_node.next):
        constant = graph.insert_constant(seed, TensorType.of(seed))
    constant.name_hint = vjp.name_hint
    vjp.replace_all_uses_with(constant)
    graph.block.erase_input(position)
    propagate_constants(graph)
    eliminate_common_subexpressions(graph)
    eliminate_dead_code(graph)
    if any(_holds_constant_array(value) for value in graph.outputs):
        return None
    return graph


def _holds_constant_array(value: Value) -> bool:
    """Whether ``value`` is, or is a tuple or list built here of, a constant array."""
    node = value.node
    if node.kind == "prim::Constant":
        return isinstance(node.attr("value"), np.ndarray)
    if node.kind in ("prim::TupleConstruct", "prim::ListConstruct"):
        return any(_holds_constant_array(element) for element in node.inputs)
    return False
