"""Fuzz `autodiff opt` with mutated IR text (`tests.property.ir_text`); report each failure, shrunk.

    python -m tests.property.fuzz_ir --examples 20000 --jobs 2 --seed 7
    python -m tests.property.fuzz_ir --examples 200 --subprocess   # as a user runs it

Each batch runs hypothesis on `ir_texts()` from one seed until `check_opt` fails; hypothesis then
shrinks the case (keeping the failure's `detailed_key`), and the smallest one is printed and,
with ``--save DIR``, written there as ``NNN.ir`` (the bytes) and ``NNN.txt`` (the pipeline and
the failure). A failure like one found before in the run is rejected rather than shrunk again,
and the run goes on with the next seed until ``--examples`` cases have passed or been rejected.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from hypothesis import given, reject
from hypothesis import seed as hypothesis_seed
from hypothesis.errors import Unsatisfiable

from tests.property.fuzz import batch_settings, detailed_key, run_batches
from tests.property.ir_text import IRText, check_opt, ir_texts, seeds

BATCH = 500  # cases per batch when batches run in processes (--jobs)


@dataclass(frozen=True)
class IRFailure:
    case: IRText
    key: str
    message: str


def fuzz_batch(
    examples: int, seed: int, known: set[str], subprocess_run: bool = False
) -> tuple[int, IRFailure | None]:
    """Run up to ``examples`` cases from ``seed``; the count that passed or were rejected as
    known failures, and the shrunk failure if one was found."""
    ran = 0
    last: tuple[IRText, BaseException] | None = None

    @batch_settings(examples)
    @hypothesis_seed(seed)
    @given(ir_texts())
    def run(case: IRText) -> None:
        nonlocal ran, last
        if last is not None:  # shrinking: only the same failure counts
            try:
                check_opt(case, subprocess_run=subprocess_run)
            except Exception as error:
                if detailed_key(error) == detailed_key(last[1]):
                    last = (case, error)
                    raise
            return
        if ran >= examples:
            return
        ran += 1
        try:
            check_opt(case, subprocess_run=subprocess_run)
        except Exception as error:
            if detailed_key(error) in known:
                reject()
            last = (case, error)
            raise
        if ran % 500 == 0:
            print(f"seed {seed}: {ran} cases", flush=True)

    try:
        run()
    except Unsatisfiable:
        return ran, None
    except Exception:
        if last is None:
            raise
        case, error = last
        return ran, IRFailure(case, detailed_key(error), f"{type(error).__name__}: {error}")
    return ran, None


def fuzz(
    examples: int, seed: int, jobs: int, subprocess_run: bool
) -> Iterator[tuple[int, int, IRFailure | None]]:
    """Batches from ``seed`` on until ``examples`` cases have run; yields each batch's seed,
    count and failure as it ends."""
    known: set[str] = set()
    seeds()  # built once here, before the worker processes fork
    yield from run_batches(
        lambda size, batch_seed: (fuzz_batch, size, batch_seed, set(known), subprocess_run),
        examples,
        seed,
        jobs,
        lambda failure: known.add(failure.key),
    )


def save(failure: IRFailure, directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    numbers = [int(p.stem) for p in directory.glob("[0-9]*.ir") if p.stem.isdigit()]
    path = directory / f"{max(numbers, default=0) + 1:03d}.ir"
    path.write_bytes(failure.case.data)
    path.with_suffix(".txt").write_text(
        f"seed: {failure.case.seed}\nmutations: {', '.join(failure.case.mutations)}\n"
        f"run: autodiff opt {path.name} -p '{failure.case.pipeline}'\n\n{failure.message}\n",
        encoding="utf-8",
    )
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=1000, help="cases to run")
    parser.add_argument("--seed", type=int, default=None, help="first seed (default: random)")
    parser.add_argument("--jobs", type=int, default=1, help=f"batches of {BATCH} run at once")
    parser.add_argument(
        "--subprocess", action="store_true", help="run `python -m autodiff opt` per case"
    )
    parser.add_argument("--save", type=Path, default=None, help="write failures to this folder")
    options = parser.parse_args(argv)
    seed = options.seed if options.seed is not None else random.randrange(2**32)
    print(f"first seed {seed}, {options.jobs} job(s), {len(seeds())} seed texts", flush=True)
    start = time.monotonic()
    total, failures = 0, 0
    for batch_seed, ran, failure in fuzz(options.examples, seed, options.jobs, options.subprocess):
        total += ran
        print(f"seed {batch_seed}: {ran} cases, {total} in all", flush=True)
        if failure is None:
            continue
        failures += 1
        where = str(save(failure, options.save)) if options.save else "not saved"
        print(f"FAILURE {failure.key}\n  -> {where}\n{failure.case!r}\n{failure.message[:3000]}")
    minutes = (time.monotonic() - start) / 60
    print(f"{total} cases, {failures} failures, {minutes:.1f} minutes")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
