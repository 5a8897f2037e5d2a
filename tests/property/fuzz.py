"""Fuzz the compiler with generated programs; save each failure, shrunk, under tests/regressions/.

    python -m tests.property.fuzz --examples 10000 --jobs 2   # all properties, random seed
    python -m tests.property.fuzz --examples 500 --seed 7 --properties passes,gradients
    python -m tests.property.fuzz --examples 300 --idioms views --no-save  # one idiom

The generator draws every idiom of `tests.property.idioms.IDIOMS` unless ``--idioms`` names
some (``--idioms none``: the base generator); with one idiom named, every program starts with it.

Each batch runs hypothesis on `programs()` from one seed until a property fails; hypothesis
then shrinks the program (keeping the property and the error's `detailed_key`), and the smallest
failing one is written to ``tests/regressions/NNN.py`` (with the property, the error and
``XFAIL = None``: set a reason there to record a known bug). A failure that matches a known bug
(an ``XFAIL`` file's key, or one this run found already) is rejected rather than shrunk again,
and the run goes on with the next seed until ``--examples`` programs have passed or been
rejected. ``--jobs N`` runs N batches of `BATCH` programs at once, in processes; the run prints
its first seed, so it can be repeated (batch by batch; which batch a failure cuts short, and so
which seeds follow, depends on timing with several jobs).
"""

from __future__ import annotations

import argparse
import ast
import random
import re
import sys
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, reject, settings
from hypothesis import seed as hypothesis_seed
from hypothesis.errors import Unsatisfiable, UnsatisfiedAssumption

from tests.property.checks import PROPERTIES
from tests.property.idioms import IDIOMS
from tests.property.programs import Program, programs

REGRESSIONS = Path(__file__).resolve().parent.parent / "regressions"
BATCH = 100  # programs per batch when batches run in processes (--jobs)


def _normalised(line: str) -> str:
    line = re.sub(r"^(\S*:\d+:\d+: )?(error: )?", "", line)
    line = re.sub(r"%[\w.]+", "%_", line)
    line = re.sub(r"-?\d+(\.\d+)?(e[-+]?\d+)?", "N", line)
    return re.sub(r"'\w+'", "'_'", line)


def error_key(error: BaseException) -> str:
    """What identifies a failure across programs (a regression file's ``ERROR``): the error's
    type and the first line of its message, without locations, value names and numbers."""
    lines = str(error).strip().splitlines()
    first = _normalised(lines[0]) if lines else ""
    return f"{type(error).__name__}: {first}"[:160]


def detailed_key(error: BaseException) -> str:
    """`error_key` and the message's next line, which says where for some errors (``Not equal
    to tolerance`` is followed by what was compared): what one run takes for the same failure
    again, so that it does not hide every mismatch behind the first."""
    lines = [line for line in str(error).strip().splitlines()[1:] if line.strip()]
    second = _normalised(lines[0]) if lines else ""
    return f"{error_key(error)} | {second[:100]}"


def metadata(text: str, name: str) -> Any:
    """The value of the module-level ``name = <literal>`` in a regression file, or None."""
    for node in ast.parse(text).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == name for target in node.targets
        ):
            return ast.literal_eval(node.value)
    return None


def known_keys(directory: Path = REGRESSIONS) -> set[str]:
    """The keys of the known bugs saved in ``directory``: those with an ``XFAIL`` reason. A
    fixed one's key is not among them, so that a failure like it is reported again."""
    keys = set()
    for path in sorted(directory.glob("[0-9]*.py")):
        text = path.read_text(encoding="utf-8")
        key = metadata(text, "ERROR")
        if key is not None and metadata(text, "XFAIL"):
            keys.add(key)
    return keys


@dataclass(frozen=True)
class Failure:
    """A program that fails a property, with what a report and a regression file need (plain
    strings, so that a worker process can send it back)."""

    program: Program
    prop: str
    key: str  # error_key of the error
    detail: str  # detailed_key of the error
    message: str
    trace: str

    @staticmethod
    def of(program: Program, prop: str, error: BaseException) -> Failure:
        trace = "".join(traceback.format_exception(error, limit=-3))
        return Failure(program, prop, error_key(error), detailed_key(error), str(error), trace)


def save_regression(failure: Failure, directory: Path = REGRESSIONS) -> Path:
    """Write the failing program to the next free ``NNN.py`` in ``directory``; returns its
    path."""
    directory.mkdir(parents=True, exist_ok=True)
    numbers = [int(p.stem) for p in directory.glob("[0-9]*.py") if p.stem.isdigit()]
    path = directory / f"{max(numbers, default=0) + 1:03d}.py"
    lines = failure.message.strip().splitlines()[:8]
    message = "\n".join(f"    {line}".rstrip() for line in lines)
    doc = f"Found by tests/property/fuzz.py: property {failure.prop!r} fails with\n\n{message}\n"
    metadata = f"PROPERTY = {failure.prop!r}\nERROR = {failure.key!r}\nXFAIL = None\n"
    path.write_text(failure.program.source(doc, metadata), encoding="utf-8")
    return path


def batch_settings(examples: int) -> settings:
    """Hypothesis settings of one fuzz batch: random (seeded by the caller), no database, no
    deadline, stopping at the first failure."""
    return settings(
        max_examples=examples,
        database=None,
        deadline=None,
        derandomize=False,
        report_multiple_bugs=False,
        suppress_health_check=list(HealthCheck),
    )


def fuzz_batch(
    examples: int,
    seed: int,
    properties: Sequence[str],
    known: set[str],
    idioms: Sequence[str] = tuple(IDIOMS),
) -> tuple[int, Failure | None]:
    """Run up to ``examples`` programs from ``seed`` (drawing ``idioms``); the count that
    passed or were rejected as known failures, and the shrunk failure if one was found."""
    focus = idioms[0] if len(idioms) == 1 else None
    ran = 0
    last: tuple[Program, str, BaseException] | None = None

    @batch_settings(examples)
    @hypothesis_seed(seed)
    @given(programs(idioms, focus))
    def run(program: Program) -> None:
        nonlocal ran, last
        if last is not None:
            # Shrinking: a smaller program only counts if it fails the same property the same
            # way, which is faster than running them all and keeps the shrink on one bug.
            prop, key = last[1], detailed_key(last[2])
            try:
                PROPERTIES[prop](program)
            except UnsatisfiedAssumption:
                raise
            except Exception as error:
                if detailed_key(error) == key:
                    last = (program, prop, error)
                    raise
            return
        if ran >= examples:
            return  # rejected examples do not count for hypothesis; they do here
        for prop in properties:
            try:
                PROPERTIES[prop](program)
            except UnsatisfiedAssumption:
                raise  # NumPy refuses the program: not one to count
            except Exception as error:
                ran += 1
                if error_key(error) in known or detailed_key(error) in known:
                    reject()
                last = (program, prop, error)
                raise
        ran += 1
        if ran % 100 == 0:
            print(f"seed {seed}: {ran} programs", flush=True)

    try:
        run()
    except Unsatisfiable:  # every program was a known failure
        return ran, None
    except Exception:
        if last is None:
            raise
        return ran, Failure.of(*last)
    return ran, None


def fuzz(
    examples: int,
    seed: int,
    properties: Sequence[str],
    known: set[str],
    jobs: int = 1,
    idioms: Sequence[str] = tuple(IDIOMS),
) -> Iterator[tuple[int, int, Failure | None]]:
    """Run batches from ``seed`` on, the next seed for each, until ``examples`` programs have
    passed or been rejected; yields each batch's seed, count and failure as it ends. With
    ``jobs`` > 1 that many batches of at most `BATCH` programs run at once, in processes; a
    failure's `detailed_key` is added to ``known`` for the batches that start after it is
    reported."""
    if jobs <= 1:
        total = 0
        while total < examples:
            ran, failure = fuzz_batch(examples - total, seed, properties, known, idioms)
            total += ran
            yield seed, ran, failure
            if failure is not None:
                known.add(failure.detail)
            seed += 1
        return
    yield from run_batches(
        lambda size, batch_seed: (fuzz_batch, size, batch_seed, properties, set(known), idioms),
        examples,
        seed,
        jobs,
        lambda failure: known.add(failure.detail),
    )


def run_batches(
    batch: Callable[[int, int], tuple[Any, ...]],
    examples: int,
    seed: int,
    jobs: int,
    on_failure: Callable[[Any], None],
) -> Iterator[tuple[int, int, Any]]:
    """Run ``jobs`` batches at once in processes, the next seed for each, until ``examples``
    cases have run; ``batch(size, seed)`` gives the function to call and its arguments, which
    returns (cases run, failure or None). Yields each batch's seed, count and failure as it
    ends, after ``on_failure`` has seen the failure (so batches started later know it)."""
    with ProcessPoolExecutor(max_workers=max(jobs, 1)) as pool:
        done, assigned = 0, 0  # cases run, and cases in batches running
        running: dict[Future[tuple[int, Any]], tuple[int, int]] = {}
        while done < examples:
            while len(running) < max(jobs, 1) and done + assigned < examples:
                size = min(BATCH, examples - done - assigned)
                function, *arguments = batch(size, seed)
                running[pool.submit(function, *arguments)] = (seed, size)
                seed += 1
                assigned += size
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in finished:
                batch_seed, size = running.pop(future)
                ran, failure = future.result()
                assigned -= size
                done += ran
                if failure is not None:
                    on_failure(failure)
                yield batch_seed, ran, failure


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=1000, help="programs to run")
    parser.add_argument("--seed", type=int, default=None, help="first seed (default: random)")
    parser.add_argument(
        "--properties",
        default=",".join(PROPERTIES),
        help="comma-separated, of: " + ", ".join(PROPERTIES),
    )
    parser.add_argument(
        "--idioms",
        default=",".join(IDIOMS),
        help="comma-separated idioms the generator draws, or 'none'; of: " + ", ".join(IDIOMS),
    )
    parser.add_argument("--no-save", action="store_true", help="report failures, save nothing")
    parser.add_argument(
        "--jobs", type=int, default=1, help=f"batches of {BATCH} programs to run at once"
    )
    options = parser.parse_args(argv)
    properties = [p for p in options.properties.split(",") if p]
    for prop in properties:
        if prop not in PROPERTIES:
            parser.error(f"unknown property {prop!r}; known: {', '.join(PROPERTIES)}")
    idioms = [i for i in options.idioms.split(",") if i and i != "none"]
    for idiom in idioms:
        if idiom not in IDIOMS:
            parser.error(f"unknown idiom {idiom!r}; known: {', '.join(IDIOMS)}")
    seed = options.seed if options.seed is not None else random.randrange(2**32)
    print(f"first seed {seed}, {options.jobs} job(s), idioms: {idioms or 'none'}", flush=True)
    start = time.monotonic()
    total, failures = 0, 0
    for batch_seed, ran, failure in fuzz(
        options.examples, seed, properties, known_keys(), options.jobs, idioms
    ):
        total += ran
        print(f"seed {batch_seed}: {ran} programs, {total} in all", flush=True)
        if failure is None:
            continue
        failures += 1
        where = "not saved" if options.no_save else str(save_regression(failure))
        print(f"FAILURE ({failure.prop}) {failure.key}\n  -> {where}", flush=True)
        print(failure.trace, failure.program.body, sep="", flush=True)
    minutes = (time.monotonic() - start) / 60
    print(f"{total} programs, {failures} new failures, {minutes:.1f} minutes")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
