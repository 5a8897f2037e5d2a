"""Fuzz the compiler with generated programs; save each failure, shrunk, under tests/regressions/.

    python -m tests.property.fuzz --examples 10000            # all properties, random seed
    python -m tests.property.fuzz --examples 500 --seed 7 --properties passes,gradients

Each batch runs hypothesis on `programs()` until a property fails; hypothesis then shrinks the
program, and the smallest failing one is written to ``tests/regressions/NNN.py`` (with the
property, the error and ``XFAIL = None``: set a reason there to record a known bug). A failure
that matches one already saved is rejected rather than shrunk again, and the run goes on with
the next seed until ``--examples`` programs have passed or been rejected.
"""

from __future__ import annotations

import argparse
import ast
import random
import re
import sys
import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, reject, settings
from hypothesis import seed as hypothesis_seed
from hypothesis.errors import Unsatisfiable

from tests.property.checks import PROPERTIES
from tests.property.programs import Program, programs

REGRESSIONS = Path(__file__).resolve().parent.parent / "regressions"


def error_key(error: BaseException) -> str:
    """What identifies a failure across programs: the error's type and the first line of its
    message, without locations, value names and numbers."""
    lines = str(error).strip().splitlines()
    first = lines[0] if lines else ""
    first = re.sub(r"^\S*:\d+:\d+: (error: )?", "", first)
    first = re.sub(r"%[\w.]+", "%_", first)
    first = re.sub(r"\d+(\.\d+)?(e[-+]?\d+)?", "N", first)
    first = re.sub(r"'\w+'", "'_'", first)
    return f"{type(error).__name__}: {first}"[:160]


def metadata(text: str, name: str) -> Any:
    """The value of the module-level ``name = <literal>`` in a regression file, or None."""
    for node in ast.parse(text).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == name for target in node.targets
        ):
            return ast.literal_eval(node.value)
    return None


def known_keys(directory: Path = REGRESSIONS) -> set[str]:
    keys = set()
    for path in sorted(directory.glob("[0-9]*.py")):
        key = metadata(path.read_text(encoding="utf-8"), "ERROR")
        if key is not None:
            keys.add(key)
    return keys


def save_regression(
    program: Program, prop: str, error: BaseException, directory: Path = REGRESSIONS
) -> Path:
    """Write ``program`` to the next free ``NNN.py`` in ``directory``; returns its path."""
    directory.mkdir(parents=True, exist_ok=True)
    numbers = [int(p.stem) for p in directory.glob("[0-9]*.py") if p.stem.isdigit()]
    path = directory / f"{max(numbers, default=0) + 1:03d}.py"
    message = "\n".join(f"    {line}" for line in str(error).strip().splitlines()[:8])
    doc = f"Found by tests/property/fuzz.py: property {prop!r} fails with\n\n{message}\n"
    metadata = f"PROPERTY = {prop!r}\nERROR = {error_key(error)!r}\nXFAIL = None\n"
    path.write_text(program.source(doc, metadata), encoding="utf-8")
    return path


@dataclass
class Failure:
    program: Program
    prop: str
    error: BaseException


def fuzz_batch(
    examples: int, seed: int, properties: Sequence[str], known: set[str], known_bugs: bool = False
) -> tuple[int, Failure | None]:
    """Run up to ``examples`` programs from ``seed``; the count that passed or were rejected
    as known failures, and the shrunk failure if one was found."""
    ran = 0
    failing = False
    last: Failure | None = None

    @settings(
        max_examples=examples,
        database=None,
        deadline=None,
        derandomize=False,
        report_multiple_bugs=False,
        suppress_health_check=list(HealthCheck),
    )
    @hypothesis_seed(seed)
    @given(programs(known_bugs=known_bugs))
    def run(program: Program) -> None:
        nonlocal ran, failing, last
        if ran >= examples and not failing:
            return  # rejected examples do not count for hypothesis; they do here
        for prop in properties:
            try:
                PROPERTIES[prop](program)
            except Exception as error:
                if error_key(error) in known:
                    if not failing:
                        ran += 1
                    reject()
                failing = True
                last = Failure(program, prop, error)
                raise
        if not failing:
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
        return ran, last
    return ran, None


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
        "--known-bugs",
        action="store_true",
        help="also generate the kinds of program "
        "tests/regressions/ records as known bugs (writes through arguments)",
    )
    parser.add_argument("--no-save", action="store_true", help="report failures, save nothing")
    options = parser.parse_args(argv)
    properties = [p for p in options.properties.split(",") if p]
    for prop in properties:
        if prop not in PROPERTIES:
            parser.error(f"unknown property {prop!r}; known: {', '.join(PROPERTIES)}")
    seed = options.seed if options.seed is not None else random.randrange(2**32)
    known = known_keys()
    total, failures = 0, 0
    while total < options.examples:
        ran, failure = fuzz_batch(
            options.examples - total, seed, properties, known, options.known_bugs
        )
        total += ran
        print(f"seed {seed}: {ran} programs, {total} in all", flush=True)
        seed += 1
        if failure is None:
            continue
        failures += 1
        key = error_key(failure.error)
        known.add(key)
        where = "not saved"
        if not options.no_save:
            where = str(save_regression(failure.program, failure.prop, failure.error))
        print(f"FAILURE ({failure.prop}) {key}\n  -> {where}", flush=True)
        traceback.print_exception(failure.error, limit=-3, file=sys.stdout)
        print(failure.program.body, flush=True)
    print(f"{total} programs, {failures} new failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
