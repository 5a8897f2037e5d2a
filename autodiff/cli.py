"""The `autodiff` command line. `autodiff opt` reads IR text, runs passes and prints IR text, as
mlir-opt and xdsl-opt do; it is the tool the FileCheck pass tests drive.

Errors (anything derived from AutodiffError) are printed to standard error, located and without
a Python traceback (unless ``--traceback``), and the exit status is 1. Under
``--verify-diagnostics`` they are printed to standard output instead and the status is 0, so
FileCheck can match expected errors.
"""

from __future__ import annotations

import argparse
import re
import sys
import traceback
from collections.abc import Callable, Sequence
from typing import TextIO

from ir.errors import AutodiffError
from ir.parser import parse_module
from ir.printer import print_module
from passes.registry import PASSES, Module, PipelineStep, parse_pipeline, run_module_passes

SPLIT_MARKER = "# -----"
_SPLIT_LINE = re.compile(r"^[ \t]*# -----[ \t]*$", re.MULTILINE)


class CommandError(AutodiffError):
    """A command line that cannot be carried out (e.g. an unreadable file)."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line ``argv`` (``sys.argv[1:]`` when None); returns the exit status."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
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
        default="",
        metavar="PIPELINE",
        help="comma-separated passes, options in braces: cse,constant-propagation{max-elements=64}",
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
    opt.set_defaults(command=run_opt)
    return parser


def run_opt(args: argparse.Namespace) -> int:
    if args.list_passes:
        sys.stdout.write(list_passes())
        return 0
    if args.file is None:
        raise CommandError("opt needs an input file (or - for standard input)")
    text, filename = read_input(args.file)
    steps = parse_pipeline(args.passes)
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


def read_input(path: str, stdin: TextIO | None = None) -> tuple[str, str]:
    """The text of ``path`` (standard input for ``-``) and the file name errors should use."""
    if path == "-":
        return (stdin or sys.stdin).read(), "<stdin>"
    try:
        with open(path, encoding="utf-8") as file:
            return file.read(), path
    except OSError as error:
        raise CommandError(f"cannot read {path}: {error.strerror}") from error


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
