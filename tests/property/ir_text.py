"""IR text as a user (or a broken tool) might hand it to `autodiff opt`: valid texts, mutated.

`ir_texts()` is a hypothesis strategy of `IRText`: a valid seed (a chunk of a FileCheck case under
tests/filecheck/, run with the passes its RUN line names, or the printed graph of an
equivalence-corpus function, parsed and specialised), changed by one to three `MUTATIONS`: byte
flips, bytes that are not UTF-8, the whole text in UTF-16 or UTF-32 with a byte order mark,
truncation anywhere, blocks, types and attribute values nested up to thousands deep, numbers of
thousands of digits and huge powers, Unicode names (NFKC twins such as ``%fi`` and ``%ﬁ``,
``%½``, confusable letters in keywords), and lines duplicated, dropped or swapped.

`check_opt` is the property: `autodiff opt` on the bytes either succeeds with IR text that
parses back and prints the same, or exits with status 1 and one located error (``file:line:col:
error: ...``, at most a dozen lines) - never a Python traceback, never longer than
`TIME_LIMIT` seconds. It runs the command line's `main` in this process, or, with
``subprocess=True``, as a user runs it.
"""

from __future__ import annotations

import io
import re
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import FrameType

from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent.parent
FILECHECK = ROOT / "tests" / "filecheck"
# Seconds for one run of `autodiff opt`. The seeds take well under one, but the first run of
# `differentiate` loads the derivative formulas, which takes 15 s on a loaded 2-core machine.
TIME_LIMIT = 60.0
MAX_ERROR_LINES = 12
# The pipeline run on a printed corpus graph: the passes that read every operator.
CORPUS_PIPELINE = "propagate-shapes,constant-propagation,simplify-arithmetic,cse,dce"


@dataclass(frozen=True)
class Seed:
    """A valid IR text and the pipeline it is meant for."""

    name: str
    text: str
    pipeline: str


@dataclass(frozen=True)
class IRText:
    """A mutated seed: the bytes `autodiff opt` reads, and how they were made."""

    seed: str
    pipeline: str
    data: bytes
    mutations: tuple[str, ...]

    def __repr__(self) -> str:  # what hypothesis prints for a failing example
        shown = self.data if len(self.data) <= 2000 else self.data[:2000] + b"..."
        return (
            f"IRText(seed={self.seed!r}, pipeline={self.pipeline!r}, "
            f"mutations={self.mutations!r}, data={shown!r})"
        )


# -- seeds --------------------------------------------------------------------------------------

_PIPELINE_OPTION = re.compile(r"(?:-p|--passes)\s+(\"[^\"]*\"|\S+)")
_SPLIT = re.compile(r"^[ \t]*# -----[ \t]*$", re.MULTILINE)


def filecheck_seeds() -> list[Seed]:
    """Each chunk of each ``.ir`` FileCheck case, with the pipeline of its first RUN line."""
    seeds = []
    for path in sorted(FILECHECK.rglob("*.ir")):
        text = path.read_text(encoding="utf-8")
        found = _PIPELINE_OPTION.search(text.split("\n\n", 1)[0])
        pipeline = found.group(1).strip('"') if found else ""
        if "nosuch" in pipeline or "many" in pipeline:
            pipeline = ""  # the cases about a bad pipeline
        for index, chunk in enumerate(_SPLIT.split(text)):
            if "graph" in chunk:
                name = f"{path.relative_to(FILECHECK)}#{index}"
                seeds.append(Seed(name, chunk.strip("\n") + "\n", pipeline))
    return seeds


def corpus_seeds(every: int = 4) -> list[Seed]:
    """The printed graph, and the graph specialised to its sample arguments, of every
    ``every``-th function of the equivalence corpus."""
    import numpy as np

    import autodiff as ad
    from ir.printer import print_graph
    from tests.equivalence.corpus import CASES

    seeds = []
    for case in CASES[::every]:
        if case.xfail:
            continue
        scripted = ad.script(case.fn)
        args = case.make(np.random.default_rng(0), 3)
        seeds.append(Seed(f"corpus:{case.name}", print_graph(scripted.graph), CORPUS_PIPELINE))
        try:
            typed = scripted.graph_for(*args)
        except Exception:  # (a case may be about a call that is refused; its parsed IR stays)
            continue
        seeds.append(Seed(f"corpus:{case.name}:typed", print_graph(typed), CORPUS_PIPELINE))
    return seeds


@cache
def seeds() -> tuple[Seed, ...]:
    return tuple(filecheck_seeds() + corpus_seeds())


# -- mutations ----------------------------------------------------------------------------------

Mutation = Callable[[st.DrawFn, bytes], bytes]

_NOT_UTF8 = [
    b"\xff",
    b"\xfe\xff",
    b"\xc3",  # a lead byte without its continuation
    b"\x80",
    b"\xed\xa0\x80",  # a UTF-16 surrogate, which UTF-8 forbids
    b"\xf4\x90\x80\x80",  # past U+10FFFF
    b"\xc0\xaf",  # an overlong '/'
]
_ODD_BYTES = [b"\x00", b"\xef\xbb\xbf", b"\r", b"\r\n", b"\t", b"\x0c", b"\x0b", b"\\", b'"', b"#"]
_HUGE_NUMBERS = [
    "9" * 4300,
    "9" * 4301,
    "1" + "0" * 10_000,
    "-" + "7" * 5000,
    "0x" + "f" * 5000,
    "9223372036854775808",
    "-9223372036854775809",
    "18446744073709551616",
    "1e99999",
    "-1e-99999",
    "1." + "5" * 5000,
    "1.7976931348623157e308",
    "inf",
    "nan",
    "0" * 5000 + "1",
]
# Names equal under NFKC to each other or to ASCII names, and names that NFKC makes unusable.
_UNICODE_NAMES = [
    "\ufb01",  # ﬁ ligature, NFKC "fi"
    "fi",
    "\u00bd",  # ½, NFKC: 1, fraction slash, 2
    "x\u00b2",  # x², NFKC "x2"
    "x2",
    "\uff21",  # fullwidth A
    "A",
    "e\u0301",  # e and a combining acute accent
    "\u00e9",  # é precomposed
    "\u212b",  # angstrom sign, NFKC Å
    "\u0131",  # dotless i
    "\u01c5",  # Dž
    "\U0001d4b3",  # mathematical script x
    "\u0661",  # Arabic-Indic digit one
    "a\u200db",  # a zero-width joiner
    "\u2167",  # roman numeral eight, NFKC "VIII"
    "_\u00b9",
    "\u0430",  # Cyrillic a
]
# Keywords spelled with look-alike characters.
_CONFUSABLES = [
    ("graph", "gr\u0430ph"),
    ("prim::", "pr\u0456m::"),
    ("aten::", "\u0430ten::"),
    ("->", "\u2212>"),
    ("return", "r\u0435turn"),
    (":", "\uff1a"),
    ("(", "\uff08"),
    ("%", "\uff05"),
    ("=", "\u2550"),
]
_NESTING = [2, 50, 199, 200, 201, 1000, 5000]


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="surrogateescape")


def _bytes(text: str) -> bytes:
    return text.encode("utf-8", errors="surrogateescape")


def _position(draw: st.DrawFn, data: bytes | str) -> int:
    return draw(st.integers(0, len(data)))


def flip_byte(draw: st.DrawFn, data: bytes) -> bytes:
    if not data:
        return data
    at = draw(st.integers(0, len(data) - 1))
    new = draw(st.one_of(st.integers(0, 255), st.sampled_from([data[at] ^ 0x80, data[at] ^ 1])))
    return data[:at] + bytes([new]) + data[at + 1 :]


def insert_bytes(draw: st.DrawFn, data: bytes) -> bytes:
    at = _position(draw, data)
    return data[:at] + draw(st.sampled_from(_NOT_UTF8 + _ODD_BYTES)) + data[at:]


def reencode(draw: st.DrawFn, data: bytes) -> bytes:
    codec = draw(st.sampled_from(["utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-8-sig"]))
    return _text(data).encode(codec, errors="surrogatepass")


def truncate(draw: st.DrawFn, data: bytes) -> bytes:
    return data[: _position(draw, data)]


def _lines(data: bytes) -> list[str]:
    return _text(data).split("\n")


def _after_header(lines: list[str]) -> int:
    """The index after the first graph header line (1 when there is none)."""
    for index, line in enumerate(lines):
        if line.lstrip().startswith("graph"):
            return index + 1
    return min(1, len(lines))


def nest_blocks(draw: st.DrawFn, data: bytes) -> bytes:
    """prim::If nested ``depth`` deep: empty, or around the first graph's whole body."""
    depth = draw(st.sampled_from(_NESTING))
    lines = _lines(data)
    start = _after_header(lines)
    opener = ["  prim::If(%nest_c)", "  block0():"]
    closer = ["  -> ()", "  block1():", "  -> ()"]
    head = ["  %nest_c : bool = prim::Constant[value=True]()"] + opener * depth
    if draw(st.booleans()):
        body = head + closer * depth
        return _bytes("\n".join(lines[:start] + body + lines[start:]))
    end = next(
        (i for i in range(start, len(lines)) if lines[i].lstrip().startswith("return")), len(lines)
    )
    return _bytes("\n".join(lines[:start] + head + lines[start:end] + closer * depth + lines[end:]))


_TYPE = re.compile(r"(?<=: )[A-Za-z_][\w]*(\([^()]*\))?")
_ATTR_VALUE = re.compile(r"(?<=\[value=)[^\]\[]*(?=\])")
_NUMBER = re.compile(r"(?<![\w%.])-?\d+(\.\d*)?([eE][-+]?\d+)?")
_VALUE_NAME = re.compile(r"%[\w.]+")


def _replace_one(
    draw: st.DrawFn, data: bytes, pattern: re.Pattern[str], make: Callable[[str], str]
) -> bytes:
    text = _text(data)
    found = list(pattern.finditer(text))
    if not found:
        return data
    match = draw(st.sampled_from(found))
    return _bytes(text[: match.start()] + make(match.group()) + text[match.end() :])


def nest_type(draw: st.DrawFn, data: bytes) -> bytes:
    depth = draw(st.sampled_from(_NESTING))
    suffix = draw(st.sampled_from([")", "[])", "?)"]))
    return _replace_one(draw, data, _TYPE, lambda ty: "(" * depth + ty + suffix * depth)


def nest_attribute(draw: st.DrawFn, data: bytes) -> bytes:
    depth = draw(st.sampled_from(_NESTING))
    wrap = draw(st.sampled_from([("[", "]"), ("(", ",)")]))
    return _replace_one(draw, data, _ATTR_VALUE, lambda v: wrap[0] * depth + v + wrap[1] * depth)


def huge_number(draw: st.DrawFn, data: bytes) -> bytes:
    number = draw(st.sampled_from(_HUGE_NUMBERS))
    return _replace_one(draw, data, _NUMBER, lambda _: number)


def huge_power(draw: st.DrawFn, data: bytes) -> bytes:
    """Constants and a Python-number operator on them whose result is enormous (or overflows),
    inserted after the first graph header."""
    base = draw(st.sampled_from(["10", "2", "-3", "10.0", "1e308", "0x" + "f" * 1100]))
    exponent = draw(st.sampled_from(["100000000", "4097", "1e8", "2", "-100000000"]))
    kind = draw(st.sampled_from(["prim::pow", "prim::mul", "prim::add", "prim::floordiv"]))
    ty = "float" if "." in base + exponent or "e" in base + exponent else "int"
    ty_base = "float" if "." in base or "e" in base else "int"
    ty_exponent = "float" if "." in exponent or "e" in exponent else "int"
    lines = _lines(data)
    start = _after_header(lines)
    new = [
        f"  %huge_a : {ty_base} = prim::Constant[value={base}]()",
        f"  %huge_b : {ty_exponent} = prim::Constant[value={exponent}]()",
        f"  %huge_c : {draw(st.sampled_from([ty, 'Scalar']))} = {kind}(%huge_a, %huge_b)",
        f"  %huge_d : {ty} = {kind}(%huge_c, %huge_c)",
    ]
    return _bytes("\n".join(lines[:start] + new + lines[start:]))


def unicode_name(draw: st.DrawFn, data: bytes) -> bytes:
    """Rename one value everywhere (or at one use only) to a Unicode name."""
    text = _text(data)
    names = sorted(set(_VALUE_NAME.findall(text)))
    if not names:
        return data
    old = draw(st.sampled_from(names))
    new = "%" + draw(st.sampled_from(_UNICODE_NAMES))
    if draw(st.booleans()):
        return _bytes(re.sub(re.escape(old) + r"(?![\w.])", lambda _: new, text))
    return _replace_one(draw, data, re.compile(re.escape(old) + r"(?![\w.])"), lambda _: new)


def confusable(draw: st.DrawFn, data: bytes) -> bytes:
    plain, lookalike = draw(st.sampled_from(_CONFUSABLES))
    return _replace_one(draw, data, re.compile(re.escape(plain)), lambda _: lookalike)


def edit_lines(draw: st.DrawFn, data: bytes) -> bytes:
    lines = _lines(data)
    if len(lines) < 2:
        return data
    i = draw(st.integers(0, len(lines) - 1))
    j = draw(st.integers(0, len(lines) - 1))
    edit = draw(st.sampled_from(["duplicate", "remove", "swap", "copy"]))
    if edit == "duplicate":
        lines.insert(i, lines[i])
    elif edit == "remove":
        del lines[i]
    elif edit == "swap":
        lines[i], lines[j] = lines[j], lines[i]
    else:
        lines.insert(j, lines[i])
    return _bytes("\n".join(lines))


def line_endings(draw: st.DrawFn, data: bytes) -> bytes:
    ending = draw(st.sampled_from([b"\r\n", b"\r", b"\n\n", b"\x0c\n", b"\n\t"]))
    return data.replace(b"\n", ending)


def splice(draw: st.DrawFn, data: bytes) -> bytes:
    """A line of another seed, inserted anywhere."""
    other = _lines(_bytes(draw(st.sampled_from(seeds())).text))
    lines = _lines(data)
    lines.insert(draw(st.integers(0, len(lines))), draw(st.sampled_from(other)))
    return _bytes("\n".join(lines))


MUTATIONS: dict[str, Mutation] = {
    "flip-byte": flip_byte,
    "insert-bytes": insert_bytes,
    "reencode": reencode,
    "truncate": truncate,
    "nest-blocks": nest_blocks,
    "nest-type": nest_type,
    "nest-attribute": nest_attribute,
    "huge-number": huge_number,
    "huge-power": huge_power,
    "unicode-name": unicode_name,
    "confusable": confusable,
    "edit-lines": edit_lines,
    "line-endings": line_endings,
    "splice": splice,
}


@st.composite
def ir_texts(draw: st.DrawFn, max_mutations: int = 3) -> IRText:
    seed = draw(st.sampled_from(seeds()))
    data = _bytes(seed.text)
    names = draw(st.lists(st.sampled_from(sorted(MUTATIONS)), min_size=1, max_size=max_mutations))
    for name in names:
        data = MUTATIONS[name](draw, data)
    pipeline = draw(st.sampled_from([seed.pipeline, seed.pipeline, ""]))
    return IRText(seed.name, pipeline, data, tuple(names))


# -- the property ---------------------------------------------------------------------------

_LOCATED = re.compile(r"^\S.*:\d+:\d+: error: \S")


class OptTookTooLong(BaseException):
    """`autodiff opt` ran past `TIME_LIMIT`. (Not an Exception, so that no ``except
    Exception`` inside the command, such as the pass manager's, turns it into an error.)"""


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise OptTookTooLong in the code inside after ``seconds`` (by SIGALRM: main thread only;
    elsewhere, no limit)."""
    if not hasattr(signal, "setitimer") or not _in_main_thread():
        yield
        return

    def alarm(signum: int, frame: FrameType | None) -> None:
        raise OptTookTooLong(f"autodiff opt took more than {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _in_main_thread() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


def run_opt(case: IRText, *, subprocess_run: bool = False) -> tuple[int, str, str]:
    """Exit status, standard output and standard error of ``autodiff opt FILE -p PIPELINE``
    on the case's bytes."""
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "case.ir"
        path.write_bytes(case.data)
        # (-p "" too: without -p, opt notes on standard error that no pass ran)
        argv = ["opt", str(path), "-p", case.pipeline]
        if subprocess_run:
            done = subprocess.run(
                [sys.executable, "-m", "autodiff", *argv],
                capture_output=True,
                timeout=TIME_LIMIT + 10,  # (the interpreter starts, too)
                check=False,
                cwd=ROOT,
            )
            out = done.stdout.decode("utf-8", errors="replace")
            err = done.stderr.decode("utf-8", errors="replace")
            return (
                done.returncode,
                out.replace(str(path), "case.ir"),
                err.replace(str(path), "case.ir"),
            )
        from autodiff.cli import main

        out_buffer, err_buffer = io.StringIO(), io.StringIO()
        with time_limit(TIME_LIMIT), redirect_stdout(out_buffer), redirect_stderr(err_buffer):
            status = main(argv)
        out, err = out_buffer.getvalue(), err_buffer.getvalue()
        return status, out.replace(str(path), "case.ir"), err.replace(str(path), "case.ir")


def check_opt(case: IRText, *, subprocess_run: bool = False) -> None:
    """The property: success with IR that parses back to the same text, or status 1 and one
    located error of at most a dozen lines; no traceback, no hang."""
    from ir.parser import parse_module
    from ir.printer import print_module

    status, out, err = run_opt(case, subprocess_run=subprocess_run)
    assert "Traceback" not in err, f"a traceback:\n{err[-3000:]}"
    if status == 0:
        assert err == "", f"status 0 with standard error:\n{err[:2000]}"
        printed = print_module(parse_module(out, "<output>").values())
        assert printed == out, "the output does not print back the same after parsing"
        return
    assert status == 1, f"exit status {status}:\n{err[:2000]}"
    assert out == "", f"an error, and standard output:\n{out[:2000]}"
    lines = err.splitlines()
    assert lines, "status 1 without a message"
    assert _LOCATED.match(lines[0]), f"the error is not located:\n{err[:2000]}"
    # (the source line under the message is indented, so it never looks like a second error)
    assert not any(_LOCATED.match(line) for line in lines[1:]), f"several errors:\n{err[:2000]}"
    assert len(lines) <= MAX_ERROR_LINES, f"{len(lines)} lines of error:\n{err[:3000]}"
