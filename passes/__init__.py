"""IR -> IR transformations and the registry that names them (see `passes.registry`)."""

from __future__ import annotations

from passes import (
    autograd_zero,
    constant_propagation,
    cse,
    dce,
    dedup_captures,
    fold_sizes,
    functionalize,
    inline,
    lift_constants,
    loop_invariants,
    lower_tuples,
    requires_grad,
    shape_propagation,
    stack_tapes,
)
from passes.registry import (
    PASSES,
    Module,
    PassError,
    PipelineError,
    parse_pipeline,
    register_module_pass,
    register_pass,
    run_module_passes,
    run_passes,
)

__all__ = [
    "PASSES",
    "Module",
    "PassError",
    "PipelineError",
    "autograd_zero",
    "constant_propagation",
    "cse",
    "dce",
    "dedup_captures",
    "fold_sizes",
    "functionalize",
    "inline",
    "lift_constants",
    "loop_invariants",
    "lower_tuples",
    "parse_pipeline",
    "register_module_pass",
    "register_pass",
    "requires_grad",
    "run_module_passes",
    "run_passes",
    "shape_propagation",
    "stack_tapes",
]
