"""Benchmark: ``prefixexec leaderboard`` over the real tau2 submissions folder, with its claims
checked, against ``prefixexec score`` over the same trajectories (issue 37).

The input: ``tests/data/real/tau2-submissions/`` (six real submissions of tau2-bench's
leaderboard; five with trajectories, zstd-compressed) or the folder given. In one run it times,
alternated and best of ``--repeat`` each (all printed):

* ``prefixexec score FILE... --bootstrap B --json`` over every trajectory file the submissions
  list (the files ``leaderboard`` reads), and
* ``prefixexec leaderboard FOLDER --bootstrap B --json`` (one system per submission ranked per
  domain with intervals and rank intervals, and every claim of every submission checked), and
* the same with ``--site DIR`` (the static pages: per domain, per system with its figure and
  failing rollouts, the claims; a new folder each run),

both through the command line's ``main`` in this process, and prints the ratio
leaderboard (with claims and ``--site``) / score; the target is at most 2.
Usage: python benchmarks/leaderboard_submissions.py [FOLDER] [--B 10000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from leaderboard import timed  # benchmarks/leaderboard.py: one command timed through main

from prefixexec.submissions import discover

FOLDER = Path(__file__).resolve().parent.parent / "tests" / "data" / "real" / "tau2-submissions"


def run() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", nargs="?", default=str(FOLDER))
    parser.add_argument("--B", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    submissions = discover([args.folder])
    files = [f for s in submissions for f in s.files]
    common = ["--bootstrap", str(args.B), "--json", "--quiet"]
    score_argv, board_argv = ["score", *files, *common], ["leaderboard", args.folder, *common]
    with tempfile.TemporaryDirectory() as scratch:
        sites = iter(str(Path(scratch) / f"site{i}") for i in range(2 * args.repeat + 2))
        timed(score_argv)  # warm-up: imports, page cache
        timed(board_argv)
        timed([*board_argv, "--site", next(sites)])
        score_times: list[float] = []
        board_times: list[float] = []
        site_times: list[float] = []
        for _ in range(args.repeat):
            score_times.append(timed(score_argv))
            board_times.append(timed(board_argv))
            site_times.append(timed([*board_argv, "--site", next(sites)]))
    best_score, best_board, best_site = min(score_times), min(board_times), min(site_times)
    ratio = best_site / best_score
    print(
        f"input: {args.folder}: {len(submissions)} submissions, {len(files)} trajectory files, B = {args.B}"
    )
    for name, best, times in (
        ("score", best_score, score_times),
        ("leaderboard", best_board, board_times),
        ("leaderboard --site", best_site, site_times),
    ):
        print(f"{name:<19} best {best:.3f} s  (runs: {', '.join(f'{t:.3f}' for t in times)})")
    print(f"ratio leaderboard / score: {best_board / best_score:.2f}")
    print(
        f"ratio leaderboard with claims and --site / score: {ratio:.2f} "
        f"(target <= 2: {'met' if ratio <= 2 else 'NOT met'})"
    )

if __name__ == "__main__":
    run()
