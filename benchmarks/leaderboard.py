"""Benchmark: ``prefixexec leaderboard`` against ``prefixexec score`` on the same input (issue 26).

The input: one dataset, 20 systems (conditions) x 500 tasks x ``--trials`` trials (default 1),
horizons 1..20, outcomes synthetic and seeded, written once as a records JSONL file. In one run it
times, alternated and best of ``--repeat`` each (all printed):

* ``prefixexec score FILE --bootstrap B --json`` (today's scorer: point estimates and every
  interval of every condition), and
* ``prefixexec leaderboard FILE --bootstrap B --json`` (the same intervals plus pass^k, pass@k,
  TER^k and TER@k at every k with intervals, ranks and rank intervals of 7 metrics, Kendall's
  tau-b with intervals and every flipped pair with its resample shares),

both through the command line's ``main`` in this process (reading, accumulating, scoring and
writing JSON to a discarded stream), and prints the ratio leaderboard / score; the target is at
most 2.
Usage: python benchmarks/leaderboard.py [--systems 20] [--tasks 500] [--trials 1] [--B 10000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import tempfile
import time
from pathlib import Path

import numpy as np

from prefixexec.cli import main


def write_input(path: Path, systems: int, tasks: int, trials: int, seed: int = 26) -> int:
    """Records of ``systems`` x ``tasks`` x ``trials`` rollouts; returns their number."""
    rng = np.random.default_rng(seed)
    lines: list[str] = []
    for s in range(systems):
        p_exec, p_success = 0.3 + 0.6 * rng.random(), 0.2 + 0.6 * rng.random()
        for t in range(tasks):
            for trial in range(trials):
                T = int(rng.integers(1, 21))
                fed = T + 1 if rng.random() < p_exec else int(rng.integers(1, T + 1))
                record = {
                    "dataset": "bench",
                    "model": f"model-{s:02d}",
                    "method": "react",
                    "task_id": f"task{t:04d}",
                    "trial": trial,
                    "success": bool(rng.random() < p_success),
                    "outcome": {"T": T, "fed": fed},
                }
                lines.append(json.dumps(record))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return len(lines)


def timed(argv: list[str]) -> float:
    sink = io.StringIO()
    start = time.perf_counter()
    with contextlib.redirect_stdout(sink):
        status = main(argv)
    elapsed = time.perf_counter() - start
    if status != 0:
        raise SystemExit(f"{' '.join(argv)} exited {status}")
    return elapsed


def run() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--systems", type=int, default=20)
    parser.add_argument("--tasks", type=int, default=500)
    parser.add_argument("--trials", type=int, default=1)
    parser.add_argument("--B", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "bench.jsonl"
        n = write_input(path, args.systems, args.tasks, args.trials)
        common = [str(path), "--bootstrap", str(args.B), "--json", "--quiet"]
        score_argv, board_argv = ["score", *common], ["leaderboard", *common]
        timed(score_argv)  # warm-up: imports, page cache
        timed(board_argv)
        score_times: list[float] = []
        board_times: list[float] = []
        for _ in range(args.repeat):
            score_times.append(timed(score_argv))
            board_times.append(timed(board_argv))
    best_score, best_board = min(score_times), min(board_times)
    ratio = best_board / best_score
    shape = f"{args.systems} systems x {args.tasks} tasks x {args.trials} trial(s)"
    print(f"input: {shape} = {n} rollouts, B = {args.B}")
    print(f"score        best {best_score:.3f} s  (runs: {', '.join(f'{t:.3f}' for t in score_times)})")
    print(f"leaderboard  best {best_board:.3f} s  (runs: {', '.join(f'{t:.3f}' for t in board_times)})")
    print(f"ratio leaderboard / score: {ratio:.2f} (target <= 2: {'met' if ratio <= 2 else 'NOT met'})")


if __name__ == "__main__":
    run()
