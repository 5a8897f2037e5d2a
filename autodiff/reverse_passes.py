"""The passes autodiff adds to the pass registry, in one list, so that `autodiff opt` can run
differentiation and lambda lifting on IR text as it runs any pass of `passes`.

Registering them here, rather than where each is defined, keeps `autodiff.pipeline` and
`autodiff.lambda_lift` free of registry side effects: importing the `autodiff` package (which
imports this module) is what puts them in `passes.registry.PASSES`.
"""

from __future__ import annotations

from autodiff.lambda_lift import lambda_lift_module
from autodiff.pipeline import differentiate_graph
from passes.registry import PassFunction, register_module_pass, register_pass

GRAPH_PASSES: tuple[tuple[str, PassFunction], ...] = (("differentiate", differentiate_graph),)
"""Passes on one graph: ``graph -> bool``."""

MODULE_PASSES: tuple[tuple[str, PassFunction], ...] = (("lambda-lift", lambda_lift_module),)
"""Passes on a module of graphs, which may replace its graphs: ``module -> bool``."""

for _name, _function in GRAPH_PASSES:
    register_pass(_name)(_function)
for _name, _function in MODULE_PASSES:
    register_module_pass(_name)(_function)
