"""``prefixexec conformance --command CMD``: run another implementation on every vector (CONF-RUN)."""

from __future__ import annotations

import argparse
import json
import os
import shutil
from pathlib import Path
from typing import TextIO

import attrs

from prefixexec.adapters import InputError
from prefixexec.adapters.text import printable_lines
from prefixexec.cli import int_at_least
from prefixexec.conformance import (
    POINT_KEYS,
    check_vectors,
    default_vectors_dir,
    format_results,
    load_vectors,
    parse_command,
    results_json,
)

NAME = "conformance"


@attrs.frozen(slots=True)
class Options:
    """``conformance``'s arguments, typed (API-PIPELINE)."""

    other_command: str
    stdout: TextIO
    vectors: tuple[str, ...] | None = None
    only: tuple[str, ...] = ()
    tolerance: float = 1e-9
    skip: tuple[str, ...] = ()
    timeout: float = 60.0
    jobs: int | None = None
    subprocess: bool = False
    json: bool = False
    quiet: bool = False


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number: {text}")
    return value


def _tolerance(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text}") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a number >= 0: {text}")
    return value


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        NAME,
        help="run another implementation on the conformance vectors and report every difference",
        description="Run CMD once per vector with the vector's records as JSONL on stdin; CMD must "
        "print the `score --json` document (e.g. 'prefixexec score --json --bootstrap 0 -'). "
        "Exit 1 when any vector differs.",
    )
    p.add_argument(
        "--command",
        dest="other_command",  # "command" is the subcommand's own dest in the top-level parser
        required=True,
        metavar="CMD",
        help="the command (split into words like a shell does, never run by a shell)",
    )
    p.add_argument(
        "--vectors",
        action="append",
        metavar="PATH",
        help="a vector file or folder (repeatable; default: the vectors shipped in the package)",
    )
    p.add_argument(
        "--only", action="append", default=[], metavar="GLOB", help="only vector ids matching GLOB"
    )
    p.add_argument(
        "--tolerance",
        type=_tolerance,
        default=1e-9,
        help="largest absolute difference allowed between floats (default 1e-9)",
    )
    p.add_argument(
        "--skip",
        action="append",
        default=[],
        choices=POINT_KEYS,
        metavar="KEY",
        help="a top-level key not to compare (repeatable), e.g. exact or labels",
    )
    p.add_argument("--timeout", type=_positive_float, default=60.0, help="seconds per vector (default 60)")
    p.add_argument(
        "--jobs",
        type=int_at_least(1),
        default=None,
        metavar="N",
        help="runs of CMD at a time (default: the number of cores)",
    )
    p.add_argument(
        "--subprocess",
        action="store_true",
        help="always start CMD once per vector; by default, when CMD is this prefixexec "
        "('PYTHON -m prefixexec ...' with this interpreter, or the prefixexec script beside it), "
        "the vectors are scored in this process (no --timeout then)",
    )
    p.add_argument("--json", action="store_true", help="print a JSON report")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr (PROGRESS-QUIET)")


def run(options: Options) -> int:
    argv = parse_command(options.other_command)
    if shutil.which(argv[0]) is None:
        raise InputError("--command", f"no such program (or not executable): {argv[0]!r}")
    paths = [Path(p) for p in options.vectors] if options.vectors else [default_vectors_dir()]
    if not options.vectors and not paths[0].is_dir():
        raise InputError("--vectors", f"no vectors folder at {paths[0]}; give one with --vectors")
    vectors = load_vectors(paths, options.only)
    from prefixexec.ttyprogress import Work

    with Work(options.quiet, "prefixexec conformance", delay=0.0) as work:  # PROGRESS-TTY, PROGRESS-COUNT
        work.phase("checking", len(vectors), "vectors")

        def done(count: int, total: int) -> None:
            work.done = count - 1
            work.advance()

        results = check_vectors(
            vectors,
            argv,
            options.tolerance,
            options.timeout,
            options.skip,
            jobs=options.jobs or os.cpu_count() or 1,
            in_process=not options.subprocess,
            progress=done if work.enabled else None,
        )
    if options.json:
        options.stdout.write(json.dumps(results_json(results), indent=2, allow_nan=False) + "\n")
    else:
        options.stdout.write(printable_lines(format_results(results)))
    return 0 if all(r.ok for r in results) else 1
