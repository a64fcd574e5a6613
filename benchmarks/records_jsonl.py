"""Benchmark: ``prefixexec score --bootstrap 0`` on JSONL records against orjson's parse-only floor.

Two synthetic files (seeded) of ``--rows`` records each (default 1,000,000): one with an
already replayed ``outcome`` per line, one with 6 recorded ``actions`` per line (each with
``arguments``; one action in 7 rejected with a label and a reason). Tasks, models, methods and
trials are laid out so that every (dataset, model, method, task_id, trial) key is unique.

For each file, in one run, alternating ``--repeat`` times (best of each is compared):

* the floor: reading the file line by line and parsing every line with ``orjson.loads`` (nothing
  else: no validation, no rollouts, no scoring);
* prefixexec: ``prefixexec.engine.accumulate_input("records", ...)`` then every point estimate of
  every condition, i.e. what ``prefixexec score --bootstrap 0`` does before printing
  (validation of every line, replay of the actions, streaming accumulators);

and prints rows per second of each and the ratio prefixexec / floor (wall time, best of
``--repeat``; and the same ratio of CPU time, steadier on a busy machine). ``--reference N`` also
times the reference reader (strict ``json`` + ``jsonschema`` per line, the reader before the
fast path) on the first N lines of each file, for the speed-up.

Usage: python benchmarks/records_jsonl.py [--rows 1000000] [--repeat 3] [--reference 20000] [--dir DIR]
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import orjson

from prefixexec.adapters import AdapterOptions
from prefixexec.adapters.records import legacy_iter_lines, open_lines
from prefixexec.engine import accumulate_input

LABELS = ("schema", "dependency", "precondition", "state_consistency", "information")
TASKS = 2000
MODELS = ("model-a", "model-b", "model-c")
METHODS = ("react", "plan-cond-react")


def _key(i: int) -> dict[str, object]:
    # Row i: task i mod TASKS, then each (model, method) in turn, then the next trial.
    conditions = len(MODELS) * len(METHODS)
    condition = (i // TASKS) % conditions
    return {
        "dataset": "bfcl",
        "task_id": f"task{i % TASKS:05d}",
        "model": MODELS[condition % len(MODELS)],
        "method": METHODS[condition // len(MODELS)],
        "trial": i // (TASKS * conditions),
    }


def outcome_line(i: int, rng: random.Random) -> str:
    T = rng.randint(1, 20)
    fed = rng.randint(1, T + 1)
    outcome: dict[str, object] = {"T": T, "fed": fed}
    if fed <= T:
        outcome["label"] = rng.choice(LABELS)
    return json.dumps({**_key(i), "success": rng.random() < 0.5, "outcome": outcome})


def actions_line(i: int, rng: random.Random) -> str:
    bad = rng.randint(0, 6)  # 6: every action executable
    actions = []
    for k in range(6):
        action: dict[str, object] = {
            "tool": f"tool_{k}",
            "arguments": {"query": f"value {i} {k}", "limit": k},
            "executable": k != bad,
        }
        if k == bad:
            action["label"] = rng.choice(LABELS)
            action["reason"] = "precondition not met"
        actions.append(action)
    return json.dumps({**_key(i), "success": rng.random() < 0.5, "actions": actions})


def write(path: Path, rows: int, line: Callable[[int, random.Random], str]) -> None:
    rng = random.Random(2026)
    with path.open("w", encoding="utf-8") as out:
        for i in range(rows):
            out.write(line(i, rng) + "\n")


#: CPU time (this process, user + system) of each :func:`floor` and :func:`ours` run, in order.
CPU: dict[str, list[float]] = {"floor": [], "ours": []}


def floor(path: Path) -> float:
    start, cpu = time.perf_counter(), time.process_time()
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            orjson.loads(line)
    CPU["floor"].append(time.process_time() - cpu)
    return time.perf_counter() - start


def ours(path: Path) -> float:
    start, cpu = time.perf_counter(), time.process_time()
    state = accumulate_input("records", [str(path)], AdapterOptions())
    for _, acc in state.items:
        acc.metrics()
    CPU["ours"].append(time.process_time() - cpu)
    return time.perf_counter() - start


def reference(path: Path, lines: int) -> float:
    numbered = []
    for number, line in open_lines(str(path)):
        if number > lines:
            break
        numbered.append((number, line))
    start = time.perf_counter()
    for _ in legacy_iter_lines(str(path), numbered):
        pass
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--reference", type=int, default=20_000, metavar="N")
    parser.add_argument("--dir", help="folder for the files (default: a temporary one)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="prefixexec-records-", dir=args.dir) as tmp:
        for name, line, target in (("outcome", outcome_line, 300_000), ("6 actions", actions_line, 100_000)):
            path = Path(tmp) / f"{name.replace(' ', '_')}.jsonl"
            write(path, args.rows, line)
            size = path.stat().st_size
            floors, mine = [], []
            CPU["floor"].clear()
            CPU["ours"].clear()
            for _ in range(args.repeat):
                floors.append(floor(path))
                mine.append(ours(path))
            f, m = min(floors), min(mine)
            print(
                f"{name} lines: {args.rows:,} rows, {size / 2**20:.0f} MiB; "
                f"orjson parse only {f:.2f} s ({args.rows / f:,.0f} rows/s); "
                f"prefixexec score --bootstrap 0 {m:.2f} s ({args.rows / m:,.0f} rows/s, target "
                f"{target:,}); ratio {m / f:.2f}x (target <= 2.5x) "
                f"[runs: orjson {', '.join(f'{x:.2f}' for x in floors)}; "
                f"prefixexec {', '.join(f'{x:.2f}' for x in mine)}]; "
                f"CPU best {min(CPU['ours']):.2f} s / {min(CPU['floor']):.2f} s = "
                f"{min(CPU['ours']) / min(CPU['floor']):.2f}x"
            )
            if args.reference:
                n = min(args.reference, args.rows)
                r = reference(path, n)
                print(
                    f"  reference reader (json + jsonschema per line) on {n:,} lines: {r:.2f} s "
                    f"({n / r:,.0f} rows/s): prefixexec is {(args.rows / m) / (n / r):.0f}x faster"
                )


if __name__ == "__main__":
    main()
