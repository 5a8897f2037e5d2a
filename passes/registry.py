"""The pass registry: passes register by name, pipelines are parsed from text and run in order.

A pass is a plain function ``def f(graph: Graph, *, opt: int = 0) -> bool`` that returns whether
it changed the graph; its keyword-only parameters are its options, written in a pipeline as
``cse,dce,constant-propagation{max-elements=64}`` (xDSL's syntax: options inside braces,
separated by spaces or commas, ``key=value``; a bare ``key`` sets a bool option to true). A module
pass takes a ``Module`` (an ordered ``dict[str, Graph]``) instead, for passes that create or
split graphs.

# Note [Verify between passes]
# With ``verify=True`` the runner verifies the input and then the graph after every pass, so a
# broken invariant is blamed on the pass that broke it rather than on a later pass that trips
# over it. That costs a whole-graph walk per pass, as much as the passes themselves (issue #8:
# over a third of compiling a 5,000-line function), so ``verify=None``, which the compiler's own
# pipelines use, follows ``AUTODIFF_VERIFY`` instead: ``end`` (the default) verifies once, after
# the pipeline's last pass, so nothing broken leaves a pipeline; ``each`` verifies the input and
# after every pass, as ``verify=True`` does; ``off`` skips it. The test suite sets ``each``
# (tests/conftest.py), so every pass is still checked after every run in tests, and a failure in
# ``end`` mode says to rerun with ``AUTODIFF_VERIFY=each`` to find the pass. ``autodiff opt``
# passes ``verify=True``. ``verify=False`` never verifies.
"""

from __future__ import annotations

import inspect
import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from ir.errors import AutodiffError, VerifyError
from ir.graph import Graph
from ir.source import Source, SourceRange
from ir.verify import verify as verify_graph

Module = dict[str, Graph]
PassFunction = Callable[..., bool]
PipelineStep = tuple[str, dict[str, Any]]
F = TypeVar("F", bound=PassFunction)

OPTION_TYPES: tuple[type, ...] = (bool, int, float, str)
_TYPE_WORDS: dict[type, str] = {bool: "a bool", int: "an int", float: "a float", str: "a string"}


class PipelineError(AutodiffError):
    """A pipeline that cannot be run: unknown pass, unknown option, malformed text."""


class PassError(AutodiffError):
    """A pass raised an unexpected exception or broke its contract."""


@dataclass(frozen=True, slots=True)
class PassOption:
    """One keyword-only parameter of a pass, as a pipeline option."""

    name: str  # as written in a pipeline: max-elements
    parameter: str  # as the function spells it: max_elements
    ty: type
    default: Any


@dataclass(frozen=True, slots=True)
class RegisteredPass:
    name: str
    function: PassFunction
    options: tuple[PassOption, ...]
    on_module: bool  # takes a Module rather than a Graph

    @property
    def summary(self) -> str:
        """The first sentence of the pass function's docstring, its lines joined."""
        return first_sentence(inspect.getdoc(self.function) or "")

    def option(self, name: str) -> PassOption | None:
        for option in self.options:
            if option.name == name:
                return option
        return None


# A sentence ends at a full stop followed by a capital letter or the end of the paragraph, so
# that abbreviations (``w.r.t. `x```, ``e.g. cse``) do not end one.
_SENTENCE_END = re.compile(r"\.(?=\s+[A-Z]|\s*$)")


def first_sentence(doc: str) -> str:
    """The first sentence of ``doc``'s first paragraph, on one line.

    >>> first_sentence("Fold nodes whose operands\\nare constants. Returns True if changed.")
    'Fold nodes whose operands are constants.'
    """
    paragraph = " ".join(doc.strip().split("\n\n", 1)[0].split())
    end = _SENTENCE_END.search(paragraph)
    return paragraph if end is None else paragraph[: end.end()]


PASSES: dict[str, RegisteredPass] = {}


def register_pass(name: str) -> Callable[[F], F]:
    """Register ``def f(graph: Graph, *, option: type = default) -> bool`` as pass ``name``."""
    return _registrar(name, on_module=False)


def register_module_pass(name: str) -> Callable[[F], F]:
    """Register ``def f(module: Module, *, option: type = default) -> bool`` as pass ``name``."""
    return _registrar(name, on_module=True)


def _registrar(name: str, on_module: bool) -> Callable[[F], F]:
    if not re.fullmatch(r"[a-z][a-z0-9-]*", name):
        raise ValueError(f"pass name {name!r} is not kebab-case")

    def register(function: F) -> F:
        if name in PASSES:
            raise ValueError(f"pass {name!r} is already registered")
        PASSES[name] = RegisteredPass(name, function, _options_of(name, function), on_module)
        return function

    return register


def _options_of(name: str, function: PassFunction) -> tuple[PassOption, ...]:
    parameters = list(inspect.signature(function, eval_str=True).parameters.values())
    if not parameters or parameters[0].kind not in (
        inspect.Parameter.POSITIONAL_ONLY,
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
    ):
        raise TypeError(f"pass {name!r} must take the graph as its first positional parameter")
    options = []
    for parameter in parameters[1:]:
        if parameter.kind is not inspect.Parameter.KEYWORD_ONLY:
            raise TypeError(f"pass {name!r}: option {parameter.name!r} must be keyword-only")
        if parameter.annotation not in OPTION_TYPES:
            raise TypeError(f"pass {name!r}: option {parameter.name!r} must be int/float/bool/str")
        if parameter.default is inspect.Parameter.empty:
            raise TypeError(f"pass {name!r}: option {parameter.name!r} needs a default")
        options.append(
            PassOption(
                parameter.name.replace("_", "-"),
                parameter.name,
                parameter.annotation,
                parameter.default,
            )
        )
    return tuple(options)


def known_passes() -> str:
    return ", ".join(sorted(PASSES))


# -- pipeline text ---------------------------------------------------------------------------

_STEP = re.compile(r"\s*([A-Za-z0-9_-]+)\s*(?:\{([^{}]*)\})?\s*(?:,|$)")
_NAME = re.compile(r"\s*([A-Za-z0-9_-]*)\s*")
_OPTION = re.compile(r'([A-Za-z0-9_-]+)(?:=("(?:[^"\\]|\\.)*"|[^\s,"]+))?[\s,]*')


def parse_pipeline(text: str) -> list[PipelineStep]:
    """``"cse,dce,constant-propagation{max-elements=64}"`` -> ``[("cse", {}), ("dce", {}),
    ("constant-propagation", {"max_elements": 64})]``; option keys become parameter names."""
    steps: list[PipelineStep] = []
    position = 0
    text = text.rstrip()  # leading spaces stay, so that a column counts from the text given
    while position < len(text):
        match = _STEP.match(text, position)
        if match is None or match.end() == position:
            raise _malformed(text, position)
        name, body = match.group(1), match.group(2)
        registered = PASSES.get(name)
        if registered is None:
            raise PipelineError(f"unknown pass {name!r}; known passes: {known_passes()}")
        steps.append((name, _parse_options(registered, body or "")))
        position = match.end()
    return steps


def _malformed(text: str, position: int) -> PipelineError:
    """The syntax error in the pipeline ``text`` whose step starting at ``position`` does not
    parse, at the character where it goes wrong: ``dce;cse`` at the ``;`` (column 4)."""
    name = _NAME.match(text, position)
    assert name is not None  # it matches the empty string
    at = name.end()
    char = text[at : at + 1]
    if not name.group(1):
        problem = f"expected a pass name, found {char!r}"
    elif char == "{":
        close = text.find("}", at)
        nested = text.find("{", at + 1)
        if close < 0:
            problem = f"the options of pass {name.group(1)!r} have no closing '}}'"
        elif 0 <= nested < close:
            at, problem = nested, f"'{{' inside the options of pass {name.group(1)!r}"
        else:
            at = close + 1 + len(text[close + 1 :]) - len(text[close + 1 :].lstrip())
            problem = f"expected ',' after the options of pass {name.group(1)!r}, found "
            problem += repr(text[at : at + 1])
    else:
        problem = f"expected ',' or '{{' after pass {name.group(1)!r}, found {char!r}"
    where = SourceRange(Source(text, "<pass pipeline>"), 1, at + 1, 1, at + 2)
    return PipelineError(f"malformed pass pipeline: {problem}", where)


def _parse_options(registered: RegisteredPass, body: str) -> dict[str, Any]:
    options: dict[str, Any] = {}
    position = 0
    body = body.strip()
    while position < len(body):
        match = _OPTION.match(body, position)
        if match is None or match.end() == position:
            raise PipelineError(f"malformed options {{{body}}} for pass {registered.name!r}")
        key, raw = match.group(1), match.group(2)
        option = registered.option(key)
        if option is None:
            names = ", ".join(o.name for o in registered.options) or "none"
            raise PipelineError(
                f"pass {registered.name!r} has no option {key!r}; its options: {names}"
            )
        options[option.parameter] = _convert(registered.name, option, raw)
        position = match.end()
    return options


def _convert(pass_name: str, option: PassOption, raw: str | None) -> Any:
    if raw is None:
        if option.ty is bool:
            return True
        raise PipelineError(f"option {option.name!r} of pass {pass_name!r} needs a value")
    if option.ty is str:
        if raw.startswith('"'):
            return re.sub(r"\\(.)", r"\1", raw[1:-1])
        return raw
    if option.ty is bool:
        lowered = raw.lower()
        if lowered in ("true", "1", "yes", "on"):
            return True
        if lowered in ("false", "0", "no", "off"):
            return False
    else:
        try:
            return option.ty(raw)
        except ValueError:
            pass
    expected = _TYPE_WORDS[option.ty]
    raise PipelineError(
        f"option {option.name!r} of pass {pass_name!r} expects {expected}, got {raw!r}"
    )


def format_step(step: PipelineStep) -> str:
    """A pipeline step as pipeline text: ``constant-propagation{max-elements=64}``."""
    name, options = step
    if not options:
        return name
    body = " ".join(f"{key.replace('_', '-')}={value}" for key, value in options.items())
    return f"{name}{{{body}}}"


# -- running ---------------------------------------------------------------------------------


def run_passes(
    graph: Graph,
    pipeline: str | Sequence[PipelineStep],
    *,
    verify: bool | None = None,
    print_after_all: Callable[[str, Graph], None] | None = None,
) -> bool:
    """Run the graph passes of ``pipeline`` on ``graph`` in order; True if any changed it.
    ``verify``: True after every pass, False never, None as ``AUTODIFF_VERIFY`` says.
    See Note [Verify between passes]."""
    steps = parse_pipeline(pipeline) if isinstance(pipeline, str) else list(pipeline)
    for name, _ in steps:
        if _lookup(name).on_module:
            raise PipelineError(f"{name!r} is a module pass; run it with run_module_passes")

    def after(name: str) -> None:
        if print_after_all is not None:
            print_after_all(name, graph)

    return _run(steps, lambda p, options: p.function(graph, **options), [graph], verify, after)


def run_module_passes(
    module: Module,
    pipeline: str | Sequence[PipelineStep],
    *,
    verify: bool | None = None,
    print_after_all: Callable[[str, Module], None] | None = None,
) -> bool:
    """Run ``pipeline`` on every graph of ``module`` (a graph pass runs on each graph in turn,
    a module pass once on the whole module); True if any pass changed something."""
    steps = parse_pipeline(pipeline) if isinstance(pipeline, str) else list(pipeline)

    def apply(registered: RegisteredPass, options: dict[str, Any]) -> Any:
        if registered.on_module:
            return registered.function(module, **options)
        changed = False
        for graph in list(module.values()):
            result = registered.function(graph, **options)
            if not isinstance(result, bool):
                return result
            changed |= result
        return changed

    def after(name: str) -> None:
        if print_after_all is not None:
            print_after_all(name, module)

    return _run(steps, apply, module.values(), verify, after)


def _lookup(name: str) -> RegisteredPass:
    registered = PASSES.get(name)
    if registered is None:
        raise PipelineError(f"unknown pass {name!r}; known passes: {known_passes()}")
    return registered


VERIFY_VARIABLE = "AUTODIFF_VERIFY"
"""``end`` (the default), ``each`` or ``off``: when ``verify=None`` pipelines verify.
See Note [Verify between passes]."""
VERIFY_MODES = ("each", "end", "off")


def verify_mode(verify: bool | None = None) -> str:
    """``each``, ``end`` or ``off``: ``verify`` if given (True is ``each``, False ``off``), else
    what ``AUTODIFF_VERIFY`` says. See Note [Verify between passes]."""
    if verify is not None:
        return "each" if verify else "off"
    mode = os.environ.get(VERIFY_VARIABLE, "").strip().lower() or "end"
    if mode not in VERIFY_MODES:
        raise PipelineError(f"{VERIFY_VARIABLE}={mode!r} is not one of {', '.join(VERIFY_MODES)}")
    return mode


def _run(
    steps: list[PipelineStep],
    apply: Callable[[RegisteredPass, dict[str, Any]], Any],
    graphs: Iterable[Graph],
    verify: bool | None,
    after: Callable[[str], None],
) -> bool:
    mode = verify_mode(verify)
    if mode == "each":
        _verify_all(graphs, "in the input, before any pass ran")
    changed = False
    ran: list[str] = []
    for step in steps:
        name, options = step
        registered = _lookup(name)
        context = f"while running pass {format_step(step)!r} ({_history(ran)})"
        try:
            result = apply(registered, options)
        except AutodiffError as error:
            error.add_note_line(context)
            raise
        except Exception as error:
            failure = PassError(f"pass {name!r} failed: {type(error).__name__}: {error}")
            failure.add_note_line(context)
            raise failure from error
        if not isinstance(result, bool):
            failure = PassError(f"pass {name!r} returned {type(result).__name__}, not bool")
            failure.add_note_line(context)
            raise failure
        ran.append(format_step(step))
        changed |= result
        after(name)
        if mode == "each":
            _verify_all(graphs, f"after pass {format_step(step)!r} ({_history(ran[:-1])})")
    if mode == "end" and ran:
        _verify_all(
            graphs,
            f"after the pipeline {', '.join(ran)!r}, verified at its end only; "
            f"{VERIFY_VARIABLE}=each verifies after every pass, to name the pass that broke it",
        )
    return changed


def _history(ran: list[str]) -> str:
    return f"passes run before it: {', '.join(ran)}" if ran else "the first pass"


def _verify_all(graphs: Iterable[Graph], context: str) -> None:
    for graph in graphs:
        try:
            verify_graph(graph)
        except VerifyError as error:
            error.add_note_line(context)
            raise
