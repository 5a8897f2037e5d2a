"""The `autodiff` command line. `autodiff opt` reads IR text, runs passes and prints IR text, as
mlir-opt and xdsl-opt do; it is the tool the FileCheck pass tests drive. `autodiff dump` prints
the IR of a Python function at a stage of the pipeline.

Errors (anything derived from AutodiffError) are printed to standard error, located and without
a Python traceback (unless ``--traceback``), and the exit status is 1. Under
``--verify-diagnostics`` they are printed to standard output instead and the status is 0, so
FileCheck can match expected errors.
"""

from __future__ import annotations

import argparse
import codecs
import importlib.util
import re
import sys
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from itertools import count
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from autodiff.docs import add_arguments as add_docs_arguments
from autodiff.docs import run as run_docs
from autodiff.gradient import Gradient
from autodiff.pictures import stages_to_dot
from ir.dot import NEEDS_GRAPHVIZ, render_svg
from ir.errors import AutodiffError, MissingDependencyError
from ir.graph import Graph
from ir.parser import parse_module
from ir.printer import print_module
from ir.source import Source, SourceRange
from ir.types import BOOL, FLOAT, INT, TensorType, Type
from passes.registry import PASSES, Module, PipelineStep, parse_pipeline, run_module_passes

if TYPE_CHECKING:
    from autodiff.script import ScriptFunction

SPLIT_MARKER = "# -----"
_SPLIT_LINE = re.compile(r"^[ \t]*# -----[ \t]*$", re.MULTILINE)


NO_PASSES_NOTE = (
    "autodiff opt: no -p PIPELINE given, so no pass ran and the input is printed back as "
    "parsed; `autodiff opt --list-passes` lists the passes"
)


class CommandError(AutodiffError):
    """A command line that cannot be carried out (e.g. an unreadable file)."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line ``argv`` (``sys.argv[1:]`` when None); returns the exit status."""
    parser = build_parser()
    try:
        args, unknown = parser.parse_known_args(argv)
        if unknown:
            # argparse leaves arguments no parser knows to the top-level parser, whose usage
            # would not show the flags of the command they were meant for.
            command_parser: argparse.ArgumentParser = args.command_parser
            command_parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    except SystemExit as exit_request:  # --help, or a usage error argparse already reported
        return exit_request.code if isinstance(exit_request.code, int) else 2
    command: Callable[[argparse.Namespace], int] = args.command
    try:
        return command(args)
    except AutodiffError as error:
        if args.traceback:
            traceback.print_exc(file=sys.stderr)  # its last line is the message
        else:
            print(error, file=sys.stderr)
        return 1


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--traceback",
        action="store_true",
        help="print the Python traceback of an error as well as its message",
    )
    parser = argparse.ArgumentParser(
        prog="autodiff", description="A graph-compiling automatic differentiation for NumPy."
    )
    commands = parser.add_subparsers(title="commands", required=True, metavar="COMMAND")

    opt = commands.add_parser(
        "opt",
        parents=[common],
        help="run passes over IR text and print the result",
        description="Read IR text, run a pass pipeline over every graph, print IR text.",
    )
    opt.add_argument("file", nargs="?", help="an .ir file, or - for standard input")
    opt.add_argument(
        "-p",
        "--passes",
        default=None,
        metavar="PIPELINE",
        help="comma-separated passes, options in braces: cse,constant-propagation{max-elements=64}"
        "; without it no pass runs and the input is printed back as parsed (and a note says so on "
        "standard error)",
    )
    opt.add_argument("--list-passes", action="store_true", help="list the passes and exit")
    opt.add_argument(
        "--print-ir-after-all",
        action="store_true",
        help="print the IR to standard output after every pass, under a '# ---- IR after NAME "
        "----' line, before the final result",
    )
    opt.add_argument(
        "--split-input-file",
        action="store_true",
        help=f"process each chunk between '{SPLIT_MARKER}' lines on its own and join the "
        f"outputs with '{SPLIT_MARKER}' lines",
    )
    opt.add_argument(
        "--verify-diagnostics",
        action="store_true",
        help="print errors about the input to standard output and exit with status 0",
    )
    opt.add_argument(
        "--no-verify",
        dest="verify",
        action="store_false",
        help="do not verify the graphs before and after each pass",
    )
    opt.set_defaults(command=run_opt, command_parser=opt)

    dump = commands.add_parser(
        "dump",
        parents=[common],
        help="print the IR of a Python function at a stage of the pipeline",
        description="Import FILE.py, script its function FUNC and print its IR at a stage.",
    )
    dump.add_argument("target", metavar="FILE.py:FUNC", help="a Python file and a function in it")
    dump.add_argument(
        "--stage",
        choices=list(STAGES),
        default="parsed",
        help="parsed: as compiled, helpers inlined; typed: specialised to the --arg types; "
        "grad: with its reverse program (GradOf blocks); optimized: after the reverse "
        "optimisations; f, df: the forward and backward graphs; jvp: the forward-mode "
        "graph, a tangent input per parameter differentiated; native: f and df with the "
        "regions the native tier runs (prim::Native), and the two joined into one graph as "
        "grad calls run them, compiled when numba is installed so "
        'that a region numba refuses shows fallback="why"; all: every stage in turn '
        "(its native regions not compiled)",
    )
    dump.add_argument(
        "--wrt",
        default=None,
        metavar="NAMES",
        help="comma-separated parameters to differentiate (default: every floating-point one)",
    )
    dump.add_argument(
        "--arg",
        action="append",
        default=[],
        metavar="NAME=TYPE",
        help="a parameter's type: x=f64[3,4], x=f32[] (0-d), n=5 (int), lr=0.1 (float), "
        "flag=true (bool); dtypes " + ", ".join(DTYPE_CODES),
    )
    dump.add_argument(
        "--format",
        choices=FORMATS,
        default="ir",
        help="ir: IR text; dot: Graphviz DOT (nested blocks as clusters, f and df side by "
        "side, captured values highlighted); svg: that picture rendered (needs Graphviz)",
    )
    dump.add_argument(
        "-o",
        "--output",
        default=None,
        metavar="FILE",
        help="write to FILE instead of standard output",
    )
    dump.set_defaults(command=run_dump, command_parser=dump)
    docs = commands.add_parser("docs", parents=[common], help="write docs/operators.md")
    add_docs_arguments(docs)
    docs.set_defaults(command=run_docs, command_parser=docs)
    return parser


def run_opt(args: argparse.Namespace) -> int:
    if args.list_passes:
        sys.stdout.write(list_passes())
        return 0
    if args.file is None:
        raise CommandError("opt needs an input file (or - for standard input)")
    text, filename = read_input(args.file)
    steps = parse_pipeline(args.passes or "")
    chunks = split_input(text) if args.split_input_file else [text]
    outputs: list[str] = []
    for chunk in chunks:
        try:
            outputs.append(optimize(chunk, filename, steps, args.verify, args.print_ir_after_all))
        except AutodiffError as error:
            if not args.verify_diagnostics:
                raise
            outputs.append(f"{error}\n")
    sys.stdout.write(f"{SPLIT_MARKER}\n".join(outputs))
    # (-p "" runs no pass on purpose; --verify-diagnostics checks the input's errors, with
    # nothing on standard error.)
    if args.passes is None and not args.verify_diagnostics:
        print(NO_PASSES_NOTE, file=sys.stderr)
    return 0


def optimize(
    text: str, filename: str, steps: list[PipelineStep], verify: bool, print_after_all: bool
) -> str:
    """Parse ``text``, run ``steps`` over it, and return the printed result (preceded by the
    IR after each pass when ``print_after_all``)."""
    module = parse_module(text, filename)
    dumps: list[str] = []

    def dump(name: str, after: Module) -> None:
        dumps.append(f"# ---- IR after {name} ----\n{print_module(after.values())}")

    run_module_passes(
        module, steps, verify=verify, print_after_all=dump if print_after_all else None
    )
    return "".join(dumps) + print_module(module.values())


# -- dump ------------------------------------------------------------------------------------

DTYPE_CODES: dict[str, str] = {
    "f16": "float16",
    "f32": "float32",
    "f64": "float64",
    "i8": "int8",
    "i16": "int16",
    "i32": "int32",
    "i64": "int64",
    "u8": "uint8",
    "bool": "bool",
}
_TENSOR_SPEC = re.compile(r"([a-z0-9]+)\[\s*((?:\d+\s*(?:,\s*\d+\s*)*)?)\]")
_INT_SPEC = re.compile(r"[+-]?\d+")
_FLOAT_SPEC = re.compile(r"[+-]?(?:\d+\.\d*|\.\d+|\d+(?:\.\d*)?[eE][+-]?\d+|inf|nan)")
_BOOL_SPECS = {"true": True, "false": False}
_module_numbers = count()


def parse_arg_type(spec: str) -> Type:
    """The IR type an ``--arg`` value stands for: ``f64[3,4]``, ``f32[]``, ``5``, ``0.1``,
    ``true``."""
    text = spec.strip()
    tensor = _TENSOR_SPEC.fullmatch(text)
    if tensor is not None:
        code, dims = tensor.groups()
        if code not in DTYPE_CODES:
            known = ", ".join(DTYPE_CODES)
            raise CommandError(f"unknown dtype {code!r} in {spec!r}; dtypes: {known}")
        shape = tuple(int(d) for d in dims.split(",")) if dims.strip() else ()
        return TensorType(DTYPE_CODES[code], shape)
    if _INT_SPEC.fullmatch(text):
        return INT
    if _FLOAT_SPEC.fullmatch(text):
        return FLOAT
    if text.lower() in _BOOL_SPECS:
        return BOOL
    raise CommandError(
        f"cannot read the type {spec!r}: expected a dtype and shape (f64[3,4], f32[] for 0-d), "
        "an int (5), a float (0.1) or a bool (true)"
    )


def parse_arg_types(specs: Sequence[str]) -> dict[str, Type]:
    """``["x=f64[3]", "n=5"]`` -> ``{"x": Double(3), "n": int}``."""
    types: dict[str, Type] = {}
    for item in specs:
        name, equals, spec = item.partition("=")
        name = name.strip()
        if not equals or not name.isidentifier():
            raise CommandError(f"--arg {item!r} is not NAME=TYPE (e.g. x=f64[3,4])")
        if name in types:
            raise CommandError(f"--arg gives parameter '{name}' twice")
        types[name] = parse_arg_type(spec)
    return types


def parameter_types(function: ScriptFunction, given: dict[str, Type]) -> list[Type]:
    """One type per parameter of ``function``, in order, from the ``--arg`` types."""
    names = list(function.signature.parameters)
    unknown = [name for name in given if name not in names]
    if unknown:
        raise CommandError(
            f"{function.qualname}() has no parameter {_quoted(unknown)}; "
            f"its parameters: {', '.join(names)}"
        )
    missing = [name for name in names if name not in given]
    if missing:
        raise CommandError(
            f"this stage needs a type for every parameter of {function.qualname}(); "
            f"missing: {_quoted(missing)} (give --arg NAME=f64[3,4], NAME=5, ...)"
        )
    return [given[name] for name in names]


def _quoted(names: list[str]) -> str:
    return ", ".join(f"'{name}'" for name in names)


# A stage is one graph, or (for --stage all) several under their names, f and df as a Gradient.
StageParts = list[tuple[str, Graph | Gradient]]


def dump_parsed(function: ScriptFunction, types: dict[str, Type], wrt: str | None) -> StageParts:
    return [("parsed", function.graph)]


def dump_typed(function: ScriptFunction, types: dict[str, Type], wrt: str | None) -> StageParts:
    return [("typed", function.graph_for_types(parameter_types(function, types)))]


def differentiated_positions(
    function: ScriptFunction, types: dict[str, Type], wrt: str | None
) -> tuple[list[Type], list[int]]:
    """The parameters' types in order, and the positions of those to differentiate w.r.t.:
    the ones ``wrt`` names (default: every parameter that can hold a gradient)."""
    from passes.requires_grad import can_hold_gradient

    ordered = parameter_types(function, types)
    names = list(function.signature.parameters)
    if wrt is None:
        return ordered, [i for i, ty in enumerate(ordered) if can_hold_gradient(ty)]
    wanted = [name.strip() for name in wrt.split(",") if name.strip()]
    unknown = [name for name in wanted if name not in names]
    if unknown:
        raise CommandError(f"--wrt names no parameter {_quoted(unknown)} of {function.qualname}()")
    positions = [names.index(name) for name in wanted]
    for position in positions:
        ty = ordered[position]
        if not can_hold_gradient(ty) or (isinstance(ty, TensorType) and ty.dtype is None):
            raise CommandError(
                f"cannot differentiate {function.qualname}() with respect to argument "
                f"'{names[position]}' of type {ty}: only floating-point arrays and Python "
                "floats have gradients"
            )
    return ordered, positions


def gradient_stages(function: ScriptFunction, types: dict[str, Type], wrt: str | None) -> Any:
    """Every stage of differentiating ``function`` w.r.t. ``wrt`` (default: every parameter
    that can hold a gradient)."""
    from autodiff.pipeline import compile_gradient  # loads the derivative formulas

    ordered, positions = differentiated_positions(function, types, wrt)
    return compile_gradient(function.graph, ordered, positions)


def dump_jvp(function: ScriptFunction, types: dict[str, Type], wrt: str | None) -> StageParts:
    """The forward-mode graph: the parameters, then a tangent per parameter differentiated."""
    from autodiff.jvp_graphs import jvp_graph  # loads the derivative formulas

    ordered, positions = differentiated_positions(function, types, wrt)
    return [("jvp", jvp_graph(function.parsed_for(ordered), ordered, positions).graph)]


def _stage(name: str) -> Callable[[ScriptFunction, dict[str, Type], str | None], StageParts]:
    def dump(function: ScriptFunction, types: dict[str, Type], wrt: str | None) -> StageParts:
        stages = gradient_stages(function, types, wrt)
        if name in ("f", "df"):
            return [(name, getattr(stages.gradient, name))]
        return [(name, getattr(stages, name))]

    return dump


def dump_native(function: ScriptFunction, types: dict[str, Type], wrt: str | None) -> StageParts:
    """f and df with their native regions, compiled (when numba is installed) so that each
    region numba refuses carries ``fallback="why"``: Note [Native regions] in
    `passes.native_regions`."""
    return native_parts(gradient_stages(function, types, wrt).gradient, compile_regions=True)


def native_parts(gradient: Gradient, *, compile_regions: bool) -> StageParts:
    from autodiff import native_tier

    parts: StageParts = []
    graphs = [("native f", gradient.f), ("native df", gradient.df)]
    joined = _joined(gradient)
    if joined is not None:
        graphs.append(("native f and df joined, as grad calls run them", joined))
    for name, graph in graphs:
        regions = native_tier.native_graph(graph)
        if compile_regions and native_tier.numba_available():
            native_tier.compile_regions(regions)
        parts.append((name, regions))
    return parts


def _joined(gradient: Gradient) -> Graph | None:
    """f and df with the loss's seed folded in, joined as the native tier runs them for a
    ``grad`` call: Note [Joined f and df] in `autodiff.gradient`."""
    from autodiff.gradient import joined_graph
    from autodiff.gradient_call import loss_seed
    from autodiff.runtime import seeded_graph

    seed = loss_seed(gradient)
    if seed is None or 0 not in gradient.df_input_vjps:
        return None
    seeded = seeded_graph(gradient.df, gradient.df_input_vjps.index(0), seed)
    return None if seeded is None else joined_graph(gradient, seeded)


def dump_all(function: ScriptFunction, types: dict[str, Type], wrt: str | None) -> StageParts:
    stages = gradient_stages(function, types, wrt)
    return [
        ("parsed", function.graph),
        ("typed", stages.typed),
        ("grad", stages.grad),
        ("optimized", stages.optimized),
        ("f and df", stages.gradient),
        *native_parts(stages.gradient, compile_regions=False),
    ]


# Each stage gives a function's IR at one point of the pipeline.
STAGES: dict[str, Callable[[ScriptFunction, dict[str, Type], str | None], StageParts]] = {
    "parsed": dump_parsed,
    "typed": dump_typed,
    "grad": _stage("grad"),
    "optimized": _stage("optimized"),
    "f": _stage("f"),
    "df": _stage("df"),
    "jvp": dump_jvp,
    "native": dump_native,
    "all": dump_all,
}
FORMATS = ("ir", "dot", "svg")


def format_stages(name: str, parts: StageParts, output_format: str) -> str:
    """The text ``autodiff dump`` writes: IR text (each of several stages under a header),
    Graphviz DOT or SVG."""
    if output_format == "ir":
        if len(parts) == 1:
            return str(parts[0][1])
        # A Graph's text ends in one newline; a blank line separates it from the next header.
        return "".join(
            f"# ---- {title} ----\n{stage}" + ("\n" if isinstance(stage, Graph) else "")
            for title, stage in parts
        )
    dot_text = stages_to_dot(name, parts)
    if output_format == "dot":
        return dot_text
    try:
        return render_svg(dot_text)
    except MissingDependencyError as error:
        raise CommandError(f"--format svg {NEEDS_GRAPHVIZ} or use --format dot") from error


def run_dump(args: argparse.Namespace) -> int:
    # Imported here so that `autodiff opt` does not load the Python frontend.
    from autodiff.api import script

    path, function_name = split_target(args.target)
    types = parse_arg_types(args.arg)
    found = getattr(import_file(path), function_name, None)
    if found is None:
        raise CommandError(f"{path} has no function '{function_name}'")
    if not callable(found):
        raise CommandError(f"{path}:{function_name} is a {type(found).__name__}, not a function")
    function = script(found)
    parts = STAGES[args.stage](function, types, args.wrt)
    text = format_stages(function_name, parts, args.format)
    if args.output is None:
        sys.stdout.write(text)
        return 0
    try:
        Path(args.output).write_text(text, encoding="utf-8")
    except OSError as error:
        raise CommandError(f"cannot write {args.output}: {error.strerror}") from error
    return 0


def split_target(target: str) -> tuple[str, str]:
    """``"examples/mlp.py:loss"`` -> ``("examples/mlp.py", "loss")``."""
    path, colon, function_name = target.rpartition(":")
    if not colon or not path or not function_name.isidentifier():
        raise CommandError(f"expected FILE.py:FUNC, got {target!r}")
    return path, function_name


def import_file(path: str) -> Any:
    """Import the Python file ``path`` as a fresh module (its directory on ``sys.path`` while
    it runs, so that it can import its neighbours)."""
    file = Path(path)
    if not file.is_file():
        raise CommandError(f"cannot read {path}: no such file")
    name = f"_autodiff_dump_{next(_module_numbers)}_{file.stem}"
    spec = importlib.util.spec_from_file_location(name, file)
    if spec is None or spec.loader is None:
        raise CommandError(f"cannot import {path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        with _on_sys_path(str(file.resolve().parent)):
            spec.loader.exec_module(module)
    except AutodiffError:
        del sys.modules[name]
        raise
    except SyntaxError as error:
        del sys.modules[name]
        raise _located_syntax_error(path, error) from error
    except Exception as error:
        del sys.modules[name]
        raise CommandError(f"cannot import {path}: {type(error).__name__}: {error}") from error
    return module


def _located_syntax_error(path: str, error: SyntaxError) -> CommandError:
    """Python's syntax error in the file to import (or in a file it imports), located with its
    line and caret."""
    message = f"cannot import {path}: {error.msg}"
    culprit = path if error.filename is None else error.filename
    if error.lineno is None or not Path(culprit).is_file():
        return CommandError(message)
    text = Path(culprit).read_text(encoding="utf-8", errors="replace")
    line, col = error.lineno, max(error.offset or 1, 1)
    end_col = error.end_offset if error.end_lineno == line and error.end_offset else col + 1
    shown = path if Path(culprit).resolve() == Path(path).resolve() else culprit
    where = SourceRange(Source(text, shown), line, col, line, max(end_col, col + 1))
    return CommandError(message, where)


@contextmanager
def _on_sys_path(directory: str) -> Iterator[None]:
    sys.path.insert(0, directory)
    try:
        yield
    finally:
        sys.path.remove(directory)


def read_input(path: str, stdin: TextIO | None = None) -> tuple[str, str]:
    """The text of ``path`` (standard input for ``-``) and the file name errors should use.
    IR text is UTF-8 (a leading byte order mark is skipped); other bytes are a located error."""
    if path == "-":
        stream = stdin or sys.stdin
        raw = getattr(stream, "buffer", None)  # the bytes, when it is a real stream
        return (stream.read() if raw is None else decode_utf8(raw.read(), "<stdin>")), "<stdin>"
    try:
        with open(path, "rb") as file:
            return decode_utf8(file.read(), path), path
    except OSError as error:
        raise CommandError(f"cannot read {path}: {error.strerror}") from error


_BYTE_ORDER_MARKS = {
    codecs.BOM_UTF32_LE: "UTF-32",  # (before UTF-16: it starts with the same two bytes)
    codecs.BOM_UTF32_BE: "UTF-32",
    codecs.BOM_UTF16_LE: "UTF-16",
    codecs.BOM_UTF16_BE: "UTF-16",
}


def decode_utf8(data: bytes, filename: str) -> str:
    """``data`` as UTF-8 text, without a leading byte order mark; bytes that are not UTF-8 are
    a CommandError pointing at the first of them."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:  # (its start counts from after the mark)
        bad = error.start + (len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0)
    for mark, encoding in _BYTE_ORDER_MARKS.items():
        if data.startswith(mark):
            message = f"{filename} is {encoding} text (it starts with a byte order mark); IR "
            raise CommandError(message + "text must be UTF-8", SourceRange.location(filename, 1, 1))
    before = data[:bad].decode("utf-8-sig")
    line = before.count("\n") + 1
    col = len(before) - (before.rfind("\n") + 1) + 1
    shown = Source(data.decode("utf-8-sig", errors="replace"), filename)
    message = f"{filename} is not UTF-8 text: byte 0x{data[bad]:02x} cannot be read"
    raise CommandError(message, SourceRange(shown, line, col, line, col + 1))


def split_input(text: str) -> list[str]:
    """The chunks between ``# -----`` lines. Each chunk is padded with the newlines that precede
    it, so line numbers in errors count lines of the whole file."""
    chunks: list[str] = []
    start = 0
    for match in _SPLIT_LINE.finditer(text):
        chunks.append(_padded(text, start, match.start()))
        start = match.end()
    chunks.append(_padded(text, start, len(text)))
    return chunks


def _padded(text: str, start: int, end: int) -> str:
    return "\n" * text.count("\n", 0, start) + text[start:end]


def list_passes() -> str:
    lines: list[str] = []
    for name in sorted(PASSES):
        registered = PASSES[name]
        kind = " (module pass)" if registered.on_module else ""
        lines.append(f"{name}{kind}: {registered.summary}")
        lines.extend(
            f"    {option.name}: {option.ty.__name__} = {option.default!r}"
            for option in registered.options
        )
    return "\n".join(lines) + "\n"
