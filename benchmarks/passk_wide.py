"""Benchmark: PASSK-BOOT-FIXED's fixed-point path against the exact object path (issue 40).

The input: one system, 50 tasks x 800 trials (``leaderboard.write_input``, seeded; or ``--input``
a records file). In one run it prints:

* the kernel: the replicates of every wide curve column the leaderboard draws (pass^k, pass@k,
  TER^k, TER@k at k = 1..800 whose L = lcm C(n_j, k) makes a sum exceed 2^53, reduced as the
  leaderboard reduces them) under the same ``--kernel-B`` resamples, by the exact Python-integer
  product (``passk.replicates``: object-dtype W @ num, then int / int per replicate) and by
  ``passk.prepare_columns(...).replicates`` (preparing the limbs included), best of
  ``--repeat``; checks that both give the same doubles bit for bit and prints the ratio
  old / new and how many replicates took the exact fallback;
* the whole command ``prefixexec leaderboard --json --bootstrap B FILE`` in a fresh process
  (started first): wall time, its peak resident memory (``ru_maxrss``) and LB-MEMORY's planned
  peak.

With ``--old-command`` the command is also run with the curve's replicates taken the old way
(Python-integer products, as before PASSK-BOOT-FIXED), and the ratio of the two is printed.

Usage: python benchmarks/passk_wide.py [--input FILE] [--kernel-B 1000] [--B 10000] [--repeat 2]
[--old-command]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path
from typing import Any, cast

import numpy as np
from leaderboard import write_input

import prefixexec.ranking.core as core
from prefixexec.kernel import passk as pk
from prefixexec.kernel.bootstrap import resample_counts

#: Runs the command in a fresh process and prints its wall time, peak RSS and planned peak.
CHILD = """
import contextlib, io, json, resource, sys, time
import prefixexec.ranking.core as core
from prefixexec.cli import main
planned = []
real = core._plan
def spy(*a, **k):
    p = real(*a, **k)
    planned.append(p.peak)
    return p
core._plan = spy
if sys.argv[3] == "old":  # the curve's replicates as before PASSK-BOOT-FIXED (one product per dtype)
    import numpy as np
    from prefixexec.kernel import passk as pk

    class Exact:
        def __init__(self, columns):
            self.columns = columns

        def replicates(self, W):
            out = np.empty((len(self.columns), W.shape[0]))
            for wide in (False, True):
                where = [c for c, (num, _) in enumerate(self.columns) if (num.dtype == object) == wide]
                if where:
                    out[where] = pk.replicates(W, [self.columns[c] for c in where])
            return out

    pk.prepare_columns = lambda columns, n_tasks: Exact(columns)
start = time.perf_counter()
with contextlib.redirect_stdout(io.StringIO()):
    code = main(["leaderboard", "--json", "--bootstrap", sys.argv[1], sys.argv[2]])
seconds = time.perf_counter() - start
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # kilobytes on Linux
print(json.dumps({"code": code, "seconds": seconds, "rss": rss, "planned": max(planned)}))
"""


def task_counts(path: Path) -> tuple[list[int], list[int], list[int]]:
    """Per task (sorted ids): trials, successes, fully executable trials (FED = T + 1)."""
    n: dict[str, int] = {}
    c: dict[str, int] = {}
    e: dict[str, int] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        t = r["task_id"]
        n[t] = n.get(t, 0) + 1
        c[t] = c.get(t, 0) + bool(r["success"])
        e[t] = e.get(t, 0) + (r["outcome"]["fed"] == r["outcome"]["T"] + 1)
    tasks = sorted(n)
    return [n[t] for t in tasks], [c[t] for t in tasks], [e[t] for t in tasks]


def wide_columns(path: Path) -> list[tuple[Any, Any]]:
    n, c, e = task_counts(path)
    system = cast(Any, types.SimpleNamespace(n=tuple(n), c=tuple(c), e=tuple(e)))
    out = []
    for k in range(1, min(n) + 1):
        for kind in pk.KINDS:
            num, den = core._curve_column(system, kind, k)
            if num.dtype == object or int(den[0]) * len(n) >= 2**53:
                out.append((num, den))
    return out


def best(repeat: int, run: Any) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - start)
    return min(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--input", type=Path, default=None)
    parser.add_argument("--kernel-B", type=int, default=1000)
    parser.add_argument("--B", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument(
        "--old-command", action="store_true", help="also time the command the old way (minutes)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = args.input
        if path is None:
            path = Path(tmp) / "records.jsonl"
            write_input(path, 1, 50, 800)
        # The command first: Linux keeps a process's peak RSS across exec, so a child started
        # after the exact path's big integers were held would report the parent's peak.
        seconds = {}
        for how in ("new", "old") if args.old_command else ("new",):
            child = subprocess.run(
                [sys.executable, "-c", CHILD, str(args.B), str(path), how],
                check=True,
                capture_output=True,
                text=True,
            )
            got = json.loads(child.stdout.strip().splitlines()[-1])
            seconds[how] = got["seconds"]
            print(
                f"prefixexec leaderboard --json --bootstrap {args.B} ({how} path): {got['seconds']:.1f} s, "
                f"peak RSS {got['rss'] / 1e6:.0f} MB, LB-MEMORY planned peak {got['planned'] / 1e6:.0f} MB"
            )
        if args.old_command:
            print(f"whole command, ratio old/new: {seconds['old'] / seconds['new']:.1f}")
        columns = wide_columns(path)
        n_tasks = len(columns[0][0])
        W = resample_counts(n_tasks, args.kernel_B, 0)
        print(
            f"input: {path} ({n_tasks} tasks); {len(columns)} wide curve columns x {args.kernel_B} resamples"
        )
        exact_calls = 0
        real_exact = pk._exact_replicate

        def counted(*a: Any) -> float:
            nonlocal exact_calls
            exact_calls += 1
            return real_exact(*a)

        old_s, old = best(args.repeat, lambda: pk.replicates(W, columns))
        pk._exact_replicate = counted  # type: ignore[assignment]  # count the fallbacks, same function
        new_s, new = best(args.repeat, lambda: pk.prepare_columns(columns, n_tasks).replicates(W))
        pk._exact_replicate = real_exact  # type: ignore[assignment]  # restored
        same = bool(np.array_equal(old.view(np.int64), new.view(np.int64)))
        print(
            f"kernel exact object path: {old_s:.2f} s; fixed-point path: {new_s:.3f} s; "
            f"ratio old/new: {old_s / new_s:.1f}"
        )
        print(
            f"same doubles bit for bit: {same}; exact fallbacks: {exact_calls // args.repeat} of {new.size}"
        )
        if not same:
            raise SystemExit("the fixed-point path differs from the exact path")


if __name__ == "__main__":
    main()
