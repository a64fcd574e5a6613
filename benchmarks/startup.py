"""Benchmark: start-up of the command line, and the conformance run, against floors in the same run.

Measured in fresh interpreters (wall time, best of ``--repeat``, runs alternated):

* ``prefixexec --version`` against an argparse-only script that prints a version the same way;
* ``prefixexec score --bootstrap 0`` of a one-line records file against importing numpy and the
  kernel (``prefixexec.kernel``, its bootstrap and accumulators): what scoring cannot do without;
  and against the same imports ending with ``os._exit``: ``prefixexec`` skips the interpreter's
  teardown when nothing is left to clean up (``prefixexec.cli.leave``), the floor does not, so
  this stricter floor shows what the imports and the work cost;
* ``prefixexec conformance`` over every shipped vector with our own scorer (scored in-process),
  and, for comparison, ``--subprocess`` (one interpreter per vector) on ``--sample`` vectors,
  extrapolated to all of them.

Both sides run with Python's bytecode cache on (``PYTHONDONTWRITEBYTECODE`` is dropped from
the children's environment, and the first, untimed run writes the cache): an installed package
comes with its bytecode, so compiling changed source files is not start-up. Wall time on a busy
machine varies; the children's CPU time (user + system) is printed too, best of ``--repeat``.

Usage: python benchmarks/startup.py [--repeat 15] [--sample 20] [--skip-conformance]
"""

from __future__ import annotations

import argparse
import os
import resource
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BIN = Path(sys.executable).parent
ARGPARSE_ONLY = (
    "import argparse\n"
    "p = argparse.ArgumentParser(prog='prefixexec')\n"
    "p.add_argument('--version', action='version', version='prefixexec 0.1.0')\n"
    "p.parse_args()\n"
)
KERNEL_ONLY = "import numpy, prefixexec.kernel, prefixexec.kernel.bootstrap, prefixexec.kernel.accumulator\n"
#: The floor's imports ending as ``prefixexec`` ends when nothing is left to clean up
#: (prefixexec.cli.leave): a stricter floor, printed beside the one the target is set against.
BARE_EXIT = "import os, sys; sys.stdout.flush(); os._exit(0)\n"
BARE_NAME = "the same ending with os._exit (no interpreter teardown, as ours when it can)"
RECORD = (
    '{"dataset": "d", "task_id": "t1", "model": "m", "method": "react", "success": true, '
    '"outcome": {"T": 3, "fed": 2, "label": "schema"}}\n'
)


#: The children's environment: bytecode written and read (see the module docstring).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def wall(argv: list[str]) -> tuple[float, float]:
    """Wall time and CPU time (user + system) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True, env=ENV)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def best_times(commands: list[list[str]], repeat: int) -> list[tuple[float, float]]:
    """Best wall time and best CPU time of each command (runs alternated, after one untimed run
    of each that warms the file cache and writes the bytecode cache)."""
    for argv in commands:
        wall(argv)
    runs: list[list[tuple[float, float]]] = [[] for _ in commands]
    for _ in range(repeat):
        for argv, times in zip(commands, runs, strict=True):
            times.append(wall(argv))
    return [(min(w for w, _ in times), min(c for _, c in times)) for times in runs]


def ratio(name: str, ours: tuple[float, float], floor: tuple[float, float]) -> str:
    """``name``'s wall and CPU times against ``ours``'s."""
    return (
        f"{name} {floor[0] * 1000:.0f} ms: ratio {ours[0] / floor[0]:.2f}x "
        f"(CPU {ours[1] * 1000:.0f} ms / {floor[1] * 1000:.0f} ms = {ours[1] / floor[1]:.2f}x)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--sample", type=int, default=20, help="vectors run with --subprocess")
    parser.add_argument("--skip-conformance", action="store_true")
    args = parser.parse_args()
    prefixexec = str(BIN / "prefixexec")
    with tempfile.TemporaryDirectory(prefix="prefixexec-startup-") as tmp:
        script = Path(tmp) / "argparse_only.py"
        script.write_text(ARGPARSE_ONLY, encoding="utf-8")
        version = [prefixexec, "--version"]
        ours, floor = best_times([version, [sys.executable, str(script), "--version"]], args.repeat)
        argparse_only = ratio("argparse-only script", ours, floor)
        print(f"prefixexec --version: {ours[0] * 1000:.0f} ms; {argparse_only} (target <= 3x)")
        one = Path(tmp) / "one.jsonl"
        one.write_text(RECORD, encoding="utf-8")
        score = [prefixexec, "score", str(one), "--bootstrap", "0"]
        ours, floor, bare = best_times(
            [score, [sys.executable, "-c", KERNEL_ONLY], [sys.executable, "-c", KERNEL_ONLY + BARE_EXIT]],
            args.repeat,
        )
        print(
            f"prefixexec score --bootstrap 0 of a 1-line file: {ours[0] * 1000:.0f} ms; "
            f"{ratio('importing numpy and the kernel', ours, floor)} (target <= 1.3x); "
            f"{ratio(BARE_NAME, ours, bare)}"
        )
    if args.skip_conformance:
        return
    command = f"{shlex.quote(sys.executable)} -m prefixexec score --json --bootstrap 0 -"
    start = time.perf_counter()
    done = subprocess.run(
        [prefixexec, "conformance", "--command", command], check=True, capture_output=True, text=True
    )
    inproc = time.perf_counter() - start
    vectors = int(done.stdout.strip().splitlines()[-1].split(" of ")[1].split()[0])
    summary = done.stdout.strip().splitlines()[-1]
    print(f"prefixexec conformance, our scorer in-process: {vectors} vectors in {inproc:.1f} s ({summary})")
    start = time.perf_counter()
    sample = subprocess.run(
        [prefixexec, "conformance", "--subprocess", "--command", command, "--only", "random-00[0-1]*"],
        check=True,
        capture_output=True,
        text=True,
    )
    sub = time.perf_counter() - start
    n = int(sample.stdout.strip().splitlines()[-1].split(" of ")[1].split()[0])
    print(
        f"  --subprocess (one interpreter per vector, --jobs = cores): {n} vectors in {sub:.1f} s, "
        f"about {sub / n * vectors:.0f} s for all {vectors}"
    )


if __name__ == "__main__":
    main()
