"""The pass registry and runner (registration, pipeline text, verification, error wrapping),
and a check that each pass keeps the results of every graph in its FileCheck file."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from autodiff.cli import split_input
from ir.errors import AutodiffError, InterpreterError, VerifyError
from ir.graph import Graph, Use
from ir.interpreter import run_graph
from ir.parser import parse_graph, parse_module
from ir.printer import print_graph
from ir.types import BOOL, FLOAT, INT, TensorType, TupleType, Type
from passes import registry
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

GRAPH = """\
graph @f(%x : Tensor):
  %a : Tensor = aten::mul(%x, %x)
  %b : Tensor = aten::mul(%x, %x)
  %dead : Tensor = aten::exp(%x)
  %c : Tensor = aten::add(%a, %b)
  return (%c)
"""


@pytest.fixture
def scratch_registry() -> Iterator[None]:
    """Passes registered inside a test disappear after it."""
    saved = dict(PASSES)
    yield
    PASSES.clear()
    PASSES.update(saved)


# -- registration ---------------------------------------------------------------------------


def test_builtin_passes_are_registered() -> None:
    assert {"cse", "dce", "constant-propagation", "lower-tuples"} <= PASSES.keys()
    assert PASSES["dce"].summary.startswith("Erase pure nodes")


@pytest.mark.usefixtures("scratch_registry")
def test_duplicate_names_are_rejected() -> None:
    with pytest.raises(ValueError, match="pass 'dce' is already registered"):

        @register_pass("dce")
        def another_dce(graph: Graph) -> bool:
            return False


@pytest.mark.usefixtures("scratch_registry")
def test_names_must_be_kebab_case() -> None:
    with pytest.raises(ValueError, match="not kebab-case"):
        register_pass("Bad_Name")


@pytest.mark.usefixtures("scratch_registry")
def test_options_must_be_typed_keyword_only_with_defaults() -> None:
    with pytest.raises(TypeError, match="must be keyword-only"):

        @register_pass("positional-option")
        def positional(graph: Graph, limit: int = 3) -> bool:
            return False

    with pytest.raises(TypeError, match="must be int/float/bool/str"):

        @register_pass("list-option")
        def listed(graph: Graph, *, sizes: list[int] | None = None) -> bool:
            return False

    with pytest.raises(TypeError, match="needs a default"):

        @register_pass("no-default")
        def bare(graph: Graph, *, limit: int) -> bool:
            return False


# -- pipeline text --------------------------------------------------------------------------


@pytest.fixture
def options_pass(scratch_registry: None) -> None:
    @register_pass("with-options")
    def with_options(
        graph: Graph, *, count: int = 1, ratio: float = 0.5, flag: bool = False, label: str = ""
    ) -> bool:
        return False


def test_pipeline_without_options() -> None:
    assert parse_pipeline("cse,dce, cse") == [("cse", {}), ("dce", {}), ("cse", {})]
    assert parse_pipeline("") == []


def test_pipeline_option_is_typed_by_the_annotation() -> None:
    assert parse_pipeline("constant-propagation{max-elements=64},dce") == [
        ("constant-propagation", {"max_elements": 64}),
        ("dce", {}),
    ]


@pytest.mark.usefixtures("options_pass")
def test_pipeline_options_of_every_type() -> None:
    steps = parse_pipeline('with-options{count=3 ratio=2.5 flag label="a b"}')
    assert steps == [("with-options", {"count": 3, "ratio": 2.5, "flag": True, "label": "a b"})]
    steps = parse_pipeline("with-options{flag=false,label=plain}")
    assert steps == [("with-options", {"flag": False, "label": "plain"})]


@pytest.mark.usefixtures("options_pass")
def test_pipeline_option_errors() -> None:
    with pytest.raises(PipelineError, match="option 'count' of pass 'with-options' expects an int"):
        parse_pipeline("with-options{count=many}")
    with pytest.raises(PipelineError, match="has no option 'colour'; its options: count, ratio"):
        parse_pipeline("with-options{colour=red}")
    with pytest.raises(PipelineError, match="option 'count' of pass 'with-options' needs a value"):
        parse_pipeline("with-options{count}")


def test_unknown_pass_lists_the_known_ones() -> None:
    with pytest.raises(PipelineError) as info:
        parse_pipeline("cse,frobnicate")
    assert "unknown pass 'frobnicate'; known passes: " in info.value.message
    assert "constant-propagation, cse, dce" in info.value.message


@pytest.mark.parametrize("text", ["cse{", "cse,,dce", "cse dce", "{x=1}"])
def test_malformed_pipelines(text: str) -> None:
    with pytest.raises(PipelineError, match="malformed"):
        parse_pipeline(text)


# -- running --------------------------------------------------------------------------------


def test_run_passes_reports_change() -> None:
    graph = parse_graph(GRAPH)
    assert run_passes(graph, "cse,dce")
    assert "aten::exp" not in print_graph(graph)
    assert not run_passes(graph, "cse,dce")


@pytest.mark.usefixtures("scratch_registry")
def test_verifier_runs_after_each_pass() -> None:
    @register_pass("break-uses")
    def break_uses(graph: Graph) -> bool:
        graph.inputs[0].uses.append(Use(graph.block.return_node, 0))
        return True

    with pytest.raises(VerifyError) as info:
        run_passes(parse_graph(GRAPH), "dce,break-uses,cse")
    message = str(info.value)
    assert "lists a use by operand 0 of prim::Return, which does not read it" in message
    assert "after pass 'break-uses' (passes run before it: dce)" in message
    run_passes(parse_graph(GRAPH), "dce,break-uses,cse", verify=False)


def test_input_is_verified_before_the_first_pass() -> None:
    graph = parse_graph(GRAPH)
    graph.inputs[0].uses.pop()
    with pytest.raises(VerifyError, match="before any pass ran"):
        run_passes(graph, "dce")


@pytest.mark.usefixtures("scratch_registry")
def test_unexpected_exception_is_wrapped_with_pass_history() -> None:
    @register_pass("explode")
    def explode(graph: Graph) -> bool:
        raise KeyError("missing")

    with pytest.raises(PassError) as info:
        run_passes(parse_graph(GRAPH), "cse,dce,explode")
    message = str(info.value)
    assert "error: pass 'explode' failed: KeyError: 'missing'" in message
    assert "while running pass 'explode' (passes run before it: cse, dce)" in message
    assert isinstance(info.value.__cause__, KeyError)


@pytest.mark.usefixtures("scratch_registry")
def test_project_errors_keep_their_type_and_gain_context() -> None:
    @register_pass("complain")
    def complain(graph: Graph) -> bool:
        raise AutodiffError("cannot do that")

    with pytest.raises(AutodiffError) as info:
        run_passes(parse_graph(GRAPH), "complain")
    assert type(info.value) is AutodiffError
    assert "while running pass 'complain' (the first pass)" in str(info.value)


@pytest.mark.usefixtures("scratch_registry")
def test_a_pass_must_return_a_bool() -> None:
    @register_pass("sloppy")
    def sloppy(graph: Graph) -> bool:
        return None  # type: ignore[return-value]

    with pytest.raises(PassError, match="pass 'sloppy' returned NoneType, not bool"):
        run_passes(parse_graph(GRAPH), "sloppy")


def test_print_after_all_sees_each_pass() -> None:
    seen: list[tuple[str, int]] = []
    run_passes(
        parse_graph(GRAPH),
        "cse,dce",
        print_after_all=lambda name, g: seen.append((name, len(list(g.nodes())))),
    )
    assert seen == [("cse", 3), ("dce", 2)]


@pytest.mark.usefixtures("scratch_registry")
def test_module_passes() -> None:
    @register_module_pass("drop-unused-graphs")
    def drop_unused(module: Module, *, keep: str = "f") -> bool:
        removed = [name for name in module if name != keep]
        for name in removed:
            del module[name]
        return bool(removed)

    module = {"f": parse_graph(GRAPH), "g": parse_graph(GRAPH.replace("@f", "@g"))}
    assert run_module_passes(module, "dce,drop-unused-graphs{keep=g}")
    assert list(module) == ["g"]
    assert "aten::exp" not in print_graph(module["g"])
    with pytest.raises(PipelineError, match="is a module pass; run it with run_module_passes"):
        run_passes(parse_graph(GRAPH), "drop-unused-graphs")
    assert registry.PASSES["drop-unused-graphs"].on_module


# -- semantics --------------------------------------------------------------------------------

PASS_FILES = [
    "cse",
    "dce",
    "constant-propagation",
    "lower-tuples",
    "hoist-loop-invariants",
    "stack-tapes",
    "native-regions",
]
FILECHECK_PASSES = Path(__file__).resolve().parents[1] / "filecheck" / "passes"


def sample_argument(ty: Type, rng: np.random.Generator) -> object:
    """A runtime value of type ``ty``, or None when the test cannot make one."""
    if isinstance(ty, TensorType):
        shape = (2,) if ty.shape is None else tuple(d or 2 for d in ty.shape)
        return rng.standard_normal(shape).astype(ty.dtype or "float64")
    if isinstance(ty, TupleType):
        elements = [sample_argument(e, rng) for e in ty.elems]
        return None if any(e is None for e in elements) else tuple(elements)
    return {INT: 3, FLOAT: 0.5, BOOL: True}.get(ty)


def corpus() -> list[tuple[str, str, str]]:
    """(pass name, case id, graph text) for every graph of the passes' FileCheck files."""
    cases = []
    for name in PASS_FILES:
        for chunk in split_input((FILECHECK_PASSES / f"{name}.ir").read_text()):
            for graph in parse_module(chunk).values():
                cases.append((name, f"{name}:{graph.name}", print_graph(graph)))
    return cases


CORPUS = corpus()


@pytest.mark.parametrize(
    ("pass_name", "text"),
    [(name, text) for name, _, text in CORPUS],
    ids=[case_id for _, case_id, _ in CORPUS],
)
def test_passes_preserve_results(pass_name: str, text: str) -> None:
    graph = parse_graph(text)
    rng = np.random.default_rng(0)
    arguments = [sample_argument(v.ty, rng) for v in graph.inputs]
    if any(a is None for a in arguments):
        pytest.skip("an input type the test cannot sample")
    with np.errstate(all="ignore"):
        try:
            expected: list[object] | None = run_graph(graph, *arguments)
        except InterpreterError:
            expected = None
        run_passes(graph, pass_name)
        if expected is None:
            with pytest.raises(InterpreterError):
                run_graph(graph, *arguments)
            return
        actual = run_graph(graph, *arguments)
    assert len(actual) == len(expected)
    for got, want in zip(actual, expected, strict=True):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
