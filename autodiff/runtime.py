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
# ``df``'s memory plan writes into values that die (Note [Typed calls] in `ir.typed_calls`).
# Many of its inputs are ``f``'s temporaries that nobody else holds once ``df`` starts: the
# tanh output ``t`` that ``1 - t * t`` reads, the ``h`` that ``cos(h)`` reads. So ``df`` is
# compiled once, owning the inputs at `CompiledGradient.owned`: the captured outputs of ``f``
#
# - that `CompiledGraph.private_outputs` of ``f`` lists: new arrays from a fresh call in
#   ``f``'s top block, read in ``f`` only by ufuncs and reductions (no view of them, no tape
#   or list holding them), returned once. An argument passed through, a view (``x.T``,
#   ``x[1:]``), a value that shares memory with another output, a list or a tape is never
#   among them;
# - that are not real outputs of ``f`` (the caller gets those back), and are captured once.
#
# Which of ``f``'s outputs are private is read from ``f``'s generated code at compile time,
# the same facts its memory plan rests on. When ``f`` is interpreted, ``df`` owns nothing.
#
# A run hands ``df`` those values only where nothing else holds them: a gradient call (Note
# [Gradient calls] in `autodiff.gradient_call`) drops its own references first, and
# `CompiledGradient.backward` without ``retain`` lets the `Saved` go of them. A backward that
# keeps them (``retain=True``: ``ad.vjp``, whose function may run again) or whose values a
# saved-value hook unpacked (``unpack`` may hand back an array the hook keeps) gives ``df``
# copies of the owned ones instead. An observed run's code has no memory plan and writes into
# nothing, so it takes them as they are. Only outputs large enough for the memory plan are
# private (`INPLACE_MIN_SIZE` in `ir.typed_calls`), so small gradients own nothing.

# Note [Seeded df]
# For ``grad``/``value_and_grad`` of a scalar loss, the vjp of the loss is always the same ones:
# a 0-d array of the loss's dtype. ``df`` would spend its first nodes on it: rosenbrock's starts
# with mul(dout, 2), neg, mul(dout, 100.), mul(_, 2), neg, mul(_, 2), each a NumPy call on a 0-d
# value at about a microsecond, a tenth of the whole gradient. So when a gradient is compiled
# for such calls (`CompiledGradient` given a ``seed``, which the loss's inferred type fixes:
# `loss_seed` in `autodiff.gradient_call`), its one ``df`` is built from a copy of ``df`` whose
# seed input is a prim::Constant holding that seed, then constant propagation, CSE and DCE
# (`seeded_graph`). Constant propagation folds with the kernels that would run and keeps a NumPy
# scalar result a NumPy scalar, so each folded constant is the value the node would have made,
# and the gradients are bit-identical to an unseeded ``df``'s; tuples of constants (slice specs)
# fold as well. The other vjps (of aux or other tuple outputs) stay inputs: they are zeros of
# shapes only the run knows.
#
# The fold is decided once, when the gradient is compiled, and only for a 0-d loss whose
# dtype shape propagation knows; a run checks that the loss it got is of that dtype and
# shape (a cheap guard; a mismatch is a compiler bug and raises). It is not done when the
# folded ``df`` would return a constant array (``loss = x`` for a 0-d ``x`` gives ``dx =
# dout``: every call would hand out one array); that ``df`` takes the seed as an input.
# ``vjp`` never folds (its cotangents are the caller's), nor do taps and hooks (their ``df``
# hands the seed's gradient to user code). An observed run (anomaly mode, the profiler) runs
# the unfolded ``df`` with observers and passes it the seed, so that it sees every node.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from autodiff import instrument
from autodiff.errors import DifferentiationError
from autodiff.gradient import Gradient, joined_graph
from autodiff.tiering import NativeTier
from ir.backends import Backend, dtype_name
from ir.codegen import CompiledGraph, Runnable, executable
from ir.collector import gc_paused
from ir.errors import BackendError
from ir.graph import Graph, Value
from ir.interpreter import AUTOGRAD_ZERO, Observer
from ir.ops import OPS, OpDef
from ir.types import TensorType
from passes.constant_propagation import propagate_constants
from passes.cse import eliminate_common_subexpressions
from passes.dce import eliminate_dead_code


@dataclass(frozen=True, slots=True)
class ZeroSpec:
    """The shape and dtype of a runtime value, to make its zero without keeping the value; for
    a list or tuple of arrays (a function that returns a list), one spec per element. With a
    backend's namespace ``xp`` (Note [Array backends] in `ir.backends`), the zeros are its
    arrays, made without looking at the value's data (a Dask value stays uncomputed).

    >>> ZeroSpec.of([np.ones(2), np.ones(())]).zeros()
    [array([0., 0.]), array(0.)]
    """

    shape: tuple[int, ...]
    dtype: Any  # a NumPy dtype; a backend's own dtype object with ``xp``
    elements: tuple[ZeroSpec, ...] = ()
    container: type[list[Any]] | type[tuple[Any, ...]] | None = None
    xp: Any = None

    @staticmethod
    def of(value: Any, xp: Any = None) -> ZeroSpec:
        if type(value) is np.ndarray and xp is None:  # the common case, without np.shape
            return ZeroSpec(value.shape, value.dtype)
        if isinstance(value, list | tuple):
            elements = tuple(ZeroSpec.of(element, xp) for element in value)
            return ZeroSpec((), None, elements, list if isinstance(value, list) else tuple, xp)
        if xp is not None:
            if hasattr(value, "shape") and hasattr(value, "dtype"):
                return ZeroSpec(tuple(value.shape), value.dtype, xp=xp)
            return ZeroSpec((), np.result_type(value), xp=xp)  # a number: a 0-d array
        return ZeroSpec(tuple(np.shape(value)), np.result_type(value))

    def zeros(self) -> Any:
        if self.container is not None:
            return self.container(element.zeros() for element in self.elements)
        if self.xp is not None:
            return self.xp.zeros(self.shape, dtype=backend_dtype(self.xp, self.dtype))
        return np.zeros(self.shape, self.dtype)


def backend_dtype(xp: Any, dtype: Any) -> Any:
    """``dtype`` (a NumPy one, or the backend's own) as namespace ``xp`` spells it."""
    return getattr(xp, dtype_name(dtype))


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


def executor_for(
    graph: Graph, observer: Observer | None = None, ops: Mapping[str, OpDef] = OPS
) -> Runnable:
    """What runs ``graph``: generated code, with ``observer`` watching every kernel node when
    given (Note [Observed code] in `ir.codegen`), which `ir.codegen.executable` builds; with
    ``ops``, a backend's kernels (Note [Array backends] in `ir.backends`)."""
    return executable(graph, ops, observer=observer)


class CompiledGradient:
    """A `Gradient` compiled once for repeated runs.

    >>> outputs, saved = compiled.forward([x, y])        # the function's own outputs
    >>> dx, dy = compiled.backward(saved, [np.ones(())])  # one gradient per df_output_vjps

    ``arguments``, when given, are arguments like those of every run: the same kinds, dtypes
    and shapes, as arguments with one signature key are (Note [Compilation units] in
    `autodiff.unit`). The zeros that stand in for gradients (`grad_zeros`) are then worked
    out once, here, rather than from the arguments of each run; the arguments are not kept.
    ``seed``, when given, is the 0-d vjp of output 0 every run will pass: ``df`` is compiled
    with it folded in where it can be (`seeded_at`), and backward then takes None for it.
    See Note [Seeded df]. ``df`` owns the inputs at `owned` (Note [Owned temporaries]).
    ``ops``, when given, is a backend's operator table (Note [Array backends] in
    `ir.backends`): ``f`` and ``df`` call its kernels, and ``df`` owns nothing.
    """

    def __init__(
        self,
        gradient: Gradient,
        arguments: Sequence[Any] | None = None,
        *,
        seed: np.ndarray[Any, Any] | None = None,
        ops: Mapping[str, OpDef] | None = None,
        backend: Backend | None = None,
    ) -> None:
        self.gradient = gradient
        self.backend_ops = ops
        self.backend = backend
        """The backend ``ops`` are for, None for NumPy (Note [Array backends])."""
        self.namespace = None if backend is None else backend.namespace()
        """Its namespace, which makes the zeros a run stands in (Note [Missing vjps])."""
        self.f = executor_for(gradient.f, ops=ops or OPS)
        owned = owned_inputs(gradient, self.f) if ops is None else frozenset()
        df_graph = gradient.df
        self.seed = seed
        self.seeded_at: int | None = None
        """The position among ``df``'s inputs of the vjp folded in as ``seed``, or None."""
        if seed is not None and 0 in gradient.df_input_vjps:
            position = gradient.df_input_vjps.index(0)
            with gc_paused():  # Note [Compile-time cost] in autodiff.pipeline
                folded = seeded_graph(gradient.df, position, seed)
            if folded is not None:
                df_graph, self.seeded_at = folded, position
                owned = frozenset(i - (i > position) for i in owned if i != position)
        self.owned = owned
        """The inputs of ``df`` it may write into: Note [Owned temporaries]."""
        self.df_graph = df_graph
        self.df = executable(df_graph, ops or OPS, owned=owned)
        self.observed: tuple[Runnable, Runnable] | None = None
        self.native: NativeTier | None = None
        """``f`` and ``df`` on the native tier, once a call asked (Note [Tiering] in
        `autodiff.tiering`); ``native.status`` says which tier runs, and why."""
        self.grad_zeros: list[ZeroSpec] | None = None
        """One spec per entry of df_output_vjps when ``arguments`` fixed them, else None."""
        if arguments is not None:
            self.grad_zeros = [ZeroSpec.of(arguments[i]) for i in gradient.df_output_vjps]

    def native_tier(self) -> NativeTier:
        """The native code of ``f`` and the ``df`` calls run (made once, compiled later): of
        the two joined into one graph where they can be (Note [Joined f and df] in
        `autodiff.gradient`), else of each."""
        if self.native is None:
            joined = None if self.seeded_at is None else joined_graph(self.gradient, self.df_graph)
            graphs = [self.gradient.f, self.df_graph] if joined is None else [joined]
            self.native = NativeTier(graphs)
        return self.native

    def executables(self) -> tuple[Runnable, Runnable]:
        """``f`` and ``df`` as this run needs them: instrumented while anomaly mode or a
        profiler is on, then ``df`` unfolded (Note [Seeded df]). See Note [Instrumented runs]
        in `autodiff.instrument`."""
        if not instrument.node_hooks_active():
            return self.f, self.df
        if self.observed is None:
            self.observed = (
                executor_for(self.gradient.f, instrument.NodeDispatch("f")),
                executor_for(self.gradient.df, instrument.NodeDispatch("df")),
            )
        return self.observed

    def forward(self, args: Sequence[Any]) -> tuple[list[Any], Saved]:
        """Run ``f``: its real outputs, and what the backward run needs from this one."""
        if self.backend is not None:
            refuse_instrumented(self.backend, self.gradient)
        grad = self.gradient
        xp = self.namespace
        outputs = self.executables()[0](*args)
        saved = Saved(
            captured_inputs=[args[i] for i in grad.df_input_captured_inputs],
            captured_outputs=[outputs[i] for i in grad.df_input_captured_outputs],
            vjp_zeros=[ZeroSpec.of(outputs[i], xp) for i in grad.df_input_vjps],
            grad_zeros=(
                self.grad_zeros
                if self.grad_zeros is not None
                else [ZeroSpec.of(args[i], xp) for i in grad.df_output_vjps]
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
        """Run ``df``: one vjp per real output of ``f`` (None for zero; for a seeded gradient,
        None for output 0, whose vjp is the seed) in, one gradient per entry of
        ``df_output_vjps`` out. ``saved`` lets go of its values as ``df`` takes them, so a
        second backward on it raises, unless this one is told to ``retain``."""
        grad = self.gradient
        if len(vjps) != grad.f_real_outputs:
            raise DifferentiationError(
                f"backward takes one vjp per output of the function ({grad.f_real_outputs}), "
                f"got {len(vjps)}"
            )
        if self.seed is not None and vjps[0] is not None:
            raise DifferentiationError(
                "this gradient was compiled with the vjp of output 0 folded in: pass None for it"
            )
        if self.backend is not None:
            refuse_instrumented(self.backend, self.gradient)
        observed = instrument.node_hooks_active()
        run_df = self.executables()[1]
        inputs = self._df_inputs(saved, vjps, retain, folded=not observed)
        # df may write into its owned inputs: copies where something else may hold them
        # (Note [Owned temporaries]); an observed df writes into nothing.
        if self.owned and not observed and (retain or saved.unpack is not None):
            for index in self.owned:
                inputs[index] = inputs[index].copy(order="K")
        # df empties the list as it starts, so each captured value goes after its last use.
        (gradients,) = run_df.run(inputs)
        return [
            zero.zeros() if value is AUTOGRAD_ZERO else value
            for value, zero in zip(gradients, saved.grad_zeros, strict=True)
        ]

    def _df_inputs(
        self, saved: Saved, vjps: Sequence[Any | None], retain: bool, folded: bool = True
    ) -> list[Any]:
        """``df``'s arguments: the vjps at df_input_vjps (not the folded seed's when the df
        run is the ``folded`` one), then the captured values."""
        inputs = []
        for index, zero in zip(self.gradient.df_input_vjps, saved.vjp_zeros, strict=True):
            vjp = vjps[index]
            if index == 0 and self.seed is not None:
                if folded and self.seeded_at is not None:
                    continue
                vjp = self.seed.copy()
            inputs.append(zero.zeros() if vjp is None else vjp)
        inputs.extend(saved.take(retain))
        return inputs


# Note [Backend runs refuse instrumentation]
# On a backend, ``forward`` and ``backward`` run ``f`` and ``df`` with its kernels
# (``ad.vjp``, Jacobians and Hessians take them), but not instrumented: anomaly mode checks
# every node's value for NaN and the profiler times every kernel, and on Dask a kernel builds
# a task graph, so the one would compute every intermediate (the data read once per node)
# and the other time graph building; a saved-value hook's ``pack`` is user code written for
# NumPy arrays (offloading, compressing), handed lazy values it would compute. So each is
# refused with a BackendError at the function's result rather than run on the NumPy path,
# which would convert the backend's arrays. Retained and hooked taps are refused for the
# same reason as saved-value hooks (a hook is NumPy code handed the gradient): their
# ``aten::_tap_hooked`` has no backend kernel, so `ir.backends.check_supported` refuses them
# where the tap is written, before anything runs.


def refuse_instrumented(backend: Backend, gradient: Gradient) -> None:
    """Refuse anomaly mode, the profiler and saved-value hooks on ``backend``'s arrays, at the
    value ``gradient``'s function returns: Note [Backend runs refuse instrumentation]."""
    what = (
        "anomaly mode and the profiler"
        if instrument.node_hooks_active()
        else "saved-value hooks"
        if instrument.current_saved_hooks() is not None
        else None
    )
    if what is not None:
        raise BackendError(
            f"{what} take NumPy arrays: on {backend.name} arrays they would compute every "
            "value they look at (Note [Backend runs refuse instrumentation] in "
            "autodiff.runtime); run them on a NumPy sample of the data",
            gradient.f.outputs[0].node.source_range if gradient.f_real_outputs else None,
        )


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
