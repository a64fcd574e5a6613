"""Speed of the BFCL adapter's safe replay versus BFCL's own eval-based executor (spec: BFCL-SPEED).

Usage: python benchmarks/bfcl_replay.py [--repeat N] [--quick] [--json]

1. Replays every ground-truth call of the four multi-turn categories (800 tasks, 4,625 calls)
   with the adapter (parse, checks, dispatch; prefix replay only, no success rule) and with
   BFCL's own ``execute_multi_turn_func_call`` (which ``eval``s each call string; run here on
   the benchmark's own trusted ground truth only), both including instance set-up, in the same
   process. Prints both times (best of ``--repeat``), the ratio and calls per second, and the
   adapter's time with BFCL's success rule as well.
2. Linearity: replays trajectories of growing length L (the same read-only and state-changing
   calls repeated) and prints the time per call and the number of executed calls, which must
   equal L (no per-prefix re-replay).
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

os.environ["TZ"] = "UTC"
if hasattr(time, "tzset"):
    time.tzset()

from prefixexec.adapters.bfcl import backend, evaluate, run_from_strings, task


def _best(function: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    best = float("inf")
    value: Any = None
    for _ in range(repeat):
        start = time.perf_counter()
        value = function()
        best = min(best, time.perf_counter() - start)
    return best, value


def _adapter(categories: tuple[str, ...], with_success: bool) -> int:
    calls = 0
    for category in categories:
        for task_id, entry in backend.entries(category).items():
            evaluation = evaluate(run_from_strings(task(task_id), entry.gold), success=with_success)
            if not with_success and evaluation.outcome.fed <= evaluation.outcome.T:
                # the five known findings stop early: run the rest so both sides execute every call
                evaluation = evaluate(
                    run_from_strings(task(task_id), entry.gold), success=False, execute_all=True
                )
            calls += len(evaluation.records)
    return calls


_RUN = [0]


def _bfcl(categories: tuple[str, ...]) -> int:
    utils = importlib.import_module("bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils")
    _RUN[0] += 1
    calls = errors = 0
    for category in categories:
        for entry in backend.entries(category).values():
            initial = backend.thaw(entry.initial_config)
            model = f"bench{_RUN[0]}"
            for turn in entry.gold:
                results, _ = utils.execute_multi_turn_func_call(
                    list(turn),
                    initial,
                    list(entry.involved_classes),
                    model,
                    entry.id,
                    long_context=backend.long_context(category),
                    is_evaL_run=False,
                )
                calls += len(results)
                errors += sum(r.startswith("Error during execution") for r in results)
        for key in [k for k in vars(utils) if k.startswith(f"bench{_RUN[0]}_")]:
            delattr(utils, key)
    if errors:
        raise RuntimeError(f"BFCL's executor raised on {errors} ground-truth calls")
    return calls


def _linearity(lengths: list[int], repeat: int) -> list[dict[str, float]]:
    # A file-system task: each block changes state and reads it back, so every call executes.
    task_id = "multi_turn_base_1"
    block = [
        "ls(a=True)",
        "touch(file_name='x.txt')",
        "cat(file_name='x.txt')",
        "rm(file_name='x.txt')",
        "pwd()",
    ]
    rows = []
    for length in lengths:
        calls = [block[i % len(block)] for i in range(length)]
        turns = [calls] + [[] for _ in range(len(backend.entry(task_id).gold) - 1)]
        run = run_from_strings(task(task_id), turns)
        seconds, evaluation = _best(lambda run=run: evaluate(run, success=False), repeat)
        if not evaluation.outcome.fully_executable:
            raise RuntimeError(f"linearity trajectory rejected: {evaluation.outcome}")
        rows.append(
            {
                "L": length,
                "seconds": seconds,
                "us_per_call": 1e6 * seconds / length,
                "executed_calls": len(evaluation.records),
            }
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="timing repetitions, best is kept (default 5)")
    parser.add_argument(
        "--quick", action="store_true", help="one category and short trajectories (smoke test)"
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    categories = backend.CATEGORIES[:1] if args.quick else backend.CATEGORIES
    lengths = [100, 400, 1600] if args.quick else [250, 500, 1000, 2000, 4000]
    backend.catalogue()
    for category in categories:
        backend.entries(category)
        for task_id in backend.entries(category):
            task(task_id)
    _adapter(categories, False)  # warm-up: imports and caches on both sides
    _bfcl(categories)
    # Interleaved, so that a change of machine load affects both sides alike; best of each.
    adapter_s = bfcl_s = success_s = float("inf")
    adapter_calls = bfcl_calls = 0
    for _ in range(args.repeat):
        seconds, adapter_calls = _best(lambda: _adapter(categories, False), 1)
        adapter_s = min(adapter_s, seconds)
        seconds, bfcl_calls = _best(lambda: _bfcl(categories), 1)
        bfcl_s = min(bfcl_s, seconds)
        seconds, _ = _best(lambda: _adapter(categories, True), 1)
        success_s = min(success_s, seconds)
    if adapter_calls != bfcl_calls:
        raise RuntimeError(f"call counts differ: adapter {adapter_calls}, BFCL {bfcl_calls}")
    rows = _linearity(lengths, args.repeat)
    per_call = [r["us_per_call"] for r in rows]
    # Growth exponent: least-squares slope of log(time) on log(L); 1 for linear, 2 for quadratic.
    xs = [math.log(r["L"]) for r in rows]
    ys = [math.log(r["seconds"]) for r in rows]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    exponent = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum((x - mx) ** 2 for x in xs)
    figures = {
        "bfcl_eval": backend.installed_version(),
        "python": sys.version.split()[0],
        "categories": list(categories),
        "gold_calls": adapter_calls,
        "adapter_seconds": adapter_s,
        "bfcl_executor_seconds": bfcl_s,
        "bfcl_over_adapter": bfcl_s / adapter_s,
        "adapter_calls_per_second": adapter_calls / adapter_s,
        "bfcl_calls_per_second": bfcl_calls / bfcl_s,
        "adapter_with_success_seconds": success_s,
        "linearity": rows,
        "us_per_call_max_over_min": max(per_call) / min(per_call),
        "growth_exponent": exponent,
    }
    if args.json:
        sys.stdout.write(json.dumps(figures, indent=2) + "\n")
    else:
        out = sys.stdout.write
        out(f"BFCL multi-turn replay speed (bfcl-eval {figures['bfcl_eval']}, Python {figures['python']})\n")
        out(f"gold calls replayed: {adapter_calls} over {', '.join(categories)} (best of {args.repeat})\n")
        out(
            f"  adapter (safe replay, prefix outcome)   {adapter_s:8.3f} s  "
            f"{adapter_calls / adapter_s:9.0f} calls/s\n"
        )
        out(
            f"  BFCL executor (eval)                    {bfcl_s:8.3f} s  {bfcl_calls / bfcl_s:9.0f} calls/s\n"
        )
        out(f"  ratio BFCL / adapter                    {bfcl_s / adapter_s:8.2f}\n")
        out(f"  adapter with BFCL's success rule        {success_s:8.3f} s  (model and gold replay)\n")
        out("linearity (one trajectory of L calls, prefix replay):\n")
        out(f"  {'L':>6}  {'seconds':>9}  {'us/call':>8}  executed calls\n")
        for r in rows:
            out(f"  {r['L']:>6}  {r['seconds']:9.4f}  {r['us_per_call']:8.1f}  {r['executed_calls']}\n")
        out(
            f"  time per call varies by a factor {figures['us_per_call_max_over_min']:.2f} over a "
            f"{lengths[-1] // lengths[0]}x range of L (median {statistics.median(per_call):.1f} us/call)\n"
        )
        out(
            f"  growth exponent of time in L (log-log least squares): {exponent:.2f} "
            "(1 = linear, 2 = quadratic)\n"
        )
    if adapter_s > bfcl_s:
        sys.stderr.write("the adapter is slower than BFCL's executor\n")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
