"""Optional columns: the same workload sources run by JAX (jit), HIPS autograd or PyTorch, when
they are importable. Nothing here installs anything; a system that is missing, or that cannot
run a workload, gives an empty cell and the reason in the run's notes.

Each system gets the workload's own code object with its module's ``np`` replaced by the
system's NumPy namespace (``jax.numpy``, ``autograd.numpy``, ``torch._numpy``), so all of them
run the very source that is timed for us; except that JAX runs a workload's ``jax_function``
when it has one (the ODE's loop as ``lax.fori_loop``: JAX unrolls a plain Python loop).
"""

from __future__ import annotations

import importlib
import types
from collections.abc import Callable
from typing import Any

from benchmarks.workloads import Workload

Prepared = Callable[[], Any]  # one value-and-gradient call on fixed inputs


def _with_numpy(fn: Callable[..., Any], namespace: Any) -> Callable[..., Any]:
    """``fn`` with the global name ``np`` bound to ``namespace``."""
    assert isinstance(fn, types.FunctionType)
    globals_ = {**fn.__globals__, "np": namespace}
    return types.FunctionType(fn.__code__, globals_, fn.__name__, fn.__defaults__, fn.__closure__)


def _jax(workload: Workload, inputs: tuple[Any, ...]) -> Prepared:
    jax = importlib.import_module("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = importlib.import_module("jax.numpy")
    source = workload.jax_function or workload.function  # a long loop as lax.fori_loop
    fn = jax.jit(jax.value_and_grad(_with_numpy(source, jnp), argnums=workload.argnums))
    args = [jax.tree_util.tree_map(jnp.asarray, a) for a in inputs]  # pytrees too

    def call() -> Any:
        value, grads = fn(*args)
        return jax.block_until_ready((value, grads))

    return call


def _autograd(workload: Workload, inputs: tuple[Any, ...]) -> Prepared:
    autograd = importlib.import_module("autograd")
    anp = importlib.import_module("autograd.numpy")
    fn = autograd.value_and_grad(_with_numpy(workload.function, anp), workload.argnums)
    return lambda: fn(*inputs)


def _torch(workload: Workload, inputs: tuple[Any, ...]) -> Prepared:
    torch = importlib.import_module("torch")
    tnp = importlib.import_module("torch._numpy")
    torch.set_num_threads(1)
    fn = _with_numpy(workload.function, tnp)
    tensors = [torch.as_tensor(a).clone() for a in inputs]
    wrt = [tensors[i].requires_grad_() for i in workload.argnums]

    def call() -> Any:
        value = fn(*[tnp.asarray(t) for t in tensors]).tensor
        return value, torch.autograd.grad(value, wrt)

    return call


SYSTEMS: dict[str, Callable[[Workload, tuple[Any, ...]], Prepared]] = {
    "jax": _jax,
    "autograd": _autograd,
    "torch": _torch,
}
SYSTEM_MODULES = {"jax": "jax", "autograd": "autograd", "torch": "torch"}


def available() -> list[str]:
    """The systems that can be imported here."""
    found = []
    for name, module in SYSTEM_MODULES.items():
        try:
            importlib.import_module(module)
        except ImportError:
            continue
        found.append(name)
    return found
