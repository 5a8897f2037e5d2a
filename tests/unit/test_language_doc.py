"""docs/language.md is current: every accepted example compiles and gives what plain Python
gives, every refused one raises a located ScriptError that links to the example's section, and
every link to the page, in it and in the frontend, names one of its sections.

An example is a fenced block whose info string is ``python accepted`` (``python accepted grad``
when its gradient is checked too) or ``python refused``: a module whose top-level calls of its
own functions (``f(np.ones(3))``) are the calls made, written to a file so that the compiler
reads its source as it reads a user's.
"""

from __future__ import annotations

import ast
import contextlib
import copy
import functools
import importlib.util
import io
import re
import typing
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import optree
import pytest

import autodiff as ad
from frontend.errors import LANGUAGE_DOC, Topic
from tests.tree_helpers import assert_trees_close, central_differences

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / LANGUAGE_DOC
PRELUDE = "import numpy as np\nimport autodiff as ad\n"
HEADING = re.compile(r"^(#{1,6}) +(.+?) *$")
FENCE = re.compile(r"^```(.*)$")
LINK = re.compile(r"docs/language\.md#([\w-]+)")
IN_PAGE_LINK = re.compile(r"\]\(#([\w-]+)\)")


def github_anchor(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation but ``-`` and ``_`` dropped,
    spaces as hyphens (``## Lists, tuples and dicts`` -> ``lists-tuples-and-dicts``)."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


@dataclass(frozen=True)
class Example:
    kind: str  # "accepted" or "refused"
    grad: bool  # check the gradient against finite differences too
    code: str
    line: int  # the page's line of the code's first line
    anchor: str  # the section it sits in
    chapter: str  # the level-2 section it sits in

    @property
    def name(self) -> str:
        return f"{self.anchor}:{self.line}"


@dataclass(frozen=True)
class Page:
    anchors: list[str]  # every heading's, in order
    chapters: list[str]  # the level-2 headings'
    examples: list[Example]


def read_page(text: str) -> Page:
    anchors: list[str] = []
    chapters: list[str] = []
    examples: list[Example] = []
    anchor = chapter = ""
    block: list[str] | None = None
    words: list[str] = []
    start = 0
    for number, line in enumerate(text.splitlines(), start=1):
        fence = FENCE.match(line)
        if block is not None:
            if fence is None:
                block.append(line)
                continue
            if words[:1] == ["python"]:
                kind = words[1] if len(words) > 1 else "unmarked"
                assert kind in ("accepted", "refused"), f"line {start}: python block {kind}"
                assert words[2:] in ([], ["grad"]), f"line {start}: {words}"
                code = "\n".join(block) + "\n"
                examples.append(Example(kind, "grad" in words, code, start, anchor, chapter))
            block = None
            continue
        if fence is not None:
            block, words, start = [], fence.group(1).split(), number + 1
            continue
        heading = HEADING.match(line)
        if heading is not None:
            anchor = github_anchor(heading.group(2))
            anchors.append(anchor)
            if len(heading.group(1)) == 2:
                chapter = anchor
                chapters.append(anchor)
    assert block is None, "a fenced block is not closed"
    return Page(anchors, chapters, examples)


PAGE = read_page(DOC.read_text(encoding="utf-8"))


# ---- the page's structure and the links to it -------------------------------------------------


def test_the_page_has_examples_in_every_section() -> None:
    assert len(PAGE.anchors) == len(set(PAGE.anchors)), "two headings share an anchor"
    assert len(PAGE.examples) >= 60
    with_examples = {example.chapter for example in PAGE.examples}
    assert set(PAGE.chapters) <= with_examples, set(PAGE.chapters) - with_examples
    kinds = {example.kind for example in PAGE.examples}
    assert kinds == {"accepted", "refused"}


def test_links_within_the_page_name_its_sections() -> None:
    linked = set(IN_PAGE_LINK.findall(DOC.read_text(encoding="utf-8")))
    assert linked <= set(PAGE.anchors), linked - set(PAGE.anchors)


def test_every_topic_a_refusal_can_name_is_a_section() -> None:
    topics = set(typing.get_args(Topic))
    assert topics <= set(PAGE.anchors), topics - set(PAGE.anchors)


def _doc_keywords(path: Path) -> list[tuple[int, str]]:
    """The topics written in the ``doc=`` arguments of the calls in ``path``, with their lines
    (``doc="lambda"``, both of ``doc="a" if c else "b"``)."""
    return [
        (node.lineno, constant.value)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call)
        for keyword in node.keywords
        if keyword.arg == "doc"
        for constant in ast.walk(keyword.value)
        if isinstance(constant, ast.Constant) and isinstance(constant.value, str)
    ]


def test_links_in_the_compiler_name_sections() -> None:
    anchors = set(PAGE.anchors)
    sources = sorted((ROOT / "frontend").glob("*.py"))
    linking = sorted(
        path for package in ("ir", "passes", "autodiff") for path in (ROOT / package).glob("*.py")
    )
    written = {
        (path.name, anchor)
        for path in sources + linking
        for anchor in LINK.findall(path.read_text(encoding="utf-8"))
    }
    assert ("aliasing.py", "writes-and-views") in written  # the refused writes
    given = {
        (f"{path.name}:{line}", topic) for path in sources for line, topic in _doc_keywords(path)
    }
    dangling = {(where, topic) for where, topic in written | given if topic not in anchors}
    assert not dangling
    assert len(given) >= 100  # the refusals link to their sections, not only to the page


# ---- the examples ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Loaded:
    module: ModuleType
    path: Path
    calls: list[ast.Call]  # the top-level calls of the module's own functions, in order
    first_line: int  # the file's lines of the example's code
    last_line: int


def load(example: Example, directory: Path) -> Loaded:
    """The example as a module in ``directory``, without its top-level calls, which are made
    by the test."""
    tree = ast.parse(example.code)
    defined = {stmt.name for stmt in tree.body if isinstance(stmt, ast.FunctionDef)} | {
        target.id
        for stmt in tree.body
        if isinstance(stmt, ast.Assign)
        for target in stmt.targets
        if isinstance(target, ast.Name)
    }
    lines = example.code.splitlines()
    calls: list[ast.Call] = []
    for stmt in tree.body:
        value = stmt.value if isinstance(stmt, ast.Expr) else None
        if (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Name)
            and value.func.id in defined
        ):
            calls.append(value)
            assert stmt.end_lineno is not None
            for index in range(stmt.lineno - 1, stmt.end_lineno):
                lines[index] = ""
    assert calls, f"line {example.line}: the example calls none of its functions"
    offset = PRELUDE.count("\n")
    path = directory / f"language_example_{example.line}.py"
    path.write_text(PRELUDE + "\n".join(lines) + "\n", encoding="utf-8")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return Loaded(module, path, calls, offset + 1, offset + len(lines))


def arguments(call: ast.Call, namespace: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
    """The call's arguments, evaluated afresh (a run may write to them)."""
    args = ast.Expression(ast.List(list(call.args), ast.Load()))
    keywords = ast.Expression(
        ast.Dict([ast.Constant(k.arg) for k in call.keywords], [k.value for k in call.keywords])
    )
    return (
        eval(compile(ast.fix_missing_locations(args), "<args>", "eval"), namespace),
        eval(compile(ast.fix_missing_locations(keywords), "<keywords>", "eval"), namespace),
    )


@dataclass(frozen=True)
class Run:
    result: Any
    args: list[Any]
    keywords: dict[str, Any]
    printed: str


def run(fn: Any, call: ast.Call, namespace: dict[str, Any]) -> Run:
    args, keywords = arguments(call, namespace)
    np.random.seed(0)  # the plain and the compiled run draw the same numbers
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        result = fn(*args, **keywords)
    return Run(result, args, keywords, printed.getvalue())


def assert_same(got: Any, want: Any, where: str) -> None:
    """``got`` has ``want``'s structure, and its leaves ``want``'s kind, shape, dtype and
    values."""
    if isinstance(want, tuple | list):
        assert type(got) is type(want), f"{where}: {type(got)} for {type(want)}"
        assert len(got) == len(want), where
        for index, (a, b) in enumerate(zip(got, want, strict=True)):
            assert_same(a, b, f"{where}[{index}]")
    elif isinstance(want, dict):
        assert isinstance(got, dict), where
        assert sorted(got) == sorted(want), where
        for key in want:
            assert_same(got[key], want[key], f"{where}[{key!r}]")
    elif want is None or isinstance(want, str):
        assert got == want, where
    else:
        assert isinstance(got, np.ndarray) == isinstance(want, np.ndarray), (
            f"{where}: {got!r} for {want!r}"
        )
        assert np.shape(got) == np.shape(want), where
        assert np.asarray(got).dtype == np.asarray(want).dtype, f"{where}: {got!r} for {want!r}"
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12, err_msg=where)


def assert_gradient_matches(fn: Any, args: list[Any], keywords: dict[str, Any], where: str) -> None:
    """``ad.vjp``'s gradient for the first argument (any pytree) matches central differences
    of the plain function, for a random cotangent of the result's structure."""
    target = functools.partial(fn, **keywords) if keywords else fn
    out, vjp_fn = ad.vjp(target, *copy.deepcopy(args))
    rng = np.random.default_rng(0)
    cotangent = optree.tree_map(lambda leaf: rng.standard_normal(np.shape(leaf)), out)

    def projected(first: Any, *rest: Any) -> float:
        result = target(first, *copy.deepcopy(rest))
        pairs = zip(optree.tree_leaves(cotangent), optree.tree_leaves(result), strict=True)
        return float(sum(np.sum(c * np.asarray(r)) for c, r in pairs))

    analytic = vjp_fn(cotangent)[0]
    numeric = central_differences(projected, copy.deepcopy(args[0]), *args[1:])
    try:
        assert_trees_close(analytic, numeric, rtol=1e-5, atol=1e-7)
    except AssertionError as error:
        raise AssertionError(f"{where}: the gradient differs from finite differences") from error


ACCEPTED = [example for example in PAGE.examples if example.kind == "accepted"]
REFUSED = [example for example in PAGE.examples if example.kind == "refused"]


@pytest.mark.parametrize("example", ACCEPTED, ids=lambda example: example.name)
def test_an_accepted_example_compiles_and_agrees_with_python(
    example: Example, tmp_path: Path
) -> None:
    loaded = load(example, tmp_path)
    namespace = vars(loaded.module)
    for call in loaded.calls:
        assert isinstance(call.func, ast.Name)
        fn = namespace[call.func.id]
        plain = run(fn, call, namespace)
        scripted = run(ad.script(fn), call, namespace)
        where = f"{DOC.name}:{example.line}: {ast.unparse(call)}"
        assert_same(scripted.result, plain.result, where)
        assert_same(scripted.args, plain.args, f"{where}: arguments after the call")
        assert scripted.printed == plain.printed, where
        if example.grad:
            assert_gradient_matches(fn, *arguments(call, namespace), where)


def compile_and_call(loaded: Loaded) -> None:
    namespace = vars(loaded.module)
    for call in loaded.calls:
        assert isinstance(call.func, ast.Name)
        args, keywords = arguments(call, namespace)
        ad.script(namespace[call.func.id])(*args, **keywords)


@pytest.mark.parametrize("example", REFUSED, ids=lambda example: example.name)
def test_a_refused_example_raises_a_located_error_linking_its_section(
    example: Example, tmp_path: Path
) -> None:
    loaded = load(example, tmp_path)
    with pytest.raises(ad.ScriptError) as caught:
        compile_and_call(loaded)
    error = caught.value
    where = error.source_range
    assert where is not None, str(error)
    assert Path(where.source.filename) == loaded.path, str(error)
    assert loaded.first_line <= where.line <= loaded.last_line, str(error)
    assert error.doc == example.anchor, str(error)
    assert str(error).splitlines()[-1] == f"  see {LANGUAGE_DOC}#{example.anchor}"
