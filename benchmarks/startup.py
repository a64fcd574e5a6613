"""Benchmark: start-up of the command line, and the conformance run, against floors in the same run.

Measured in fresh interpreters (wall time, best of ``--repeat``, runs alternated):

* ``prefixexec --version`` against an argparse-only script that prints a version the same way;
* ``prefixexec score --bootstrap 0`` of a one-line records file against importing numpy and the
  kernel (``prefixexec.kernel``, its bootstrap and accumulators): what scoring cannot do without;
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
RECORD = (
    '{"dataset": "d", "task_id": "t1", "model": "m", "method": "react", "success": true, '
    '"outcome": {"T": 3, "fed": 2, "label": "schema"}}\n'
)


#: The children's environment: bytecode written and read (see the module docstring).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
#: Best CPU times (user + system) of the last :func:`best_pair`.
CPU: dict[str, float] = {}


def wall(argv: list[str]) -> tuple[float, float]:
    """Wall time and CPU time (user + system) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True, env=ENV)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def best_pair(a: list[str], b: list[str], repeat: int) -> tuple[float, float]:
    """Best wall times of ``a`` and ``b`` (runs alternated); their best CPU times go to :data:`CPU`."""
    wall(a), wall(b)  # warm the file cache and write the bytecode cache
    ta, tb = [], []
    for _ in range(repeat):
        ta.append(wall(a))
        tb.append(wall(b))
    CPU["a"], CPU["b"] = min(c for _, c in ta), min(c for _, c in tb)
    return min(w for w, _ in ta), min(w for w, _ in tb)


def cpu_note() -> str:
    return f"; CPU {CPU['a'] * 1000:.0f} ms / {CPU['b'] * 1000:.0f} ms = {CPU['a'] / CPU['b']:.2f}x"


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
        ours, floor = best_pair(version, [sys.executable, str(script), "--version"], args.repeat)
        print(
            f"prefixexec --version: {ours * 1000:.0f} ms; argparse-only script {floor * 1000:.0f} ms; "
            f"ratio {ours / floor:.2f}x (target <= 3x){cpu_note()}"
        )
        one = Path(tmp) / "one.jsonl"
        one.write_text(RECORD, encoding="utf-8")
        score = [prefixexec, "score", str(one), "--bootstrap", "0"]
        ours, floor = best_pair(score, [sys.executable, "-c", KERNEL_ONLY], args.repeat)
        print(
            f"prefixexec score --bootstrap 0 of a 1-line file: {ours * 1000:.0f} ms; importing numpy and "
            f"the kernel {floor * 1000:.0f} ms; ratio {ours / floor:.2f}x (target <= 1.3x){cpu_note()}"
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
